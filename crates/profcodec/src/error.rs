//! [`ReadError`]: why reading an opened input failed, whatever its format.

use std::io;
use std::path::Path;

use crate::OpenError;

/// Why reading an [`Opened`](crate::Opened) input (its profile model, its summary) failed.
///
/// Every format crate's error converts into [`ReadError::Invalid`], keeping its message (which
/// names the field and the byte offset, in the workspace's style) and its offset.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// The input, or a file of its database, folder or session, is damaged.
    #[error("{message}")]
    Invalid {
        /// The decoder's message: what is wrong, then the field and the byte offset.
        message: String,
        /// The byte offset of the damage, when the decoder knows it.
        offset: Option<u64>,
    },
    /// The input cannot give what was asked: a trace holds no metric values, a lone profile.db
    /// has no context tree, or the format's cargo feature is not compiled in.
    #[error("{0}")]
    Unsupported(String),
    /// A file of a database, folder or session could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// A file of a session could not be read.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl ReadError {
    /// The byte offset of the damage, for [`ReadError::Invalid`] when the decoder knows it.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ReadError::Invalid { offset, .. } => *offset,
            _ => None,
        }
    }

    /// An [`ReadError::Invalid`] from any error and the offset it carries.
    pub fn invalid(err: impl std::fmt::Display, offset: Option<u64>) -> Self {
        ReadError::Invalid {
            message: err.to_string(),
            offset,
        }
    }

    /// This error with `file` named before its message: the file of a database, folder or
    /// session that holds the damage.
    pub fn in_file(self, file: &Path) -> Self {
        match self {
            ReadError::Invalid { message, offset } => ReadError::Invalid {
                message: format!("{}: {message}", file.display()),
                offset,
            },
            other => other,
        }
    }
}

/// The error of an input whose format's cargo feature is not compiled in.
#[allow(dead_code)] // every format compiled in: no input lacks its feature
pub(crate) fn not_compiled(input: &crate::Opened, feature: &str) -> ReadError {
    ReadError::Unsupported(format!(
        "{}: this build reads no {} (cargo feature `{feature}` of profcodec)",
        input.path().display(),
        input.format()
    ))
}

/// `From` for each format crate's error type, keeping the message and the offset.
macro_rules! from_format_error {
    ($feature:literal, $error:ty) => {
        #[cfg(feature = $feature)]
        impl From<$error> for ReadError {
            fn from(e: $error) -> Self {
                let offset = e.offset();
                ReadError::invalid(e, offset)
            }
        }
    };
}

from_format_error!("hpctoolkit", profcodec_hpctoolkit::Error);
from_format_error!("hpcrun", profcodec_hpcrun::Error);
from_format_error!("nytprof", profcodec_nytprof::Error);
from_format_error!("easyprofiler", profcodec_easyprofiler::Error);
from_format_error!("statprofiler", profcodec_statprofiler::Error);
