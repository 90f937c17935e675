//! The owned model of a whole HPCToolkit database: plain data for meta.db, profile.db, cct.db and
//! trace.db, with typed handles for the cross-references of meta.db.
//!
//! The model keeps every field a reader can observe (hpctoolkit-db-v4.md, FORMATS.md); what it
//! does not keep is layout: file offsets, padding, the order of blocks in the file, and the
//! uninitialised bytes hpcprof leaves in the cct.db header. Writing a model with
//! [`crate::write`] and reading it back gives the same model; writing that again gives the same
//! bytes.
//!
//! Build one with [`DatabaseBuilder`], which hands out typed handles ([`ModuleHandle`],
//! [`FileHandle`], [`FunctionHandle`], [`ScopeHandle`], [`EntryPointHandle`],
//! [`ContextHandle`], [`ProfileHandle`]) so that cross-references cannot name the wrong kind of
//! object.

use std::collections::BTreeMap;

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
        pub struct $name(pub u32);

        impl $name {
            /// The position of the referenced item in its table of the model.
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}

handle!(
    /// A propagation scope: an index into [`Meta::scopes`].
    ScopeHandle
);
handle!(
    /// A load module: an index into [`Meta::modules`].
    ModuleHandle
);
handle!(
    /// A source file: an index into [`Meta::files`].
    FileHandle
);
handle!(
    /// A function: an index into [`Meta::functions`].
    FunctionHandle
);
handle!(
    /// An entry point of the context tree: an index into [`Meta::entry_points`].
    EntryPointHandle
);
handle!(
    /// A context of the context tree: an index into [`Meta::contexts`] (not its `ctxId`).
    ContextHandle
);
handle!(
    /// A profile: its `profIndex` in profile.db (0 is the summary profile).
    ProfileHandle
);

// The enumerations are shared with the reader (one representation, `raw::enums`).
pub use crate::raw::enums::{Combine, EntryPointKind, LexicalType, Relation, ScopeType};

/// A whole database: meta.db, profile.db, and optionally cct.db and trace.db.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Database {
    /// meta.db.
    pub meta: Meta,
    /// profile.db: the profiles, indexed by `profIndex`; index 0 is the summary profile.
    pub profiles: Vec<Profile>,
    /// cct.db, when the database has one (hatchet insists on it).
    pub context_major: Option<ContextMajor>,
    /// trace.db, when the database has one.
    pub traces: Option<Traces>,
}

/// meta.db: everything but the values.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Meta {
    /// General Properties: title (hpcprof's default is `<unnamed>`).
    pub title: String,
    /// General Properties: description (hpcprof writes `TODO database description`).
    pub description: String,
    /// Identifier Names: the name of each identifier `kind`, indexed by kind.
    pub id_names: Vec<String>,
    /// Performance Metrics: the propagation scopes.
    pub scopes: Vec<PropagationScope>,
    /// Performance Metrics: the metrics.
    pub metrics: Vec<Metric>,
    /// Load Modules.
    pub modules: Vec<LoadModule>,
    /// Source Files.
    pub files: Vec<SourceFile>,
    /// Functions.
    pub functions: Vec<Function>,
    /// Context Tree: the entry points, in file order.
    pub entry_points: Vec<EntryPoint>,
    /// Context Tree: every context below the entry points. A context's parent comes before it;
    /// siblings appear in their file order.
    pub contexts: Vec<Context>,
}

/// A propagation scope ({PS}).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PropagationScope {
    /// `*pScopeName`, e.g. `point`, `function`, `execution`.
    pub name: String,
    /// `type`.
    pub scope_type: ScopeType,
    /// `propagationIndex`: the bit of [`Context::propagation`] for transitive scopes; hpcprof
    /// writes 255 for the others (hpctoolkit-db-v4.md).
    pub propagation_index: u8,
}

/// A performance metric ({MD}).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Metric {
    /// `*pName`, e.g. `CPUTIME (sec)`.
    pub name: String,
    /// The propagated sub-metrics ({PSI}).
    pub scope_insts: Vec<ScopeInstance>,
    /// The summary statistics ({SS}).
    pub summaries: Vec<Summary>,
}

/// A propagated sub-metric ({PSI}).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ScopeInstance {
    /// `*pScope`.
    pub scope: ScopeHandle,
    /// `propMetricId`: the metric id of these values in profile.db and cct.db.
    pub prop_metric_id: u16,
}

/// A summary statistic ({SS}).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Summary {
    /// `*pScope`.
    pub scope: ScopeHandle,
    /// `*pFormula`, e.g. `$$`.
    pub formula: String,
    /// `combine`.
    pub combine: Combine,
    /// `statMetricId`: the metric id of these values in summary profiles.
    pub stat_metric_id: u16,
}

/// A load module (`[LMS]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LoadModule {
    /// `flags` (reserved).
    pub flags: u32,
    /// `*pPath`.
    pub path: String,
}

/// A source file (`[SFS]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SourceFile {
    /// `flags` (bit 0: `copied`).
    pub flags: u32,
    /// `*pPath`.
    pub path: String,
}

/// A function (`[FS]`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Function {
    /// `*pName`, `None` when `pName` is 0 (an anonymous function).
    pub name: Option<String>,
    /// `*pModule`, `None` when `pModule` is 0.
    pub module: Option<ModuleHandle>,
    /// `offset` of the entry point in the module.
    pub offset: u64,
    /// `*pFile`, `None` when `pFile` is 0.
    pub file: Option<FileHandle>,
    /// `line` of the definition.
    pub line: u32,
    /// `flags` (reserved).
    pub flags: u32,
}

/// An entry point of the context tree ({Entry}).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct EntryPoint {
    /// `ctxId`.
    pub ctx_id: u32,
    /// `entryPoint`.
    pub kind: EntryPointKind,
    /// `*pPrettyName`, e.g. `main thread`.
    pub pretty_name: String,
}

/// The parent of a [`Context`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum Parent {
    /// A child of an entry point.
    EntryPoint(EntryPointHandle),
    /// A child of another context (which comes earlier in [`Meta::contexts`]).
    Context(ContextHandle),
}

/// A source location: `flex` fields `pFile` and `line` (flag `hasSrcLoc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SourceLocation {
    /// `*pFile`.
    pub file: FileHandle,
    /// `line`.
    pub line: u32,
}

/// A point in a binary: `flex` fields `pModule` and `offset` (flag `hasPoint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CodePoint {
    /// `*pModule`.
    pub module: ModuleHandle,
    /// `offset`.
    pub offset: u64,
}

/// A context of the context tree ({Ctx}). Its `flags` and `nFlexWords` follow from which of
/// `function`, `source` and `point` are present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Context {
    /// The entry point or context this context is a child of.
    pub parent: Parent,
    /// `ctxId` (> 0).
    pub ctx_id: u32,
    /// `relation`.
    pub relation: Relation,
    /// `lexicalType`.
    pub lexical_type: LexicalType,
    /// `propagation` bitmask.
    pub propagation: u16,
    /// `pFunction` (flag `hasFunction`).
    pub function: Option<FunctionHandle>,
    /// `pFile`, `line` (flag `hasSrcLoc`).
    pub source: Option<SourceLocation>,
    /// `pModule`, `offset` (flag `hasPoint`).
    pub point: Option<CodePoint>,
}

/// One identifier of a hierarchical identifier tuple ({Id} in profile.db).
///
/// `Debug` names the kind as hpcprof names it (`kind: RANK`; a kind past hpcprof's names
/// prints its number).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Identifier {
    /// `kind`: an index into [`Meta::id_names`].
    pub kind: u8,
    /// `flags` (bit 0: `isPhysical`).
    pub flags: u16,
    /// `logicalId`.
    pub logical_id: u32,
    /// `physicalId`.
    pub physical_id: u64,
}

/// The value of one metric at one context ({Val} of a Profile-Major Sparse Value Block).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MetricValue {
    /// `metricId`.
    pub metric_id: u16,
    /// `value`.
    pub value: f64,
}

/// Where a context's values start ({Idx} of a Profile-Major Sparse Value Block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ContextStart {
    /// `ctxId`.
    pub ctx_id: u32,
    /// `startIndex` into [`ProfileValues::values`].
    pub start: u64,
}

/// A Profile-Major Sparse Value Block, as on disk: contexts sorted by `ctxId`, each owning the
/// values from its `start` to the next context's `start`, sorted by `metricId`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ProfileValues {
    /// `*pCtxIndices`.
    pub contexts: Vec<ContextStart>,
    /// `*pValues`.
    pub values: Vec<MetricValue>,
}

impl ProfileValues {
    /// Appends a context's values. Contexts must come in increasing `ctxId` order and values in
    /// increasing `metricId` order (the writer checks).
    pub fn push(&mut self, ctx_id: u32, values: impl IntoIterator<Item = MetricValue>) {
        let start = self.values.len() as u64;
        self.values.extend(values);
        if self.values.len() as u64 > start {
            self.contexts.push(ContextStart { ctx_id, start });
        }
    }

    /// Each context with its values, in file order (an ill-formed `start` gives an empty slice).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[MetricValue])> + '_ {
        self.contexts.iter().enumerate().map(|(i, c)| {
            let end = self
                .contexts
                .get(i + 1)
                .map_or(self.values.len() as u64, |n| n.start);
            let slice = usize::try_from(c.start)
                .ok()
                .zip(usize::try_from(end).ok())
                .and_then(|(s, e)| self.values.get(s..e))
                .unwrap_or(&[]);
            (c.ctx_id, slice)
        })
    }

    /// The value of `metric_id` at `ctx_id`, if stored.
    pub fn get(&self, ctx_id: u32, metric_id: u16) -> Option<f64> {
        let i = self
            .contexts
            .binary_search_by_key(&ctx_id, |c| c.ctx_id)
            .ok()?;
        let (_, values) = self.iter().nth(i)?;
        let j = values
            .binary_search_by_key(&metric_id, |v| v.metric_id)
            .ok()?;
        Some(values[j].value)
    }
}

/// A profile of profile.db ({PI}).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Profile {
    /// `flags` (bit 0: `isSummary`).
    pub flags: u32,
    /// `*pIdTuple`; `None` when `pIdTuple` is 0 (the canonical summary profile).
    pub id_tuple: Option<Vec<Identifier>>,
    /// The values.
    pub values: ProfileValues,
}

impl Profile {
    /// `flags` bit 0.
    pub const IS_SUMMARY: u32 = 1;

    /// Whether this is a summary profile.
    pub fn is_summary(&self) -> bool {
        self.flags & Self::IS_SUMMARY != 0
    }
}

/// The value of one profile at one context and metric ({Val} of a Context-Major block).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ProfileValue {
    /// `profIndex`.
    pub prof_index: u32,
    /// `value`.
    pub value: f64,
}

/// Where a metric's values start ({Idx} of a Context-Major block).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct MetricStart {
    /// `metricId`.
    pub metric_id: u16,
    /// `startIndex` into [`ContextValues::values`].
    pub start: u64,
}

/// A Context-Major Sparse Value Block, as on disk: metrics sorted by `metricId`, each owning the
/// values from its `start` to the next metric's `start`, sorted by `profIndex`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ContextValues {
    /// `*pMetricIndices`.
    pub metrics: Vec<MetricStart>,
    /// `*pValues`.
    pub values: Vec<ProfileValue>,
}

impl ContextValues {
    /// Appends a metric's values (metrics in increasing id order, profiles in increasing index
    /// order; the writer checks).
    pub fn push(&mut self, metric_id: u16, values: impl IntoIterator<Item = ProfileValue>) {
        let start = self.values.len() as u64;
        self.values.extend(values);
        if self.values.len() as u64 > start {
            self.metrics.push(MetricStart { metric_id, start });
        }
    }
}

/// cct.db: one block per `ctxId` from 0 (the global context) to `nCtxs - 1`.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ContextMajor {
    /// The blocks, indexed by `ctxId`.
    pub contexts: Vec<ContextValues>,
}

/// One trace sample ({Elem}).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct TraceElement {
    /// `timestamp` (nanoseconds since the epoch).
    pub timestamp: u64,
    /// `ctxId` (0: the thread was not running).
    pub ctx_id: u32,
}

/// One trace line with its header ({CTH}).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Trace {
    /// `profIndex` (hpcprof: header i belongs to profile i + 1).
    pub prof_index: u32,
    /// The elements from `pStart` to `pEnd`.
    pub elements: Vec<TraceElement>,
}

/// trace.db.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Traces {
    /// `minTimestamp`, as stored.
    pub min_timestamp: u64,
    /// `maxTimestamp`, as stored.
    pub max_timestamp: u64,
    /// The traces, in header order.
    pub traces: Vec<Trace>,
}

impl Traces {
    /// Traces with `minTimestamp` and `maxTimestamp` computed from the elements (0 and 0 when
    /// there are none).
    pub fn from_traces(traces: Vec<Trace>) -> Self {
        let min = traces
            .iter()
            .filter_map(|t| t.elements.first())
            .map(|e| e.timestamp)
            .min();
        let max = traces
            .iter()
            .filter_map(|t| t.elements.last())
            .map(|e| e.timestamp)
            .max();
        Traces {
            min_timestamp: min.unwrap_or(0),
            max_timestamp: max.unwrap_or(0),
            traces,
        }
    }
}

impl Meta {
    /// The children of every entry point and context, as handles in sibling order:
    /// `(children of entry point i, children of context i)`. Parents that are out of range are
    /// ignored here (the writer rejects them).
    pub fn children(&self) -> (Vec<Vec<ContextHandle>>, Vec<Vec<ContextHandle>>) {
        let mut of_entry = vec![Vec::new(); self.entry_points.len()];
        let mut of_context = vec![Vec::new(); self.contexts.len()];
        for (i, c) in self.contexts.iter().enumerate() {
            let h = ContextHandle(i as u32);
            match c.parent {
                Parent::EntryPoint(p) => {
                    if let Some(v) = of_entry.get_mut(p.index()) {
                        v.push(h);
                    }
                }
                Parent::Context(p) => {
                    if let Some(v) = of_context.get_mut(p.index()) {
                        v.push(h);
                    }
                }
            }
        }
        (of_entry, of_context)
    }

    /// Every context in depth-first pre-order (entry point by entry point, siblings in order):
    /// the order a reader walking the tree meets them. Contexts whose parent is missing are left
    /// out.
    pub fn tree_order(&self) -> Vec<ContextHandle> {
        let (of_entry, of_context) = self.children();
        let mut order = Vec::with_capacity(self.contexts.len());
        let mut stack: Vec<ContextHandle> = Vec::new();
        for roots in &of_entry {
            stack.extend(roots.iter().rev());
            while let Some(h) = stack.pop() {
                order.push(h);
                if let Some(kids) = of_context.get(h.index()) {
                    stack.extend(kids.iter().rev());
                }
            }
        }
        order
    }

    /// The same tree with [`Meta::contexts`] in [`Meta::tree_order`], the order a reader
    /// produces. Two models describing the same database are equal after this.
    pub fn normalized(&self) -> Meta {
        let order = self.tree_order();
        let mut new_index = vec![u32::MAX; self.contexts.len()];
        for (new, old) in order.iter().enumerate() {
            new_index[old.index()] = new as u32;
        }
        let contexts = order
            .iter()
            .map(|old| {
                let mut c = self.contexts[old.index()];
                if let Parent::Context(p) = c.parent {
                    c.parent = Parent::Context(ContextHandle(new_index[p.index()]));
                }
                c
            })
            .collect();
        Meta {
            contexts,
            ..self.clone()
        }
    }

    /// The largest `ctxId` of the tree (0 when there are no contexts).
    pub fn max_ctx_id(&self) -> u32 {
        let e = self.entry_points.iter().map(|e| e.ctx_id);
        let c = self.contexts.iter().map(|c| c.ctx_id);
        e.chain(c).max().unwrap_or(0)
    }
}

impl Database {
    /// cct.db content computed from the non-summary profiles (what hpcprof writes): for each
    /// `ctxId` from 0 to `n_ctxs - 1`, each metric's values by increasing `profIndex`.
    /// `n_ctxs` defaults to one more than the largest `ctxId` in meta.db or the profiles.
    pub fn transpose(&self, n_ctxs: Option<u32>) -> ContextMajor {
        let max_in_profiles = self
            .profiles
            .iter()
            .filter(|p| !p.is_summary())
            .flat_map(|p| p.values.contexts.last().map(|c| c.ctx_id))
            .max()
            .unwrap_or(0);
        let n = n_ctxs.unwrap_or_else(|| self.meta.max_ctx_id().max(max_in_profiles) + 1) as usize;
        // (ctx, metric) -> values; profiles are visited in index order so each list is sorted.
        let mut cells: Vec<BTreeMap<u16, Vec<ProfileValue>>> = vec![BTreeMap::new(); n];
        for (prof_index, p) in self.profiles.iter().enumerate() {
            if p.is_summary() {
                continue;
            }
            for (ctx, values) in p.values.iter() {
                let Some(cell) = cells.get_mut(ctx as usize) else {
                    continue;
                };
                for v in values {
                    cell.entry(v.metric_id).or_default().push(ProfileValue {
                        prof_index: prof_index as u32,
                        value: v.value,
                    });
                }
            }
        }
        let contexts = cells
            .into_iter()
            .map(|cell| {
                let mut out = ContextValues::default();
                for (metric, values) in cell {
                    out.push(metric, values);
                }
                out
            })
            .collect();
        ContextMajor { contexts }
    }
}

/// Values of one profile while building: ctxId -> metricId -> value.
type SparseCells = BTreeMap<u32, BTreeMap<u16, f64>>;

/// Builds a [`Database`], handing out typed handles.
///
/// ```
/// use profcodec_hpctoolkit::model::*;
/// let mut b = DatabaseBuilder::new("demo");
/// let cputime = b.add_cputime_metric();
/// let module = b.add_module("/bin/demo");
/// let file = b.add_file("demo.c");
/// let main = b.add_function(Function {
///     name: Some("main".into()),
///     module: Some(module),
///     file: Some(file),
///     line: 3,
///     ..Function::default()
/// });
/// let entry = b.add_entry_point(EntryPointKind::MAIN_THREAD, "main thread");
/// let ctx = b.add_function_context(Parent::EntryPoint(entry), Relation::CALL, main);
/// let thread = b.add_profile(vec![Identifier { kind: 3, ..Identifier::default() }]);
/// b.set_value(thread, b.ctx_id(ctx), cputime.execution, 1.5);
/// let db = b.finish();
/// assert_eq!(db.profiles.len(), 2);
/// assert!(db.profiles[0].is_summary());
/// ```
#[derive(Debug, Clone)]
pub struct DatabaseBuilder {
    meta: Meta,
    profiles: Vec<(Option<Vec<Identifier>>, SparseCells)>,
    traces: Vec<Trace>,
    next_ctx_id: u32,
    next_metric_id: u16,
    next_stat_id: u16,
}

/// The metric ids of a metric made by [`DatabaseBuilder::add_cputime_metric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuTimeMetric {
    /// `propMetricId` of the `point` scope (exclusive, as measured).
    pub point: u16,
    /// `propMetricId` of the `function` scope.
    pub function: u16,
    /// `propMetricId` of the `execution` scope (inclusive).
    pub execution: u16,
}

impl DatabaseBuilder {
    /// The identifier kind names hpcprof writes.
    pub const DEFAULT_ID_NAMES: [&'static str; 8] = [
        "SUMMARY",
        "NODE",
        "RANK",
        "THREAD",
        "GPUDEVICE",
        "GPUCONTEXT",
        "GPUSTREAM",
        "CORE",
    ];

    /// A builder for a database titled `title`, with hpcprof's identifier names and
    /// description, and an empty summary profile at index 0.
    pub fn new(title: &str) -> Self {
        DatabaseBuilder {
            meta: Meta {
                title: title.to_owned(),
                description: "TODO database description".to_owned(),
                id_names: Self::DEFAULT_ID_NAMES.map(str::to_owned).to_vec(),
                ..Meta::default()
            },
            profiles: vec![(None, BTreeMap::new())],
            traces: Vec::new(),
            next_ctx_id: 1,
            next_metric_id: 0,
            next_stat_id: 0,
        }
    }

    /// Adds a propagation scope.
    pub fn add_scope(
        &mut self,
        name: &str,
        scope_type: ScopeType,
        propagation_index: u8,
    ) -> ScopeHandle {
        self.meta.scopes.push(PropagationScope {
            name: name.to_owned(),
            scope_type,
            propagation_index,
        });
        ScopeHandle(self.meta.scopes.len() as u32 - 1)
    }

    /// Adds a metric with one propagated sub-metric and one `$$`-sum summary per scope; returns
    /// the `propMetricId` of each scope, in order. Ids are allocated consecutively.
    pub fn add_metric(&mut self, name: &str, scopes: &[ScopeHandle]) -> Vec<u16> {
        let mut metric = Metric {
            name: name.to_owned(),
            ..Metric::default()
        };
        let mut ids = Vec::with_capacity(scopes.len());
        for &scope in scopes {
            let id = self.next_metric_id;
            self.next_metric_id = self.next_metric_id.wrapping_add(1);
            metric.scope_insts.push(ScopeInstance {
                scope,
                prop_metric_id: id,
            });
            metric.summaries.push(Summary {
                scope,
                formula: "$$".to_owned(),
                combine: Combine::SUM,
                stat_metric_id: self.next_stat_id,
            });
            self.next_stat_id = self.next_stat_id.wrapping_add(1);
            ids.push(id);
        }
        self.meta.metrics.push(metric);
        ids
    }

    /// Adds hpcprof's standard scopes (point, function, execution; once) and a metric
    /// `CPUTIME (sec)` over them, the metric hatchet looks for.
    pub fn add_cputime_metric(&mut self) -> CpuTimeMetric {
        let find = |b: &mut Self, name: &str, t: ScopeType, bit: u8| match b
            .meta
            .scopes
            .iter()
            .position(|s| s.name == name)
        {
            Some(i) => ScopeHandle(i as u32),
            None => b.add_scope(name, t, bit),
        };
        let point = find(self, "point", ScopeType::POINT, 255);
        let function = find(self, "function", ScopeType::TRANSITIVE, 0);
        let execution = find(self, "execution", ScopeType::EXECUTION, 255);
        let ids = self.add_metric("CPUTIME (sec)", &[point, function, execution]);
        CpuTimeMetric {
            point: ids[0],
            function: ids[1],
            execution: ids[2],
        }
    }

    /// Adds a load module.
    pub fn add_module(&mut self, path: &str) -> ModuleHandle {
        self.meta.modules.push(LoadModule {
            flags: 0,
            path: path.to_owned(),
        });
        ModuleHandle(self.meta.modules.len() as u32 - 1)
    }

    /// Adds a source file.
    pub fn add_file(&mut self, path: &str) -> FileHandle {
        self.meta.files.push(SourceFile {
            flags: 0,
            path: path.to_owned(),
        });
        FileHandle(self.meta.files.len() as u32 - 1)
    }

    /// Adds a function.
    pub fn add_function(&mut self, function: Function) -> FunctionHandle {
        self.meta.functions.push(function);
        FunctionHandle(self.meta.functions.len() as u32 - 1)
    }

    fn take_ctx_id(&mut self) -> u32 {
        let id = self.next_ctx_id;
        self.next_ctx_id = self.next_ctx_id.saturating_add(1);
        id
    }

    /// Adds an entry point with the next free `ctxId`.
    pub fn add_entry_point(&mut self, kind: EntryPointKind, pretty_name: &str) -> EntryPointHandle {
        let ctx_id = self.take_ctx_id();
        self.meta.entry_points.push(EntryPoint {
            ctx_id,
            kind,
            pretty_name: pretty_name.to_owned(),
        });
        EntryPointHandle(self.meta.entry_points.len() as u32 - 1)
    }

    /// Adds a context; its `ctx_id` field is replaced by the next free `ctxId` and its parent
    /// must already exist.
    pub fn add_context(&mut self, context: Context) -> ContextHandle {
        let ctx_id = self.take_ctx_id();
        self.meta.contexts.push(Context { ctx_id, ..context });
        ContextHandle(self.meta.contexts.len() as u32 - 1)
    }

    fn plain_context(parent: Parent, relation: Relation, lexical_type: LexicalType) -> Context {
        Context {
            parent,
            ctx_id: 0,
            relation,
            lexical_type,
            propagation: 0,
            function: None,
            source: None,
            point: None,
        }
    }

    /// Adds a function context (`relation` says how it was reached).
    pub fn add_function_context(
        &mut self,
        parent: Parent,
        relation: Relation,
        function: FunctionHandle,
    ) -> ContextHandle {
        self.add_context(Context {
            function: Some(function),
            ..Self::plain_context(parent, relation, LexicalType::FUNCTION)
        })
    }

    /// Adds a loop or line context at `file:line`, lexically nested in `parent`. Its
    /// `propagation` bit 0 is set, as hpcprof does for the `function` scope.
    pub fn add_source_context(
        &mut self,
        parent: Parent,
        lexical_type: LexicalType,
        file: FileHandle,
        line: u32,
    ) -> ContextHandle {
        self.add_context(Context {
            propagation: 1,
            source: Some(SourceLocation { file, line }),
            ..Self::plain_context(parent, Relation::LEXICAL, lexical_type)
        })
    }

    /// Adds an instruction context at `module+offset`, lexically nested in `parent`.
    pub fn add_instruction_context(
        &mut self,
        parent: Parent,
        module: ModuleHandle,
        offset: u64,
    ) -> ContextHandle {
        self.add_context(Context {
            propagation: 1,
            point: Some(CodePoint { module, offset }),
            ..Self::plain_context(parent, Relation::LEXICAL, LexicalType::INSTRUCTION)
        })
    }

    /// The `ctxId` of a context made by this builder.
    pub fn ctx_id(&self, context: ContextHandle) -> u32 {
        self.meta
            .contexts
            .get(context.index())
            .map_or(0, |c| c.ctx_id)
    }

    /// The `ctxId` of an entry point made by this builder.
    pub fn entry_ctx_id(&self, entry: EntryPointHandle) -> u32 {
        self.meta
            .entry_points
            .get(entry.index())
            .map_or(0, |e| e.ctx_id)
    }

    /// Adds a (non-summary) profile identified by `id_tuple`.
    pub fn add_profile(&mut self, id_tuple: Vec<Identifier>) -> ProfileHandle {
        self.profiles.push((Some(id_tuple), BTreeMap::new()));
        ProfileHandle(self.profiles.len() as u32 - 1)
    }

    /// Sets the value of `metric_id` at `ctx_id` in a profile (0 removes it: the format is
    /// sparse and stores no zeros).
    pub fn set_value(&mut self, profile: ProfileHandle, ctx_id: u32, metric_id: u16, value: f64) {
        if let Some((_, values)) = self.profiles.get_mut(profile.index()) {
            let cell = values.entry(ctx_id).or_default();
            if value == 0.0 {
                cell.remove(&metric_id);
            } else {
                cell.insert(metric_id, value);
            }
        }
    }

    /// Adds a trace line to a profile.
    pub fn add_trace(&mut self, profile: ProfileHandle, elements: Vec<TraceElement>) {
        self.traces.push(Trace {
            prof_index: profile.0,
            elements,
        });
    }

    /// The database: the summary profile computed from the others (for `$$` summaries with sum,
    /// min or max; values at ctxId 0 are the sum over the tree's roots is NOT computed, the
    /// caller sets what it measured), cct.db transposed from the profiles, and trace.db when
    /// traces were added.
    pub fn finish(self) -> Database {
        let mut profiles: Vec<Profile> = self
            .profiles
            .into_iter()
            .map(|(id_tuple, values)| {
                let mut pv = ProfileValues::default();
                for (ctx, cell) in values {
                    pv.push(
                        ctx,
                        cell.into_iter()
                            .map(|(metric_id, value)| MetricValue { metric_id, value }),
                    );
                }
                Profile {
                    flags: 0,
                    id_tuple,
                    values: pv,
                }
            })
            .collect();
        let summary = summarize(&self.meta, &profiles[1..]);
        profiles[0] = Profile {
            flags: Profile::IS_SUMMARY,
            id_tuple: None,
            values: summary,
        };
        let mut db = Database {
            meta: self.meta,
            profiles,
            context_major: None,
            traces: (!self.traces.is_empty()).then(|| Traces::from_traces(self.traces)),
        };
        db.context_major = Some(db.transpose(None));
        db
    }
}

/// The summary profile of `profiles`: every `$$` summary with a sum, min or max combination.
pub fn summarize(meta: &Meta, profiles: &[Profile]) -> ProfileValues {
    // prop metric id -> [(stat id, combine)]
    let mut stats: BTreeMap<u16, Vec<(u16, Combine)>> = BTreeMap::new();
    for m in &meta.metrics {
        for s in &m.summaries {
            if s.formula != "$$" || s.combine.0 > 2 {
                continue;
            }
            if let Some(inst) = m.scope_insts.iter().find(|i| i.scope == s.scope) {
                stats
                    .entry(inst.prop_metric_id)
                    .or_default()
                    .push((s.stat_metric_id, s.combine));
            }
        }
    }
    let mut cells: BTreeMap<u32, BTreeMap<u16, f64>> = BTreeMap::new();
    for p in profiles {
        for (ctx, values) in p.values.iter() {
            for v in values {
                let Some(targets) = stats.get(&v.metric_id) else {
                    continue;
                };
                let cell = cells.entry(ctx).or_default();
                for &(stat, combine) in targets {
                    let slot = cell.entry(stat).or_insert(match combine {
                        Combine::MIN => f64::INFINITY,
                        Combine::MAX => f64::NEG_INFINITY,
                        _ => 0.0,
                    });
                    *slot = match combine {
                        Combine::MIN => slot.min(v.value),
                        Combine::MAX => slot.max(v.value),
                        _ => *slot + v.value,
                    };
                }
            }
        }
    }
    let mut out = ProfileValues::default();
    for (ctx, cell) in cells {
        out.push(
            ctx,
            cell.into_iter()
                .filter(|(_, v)| *v != 0.0)
                .map(|(metric_id, value)| MetricValue { metric_id, value }),
        );
    }
    out
}
