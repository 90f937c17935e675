//! Profiles as tables: every format profcodec reads, and its format-neutral profile model, as
//! Arrow record batches with documented, stable schemas; Parquet export (feature `parquet`) and
//! SQL through an embedded DataFusion session (feature `sql`), over any [`Tables`].
//!
//! # Reading tables
//!
//! A set of tables is anything that implements [`Tables`] (crate `profcodec-tables`): the
//! profile model's ([`ProfileTables`]), and each format's, which its crate reads (its `tables`
//! module, feature `arrow`). The umbrella crate `profcodec` opens any input profcodec opens (a
//! file, an HPCToolkit database folder, an hpcrun measurement folder, a StatProfiler session)
//! with its format's tables (`profcodec::tables::Input`, feature `tables`);
//! [`Tables::batches`] streams one table as record batches of at most
//! [`ScanOptions::batch_rows`] rows. Batches are made as they are consumed, from the format
//! crates' views over the (memory-mapped) files: no table is ever held whole. What each reader
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
//! its type (in the `tables` module of the format's crate, which the umbrella `profcodec`
//! re-exports under the format's name, below) and carried by each Arrow field as its
//! `description` metadata, which the Parquet files keep. Integers keep the width and
//! signedness the file stores (Spark reads `UInt64` columns as `decimal(20,0)`); strings are
//! UTF-8; times are in the unit the column names. No column name needs quoting in SQL; the
//! tables called `values` do, or their set's name before them (`hpctoolkit.values`). Schemas
//! are stable: a column keeps its name, type and meaning, and new columns are only ever added
//! after the existing ones.
//!
//! | set | tables | declared in |
//! |---|---|---|
//! | `hpctoolkit` | `contexts`, `metrics`, `profiles`, `values`, `traces` | `profcodec::hpctoolkit::tables` |
//! | `hpcrun` | `profiles`, `metrics`, `nodes`, `values`, `trace` | `profcodec::hpcrun::tables` |
//! | `nytprof` | `files`, `lines`, `subs`, `calls` | `profcodec::nytprof::tables` |
//! | `easyprofiler` | `threads`, `descriptors`, `blocks`, `values`, `context_switches`, `bookmarks` | `profcodec::easyprofiler::tables` |
//! | `statprofiler` | `processes`, `samples`, `frames` | `profcodec::statprofiler::tables` |
//! | `profile` | [`contexts`](profile::Contexts), [`value_types`](profile::ValueTypes), [`frames`](profile::Frames), [`nodes`](profile::Nodes), [`node_values`](profile::NodeValues), [`flat_values`](profile::FlatValues), [`call_edges`](profile::CallEdges), [`edge_values`](profile::EdgeValues), [`spans`](profile::Spans) | [`profile`] |
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
//! `parquet::Dataset` and `parquet::export_after` grow such a dataset by more inputs in new
//! files only, numbered after those it has.
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

mod error;
pub mod profile;

#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(feature = "sql")]
pub mod sql;

pub use error::Error;
pub use inputs::Inputs;
pub use profcodec_tables::{Batches, ScanOptions, TableDef, TableSet, Tables};
pub use profile::ProfileTables;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The table sources of one input: its format's set, and any others (its `profile` set) that
/// share its `input` number in an export or a SQL session.
#[derive(Debug, Clone)]
pub struct InputTables {
    path: PathBuf,
    sets: Vec<std::sync::Arc<dyn Tables>>,
}

impl InputTables {
    /// The input at `path` with the tables of `set` (its format's, which the umbrella
    /// `profcodec` opens: `profcodec::tables::Input`).
    pub fn new(path: impl Into<PathBuf>, set: std::sync::Arc<dyn Tables>) -> InputTables {
        InputTables {
            path: path.into(),
            sets: vec![set],
        }
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

    /// The input's format set (the first set it was made with).
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
        Ok(self.sets.iter().try_for_each(|set| set.check_intact())?)
    }
}

pub mod inputs {
    //! The `inputs` table: which input each `input` value of the other tables stands for.

    use profcodec_tables::table;

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
        numbered(inputs, 0)
    }

    /// The `inputs` table of `inputs`, in order, numbered from `first` (inputs added to a
    /// dataset after those it has); the caller checks that the numbers fit.
    pub fn numbered(
        inputs: &[super::InputTables],
        first: u32,
    ) -> Result<arrow_array::RecordBatch, crate::Error> {
        use profcodec_tables::Rows;
        let mut rows = InputRows::new();
        for (k, input) in (first..=u32::MAX).zip(inputs) {
            rows.input.append_value(k);
            rows.path.append_value(input.path().to_string_lossy());
            rows.set
                .append_value(input.format_set().map_or("", super::TableSet::name));
        }
        Ok(rows.finish()?)
    }
}
