//! The meta.db view (FORMATS.md, `meta.db` version 4.0).

use std::collections::BTreeSet;

use crate::Error;
use crate::raw::meta::{CONTEXT_HAS_FUNCTION, CONTEXT_HAS_POINT, CONTEXT_HAS_SRCLOC};
use crate::raw::{
    Combine, ContextSpec, ContextTreeHeader, EntryPointKind, EntryPointSpec, FileKind, FilesHeader,
    FunctionSpec, FunctionsHeader, GeneralHeader, IdNamesHeader, LexicalType, LoadModuleSpec,
    MetaDbHeader, MetricDescription, MetricsHeader, ModulesHeader, PropagationScopeInstanceSpec,
    PropagationScopeSpec, Relation, ScopeType, SourceFileSpec, SummaryStatisticSpec,
};

use super::bytes::{Bytes, Region, Strided};
use super::cct::CctDb;
use super::overlap::Spans;
use super::profile::ProfileDb;

/// The metric sub-arrays [`MetaDb::check_overlaps`] keeps apart.
const ARRAY_FIELDS: &[&str] = &["MD.pScopeInsts", "MD.pSummaries"];

/// The `char*` fields of meta.db, by the code [`StrRef`] stores.
const STRING_FIELDS: &[&str] = &[
    "General.pTitle",
    "General.pDescription",
    "IdNames.ppNames[kind]",
    "PS.pScopeName",
    "MD.pName",
    "SS.pFormula",
    "LMS.pPath",
    "SFS.pPath",
    "FS.pName",
    "Entry.pPrettyName",
];

/// The string bytes a meta.db may refer to, counting a shared string once per reference: this
/// many times the file's size, plus [`STRING_SLACK`]. hpcprof interns its strings (a function
/// name or a formula is stored once and pointed at by every user), so sharing is legitimate, but
/// without a bound 16,000 file paths on one 250,000-byte string would make every reader of the
/// names handle 4 GB from 0.5 MB.
pub const STRING_AMPLIFICATION: u64 = 64;

/// The fixed allowance added to [`STRING_AMPLIFICATION`] times the file's size.
pub const STRING_SLACK: u64 = 1 << 20;

/// A `char*` field: where it points, where it is stored, which section the string must lie in
/// (0 General, 1 IdNames, 2 Metrics, 3 Strings) and which field it is ([`STRING_FIELDS`]).
#[derive(Debug, Clone, Copy)]
struct StrRef {
    pointer: u64,
    at: u64,
    region: u8,
    field: u8,
}

macro_rules! index_type {
    ($($(#[$m:meta])* $name:ident($t:ty);)*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        pub struct $name(pub $t);
    )*};
}

index_type! {
    /// Position of a propagation scope in meta.db's `*pScopes` (what a `pScope` pointer names).
    ScopeIndex(u16);
    /// Position of a load module in `*pModules` (what a `pModule` pointer names).
    ModuleIndex(u32);
    /// Position of a source file in `*pFiles` (what a `pFile` pointer names).
    FileIndex(u32);
    /// Position of a function in `*pFunctions` (what a `pFunction` pointer names).
    FunctionIndex(u32);
}

/// {PS}: a propagation scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropagationScope<'a> {
    /// Its position in `*pScopes`.
    pub index: ScopeIndex,
    /// `*pScopeName`.
    pub name: &'a str,
    /// `type`.
    pub kind: ScopeType,
    /// `propagationIndex` (255 for non-transitive scopes in real files, as-implemented).
    pub propagation_index: u8,
}

/// {MD}: a performance metric. Its scope instances and summaries are read with
/// [`MetaDb::scope_instances`] and [`MetaDb::summaries`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metric<'a> {
    /// Its position in `*pMetrics`.
    pub index: u32,
    /// File offset of the {MD}.
    pub offset: u64,
    /// `*pName`.
    pub name: &'a str,
    scope_insts: Strided,
    summaries: Strided,
}

impl Metric<'_> {
    /// The unit hpcprof appends to the name in parentheses (`"sec"` for `"CPUTIME (sec)"`).
    pub fn unit(&self) -> Option<&str> {
        let (_, rest) = self.name.rsplit_once(" (")?;
        rest.strip_suffix(')')
    }

    /// `nScopeInsts`.
    pub fn scope_instance_count(&self) -> u16 {
        self.scope_insts.count as u16
    }

    /// `nSummaries`.
    pub fn summary_count(&self) -> u16 {
        self.summaries.count as u16
    }
}

/// {PSI}: a metric propagated through a scope, stored under `prop_metric_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PropagationScopeInstance {
    /// `*pScope`.
    pub scope: ScopeIndex,
    /// `propMetricId`.
    pub prop_metric_id: u16,
}

/// {SS}: a summary statistic, stored in summary profiles under `stat_metric_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryStatistic<'a> {
    /// `*pScope`.
    pub scope: ScopeIndex,
    /// `*pFormula`.
    pub formula: &'a str,
    /// `combine`.
    pub combine: Combine,
    /// `statMetricId`.
    pub stat_metric_id: u16,
}

/// `[LMS]`: a load module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadModule<'a> {
    /// Its position.
    pub index: ModuleIndex,
    /// `flags` (reserved).
    pub flags: u32,
    /// `*pPath`.
    pub path: &'a str,
}

/// `[SFS]`: a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SourceFile<'a> {
    /// Its position.
    pub index: FileIndex,
    /// `flags` (bit 0: copied into the database).
    pub flags: u32,
    /// `*pPath`.
    pub path: &'a str,
}

impl SourceFile<'_> {
    /// True when the file was copied into the database.
    pub fn is_copied(&self) -> bool {
        self.flags & crate::raw::meta::FILE_FLAG_COPIED != 0
    }
}

/// `[FS]`: a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Function<'a> {
    /// Its position.
    pub index: FunctionIndex,
    /// `*pName`, if not 0.
    pub name: Option<&'a str>,
    /// `*pModule`, if not 0.
    pub module: Option<ModuleIndex>,
    /// `offset` of the entry point within the module.
    pub offset: u64,
    /// `*pFile`, if not 0.
    pub file: Option<FileIndex>,
    /// `line` of the definition.
    pub line: u32,
    /// `flags` (reserved).
    pub flags: u32,
}

/// Where a context's children are: `pChildren`/`szChildren`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextChildren {
    /// `pChildren` (0 when there are none).
    pub pointer: u64,
    /// `szChildren` in bytes.
    pub size: u64,
    /// File offset of the parent's `szChildren` field (for errors).
    pub field_offset: u64,
}

impl ContextChildren {
    /// True when there are no children.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }
}

/// {Entry}: an entry point, the top of the context tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPoint<'a> {
    /// File offset of the {Entry}.
    pub offset: u64,
    /// `ctxId`.
    pub ctx_id: u32,
    /// `entryPoint`.
    pub kind: EntryPointKind,
    /// `*pPrettyName`.
    pub pretty_name: &'a str,
    /// The child contexts.
    pub children: ContextChildren,
}

/// {Ctx}: a calling context, with its flex fields decoded from `flags`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context<'a> {
    /// File offset of the {Ctx}.
    pub offset: u64,
    /// `ctxId`.
    pub ctx_id: u32,
    /// `flags` as stored (bits 3-7 reserved).
    pub flags: u8,
    /// `relation`.
    pub relation: Relation,
    /// `lexicalType`.
    pub lexical_type: LexicalType,
    /// `propagation` bitmask.
    pub propagation: u16,
    /// `pFunction` (flag `hasFunction`).
    pub function: Option<FunctionIndex>,
    /// `pFile` (flag `hasSrcLoc`).
    pub file: Option<FileIndex>,
    /// `line` (flag `hasSrcLoc`).
    pub line: Option<u32>,
    /// `pModule` (flag `hasPoint`).
    pub module: Option<ModuleIndex>,
    /// `offset` within the module (flag `hasPoint`).
    pub module_offset: Option<u64>,
    /// The raw `flex` words (`nFlexWords` x 8 bytes), including any this crate does not know.
    pub flex: &'a [u8],
    /// The child contexts.
    pub children: ContextChildren,
}

/// An entry point or a context: anything with a ctxId in meta.db.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextNode<'a> {
    /// An {Entry}.
    EntryPoint(EntryPoint<'a>),
    /// A {Ctx}.
    Context(Context<'a>),
}

impl<'a> ContextNode<'a> {
    /// `ctxId`.
    pub fn ctx_id(&self) -> u32 {
        match self {
            ContextNode::EntryPoint(e) => e.ctx_id,
            ContextNode::Context(c) => c.ctx_id,
        }
    }

    /// The children.
    pub fn children(&self) -> ContextChildren {
        match self {
            ContextNode::EntryPoint(e) => e.children,
            ContextNode::Context(c) => c.children,
        }
    }

    /// File offset of the structure.
    pub fn offset(&self) -> u64 {
        match self {
            ContextNode::EntryPoint(e) => e.offset,
            ContextNode::Context(c) => c.offset,
        }
    }
}

/// A node met by [`MetaDb::walk`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeNode<'a> {
    /// 0 for entry points, parent's depth + 1 below.
    pub depth: u32,
    /// The parent's ctxId (0, the global context, for entry points).
    pub parent: u32,
    /// The node.
    pub node: ContextNode<'a>,
}

/// Parsed section headers of a meta.db (no borrow, so a [`Database`](super::Database) can keep it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MetaLayout {
    header: MetaDbHeader,
    general_region: Region,
    general: GeneralHeader,
    id_names_region: Region,
    id_names: Strided,
    metrics_region: Region,
    metrics_header: MetricsHeader,
    metrics: Strided,
    scopes: Strided,
    context_region: Region,
    entry_points: Strided,
    strings_region: Region,
    modules: Strided,
    files: Strided,
    functions: Strided,
}

/// A view of a meta.db file.
#[derive(Debug, Clone, Copy)]
pub struct MetaDb<'a> {
    bytes: Bytes<'a>,
    layout: MetaLayout,
}

impl<'a> MetaDb<'a> {
    /// Checks the file header, footer and section headers (not the section contents: see
    /// [`MetaDb::validate`]).
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        let bytes = Bytes::new(data, FileKind::Meta);
        bytes.check_envelope()?;
        let header: MetaDbHeader = bytes.read(0)?;
        let hs = MetaDbHeader::SIZE;
        let general_region =
            bytes.check_section(header.general, GeneralHeader::SIZE, hs, "pGeneral", 0x10)?;
        let id_names_region =
            bytes.check_section(header.id_names, IdNamesHeader::SIZE, hs, "pIdNames", 0x20)?;
        let metrics_region =
            bytes.check_section(header.metrics, MetricsHeader::SIZE, hs, "pMetrics", 0x30)?;
        let context_region = bytes.check_section(
            header.context,
            ContextTreeHeader::SIZE,
            hs,
            "pContext",
            0x40,
        )?;
        let strings_region = bytes.check_section(header.strings, 0, hs, "pStrings", 0x50)?;
        let modules_region =
            bytes.check_section(header.modules, ModulesHeader::SIZE, hs, "pModules", 0x60)?;
        let files_region =
            bytes.check_section(header.files, FilesHeader::SIZE, hs, "pFiles", 0x70)?;
        let functions_region = bytes.check_section(
            header.functions,
            FunctionsHeader::SIZE,
            hs,
            "pFunctions",
            0x80,
        )?;

        let general: GeneralHeader = bytes.read(general_region.start)?;

        let id: IdNamesHeader = bytes.read(id_names_region.start)?;
        let id_names = bytes.strided::<u64>(
            id_names_region,
            id.pp_names,
            u64::from(id.n_kinds),
            8,
            "IdNames.ppNames",
            id_names_region.start,
        )?;

        let mh: MetricsHeader = bytes.read(metrics_region.start)?;
        let m = metrics_region.start;
        let sz_metric = bytes.check_stride::<MetricDescription>(
            mh.sz_metric.into(),
            "Metrics.szMetric",
            m + 0xc,
        )?;
        bytes.check_stride::<PropagationScopeInstanceSpec>(
            mh.sz_scope_inst.into(),
            "Metrics.szScopeInst",
            m + 0xd,
        )?;
        bytes.check_stride::<SummaryStatisticSpec>(
            mh.sz_summary.into(),
            "Metrics.szSummary",
            m + 0xe,
        )?;
        let sz_scope = bytes.check_stride::<PropagationScopeSpec>(
            mh.sz_scope.into(),
            "Metrics.szScope",
            m + 0x1a,
        )?;
        let metrics = bytes.strided::<MetricDescription>(
            metrics_region,
            mh.p_metrics,
            mh.n_metrics.into(),
            sz_metric,
            "Metrics.pMetrics",
            m,
        )?;
        let scopes = bytes.strided::<PropagationScopeSpec>(
            metrics_region,
            mh.p_scopes,
            mh.n_scopes.into(),
            sz_scope,
            "Metrics.pScopes",
            m + 0x10,
        )?;

        let modh: ModulesHeader = bytes.read(modules_region.start)?;
        let s = modules_region.start;
        let sz = bytes.check_stride::<LoadModuleSpec>(
            modh.sz_module.into(),
            "Modules.szModule",
            s + 0xc,
        )?;
        let modules = bytes.strided::<LoadModuleSpec>(
            modules_region,
            modh.p_modules,
            modh.n_modules.into(),
            sz,
            "Modules.pModules",
            s,
        )?;

        let fh: FilesHeader = bytes.read(files_region.start)?;
        let s = files_region.start;
        let sz =
            bytes.check_stride::<SourceFileSpec>(fh.sz_file.into(), "Files.szFile", s + 0xc)?;
        let files = bytes.strided::<SourceFileSpec>(
            files_region,
            fh.p_files,
            fh.n_files.into(),
            sz,
            "Files.pFiles",
            s,
        )?;

        let fnh: FunctionsHeader = bytes.read(functions_region.start)?;
        let s = functions_region.start;
        let sz = bytes.check_stride::<FunctionSpec>(
            fnh.sz_function.into(),
            "Functions.szFunction",
            s + 0xc,
        )?;
        let functions = bytes.strided::<FunctionSpec>(
            functions_region,
            fnh.p_functions,
            fnh.n_functions.into(),
            sz,
            "Functions.pFunctions",
            s,
        )?;

        let ch: ContextTreeHeader = bytes.read(context_region.start)?;
        let s = context_region.start;
        let sz = bytes.check_stride::<EntryPointSpec>(
            ch.sz_entry_point.into(),
            "Context.szEntryPoint",
            s + 0xa,
        )?;
        let entry_points = bytes.strided::<EntryPointSpec>(
            context_region,
            ch.p_entry_points,
            ch.n_entry_points.into(),
            sz,
            "Context.pEntryPoints",
            s,
        )?;

        Ok(MetaDb {
            bytes,
            layout: MetaLayout {
                header,
                general_region,
                general,
                id_names_region,
                id_names,
                metrics_region,
                metrics_header: mh,
                metrics,
                scopes,
                context_region,
                entry_points,
                strings_region,
                modules,
                files,
                functions,
            },
        })
    }

    pub(crate) fn from_layout(data: &'a [u8], layout: MetaLayout) -> Self {
        MetaDb {
            bytes: Bytes::new(data, FileKind::Meta),
            layout,
        }
    }

    pub(crate) fn layout(&self) -> MetaLayout {
        self.layout
    }

    /// The file's bytes.
    pub fn data(&self) -> &'a [u8] {
        self.bytes.data
    }

    /// The file header as stored.
    pub fn header(&self) -> &MetaDbHeader {
        &self.layout.header
    }

    /// `(majorVersion, minorVersion)`.
    pub fn version(&self) -> (u8, u8) {
        (
            self.layout.header.file.major_version,
            self.layout.header.file.minor_version,
        )
    }

    /// The Performance Metrics section header as stored (strides included).
    pub fn metrics_header(&self) -> &MetricsHeader {
        &self.layout.metrics_header
    }

    /// General Properties: `*pTitle`.
    pub fn title(&self) -> Result<&'a str, Error> {
        let r = self.layout.general_region;
        self.bytes
            .cstr(r, self.layout.general.p_title, "General.pTitle", r.start)
    }

    /// General Properties: `*pDescription`.
    pub fn description(&self) -> Result<&'a str, Error> {
        let r = self.layout.general_region;
        self.bytes.cstr(
            r,
            self.layout.general.p_description,
            "General.pDescription",
            r.start + 8,
        )
    }

    /// `nKinds` of the Identifier Names section.
    pub fn id_name_count(&self) -> u8 {
        self.layout.id_names.count as u8
    }

    /// The name of identifier kind `kind` (`None` past `nKinds`).
    pub fn id_name(&self, kind: u8) -> Result<Option<&'a str>, Error> {
        let a = self.layout.id_names;
        if u64::from(kind) >= a.count {
            return Ok(None);
        }
        let at = a.at(kind.into());
        let p = self.u64_at(at)?;
        self.bytes
            .cstr(self.layout.id_names_region, p, "IdNames.ppNames[kind]", at)
            .map(Some)
    }

    /// All identifier names, by kind.
    pub fn id_names(&self) -> impl Iterator<Item = Result<&'a str, Error>> + '_ {
        (0..self.id_name_count()).map(move |k| self.id_name(k).map(|n| n.unwrap_or_default()))
    }

    fn u64_at(&self, at: u64) -> Result<u64, Error> {
        let b = self.bytes.slice(at, 8, "pointer")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// `nScopes`.
    pub fn scope_count(&self) -> u16 {
        self.layout.scopes.count as u16
    }

    /// A propagation scope.
    pub fn scope(&self, index: ScopeIndex) -> Result<PropagationScope<'a>, Error> {
        let a = self.layout.scopes;
        let at = self.element(a, index.0.into(), "Metrics.pScopes")?;
        let s: PropagationScopeSpec = self.bytes.read(at)?;
        Ok(PropagationScope {
            index,
            name: self.bytes.cstr(
                self.layout.metrics_region,
                s.p_scope_name,
                "PS.pScopeName",
                at,
            )?,
            kind: ScopeType(s.kind),
            propagation_index: s.propagation_index,
        })
    }

    /// Every propagation scope.
    pub fn scopes(&self) -> impl Iterator<Item = Result<PropagationScope<'a>, Error>> + '_ {
        (0..self.scope_count()).map(move |i| self.scope(ScopeIndex(i)))
    }

    /// Offset of element `i` of `a`, or an error past its end.
    fn element(&self, a: Strided, i: u64, field: &'static str) -> Result<u64, Error> {
        if i >= a.count {
            return Err(Error::Dangling {
                file: FileKind::Meta,
                field,
                offset: a.base,
                expected: "an index below the array's count",
                found: i,
            });
        }
        Ok(a.at(i))
    }

    /// The scope a `pScope` pointer (stored at `at`) points at.
    fn scope_of(&self, pointer: u64, field: &'static str, at: u64) -> Result<ScopeIndex, Error> {
        self.layout
            .scopes
            .index_of(pointer)
            .map(|i| ScopeIndex(i as u16))
            .ok_or_else(|| {
                self.bytes
                    .invalid(field, at, "a pointer to an element of *pScopes", pointer)
            })
    }

    /// `nMetrics`.
    pub fn metric_count(&self) -> u32 {
        self.layout.metrics.count as u32
    }

    /// The metric at position `index` of `*pMetrics`.
    pub fn metric(&self, index: u32) -> Result<Metric<'a>, Error> {
        let (at, md, scope_insts, summaries) = self.metric_arrays(index)?;
        Ok(Metric {
            index,
            offset: at,
            name: self
                .bytes
                .cstr(self.layout.metrics_region, md.p_name, "MD.pName", at)?,
            scope_insts,
            summaries,
        })
    }

    /// The {MD} of metric `index` with its two arrays bounded, without reading its name.
    fn metric_arrays(
        &self,
        index: u32,
    ) -> Result<(u64, MetricDescription, Strided, Strided), Error> {
        let at = self.element(self.layout.metrics, index.into(), "Metrics.pMetrics")?;
        let md: MetricDescription = self.bytes.read(at)?;
        let r = self.layout.metrics_region;
        let mh = self.layout.metrics_header;
        let scope_insts = self.bytes.strided::<PropagationScopeInstanceSpec>(
            r,
            md.p_scope_insts,
            md.n_scope_insts.into(),
            mh.sz_scope_inst.into(),
            "MD.pScopeInsts",
            at + 8,
        )?;
        let summaries = self.bytes.strided::<SummaryStatisticSpec>(
            r,
            md.p_summaries,
            md.n_summaries.into(),
            mh.sz_summary.into(),
            "MD.pSummaries",
            at + 0x10,
        )?;
        Ok((at, md, scope_insts, summaries))
    }

    /// Every metric.
    pub fn metrics(&self) -> impl Iterator<Item = Result<Metric<'a>, Error>> + '_ {
        (0..self.metric_count()).map(move |i| self.metric(i))
    }

    /// The first metric named `name`, either exactly as stored (`"CPUTIME (sec)"`) or without
    /// the unit hpcprof appends in parentheses (`"CPUTIME"`); `Ok(None)` when there is none.
    pub fn metric_by_name(&self, name: &str) -> Result<Option<Metric<'a>>, Error> {
        for m in self.metrics() {
            let m = m?;
            let bare = m.name.split_once(" (").map_or(m.name, |(bare, _)| bare);
            if m.name == name || bare == name {
                return Ok(Some(m));
            }
        }
        Ok(None)
    }

    /// Scope instance `i` of `metric`.
    pub fn scope_instance(
        &self,
        metric: &Metric<'a>,
        i: u16,
    ) -> Result<PropagationScopeInstance, Error> {
        let at = self.element(metric.scope_insts, i.into(), "MD.pScopeInsts")?;
        let s: PropagationScopeInstanceSpec = self.bytes.read(at)?;
        Ok(PropagationScopeInstance {
            scope: self.scope_of(s.p_scope, "PSI.pScope", at)?,
            prop_metric_id: s.prop_metric_id,
        })
    }

    /// The scope instances of `metric`.
    pub fn scope_instances<'m>(
        &'m self,
        metric: &'m Metric<'a>,
    ) -> impl Iterator<Item = Result<PropagationScopeInstance, Error>> + 'm {
        (0..metric.scope_instance_count()).map(move |i| self.scope_instance(metric, i))
    }

    /// Summary statistic `i` of `metric`.
    pub fn summary(&self, metric: &Metric<'a>, i: u16) -> Result<SummaryStatistic<'a>, Error> {
        let at = self.element(metric.summaries, i.into(), "MD.pSummaries")?;
        let s: SummaryStatisticSpec = self.bytes.read(at)?;
        Ok(SummaryStatistic {
            scope: self.scope_of(s.p_scope, "SS.pScope", at)?,
            formula: self.bytes.cstr(
                self.layout.metrics_region,
                s.p_formula,
                "SS.pFormula",
                at + 8,
            )?,
            combine: Combine(s.combine),
            stat_metric_id: s.stat_metric_id,
        })
    }

    /// The summary statistics of `metric`.
    pub fn summaries<'m>(
        &'m self,
        metric: &'m Metric<'a>,
    ) -> impl Iterator<Item = Result<SummaryStatistic<'a>, Error>> + 'm {
        (0..metric.summary_count()).map(move |i| self.summary(metric, i))
    }

    /// `nModules`.
    pub fn module_count(&self) -> u32 {
        self.layout.modules.count as u32
    }

    /// A load module.
    pub fn module(&self, index: ModuleIndex) -> Result<LoadModule<'a>, Error> {
        let at = self.element(self.layout.modules, index.0.into(), "Modules.pModules")?;
        let m: LoadModuleSpec = self.bytes.read(at)?;
        Ok(LoadModule {
            index,
            flags: m.flags,
            path: self
                .bytes
                .cstr(self.layout.strings_region, m.p_path, "LMS.pPath", at + 8)?,
        })
    }

    /// Every load module.
    pub fn modules(&self) -> impl Iterator<Item = Result<LoadModule<'a>, Error>> + '_ {
        (0..self.module_count()).map(move |i| self.module(ModuleIndex(i)))
    }

    /// `nFiles`.
    pub fn file_count(&self) -> u32 {
        self.layout.files.count as u32
    }

    /// A source file.
    pub fn file(&self, index: FileIndex) -> Result<SourceFile<'a>, Error> {
        let at = self.element(self.layout.files, index.0.into(), "Files.pFiles")?;
        let f: SourceFileSpec = self.bytes.read(at)?;
        Ok(SourceFile {
            index,
            flags: f.flags,
            path: self
                .bytes
                .cstr(self.layout.strings_region, f.p_path, "SFS.pPath", at + 8)?,
        })
    }

    /// Every source file.
    pub fn files(&self) -> impl Iterator<Item = Result<SourceFile<'a>, Error>> + '_ {
        (0..self.file_count()).map(move |i| self.file(FileIndex(i)))
    }

    /// `nFunctions`.
    pub fn function_count(&self) -> u32 {
        self.layout.functions.count as u32
    }

    /// A function.
    pub fn function(&self, index: FunctionIndex) -> Result<Function<'a>, Error> {
        let at = self.element(
            self.layout.functions,
            index.0.into(),
            "Functions.pFunctions",
        )?;
        let f: FunctionSpec = self.bytes.read(at)?;
        let name = match f.p_name {
            0 => None,
            p => Some(
                self.bytes
                    .cstr(self.layout.strings_region, p, "FS.pName", at)?,
            ),
        };
        let module = match f.p_module {
            0 => None,
            p => Some(self.module_of(p, "FS.pModule", at + 8)?),
        };
        let file = match f.p_file {
            0 => None,
            p => Some(self.file_of(p, "FS.pFile", at + 0x18)?),
        };
        Ok(Function {
            index,
            name,
            module,
            offset: f.offset,
            file,
            line: f.line,
            flags: f.flags,
        })
    }

    /// Every function.
    pub fn functions(&self) -> impl Iterator<Item = Result<Function<'a>, Error>> + '_ {
        (0..self.function_count()).map(move |i| self.function(FunctionIndex(i)))
    }

    fn module_of(&self, p: u64, field: &'static str, at: u64) -> Result<ModuleIndex, Error> {
        self.layout
            .modules
            .index_of(p)
            .map(|i| ModuleIndex(i as u32))
            .ok_or_else(|| {
                self.bytes
                    .invalid(field, at, "a pointer to an element of *pModules", p)
            })
    }

    fn file_of(&self, p: u64, field: &'static str, at: u64) -> Result<FileIndex, Error> {
        self.layout
            .files
            .index_of(p)
            .map(|i| FileIndex(i as u32))
            .ok_or_else(|| {
                self.bytes
                    .invalid(field, at, "a pointer to an element of *pFiles", p)
            })
    }

    fn function_of(&self, p: u64, field: &'static str, at: u64) -> Result<FunctionIndex, Error> {
        self.layout
            .functions
            .index_of(p)
            .map(|i| FunctionIndex(i as u32))
            .ok_or_else(|| {
                self.bytes
                    .invalid(field, at, "a pointer to an element of *pFunctions", p)
            })
    }

    /// `nEntryPoints`.
    pub fn entry_point_count(&self) -> u16 {
        self.layout.entry_points.count as u16
    }

    /// Entry point `i`.
    pub fn entry_point(&self, i: u16) -> Result<EntryPoint<'a>, Error> {
        let at = self.element(self.layout.entry_points, i.into(), "Context.pEntryPoints")?;
        let e: EntryPointSpec = self.bytes.read(at)?;
        Ok(EntryPoint {
            offset: at,
            ctx_id: e.ctx_id,
            kind: EntryPointKind(e.entry_point),
            pretty_name: self.bytes.cstr(
                self.layout.strings_region,
                e.p_pretty_name,
                "Entry.pPrettyName",
                at + 0x18,
            )?,
            children: self.children_of(e.p_children, e.sz_children, at)?,
        })
    }

    /// Every entry point.
    pub fn entry_points(&self) -> impl Iterator<Item = Result<EntryPoint<'a>, Error>> + '_ {
        (0..self.entry_point_count()).map(move |i| self.entry_point(i))
    }

    fn children_of(&self, pointer: u64, size: u64, at: u64) -> Result<ContextChildren, Error> {
        // FORMATS.md says pChildren is 0 when szChildren is 0, but hpcprof leaves a stale
        // pointer there in real files (loops-cputime-t.d): an empty array's pointer is kept as
        // stored and never followed.
        if size != 0 {
            self.bytes.check_within(
                self.layout.context_region,
                pointer,
                size,
                "pChildren",
                at + 8,
            )?;
        }
        Ok(ContextChildren {
            pointer,
            size,
            field_offset: at,
        })
    }

    /// Decodes the {Ctx} at `at`, which must end at or before `end`.
    fn context_at(&self, at: u64, end: u64) -> Result<Context<'a>, Error> {
        let size = ContextSpec::SIZE as u64;
        self.bytes
            .check_within(self.layout.context_region, at, size, "Ctx", at)?;
        // Hot path (every context of the tree): decoded straight from the bytes, not through
        // binrw's io::Read machinery, which costs several times more per context.
        let c = decode_context(self.bytes.slice(at, size, "Ctx")?);
        let flex_len = u64::from(c.n_flex_words) * 8;
        let total = ContextSpec::SIZE as u64 + flex_len;
        if at + total > end {
            return Err(self.bytes.invalid(
                "Ctx.nFlexWords",
                at + 0x17,
                "a context that fits in its parent's szChildren",
                c.n_flex_words.into(),
            ));
        }
        let flex_at = at + ContextSpec::SIZE as u64;
        let flex = self.bytes.slice(flex_at, flex_len, "Ctx.flex")?;
        // FORMATS.md, {Ctx} flex: sub-fields are packed in order; a u64 takes the next whole
        // word, a u32 takes the free half of a word a previous u32 started, else a new word. For
        // the fields this crate knows that is: pFunction; pFile, line (a u32 starting a word
        // whose other half stays free); pModule, offset. `field(w, four)` reads word `w`.
        let too_small = || {
            self.bytes.invalid(
                "Ctx.nFlexWords",
                at + 0x17,
                "enough flex words for the fields its flags announce",
                c.n_flex_words.into(),
            )
        };
        let field = |w: usize, four: bool| -> Result<(u64, u64), Error> {
            let p = w * 8;
            let value = if four {
                flex.get(p..p + 4)
                    .and_then(|b| b.try_into().ok())
                    .map(|b| u64::from(u32::from_le_bytes(b)))
            } else {
                flex.get(p..p + 8)
                    .and_then(|b| b.try_into().ok())
                    .map(u64::from_le_bytes)
            };
            Ok((value.ok_or_else(too_small)?, flex_at + p as u64))
        };
        let mut ctx = Context {
            offset: at,
            ctx_id: c.ctx_id,
            flags: c.flags,
            relation: Relation(c.relation),
            lexical_type: LexicalType(c.lexical_type),
            propagation: c.propagation,
            function: None,
            file: None,
            line: None,
            module: None,
            module_offset: None,
            flex,
            children: self.children_of(c.p_children, c.sz_children, at)?,
        };
        let mut w = 0;
        if c.flags & CONTEXT_HAS_FUNCTION != 0 {
            let (p, pat) = field(w, false)?;
            ctx.function = Some(self.function_of(p, "Ctx.flex.pFunction", pat)?);
            w += 1;
        }
        if c.flags & CONTEXT_HAS_SRCLOC != 0 {
            let (p, pat) = field(w, false)?;
            ctx.file = Some(self.file_of(p, "Ctx.flex.pFile", pat)?);
            ctx.line = Some(field(w + 1, true)?.0 as u32);
            w += 2;
        }
        if c.flags & CONTEXT_HAS_POINT != 0 {
            let (p, pat) = field(w, false)?;
            ctx.module = Some(self.module_of(p, "Ctx.flex.pModule", pat)?);
            ctx.module_offset = Some(field(w + 1, false)?.0);
        }
        Ok(ctx)
    }

    /// The contexts of a `pChildren` array, in file order.
    pub fn children(&self, children: ContextChildren) -> Children<'_, 'a> {
        Children {
            meta: self,
            pos: children.pointer,
            end: children.pointer.saturating_add(children.size),
            failed: false,
        }
    }

    /// Every entry point and context in tree order (pre-order, entry points in file order, children
    /// in file order).
    ///
    /// The walk stops with an error after more nodes than the Context Tree section could hold, so
    /// a hostile file whose `pChildren` loop back cannot make it run forever.
    pub fn walk(&self) -> Walk<'_, 'a> {
        let r = self.layout.context_region;
        Walk {
            meta: self,
            next_entry: 0,
            stack: Vec::new(),
            budget: r.len() / ContextSpec::SIZE as u64 + u64::from(self.entry_point_count()),
            done: false,
        }
    }

    /// Builds the ctxId index of the context tree (checks that ctxIds are unique).
    pub fn context_index(&self) -> Result<ContextIndex, Error> {
        let walk = self.walk();
        // The walk's budget bounds the node count by the section's size (24 bytes per 32-byte
        // context at most: less than the input, whatever the file says).
        let mut entries = Vec::with_capacity(walk.budget as usize);
        for node in walk {
            let node = node?;
            entries.push(IndexEntry {
                ctx_id: node.node.ctx_id(),
                parent: node.parent,
                offset: node.node.offset(),
                entry_point: matches!(node.node, ContextNode::EntryPoint(_)),
            });
        }
        let duplicate = |e: &IndexEntry| {
            self.bytes.invalid(
                "ctxId",
                e.offset + 0x10,
                "ctxIds unique in the context tree",
                e.ctx_id.into(),
            )
        };
        // hpcprof numbers contexts densely, so the index is usually a table from ctxId to the
        // entry (O(n), 4 bytes per possible id); sparse or hostile ids take a sorted permutation.
        let max_id = entries.iter().map(|e| e.ctx_id).max().unwrap_or(0);
        if (max_id as usize) < entries.len().saturating_mul(4).saturating_add(64) {
            let mut by_id = vec![u32::MAX; max_id as usize + 1];
            for (i, e) in entries.iter().enumerate() {
                let s = &mut by_id[e.ctx_id as usize];
                if *s != u32::MAX {
                    return Err(duplicate(e));
                }
                *s = i as u32;
            }
            return Ok(ContextIndex {
                entries,
                by_id,
                dense: true,
            });
        }
        let mut by_id: Vec<u32> = (0..entries.len() as u32).collect();
        by_id.sort_unstable_by_key(|&i| entries[i as usize].ctx_id);
        let id = |i: &u32| entries[*i as usize].ctx_id;
        if let Some(w) = by_id.windows(2).find(|w| id(&w[0]) == id(&w[1])) {
            return Err(duplicate(&entries[w[1] as usize]));
        }
        Ok(ContextIndex {
            entries,
            by_id,
            dense: false,
        })
    }

    /// The entry point or context with `ctx_id`, through an index from [`MetaDb::context_index`].
    /// `None` when meta.db has no such context (elided instruction contexts, as-implemented).
    pub fn context(
        &self,
        index: &ContextIndex,
        ctx_id: u32,
    ) -> Option<Result<ContextNode<'a>, Error>> {
        let e = index.find(ctx_id)?;
        Some(self.node_at(e))
    }

    fn node_at(&self, e: &IndexEntry) -> Result<ContextNode<'a>, Error> {
        if e.entry_point {
            let a = self.layout.entry_points;
            let i = a.index_of(e.offset).unwrap_or(a.count) as u16;
            self.entry_point(i).map(ContextNode::EntryPoint)
        } else {
            self.context_at(e.offset, self.layout.context_region.end)
                .map(ContextNode::Context)
        }
    }

    /// Checks that what the file points at is not used twice beyond what the format allows:
    ///
    /// - the non-empty `*pScopeInsts` and `*pSummaries` arrays of the metrics never share a byte
    ///   ([`Error::Overlap`]);
    /// - every `char*` of the file (title, description, identifier names, scope and metric
    ///   names, formulas, module and file paths, function names, entry point names) is a whole
    ///   NUL-terminated UTF-8 string inside its section. Several pointers may name the same
    ///   string (hpcprof interns them), but none may start inside another string
    ///   ([`Error::Overlap`]), and the string bytes referred to, a shared string counted once
    ///   per reference, stay within [`STRING_AMPLIFICATION`] times the file's size plus
    ///   [`STRING_SLACK`] ([`Error::Invalid`] on `char*`).
    ///
    /// Each distinct string is scanned once: the pointers are sorted, and a string's NUL is
    /// looked for only up to the next pointer. O(n log n) in the pointers plus linear in the
    /// file, 24 bytes of memory per pointer. [`MetaDb::validate`] and
    /// [`Database::from_parts`](super::Database::from_parts) run it first, so the passes that
    /// follow stay linear.
    pub fn check_overlaps(&self) -> Result<(), Error> {
        let n_metrics = self.metric_count();
        let mut spans = Spans::with_capacity(2 * n_metrics as usize, ARRAY_FIELDS);
        let mut n_summaries = 0u64;
        for i in 0..n_metrics {
            let (at, _, insts, sums) = self.metric_arrays(i)?;
            spans.add(
                insts.base,
                array_bytes(insts, PropagationScopeInstanceSpec::SIZE),
                at + 8,
                0,
            );
            spans.add(
                sums.base,
                array_bytes(sums, SummaryStatisticSpec::SIZE),
                at + 0x10,
                1,
            );
            n_summaries += sums.count;
        }
        spans.check(FileKind::Meta)?;
        self.check_strings(n_summaries)
    }

    /// The string part of [`MetaDb::check_overlaps`]; `n_summaries` sizes the pointer list.
    fn check_strings(&self, n_summaries: u64) -> Result<(), Error> {
        let l = &self.layout;
        let capacity = 2
            + l.id_names.count
            + l.scopes.count
            + l.metrics.count
            + n_summaries
            + l.modules.count
            + l.files.count
            + l.functions.count
            + l.entry_points.count;
        let mut refs = Vec::with_capacity(capacity as usize);
        let mut add = |pointer: u64, at: u64, region: u8, field: u8| {
            refs.push(StrRef {
                pointer,
                at,
                region,
                field,
            });
        };
        let g = l.general_region.start;
        add(l.general.p_title, g, 0, 0);
        add(l.general.p_description, g + 8, 0, 1);
        for k in 0..l.id_names.count {
            let at = l.id_names.at(k);
            add(self.u64_at(at)?, at, 1, 2);
        }
        for i in 0..l.scopes.count {
            let at = l.scopes.at(i);
            add(
                self.bytes.read::<PropagationScopeSpec>(at)?.p_scope_name,
                at,
                2,
                3,
            );
        }
        for i in 0..self.metric_count() {
            let (at, md, _, sums) = self.metric_arrays(i)?;
            add(md.p_name, at, 2, 4);
            for j in 0..sums.count {
                let at = sums.at(j);
                add(
                    self.bytes.read::<SummaryStatisticSpec>(at)?.p_formula,
                    at + 8,
                    2,
                    5,
                );
            }
        }
        for i in 0..l.modules.count {
            let at = l.modules.at(i);
            add(self.bytes.read::<LoadModuleSpec>(at)?.p_path, at + 8, 3, 6);
        }
        for i in 0..l.files.count {
            let at = l.files.at(i);
            add(self.bytes.read::<SourceFileSpec>(at)?.p_path, at + 8, 3, 7);
        }
        for i in 0..l.functions.count {
            let at = l.functions.at(i);
            let p = self.bytes.read::<FunctionSpec>(at)?.p_name;
            if p != 0 {
                add(p, at, 3, 8);
            }
        }
        for i in 0..l.entry_points.count {
            let at = l.entry_points.at(i);
            add(
                self.bytes.read::<EntryPointSpec>(at)?.p_pretty_name,
                at + 0x18,
                3,
                9,
            );
        }
        refs.sort_unstable_by_key(|r| (r.pointer, r.at));

        let regions = [
            l.general_region,
            l.id_names_region,
            l.metrics_region,
            l.strings_region,
        ];
        let data = self.bytes.data;
        let len = self.bytes.len();
        let limit = STRING_AMPLIFICATION
            .saturating_mul(len)
            .saturating_add(STRING_SLACK);
        let nul_from = |from: u64, to: u64| -> Option<u64> {
            let to = to.min(len);
            if from >= to {
                return None;
            }
            data[from as usize..to as usize]
                .iter()
                .position(|&b| b == 0)
                .map(|n| from + n as u64)
        };
        let mut referenced = 0u64;
        let mut i = 0;
        while i < refs.len() {
            let p = refs[i].pointer;
            let j = i + refs[i..].iter().take_while(|r| r.pointer == p).count();
            let next = refs.get(j).map_or(u64::MAX, |r| r.pointer);
            // The only scan of these bytes: the strings' starts are sorted, so the gaps
            // between consecutive pointers cover the file at most once.
            let nul = nul_from(p, next);
            for r in &refs[i..j] {
                let region = regions[usize::from(r.region)];
                let field = STRING_FIELDS[usize::from(r.field)];
                let end = region.end.min(len);
                match nul {
                    Some(e) if p >= region.start && e < end => {}
                    None if p >= region.start && next < end => {
                        // The string runs into the one at `next`: report both.
                        let other = refs[j];
                        let stop = nul_from(next, end).map_or(end, |e| e + 1);
                        return Err(Error::Overlap {
                            file: FileKind::Meta,
                            field: STRING_FIELDS[usize::from(other.field)],
                            offset: other.at,
                            pointer: next,
                            end: stop,
                            other_field: field,
                            other_offset: r.at,
                            other_pointer: p,
                            other_end: stop,
                        });
                    }
                    _ => {
                        return Err(Error::UnterminatedString {
                            file: FileKind::Meta,
                            field,
                            offset: r.at,
                            pointer: p,
                            start: region.start,
                            end: region.end,
                        });
                    }
                }
            }
            let Some(e) = nul else { break };
            if std::str::from_utf8(&data[p as usize..e as usize]).is_err() {
                return Err(Error::InvalidUtf8 {
                    file: FileKind::Meta,
                    field: STRING_FIELDS[usize::from(refs[i].field)],
                    offset: refs[i].at,
                    pointer: p,
                });
            }
            referenced = referenced.saturating_add((e - p + 1).saturating_mul((j - i) as u64));
            if referenced > limit {
                return Err(self.bytes.invalid(
                    "char*",
                    refs[j - 1].at,
                    "string references totalling at most 64 times the file's size plus 1 MiB (a shared string counts once per reference)",
                    referenced,
                ));
            }
            i = j;
        }
        Ok(())
    }

    /// Checks every string, pointer, stride and array of every section, and that the context tree
    /// is a tree with unique ctxIds. After it succeeds no accessor fails on this file.
    ///
    /// Runs [`MetaDb::check_overlaps`] first; the whole check is then linear in the file.
    pub fn validate(&self) -> Result<(), Error> {
        self.check_overlaps()?;
        self.validate_tables()?;
        self.check_index(&self.context_index()?)
    }

    /// Everything [`MetaDb::validate`] checks but the context tree.
    pub(crate) fn validate_tables(&self) -> Result<(), Error> {
        self.title()?;
        self.description()?;
        for n in self.id_names() {
            n?;
        }
        for s in self.scopes() {
            s?;
        }
        for m in self.metrics() {
            let m = m?;
            for s in self.scope_instances(&m) {
                s?;
            }
            for s in self.summaries(&m) {
                s?;
            }
        }
        for m in self.modules() {
            m?;
        }
        for f in self.files() {
            f?;
        }
        for f in self.functions() {
            f?;
        }
        Ok(())
    }

    /// The tree checks left after [`MetaDb::context_index`] succeeded: no ctxId 0.
    pub(crate) fn check_index(&self, index: &ContextIndex) -> Result<(), Error> {
        match index.sorted().next() {
            Some(first) if first.ctx_id == 0 => Err(self.bytes.invalid(
                "ctxId",
                first.offset + 0x10,
                "a ctxId above 0 (0 is the global context)",
                0,
            )),
            _ => Ok(()),
        }
    }
}

/// The bytes an array of `a.count` elements of known size `size` spans (the last one needs
/// `size` bytes only; the stride may be larger).
fn array_bytes(a: Strided, size: usize) -> u64 {
    match a.count {
        0 => 0,
        n => (n - 1) * a.stride + size as u64,
    }
}

/// The fixed part of a {Ctx} from its 0x20 bytes (same result as `ContextSpec`'s binrw read).
fn decode_context(b: &[u8]) -> ContextSpec {
    let le = |i: usize, n: usize| {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(&b[i..i + n]);
        u64::from_le_bytes(w)
    };
    ContextSpec {
        sz_children: le(0, 8),
        p_children: le(8, 8),
        ctx_id: le(0x10, 4) as u32,
        flags: b[0x14],
        relation: b[0x15],
        lexical_type: b[0x16],
        n_flex_words: b[0x17],
        propagation: le(0x18, 2) as u16,
    }
}

/// The contexts of one `pChildren` array ([`MetaDb::children`]).
#[derive(Debug, Clone)]
pub struct Children<'m, 'a> {
    meta: &'m MetaDb<'a>,
    pos: u64,
    end: u64,
    failed: bool,
}

impl<'a> Iterator for Children<'_, 'a> {
    type Item = Result<Context<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.end {
            return None;
        }
        match self.meta.context_at(self.pos, self.end) {
            Ok(c) => {
                self.pos = c.offset + ContextSpec::SIZE as u64 + c.flex.len() as u64;
                Some(Ok(c))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    pos: u64,
    end: u64,
    depth: u32,
    parent: u32,
}

/// Pre-order walk of the context tree ([`MetaDb::walk`]).
#[derive(Debug, Clone)]
pub struct Walk<'m, 'a> {
    meta: &'m MetaDb<'a>,
    next_entry: u16,
    stack: Vec<Frame>,
    budget: u64,
    done: bool,
}

impl<'a> Walk<'_, 'a> {
    fn step(&mut self) -> Option<Result<TreeNode<'a>, Error>> {
        loop {
            let Some(top) = self.stack.last_mut() else {
                if self.next_entry >= self.meta.entry_point_count() {
                    return None;
                }
                let e = match self.meta.entry_point(self.next_entry) {
                    Ok(e) => e,
                    Err(err) => return Some(Err(err)),
                };
                self.next_entry += 1;
                self.push(e.children, 1, e.ctx_id);
                return Some(Ok(TreeNode {
                    depth: 0,
                    parent: 0,
                    node: ContextNode::EntryPoint(e),
                }));
            };
            if top.pos >= top.end {
                self.stack.pop();
                continue;
            }
            let frame = *top;
            let c = match self.meta.context_at(frame.pos, frame.end) {
                Ok(c) => c,
                Err(err) => return Some(Err(err)),
            };
            top.pos = c.offset + ContextSpec::SIZE as u64 + c.flex.len() as u64;
            self.push(c.children, frame.depth + 1, c.ctx_id);
            return Some(Ok(TreeNode {
                depth: frame.depth,
                parent: frame.parent,
                node: ContextNode::Context(c),
            }));
        }
    }

    fn push(&mut self, children: ContextChildren, depth: u32, parent: u32) {
        if !children.is_empty() {
            self.stack.push(Frame {
                pos: children.pointer,
                end: children.pointer.saturating_add(children.size),
                depth,
                parent,
            });
        }
    }
}

impl<'a> Iterator for Walk<'_, 'a> {
    type Item = Result<TreeNode<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.budget == 0
            && (!self.stack.is_empty() || self.next_entry < self.meta.entry_point_count())
        {
            self.done = true;
            let r = self.meta.layout.context_region;
            return Some(Err(self.meta.bytes.invalid(
                "Context",
                r.start,
                "a tree (no more contexts than the section can hold)",
                r.len(),
            )));
        }
        let item = self.step();
        match &item {
            Some(Ok(_)) => self.budget -= 1,
            Some(Err(_)) | None => self.done = true,
        }
        item
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct IndexEntry {
    ctx_id: u32,
    parent: u32,
    offset: u64,
    entry_point: bool,
}

/// The ctxId index of a context tree ([`MetaDb::context_index`]): 24 bytes per context, plus
/// 4 bytes per possible ctxId (dense numbering, O(1) lookups) or per context (sparse numbering,
/// binary search).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextIndex {
    /// Entry points and contexts in tree order.
    entries: Vec<IndexEntry>,
    /// `dense`: position in `entries` by ctxId (`u32::MAX` for none); otherwise the positions
    /// sorted by ctxId.
    by_id: Vec<u32>,
    dense: bool,
}

impl ContextIndex {
    fn find(&self, ctx_id: u32) -> Option<&IndexEntry> {
        self.entries.get(self.position(ctx_id)?)
    }

    /// The entries in ctxId order.
    fn sorted(&self) -> impl Iterator<Item = &IndexEntry> + '_ {
        self.by_id
            .iter()
            .filter_map(|&i| self.entries.get(i as usize))
    }

    /// Number of entry points and contexts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the tree is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position of `ctx_id` in tree order (the order of [`MetaDb::walk`]), `None` for a
    /// ctxId meta.db does not list.
    pub fn position(&self, ctx_id: u32) -> Option<usize> {
        let i = if self.dense {
            *self.by_id.get(ctx_id as usize)?
        } else {
            let k = self
                .by_id
                .binary_search_by_key(&ctx_id, |&i| self.entries[i as usize].ctx_id)
                .ok()?;
            self.by_id[k]
        };
        (i != u32::MAX).then_some(i as usize)
    }

    /// True when meta.db lists `ctx_id`.
    pub fn contains(&self, ctx_id: u32) -> bool {
        self.find(ctx_id).is_some()
    }

    /// The parent's ctxId (0 for entry points), `None` for an unknown ctxId.
    pub fn parent(&self, ctx_id: u32) -> Option<u32> {
        self.find(ctx_id).map(|e| e.parent)
    }

    /// File offset of the {Entry} or {Ctx} with `ctx_id`.
    pub fn offset(&self, ctx_id: u32) -> Option<u64> {
        self.find(ctx_id).map(|e| e.offset)
    }

    /// Every ctxId, ascending.
    pub fn ctx_ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.sorted().map(|e| e.ctx_id)
    }

    /// The elided contexts, ascending: the ctxIds other than 0 (the global context) that hold
    /// values in `profile` (a non-empty run in any profile) or in `cct` (a non-empty block)
    /// but that this tree does not list. hpcprof leaves instruction contexts nested in another
    /// context out of meta.db and keeps their values (as-implemented), so a database's
    /// contexts are the global context, the tree's entry points and contexts, and these.
    ///
    /// One pass over the profiles' context indices and cct.db's Context Info table, with
    /// memory for the elided ids only. Run the files' `check_overlaps` first when they are
    /// untrusted: aliased profiles would be read once per alias.
    pub fn elided(
        &self,
        profile: Option<&ProfileDb<'_>>,
        cct: Option<&CctDb<'_>>,
    ) -> Result<Vec<u32>, Error> {
        let mut elided = BTreeSet::new();
        let mut note = |ctx_id: u32| {
            if ctx_id != 0 && !self.contains(ctx_id) {
                elided.insert(ctx_id);
            }
        };
        if let Some(p) = profile {
            for prof in p.profiles() {
                for (ctx_id, values) in prof?.contexts() {
                    if !values.is_empty() {
                        note(ctx_id);
                    }
                }
            }
        }
        if let Some(c) = cct {
            for ctx_id in 0..c.context_count() {
                if c.context_info(ctx_id)?.n_values > 0 {
                    note(ctx_id);
                }
            }
        }
        Ok(elided.into_iter().collect())
    }

    /// A compact membership set of the ctxIds, for checks per trace sample: a bitmap when the
    /// ids are dense (at most 4n + 64 bits, which stays in cache where the 24-byte entries do
    /// not), else the sorted ids (4 bytes each, binary search).
    pub(crate) fn id_set(&self) -> CtxIdSet {
        if self.dense {
            let mut bits = vec![0u64; self.by_id.len().div_ceil(64)];
            for (id, &i) in self.by_id.iter().enumerate() {
                if i != u32::MAX {
                    bits[id >> 6] |= 1 << (id & 63);
                }
            }
            CtxIdSet::Bits(bits)
        } else {
            CtxIdSet::Sorted(self.ctx_ids().collect())
        }
    }
}

/// The ctxIds of a context tree as a membership set ([`ContextIndex::id_set`]).
#[derive(Debug, Clone)]
pub(crate) enum CtxIdSet {
    /// Bit `id` set for each ctxId.
    Bits(Vec<u64>),
    /// The ctxIds, ascending.
    Sorted(Vec<u32>),
}

impl CtxIdSet {
    #[inline]
    pub(crate) fn contains(&self, id: u32) -> bool {
        match self {
            CtxIdSet::Bits(bits) => bits
                .get(id as usize >> 6)
                .is_some_and(|w| w & (1 << (id & 63)) != 0),
            CtxIdSet::Sorted(ids) => ids.binary_search(&id).is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use binrw::BinRead;

    #[test]
    fn fast_context_decode_matches_binrw() {
        let bytes: Vec<u8> = (0u8..0x20)
            .map(|i| i.wrapping_mul(37).wrapping_add(11))
            .collect();
        let slow = ContextSpec::read(&mut std::io::Cursor::new(&bytes)).expect("0x20 bytes");
        assert_eq!(decode_context(&bytes), slow);
    }
}
