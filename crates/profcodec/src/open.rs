//! Opening a file or database directory, memory-mapped, with its format detected.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::{Format, UnknownFormat};

/// Why [`open`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file's first bytes match no known format.
    #[error("{}: {source}", path.display())]
    Unknown {
        /// The file.
        path: PathBuf,
        /// What was seen.
        source: UnknownFormat,
    },
    /// The path is neither a regular file nor a directory (a FIFO, socket or device): reading
    /// one could block forever or never end, so it is refused before it is opened.
    #[error("{}: not a regular file or a directory: profiles are read from files", .0.display())]
    NotAFile(PathBuf),
    /// A directory that is neither an HPCToolkit database (it has no `meta.db`), an hpcrun
    /// measurement folder (no `.hpcrun` file) nor a Devel::StatProfiler session (no
    /// `=statprofiler` file).
    #[error("{}: a directory is read as an HPCToolkit database (meta.db), an hpcrun measurement folder (.hpcrun files) or a Devel::StatProfiler session (=statprofiler files), and it holds none of them", .0.display())]
    NotADatabase(PathBuf),
}

#[derive(Debug)]
enum Data {
    Mapped(memmap2::Mmap),
    Empty,
}

/// A file opened by [`open`]: its path, detected format and bytes.
#[derive(Debug)]
pub struct Opened {
    path: PathBuf,
    format: Format,
    data: Data,
}

impl Opened {
    /// The path that was opened.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The detected format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file's bytes (empty for a database directory: open its files through the format crate).
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Mapped(map) => map,
            Data::Empty => &[],
        }
    }
}

/// The file's bytes ([`Opened::bytes`]), so that an opened file can back a format crate's
/// owned view (an HPCToolkit `Database<Opened>` keeps its files mapped).
impl AsRef<[u8]> for Opened {
    fn as_ref(&self) -> &[u8] {
        self.bytes()
    }
}

/// Opens `path`, memory-maps it and detects its format.
///
/// A directory is accepted when it holds `meta.db` (an HPCToolkit database), `.hpcrun` files (an
/// hpcrun measurement folder, `*.m`: one profile and trace per thread) or files starting with
/// `=statprofiler` (a Devel::StatProfiler session: rotated and forked files of one run);
/// its files are not mapped here, since the format's reader opens them itself. A path that does
/// not exist but is the template of a StatProfiler session (`statprof.out` for the files
/// `statprof.out.<id>.<ordinal>`) opens that session.
pub fn open(path: impl AsRef<Path>) -> Result<Opened, OpenError> {
    let path = path.as_ref().to_path_buf();
    let io_err = |source| OpenError::Io {
        path: path.clone(),
        source,
    };
    let meta = match std::fs::metadata(&path) {
        Ok(meta) => meta,
        // A StatProfiler template names no file itself: its session's files carry suffixes.
        Err(e) if e.kind() == io::ErrorKind::NotFound && is_statprofiler_template(&path) => {
            return Ok(Opened {
                path,
                format: Format::StatProfiler,
                data: Data::Empty,
            });
        }
        Err(e) => return Err(io_err(e)),
    };
    if meta.is_dir() {
        if path.join("meta.db").is_file() {
            return Ok(Opened {
                path,
                format: Format::HpctoolkitDatabase,
                data: Data::Empty,
            });
        }
        if holds_hpcrun_files(&path) {
            return Ok(Opened {
                path,
                format: Format::Hpcrun,
                data: Data::Empty,
            });
        }
        if holds_statprofiler_files(&path) {
            return Ok(Opened {
                path,
                format: Format::StatProfiler,
                data: Data::Empty,
            });
        }
        return Err(OpenError::NotADatabase(path));
    }
    if !meta.is_file() {
        return Err(OpenError::NotAFile(path));
    }
    let file = File::open(&path).map_err(io_err)?;
    let data = if meta.len() == 0 {
        Data::Empty
    } else {
        Data::Mapped(map(&file).map_err(io_err)?)
    };
    let mut opened = Opened {
        path,
        format: Format::Nytprof,
        data,
    };
    opened.format = Format::detect(opened.bytes()).map_err(|source| OpenError::Unknown {
        path: opened.path.clone(),
        source,
    })?;
    Ok(opened)
}

/// True when `dir` is an hpcrun measurement folder (`*.m`): it holds regular `.hpcrun` or
/// `.hpctrace` files.
fn holds_hpcrun_files(dir: &Path) -> bool {
    #[cfg(feature = "hpcrun")]
    {
        profcodec_hpcrun::MeasurementFolder::open(dir).is_ok()
    }
    #[cfg(not(feature = "hpcrun"))]
    {
        let _ = dir;
        false
    }
}

/// True when `dir` holds a Devel::StatProfiler session (the probe opens regular files only).
fn holds_statprofiler_files(dir: &Path) -> bool {
    #[cfg(feature = "statprofiler")]
    {
        profcodec_statprofiler::session::is_session_dir(dir)
    }
    #[cfg(not(feature = "statprofiler"))]
    {
        let _ = dir;
        false
    }
}

/// True when `path` is a Devel::StatProfiler template (the `-template` given to the profiler,
/// whose files are `<template>.<id>.<ordinal>`) with at least one file of its session.
fn is_statprofiler_template(path: &Path) -> bool {
    #[cfg(feature = "statprofiler")]
    {
        profcodec_statprofiler::session::template_files(path).is_ok_and(|f| !f.is_empty())
    }
    #[cfg(not(feature = "statprofiler"))]
    {
        let _ = path;
        false
    }
}

/// Maps a file read-only.
///
/// This is the one `unsafe` block of the workspace. `Mmap::map` is unsafe because another
/// process may modify or truncate the file while it is mapped, which Rust's aliasing rules cannot
/// express. profcodec only reads profiler output files that their writer has closed; every decoder
/// treats the bytes as untrusted (bounds-checked, no `unsafe`), so a concurrent change can at worst
/// produce a decoding error or, on truncation, a SIGBUS, never undefined behaviour in the decoders'
/// own logic. Users who cannot rule out concurrent truncation should read the file into memory
/// and call the format crates directly.
#[allow(unsafe_code)]
fn map(file: &File) -> io::Result<memmap2::Mmap> {
    // SAFETY: see the function documentation: the mapping is read-only and the file is treated
    // as immutable for the lifetime of the map.
    unsafe { memmap2::Mmap::map(file) }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mkfifo(path: &Path) {
        let status = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
    }

    /// A FIFO given directly, or sitting in a folder that is probed, is never opened (opening it
    /// would block until a writer comes).
    #[test]
    fn fifos_are_refused_without_being_opened() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        mkfifo(&fifo);
        assert!(matches!(open(&fifo), Err(OpenError::NotAFile(_))));
        assert!(matches!(open(dir.path()), Err(OpenError::NotADatabase(_))));
    }

    #[test]
    fn a_folder_of_hpcrun_files_is_a_measurement() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            dir.path().join("a-000000-000.hpcrun"),
            b"HPCRUN-profile____04.00b",
        )
        .expect("write");
        let opened = open(dir.path()).expect("open");
        assert_eq!(opened.format(), Format::Hpcrun);
        assert!(opened.bytes().is_empty());
    }
}
