//! Read and write HPCToolkit database v4 files (meta.db, profile.db, cct.db, trace.db) with zero-copy views.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (hpctoolkit-db-v4.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]
