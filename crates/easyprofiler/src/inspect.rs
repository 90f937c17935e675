//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`, over a [`Source`] the caller opened. The umbrella `profcodec` dispatches to them.

use std::path::Path;

use profcodec_common::inspect::{
    Dump, Error, Info, RewriteOptions, RewriteReport, Source, Validated,
};

/// The version and summary of `input`.
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    let _ = input;
    Err(Error::Unsupported { op: "info" })
}

/// Decodes everything once, checking every offset, count and cross-reference.
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    let _ = input;
    Err(Error::Unsupported { op: "validate" })
}

/// Streams the full content into `dump`.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    let _ = (input, dump);
    Err(Error::Unsupported { op: "dump" })
}

/// Decodes `input` and encodes it again into `out`, which does not exist yet.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    let _ = (input, out, options);
    Err(Error::Unsupported { op: "rewrite" })
}
