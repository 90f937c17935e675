//! Read and write Devel::NYTProf v5.0 profiles (`nytprof.out`), compressed or not, as
//! Devel::NYTProf 6.12 writes and reads them.
//!
//! The 5 hottest lines and the subs with the most exclusive time of a profile, as
//! `Devel::NYTProf::Data` and nytprofhtml count them:
//!
//! ```
//! use profcodec_nytprof::Profile;
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out");
//! let profile = Profile::from_bytes(&std::fs::read(path)?)?;
//!
//! let mut lines: Vec<_> = profile.line_times.iter()
//!     .flat_map(|(fid, lines)| lines.iter().map(move |(line, t)| (*fid, *line, *t)))
//!     .collect();
//! lines.sort_by(|a, b| b.2.time.total_cmp(&a.2.time));
//! for (fid, line, t) in lines.iter().take(5) {
//!     let file = profile.files.get(fid).map_or("?", |f| f.name.as_str());
//!     println!("{file}:{line}  {:.6} s  {} statements", t.time, t.count);
//! }
//!
//! let mut subs: Vec<_> = profile.subs.values().filter(|s| s.calls > 0).collect();
//! subs.sort_by(|a, b| b.excl.total_cmp(&a.excl));
//! for sub in subs.iter().take(3) {
//!     println!("{}  {} calls  {:.6} s exclusive", sub.name, sub.calls, sub.excl);
//! }
//! # assert!(!lines.is_empty() && !subs.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The grammar is the one Devel::NYTProf 6.12's `FileHandle.xs` and `NYTProf.xs` write:
//! big-endian prefix-length varints, tagged strings, native (little-endian x86-64) doubles, no
//! record framing, and one zlib stream after the `z` tag.
//!
//! Layers:
//! - [`raw`]: tags, flags and the varint encoding;
//! - [`parse`] / [`File`] / [`Records`]: typed [`Record`]s borrowing the input, and [`Reader`] for
//!   any `io::Read` or [`File::reader`] for a file in memory, which inflate the zlib stream after
//!   `z` a window at a time (bounded memory) and report the bytes after it
//!   ([`Reader::trailing`]);
//! - [`model`]: the aggregated [`Profile`] that `Devel::NYTProf::Data` builds (files, line times
//!   and counts, subs, callers, attributes, options, pids), with string evals collapsed as
//!   Data.pm does ([`collapse`]) unless [`ModelOptions::raw`] asks for the file's own view;
//! - [`calls`]: the call paths `nytprofcalls` prints, from the `<` records
//!   ([`Profile::from_bytes_with_call_paths`]);
//! - [`to_profile`](mod@to_profile) (feature `profile`, on by default): the conversion into the
//!   format-neutral model of `profcodec-profile`, subs, lines, call edges and call stacks;
//! - [`write`](mod@write): a record [`Writer`] and [`Profile::write`];
//! - [`merge`](mod@merge): many profiles of one program as one, with `nytprofmerge`'s rules.
//! - `tables` (feature `arrow`): the files, lines, subs and calls as Arrow record batches, the
//!   `nytprof` set of `profcodec-arrow`'s SQL and Parquet export.
//!
//! Fidelity: reading then writing the records of an uncompressed file gives the same bytes;
//! for a compressed file it gives the same inflated stream (the deflate bytes depend on the zlib
//! build) and the same trailer text.
//!
//! The records of a file as they are stored, then the profile they make:
//!
//! ```
//! use profcodec_nytprof::{Profile, Record};
//! let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out")).unwrap();
//! let file = profcodec_nytprof::parse(&bytes).unwrap();
//! let subs = file.records().filter(|r| matches!(r, Ok(Record::SubInfo { .. }))).count();
//! assert!(subs > 0);
//! let profile = Profile::from_bytes(&bytes).unwrap();
//! assert!(profile.complete());
//! assert!(profile.subs.contains_key("main::fib"));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The format's one name in every machine-readable output: the `format` of a dump's header and
/// of `info --json`, the table set of `sql` and `export`, and the umbrella's cargo feature.
pub const FORMAT_NAME: &str = "nytprof";

pub mod calls;
pub mod collapse;
mod dump;
mod error;
#[cfg(feature = "inspect")]
pub mod inspect;
pub mod merge;
pub mod model;
pub mod pynytprof;
pub mod raw;
pub mod read;
#[cfg(feature = "arrow")]
pub mod tables;
#[cfg(feature = "profile")]
pub mod to_profile;
pub mod write;

pub use dump::perl_nv;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
pub use calls::CallPaths;
pub use error::Error;
// What a reader of a profile meets, at the root (the module paths keep working).
pub use model::{
    AttrValue, CallInfo, EvalParent, FileInfo, LineTime, LoadReport, ModelOptions, PidRun, Profile,
    SubInfo, Totals,
};
pub use read::{
    File, Header, Line, MAX_RECORD_RATIO, Reader, Record, Records, Str, Trailing, parse,
};
pub use write::Writer;
