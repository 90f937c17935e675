//! Read and write Devel::StatProfiler files: Snappy packets, the logical stream, multi-file
//! sessions.
//!
//! The specification is `shared/specs/as-implemented/statprofiler.md` (the writer unchanged since
//! release 0.26, 2015); where the early design note disagrees, the real tool wins.
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
//!
//! # Fidelity
//! Reading then writing a file the profiler wrote gives the same logical stream, byte for byte
//! (the record lengths, wrong as they are, are recomputed with the C++ formula). The compressed
//! bytes may differ: snap's compressor is not csnappy, and the profiler ends a packet early at a
//! fork, which the stream does not record. Files not written by the profiler rewrite with the
//! lengths the profiler would have written, and varints in canonical form (the reader ignores
//! both, so what the real reader sees is unchanged).
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

mod check;
mod error;
mod model;
pub mod raw;
pub mod read;
pub mod session;
pub mod text;
mod write;

pub use check::{Summary, check};
pub use error::{Error, StreamPos, TrailingData, Warning};
pub use model::{
    Container, Event, Frame, Genealogy, Header, OwnedFrame, OwnedRecord, PerlStr, PerlString,
    PerlText, PerlVersion, ProcessId, Profile, Record,
};
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
