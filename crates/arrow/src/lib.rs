//! Profiles as tables: every format profcodec reads, and its format-neutral profile model, as
//! Arrow record batches with documented, stable schemas; Parquet export (feature `parquet`) and
//! SQL through an embedded DataFusion session (feature `sql`).
//!
//! # Reading tables
//!
//! [`Input::open`] opens any input profcodec opens (a file, an HPCToolkit database folder, an
//! hpcrun measurement folder, a StatProfiler session) and knows its [`TableSet`];
//! [`Tables::batches`] streams one table as record batches of at most
//! [`ScanOptions::batch_rows`] rows. Batches are made as they are consumed, from the format
//! crates' views over the memory-mapped files: no table is ever held whole. What each reader
//! keeps besides the batch in progress:
//!
//! - HPCToolkit: the context index (24 bytes a context); values and traces are read from the
//!   mapped profile.db and trace.db a profile at a time.
//! - hpcrun: one thread's file decoded at a time.
//! - NYTProf: the aggregated model `Devel::NYTProf::Data` builds (per file, line and sub, never
//!   per record), made once per input.
//! - EasyProfiler: the block tree the C++ reader builds (24 bytes a block), for parents and
//!   depths.
//! - StatProfiler: the reader's window and the open sample.
//! - profile: the [`profcodec_profile::Profile`] given to [`ProfileTables`].
//!
//! # The tables
//!
//! Tables are grouped in sets, one per format plus `profile`; a table is named `set.table`
//! (`hpctoolkit.values`, `nytprof.lines`). Each table's columns, types and meanings are listed on
//! its type below (and carried by each Arrow field as its `description` metadata, which the
//! Parquet files keep). Integers keep the width and signedness the file stores (Spark reads
//! `UInt64` columns as `decimal(20,0)`); strings are UTF-8; times are in the unit the column
//! names. No column name needs quoting in SQL; the tables called `values` do, or their set's
//! name before them (`hpctoolkit.values`). Schemas are stable: a column keeps its name, type and
//! meaning, and new columns are only ever added after the existing ones.
//!
//! | set | tables |
//! |---|---|
//! | `hpctoolkit` | [`contexts`](hpctoolkit::Contexts), [`metrics`](hpctoolkit::Metrics), [`profiles`](hpctoolkit::Profiles), [`values`](hpctoolkit::Values), [`traces`](hpctoolkit::Traces) |
//! | `hpcrun` | [`profiles`](hpcrun::Profiles), [`metrics`](hpcrun::Metrics), [`nodes`](hpcrun::Nodes), [`values`](hpcrun::Values), [`trace`](hpcrun::Trace) |
//! | `nytprof` | [`files`](nytprof::Files), [`lines`](nytprof::Lines), [`subs`](nytprof::Subs), [`calls`](nytprof::Calls) |
//! | `easyprofiler` | [`threads`](easyprofiler::Threads), [`descriptors`](easyprofiler::Descriptors), [`blocks`](easyprofiler::Blocks), [`values`](easyprofiler::Values), [`context_switches`](easyprofiler::ContextSwitches), [`bookmarks`](easyprofiler::Bookmarks) |
//! | `statprofiler` | [`processes`](statprofiler::Processes), [`samples`](statprofiler::Samples), [`frames`](statprofiler::Frames) |
//! | `profile` | [`contexts`](profile::Contexts), [`value_types`](profile::ValueTypes), [`frames`](profile::Frames), [`nodes`](profile::Nodes), [`node_values`](profile::NodeValues), [`flat_values`](profile::FlatValues), [`call_edges`](profile::CallEdges), [`edge_values`](profile::EdgeValues), [`spans`](profile::Spans) |
//!
//! Several inputs are told apart by an `input` column (the input's position, from 0), which
//! the SQL session appends to every table and the Parquet export puts in the folder names
//! (`input=0`): the same column either way. [`inputs`] lists the inputs themselves.
//!
//! # Parquet (feature `parquet`)
//!
//! `parquet::export` writes every table of every input as
//! `OUT/<set>/<table>/input=<k>/part-<n>.parquet`, a Hive-partitioned dataset that DuckDB,
//! Spark, Trino and DataFusion read as one table per folder, with column statistics, row groups
//! of up to a million rows and zstd, Snappy or no compression, one table per core at once.
//!
//! # SQL (feature `sql`)
//!
//! `sql::Session` registers every table of its inputs in a DataFusion session, schema
//! `<set>` and table `<table>` (`SELECT * FROM nytprof.lines`), plus the bare table name where
//! only one set of the inputs has it; each table is a streaming source that reads the input
//! when a query scans it, a bounded number of batches ahead. Its queries only read (`COPY`,
//! `CREATE`, `INSERT` and `SET` are refused) and run within `sql::Limits`: a memory pool
//! (1 GiB by default) and an optional timeout.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::path::{Path, PathBuf};

pub mod easyprofiler;
mod error;
pub mod hpcrun;
pub mod hpctoolkit;
pub mod nytprof;
pub mod profile;
pub mod statprofiler;
mod table;

#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(feature = "sql")]
pub mod sql;

pub use error::Error;
pub use inputs::Inputs;
pub use profile::ProfileTables;
pub use table::{Batches, ScanOptions, TableDef};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// A set of tables: one per format, and one for the profile model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum TableSet {
    /// An HPCToolkit database.
    Hpctoolkit,
    /// hpcrun measurement files and traces.
    Hpcrun,
    /// A Devel::NYTProf profile.
    Nytprof,
    /// An EasyProfiler capture.
    EasyProfiler,
    /// A Devel::StatProfiler file or session.
    StatProfiler,
    /// The format-neutral profile model of any input.
    Profile,
}

impl TableSet {
    /// Every set, in order.
    pub const ALL: [TableSet; 6] = [
        TableSet::Hpctoolkit,
        TableSet::Hpcrun,
        TableSet::Nytprof,
        TableSet::EasyProfiler,
        TableSet::StatProfiler,
        TableSet::Profile,
    ];

    /// The set's name: the SQL schema and the export's top folder.
    pub fn name(self) -> &'static str {
        match self {
            TableSet::Hpctoolkit => "hpctoolkit",
            TableSet::Hpcrun => "hpcrun",
            TableSet::Nytprof => "nytprof",
            TableSet::EasyProfiler => "easyprofiler",
            TableSet::StatProfiler => "statprofiler",
            TableSet::Profile => "profile",
        }
    }

    /// The set's tables, in order.
    pub fn tables(self) -> &'static [TableDef] {
        match self {
            TableSet::Hpctoolkit => hpctoolkit::TABLES,
            TableSet::Hpcrun => hpcrun::TABLES,
            TableSet::Nytprof => nytprof::TABLES,
            TableSet::EasyProfiler => easyprofiler::TABLES,
            TableSet::StatProfiler => statprofiler::TABLES,
            TableSet::Profile => profile::TABLES,
        }
    }

    /// The table called `name`.
    pub fn table(self, name: &str) -> Result<&'static TableDef, Error> {
        self.tables()
            .iter()
            .find(|t| t.name == name)
            .ok_or_else(|| unknown_table(self.name(), self.tables(), name))
    }
}

impl std::fmt::Display for TableSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Anything that yields the tables of one set.
pub trait Tables: std::fmt::Debug + Send + Sync {
    /// The set.
    fn set(&self) -> TableSet;

    /// The record batches of table `name` of the set, read as they are consumed.
    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error>;

    /// Whether what was read is the input's: an error when one of its files shrank while it
    /// was read (a profiler rewriting it), so that the tables read zeros in place of what was
    /// cut. A caller checks it once it has read the batches, and reports this error in place
    /// of its result.
    fn check_intact(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// One input, opened, with its format's tables.
#[derive(Debug)]
pub struct Input {
    path: PathBuf,
    source: Source,
    root: Root,
}

#[derive(Debug)]
enum Source {
    // Boxed: a database's layouts and NYTProf's model are large beside the other sources.
    Hpctoolkit(Box<hpctoolkit::Source>),
    Hpcrun(hpcrun::Source),
    Nytprof(Box<nytprof::Source>),
    EasyProfiler(easyprofiler::Source),
    StatProfiler(statprofiler::Source),
}

impl Input {
    /// Opens `path` as [`profcodec::open`] does (a file, an HPCToolkit database folder, an hpcrun
    /// measurement folder, a StatProfiler session folder or template) and checks what its
    /// tables need (headers, the HPCToolkit context tree); table contents are read by
    /// [`Tables::batches`].
    pub fn open(path: impl AsRef<Path>) -> Result<Input, Error> {
        Input::open_with(path, profcodec::OpenOptions::new())
    }

    /// [`Input::open`] with `options`: which files are read into memory and which are mapped.
    pub fn open_with(
        path: impl AsRef<Path>,
        options: profcodec::OpenOptions,
    ) -> Result<Input, Error> {
        use profcodec::Format;
        let path = path.as_ref();
        let root = Root(std::sync::Arc::new(options.open(path)?));
        let opened = &root.0;
        let source = match opened.format() {
            Format::HpctoolkitDatabase => {
                Source::Hpctoolkit(Box::new(hpctoolkit::Source::open(path, &root)?))
            }
            Format::HpctoolkitMeta
            | Format::HpctoolkitProfile
            | Format::HpctoolkitCct
            | Format::HpctoolkitTrace => {
                return Err(Error::Unsupported {
                    path: path.to_path_buf(),
                    reason: "one file of an HPCToolkit database: its tables are read from the \
                             database folder (give the folder that holds meta.db)"
                        .to_owned(),
                });
            }
            Format::Hpcrun | Format::Hpctrace => Source::Hpcrun(hpcrun::Source::open(path, &root)?),
            Format::Nytprof => Source::Nytprof(Box::new(nytprof::Source::new(path, root.mapped()))),
            Format::EasyProfiler => {
                Source::EasyProfiler(easyprofiler::Source::open(path, root.mapped())?)
            }
            Format::StatProfiler => Source::StatProfiler(statprofiler::Source::open(path, &root)?),
            _ => {
                return Err(Error::Unsupported {
                    path: path.to_path_buf(),
                    reason: format!("{} has no tables in this build", opened.format()),
                });
            }
        };
        Ok(Input {
            path: path.to_path_buf(),
            source,
            root,
        })
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Tables for Input {
    fn set(&self) -> TableSet {
        match self.source {
            Source::Hpctoolkit(_) => TableSet::Hpctoolkit,
            Source::Hpcrun(_) => TableSet::Hpcrun,
            Source::Nytprof(_) => TableSet::Nytprof,
            Source::EasyProfiler(_) => TableSet::EasyProfiler,
            Source::StatProfiler(_) => TableSet::StatProfiler,
        }
    }

    fn check_intact(&self) -> Result<(), Error> {
        Ok(self.root.0.check_intact()?)
    }

    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error> {
        match &self.source {
            Source::Hpctoolkit(s) => s.batches(name, options),
            Source::Hpcrun(s) => s.batches(name, options),
            Source::Nytprof(s) => s.batches(name, options),
            Source::EasyProfiler(s) => s.batches(name, options),
            Source::StatProfiler(s) => s.batches(name, options),
        }
    }
}

/// The table sources of one input: its format's set, and any others (its `profile` set) that
/// share its `input` number in an export or a SQL session.
#[derive(Debug, Clone)]
pub struct InputTables {
    path: PathBuf,
    sets: Vec<std::sync::Arc<dyn Tables>>,
}

impl InputTables {
    /// The input at `path` with its format's tables ([`Input::open`]).
    pub fn open(path: impl AsRef<Path>) -> Result<InputTables, Error> {
        let input = Input::open(path)?;
        Ok(InputTables {
            path: input.path().to_path_buf(),
            sets: vec![std::sync::Arc::new(input)],
        })
    }

    /// These tables and those of `tables` (a [`ProfileTables`] of the same input); a set
    /// already present is replaced.
    pub fn with(mut self, tables: std::sync::Arc<dyn Tables>) -> InputTables {
        self.sets.retain(|s| s.set() != tables.set());
        self.sets.push(tables);
        self
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The input's format set (the first set it was opened with).
    pub fn format_set(&self) -> Option<TableSet> {
        self.sets.first().map(|s| s.set())
    }

    /// Every set of the input.
    pub fn sets(&self) -> &[std::sync::Arc<dyn Tables>] {
        &self.sets
    }

    /// [`Tables::check_intact`] of every set: an error when a file of the input shrank while
    /// its tables were read.
    pub fn check_intact(&self) -> Result<(), Error> {
        self.sets.iter().try_for_each(|set| set.check_intact())
    }
}

pub mod inputs {
    //! The `inputs` table: which input each `input` value of the other tables stands for.

    use super::table::table;

    table! {
        /// `inputs`: one row per input, in the order given.
        Inputs, InputRows, "inputs" {
            input: UInt32 => "The input's position, from 0: the `input` column of every other table.",
            path: Utf8 => "The path as given.",
            set: Utf8 => "The input's table set (`hpctoolkit`, `nytprof`...).",
        }
    }

    /// The `inputs` table of `inputs`, in order, as one record batch.
    pub fn batch(inputs: &[super::InputTables]) -> Result<arrow_array::RecordBatch, crate::Error> {
        use crate::table::Rows;
        let mut rows = InputRows::new();
        for (k, input) in inputs.iter().enumerate() {
            rows.input.append_value(k as u32);
            rows.path.append_value(input.path().to_string_lossy());
            rows.set
                .append_value(input.format_set().map_or("", super::TableSet::name));
        }
        rows.finish()
    }
}

/// A mapped file's bytes, for the views that borrow `AsRef<[u8]>`.
#[derive(Debug)]
pub(crate) struct Mapped(std::sync::Arc<profcodec::Opened>);

/// The input as opened: every other file of it (a database's, a measurement folder's, a
/// session's) is opened through it, so that one check says whether any of them shrank while it
/// was read ([`Tables::check_intact`]).
#[derive(Debug, Clone)]
pub(crate) struct Root(std::sync::Arc<profcodec::Opened>);

impl Root {
    /// The input's own bytes (a single-file input).
    pub(crate) fn mapped(&self) -> Mapped {
        Mapped(std::sync::Arc::clone(&self.0))
    }

    /// A file of the input.
    pub(crate) fn open(&self, path: &Path) -> Result<Mapped, Error> {
        Ok(Mapped(std::sync::Arc::new(self.0.open_member(path)?)))
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

/// An identifier tuple (HPCToolkit's and hpcrun's: the ids of a profile's node, rank, thread,
/// GPU stream...) as text, `RANK 0 / THREAD 1`: each id's kind by the name the file gives it
/// (`KIND<k>` for a kind it names not) and its logical id.
pub(crate) fn id_tuple_text<N, K, L>(ids: impl IntoIterator<Item = (Option<N>, K, L)>) -> String
where
    N: std::fmt::Display,
    K: std::fmt::Display,
    L: std::fmt::Display,
{
    use std::fmt::Write;
    let mut text = String::new();
    for (name, kind, logical) in ids {
        if !text.is_empty() {
            text.push_str(" / ");
        }
        // Writing into a String does not fail.
        let _ = match name {
            Some(name) => write!(text, "{name} {logical}"),
            None => write!(text, "KIND{kind} {logical}"),
        };
    }
    text
}

/// The error for a table name `table` that `set` (whose tables are `tables`) lacks.
pub(crate) fn unknown_table(set: &'static str, tables: &[TableDef], table: &str) -> Error {
    Error::UnknownTable {
        set,
        table: table.to_owned(),
        known: tables.iter().map(|t| t.name).collect::<Vec<_>>().join(", "),
    }
}
