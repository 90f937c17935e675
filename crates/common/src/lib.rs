//! Low-level helpers shared by the profcodec format crates.
//!
//! Every format crate parses untrusted bytes. The pieces all of them need in the same shape live
//! here once:
//!
//! - [`Cursor`]: an offset-tracking reader over `&[u8]` whose errors ([`Truncated`]) say where the
//!   input ended and how many bytes were wanted, so that each crate's error can point a hex editor
//!   at the right byte.
//! - [`bound`]: the hostile-count rule of the architecture note: never allocate from a count read
//!   in a file unless the remaining input could hold that many items.
//! - `corpus` and `hostile` (feature `test-support`, for the workspace's own tests): the
//!   test-corpus locator (`PROFCODEC_CORPUS`) and the shared hostile-input mutations. They are
//!   not part of the API a user of the format crates sees. `speedscope` (same feature) loads an
//!   output into the real speedscope app in headless Chromium.
//!
//! ```
//! use profcodec_common::Cursor;
//! let mut c = Cursor::new(&[0x00, 0x2a, 1, 0, 0, 0], 0);
//! assert_eq!(c.u16_be("magic").unwrap(), 42);
//! assert_eq!(c.u32_le("count").unwrap(), 1);
//! assert!(c.u8("tag").is_err());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bound;
#[cfg(feature = "test-support")]
pub mod corpus;
mod cursor;
#[cfg(feature = "test-support")]
pub mod hostile;
#[cfg(feature = "test-support")]
pub mod speedscope;

pub use bound::{CountTooLarge, checked_capacity};
pub use cursor::{Cursor, Truncated};
