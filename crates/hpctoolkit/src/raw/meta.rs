//! meta.db structures (FORMATS.md, `meta.db` version 4.0).

use binrw::binrw;

use super::raw_struct;

/// General Properties section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GeneralHeader {
    /// `pTitle`: char* within the section.
    pub p_title: u64,
    /// `pDescription`: char* within the section.
    pub p_description: u64,
}

/// Hierarchical Identifier Names section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdNamesHeader {
    /// `ppNames`: array of `nKinds` char* within the section.
    pub pp_names: u64,
    /// `nKinds`.
    pub n_kinds: u8,
}

/// Performance Metrics section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetricsHeader {
    /// `pMetrics`: array of {MD}.
    pub p_metrics: u64,
    /// `nMetrics`.
    pub n_metrics: u32,
    /// `szMetric`: stride of `*pMetrics` (0x20 known).
    pub sz_metric: u8,
    /// `szScopeInst`: stride of each `*pScopeInsts` (0x10 known).
    pub sz_scope_inst: u8,
    /// `szSummary`: stride of each `*pSummaries` (0x18 known).
    #[brw(pad_after = 1)]
    pub sz_summary: u8,
    /// `pScopes`: array of {PS}.
    pub p_scopes: u64,
    /// `nScopes`.
    pub n_scopes: u16,
    /// `szScope`: stride of `*pScopes` (0x10 known).
    pub sz_scope: u8,
}

/// {MD}: one performance metric.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetricDescription {
    /// `pName`: char*.
    pub p_name: u64,
    /// `pScopeInsts`: array of {PSI}.
    pub p_scope_insts: u64,
    /// `pSummaries`: array of {SS}.
    pub p_summaries: u64,
    /// `nScopeInsts`.
    pub n_scope_insts: u16,
    /// `nSummaries`.
    #[brw(pad_after = 4)]
    pub n_summaries: u16,
}

/// {PSI}: a propagation scope instantiated for a metric.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PropagationScopeInstanceSpec {
    /// `pScope`: pointer to a {PS} of `*pScopes`.
    pub p_scope: u64,
    /// `propMetricId`: the metric id used in profile.db and cct.db.
    #[brw(pad_after = 6)]
    pub prop_metric_id: u16,
}

/// {SS}: a summary statistic of a metric.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SummaryStatisticSpec {
    /// `pScope`: pointer to a {PS} of `*pScopes`.
    pub p_scope: u64,
    /// `pFormula`: char*.
    pub p_formula: u64,
    /// `combine`: 0 sum, 1 min, 2 max.
    #[brw(pad_after = 1)]
    pub combine: u8,
    /// `statMetricId`: the metric id used in summary profiles.
    #[brw(pad_after = 4)]
    pub stat_metric_id: u16,
}

/// {PS}: a propagation scope.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PropagationScopeSpec {
    /// `pScopeName`: char*.
    pub p_scope_name: u64,
    /// `type`: 0 custom, 1 point, 2 execution, 3 transitive.
    pub kind: u8,
    /// `propagationIndex`: bit of the context `propagation` mask (255 when unused, as-implemented).
    #[brw(pad_after = 6)]
    pub propagation_index: u8,
}

/// Load Modules section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ModulesHeader {
    /// `pModules`: array of `[LMS]`.
    pub p_modules: u64,
    /// `nModules`.
    pub n_modules: u32,
    /// `szModule` (0x10 known).
    pub sz_module: u16,
}

/// `[LMS]`: Load Module Specification.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadModuleSpec {
    /// `flags`: reserved.
    #[brw(pad_after = 4)]
    pub flags: u32,
    /// `pPath`: char* in the Common String Table.
    pub p_path: u64,
}

/// Source Files section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FilesHeader {
    /// `pFiles`: array of `[SFS]`.
    pub p_files: u64,
    /// `nFiles`.
    pub n_files: u32,
    /// `szFile` (0x10 known).
    pub sz_file: u16,
}

/// `[SFS]`: Source File Specification.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SourceFileSpec {
    /// `flags`: bit 0 `copied`.
    #[brw(pad_after = 4)]
    pub flags: u32,
    /// `pPath`: char* in the Common String Table.
    pub p_path: u64,
}

/// `[SFS]` flag bit 0: the source file was copied into the database.
pub const FILE_FLAG_COPIED: u32 = 1;

/// Functions section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FunctionsHeader {
    /// `pFunctions`: array of `[FS]`.
    pub p_functions: u64,
    /// `nFunctions`.
    pub n_functions: u32,
    /// `szFunction` (0x28 known).
    pub sz_function: u16,
}

/// `[FS]`: Function Specification.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FunctionSpec {
    /// `pName`: char* in the Common String Table, or 0.
    pub p_name: u64,
    /// `pModule`: pointer to an `[LMS]`, or 0.
    pub p_module: u64,
    /// `offset` of the entry point within the module.
    pub offset: u64,
    /// `pFile`: pointer to an `[SFS]`, or 0.
    pub p_file: u64,
    /// `line` of the definition.
    pub line: u32,
    /// `flags`: reserved.
    pub flags: u32,
}

/// Context Tree section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextTreeHeader {
    /// `pEntryPoints` (FORMATS.md's notes call it `pRoots`).
    pub p_entry_points: u64,
    /// `nEntryPoints`.
    pub n_entry_points: u16,
    /// `szEntryPoint` (0x20 known).
    pub sz_entry_point: u8,
}

/// {Entry}: an entry point of the context tree.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EntryPointSpec {
    /// `szChildren`: bytes of `*pChildren`.
    pub sz_children: u64,
    /// `pChildren`: array of {Ctx}, or 0.
    pub p_children: u64,
    /// `ctxId`.
    pub ctx_id: u32,
    /// `entryPoint`: 0 unknown, 1 main thread, 2 application thread.
    #[brw(pad_after = 2)]
    pub entry_point: u16,
    /// `pPrettyName`: char* in the Common String Table.
    pub p_pretty_name: u64,
}

/// {Ctx}: the fixed 0x20-byte part of a context; `nFlexWords` 8-byte words follow.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextSpec {
    /// `szChildren`: bytes of `*pChildren`.
    pub sz_children: u64,
    /// `pChildren`: array of {Ctx}, or 0.
    pub p_children: u64,
    /// `ctxId` (> 0).
    pub ctx_id: u32,
    /// `flags`: [`CONTEXT_HAS_FUNCTION`], [`CONTEXT_HAS_SRCLOC`], [`CONTEXT_HAS_POINT`].
    pub flags: u8,
    /// `relation`: 0 lexical, 1 call, 2 inlined call.
    pub relation: u8,
    /// `lexicalType`: 0 function, 1 loop, 2 line, 3 instruction.
    pub lexical_type: u8,
    /// `nFlexWords`: size of `flex` in 8-byte words.
    pub n_flex_words: u8,
    /// `propagation` bitmask.
    #[brw(pad_after = 6)]
    pub propagation: u16,
}

/// {Ctx} flags bit 0: `flex` holds `pFunction`.
pub const CONTEXT_HAS_FUNCTION: u8 = 1;
/// {Ctx} flags bit 1: `flex` holds `pFile` and `line`.
pub const CONTEXT_HAS_SRCLOC: u8 = 2;
/// {Ctx} flags bit 2: `flex` holds `pModule` and `offset`.
pub const CONTEXT_HAS_POINT: u8 = 4;

raw_struct! {
    GeneralHeader => 0x10, "General";
    IdNamesHeader => 0x09, "IdNames";
    MetricsHeader => 0x1b, "Metrics";
    MetricDescription => 0x20, "MD";
    PropagationScopeInstanceSpec => 0x10, "PSI";
    SummaryStatisticSpec => 0x18, "SS";
    PropagationScopeSpec => 0x10, "PS";
    ModulesHeader => 0x0e, "Modules";
    LoadModuleSpec => 0x10, "LMS";
    FilesHeader => 0x0e, "Files";
    SourceFileSpec => 0x10, "SFS";
    FunctionsHeader => 0x0e, "Functions";
    FunctionSpec => 0x28, "FS";
    ContextTreeHeader => 0x0b, "Context";
    EntryPointSpec => 0x20, "Entry";
    ContextSpec => 0x20, "Ctx";
}
