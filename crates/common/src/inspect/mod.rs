//! What every format crate's inspection verbs share (feature `inspect`): `info`, `validate`,
//! `dump` and `rewrite` return these types, so that the umbrella `profcodec` dispatches over
//! formats without knowing any, and the command line and Python print them alike.
//!
//! - [`Info`]: a format's version and its summary, in display order.
//! - [`Validated`] and [`Finding`]: what a full decode found that is not damage.
//! - [`Dump`]: the streaming JSON writer of `dump` (flat records, memory bounded by the
//!   largest record).
//! - [`RewriteOptions`] and [`RewriteReport`]: what a rewrite is asked and what it did.
//! - [`Source`] and [`Members`] (from [`crate::source`]): the input, and how a format reads
//!   the other files of a folder input.
//! - [`Error`]: why a verb failed, with the byte offset of the damage when there is one.

use std::io::{self, Write};

mod dump;

pub use crate::source::{Member, Members, ReadWhole, Source};
pub use dump::{Dump, DumpLayout, DumpOptions};

/// A format's version and summary: what `info` prints about one input.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Info {
    /// The format version as the file states it (for example `04.00b`, `5.0`, `2.1.0`; an
    /// HPCToolkit database lists its files' versions once each, comma-separated).
    pub version: String,
    /// Counts and properties, in display order: the summary first (title, program, time span,
    /// who was measured, what was measured), then counts.
    pub details: serde_json::Map<String, serde_json::Value>,
}

impl Info {
    /// A summary of `version` with `details`.
    pub fn new(
        version: impl Into<String>,
        details: serde_json::Map<String, serde_json::Value>,
    ) -> Info {
        Info {
            version: version.into(),
            details,
        }
    }
}

/// Options of a rewrite.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteOptions {
    /// The target format or version (`--to`): `None` keeps the input's format and version.
    pub to: Option<String>,
}

impl RewriteOptions {
    /// Options that keep the input's format and version.
    pub fn new() -> Self {
        RewriteOptions::default()
    }

    /// Options that convert to `to` (for example `04.00` or `nytprof`).
    pub fn to(to: impl Into<String>) -> Self {
        RewriteOptions {
            to: Some(to.into()),
        }
    }
}

/// What a rewrite did, beyond writing the output.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RewriteReport {
    /// Information the target format could not carry and that was dropped.
    pub dropped: Vec<String>,
    /// Files carried over unchanged from the input (paths relative to the output), such as an
    /// HPCToolkit database's `metrics/` and `src/`.
    pub copied: Vec<String>,
}

/// What a successful `validate` found that is not damage.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Validated {
    /// Findings, in input order.
    pub findings: Vec<Finding>,
}

impl Validated {
    /// A validation with `findings`.
    pub fn new(findings: Vec<Finding>) -> Validated {
        Validated { findings }
    }
}

/// Something `validate` reports about an input it could decode.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Finding {
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

/// Why an inspection verb failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The format (or this operation on it) is not supported by this build.
    #[error("{op} is not yet supported for this format")]
    Unsupported {
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
    Io(#[from] io::Error),
}

impl Error {
    /// An [`Error::Invalid`] from any decoder error and the offset it carries.
    pub fn invalid(err: impl std::fmt::Display, offset: Option<u64>) -> Self {
        Error::Invalid {
            message: err.to_string(),
            offset,
        }
    }

    /// The byte offset of the damage, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Invalid { offset, .. } => *offset,
            _ => None,
        }
    }
}

/// Writes `value` as pretty JSON followed by a newline.
pub fn write_json(out: &mut dyn Write, value: &impl serde::Serialize) -> io::Result<()> {
    crate::json::to_writer(&mut *out, value, true).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

/// The dump that `dump` writes, as text: for tests and small inputs.
pub fn dump_to_string(
    options: DumpOptions,
    dump: impl FnOnce(&mut Dump<'_>) -> Result<(), Error>,
) -> Result<String, Error> {
    let mut out = Vec::new();
    let mut d = Dump::new(&mut out, options);
    dump(&mut d)?;
    d.finish()?;
    String::from_utf8(out).map_err(|e| Error::Io(io::Error::other(e)))
}
