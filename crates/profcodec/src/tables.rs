//! The tables of any input (feature `tables`): its format's raw-record tables, which the format
//! crate reads (its `tables` module), and the profile model's, as Arrow record batches with
//! documented, stable schemas. This is the one place that dispatches the tables over formats;
//! the Parquet export and SQL over them are `profcodec-arrow`'s (features `parquet` and `sql`).
//!
//! ```
//! use profcodec::tables::{Input, ScanOptions, Tables};
//!
//! # let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out");
//! let input = Input::open(path)?;
//! let mut lines = 0;
//! for batch in input.batches("lines", &ScanOptions::new())? {
//!     lines += batch?.num_rows();
//! }
//! println!("{}: {lines} lines with statements", input.set());
//! # assert!(lines > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;
use std::sync::Arc;

pub use profcodec_arrow::{InputTables, ProfileTables};
pub use profcodec_tables::{Batches, Error, ScanOptions, SourceTables, TableDef, TableSet, Tables};

use crate::{Format, OpenError, OpenOptions, Opened};

/// Every set of tables this build reads, in order: each format's, then the profile model's.
pub const SETS: &[TableSet] = &[
    #[cfg(feature = "hpctoolkit")]
    profcodec_hpctoolkit::tables::SET,
    #[cfg(feature = "hpcrun")]
    profcodec_hpcrun::tables::SET,
    #[cfg(feature = "nytprof")]
    profcodec_nytprof::tables::SET,
    #[cfg(feature = "easyprofiler")]
    profcodec_easyprofiler::tables::SET,
    #[cfg(feature = "statprofiler")]
    profcodec_statprofiler::tables::SET,
    profcodec_arrow::profile::SET,
];

/// The set called `name` (`nytprof`, `profile`), if this build reads it.
pub fn set(name: &str) -> Option<TableSet> {
    SETS.iter().copied().find(|s| s.name() == name)
}

/// The set of `format`'s raw-record tables, if this build reads them (an HPCToolkit file's set
/// is the database's, whose folder its tables are read from).
pub fn format_set(format: Format) -> Option<TableSet> {
    set(format.feature())
}

/// One input, opened, with its format's tables.
#[derive(Debug)]
pub struct Input {
    opened: Arc<Opened>,
    reader: Box<dyn SourceTables>,
}

impl Input {
    /// Opens `path` as [`open`](crate::open) does (a file, an HPCToolkit database folder, an
    /// hpcrun measurement folder, a StatProfiler session folder or template) and checks what its
    /// tables need (headers, the HPCToolkit context tree); table contents are read by
    /// [`Tables::batches`].
    pub fn open(path: impl AsRef<Path>) -> Result<Input, Error> {
        Input::open_with(path, OpenOptions::new())
    }

    /// [`Input::open`] with `options`: which files are read into memory and which are mapped.
    pub fn open_with(path: impl AsRef<Path>, options: OpenOptions) -> Result<Input, Error> {
        let path = path.as_ref();
        let opened = options.open(path).map_err(Error::open)?;
        let source = opened.source();
        let reader = match opened.format().feature() {
            #[cfg(feature = "hpctoolkit")]
            "hpctoolkit" => profcodec_hpctoolkit::tables::TableReader::open(&source).map(boxed),
            #[cfg(feature = "hpcrun")]
            "hpcrun" => profcodec_hpcrun::tables::TableReader::open(&source).map(boxed),
            #[cfg(feature = "nytprof")]
            "nytprof" => profcodec_nytprof::tables::TableReader::open(&source).map(boxed),
            #[cfg(feature = "easyprofiler")]
            "easyprofiler" => profcodec_easyprofiler::tables::TableReader::open(&source).map(boxed),
            #[cfg(feature = "statprofiler")]
            "statprofiler" => profcodec_statprofiler::tables::TableReader::open(&source).map(boxed),
            _ => Err(Error::Unsupported {
                path: path.to_path_buf(),
                reason: format!("{} has no tables in this build", opened.format()),
            }),
        }
        .map_err(opener)?;
        Ok(Input {
            opened: Arc::new(opened),
            reader,
        })
    }

    /// The path opened.
    pub fn path(&self) -> &Path {
        self.opened.path()
    }

    /// The detected format.
    pub fn format(&self) -> Format {
        self.opened.format()
    }

    /// The `profile` tables of this input: its profile model ([`to_profile`](crate::to_profile)),
    /// made when one of them is first read; a failure names the input and its format.
    pub fn profile_tables(&self) -> ProfileTables {
        let opened = Arc::clone(&self.opened);
        ProfileTables::lazy(move || {
            crate::to_profile(&opened).map_err(|e| {
                format!("{}: {}: {e}", opened.path().display(), opened.format()).into()
            })
        })
    }

    /// This input's tables as an export or a SQL session takes them: its format's set, then the
    /// profile model's ([`Input::profile_tables`]).
    pub fn into_tables(self) -> InputTables {
        let profile = Arc::new(self.profile_tables());
        let path = self.path().to_path_buf();
        InputTables::new(path, Arc::new(self)).with(profile)
    }
}

impl Tables for Input {
    fn set(&self) -> TableSet {
        self.reader.set()
    }

    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error> {
        let batches = self
            .reader
            .batches(self.opened.source(), name, options)
            .map_err(opener)?;
        Ok(Box::new(batches.map(|batch| batch.map_err(opener))))
    }

    fn check_intact(&self) -> Result<(), Error> {
        self.opened.check_intact().map_err(Error::open)
    }
}

/// A format's tables, boxed for [`Input`].
fn boxed<T: SourceTables + 'static>(tables: T) -> Box<dyn SourceTables> {
    Box::new(tables)
}

/// `e` with the [`OpenError`] of a file of the input as the error it holds: a format crate
/// opens the files of a folder input through [`Opened`]'s `Members`, which hands the
/// [`OpenError`] over inside an I/O error; a caller looks for the [`OpenError`] itself, as it
/// finds it for the input.
fn opener(e: Error) -> Error {
    let Error::Open(e) = e else { return e };
    let e: Box<dyn std::error::Error + Send + Sync> = match e.downcast::<std::io::Error>() {
        Ok(io) if io.get_ref().is_some_and(|inner| inner.is::<OpenError>()) => {
            let kind = io.kind();
            (*io)
                .into_inner()
                .unwrap_or_else(|| Box::new(std::io::Error::from(kind)))
        }
        Ok(io) => io,
        Err(other) => other,
    };
    Error::Open(e)
}
