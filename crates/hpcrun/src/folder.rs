//! A measurement folder (`*.m`): the `.hpcrun` profiles and `.hpctrace` traces hpcrun writes, one
//! pair per thread, as one input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{Error, Measurement, Trace};

/// Why a measurement folder or one of its files could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FolderError {
    /// The folder or a file in it could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The folder holds no `.hpcrun` or `.hpctrace` file.
    #[error("{}: not a measurement folder: it holds no .hpcrun or .hpctrace file", .0.display())]
    Empty(PathBuf),
    /// A file of the folder is damaged.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: Error,
    },
}

/// The files of one thread (or GPU stream) of a measurement: hpcrun names them
/// `<program>-<rank>-<thread>-<host id>-<pid>-<generation>.hpcrun` and the same stem with
/// `.hpctrace`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadFiles {
    /// The file name without its extension.
    pub stem: String,
    /// The MPI rank named in the file name (the fifth field from the end), when it is a number.
    pub rank: Option<u64>,
    /// The thread named in the file name (the fourth field from the end), when it is a number;
    /// hpcrun numbers GPU streams from 500.
    pub thread: Option<u64>,
    /// The `.hpcrun` profile, when there is one.
    pub profile: Option<PathBuf>,
    /// The `.hpctrace` trace, when there is one.
    pub trace: Option<PathBuf>,
}

impl ThreadFiles {
    /// Reads and decodes the profile ([`crate::read_measurement`]), when there is one.
    pub fn read_profile(&self) -> Option<Result<Measurement, FolderError>> {
        let path = self.profile.as_ref()?;
        Some(read_file(path).and_then(|bytes| {
            crate::read_measurement(&bytes).map_err(|source| FolderError::Decode {
                path: path.clone(),
                source,
            })
        }))
    }

    /// Reads and decodes the trace ([`crate::read_trace`]), when there is one.
    pub fn read_trace(&self) -> Option<Result<Trace, FolderError>> {
        let path = self.trace.as_ref()?;
        Some(read_file(path).and_then(|bytes| {
            crate::read_trace(&bytes).map_err(|source| FolderError::Decode {
                path: path.clone(),
                source,
            })
        }))
    }
}

/// Reads a file of a folder, naming it in the error.
pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, FolderError> {
    std::fs::read(path).map_err(|source| FolderError::Io {
        path: path.to_owned(),
        source,
    })
}

/// A measurement folder: every `.hpcrun` and `.hpctrace` regular file directly in it, paired by
/// thread.
///
/// Listing opens no file: entries are selected by name and kind (regular files only, so a FIFO
/// or a device in the folder cannot block the listing), paired through a map by stem, and sorted
/// by (rank, thread, stem): O(entries log entries).
///
/// ```
/// # use profcodec_hpcrun::MeasurementFolder;
/// # let dir = std::env::temp_dir().join(format!("hpcrun-folder-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpcrun/demo-04.00b.hpcrun");
/// # std::fs::copy(demo, dir.join("demo-000000-000-0-1-0.hpcrun")).unwrap();
/// let folder = MeasurementFolder::open(&dir)?;
/// for thread in folder.threads() {
///     if let Some(profile) = thread.read_profile() {
///         let m = profile?;
///         println!("thread {:?}: {} nodes", thread.thread, m.epochs[0].cct.len());
///     }
/// }
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), profcodec_hpcrun::FolderError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MeasurementFolder {
    path: PathBuf,
    threads: Vec<ThreadFiles>,
}

impl MeasurementFolder {
    /// Lists the folder at `path`; [`FolderError::Empty`] when it holds no `.hpcrun` or
    /// `.hpctrace` regular file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, FolderError> {
        let path = path.as_ref().to_path_buf();
        let io = |source| FolderError::Io {
            path: path.clone(),
            source,
        };
        let mut by_stem: BTreeMap<String, ThreadFiles> = BTreeMap::new();
        for entry in std::fs::read_dir(&path).map_err(io)? {
            let entry = entry.map_err(io)?;
            let file = entry.path();
            let Some(name) = file.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let (stem, is_profile) = if let Some(stem) = name.strip_suffix(".hpcrun") {
                (stem, true)
            } else if let Some(stem) = name.strip_suffix(".hpctrace") {
                (stem, false)
            } else {
                continue;
            };
            // The kind of what the name leads to (a symbolic link to a file is a file).
            if !std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
                continue;
            }
            crate::work::add(1);
            let slot = by_stem
                .entry(stem.to_owned())
                .or_insert_with(|| ThreadFiles::named(stem));
            if is_profile {
                slot.profile = Some(file);
            } else {
                slot.trace = Some(file);
            }
        }
        if by_stem.is_empty() {
            return Err(FolderError::Empty(path));
        }
        let mut threads: Vec<ThreadFiles> = by_stem.into_values().collect();
        threads.sort_by(|a, b| (a.rank, a.thread, &a.stem).cmp(&(b.rank, b.thread, &b.stem)));
        Ok(MeasurementFolder { path, threads })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every thread's files, sorted by rank, thread and name.
    pub fn threads(&self) -> &[ThreadFiles] {
        &self.threads
    }

    /// Every file, profiles and traces, in thread order (a thread's profile before its trace).
    pub fn files(&self) -> impl Iterator<Item = &Path> + '_ {
        self.threads
            .iter()
            .flat_map(|t| t.profile.iter().chain(t.trace.iter()))
            .map(PathBuf::as_path)
    }
}

impl ThreadFiles {
    fn named(stem: &str) -> Self {
        // <program>-<rank>-<thread>-<host id>-<pid>-<generation>; the program may hold dashes,
        // so the fields are counted from the end.
        let mut fields = stem.rsplit('-');
        let number = |f: Option<&str>| f.and_then(|f| f.parse::<u64>().ok());
        let (_generation, _pid, _host) = (fields.next(), fields.next(), fields.next());
        let thread = number(fields.next());
        let rank = number(fields.next());
        let named = fields.next().is_some();
        ThreadFiles {
            stem: stem.to_owned(),
            rank: rank.filter(|_| named),
            thread: thread.filter(|_| named),
            profile: None,
            trace: None,
        }
    }
}
