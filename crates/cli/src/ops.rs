//! The operations behind the `profcodec` command line, one implementation per format.
//!
//! This glue lives in the CLI crate, not in the `profcodec` library: a library user compiles none
//! of its dump, validation and rewrite plumbing. What other front ends need too lives in the
//! library: [`profcodec::to_profile`] (feature `profile`) and [`profcodec::info`] (feature
//! `info`, the one that builds JSON), which `profile` and `info` call.
//!
//! The CLI knows no format: it opens a path, asks [`codec`] for the [`Codec`] of the detected
//! format and calls it. Each format's implementation lives in `ops/<format>.rs` and plugs in
//! by implementing [`Codec`]; a format whose implementation is missing answers [`OpError::Unsupported`], which the CLI reports with exit status 2.

use std::io::Write;
use std::path::Path;

use dump::Dump;

use profcodec::output::{CheckedOutput, WriteError};
use profcodec::{Format, Opened};

pub(crate) mod dump;
mod easyprofiler;
mod hpcrun;
mod hpctoolkit;
mod nytprof;
mod statprofiler;

/// The types every format's verbs share, from `profcodec::inspect`.
pub(crate) use profcodec::inspect::{
    Error as OpError, Finding, Info, RewriteOptions, RewriteReport, Validated,
};

/// One format's implementation of the CLI operations.
///
/// Every method has a default that answers [`OpError::Unsupported`], so a format can plug in one
/// operation at a time.
pub(crate) trait Codec: Sync {
    /// Format, version and counts.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let _ = input;
        Err(OpError::Unsupported { op: "info" })
    }

    /// Decodes everything and checks every offset, count and cross-reference, once: the fullest
    /// decode the format has, never two passes over the same bytes. Damage is an error; what
    /// the real tool tolerates but a careful user should hear of (trailing bytes after the end of
    /// the stream) is a [`Finding`].
    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        let _ = input;
        Err(OpError::Unsupported { op: "validate" })
    }

    /// Streams the full content into `dump`: the header, then each record as it is decoded (see
    /// [`dump`] for the conventions). An error ends the dump; the caller closes it.
    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let _ = dump;
        let _ = input;
        Err(OpError::Unsupported { op: "dump" })
    }

    /// The input in the format-neutral profile model (`profcodec-profile`), which `top`, `diff`
    /// and the exporters read. A session or multi-file input is one profile.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        let _ = input;
        Err(OpError::Unsupported { op: "profile" })
    }

    /// Decodes and encodes again into `out` (a file, or a directory for an HPCToolkit database).
    ///
    /// `out` does not exist and its parent folder does: the caller ([`rewrite_atomically`])
    /// passes a fresh temporary sibling of the real output and renames it into place once this
    /// returns, so that a codec never merges with old output nor leaves half a file behind.
    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        let _ = (out, options);
        let _ = input;
        Err(OpError::Unsupported { op: "rewrite" })
    }
}

/// A format whose implementation is not compiled in.
struct NotSupported;
impl Codec for NotSupported {}

/// A format whose verbs live in its own crate, reached through `profcodec::inspect`'s dispatch
/// (the profile through `profcodec::to_profile`).
#[allow(dead_code)] // the formats switch to it one at a time
struct Umbrella;
impl Codec for Umbrella {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        profcodec::info(input)
    }
    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        profcodec::validate(input)
    }
    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        profcodec::dump(input, dump)
    }
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
    }
    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        profcodec::inspect::rewrite_into(input, out, options)
    }
}

/// The [`Codec`] for `format`.
pub(crate) fn codec(format: Format) -> &'static dyn Codec {
    match format.feature() {
        "hpctoolkit" => &hpctoolkit::Hpctoolkit,
        "hpcrun" => &hpcrun::Hpcrun,
        "nytprof" => &nytprof::Nytprof,
        "easyprofiler" => &easyprofiler::EasyProfiler,
        "statprofiler" => &statprofiler::StatProfiler,
        _ => &NotSupported,
    }
}

/// Writes `value` as pretty JSON followed by a newline.
pub(crate) fn write_json(
    out: &mut dyn Write,
    value: &impl serde::Serialize,
) -> Result<(), OpError> {
    Ok(profcodec::inspect::write_json(out, value)?)
}

/// Runs `codec`'s rewrite of `input` into `output`, an output path already checked against
/// [`profcodec::output`]'s policy: it appears whole once complete or not at all, and is never
/// merged with old output.
pub(crate) fn rewrite_atomically(
    codec: &dyn Codec,
    input: &Opened,
    output: CheckedOutput,
    options: &RewriteOptions,
) -> Result<RewriteReport, WriteError<OpError>> {
    output.write_with(|staged| codec.rewrite(input, staged, options))
}
