//! Why a table could not be read, exported or queried.

use std::path::PathBuf;

/// Why a table could not be read, exported or queried.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A table could not be read: the input could not be opened or is damaged, or a table name
    /// is unknown (the tables' own error, as their reader gave it).
    #[error(transparent)]
    Tables(#[from] profcodec_tables::Error),
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
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
    /// An existing dataset that inputs are added to ([`crate::parquet::Dataset`]) is damaged, or
    /// numbers its inputs so high that the new ones do not fit the `input` column.
    #[cfg(feature = "parquet")]
    #[error("the dataset cannot take more inputs: {}: {reason}", path.display())]
    Dataset {
        /// The file or folder of the dataset.
        path: PathBuf,
        /// What is wrong, in words.
        reason: String,
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
    /// A query names bare a table that several sets of the inputs have (`contexts`, which the
    /// HPCToolkit and profile sets both have): the query must say which.
    #[cfg(feature = "sql")]
    #[error("table {table} is in several sets of the inputs: write {qualified}")]
    AmbiguousTable {
        /// The name as the query wrote it.
        table: String,
        /// The tables it may mean, qualified, comma-separated
        /// (`hpctoolkit.contexts, profile.contexts`).
        qualified: String,
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
    #[error("the query needs more than {} of memory", crate::sql::bytes(*.limit as u64))]
    MemoryLimit {
        /// The limit, in bytes.
        limit: usize,
        /// DataFusion's account of the reservation that failed.
        source: datafusion::error::DataFusionError,
    },
    /// A query over the memory limit spilled more to the system's temporary folder than the
    /// session's spill limit allows, and was stopped (its temporary files are removed).
    #[cfg(feature = "sql")]
    #[error(
        "the query needs more than {} of temporary files to spill its sorts and aggregations to",
        crate::sql::bytes(*.limit)
    )]
    SpillLimit {
        /// The limit, in bytes.
        limit: u64,
        /// DataFusion's account of the spill that failed.
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
    /// The byte offset of the damage for an input found damaged
    /// ([`profcodec_tables::Error::Invalid`]), when the reader knows it.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Error::Tables(e) => e.offset(),
            _ => None,
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
