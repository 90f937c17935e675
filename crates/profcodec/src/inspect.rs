//! The inspection verbs over any input (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`. Each format's implementation lives in its own crate (`profcodec_<format>::inspect`);
//! this is the one place that dispatches to them. Every verb checks, before it returns, that no
//! file of the input was cut while it was read ([`Opened::check_intact`]).

// A build without any format answers every verb with `Unsupported`: its arguments go unused.
#![cfg_attr(
    not(any(
        feature = "hpctoolkit",
        feature = "hpcrun",
        feature = "nytprof",
        feature = "easyprofiler",
        feature = "statprofiler"
    )),
    allow(unused_variables, dead_code)
)]

use std::path::Path;

use profcodec_common::inspect::Source;
pub use profcodec_common::inspect::{
    Dump, DumpLayout, DumpOptions, Error, Finding, RewriteOptions, RewriteReport, Validated,
    dump_to_string, write_json,
};

use crate::output::{CheckedOutput, WriteError};
use crate::{Format, Opened};

/// The summary of an input ([`info`]).
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Info {
    /// The detected format.
    pub format: Format,
    /// The format version as the file states it (for example `04.00b`, `5.0`, `2.1.0`; an
    /// HPCToolkit database lists its files' versions once each, comma-separated).
    pub version: String,
    /// Format-specific counts and properties, in display order: the summary first (title,
    /// program, time span, who was measured, what was measured), then counts.
    pub details: serde_json::Map<String, serde_json::Value>,
}

fn source(input: &Opened) -> Source<'_> {
    input.source()
}

/// What a verb answers for a format this build does not include.
fn not_compiled(op: &'static str) -> Error {
    Error::Unsupported { op }
}

/// Runs `verb` and then the input's intact check, whose error wins: what a cut file gave is
/// zeros, not the input.
fn checked<T>(input: &Opened, verb: Result<T, Error>) -> Result<T, Error> {
    input.check_intact().map_err(|e| Error::invalid(e, None))?;
    verb
}

macro_rules! dispatch {
    ($input:expr, $op:literal, |$m:ident| $call:expr) => {{
        let input: &Opened = $input;
        let result = match input.format().feature() {
            #[cfg(feature = "hpctoolkit")]
            "hpctoolkit" => {
                use profcodec_hpctoolkit::inspect as $m;
                $call
            }
            #[cfg(feature = "hpcrun")]
            "hpcrun" => {
                use profcodec_hpcrun::inspect as $m;
                $call
            }
            #[cfg(feature = "nytprof")]
            "nytprof" => {
                use profcodec_nytprof::inspect as $m;
                $call
            }
            #[cfg(feature = "easyprofiler")]
            "easyprofiler" => {
                use profcodec_easyprofiler::inspect as $m;
                $call
            }
            #[cfg(feature = "statprofiler")]
            "statprofiler" => {
                use profcodec_statprofiler::inspect as $m;
                $call
            }
            _ => Err(not_compiled($op)),
        };
        checked(input, result)
    }};
}

/// The format, version and a summary of `input`. Each format reads its files once, with the
/// fullest decode the summary needs (NYTProf: the model; EasyProfiler: the block tree;
/// StatProfiler: one counting pass; HPCToolkit and hpcrun: the headers, sections and counts).
///
/// ```no_run
/// let info = profcodec::info(&profcodec::open("prog.nytprof.out")?)?;
/// println!("{} {}", info.format, info.version);
/// for (key, value) in &info.details {
///     println!("  {key}: {value}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn info(input: &Opened) -> Result<Info, Error> {
    let info: profcodec_common::inspect::Info =
        dispatch!(input, "info", |m| m::info(&source(input)))?;
    Ok(Info {
        format: input.format(),
        version: info.version,
        details: info.details,
    })
}

/// Decodes everything and checks every offset, count and cross-reference, once: the fullest
/// decode the format has. Damage is an error; what the real tool tolerates but a careful user
/// should hear of (trailing bytes after the end of the stream) is a [`Finding`].
pub fn validate(input: &Opened) -> Result<Validated, Error> {
    dispatch!(input, "validate", |m| m::validate(&source(input)))
}

/// Streams the full content into `dump`: the header, then each record as it is decoded (see
/// [`Dump`] for the conventions). An error ends the dump; the caller closes it.
pub fn dump(input: &Opened, dump: &mut Dump<'_>) -> Result<(), Error> {
    dispatch!(input, "dump", |m| m::dump(&source(input), dump))
}

/// Decodes `input` and encodes it again (into another version or format with
/// [`RewriteOptions::to`]) at `output`, a path checked against [`crate::output`]'s policy: the
/// output appears whole once complete or not at all, and is never merged with old output.
pub fn rewrite(
    input: &Opened,
    output: CheckedOutput,
    options: &RewriteOptions,
) -> Result<RewriteReport, WriteError<Error>> {
    output.write_with(|staged| rewrite_into(input, staged, options))
}

/// [`rewrite`] into `out`, a path that does not exist yet (a file, or a folder for an
/// HPCToolkit database), in a folder that does: no output policy, no atomic placement. For
/// callers that stage the output themselves.
pub fn rewrite_into(
    input: &Opened,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    dispatch!(input, "rewrite", |m| m::rewrite(
        &source(input),
        out,
        options
    ))
}

impl Opened {
    /// [`info`] of this input.
    pub fn info(&self) -> Result<Info, Error> {
        info(self)
    }
}

impl From<crate::ReadError> for Error {
    /// Damage stays [`Error::Invalid`] (a file of the input that cannot be opened too); what
    /// the input cannot give is a usage error.
    fn from(e: crate::ReadError) -> Self {
        match e {
            crate::ReadError::Unsupported(message) => Error::Usage(message),
            crate::ReadError::Io(e) => Error::Io(e),
            other => {
                let offset = other.offset();
                Error::invalid(other, offset)
            }
        }
    }
}
