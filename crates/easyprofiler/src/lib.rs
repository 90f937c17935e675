//! Read and write EasyProfiler .prof captures of every version, with the block tree the C++ reader builds.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (easyprofiler.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
