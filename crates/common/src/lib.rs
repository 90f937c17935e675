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
//! - [`source`]: one input as the caller opened it (a file's bytes, or a folder's files opened
//!   on demand), which the format crates' verbs and conversions read.
//! - [`terminal`]: text from an input made safe to print on a terminal ([`terminal::escape`]:
//!   control characters, escape sequences and bidi controls made visible), used by every
//!   printer of profcodec; [`json`] (feature `json`): JSON written with those characters
//!   escaped too.
//! - [`named`]: the rule for files a path inside an input names (a source file, a binary):
//!   read only under a folder the user allowed, never under `/proc`, `/sys` or `/dev`, only
//!   regular files within a size limit.
//! - [`words`]: counts in words whose noun agrees with the count (`1 context`, `2 contexts`).
//! - [`inspect`] (feature `inspect`): the types every format's `info`, `validate`, `dump` and
//!   `rewrite` share, so that the umbrella dispatches over formats without knowing any.
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
mod cursor;
#[cfg(feature = "inspect")]
pub mod inspect;
#[cfg(feature = "json")]
pub mod json;
pub mod named;
pub mod source;
pub mod terminal;
pub mod words;

pub use bound::{CountTooLarge, checked_capacity};
pub use cursor::{Cursor, Truncated};
pub use source::{Members, Source};
