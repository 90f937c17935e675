//! Read and write HPCToolkit database v4 files (meta.db, profile.db, cct.db, trace.db) with
//! zero-copy views.
//!
//! The reading half borrows the bytes of each file (memory-map them or read them into memory)
//! and never copies a large array: value blocks, context indices and trace lines are slices of
//! alignment-1 `zerocopy` records ([`raw::Value`], [`raw::CtxIndex`], [`raw::ProfValue`],
//! [`raw::MetricIndex`], [`raw::TraceElem`]), because real files only 4-align them.
//!
//! - [`MetaDb`], [`ProfileDb`], [`CctDb`], [`TraceDb`]: `parse` checks headers and footers in
//!   O(sections); `validate` checks every pointer, size, string and sort order, after which no
//!   accessor fails on that input.
//! - [`Database`]: a directory's files cross-linked (ctxId to context, profIndex to identifier
//!   tuple, metric id to metric and scope).
//! - [`files::DatabaseFiles`]: the files of an input as the caller opened them (a directory's
//!   files through the caller's `Members`, or one `.db` file).
//! - `inspect` (feature `inspect`): `info`, `validate`, `dump` and `rewrite`, the verbs the
//!   umbrella `profcodec` dispatches to.
//! - [`profile`] (feature `profile`, on by default): [`Database::to_profile`], the database in
//!   the format-neutral profile model of `profcodec-profile` (re-exported as
//!   [`profcodec_profile`]), with self and inclusive values as hpcviewer shows them, and the
//!   definition of hpcviewer's flat view that `top` by function reproduces.
//! - [`timeline`] (feature `profile`): the trace.db as a timeline (one track per trace line,
//!   samples as nested slices), the model `profcodec-timeline` writes as Perfetto or Chrome
//!   traces.
//! - `tables` (feature `arrow`): the contexts, metrics, profiles, values and traces of a
//!   database as Arrow record batches, the `hpctoolkit` set of `profcodec-arrow`'s SQL and
//!   Parquet export.
//! - `python` (feature `python`): the Python package `profcodec`'s `profcodec.hpctoolkit`
//!   classes (a database's values and traces as NumPy arrays, the columns of hatchet's
//!   GraphFrame), registered by the package through the umbrella.
//!
//! Versions: major 4 only (others are [`Error::UnsupportedVersion`]); any minor version, read
//! with the stored structure sizes as strides; enumeration values this crate does not know are
//! kept as stored: the enumerations ([`raw::enums`]) are open newtypes with named constants, one
//! representation for the reader, the model and the writers.
//!
//! The specification followed is HPCToolkit's FORMATS.md (database v4.0) as hpcprof really
//! writes it; where they disagree, the real tool wins (for example the 0x30-byte cct.db header
//! and `szProfile` = 0x30). The README lists every such difference.
//!
//! Cost: `parse` is O(sections); `validate` is linear in the file after an O(n log n) check
//! that no two arrays share bytes ([`ProfileDb::check_overlaps`] and its siblings: aliased
//! blocks would otherwise cost work once per alias); memory is at most 32 bytes per array or
//! string pointer plus the context index (24 bytes per context), never a count from the file.
//!
//! ```no_run
//! use profcodec_hpctoolkit::Database;
//!
//! let db = Database::open("hpctoolkit-database")?;
//! db.validate()?;
//! let profiles = db.profile().expect("the database has a profile.db");
//! let summary = profiles.profile(0)?;
//! // The value of metric 3 at the global context (ctxId 0) of the summary profile.
//! println!("{:?}", summary.value(0, 3));
//! for node in db.meta().walk() {
//!     let node = node?;
//!     println!("{}{}", "  ".repeat(node.depth as usize), node.node.ctx_id());
//! }
//! # Ok::<(), profcodec_hpctoolkit::Error>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The format's one name in every machine-readable output: the `format` of a dump's header and
/// of `info --json`, the table set of `sql` and `export`, and the umbrella's cargo feature.
pub const FORMAT_NAME: &str = "hpctoolkit";

// Reading half: raw on-disk structures, views, errors.
pub mod error;
pub mod raw;
pub mod read;

// Writing half: the owned model, builders and writers.
pub mod model;
pub mod write;

// The files of an input as the caller opened them, and the inspection verbs over them.
pub mod files;
#[cfg(feature = "inspect")]
pub mod inspect;

// The format-neutral profile model.
#[cfg(feature = "profile")]
pub mod profile;
// Its trace.db in the format-neutral timeline model.
#[cfg(feature = "profile")]
pub mod timeline;
// Its classes in the Python package `profcodec` (hatchet GraphFrames, NumPy arrays).
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "profile")]
pub use profcodec_profile;

// The raw-record tables of a database, as Arrow record batches.
#[cfg(feature = "arrow")]
pub mod tables;

pub use error::Error;
pub use raw::FileKind;
pub use read::{CctDb, Database, MetaDb, ProfileDb, TraceDb};

// The README's examples use the profile model.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "profile"))]
pub struct ReadmeDoctests;
