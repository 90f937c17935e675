//! Read and write Devel::StatProfiler files: Snappy packets, the logical stream, multi-file
//! sessions.
//!
//! The hottest subs of a profile:
//!
//! ```
//! use profcodec_statprofiler::profcodec_profile::{Order, Query};
//!
//! // A file the profiler wrote (`perl -d:StatProfiler prog.pl` writes `statprof.out.<id>.<n>`).
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/statprofiler/features.statprof");
//! let profile = profcodec_statprofiler::to_profile(&std::fs::read(path)?)?;
//!
//! // The 5 hottest subs, as Devel::StatProfiler::Report ranks them: samples in the sub itself
//! // (exclusive), then with the subs it called (inclusive).
//! let top = profile.top(&Query::new().value_type("samples").by(Order::SelfValue).limit(5))?;
//! println!("{:>9} {:>9}  sub", "exclusive", "inclusive");
//! for row in &top.rows {
//!     println!("{:>9} {:>9}  {}", row.self_value, row.inclusive.unwrap_or(0.0), row.name);
//! }
//! # assert!(!top.rows.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The folded stacks of the same file (what flame graph tools read), weighted in ticks, from
//! the samples as the real reader returns them:
//!
//! ```
//! use std::collections::BTreeMap;
//! use profcodec_statprofiler::{Reader, TraceReader};
//!
//! // A file the profiler wrote (`perl -d:StatProfiler prog.pl` writes `statprof.out.<id>.<n>`).
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/statprofiler/features.statprof");
//! let bytes = std::fs::read(path)?;
//! let mut traces = TraceReader::new(Reader::from_slice(&bytes)?);
//! println!("sampled every {} µs", traces.reader().header().tick_duration_us.unwrap_or(0));
//!
//! // Folded stacks, as flame graph tools read them: outermost frame first, weight in ticks.
//! let mut folded: BTreeMap<String, u64> = BTreeMap::new();
//! while let Some(trace) = traces.next_trace()? {
//!     if trace.weight == 0 {
//!         continue; // the reader's empty traces at section records
//!     }
//!     // Frames come innermost first: reversed, the outermost first.
//!     let names: Vec<String> = trace.frames().rev().map(|frame| frame.to_string()).collect();
//!     *folded.entry(names.join(";")).or_default() += u64::from(trace.weight);
//! }
//! for (stack, ticks) in &folded {
//!     println!("{stack} {ticks}");
//! }
//! # assert!(!folded.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The format is described below ("The format"), as the profiler writes it and its reader reads
//! it; where the early design note (`fileformat.txt`) disagrees, the real tool wins.
//!
//! # Layers
//! - [`read::packets`]: the prologue (`=statprofiler` and a raw version byte) and the Snappy
//!   packets (u16 big-endian length, one raw Snappy block of at most 32000 bytes).
//! - [`Reader`]: the logical stream (the concatenated packets, records spanning packets): the
//!   [`Header`], then one [`Event`] per body record, strings borrowed from a small window.
//! - [`TraceReader`]: samples as the real reader (`Devel::StatProfiler::Reader`) returns them,
//!   with its quirks (extra traces per section record, dropped frames after `BEGIN`, eval sources).
//! - [`Profile`]: the owned model of one file; [`Writer`]: the real writer's logical stream,
//!   length values included, in packets cut where the real writer's buffer cuts them;
//!   [`SessionWriter`]: rotation by size.
//! - [`session`]: finding a run's files and grouping them into processes; [`text`]: the early
//!   note's one-line-per-sample text format.
//! - [`profile`] (the default `profile` feature): the samples in the format-neutral profile model
//!   of `profcodec-profile` ([`to_profile`], [`ProfileConverter`]), one context per process, as
//!   `Devel::StatProfiler::Report` aggregates them.
//! - `inspect` (feature `inspect`): the verbs `info`, `validate`, `dump` and `rewrite` over a
//!   file, a session folder or a template, which the umbrella `profcodec` dispatches to.
//! - `tables` (feature `arrow`): the processes, samples and frames of a file or session as
//!   Arrow record batches, the `statprofiler` set of `profcodec-arrow`'s SQL and Parquet export.
//!
//! # Fidelity
//! Reading then writing a file the profiler wrote gives the same logical stream, byte for byte
//! (the record lengths, wrong as they are, are recomputed with the C++ formula). The compressed
//! bytes may differ: snap's compressor is not csnappy, and the profiler ends a packet early at a
//! fork, which the stream does not record. Files not written by the profiler rewrite with the
//! lengths the profiler would have written, and varints in canonical form (the reader ignores
//! both, so what the real reader sees is unchanged).
//!
//! # The format
//! File format version 1, written by Devel::StatProfiler unchanged from release 0.26 (2015) to
//! 0.56. Citations name the source files of the profiler's repository (mbarbon/devel-statprofiler
//! at 754126d) with line numbers: `T:` src/tracefile.cpp, `H:` src/tracefile.h, `S:`
//! src/snappy.cpp, `R:` src/runloop.cpp.
//!
//! ## Container
//! `=statprofiler` (13 bytes, no NUL), one raw version byte (1; the reader refuses any other,
//! T:488-492), then packets: a u16 big-endian length N and N bytes holding one raw Snappy block
//! (Snappy's own little-endian varint length, then its elements) that decompresses to at most
//! 32000 bytes (H:18-19, S:21-61). The packets' decompressed bytes, concatenated, are the
//! *logical stream*; records span packets. The first packet holds exactly the header. A build
//! without Snappy writes the logical stream as is, and nothing in the file says so: byte 14 tells
//! the two apart ([`read::packets::parse_prologue`]).
//!
//! ## Primitives
//! - varint: unsigned 32 bits in 7-bit groups, most significant group first, 0x80 on every byte
//!   but the last (1000 is `87 68`); at most 5 bytes. A negative `int` (a first line of -1) is
//!   written as its 32 bits (`8f ff ff ff 7f`).
//! - string: a flag byte (bit 0 = Perl's UTF-8 flag; the writer emits 0 or 1), a varint byte
//!   length, the bytes (no NUL). Byte strings may be Latin-1.
//!
//! ## Header
//! Records of a tag byte and a payload, no length (except 200): 201 perl version (3 varints), 202
//! tick duration in microseconds, 203 stack collection depth, 205 genealogy (varint ordinal, varint
//! parent ordinal, 24 bytes id, 24 bytes parent id: six `uint32` in the writer's byte order,
//! parent all zero for a root process), 200 custom metadata (a varint "length", key string,
//! value string), 254 end of header. The writer's order is 201, 202, 203, 205, 200..., 254; the
//! reader refuses any other tag.
//!
//! ## Body records
//! A tag byte, a varint length, the payload: 1 sample start (varint weight in timer ticks since
//! the previous sample, string op name), 3 sub frame (package, name, file, varint line, varint
//! first line), 5 XSUB frame (package, name), 4 eval STRING frame (file `(eval N)`, line), 6 main
//! or `require` frame (file, line), 8 eval source (string source, varint eval number), 2 sample
//! end, 198 / 199 section start / end (name), 200 custom metadata (key, value), 196 file end (the
//! process goes on in the next file: rotation or fork), 197 stream end (profiling stopped). A
//! sample is everything between 1 and 2, frames innermost first; no count is stored. Unknown tags
//! are skipped by their length with a warning. The end of the file without 196 or 197 is a cut
//! file's end; nothing follows 196 or 197 in a file the profiler wrote.
//!
//! What real files do that the design note does not say: the stored lengths are wrong and the
//! reader ignores them for every known tag. The writer computes a string's size without its flag
//! byte (T:300-313), caps a varint's size at 4 (T:292-298), and stores key + value length for
//! metadata; [`Writer`] reproduces these values so that a rewrite is byte-identical.
//!
//! ## Files
//! With `-template PATH` (default `statprof.out`) a process writes `PATH.<48 hex id>.<8 hex
//! ordinal>`, named `..._` while open. It rotates (file end, ordinal + 1, a full header again)
//! once its size passes `-maxsize` (10 MiB); a forked child gets a new id and ordinal 1, and its
//! genealogy names the parent's id and ordinal at the fork. With `-file PATH` the name is exact.
//! See [`session`].
//!
//! # Costs
//! Every reader is linear in the logical stream, which Snappy bounds at about 21 times the file.
//! [`Reader`] keeps a window of a few packets (or the longest record); [`TraceReader`] keeps the
//! open sample's bytes and one entry per frame, so its memory is bounded by the longest sample;
//! [`validate`] / [`check`] keep no sample at all and stop at the end of the stream.
//!
//! ```
//! use profcodec_statprofiler::{Container, Frame, Header, PerlString, Profile, Record, TraceReader, Reader};
//!
//! let profile = Profile {
//!     container: Container::Snappy,
//!     header: Header { tick_duration_us: Some(1000), stack_depth: Some(20), ..Header::default() },
//!     records: vec![
//!         Record::SampleStart { weight: 2, op_name: PerlString::new("add") },
//!         Record::Frame(Frame::Main { file: PerlString::new("t.pl"), line: 7 }),
//!         Record::SampleEnd { skipped: vec![] },
//!         Record::StreamEnd,
//!     ],
//! };
//! let bytes = profile.to_bytes();
//! assert!(bytes.starts_with(b"=statprofiler\x01"));
//! assert_eq!(Profile::parse(&bytes).unwrap(), profile);
//!
//! let mut traces = TraceReader::new(Reader::from_slice(&bytes).unwrap());
//! let trace = traces.next_trace().unwrap().unwrap();
//! assert_eq!((trace.weight, trace.op_name.bytes, trace.frame_count()), (2, &b"add"[..], 1));
//! assert!(traces.next_trace().unwrap().is_none() && traces.stream_ended());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The format's one name in every machine-readable output: the `format` of a dump's header and
/// of `info --json`, the table set of `sql` and `export`, and the umbrella's cargo feature.
pub const FORMAT_NAME: &str = "statprofiler";

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod check;
mod error;
#[cfg(feature = "inspect")]
pub mod inspect;
mod model;
#[cfg(feature = "profile")]
pub mod profile;
pub mod raw;
pub mod read;
pub mod session;
#[cfg(feature = "arrow")]
pub mod tables;
pub mod text;
mod write;

pub use check::{Summary, check};
pub use error::{Error, StreamPos, TrailingData, Warning};
pub use model::{
    Container, Event, Frame, Genealogy, Header, OwnedFrame, OwnedRecord, PerlStr, PerlString,
    PerlText, PerlVersion, ProcessId, Profile, Record,
};
/// The profile model crate this crate converts into (the `profile` feature).
#[cfg(feature = "profile")]
pub use profcodec_profile;
#[cfg(feature = "profile")]
pub use profile::{ProfileConverter, ProfileError, to_profile};
pub use read::{Reader, Trace, TraceReader};
pub use write::{SessionWriter, Writer, session_file_name};

/// Reads every record of a file once and makes the real reader's checks (stray frames,
/// unmatched sections): the counts and warnings ([`Summary`]), or the first error. Memory stays
/// at the reader's window whatever a sample holds, and data after the end of the stream is
/// reported ([`Warning::TrailingData`]), not decoded. [`check`] keeps the counts made before an
/// error.
pub fn validate(file: &[u8]) -> Result<Summary, Error> {
    let mut reader = Reader::from_slice(file)?;
    let mut summary = Summary::default();
    check(&mut reader, &mut summary)?;
    Ok(summary)
}
