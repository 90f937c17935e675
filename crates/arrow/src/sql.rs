//! SQL over the tables of any inputs (feature `sql`), in an embedded DataFusion session.
//!
//! [`Session::new`] registers, for every table of every set its inputs have, one streaming
//! table with one partition per input: `<set>.<table>` (`SELECT * FROM nytprof.lines`), and the
//! bare `<table>` as well where no other set of the inputs has a table of that name. Every table
//! gets an `input` column (the input's position, from 0) after its own, as in the Parquet
//! export; `inputs` lists the inputs. A table is read from its input only when a query scans
//! it, in a blocking task that runs a few batches ahead of the query (and stops when the query
//! has what it needs, after a `LIMIT`), so memory stays bounded whatever the inputs' sizes.
//!
//! `values` is an SQL keyword: name the tables of that name with their set
//! (`hpctoolkit.values`) or in double quotes.
//!
//! [`Session::query`] only reads: a statement that would write a file (`COPY ... TO`), register
//! one (`CREATE EXTERNAL TABLE`), change a table (`INSERT`) or the session (`SET`) is refused
//! before it runs, so a query handed over by someone else cannot write where its user can.
//! Its operators share a memory pool of [`Limits::memory`] (1 GiB by default): a sort or an
//! aggregation over it spills to the system's temporary folder where DataFusion can, up to
//! [`Limits::spill`] (2 GiB by default; beyond, [`Error::SpillLimit`]), and otherwise the query
//! fails with [`Error::MemoryLimit`] instead of the process being killed. [`Limits::timeout`]
//! (10 minutes by default) cancels a query still running then ([`Error::Timeout`]): a recursive
//! query that never ends, or a join of billions of rows, ends with an error.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

use arrow_array::{ArrayRef, RecordBatch, UInt32Array};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use datafusion::catalog::streaming::StreamingTable;
use datafusion::catalog::{MemorySchemaProvider, SchemaProvider};
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::DataFusionError;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::stream::RecordBatchReceiverStream;
use datafusion::physical_plan::streaming::PartitionStream;
use datafusion::prelude::{DataFrame, SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use futures::future::Either;

use crate::{Error, InputTables, ScanOptions, TableDef, TableSet, Tables};

/// The DataFusion this module is built on (its `arrow` re-export writes results as CSV, JSON or
/// a table).
pub use datafusion;

/// A set as the session orders it: its place among the sets it was given, then its name.
type SetKey = (usize, &'static str);

/// The partitions of a table: one per input that has it.
type Partitions = Vec<Arc<dyn PartitionStream>>;

/// Batches a scan runs ahead of the query.
const AHEAD: usize = 2;

/// The memory a session's queries may hold by default: 1 GiB, enough for the joins and
/// aggregations of large profiles' tables, and little enough that a runaway query fails with an
/// error on a laptop instead of being killed.
pub const DEFAULT_MEMORY_LIMIT: usize = 1 << 30;

/// How long a query may run by default: 10 minutes, far more than a query over the tables of
/// large profiles takes, and an end to one that would never end (a recursive query without a
/// stop).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The bytes a query may spill to the temporary folder by default: 2 GiB, twice the default
/// memory, so that a large sort still finishes, while one runaway query cannot fill the disk
/// (or, where the temporary folder is in memory, the memory).
pub const DEFAULT_SPILL_LIMIT: u64 = 2 << 30;

/// What a session's queries may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// The bytes the operators of a query may hold at once (hash tables, sorts, aggregation
    /// states); `None`: no limit. Batches in flight between operators are not counted.
    pub memory: Option<usize>,
    /// How long a query may run, from its planning to its last row; `None`: no limit.
    pub timeout: Option<Duration>,
    /// The bytes the session's sorts and aggregations may spill to the system's temporary
    /// folder at once, over the memory limit; `None`: no limit of profcodec's own.
    pub spill: Option<u64>,
}

impl Limits {
    /// The default: [`DEFAULT_MEMORY_LIMIT`], [`DEFAULT_TIMEOUT`] and [`DEFAULT_SPILL_LIMIT`].
    pub fn new() -> Self {
        Limits {
            memory: Some(DEFAULT_MEMORY_LIMIT),
            timeout: Some(DEFAULT_TIMEOUT),
            spill: Some(DEFAULT_SPILL_LIMIT),
        }
    }

    /// These limits with at most `bytes` spilled to the temporary folder (`None`: no limit).
    pub fn spill(mut self, bytes: Option<u64>) -> Self {
        self.spill = bytes;
        self
    }

    /// These limits with `bytes` of memory (`None`: no limit).
    pub fn memory(mut self, bytes: Option<usize>) -> Self {
        self.memory = bytes;
        self
    }

    /// These limits with a query cancelled after `timeout` (`None`: never).
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new()
    }
}

/// A DataFusion session with the tables of its inputs registered, and the runtime it runs on.
///
/// Dropping it does not wait for the work of a cancelled query (a timeout, or rows dropped
/// before their end): an operator in the middle of a computation stops when it next yields to
/// the runtime. A few never do while they have output to make (a nested-loop join of two large
/// inputs under an aggregate): such an operator keeps a thread busy until it ends or the
/// process does, so a long-lived program should not let a query of that kind run unbounded.
pub struct Session {
    /// Taken when the session is dropped, to be shut down without waiting.
    runtime: Option<tokio::runtime::Runtime>,
    /// The runtime's handle, through which everything runs.
    handle: tokio::runtime::Handle,
    context: SessionContext,
    limits: Limits,
    /// Every table a query can name, qualified (`nytprof.lines`), and `inputs`: what an error
    /// about an unknown table lists.
    known: Vec<String>,
    /// The table names several sets have, each with its qualified names: a query naming one
    /// bare is told which to write.
    ambiguous: BTreeMap<&'static str, Vec<String>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

impl Session {
    /// A session over `inputs` (numbered from 0 in order), reading them with `options`, with
    /// the default [`Limits`]. `sets` are the sets the inputs may have, in the order the session
    /// lists them (`profcodec::tables::SETS`): a query naming a table no input has fails with
    /// the inputs' tables, set by set in this order (a set not in it after those, by name).
    pub fn new(
        inputs: &[InputTables],
        sets: &[TableSet],
        options: &ScanOptions,
    ) -> Result<Session, Error> {
        Session::with_limits(inputs, sets, options, &Limits::new())
    }

    /// A session over `inputs` (numbered from 0 in order), reading them with `options`, whose
    /// queries may use what `limits` allow; `sets` as for [`Session::new`].
    pub fn with_limits(
        inputs: &[InputTables],
        sets: &[TableSet],
        options: &ScanOptions,
        limits: &Limits,
    ) -> Result<Session, Error> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io(std::path::Path::new("the query runtime"), e))?;
        let config = SessionConfig::new()
            .with_batch_size(options.batch_rows)
            .with_information_schema(true);
        let mut env = RuntimeEnvBuilder::new();
        if let Some(bytes) = limits.memory {
            // A greedy pool (first come, first served) that names its largest consumers when
            // it refuses one.
            env = env.with_memory_limit(bytes, 1.0);
        }
        env = env.with_max_temp_directory_size(limits.spill.unwrap_or(u64::MAX));
        let context = SessionContext::new_with_config_rt(config, env.build_arc()?);
        // A set by its place in `sets`, then its name.
        let key = |set: TableSet| {
            let rank = sets.iter().position(|s| *s == set).unwrap_or(sets.len());
            (rank, set.name())
        };
        // (set, table) -> the set, and one partition per input that has the table.
        let mut tables: BTreeMap<(SetKey, &'static str), (TableSet, Partitions)> = BTreeMap::new();
        for (k, input) in inputs.iter().enumerate() {
            for tables_of in input.sets() {
                let set = tables_of.set();
                for def in set.tables() {
                    tables
                        .entry((key(set), def.name))
                        .or_insert_with(|| (set, Vec::new()))
                        .1
                        .push(Arc::new(Scan::new(
                            Arc::clone(tables_of),
                            def,
                            k as u32,
                            *options,
                        )));
                }
            }
        }
        let catalog = context
            .catalog("datafusion")
            .ok_or_else(|| DataFusionError::Internal("no default catalog".to_owned()))?;
        let mut schemas: BTreeMap<SetKey, Arc<MemorySchemaProvider>> = BTreeMap::new();
        let mut bare: BTreeMap<&'static str, Vec<SetKey>> = BTreeMap::new();
        let mut known = vec!["inputs".to_owned()];
        for ((set_key, name), (set, partitions)) in tables {
            known.push(format!("{}.{name}", set.name()));
            let schema = with_input(&set.table(name)?.schema());
            let table = Arc::new(StreamingTable::try_new(schema, partitions)?);
            let provider = schemas
                .entry(set_key)
                .or_insert_with(|| Arc::new(MemorySchemaProvider::new()));
            provider.register_table(name.to_owned(), Arc::clone(&table) as _)?;
            bare.entry(name).or_default().push(set_key);
        }
        for ((_, set), provider) in &schemas {
            catalog.register_schema(set, Arc::clone(provider) as _)?;
        }
        let mut ambiguous = BTreeMap::new();
        for (name, sets) in bare {
            if let [set] = sets.as_slice() {
                let table = schemas[set].table(name);
                if let Some(table) = runtime.block_on(table)? {
                    context.register_table(name, table)?;
                }
            } else {
                let qualified = sets.iter().map(|(_, set)| format!("{set}.{name}"));
                ambiguous.insert(name, qualified.collect());
            }
        }
        context.register_batch("inputs", crate::inputs::batch(inputs)?)?;
        Ok(Session {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
            context,
            limits: *limits,
            known,
            ambiguous,
        })
    }

    /// The DataFusion session, for anything beyond [`Session::query`]: it is not read-only, and
    /// its runtime has the session's memory pool but no timeout.
    pub fn context(&self) -> &SessionContext {
        &self.context
    }

    /// The session's limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Runs `sql`, a query that only reads, and returns its rows as a stream of batches, read
    /// as they are consumed. Fails with [`Error::ReadOnly`] for a statement that would write
    /// or change anything (nothing of it runs), [`Error::NoSuchTable`] for a table no input
    /// has, [`Error::Timeout`] when planning outlasts the timeout and [`Error::MemoryLimit`];
    /// the rows can fail with the last two as well.
    pub fn query(&self, sql: &str) -> Result<QueryRows<'_>, Error> {
        let deadline = self.limits.timeout.map(Deadline::start).transpose()?;
        let stream = self.within(deadline.as_ref(), async {
            let state = self.context.state();
            let dialect = state.config().options().sql_parser.dialect;
            let statement = state.sql_to_statement(sql, &dialect)?;
            if let Some(what) = writes(&statement) {
                return Err(Error::ReadOnly { what });
            }
            let references = state.resolve_table_references(&statement)?;
            let plan = match state.statement_to_plan(statement).await {
                Ok(plan) => plan,
                Err(e) => {
                    return Err(self
                        .unknown_table(&state, references)
                        .unwrap_or_else(|| e.into()));
                }
            };
            // What a statement hides inside a query (`SELECT ... INTO t`): planning writes
            // nothing (a COPY or CREATE runs when its plan is executed), so the check on the
            // plan refuses it before any of it happened.
            let read_only = SQLOptions::new()
                .with_allow_ddl(false)
                .with_allow_dml(false)
                .with_allow_statements(false);
            if let Err(e) = read_only.verify_plan(&plan) {
                return Err(Error::ReadOnly { what: refused(&e) });
            }
            let frame = if recursive(&plan)? {
                DataFrame::new(without_projection_pruning(state), plan)
            } else {
                self.context.execute_logical_plan(plan).await?
            };
            let mut rows = frame.execute_stream().await?;
            // Pulled by a task of the runtime's own, so that the thread waiting for the rows
            // sees the timeout even when a plan computes them without ever yielding; dropping
            // the stream aborts the task.
            let mut builder = RecordBatchReceiverStream::builder(rows.schema(), 1);
            let tx = builder.tx();
            builder.spawn(async move {
                while let Some(batch) = rows.next().await {
                    if tx.send(batch).await.is_err() {
                        break;
                    }
                }
                Ok(())
            });
            Ok(builder.build())
        })?;
        Ok(QueryRows {
            session: self,
            deadline,
            schema: stream.schema(),
            stream: Some(stream),
        })
    }

    /// Runs `work` on the session's runtime, cancelled (dropped) at `deadline`; memory
    /// exhaustion becomes [`Error::MemoryLimit`], spills past their limit [`Error::SpillLimit`].
    fn within<T>(
        &self,
        deadline: Option<&Deadline>,
        work: impl std::future::Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let result = self.handle.block_on(async {
            let Some(deadline) = deadline else {
                return work.await;
            };
            let mut expired = deadline.expired.clone();
            let expired = async move {
                // An error: the watchdog is gone, which it never is while `deadline` lives.
                let _ = expired.wait_for(|expired| *expired).await;
            };
            let (work, expired) = (std::pin::pin!(work), std::pin::pin!(expired));
            // The deadline first: a query whose rows are always ready still ends at it.
            match futures::future::select(expired, work).await {
                Either::Left(((), _)) => Err(Error::Timeout {
                    after: deadline.after,
                }),
                Either::Right((result, _)) => result,
            }
        });
        result.map_err(|e| match e {
            Error::Sql(source) => match source.find_root() {
                // DataFusion tells the two apart only in words: the disk manager's refusal
                // speaks of disk space, the memory pool's of memory.
                DataFusionError::ResourcesExhausted(why) if why.contains("disk space") => {
                    Error::SpillLimit {
                        limit: self.limits.spill.unwrap_or(u64::MAX),
                        source,
                    }
                }
                DataFusionError::ResourcesExhausted(_) => match self.limits.memory {
                    Some(limit) => Error::MemoryLimit { limit, source },
                    None => Error::Sql(source),
                },
                _ => Error::Sql(source),
            },
            other => other,
        })
    }

    /// [`Error::NoSuchTable`] for the first of a failed query's `references` that is neither a
    /// table of the session nor a table function (`generate_series`), if any;
    /// [`Error::AmbiguousTable`] when it is a bare name several sets have.
    fn unknown_table(
        &self,
        state: &datafusion::execution::SessionState,
        references: Vec<datafusion::common::TableReference>,
    ) -> Option<Error> {
        let missing = references.into_iter().find(|r| {
            let function = r.schema().is_none() && state.table_functions().contains_key(r.table());
            !function && !self.context.table_exist(r.clone()).unwrap_or(false)
        })?;
        if missing.schema().is_none()
            && let Some(qualified) = self.ambiguous.get(missing.table())
        {
            return Some(Error::AmbiguousTable {
                table: missing.to_string(),
                qualified: qualified.join(", "),
            });
        }
        Some(Error::NoSuchTable {
            table: missing.to_string(),
            known: self.known.join(", "),
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // A cancelled query's operator may compute on for a while before it yields: not
            // waiting for it is what makes a timeout end the call that ran into it.
            runtime.shutdown_background();
        }
    }
}

/// The timeout of one query: a watchdog thread that marks it expired at the deadline, and ends
/// early when the query is dropped.
struct Deadline {
    after: Duration,
    expired: tokio::sync::watch::Receiver<bool>,
    /// Dropped with the query, which wakes the watchdog to end.
    _alive: std::sync::mpsc::Sender<()>,
}

impl Deadline {
    /// A deadline `after` from now. A thread, not a timer of the runtime: a timer fires only
    /// when a worker of the runtime is free to look, and a long join keeps them all busy.
    fn start(after: Duration) -> Result<Deadline, Error> {
        let (alive, ended) = std::sync::mpsc::channel::<()>();
        let (expire, expired) = tokio::sync::watch::channel(false);
        std::thread::Builder::new()
            .name("profcodec-sql-timeout".to_owned())
            .spawn(move || {
                if let Err(RecvTimeoutError::Timeout) = ended.recv_timeout(after) {
                    let _ = expire.send(true);
                }
            })
            .map_err(|e| Error::io(std::path::Path::new("the query's timeout"), e))?;
        Ok(Deadline {
            after,
            expired,
            _alive: alive,
        })
    }
}

/// Whether `plan` has a recursive query (`WITH RECURSIVE`), in its subqueries too.
fn recursive(plan: &LogicalPlan) -> Result<bool, DataFusionError> {
    let mut found = false;
    plan.apply_with_subqueries(|node| {
        found = matches!(node, LogicalPlan::RecursiveQuery(_));
        Ok(if found {
            TreeNodeRecursion::Stop
        } else {
            TreeNodeRecursion::Continue
        })
    })?;
    Ok(found)
}

/// `state` without DataFusion's projection pruning (`optimize_projections`), for the plans of
/// recursive queries: it empties the recursive term of a query whose reader needs none of its
/// columns (`SELECT count(*) FROM r`), whose work table then has no column the term reads, and
/// the query fails with `project index 0 out of bounds`. Unpruned, such a query reads its few
/// columns and counts right.
fn without_projection_pruning(state: SessionState) -> SessionState {
    let rules = state
        .optimizer()
        .rules
        .iter()
        .filter(|rule| rule.name() != "optimize_projections")
        .cloned()
        .collect();
    SessionStateBuilder::new_from_existing(state)
        .with_optimizer_rules(rules)
        .build()
}

/// What `statement` would write or change, if anything, in the words that begin it (`COPY`,
/// `INSERT INTO`, `DROP TABLE`): a query, `EXPLAIN` of one, `SHOW` and `DESCRIBE` only read.
/// Checked before planning, so that an ill-formed `INSERT` is refused as an `INSERT`.
fn writes(statement: &datafusion::sql::parser::Statement) -> Option<String> {
    use datafusion::sql::parser::Statement as Df;
    use datafusion::sql::sqlparser::ast::Statement as Sql;
    fn sql_writes(statement: &Sql) -> Option<String> {
        match statement {
            Sql::Query(_)
            | Sql::ExplainTable { .. }
            | Sql::ShowTables { .. }
            | Sql::ShowColumns { .. }
            | Sql::ShowVariable { .. }
            | Sql::ShowVariables { .. }
            | Sql::ShowFunctions { .. }
            | Sql::ShowSchemas { .. }
            | Sql::ShowViews { .. }
            | Sql::ShowCreate { .. } => None,
            Sql::Explain { statement, .. } => sql_writes(statement),
            other => {
                let text = other.to_string();
                let words: Vec<&str> = text
                    .split_whitespace()
                    .take(2)
                    .take_while(|w| w.bytes().all(|b| b.is_ascii_uppercase()))
                    .collect();
                Some(if words.is_empty() {
                    text
                } else {
                    words.join(" ")
                })
            }
        }
    }
    match statement {
        Df::Statement(s) => sql_writes(s),
        Df::Explain(e) => writes(&e.statement),
        Df::CreateExternalTable(_) => Some("CREATE EXTERNAL TABLE".to_owned()),
        Df::CopyTo(_) => Some("COPY".to_owned()),
        Df::Reset(_) => Some("RESET".to_owned()),
    }
}

/// What a read-only session refused, from DataFusion's `... not supported: <what>`.
fn refused(e: &DataFusionError) -> String {
    let text = match e.find_root() {
        DataFusionError::Plan(text) => text.clone(),
        other => other.to_string(),
    };
    match text.split_once("not supported: ") {
        Some((_, what)) => what.to_owned(),
        None => text,
    }
}

/// The message of a DataFusion error in words: the innermost error's own message, without
/// the kind DataFusion prefixes it with (`Error during planning: `, `Schema error: `) or the
/// steps that led to it (`Optimizer rule ... failed`), on one line (DataFusion puts hints such
/// as `Did you mean 'cosh'?` on lines of their own), and without the internal catalog's name,
/// which DataFusion puts before the tables it names (`datafusion.public.lines`) and no query
/// needs.
pub(crate) fn message(e: &DataFusionError) -> String {
    use datafusion::sql::sqlparser::parser::ParserError;
    let text = match e.find_root() {
        DataFusionError::SQL(parse, _) => match parse.as_ref() {
            ParserError::ParserError(m) | ParserError::TokenizerError(m) => {
                format!("the query does not parse: {m}")
            }
            other => other.to_string(),
        },
        root => root.message().into_owned(),
    };
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .join(" ")
        .replace("datafusion.public.", "")
        .replace("datafusion.", "")
}

/// `bytes` in binary units, as a person reads them: `1 GiB`, `1.5 MiB`, `100 bytes`.
pub(crate) fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    let mut unit = None;
    let mut value = bytes as f64;
    for u in UNITS {
        if value < 1024.0 {
            break;
        }
        value /= 1024.0;
        unit = Some(u);
    }
    match unit {
        None => format!("{bytes} bytes"),
        Some(u) if value.fract() == 0.0 => format!("{value} {u}"),
        Some(u) => format!("{value:.1} {u}"),
    }
}

/// `duration` in seconds, as a person reads them: `1 s`, `0.25 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// The rows of a query, as record batches. After an error, the query is cancelled and the
/// iterator ends.
pub struct QueryRows<'s> {
    session: &'s Session,
    deadline: Option<Deadline>,
    schema: SchemaRef,
    /// `None` once the query ended, failed or was cancelled.
    stream: Option<SendableRecordBatchStream>,
}

impl std::fmt::Debug for QueryRows<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueryRows")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

impl QueryRows<'_> {
    /// The result's schema.
    pub fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

impl Iterator for QueryRows<'_> {
    type Item = Result<RecordBatch, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        let stream = self.stream.as_mut()?;
        let next = self.session.within(self.deadline.as_ref(), async {
            stream.next().await.transpose().map_err(Error::from)
        });
        match next {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => {
                self.stream = None;
                None
            }
            Err(e) => {
                // Dropping the stream cancels the query's tasks.
                self.stream = None;
                Some(Err(e))
            }
        }
    }
}

/// `schema` with the `input` column after its own.
fn with_input(schema: &SchemaRef) -> SchemaRef {
    let mut fields: Vec<Arc<Field>> = schema.fields().iter().cloned().collect();
    fields.push(Arc::new(
        Field::new("input", DataType::UInt32, false).with_metadata(profcodec_tables::description(
            "The input's position, from 0 (`inputs.input`).",
        )),
    ));
    Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// One input's partition of a table: read in a blocking task when the query scans it.
struct Scan {
    tables: Arc<dyn Tables>,
    name: &'static str,
    schema: SchemaRef,
    input: u32,
    options: ScanOptions,
}

impl std::fmt::Debug for Scan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scan")
            .field("set", &self.tables.set().name())
            .field("table", &self.name)
            .field("input", &self.input)
            .finish()
    }
}

impl Scan {
    fn new(tables: Arc<dyn Tables>, def: &TableDef, input: u32, options: ScanOptions) -> Self {
        Scan {
            tables,
            name: def.name,
            schema: with_input(&def.schema()),
            input,
            options,
        }
    }
}

impl PartitionStream for Scan {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let mut builder = RecordBatchReceiverStream::builder(Arc::clone(&self.schema), AHEAD);
        let tx = builder.tx();
        let tables = Arc::clone(&self.tables);
        let (name, schema, input, options) = (
            self.name,
            Arc::clone(&self.schema),
            self.input,
            self.options,
        );
        builder.spawn_blocking(move || {
            // Boxed as this crate's error, which callers look for in DataFusion's.
            let external =
                |e: profcodec_tables::Error| DataFusionError::External(Box::new(Error::from(e)));
            for batch in tables.batches(name, &options).map_err(external)? {
                let batch = batch.map_err(external)?;
                let rows = batch.num_rows();
                let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
                columns.push(Arc::new(UInt32Array::from(vec![input; rows])));
                let batch = RecordBatch::try_new(Arc::clone(&schema), columns)?;
                // The query stopped reading (a LIMIT reached, an error elsewhere): stop too.
                if tx.blocking_send(Ok(batch)).is_err() {
                    break;
                }
            }
            Ok(())
        });
        builder.build()
    }
}
