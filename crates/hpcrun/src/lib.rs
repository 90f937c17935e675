//! Read and write hpcrun measurement files (.hpcrun 02.00l to 04.00b) and .hpctrace traces.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (hpcrun.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
