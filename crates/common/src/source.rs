//! One input as the caller opened it: a file's bytes, or a folder whose files the format crate
//! opens through [`Members`]. The caller (the umbrella `profcodec`) maps the files and notices
//! files cut while read; a format crate maps nothing itself and decides which files it reads.

use std::io;
use std::path::Path;

/// The bytes of one file of a folder input, opened by the caller.
pub type Member = Box<dyn AsRef<[u8]> + Send + Sync>;

/// How a format crate reads the files of a folder input: the caller opens them (the umbrella
/// maps them and notices files cut while read), the format decides which.
pub trait Members {
    /// The bytes of the file at `path`. An error's message names the file.
    fn open(&self, path: &Path) -> io::Result<Member>;
}

/// [`Members`] read whole with [`std::fs::read`]: for callers that map nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadWhole;

impl Members for ReadWhole {
    fn open(&self, path: &Path) -> io::Result<Member> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(Box::new(bytes)),
            Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
}

/// One input, as the caller opened it: a file's bytes, or a folder whose files the format opens
/// through [`Members`].
#[derive(Clone, Copy)]
pub struct Source<'a> {
    /// The path the user named (a file, or a folder: an HPCToolkit database, an hpcrun
    /// measurement, a StatProfiler session or its template).
    pub path: &'a Path,
    /// The file's bytes; empty for a folder.
    pub bytes: &'a [u8],
    /// Opens the files of a folder input (and the siblings a file names).
    pub members: &'a dyn Members,
}

impl std::fmt::Debug for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("path", &self.path)
            .field("bytes", &self.bytes.len())
            .finish_non_exhaustive()
    }
}

impl<'a> Source<'a> {
    /// A file's bytes, its other files read whole ([`ReadWhole`]).
    pub fn file(path: &'a Path, bytes: &'a [u8]) -> Source<'a> {
        Source {
            path,
            bytes,
            members: &ReadWhole,
        }
    }

    /// True for a folder input (no bytes of its own).
    pub fn is_folder(&self) -> bool {
        self.bytes.is_empty() && self.path.is_dir()
    }
}
