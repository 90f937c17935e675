//! What the two command-line programs of profcodec share: `profcodec` (this package's binary)
//! and `profcodec-sql` (the package `profcodec-sql`, which links DataFusion). Both map every
//! error to the same exit statuses and words, so that a script reads them alike.
//!
//! This library is not an API for other programs: use the crate `profcodec`.

pub mod failure;
pub mod inputs;
