//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump`,
//! `rewrite` and `merge`, over a [`Source`](profcodec_common::inspect::Source) the caller opened. The
//! umbrella `profcodec` dispatches to them.
//!
//! Both layouts are handled: the real v5.0 stream and the old Pynytprof chunk layout (detected
//! by its blank line after the banner), which `rewrite` converts.
//!
//! Every verb reads the file once: `info` and `validate` load the model in one pass
//! ([`Profile::from_bytes_report`](crate::Profile::from_bytes_report), which inflates a window
//! at a time), `dump` streams the records as the reader decodes them, `rewrite` streams them
//! into the output.

use profcodec_common::inspect::Error;

use crate::LoadReport;

mod dump;
mod info;
mod merge;
mod rewrite;
mod validate;

pub use dump::dump;
pub use info::info;
pub use merge::{Merge, MergeInput};
pub use rewrite::rewrite;
pub use validate::validate;

/// The error of a decoder, with its message and offset.
fn invalid(e: crate::Error) -> Error {
    Error::invalid(e, e.offset())
}

/// The error of a load that read into the zlib stream, with the file position reached
/// ([`LoadReport::error_message`]).
fn load_error(e: crate::Error, report: &LoadReport) -> Error {
    Error::invalid(report.error_message(&e), e.offset())
}
