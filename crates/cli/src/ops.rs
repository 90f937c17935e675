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

/// What `profcodec info` prints: the format, its version and a few counts
/// ([`profcodec::info`], shared with the library's users).
pub(crate) use profcodec::Info;

/// Options of `profcodec rewrite`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub(crate) struct RewriteOptions {
    /// The target format or version (`--to`): `None` keeps the input's format and version.
    pub(crate) to: Option<String>,
}

impl RewriteOptions {
    /// Options that convert to `to` (for example `04.00` or `nytprof`).
    #[cfg(test)]
    pub(crate) fn to(to: impl Into<String>) -> Self {
        RewriteOptions {
            to: Some(to.into()),
        }
    }
}

/// What a rewrite did, beyond writing the output.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct RewriteReport {
    /// Information the target format could not carry and that was dropped.
    pub(crate) dropped: Vec<String>,
    /// Files carried over unchanged from the input (paths relative to the output), such as an
    /// HPCToolkit database's `metrics/` and `src/`.
    pub(crate) copied: Vec<String>,
}

/// What a successful `validate` found that is not damage.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub(crate) struct Validated {
    /// Findings, in input order.
    pub(crate) findings: Vec<Finding>,
}

/// Something `validate` reports about an input it could decode.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
#[non_exhaustive]
pub(crate) enum Finding {
    /// Bytes after the end of the stream (the format's end marker or last record). The real
    /// readers ignore or warn on them; `validate` fails on them unless `--allow-trailing`.
    TrailingData {
        /// Where the trailing bytes start.
        offset: u64,
        /// How many there are.
        size: u64,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finding::TrailingData { offset, size } => write!(
                f,
                "trailing data: {size} bytes after the end of the stream, at byte {offset:#x}"
            ),
        }
    }
}

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum OpError {
    /// The format (or this operation on it) is not supported by this build.
    #[error("{op} is not yet supported for this format")]
    Unsupported {
        /// The format.
        format: Format,
        /// The operation (`info`, `validate`, `dump`, `rewrite`).
        op: &'static str,
    },
    /// The input is invalid; the message follows the workspace's error style
    /// (`<what>: at byte 0x<offset>: <expected> but found <seen>`).
    #[error("{message}")]
    Invalid {
        /// The decoder's error message.
        message: String,
        /// The byte offset of the damage, when the decoder knows it.
        offset: Option<u64>,
    },
    /// The options do not fit this format (for example an unknown `--to`).
    #[error("{0}")]
    Usage(String),
    /// Reading or writing failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<profcodec::ReadError> for OpError {
    /// Damage stays [`OpError::Invalid`] (a file of the input that cannot be opened too, as
    /// the CLI always reported it); what the input cannot give is a usage error.
    fn from(e: profcodec::ReadError) -> Self {
        match e {
            profcodec::ReadError::Unsupported(message) => OpError::Usage(message),
            profcodec::ReadError::Io(e) => OpError::Io(e),
            other => {
                let offset = other.offset();
                OpError::invalid(other, offset)
            }
        }
    }
}

impl OpError {
    /// An [`OpError::Invalid`] from any decoder error and the offset it carries.
    pub(crate) fn invalid(err: impl std::fmt::Display, offset: Option<u64>) -> Self {
        OpError::Invalid {
            message: err.to_string(),
            offset,
        }
    }
}

/// One format's implementation of the CLI operations.
///
/// Every method has a default that answers [`OpError::Unsupported`], so a format can plug in one
/// operation at a time.
pub(crate) trait Codec: Sync {
    /// Format, version and counts.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Err(OpError::Unsupported {
            format: input.format(),
            op: "info",
        })
    }

    /// Decodes everything and checks every offset, count and cross-reference, once: the fullest
    /// decode the format has, never two passes over the same bytes. Damage is an error; what
    /// the real tool tolerates but a careful user should hear of (trailing bytes after the end of
    /// the stream) is a [`Finding`].
    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        Err(OpError::Unsupported {
            format: input.format(),
            op: "validate",
        })
    }

    /// Streams the full content into `dump`: the header, then each record as it is decoded (see
    /// [`dump`] for the conventions). An error ends the dump; the caller closes it.
    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let _ = dump;
        Err(OpError::Unsupported {
            format: input.format(),
            op: "dump",
        })
    }

    /// The input in the format-neutral profile model (`profcodec-profile`), which `top`, `diff`
    /// and the exporters read. A session or multi-file input is one profile.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Err(OpError::Unsupported {
            format: input.format(),
            op: "profile",
        })
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
        Err(OpError::Unsupported {
            format: input.format(),
            op: "rewrite",
        })
    }
}

/// A format whose implementation is not compiled in.
struct NotSupported;
impl Codec for NotSupported {}

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
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::other)?;
    out.write_all(b"\n")?;
    Ok(())
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
