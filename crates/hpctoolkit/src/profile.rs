//! A database in the format-neutral profile model of `profcodec-profile`
//! ([`Database::to_profile`]), so that the questions of every profcodec format (top functions,
//! lines, modules; per rank or in total; diffs) are asked the same way.
//!
//! # What the model holds
//!
//! - **Nodes**: one call-tree node per entry point and context of meta.db's tree, in tree order
//!   (two sibling contexts with the same frame, such as two calls of one function from one
//!   source line after hpcprof elided the instructions between them, share a node).
//!   [`Database::to_profile_with_nodes`] also returns which node each ctxId became.
//! - **Frames**: an entry point is a [`FrameKind::Function`] frame named by its pretty name
//!   (`"main thread"`); a call context a [`FrameKind::Function`] frame (an inlined call a
//!   [`FrameKind::Inlined`] one) with the function's name, source file, line, load module and
//!   offset as meta.db's function record gives them (a call to an address without a function,
//!   a function frame with the module and offset only; a function hpcprof could not name, a
//!   [`FrameKind::Unknown`] frame); a loop a [`FrameKind::Loop`] frame with its file, line and,
//!   for binary loops, module and offset; a source line a [`FrameKind::Line`] frame; an
//!   instruction a [`FrameKind::Instruction`] frame with its load module and offset. Loops,
//!   lines and instructions carry the name of the function they lie in.
//! - **Value types**: every metric (or those [`ProfileOptions::metric`] names), named as
//!   meta.db names it without the unit hpcprof appends (`"CPUTIME (sec)"` is `"CPUTIME"`), with
//!   its [`Unit`]: `(sec)` is [`Unit::Seconds`], `(B)` [`Unit::Bytes`], no unit
//!   [`Unit::Count`] (event counts: `GINS`, `GXCOPY:COUNT`, `perf::task-clock`), any other
//!   [`Unit::Other`] (`(cyc)`). Each measures self and inclusive values
//!   ([`Measured::SelfAndInclusive`]). The default value type is the metric hatchet calls
//!   time (`CPUTIME`, `REALTIME` or `CYCLES`), else the metric in seconds with the largest
//!   summary total (`GKER`, the GPU kernel time, in a GPU database), else the first metric
//!   with a value.
//! - **Contexts**: [`Context::summary`] for the summary profile (its `$$` sum statistics), and
//!   with [`Profiles::All`] or [`Profiles::Matching`] one context per identifier tuple, its
//!   kinds spelled out ([`IdKind::Node`], [`IdKind::Rank`], [`IdKind::Thread`],
//!   [`IdKind::Core`], [`IdKind::GpuDevice`], [`IdKind::GpuContext`], [`IdKind::GpuStream`],
//!   a kind meta.db names otherwise as [`IdKind::Other`] with its name in lower case), each id
//!   the physical id when the identifier is flagged physical (a node's host id), else the
//!   logical id.
//!
//! # Self and inclusive, from the propagation scopes
//!
//! hpcprof stores each metric under up to four propagation scopes: `point` (the cost measured
//! at exactly that context), `function` (a transitive scope: the context plus the descendants
//! joined to it by contexts whose propagation bit is set, which hpcprof sets on lexical
//! contexts only; the cost of a context inside its function, hatchet's `time` and hpcviewer's
//! exclusive column), `lex_aware` (a custom scope, not read) and `execution` (the context and
//! everything below it: hatchet's `time (inc)`, hpcviewer's inclusive column).
//!
//! - A node's **inclusive** value is the `execution` scope.
//! - A node's **self** value is the cost at exactly that context: the `point` scope. hpcprof
//!   leaves instruction contexts nested in a line or loop out of meta.db (their ctxIds still
//!   carry values in profile.db), so their point cost is folded into the context above them:
//!   the `function` scope tells it, as `function(c) - point(c) - Σ function(k)` over the
//!   children `k` of `c` whose propagation bit is set. A difference smaller than 10⁻⁹ of
//!   `function(c)` is rounding in hpcprof's sums and is dropped, so a context without elided
//!   children keeps its point value bit for bit; a negative difference (a function scope left
//!   out or below its parts, which hpcprof never writes) leaves the point value as it is. A
//!   metric without the point scope takes self
//!   as that difference plus nothing else (`function(c) - Σ function(k)`), one without the
//!   function scope the point value as it is.
//!
//! So self values over all nodes add up to the whole program's cost (the global context's
//! `execution` value), and summed over a function's node and its loops, lines and
//! instructions (what [`GroupBy::Function`](profcodec_profile::GroupBy) does) they give that
//! node's `function` scope value. Values of ctxIds meta.db does not list (elided contexts,
//! and the global context 0) are read only through their parents in this way.
//!
//! # hpcviewer's flat view, and `top` by function
//!
//! hpcviewer's flat view lists each function once, whatever its call paths:
//!
//! - its **exclusive** cost is the sum of the `function` scope values of every context of
//!   that function (each call site, each inlined copy counting as its own function): the cost
//!   of its own code, loops and lines, not of what it calls;
//! - its **inclusive** cost is the sum of the `execution` scope values of its contexts that
//!   have no ancestor context of the same function, so a recursive function counts each stack
//!   once.
//!
//! [`Profile::top`](profcodec_profile::Profile::top) grouped by function computes exactly this
//! from the model (self values summed over the function's nodes and their loops, lines and
//! instructions; inclusive values of the outermost nodes of the function on each path); the
//! tests check it against a direct computation from the database's own scopes.
//!
//! # Cost
//!
//! profile.db's overlap check ([`ProfileDb::check_overlaps`](crate::ProfileDb::check_overlaps),
//! O(n log n) in the profiles, so that no value block is read twice), one walk of the context
//! tree, and one pass over the values of each profile read (two for metrics with the function
//! scope), each value mapped to its context in O(1) (O(log n) when ctxIds are sparse); a
//! profile with values for at least a quarter of the contexts is placed in tree order first
//! (one pass over the tree), so that the per-context and per-node tables fill in sequence. Memory: the model (a few dozen bytes per context and
//! per (profile, context, metric) with a value), plus 8 bytes per (context, metric with a
//! function scope) of scratch, reset per profile by the entries touched only. The summary
//! profile alone ([`Profiles::SummaryOnly`], the default) keeps a database of tens of
//! thousands of profiles at the cost of its context tree.

use profcodec_profile::{
    Context, ContextId, Frame, FrameId, FrameKind, IdKind, Measured, NodeId, Profile,
    ProfileBuilder, StringId, Unit, ValueTypeId,
};

use crate::Error;
use crate::raw::Value;
use crate::raw::enums::{Combine, LexicalType, Relation, ScopeType};
use crate::read::{ContextNode, Database, FileIndex, FunctionIndex, MetaDb, Metric, ModuleIndex};

/// Which profiles of profile.db become contexts of the model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Profiles {
    /// The summary profile only: what hpcviewer and hatchet show by default, at a cost that
    /// does not grow with the number of threads and ranks.
    #[default]
    SummaryOnly,
    /// The summary profile and every other profile, one context per identifier tuple.
    All,
    /// The summary profile and the profiles whose identifier tuple holds every given
    /// (kind, id), for example `[(IdKind::Rank, 3)]` for the threads of rank 3.
    Matching(Vec<(IdKind, u64)>),
}

/// What [`Database::to_profile`] converts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProfileOptions {
    /// The profiles read.
    pub profiles: Profiles,
    /// The metrics converted (by name, with or without the unit: `"CPUTIME"` or
    /// `"CPUTIME (sec)"`); empty for all.
    pub metrics: Vec<String>,
}

impl ProfileOptions {
    /// Every metric of the summary profile.
    pub fn new() -> ProfileOptions {
        ProfileOptions::default()
    }

    /// These options reading `profiles`.
    pub fn profiles(mut self, profiles: Profiles) -> ProfileOptions {
        self.profiles = profiles;
        self
    }

    /// These options converting metric `name` too (once any metric is named, only the named
    /// ones are converted).
    pub fn metric(mut self, name: impl Into<String>) -> ProfileOptions {
        self.metrics.push(name.into());
        self
    }
}

/// Which model node each ctxId of meta.db became ([`Database::to_profile_with_nodes`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextNodes {
    /// (ctxId, node), sorted by ctxId.
    by_ctx: Vec<(u32, NodeId)>,
}

impl ContextNodes {
    /// The node of `ctx_id`, `None` for a ctxId meta.db does not list.
    pub fn node(&self, ctx_id: u32) -> Option<NodeId> {
        self.by_ctx
            .binary_search_by_key(&ctx_id, |e| e.0)
            .ok()
            .map(|i| self.by_ctx[i].1)
    }

    /// Every (ctxId, node), ascending by ctxId.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, NodeId)> + '_ {
        self.by_ctx.iter().copied()
    }
}

impl<B: AsRef<[u8]>> Database<B> {
    /// The database in the format-neutral profile model (see the [module docs](crate::profile)
    /// for what becomes what). Needs profile.db for values; without it the model has the
    /// context tree and metrics but no values. Damaged input gives the reader's [`Error`]
    /// (no need to [`validate`](Database::validate) first).
    ///
    /// ```
    /// use profcodec_hpctoolkit::Database;
    /// use profcodec_hpctoolkit::profile::ProfileOptions;
    /// use profcodec_profile::Query;
    ///
    /// let db = Database::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpctoolkit/demo.d"))?;
    /// let profile = db.to_profile(&ProfileOptions::new())?;
    /// let top = profile.top(&Query::new().value_type("CPUTIME").limit(3)).expect("a metric");
    /// assert_eq!(top.unit, "seconds");
    /// # Ok::<(), profcodec_hpctoolkit::Error>(())
    /// ```
    pub fn to_profile(&self, options: &ProfileOptions) -> Result<Profile, Error> {
        Ok(self.to_profile_with_nodes(options)?.0)
    }

    /// [`to_profile`](Database::to_profile), and which node each ctxId became.
    pub fn to_profile_with_nodes(
        &self,
        options: &ProfileOptions,
    ) -> Result<(Profile, ContextNodes), Error> {
        let meta = self.meta();
        let mut b = ProfileBuilder::new();
        b.set_name(meta.title()?)?;
        let metrics = Metrics::read(&meta, options, &mut b)?;
        // Counts bounded by the files: the tables grow once instead of doubling.
        b.reserve_nodes(self.context_index().len());
        b.reserve_frames(self.context_index().len());
        let tree = Tree::read(&meta, &mut b)?;

        let mut values = Values::new(&tree, &metrics);
        // Each metric's self total in the summary profile, to pick the default metric.
        let mut summary_totals = vec![0.0; metrics.slots.len()];
        if let Some(profiles) = self.profile() {
            // Aliased value blocks would make the passes below repeat their work per alias.
            profiles.check_overlaps()?;
            let id_kinds = IdKinds::read(&meta, &mut b)?;
            for prof in profiles.profiles() {
                let prof = prof?;
                let context = if prof.is_summary() {
                    b.intern_context(Context::summary())?
                } else {
                    let ids = match (&options.profiles, prof.id_tuple) {
                        (Profiles::SummaryOnly, _) | (_, None) => continue,
                        (_, Some(tuple)) => tuple
                            .ids
                            .iter()
                            .map(|id| {
                                let value = if id.is_physical() {
                                    id.physical_id.get()
                                } else {
                                    u64::from(id.logical_id.get())
                                };
                                (id_kinds.kind(id.kind), value)
                            })
                            .collect::<Vec<_>>(),
                    };
                    if let Profiles::Matching(wanted) = &options.profiles
                        && !wanted.iter().all(|w| ids.contains(w))
                    {
                        continue;
                    }
                    b.intern_context(Context::new(ids))?
                };
                let roles = if prof.is_summary() {
                    &metrics.stat
                } else {
                    &metrics.prop
                };
                let contexts = values.order(&prof, self.context_index());
                // At most one value per (context, converted metric), and per value stored.
                b.reserve_node_values(
                    prof.values
                        .len()
                        .min(prof.ctx_indices.len().saturating_mul(metrics.slots.len())),
                );
                let totals = prof.is_summary().then_some(&mut summary_totals);
                values.add_profile(&mut b, context, roles, &contexts, totals)?;
            }
        }
        if let Some(default) = metrics.default_value_type(&summary_totals) {
            b.set_default_value_type(default)?;
        }

        let by_ctx = tree.by_ctx();
        Ok((b.build(), ContextNodes { by_ctx }))
    }
}

/// The role of a metric id: which slot (converted metric) and which scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Point,
    Function,
    Execution,
}

/// One converted metric.
#[derive(Debug, Clone, Copy)]
struct Slot {
    value_type: ValueTypeId,
    unit: Unit,
    /// The mask of the function scope's propagation bit, when the metric has that scope.
    function_bit: Option<u16>,
    /// Whether the metric has the point scope.
    point: bool,
    /// This metric's column in the function-scope scratch.
    function_column: Option<usize>,
}

/// The converted metrics and what each metric id means.
struct Metrics {
    slots: Vec<Slot>,
    /// `propMetricId` -> (slot, scope).
    prop: Vec<Option<(u32, Scope)>>,
    /// `statMetricId` (the `$$` sums) -> (slot, scope).
    stat: Vec<Option<(u32, Scope)>>,
    function_columns: usize,
    /// The metric hatchet calls time, if any.
    time: Option<ValueTypeId>,
}

fn set_role(table: &mut Vec<Option<(u32, Scope)>>, id: u16, role: (u32, Scope)) {
    let i = usize::from(id);
    if table.len() <= i {
        table.resize(i + 1, None);
    }
    // The first listed wins, as in `Database::metric`.
    table[i].get_or_insert(role);
}

/// A metric name split into its base and the unit hpcprof appends.
fn unit_of(b: &mut ProfileBuilder, metric: &Metric<'_>) -> Result<(String, Unit), Error> {
    let Some(unit) = metric.unit() else {
        return Ok((metric.name.to_owned(), Unit::Count));
    };
    let base = metric.name[..metric.name.len() - unit.len() - 3].to_owned();
    let unit = match unit {
        "sec" | "s" => Unit::Seconds,
        "ms" => Unit::Other(b.intern_string("milliseconds")?),
        "us" => Unit::Microseconds,
        "ns" => Unit::Nanoseconds,
        "B" => Unit::Bytes,
        other => Unit::Other(b.intern_string(other)?),
    };
    Ok((base, unit))
}

impl Metrics {
    fn read(
        meta: &MetaDb<'_>,
        options: &ProfileOptions,
        b: &mut ProfileBuilder,
    ) -> Result<Metrics, Error> {
        let mut metrics = Metrics {
            slots: Vec::new(),
            prop: Vec::new(),
            stat: Vec::new(),
            function_columns: 0,
            time: None,
        };
        let mut default = None;
        let mut seen = std::collections::HashSet::new();
        for metric in meta.metrics() {
            let metric = metric?;
            let (base, unit) = unit_of(b, &metric)?;
            if !options.metrics.is_empty()
                && !options
                    .metrics
                    .iter()
                    .any(|n| n == metric.name || *n == base)
            {
                continue;
            }
            let mut scopes = Vec::new();
            for inst in meta.scope_instances(&metric) {
                let inst = inst?;
                if let Some(scope) = scope_of(meta, inst.scope)? {
                    scopes.push((inst.prop_metric_id, scope, false));
                }
            }
            for sum in meta.summaries(&metric) {
                let sum = sum?;
                if sum.combine != Combine::SUM || sum.formula != "$$" {
                    continue;
                }
                if let Some(scope) = scope_of(meta, sum.scope)? {
                    scopes.push((sum.stat_metric_id, scope, true));
                }
            }
            let has = |s: Scope| scopes.iter().any(|e| e.1.0 == s);
            let (point, function, execution) = (
                has(Scope::Point),
                has(Scope::Function),
                has(Scope::Execution),
            );
            let measured = match (point || function, execution) {
                (true, true) => Measured::SelfAndInclusive,
                (true, false) => Measured::SelfOnly,
                (false, true) => Measured::InclusiveOnly,
                (false, false) => continue,
            };
            // Names repeat in no file seen; if they did, the metrics stay apart.
            let mut name = base;
            if !seen.insert((name.clone(), unit)) {
                name = format!("{name} #{}", metric.index);
            }
            let value_type = b.intern_value_type(&name, unit, measured)?;
            let function_bit = scopes
                .iter()
                .find(|e| e.1.0 == Scope::Function)
                .map(|e| e.1.1);
            let function_column = function_bit.map(|_| {
                metrics.function_columns += 1;
                metrics.function_columns - 1
            });
            let slot = metrics.slots.len() as u32;
            metrics.slots.push(Slot {
                value_type,
                unit,
                function_bit,
                point,
                function_column,
            });
            for (id, (scope, _), summary) in scopes {
                let table = if summary {
                    &mut metrics.stat
                } else {
                    &mut metrics.prop
                };
                set_role(table, id, (slot, scope));
            }
            let hatchet_time = ["CPUTIME", "REALTIME", "CYCLES"]
                .iter()
                .any(|t| name.eq_ignore_ascii_case(t));
            if default.is_none() && hatchet_time {
                default = Some(value_type);
            }
        }
        metrics.time = default;
        Ok(metrics)
    }

    /// The value type shown when none is asked for: the metric hatchet calls time (`CPUTIME`,
    /// `REALTIME`, `CYCLES`), else the metric in seconds with the largest summary total (the
    /// GPU kernel time of a GPU-only database), else the first metric with a value.
    fn default_value_type(&self, totals: &[f64]) -> Option<ValueTypeId> {
        let largest = |seconds: bool| {
            self.slots
                .iter()
                .zip(totals)
                .filter(|(s, t)| **t != 0.0 && (!seconds || s.unit == Unit::Seconds))
                // The first of equal totals.
                .max_by(|a, b| {
                    a.1.abs()
                        .total_cmp(&b.1.abs())
                        .then(std::cmp::Ordering::Greater)
                })
                .map(|(s, _)| s.value_type)
        };
        let first_with_value = self
            .slots
            .iter()
            .zip(totals)
            .find(|(_, t)| **t != 0.0)
            .map(|(s, _)| s.value_type);
        self.time
            .or_else(|| largest(true))
            .or(first_with_value)
            .or(self.slots.first().map(|s| s.value_type))
    }
}

/// The scope a scope index names, with the propagation mask for the function scope.
fn scope_of(
    meta: &MetaDb<'_>,
    index: crate::read::ScopeIndex,
) -> Result<Option<(Scope, u16)>, Error> {
    let scope = meta.scope(index)?;
    Ok(match scope.kind {
        ScopeType::POINT => Some((Scope::Point, 0)),
        ScopeType::EXECUTION => Some((Scope::Execution, 0)),
        ScopeType::TRANSITIVE if scope.name == "function" && scope.propagation_index < 16 => {
            Some((Scope::Function, 1u16 << scope.propagation_index))
        }
        _ => None,
    })
}

/// meta.db's identifier kinds as model kinds.
struct IdKinds(Vec<IdKind>);

impl IdKinds {
    fn read(meta: &MetaDb<'_>, b: &mut ProfileBuilder) -> Result<IdKinds, Error> {
        let mut kinds = Vec::new();
        for name in meta.id_names() {
            let name = name?;
            kinds.push(match name.to_ascii_uppercase().as_str() {
                "NODE" => IdKind::Node,
                "RANK" => IdKind::Rank,
                "THREAD" => IdKind::Thread,
                "CORE" => IdKind::Core,
                "GPUDEVICE" => IdKind::GpuDevice,
                "GPUCONTEXT" => IdKind::GpuContext,
                "GPUSTREAM" => IdKind::GpuStream,
                _ => IdKind::Other(b.intern_string(&name.to_ascii_lowercase())?),
            });
        }
        Ok(IdKinds(kinds))
    }

    fn kind(&self, kind: u8) -> IdKind {
        // hpcprof's own list when meta.db names fewer kinds than a tuple uses.
        const DEFAULT: [IdKind; 8] = [
            IdKind::Process, // SUMMARY: never in a tuple
            IdKind::Node,
            IdKind::Rank,
            IdKind::Thread,
            IdKind::GpuDevice,
            IdKind::GpuContext,
            IdKind::GpuStream,
            IdKind::Core,
        ];
        self.0
            .get(usize::from(kind))
            .or(DEFAULT.get(usize::from(kind)))
            .copied()
            .unwrap_or(IdKind::Process)
    }
}

/// meta.db's context tree as model nodes, by tree position (the order of `MetaDb::walk` and of
/// the database's `ContextIndex`).
struct Tree {
    ctx_id: Vec<u32>,
    node: Vec<NodeId>,
    /// The parent's position (`u32::MAX` for an entry point).
    parent: Vec<u32>,
    /// The stored `propagation` bitmask (0 for entry points).
    propagation: Vec<u16>,
}

/// Interned strings of meta.db's modules, files and functions, by their index (meta.db numbers
/// them densely; a table grows to an index only once the record at that index was read, so
/// its size is bounded by the file).
#[derive(Default)]
struct Names {
    modules: Vec<Option<StringId>>,
    files: Vec<Option<StringId>>,
    /// By function index and kind ([`FrameKind::Function`], [`FrameKind::Inlined`]).
    functions: Vec<[Option<FunctionFrames>; 2]>,
}

/// A function's frame and handle, and the frames of the loops, lines and instructions met in
/// its contexts: a function's body repeats under each of its calls, and its frames are found
/// here by comparing a few recent ones rather than through the model's frame table.
struct FunctionFrames {
    frame: Frame,
    id: FrameId,
    lexical: Vec<(Frame, FrameId)>,
}

/// The most loop, line and instruction frames remembered per function; others are found
/// through the model's frame table.
const LEXICAL_REMEMBERED: usize = 16;

/// The function of a context (index and whether inlined), whose body holds the contexts below
/// it up to the next call.
type Owner = (u32, usize);

/// The slot of `index` in a dense table, grown to hold it.
fn slot<T: Default>(table: &mut Vec<T>, index: u32) -> &mut T {
    let i = index as usize;
    if table.len() <= i {
        table.resize_with(i + 1, T::default);
    }
    &mut table[i]
}

impl Names {
    fn module(
        &mut self,
        meta: &MetaDb<'_>,
        b: &mut ProfileBuilder,
        m: ModuleIndex,
    ) -> Result<StringId, Error> {
        if let Some(&Some(s)) = self.modules.get(m.0 as usize) {
            return Ok(s);
        }
        let s = b.intern_string(meta.module(m)?.path)?;
        *slot(&mut self.modules, m.0) = Some(s);
        Ok(s)
    }

    fn file(
        &mut self,
        meta: &MetaDb<'_>,
        b: &mut ProfileBuilder,
        f: FileIndex,
    ) -> Result<StringId, Error> {
        if let Some(&Some(s)) = self.files.get(f.0 as usize) {
            return Ok(s);
        }
        let s = b.intern_string(meta.file(f)?.path)?;
        *slot(&mut self.files, f.0) = Some(s);
        Ok(s)
    }

    /// A function's frame (name, file, line, module, offset) and its handle.
    fn function(
        &mut self,
        meta: &MetaDb<'_>,
        b: &mut ProfileBuilder,
        f: FunctionIndex,
        kind: FrameKind,
    ) -> Result<(Frame, FrameId), Error> {
        let k = usize::from(kind == FrameKind::Inlined);
        // A function has many contexts: its record and strings are decoded once.
        if let Some(Some(known)) = self.functions.get(f.0 as usize).map(|e| &e[k]) {
            return Ok((known.frame, known.id));
        }
        let function = meta.function(f)?;
        let mut frame = Frame::new(kind);
        frame.function = function.name.map(|n| b.intern_string(n)).transpose()?;
        if let Some(file) = function.file {
            frame.file = Some(self.file(meta, b, file)?);
            frame.line = (function.line != 0).then_some(function.line);
        }
        if let Some(module) = function.module {
            frame.module = Some(self.module(meta, b, module)?);
            frame.address = (function.offset != 0).then_some(function.offset);
        }
        let id = b.intern_frame(frame)?;
        slot(&mut self.functions, f.0)[k] = Some(FunctionFrames {
            frame,
            id,
            lexical: Vec::new(),
        });
        Ok((frame, id))
    }

    /// The handle of `frame`, a loop, line or instruction in the body of `owner`.
    fn lexical(
        &mut self,
        b: &mut ProfileBuilder,
        owner: Option<Owner>,
        frame: Frame,
    ) -> Result<FrameId, Error> {
        let known = owner.and_then(|(f, k)| self.functions.get_mut(f as usize)?[k].as_mut());
        let Some(known) = known else {
            return Ok(b.intern_frame(frame)?);
        };
        if let Some(&(_, id)) = known.lexical.iter().find(|(f, _)| *f == frame) {
            return Ok(id);
        }
        let id = b.intern_frame(frame)?;
        if known.lexical.len() < LEXICAL_REMEMBERED {
            known.lexical.push((frame, id));
        }
        Ok(id)
    }
}

impl Tree {
    /// (ctxId, node), sorted by ctxId: placed by id when hpcprof's dense numbering allows (as
    /// the database's own ctxId index is), sorted otherwise.
    fn by_ctx(&self) -> Vec<(u32, NodeId)> {
        let n = self.ctx_id.len();
        let max = self.ctx_id.iter().copied().max().unwrap_or(0) as usize;
        if max < n.saturating_mul(4).saturating_add(64) {
            let mut placed: Vec<Option<NodeId>> = vec![None; max + 1];
            for (&c, &node) in self.ctx_id.iter().zip(&self.node) {
                placed[c as usize] = Some(node);
            }
            return placed
                .into_iter()
                .enumerate()
                .filter_map(|(c, node)| Some((c as u32, node?)))
                .collect();
        }
        let mut by_ctx: Vec<(u32, NodeId)> = self
            .ctx_id
            .iter()
            .zip(&self.node)
            .map(|(&c, &n)| (c, n))
            .collect();
        by_ctx.sort_unstable_by_key(|e| e.0);
        by_ctx
    }

    fn read(meta: &MetaDb<'_>, b: &mut ProfileBuilder) -> Result<Tree, Error> {
        let mut tree = Tree {
            ctx_id: Vec::new(),
            node: Vec::new(),
            parent: Vec::new(),
            propagation: Vec::new(),
        };
        let mut names = Names::default();
        // The path from the entry point to the current node: (position, enclosing function's
        // name, enclosing function).
        let mut path: Vec<(u32, Option<StringId>, Option<Owner>)> = Vec::new();
        for tree_node in meta.walk() {
            let tree_node = tree_node?;
            path.truncate(tree_node.depth as usize);
            let (parent_pos, owner, owner_function) = match path.last() {
                Some(&(pos, owner, function)) => (Some(pos), owner, function),
                None => (None, None, None),
            };
            // The function's frame and handle, for a call context of a known function.
            let mut function = None;
            let mut lexical = false;
            let (frame, propagation) = match tree_node.node {
                ContextNode::EntryPoint(e) => {
                    let name = b.intern_string(e.pretty_name)?;
                    (Frame::function(name), 0)
                }
                ContextNode::Context(c) => {
                    let mut frame = if c.relation == Relation::LEXICAL
                        && c.lexical_type != LexicalType::FUNCTION
                    {
                        let kind = match c.lexical_type {
                            LexicalType::LOOP => FrameKind::Loop,
                            LexicalType::LINE => FrameKind::Line,
                            _ => FrameKind::Instruction,
                        };
                        lexical = true;
                        let mut frame = Frame::new(kind);
                        frame.function = owner;
                        frame
                    } else {
                        let kind = if c.relation == Relation::INLINED_CALL {
                            FrameKind::Inlined
                        } else {
                            FrameKind::Function
                        };
                        match c.function {
                            Some(f) => {
                                let known = names.function(meta, b, f, kind)?;
                                function =
                                    Some((known, (f.0, usize::from(kind == FrameKind::Inlined))));
                                known.0
                            }
                            // A call to an address no function was found for.
                            None if c.module.is_some() || c.file.is_some() => Frame::new(kind),
                            None => Frame::new(FrameKind::Unknown),
                        }
                    };
                    // The context's own position (a loop's or line's; a call's site).
                    if let Some(file) = c.file
                        && frame.file.is_none()
                    {
                        frame.file = Some(names.file(meta, b, file)?);
                        frame.line = c.line.filter(|&l| l != 0);
                    }
                    if let Some(module) = c.module
                        && frame.module.is_none()
                    {
                        frame.module = Some(names.module(meta, b, module)?);
                        frame.address = c.module_offset;
                    }
                    (frame, c.propagation)
                }
            };
            let (own, own_function) = if frame.kind.is_function_like() {
                (frame.function, function.map(|(_, owner)| owner))
            } else {
                (owner, owner_function)
            };
            let frame = match function {
                // Most calls add nothing to their function's frame: its handle is known.
                Some(((known, id), _)) if known == frame => id,
                _ if lexical => names.lexical(b, owner_function, frame)?,
                _ => b.intern_frame(frame)?,
            };
            let parent_node = parent_pos.map(|p| tree.node[p as usize]);
            let node = b.intern_node(parent_node, frame)?;
            let pos = tree.node.len() as u32;
            tree.ctx_id.push(tree_node.node.ctx_id());
            tree.node.push(node);
            tree.parent.push(parent_pos.unwrap_or(u32::MAX));
            tree.propagation.push(propagation);
            path.push((pos, own, own_function));
        }
        Ok(tree)
    }
}

/// Per-profile scratch for turning scope values into self and inclusive values.
struct Values<'t> {
    tree: &'t Tree,
    metrics: &'t Metrics,
    /// Σ function(k) over the children k with the propagation bit, by (position, column).
    children_function: Vec<f64>,
    touched: Vec<usize>,
    /// The point, function and execution values of the current context, by slot, and which of
    /// the three it has (a bit per [`Scope`]).
    current: Vec<[f64; 3]>,
    present: Vec<u8>,
    current_slots: Vec<u32>,
    /// The current context's (value type, self, inclusive), handed to the model at once.
    node_values: Vec<(ValueTypeId, Option<f64>, Option<f64>)>,
}

/// A function-scope residual below this fraction of the function value is rounding.
const ROUNDING: f64 = 1e-9;

impl<'t> Values<'t> {
    fn new(tree: &'t Tree, metrics: &'t Metrics) -> Values<'t> {
        Values {
            tree,
            metrics,
            children_function: vec![
                0.0;
                tree.parent.len().saturating_mul(metrics.function_columns)
            ],
            touched: Vec::new(),
            current: vec![[0.0; 3]; metrics.slots.len()],
            present: vec![0; metrics.slots.len()],
            current_slots: Vec::new(),
            node_values: Vec::new(),
        }
    }

    /// The contexts of `prof` that meta.db lists, as (tree position, values), in the order
    /// their values are added: tree order when the profile has values for at least a quarter of
    /// the tree, so that the per-position tables and the model's per-node tables are read in
    /// sequence (placing them costs a pass over the tree); profile.db's ctxId order otherwise.
    fn order<'p>(
        &self,
        prof: &crate::read::Profile<'p>,
        index: &crate::read::ContextIndex,
    ) -> Vec<(usize, &'p [Value])> {
        let listed = prof
            .contexts()
            .filter_map(|(ctx_id, run)| Some((index.position(ctx_id)?, run)));
        let n = self.tree.parent.len();
        if prof.ctx_indices.len().saturating_mul(4) < n {
            return listed.collect();
        }
        let listed: Vec<(usize, &'p [Value])> = listed.collect();
        let mut placed: Vec<Option<&'p [Value]>> = vec![None; n];
        for &(pos, run) in &listed {
            // A ctxId listed twice (a damaged profile.db) keeps profile.db's order.
            if placed[pos].replace(run).is_some() {
                return listed;
            }
        }
        placed
            .into_iter()
            .enumerate()
            .filter_map(|(pos, run)| Some((pos, run?)))
            .collect()
    }

    /// Adds one profile's values: each listed context's tree position and its values.
    fn add_profile(
        &mut self,
        b: &mut ProfileBuilder,
        context: ContextId,
        roles: &[Option<(u32, Scope)>],
        contexts: &[(usize, &[Value])],
        mut totals: Option<&mut Vec<f64>>,
    ) -> Result<(), Error> {
        let (tree, metrics) = (self.tree, self.metrics);
        let role = |id: u16| roles.get(usize::from(id)).copied().flatten();
        let columns = metrics.function_columns;
        // First pass: what each context's lexical children add to its function scope.
        if columns > 0 {
            for &(pos, run) in contexts {
                let (parent, propagation) = (tree.parent[pos], tree.propagation[pos]);
                // Only a context with a propagation bit set (a lexical one) adds to its parent.
                if parent == u32::MAX || propagation == 0 {
                    continue;
                }
                for v in run {
                    let Some((slot, Scope::Function)) = role(v.metric_id()) else {
                        continue;
                    };
                    let slot = &metrics.slots[slot as usize];
                    if let (Some(bit), Some(column)) = (slot.function_bit, slot.function_column)
                        && propagation & bit != 0
                    {
                        let i = parent as usize * columns + column;
                        if self.children_function[i] == 0.0 {
                            self.touched.push(i);
                        }
                        self.children_function[i] += v.value();
                    }
                }
            }
        }
        for &(pos, run) in contexts {
            for v in run {
                let Some((slot, scope)) = role(v.metric_id()) else {
                    continue;
                };
                let s = slot as usize;
                if self.present[s] == 0 {
                    self.current_slots.push(slot);
                }
                self.present[s] |= 1 << scope as u8;
                self.current[s][scope as usize] = v.value();
            }
            let node = tree.node[pos];
            for &slot_index in &self.current_slots {
                let s = slot_index as usize;
                let present = std::mem::take(&mut self.present[s]);
                let has = |scope: Scope| present & (1 << scope as u8) != 0;
                let value = |scope: Scope| {
                    if has(scope) {
                        self.current[s][scope as usize]
                    } else {
                        0.0
                    }
                };
                let slot = metrics.slots[s];
                let self_value = match slot.function_column {
                    Some(column) => {
                        let children = self.children_function[pos * columns + column];
                        let function = value(Scope::Function);
                        if slot.point {
                            let point = value(Scope::Point);
                            // Elided instructions only add cost; a function scope below
                            // point plus children does not describe this context (a writer
                            // left it out), and the point value stands.
                            let elided = function - point - children;
                            if elided > ROUNDING * function.abs().max(children.abs()) {
                                point + elided
                            } else {
                                point
                            }
                        } else {
                            function - children
                        }
                    }
                    None => value(Scope::Point),
                };
                if self_value != 0.0
                    && let Some(totals) = totals.as_deref_mut()
                {
                    totals[s] += self_value;
                }
                self.node_values.push((
                    slot.value_type,
                    (self_value != 0.0).then_some(self_value),
                    has(Scope::Execution).then(|| value(Scope::Execution)),
                ));
            }
            self.current_slots.clear();
            b.add_node_values(context, node, self.node_values.drain(..))?;
        }
        for i in self.touched.drain(..) {
            self.children_function[i] = 0.0;
        }
        Ok(())
    }
}
