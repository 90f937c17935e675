//! Why a table could not be read.

use std::path::{Path, PathBuf};

/// Why a table could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input, or one of its files, could not be opened, or is no profile the opener knows:
    /// the opener's error, which names the file.
    #[error(transparent)]
    Open(Box<dyn std::error::Error + Send + Sync>),
    /// The input is damaged: the format crate's error, which says what is wrong and where.
    #[error("{}: {format}: {source}", path.display())]
    Invalid {
        /// The file (or folder) read.
        path: PathBuf,
        /// The format it was read as.
        format: &'static str,
        /// The byte offset of the damage, when the reader knows it.
        offset: Option<u64>,
        /// The format crate's error.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The input is of a kind the tables do not read (for example one file of an HPCToolkit
    /// database, whose tables need its folder).
    #[error("{}: {reason}", path.display())]
    Unsupported {
        /// The input.
        path: PathBuf,
        /// What would be read instead.
        reason: String,
    },
    /// A table name that the set does not have.
    #[error("no table {table:?} in the {set} tables: the set has {known}")]
    UnknownTable {
        /// The set (`hpctoolkit`, `profile`...).
        set: &'static str,
        /// The name asked for.
        table: String,
        /// The set's tables, comma-separated.
        known: String,
    },
    /// The input's profile model could not be made (the tables of the `profile` set).
    #[error("the profile model: {0}")]
    Profile(Box<dyn std::error::Error + Send + Sync>),
    /// A record batch did not fit its table's schema (a bug of the tables' reader), or Arrow
    /// refused an operation.
    #[error("table {table}: {source}")]
    Arrow {
        /// The table.
        table: &'static str,
        /// Arrow's error.
        source: arrow_schema::ArrowError,
    },
}

impl Error {
    /// The byte offset of the damage for [`Error::Invalid`], when the reader knows it.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Invalid { offset, .. } => *offset,
            _ => None,
        }
    }

    /// An [`Error::Invalid`] for `path` read as `format`.
    pub fn invalid(
        path: &Path,
        format: &'static str,
        offset: Option<u64>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Error {
        Error::Invalid {
            path: path.to_path_buf(),
            format,
            offset,
            source: Box::new(source),
        }
    }

    /// An [`Error::Open`]: the opener's error (a file of a folder input that
    /// [`Members::open`](profcodec_common::Members::open) could not open, say).
    pub fn open(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Error {
        Error::Open(source.into())
    }
}
