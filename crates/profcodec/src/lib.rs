//! Read and write the files of five profilers, with format detection.
//!
//! This crate is thin: each format lives in its own crate, re-exported here under a module of its
//! name and enabled by a cargo feature of the same name (all on by default). What lives here is
//! what a tool handling "any profile" needs:
//!
//! - [`Format::detect`] from a file's first bytes, and [`open`] (read into memory, or
//!   memory-mapped from 1 MiB; with detection; a folder is an HPCToolkit database, an hpcrun
//!   measurement folder or a StatProfiler session; `-` is standard input, read whole:
//!   [`open_stdin`]); a file that shrinks while it is read gives an I/O error, never a SIGBUS;
//! - `to_profile` (feature `profile`, on by default): any opened input in the format-neutral
//!   profile model ([`profile`], the crate `profcodec-profile`), which answers `top` and `diff`
//!   and which every exporter reads; `merged_profile`: many inputs merged into one, decoded
//!   on every core;
//! - [`inspect`] (feature `inspect`): `info` (the format, version and summary `profcodec info`
//!   prints), `validate`, `dump` and `rewrite` of any input, each format's own implementation
//!   reached through one dispatch, and `merge_files`: many inputs as one file of their own
//!   format (NYTProf, as `nytprofmerge` writes it);
//! - `timeline` (feature `timeline`): the timeline of any input (an EasyProfiler capture, an
//!   HPCToolkit trace.db, hpcrun `.hpctrace` files) as a Perfetto or Chrome trace, each
//!   format's converter feeding the writers of `profcodec-timeline`;
//! - `tables` (feature `tables`): any input's tables as Arrow record batches, its format's
//!   raw records (each format crate's `tables` module) and its profile model's, for the Parquet
//!   export and SQL of `profcodec-arrow` (features `parquet` and `sql`);
//! - [`ReadError`]: any format's error, with its message and byte offset;
//! - [`output`]: the output policy and atomic writes of a file or folder, which appears whole
//!   once complete or not at all, never merged with an old output, and never deletes what
//!   profcodec did not write (what `profcodec rewrite`, `convert` and `export` write with);
//! - `query` (feature `profile`): the options of `top` and `diff` as every face takes them,
//!   and the model's query and table options they make;
//! - [`text`]: text for people as every face prints it: numbers (`1,234,567`), the tables of
//!   `top` and `diff` and their JSON rows (feature `profile`), `info`'s details (feature
//!   `inspect`);
//! - `report` (feature `report`): the HTML report of any inputs (`profcodec-report`): summary,
//!   top functions, flame graph, callers and callees, source line by line, timelines (each
//!   track's activity, and the Perfetto trace beside the page), comparison with a base;
//! - `python` (feature `python`): the format crates' own classes in the Python package
//!   (HPCToolkit's `Database` and hatchet columns), registered by `register_format_modules`.
//!
//! The costliest functions of any profile, as `profcodec top` prints them:
//!
//! ```
//! # #[cfg(feature = "profile")] {
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out");
//! let input = profcodec::open(path)?;
//! let profile = profcodec::to_profile(&input)?;
//! let top = profile.top(&profcodec::profile::Query::new().limit(5))?;
//! for row in &top.rows {
//!     println!("{:>12.6} {}", row.self_value, row.name);
//! }
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Formats are detected from the first bytes:
//!
//! ```
//! use profcodec::Format;
//! assert_eq!(Format::detect(b"NYTProf 5 0\n#Perl profile database.\n").unwrap(), Format::Nytprof);
//! assert_eq!(Format::detect(b"HPCTOOLKITmeta\x04\x00").unwrap(), Format::HpctoolkitMeta);
//! let err = Format::detect(b"\x7fELF\x02\x01").unwrap_err();
//! assert!(err.to_string().contains("7f 45 4c 46"));
//! ```
#![deny(missing_docs)]

#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(feature = "profile")]
#[path = "profile.rs"]
mod conversion;
mod detect;
mod error;
mod inputs;
#[cfg(feature = "inspect")]
pub mod inspect;
mod mapping;
#[cfg(feature = "profile")]
mod merge;
mod open;
pub mod output;
#[cfg(feature = "hpcprof")]
pub mod prof;
#[cfg(feature = "python")]
pub mod python;
#[cfg(feature = "profile")]
pub mod query;
#[cfg(feature = "report")]
pub mod report;
#[cfg(feature = "tables")]
pub mod tables;
pub mod text;
#[cfg(feature = "timeline")]
pub mod timeline;

#[cfg(all(feature = "profile", feature = "statprofiler"))]
pub use conversion::statprofiler_session;
#[cfg(feature = "symbolize")]
pub use conversion::symbols;
#[cfg(feature = "profile")]
pub use conversion::{
    ConvertOptions, HPCTOOLKIT_ALL_PROFILES_MAX_VALUES, SavedSources, folded_frame_namer,
    to_profile, to_profile_with, to_profile_with_sources, to_profile_with_spans,
};
pub use detect::{Format, UnknownFormat};
pub use error::ReadError;
pub use inputs::{Expanded, SkipReason, Skipped, expand_inputs};
#[cfg(feature = "inspect")]
pub use inspect::{Info, MergeReport, dump, info, merge_files, rewrite, validate};
#[cfg(feature = "profile")]
pub use merge::{
    MergeError, MergeOptions, Merged, merged_profile, merged_profile_for, merged_profile_with,
    profiles,
};
pub use open::{OpenError, OpenOptions, Opened, STDIN, open, open_stdin};
/// The format-neutral profile model (the crate `profcodec-profile`): frames, call tree, value
/// types, contexts; `top`, `diff` and merging.
#[cfg(feature = "profile")]
pub use profcodec_profile as profile;

/// Text from an input made safe for a terminal (`terminal::escape`): what every face escapes
/// names, paths and messages with before printing them.
pub use profcodec_common::terminal;
/// Counts in words whose noun agrees with the count (`words::count(1, "context", "contexts")`):
/// what every face writes a count with.
pub use profcodec_common::words;
#[cfg(feature = "easyprofiler")]
pub use profcodec_easyprofiler as easyprofiler;
#[cfg(feature = "hpcrun")]
pub use profcodec_hpcrun as hpcrun;
#[cfg(feature = "hpctoolkit")]
pub use profcodec_hpctoolkit as hpctoolkit;
#[cfg(feature = "nytprof")]
pub use profcodec_nytprof as nytprof;
#[cfg(feature = "statprofiler")]
pub use profcodec_statprofiler as statprofiler;
