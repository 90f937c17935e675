//! Read and write HPCToolkit database v4 files (meta.db, profile.db, cct.db, trace.db) with zero-copy views.
//!
//! Status: skeleton. The specification this crate follows is `shared/specs/as-implemented/`
//! (hpctoolkit-db-v4.md); where the given documents disagree with it, the real tool wins.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// Reading half (issue 3): raw on-disk structures, views, errors.
pub mod error;
pub mod raw;
pub mod read;

// Writing half (issue 4): the owned model, builders and writers.
pub mod model;
pub mod write;

pub use error::Error;
