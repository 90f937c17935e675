//! The tables of an HPCToolkit database (v4, feature `arrow`): its context tree, metrics,
//! profiles, values and traces, read from the database's files (which the caller opens, and
//! maps when large) through the views of [`Database`].
//!
//! How to ask "which functions cost the most" of these tables: hpcviewer's exclusive cost of a
//! function is the summary profile's `function`-scope sum statistic at the function's contexts
//! (and at calls to addresses without a function, in a database made without structure files):
//!
//! ```sql
//! SELECT c.function, SUM(v.value) AS self
//! FROM hpctoolkit.values v
//! JOIN hpctoolkit.metrics m ON m.metric_id = v.metric_id AND m.summary = v.summary
//! JOIN hpctoolkit.contexts c ON c.ctx_id = v.ctx_id
//! WHERE v.summary AND m.name = 'REALTIME (sec)' AND m.scope = 'function' AND m.combine = 'sum'
//!   AND (c.relation <> 'lexical' OR c.lexical_type = 'function')
//! GROUP BY c.function ORDER BY self DESC LIMIT 10
//! ```
//!
//! (hpcprof names metrics with their unit: `SELECT DISTINCT name FROM hpctoolkit.metrics`
//! lists them.)
//!
//! Every `values.ctx_id` has a `contexts` row, so an inner join drops no value. hpcprof leaves
//! instruction contexts nested in another context out of meta.db but keeps their values in
//! profile.db and cct.db; they are rows of kind `elided`, whose parent, depth and names are
//! null, since meta.db records nothing more of them. Ranking call paths by the cost at exactly
//! each context (the `point` scope) therefore keeps them, as in:
//!
//! ```sql
//! SELECT v.ctx_id, c.kind, c.depth, c.function, v.value AS self
//! FROM hpctoolkit.values v
//! JOIN hpctoolkit.metrics m ON m.metric_id = v.metric_id AND m.summary = v.summary
//! JOIN hpctoolkit.contexts c ON c.ctx_id = v.ctx_id
//! WHERE v.summary AND m.name = 'REALTIME (sec)' AND m.scope = 'point' AND m.combine = 'sum'
//! ORDER BY self DESC LIMIT 10
//! ```
//!
//! The rows are the contexts `info` counts as `contexts` and `dump` writes as `context`
//! records, at the same depths.

use std::path::Path;

use profcodec_common::Source;
use profcodec_common::source::Member;
use profcodec_tables::arrow_array::builder::BooleanBufferBuilder;
use profcodec_tables::arrow_array::types::{Float64Type, UInt16Type, UInt32Type, UInt64Type};
use profcodec_tables::{
    Batches, Column, Columns, Error, ScanOptions, SourceTables, TableSet, batches, columns,
    filled_batches, id_tuple_text, record_batch, table,
};

use crate::raw::{CtxIndex, TraceElem, Value};
use crate::read::{ContextNode, IdTuple, Profile};
use crate::{Database, FileKind, MetaDb};

table! {
    /// HPCToolkit `contexts`: one row per context of the database: the global context
    /// (ctxId 0) that every entry point hangs from, each node of meta.db's context tree, and
    /// each elided context (a ctxId with values in profile.db or cct.db that meta.db leaves
    /// out: hpcprof omits instruction contexts nested in another context). Every
    /// `values.ctx_id` has a row, so an inner join with `values` drops nothing. The rows are
    /// what `info` counts as `contexts` and `dump` writes as `context` records.
    Contexts, ContextRows, "contexts" {
        ctx_id: UInt32 => "The context's ctxId, the key of `values.ctx_id` and `traces.ctx_id`.",
        parent: UInt32 nullable => "The parent's ctxId (0 for an entry point; null for the global context and for elided contexts, whose parent meta.db does not record).",
        depth: UInt32 nullable => "0 for the global context, 1 for entry points, the parent's depth + 1 below; null for elided contexts.",
        kind: Utf8 => "`global`, `entry_point`, `context` (a node of meta.db's tree) or `elided` (not in meta.db: only the ctxId is known).",
        relation: Utf8 nullable => "How a context relates to its parent: `lexical`, `call` or `inlined_call` (`unknown_<n>` for a value this reader does not know).",
        lexical_type: Utf8 nullable => "What a context is: `function`, `loop`, `line` or `instruction`.",
        entry_point: Utf8 nullable => "An entry point's kind: `main_thread`, `application_thread` or `unknown_entry`.",
        function: Utf8 nullable => "The function's name (an entry point's pretty name).",
        file: Utf8 nullable => "The context's source file.",
        line: UInt32 nullable => "The context's source line.",
        module: Utf8 nullable => "The load module's path.",
        module_offset: UInt64 nullable => "The offset in the load module.",
    }
}

table! {
    /// HPCToolkit `metrics`: one row per metric id of meta.db: a propagated value (a metric in
    /// one propagation scope, as the non-summary profiles store it) or a summary statistic (as
    /// the summary profile stores it).
    Metrics, MetricRows, "metrics" {
        metric_id: UInt16 => "The id `values.metric_id` holds: a propMetricId, or a statMetricId when `summary`.",
        summary: Boolean => "True for a summary statistic (the summary profile's ids), false for a propagated value.",
        metric: UInt32 => "The metric's position in meta.db.",
        name: Utf8 => "The metric's name as hpcprof stores it (`time`, `GPU kernel time`).",
        unit: Utf8 nullable => "The unit hpcprof appends to the name in parentheses, when there is one.",
        scope: Utf8 => "The propagation scope's name: `point` (the context alone), `function` (with its loops and lines), `execution` (with everything it calls).",
        scope_type: Utf8 => "The scope's type: `point`, `execution`, `transitive` or `custom`.",
        combine: Utf8 nullable => "How a summary statistic combines the profiles: `sum`, `min` or `max`.",
        formula: Utf8 nullable => "A summary statistic's formula over the values (`$$` is the value itself).",
    }
}

table! {
    /// HPCToolkit `profiles`: one row per profile of profile.db, with its identifier tuple
    /// spelled out (the logical ids, as hpctesttool prints them).
    Profiles, ProfileRows, "profiles" {
        profile: UInt32 => "The profile's index (profIndex), the key of `values.profile` and `traces.profile`.",
        summary: Boolean => "True for the summary profile (the statistics over all others).",
        node: UInt32 nullable => "The compute node (`NODE`).",
        rank: UInt32 nullable => "The MPI rank (`RANK`).",
        thread: UInt32 nullable => "The thread (`THREAD`).",
        core: UInt32 nullable => "The CPU core (`CORE`).",
        gpu_device: UInt32 nullable => "The GPU device (`GPUDEVICE`).",
        gpu_context: UInt32 nullable => "The GPU context (`GPUCONTEXT`).",
        gpu_stream: UInt32 nullable => "The GPU stream (`GPUSTREAM`).",
        id_tuple: Utf8 nullable => "The whole tuple, kinds named by meta.db: `NODE 0 / RANK 3 / THREAD 1`.",
    }
}

table! {
    /// HPCToolkit `values`: every non-zero value of profile.db in long form, one row per
    /// (profile, context, metric id).
    Values, "values" {
        profile: UInt32 => "The profile (`profiles.profile`).",
        summary: Boolean => "True in the summary profile, whose metric ids are summary statistics.",
        ctx_id: UInt32 => "The context (`contexts.ctx_id`; ids meta.db elides have a row of kind `elided`).",
        metric_id: UInt16 => "The metric id (`metrics.metric_id` of the same `summary`).",
        value: Float64 => "The value.",
    }
}

table! {
    /// HPCToolkit `traces`: every sample of trace.db, one row per (profile, timestamp).
    Traces, "traces" {
        profile: UInt32 => "The profile the trace line belongs to (`profiles.profile`).",
        timestamp: UInt64 => "The sample's time in nanoseconds.",
        ctx_id: UInt32 => "The context sampled (`contexts.ctx_id`).",
    }
}

/// The set's name: the SQL schema of its tables, and the format its errors name.
const NAME: &str = crate::FORMAT_NAME;

/// The `hpctoolkit` set: its tables, in order.
pub const SET: TableSet = TableSet::new(
    NAME,
    &[
        Contexts::DEF,
        Metrics::DEF,
        Profiles::DEF,
        Values::DEF,
        Traces::DEF,
    ],
);

/// The bytes of a file of the database, as the caller opened it.
struct Held(Member);

impl AsRef<[u8]> for Held {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

impl std::fmt::Debug for Held {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} bytes", self.as_ref().len())
    }
}

/// The tables of a database: its files, opened by the caller, cross-linked by [`Database`].
#[derive(Debug)]
pub struct TableReader {
    db: Database<Held>,
}

impl TableReader {
    /// The tables of the database folder `source` (its files opened through `source.members`),
    /// with the context tree checked and indexed; one file of a database is refused, since its
    /// tables need the others.
    pub fn open(source: &Source<'_>) -> Result<TableReader, Error> {
        let path = source.path;
        if !source.is_folder() {
            return Err(Error::Unsupported {
                path: path.to_path_buf(),
                reason: "one file of an HPCToolkit database: its tables are read from the \
                         database folder (give the folder that holds meta.db)"
                    .to_owned(),
            });
        }
        let open = |kind: FileKind| -> Result<Option<Held>, Error> {
            let file = path.join(kind.file_name());
            if !file.is_file() {
                return Ok(None);
            }
            Ok(Some(Held(source.members.open(&file).map_err(Error::open)?)))
        };
        let meta = open(FileKind::Meta)?.ok_or_else(|| Error::Unsupported {
            path: path.to_path_buf(),
            reason: "an HPCToolkit database folder holds meta.db".to_owned(),
        })?;
        let db = Database::from_parts(
            meta,
            open(FileKind::Profile)?,
            open(FileKind::Cct)?,
            open(FileKind::Trace)?,
        )
        .map_err(|e| invalid(path, e))?;
        // The no-aliasing checks `validate` runs on the files whose arrays the tables read a
        // row per element of (`values`, `traces`): non-empty value blocks and trace lines each
        // have bytes of their own, so the rows are at most the file's records once. Aliased
        // ones are refused here, before any table is read or written.
        if let Some(profiles) = db.profile() {
            profiles.check_overlaps().map_err(|e| invalid(path, e))?;
        }
        if let Some(traces) = db.trace() {
            traces.check_overlaps().map_err(|e| invalid(path, e))?;
        }
        Ok(TableReader { db })
    }
}

impl SourceTables for TableReader {
    fn set(&self) -> TableSet {
        SET
    }

    fn batches<'a>(
        &'a self,
        source: Source<'a>,
        table: &str,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error> {
        let path = source.path;
        SET.table(table)?;
        Ok(match table {
            Contexts::NAME => self.contexts(path, options),
            Metrics::NAME => self.metrics(path, options)?,
            Profiles::NAME => self.profiles(path, options),
            Values::NAME => self.values(path, options),
            _ => self.traces(path, options),
        })
    }
}

impl TableReader {
    fn contexts<'a>(&'a self, path: &'a Path, options: &ScanOptions) -> Batches<'a> {
        let index = self.db.context_index();
        let meta = self.db.meta();
        // The elided contexts get rows too, so that joining `values` on `ctx_id` keeps every
        // value. profile.db's aliasing check ran in `open`.
        let elided = match self.db.elided_contexts() {
            Ok(elided) => elided,
            Err(e) => return Box::new(std::iter::once(Err(invalid(path, e)))),
        };
        // Depth by tree position, filled on demand: a parent's chain is walked once.
        let mut depths = vec![0u32; index.len()];
        let mut depth_of = move |ctx_id: u32| -> u32 {
            let mut chain = Vec::new();
            let mut at = ctx_id;
            let mut depth = 0;
            while let Some(pos) = index.position(at) {
                if depths[pos] != 0 {
                    depth = depths[pos];
                    break;
                }
                chain.push(pos);
                match index.parent(at) {
                    // The walk that built the index refused loops; a chain longer than the index
                    // could only come from one, so it stops there all the same.
                    Some(parent) if chain.len() <= depths.len() => at = parent,
                    _ => break,
                }
            }
            for pos in chain.into_iter().rev() {
                depth += 1;
                depths[pos] = depth;
            }
            depth
        };
        // The tree's ctxIds and the elided ones, merged in ascending order (two ascending,
        // disjoint sequences).
        let mut tree = index.ctx_ids().peekable();
        let mut elided = elided.into_iter().peekable();
        let ids = std::iter::from_fn(move || match (tree.peek(), elided.peek()) {
            (Some(&t), Some(&e)) if e < t => elided.next().map(Err),
            (Some(_), _) => tree.next().map(Ok),
            (None, _) => elided.next().map(Err),
        });
        let items = ids.map(move |id: Result<u32, u32>| {
            let ctx_id = match id {
                Ok(ctx_id) => ctx_id,
                Err(ctx_id) => return Ok(Some(ContextRow::Elided(ctx_id))),
            };
            let node = match self.db.context(ctx_id) {
                Some(node) => node.map_err(|e| invalid(path, e))?,
                None => return Ok(None),
            };
            Ok(Some(ContextRow::Node(
                node,
                depth_of(ctx_id),
                index.parent(ctx_id),
            )))
        });
        let items = items.filter_map(|row| row.transpose());
        let mut rows = ContextRows::new();
        // The global context first: hpcprof gives it no node in meta.db.
        if !index.contains(0) {
            append_global(&mut rows);
        }
        batches(rows, items, options, move |rows, row: ContextRow<'a>| {
            let (node, depth, parent) = match row {
                ContextRow::Elided(ctx_id) => return append_elided(rows, ctx_id),
                ContextRow::Node(node, depth, parent) => (node, depth, parent),
            };
            rows.ctx_id.append_value(node.ctx_id());
            rows.parent.append_option(parent);
            rows.depth.append_value(depth);
            match node {
                ContextNode::EntryPoint(e) => {
                    rows.kind.append_value("entry_point");
                    rows.relation.append_null();
                    rows.lexical_type.append_null();
                    rows.entry_point.append_value(e.kind.to_string());
                    rows.function.append_value(e.pretty_name);
                    rows.file.append_null();
                    rows.line.append_null();
                    rows.module.append_null();
                    rows.module_offset.append_null();
                }
                ContextNode::Context(c) => {
                    rows.kind.append_value("context");
                    rows.relation.append_value(c.relation.to_string());
                    rows.lexical_type.append_value(c.lexical_type.to_string());
                    rows.entry_point.append_null();
                    // The names were checked when the database was validated or are
                    // checked here; a damaged one reads as null rather than stopping the
                    // table (the ids still say where it is).
                    rows.function.append_option(
                        c.function
                            .and_then(|f| meta.function(f).ok())
                            .and_then(|f| f.name),
                    );
                    rows.file
                        .append_option(c.file.and_then(|f| meta.file(f).ok()).map(|f| f.path));
                    rows.line.append_option(c.line);
                    rows.module
                        .append_option(c.module.and_then(|m| meta.module(m).ok()).map(|m| m.path));
                    rows.module_offset.append_option(c.module_offset);
                }
            }
        })
    }

    fn metrics<'a>(&'a self, path: &Path, options: &ScanOptions) -> Result<Batches<'a>, Error> {
        let meta = self.db.meta();
        let err = |e| invalid(path, e);
        // Small (a few rows per metric): gathered, then batched.
        let mut all = Vec::new();
        for metric in meta.metrics() {
            let metric = metric.map_err(err)?;
            // What `Metric::unit` reads, borrowed from the file rather than from `metric`.
            let unit = metric
                .name
                .rsplit_once(" (")
                .and_then(|(_, rest)| rest.strip_suffix(')'));
            for instance in meta.scope_instances(&metric) {
                let instance = instance.map_err(err)?;
                let scope = meta.scope(instance.scope).map_err(err)?;
                all.push(MetricRow {
                    metric_id: instance.prop_metric_id,
                    summary: false,
                    metric: metric.index,
                    name: metric.name,
                    unit,
                    scope: scope.name,
                    scope_type: scope.kind.to_string(),
                    combine: None,
                    formula: None,
                });
            }
            for stat in meta.summaries(&metric) {
                let stat = stat.map_err(err)?;
                let scope = meta.scope(stat.scope).map_err(err)?;
                all.push(MetricRow {
                    metric_id: stat.stat_metric_id,
                    summary: true,
                    metric: metric.index,
                    name: metric.name,
                    unit,
                    scope: scope.name,
                    scope_type: scope.kind.to_string(),
                    combine: Some(stat.combine.to_string()),
                    formula: Some(stat.formula),
                });
            }
        }
        Ok(batches(
            MetricRows::new(),
            all.into_iter().map(Ok),
            options,
            |rows, m: MetricRow<'a>| {
                rows.metric_id.append_value(m.metric_id);
                rows.summary.append_value(m.summary);
                rows.metric.append_value(m.metric);
                rows.name.append_value(m.name);
                rows.unit.append_option(m.unit);
                rows.scope.append_value(m.scope);
                rows.scope_type.append_value(m.scope_type);
                rows.combine.append_option(m.combine);
                rows.formula.append_option(m.formula);
            },
        ))
    }

    fn profiles<'a>(&'a self, path: &'a Path, options: &ScanOptions) -> Batches<'a> {
        let Some(pdb) = self.db.profile() else {
            return Box::new(std::iter::empty());
        };
        let meta = self.db.meta();
        let items = (0..pdb.profile_count())
            .map(move |i| pdb.profile(i).map_err(|e| invalid(path, e)))
            .map(move |p| {
                let p = p?;
                let ids = p
                    .id_tuple
                    .map(|t| spell_ids(&meta, t))
                    .transpose()
                    .map_err(|e| invalid(path, e))?;
                Ok((p.index, p.is_summary(), ids))
            });
        batches(
            ProfileRows::new(),
            items,
            options,
            |rows, (index, summary, ids): (u32, bool, Option<SpelledIds>)| {
                rows.profile.append_value(index);
                rows.summary.append_value(summary);
                let ids = ids.unwrap_or_default();
                rows.node.append_option(ids.node);
                rows.rank.append_option(ids.rank);
                rows.thread.append_option(ids.thread);
                rows.core.append_option(ids.core);
                rows.gpu_device.append_option(ids.gpu_device);
                rows.gpu_context.append_option(ids.gpu_context);
                rows.gpu_stream.append_option(ids.gpu_stream);
                rows.id_tuple.append_option(ids.text);
            },
        )
    }

    fn values<'a>(&'a self, path: &'a Path, options: &ScanOptions) -> Batches<'a> {
        let Some(pdb) = self.db.profile() else {
            return Box::new(std::iter::empty());
        };
        block_batches(options, pdb.profile_count(), move |i| {
            // Each profile's block is checked (sorted ids, runs inside the block) just before
            // its values are read, so the values are read in one pass over profile.db.
            let p = pdb.profile(i).map_err(|e| invalid(path, e))?;
            pdb.validate_profile(&p).map_err(|e| invalid(path, e))?;
            Ok(ProfileRun::new(&p))
        })
    }

    fn traces<'a>(&'a self, path: &'a Path, options: &ScanOptions) -> Batches<'a> {
        let Some(tdb) = self.db.trace() else {
            return Box::new(std::iter::empty());
        };
        block_batches(options, tdb.trace_count(), move |i| {
            let t = tdb.trace(i).map_err(|e| invalid(path, e))?;
            tdb.validate_trace(&t).map_err(|e| invalid(path, e))?;
            Ok(TraceRun {
                profile: t.prof_index,
                elems: t.elems,
            })
        })
    }
}

/// A block of fixed-size records in a mapped file (a profile's values, a trace line's samples)
/// being turned into rows.
trait Block {
    /// The columns of a batch of the table the rows go to.
    type Columns: Columns;
    /// Whether every row is taken.
    fn is_done(&self) -> bool;
    /// Appends up to `room` of the next rows to `columns`.
    fn take(&mut self, columns: &mut Self::Columns, room: usize);
}

/// The batches of the rows of `count` blocks, opened one after the other (block `i` by
/// `open(i)`) when the one before is taken: a batch gathers the records of as many blocks as it
/// takes, copied a run at a time.
fn block_batches<'a, B: Block + 'a>(
    options: &ScanOptions,
    count: u32,
    mut open: impl FnMut(u32) -> Result<B, Error> + 'a,
) -> Batches<'a> {
    let mut next = 0;
    let mut current: Option<B> = None;
    filled_batches(options, move |limit| {
        let mut columns = B::Columns::with_capacity(limit);
        while columns.len() < limit {
            match &mut current {
                Some(block) if !block.is_done() => {
                    let room = limit - columns.len();
                    block.take(&mut columns, room);
                }
                _ if next == count => break,
                _ => {
                    current = Some(open(next)?);
                    next += 1;
                }
            }
        }
        if columns.is_empty() {
            return Ok(None);
        }
        record_batch(
            B::Columns::TABLE,
            B::Columns::schema(),
            columns.into_arrays(),
        )
        .map(Some)
    })
}

/// A profile's values being read: its sparse block in profile.db and how far it is taken.
struct ProfileRun<'a> {
    index: u32,
    summary: bool,
    ctxs: &'a [CtxIndex],
    values: &'a [Value],
    /// The next value to take.
    pos: usize,
    /// The context whose run holds `pos` (or an empty run before it).
    ctx: usize,
}

impl<'a> ProfileRun<'a> {
    fn new(p: &Profile<'a>) -> Self {
        // Validated: start indices ascend and stay within the values, so a profile's rows are
        // the values from the first context's start on, in one piece.
        let first = p
            .ctx_indices
            .first()
            .map_or(p.values.len(), |c| c.start_index() as usize);
        ProfileRun {
            index: p.index,
            summary: p.is_summary(),
            ctxs: p.ctx_indices,
            values: p.values,
            pos: first.min(p.values.len()),
            ctx: 0,
        }
    }
}

impl Block for ProfileRun<'_> {
    type Columns = ValueColumns;

    fn is_done(&self) -> bool {
        self.pos >= self.values.len()
    }

    /// The values' ids and numbers are copied out of the block in one go, each context id
    /// repeated over its run.
    fn take(&mut self, columns: &mut ValueColumns, room: usize) {
        let end = self.values.len().min(self.pos + room);
        let chunk = &self.values[self.pos..end];
        let n = chunk.len();
        columns
            .profile
            .0
            .resize(columns.profile.0.len() + n, self.index);
        columns.summary.append_n(n, self.summary);
        columns
            .metric_id
            .0
            .extend(chunk.iter().map(Value::metric_id));
        columns.value.0.extend(chunk.iter().map(Value::value));
        while self.pos < end {
            let Some(ctx) = self.ctxs.get(self.ctx) else {
                // Unreachable once validated (the last run ends at the last value); the rows
                // keep their length all the same.
                columns
                    .ctx_id
                    .0
                    .resize(columns.ctx_id.0.len() + (end - self.pos), 0);
                self.pos = end;
                break;
            };
            let run_end = self
                .ctxs
                .get(self.ctx + 1)
                .map_or(self.values.len(), |c| c.start_index() as usize);
            let upto = run_end.min(end);
            if upto > self.pos {
                columns
                    .ctx_id
                    .0
                    .resize(columns.ctx_id.0.len() + (upto - self.pos), ctx.ctx_id());
                self.pos = upto;
            }
            if run_end <= self.pos {
                self.ctx += 1;
            }
        }
    }
}

columns! {
    /// The columns of a `values` batch being filled.
    ValueColumns for Values {
        profile: Column<UInt32Type>,
        summary: BooleanBufferBuilder,
        ctx_id: Column<UInt32Type>,
        metric_id: Column<UInt16Type>,
        value: Column<Float64Type>,
    }
}

/// A trace line's samples being read, from trace.db.
struct TraceRun<'a> {
    profile: u32,
    /// The samples not taken yet.
    elems: &'a [TraceElem],
}

impl Block for TraceRun<'_> {
    type Columns = TraceColumns;

    fn is_done(&self) -> bool {
        self.elems.is_empty()
    }

    fn take(&mut self, columns: &mut TraceColumns, room: usize) {
        let (chunk, rest) = self.elems.split_at(room.min(self.elems.len()));
        self.elems = rest;
        columns
            .profile
            .0
            .resize(columns.profile.0.len() + chunk.len(), self.profile);
        columns
            .timestamp
            .0
            .extend(chunk.iter().map(TraceElem::timestamp));
        columns.ctx_id.0.extend(chunk.iter().map(TraceElem::ctx_id));
    }
}

columns! {
    /// The columns of a `traces` batch being filled.
    TraceColumns for Traces {
        profile: Column<UInt32Type>,
        timestamp: Column<UInt64Type>,
        ctx_id: Column<UInt32Type>,
    }
}

/// A row of the `contexts` table after the global context's.
enum ContextRow<'a> {
    /// A node of meta.db's tree, its depth and its parent's ctxId.
    Node(ContextNode<'a>, u32, Option<u32>),
    /// An elided context: a ctxId with values that meta.db leaves out.
    Elided(u32),
}

/// The row of an elided context: its ctxId and kind; meta.db says nothing more of it.
fn append_elided(rows: &mut ContextRows, ctx_id: u32) {
    append_outside_the_tree(rows, ctx_id, None, "elided");
}

/// The row of the global context (ctxId 0).
fn append_global(rows: &mut ContextRows) {
    append_outside_the_tree(rows, 0, Some(0), "global");
}

/// The row of a context that meta.db's tree does not describe: only its ctxId, its depth
/// where known, and its kind.
fn append_outside_the_tree(rows: &mut ContextRows, ctx_id: u32, depth: Option<u32>, kind: &str) {
    rows.ctx_id.append_value(ctx_id);
    rows.parent.append_null();
    rows.depth.append_option(depth);
    rows.kind.append_value(kind);
    rows.relation.append_null();
    rows.lexical_type.append_null();
    rows.entry_point.append_null();
    rows.function.append_null();
    rows.file.append_null();
    rows.line.append_null();
    rows.module.append_null();
    rows.module_offset.append_null();
}

fn invalid(path: &Path, e: crate::Error) -> Error {
    Error::invalid(path, NAME, e.offset(), e)
}

struct MetricRow<'a> {
    metric_id: u16,
    summary: bool,
    metric: u32,
    name: &'a str,
    unit: Option<&'a str>,
    scope: &'a str,
    scope_type: String,
    combine: Option<String>,
    formula: Option<&'a str>,
}

/// An identifier tuple's ids by kind, and its text.
#[derive(Default)]
struct SpelledIds {
    node: Option<u32>,
    rank: Option<u32>,
    thread: Option<u32>,
    core: Option<u32>,
    gpu_device: Option<u32>,
    gpu_context: Option<u32>,
    gpu_stream: Option<u32>,
    text: Option<String>,
}

/// The ids of `tuple` by the kind names of meta.db (hpcprof's `NODE`, `RANK`, `THREAD`,
/// `GPUDEVICE`, `GPUCONTEXT`, `GPUSTREAM`, `CORE`); a kind without a column still shows in the
/// text.
fn spell_ids(meta: &MetaDb<'_>, tuple: IdTuple<'_>) -> Result<SpelledIds, crate::Error> {
    let mut out = SpelledIds::default();
    let mut named = Vec::with_capacity(tuple.ids.len());
    for id in tuple.ids {
        let logical = id.logical_id.get();
        let name = meta.id_name(id.kind)?;
        named.push((name, id.kind, logical));
        let slot = match name.map(str::to_ascii_uppercase).as_deref() {
            Some("NODE") => &mut out.node,
            Some("RANK") => &mut out.rank,
            Some("THREAD") => &mut out.thread,
            Some("CORE") => &mut out.core,
            Some("GPUDEVICE") => &mut out.gpu_device,
            Some("GPUCONTEXT") => &mut out.gpu_context,
            Some("GPUSTREAM") => &mut out.gpu_stream,
            _ => continue,
        };
        *slot = Some(logical);
    }
    out.text = Some(id_tuple_text(named));
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use profcodec_common::source::ReadWhole;

    use super::*;

    #[test]
    fn a_database_folder_has_every_table_and_one_file_none() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d");
        let source = Source {
            path: &dir,
            bytes: &[],
            members: &ReadWhole,
        };
        let tables = TableReader::open(&source).unwrap();
        let options = ScanOptions::new().batch_rows(7);
        for def in SET.tables() {
            let mut rows = 0;
            for batch in tables.batches(source, def.name, &options).unwrap() {
                let batch = batch.unwrap();
                assert!((1..=7).contains(&batch.num_rows()), "{}", def.name);
                assert_eq!(batch.schema(), def.schema(), "{}", def.name);
                rows += batch.num_rows();
            }
            assert!(rows > 0, "{}", def.name);
        }
        let meta = dir.join("meta.db");
        let bytes = std::fs::read(&meta).unwrap();
        let err = TableReader::open(&Source::file(&meta, &bytes)).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "one file of an HPCToolkit database: its tables are read from the database \
                 folder (give the folder that holds meta.db)"
            ),
            "{err}"
        );
    }
}
