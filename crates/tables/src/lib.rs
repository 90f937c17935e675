//! How profcodec's format crates declare their tables, and what reads them.
//!
//! A format crate lists each table's columns once with [`table!`]: name, Arrow type, whether
//! it may be null, and what it means. That gives the table's documented marker type (its
//! rustdoc lists the columns), its [`TableDef`] (name, description, schema; every field carries
//! its meaning as its `description` metadata, which Parquet files keep) and a row builder.
//! [`batches`] streams rows into record batches of at most [`ScanOptions::batch_rows`] rows, so
//! that no table is ever held whole; [`columns!`] and [`filled_batches`] do the same for the
//! large tables copied from a file a run of records at a time.
//!
//! A set of tables is named by a string ([`TableSet`]: `nytprof`, `profile`). What yields them
//! implements [`Tables`]; a format's tables, which read the input through the
//! [`Source`](profcodec_common::Source) it was opened as, implement [`SourceTables`], and the
//! opener of the input (the umbrella `profcodec`) joins the two. Exports and queries over any
//! [`Tables`] are in `profcodec-arrow`.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
mod set;
mod table;
mod text;

/// The Arrow crates the tables are made of (the macros' paths go through these).
pub use arrow_array;
/// The Arrow crates the tables are made of (the macros' paths go through these).
pub use arrow_schema;

/// The cell a set of tables keeps the model it makes on first use in (a profile, a format's
/// aggregated model): [`OnceCell::get_or_try_init`] lets the first thread that asks make it
/// while the others wait and share it, so that tables read on several threads at once (an
/// export's) convert their input once, not once per thread. A failed attempt leaves the cell
/// empty: the next read tries again.
pub use once_cell::sync::OnceCell;

pub use error::Error;
pub use set::{SourceTables, TableSet, Tables};
pub use table::{
    Batches, Column, ColumnBuffer, Columns, Rows, ScanOptions, TableDef, batches, description,
    filled_batches, record_batch, schema_ref,
};
pub use text::id_tuple_text;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
