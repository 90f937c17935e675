//! Read and write HPCToolkit database v4 files (meta.db, profile.db, cct.db, trace.db) with
//! zero-copy views.
//!
//! One context's metrics, named as hpcviewer and hatchet name them: the context that costs the
//! most exclusive CPU time, and every statistic the summary profile holds for it
//! (`testdata/hpctoolkit/demo.d`, made by this crate's synthetic generator):
//!
//! ```
//! use profcodec_hpctoolkit::{ContextNode, Database, MetricRole};
//!
//! let db = Database::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpctoolkit/demo.d"))?;
//! // Every context's inclusive and exclusive cost, from the summary profile.
//! let costs = db.context_costs("CPUTIME")?.expect("a CPUTIME metric and a profile.db");
//! let costliest = costs.iter().max_by(|a, b| a.exclusive.total_cmp(&b.exclusive)).expect("a context");
//! // What that context is: here, a context of a function.
//! let function = match db.context(costliest.ctx_id).transpose()? {
//!     Some(ContextNode::Context(c)) => match c.function {
//!         Some(f) => db.meta().function(f)?.name,
//!         None => None,
//!     },
//!     _ => None,
//! };
//! println!("context {} in {}", costliest.ctx_id, function.unwrap_or("?"));
//! // Every statistic stored for it: `CPUTIME (sec):Sum (I)` (hpcviewer), `time (inc)` (hatchet).
//! let summary = db.profile().expect("a profile.db").profile(0)?;
//! for value in summary.metrics_of(costliest.ctx_id) {
//!     let name = db.metric_name(value.metric_id(), MetricRole::Summary)?.expect("in meta.db");
//!     println!("  {:<28} {:<14} {}", name.to_string(), name.hatchet(), value.value());
//! }
//! # assert_eq!(function, Some("main"));
//! # assert_eq!(db.metric_name(summary.metrics_of(costliest.ctx_id)[1].metric_id(), MetricRole::Summary)?.map(|n| n.hatchet()).as_deref(), Some("time (inc)"));
//! # Ok::<(), profcodec_hpctoolkit::Error>(())
//! ```
//!
//! The functions that cost the most (hpcviewer's flat view), through the format-neutral profile
//! model (feature `profile`, on by default):
//!
//! ```
//! # #[cfg(feature = "profile")] {
//! use profcodec_hpctoolkit::Database;
//! use profcodec_hpctoolkit::profile::ProfileOptions;
//! use profcodec_profile::Query;
//!
//! let db = Database::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpctoolkit/demo.d"))?;
//! let profile = db.to_profile(&ProfileOptions::new())?;      // the summary profile, every metric
//! let top = profile.top(&Query::new().value_type("CPUTIME").limit(5)).expect("CPUTIME");
//! for row in &top.rows {
//!     // self: hpcviewer's exclusive (function scope); inclusive: its execution scope.
//!     println!("{:10.3} {:10.3} {}  {}", row.self_value, row.inclusive.unwrap_or(0.0), top.unit, row.name);
//! }
//! # assert_eq!(top.rows[0].name, "func_1");
//! # }
//! # Ok::<(), profcodec_hpctoolkit::Error>(())
//! ```
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
//! The types a reader meets are at the crate root: the views and the database, the
//! contexts and metrics of meta.db ([`ContextNode`], [`MetricRole`], [`MetricName`]) and the
//! enumerations ([`Relation`], [`LexicalType`], ...); their modules ([`read`], [`raw::enums`])
//! name them too.
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
// What a reader of a database meets, at the root (the module paths keep working).
pub use files::DatabaseFiles;
pub use read::{
    CctDb, Combine, Context, ContextChildren, ContextCost, ContextIndex, ContextNode,
    ContextValues, Database, EntryPoint, EntryPointKind, FileHead, FileIndex, Function,
    FunctionIndex, IdTuple, LexicalType, LoadModule, MetaDb, Metric, MetricName, MetricRef,
    MetricRole, ModuleIndex, Profile, ProfileDb, PropagationScope, PropagationScopeInstance,
    Relation, ScopeIndex, ScopeType, SourceFile, SummaryStatistic, Trace, TraceDb, TraceLine,
    TraceReader, TreeNode, Walk,
};

// The README's examples use the profile model.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "profile"))]
pub struct ReadmeDoctests;
