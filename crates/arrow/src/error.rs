//! Why a table could not be read, exported or queried.

use std::path::PathBuf;

/// Why a table could not be read, exported or queried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input could not be opened, or is no profile profcodec knows.
    #[error(transparent)]
    Open(#[from] profcodec::OpenError),
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
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
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
    /// A record batch did not fit its table's schema (a bug of this crate), or Arrow refused
    /// an operation.
    #[error("table {table}: {source}")]
    Arrow {
        /// The table.
        table: &'static str,
        /// Arrow's error.
        source: arrow_schema::ArrowError,
    },
    /// Parquet could not encode or write a table.
    #[cfg(feature = "parquet")]
    #[error("{}: {source}", path.display())]
    Parquet {
        /// The file being written.
        path: PathBuf,
        /// The parquet crate's error.
        source: parquet::errors::ParquetError,
    },
    /// DataFusion could not plan or run a query. The message names tables as the query does:
    /// the internal catalog (`datafusion.public.`) that DataFusion prefixes them with is left
    /// out, since no query can name it usefully.
    #[cfg(feature = "sql")]
    #[error("{}", crate::sql::message(.0))]
    Sql(#[from] datafusion::error::DataFusionError),
    /// A query names a table that none of the session's inputs has.
    #[cfg(feature = "sql")]
    #[error("no table {table} in the inputs: they have {known}")]
    NoSuchTable {
        /// The name as the query wrote it.
        table: String,
        /// The tables the session has, comma-separated.
        known: String,
    },
    /// A statement that would write or change something (`COPY`, `INSERT`, `CREATE`, `DROP`,
    /// `SET`...): a session only reads, so that a query handed over by someone else cannot
    /// write files or change the session.
    #[cfg(feature = "sql")]
    #[error("{what} is refused: SQL here only reads (SELECT, WITH, EXPLAIN, SHOW, DESCRIBE)")]
    ReadOnly {
        /// What the statement is (`COPY`, `INSERT INTO`, `CreateMemoryTable`...).
        what: String,
    },
    /// A query needed more memory than the session's limit, and was stopped.
    #[cfg(feature = "sql")]
    #[error("the query needs more than {} of memory", crate::sql::bytes(*.limit))]
    MemoryLimit {
        /// The limit, in bytes.
        limit: usize,
        /// DataFusion's account of the reservation that failed.
        source: datafusion::error::DataFusionError,
    },
    /// A query ran longer than the session's timeout, and was cancelled.
    #[cfg(feature = "sql")]
    #[error("the query was cancelled after running {}", crate::sql::seconds(*.after))]
    Timeout {
        /// The timeout.
        after: std::time::Duration,
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
    pub(crate) fn invalid(
        path: &std::path::Path,
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

    #[cfg(any(feature = "parquet", feature = "sql"))]
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
