//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`, over a [`Source`] the caller opened. The umbrella `profcodec` dispatches to them.
//!
//! A capture is one file: every verb reads `input.bytes` and opens no other file.

use std::path::Path;

use profcodec_common::inspect::{
    Dump, Error, Info, RewriteOptions, RewriteReport, Source, Validated,
};

mod dump;
mod info;
mod rewrite;
mod validate;

/// Why `profcodec merge` writes no file of this format, as the format's own tools combine many
/// inputs instead: what the umbrella says when asked to merge inputs of this format.
pub const NO_MERGE: &str = "an EasyProfiler capture's header names one process and one clock, and easy_profiler \
    has no merge of captures (its GUI and converter open one file at a time)";

/// The version and summary of `input`: the blocks' summary, oddities included, read by
/// [`CaptureView::walk`](crate::CaptureView::walk) (no node per block).
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    info::info(input.bytes)
}

/// Decodes everything once, checking every offset, count and cross-reference.
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    validate::validate(input.bytes)
}

/// Streams the full content into `dump`.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    dump::dump(input.bytes, dump)
}

/// Decodes `input` and encodes it again into `out`, which does not exist yet.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    rewrite::rewrite(input.bytes, out, options)
}

/// A decoder error as an inspection error, keeping its message and offset.
fn invalid(e: crate::Error) -> Error {
    Error::invalid(e, e.offset())
}
