//! Read and write Devel::StatProfiler files: Snappy packets, the logical stream, multi-file sessions.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (statprofiler.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
