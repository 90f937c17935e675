//! The operations behind the `profcodec` command line, one implementation per format.
//!
//! The CLI knows no format: it opens a path, asks [`codec`] for the [`Codec`] of the detected
//! format and calls it. Each format's implementation lives in `ops/<format>.rs` and plugs in
//! by implementing [`Codec`]; a format whose implementation is missing (or whose cargo feature is
//! off) answers [`OpError::Unsupported`], which the CLI reports with exit status 2.

use std::io::Write;
use std::path::Path;

use crate::{Format, Opened};

#[cfg(feature = "easyprofiler")]
mod easyprofiler;
#[cfg(feature = "hpcrun")]
mod hpcrun;
#[cfg(feature = "hpctoolkit")]
mod hpctoolkit;
#[cfg(feature = "nytprof")]
mod nytprof;
#[cfg(feature = "statprofiler")]
mod statprofiler;

/// What `profcodec info` prints: the format, its version and a few counts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Info {
    /// The detected format.
    pub format: Format,
    /// The format version as the file states it (for example `04.00b`, `5.0`, `2.1.0`).
    pub version: String,
    /// Format-specific counts and properties, in display order.
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// Options of `profcodec rewrite`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RewriteOptions {
    /// The target format or version (`--to`): `None` keeps the input's format and version.
    pub to: Option<String>,
}

impl RewriteOptions {
    /// Options that convert to `to` (for example `04.00` or `nytprof`).
    pub fn to(to: impl Into<String>) -> Self {
        RewriteOptions {
            to: Some(to.into()),
        }
    }
}

/// What a rewrite did, beyond writing the output.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct RewriteReport {
    /// Information the target format could not carry and that was dropped.
    pub dropped: Vec<String>,
}

/// Why an operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpError {
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

impl OpError {
    /// An [`OpError::Invalid`] from any decoder error and the offset it carries.
    pub fn invalid(err: impl std::fmt::Display, offset: Option<u64>) -> Self {
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
pub trait Codec: Sync {
    /// Format, version and counts.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Err(OpError::Unsupported {
            format: input.format(),
            op: "info",
        })
    }

    /// Decodes everything and checks every offset, count and cross-reference.
    fn validate(&self, input: &Opened) -> Result<(), OpError> {
        Err(OpError::Unsupported {
            format: input.format(),
            op: "validate",
        })
    }

    /// Writes the full content as JSON (the schema is documented in the format crate's README).
    fn dump_json(&self, input: &Opened, out: &mut dyn Write) -> Result<(), OpError> {
        let _ = out;
        Err(OpError::Unsupported {
            format: input.format(),
            op: "dump",
        })
    }

    /// Decodes and encodes again into `out` (a file, or a directory for an HPCToolkit database).
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
pub fn codec(format: Format) -> &'static dyn Codec {
    match format.feature() {
        #[cfg(feature = "hpctoolkit")]
        "hpctoolkit" => &hpctoolkit::Hpctoolkit,
        #[cfg(feature = "hpcrun")]
        "hpcrun" => &hpcrun::Hpcrun,
        #[cfg(feature = "nytprof")]
        "nytprof" => &nytprof::Nytprof,
        #[cfg(feature = "easyprofiler")]
        "easyprofiler" => &easyprofiler::EasyProfiler,
        #[cfg(feature = "statprofiler")]
        "statprofiler" => &statprofiler::StatProfiler,
        _ => &NotSupported,
    }
}

/// Writes `value` as pretty JSON followed by a newline.
pub fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<(), OpError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::other)?;
    out.write_all(b"\n")?;
    Ok(())
}
