//! Read and write Devel::NYTProf v5.0 profiles (nytprof.out), compressed or not.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (nytprof-v5.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
