//! Finding the files of a profiling run and grouping them into processes (statprofiler.md,
//! "Files").
//!
//! With `-template PATH` (the default, `statprof.out`) every process writes
//! `PATH.<48 hex id>.<8 hex ordinal>`; a file still being written ends with `_`. Rotation keeps
//! the id and adds 1 to the ordinal; a forked child gets a new id, ordinal 1, and its header's
//! genealogy names the parent's id and ordinal at the fork. With `-file PATH` the name is exact.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::model::{Genealogy, Header, ProcessId, Profile};
use crate::raw::MAGIC;
use crate::read::Reader;

/// One file of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFile {
    /// Its path.
    pub path: PathBuf,
    /// True for a file still open (`<name>_`), whose end may be missing.
    pub open: bool,
    /// Its header.
    pub header: Header,
}

impl SessionFile {
    /// The genealogy of the header (all zero when the header has none).
    pub fn genealogy(&self) -> Genealogy {
        self.header.genealogy.unwrap_or_default()
    }
}

/// One process: its files in ordinal order, and where it was forked from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    /// The process id of its headers.
    pub id: ProcessId,
    /// The parent process and the parent's ordinal at the fork, for a child.
    pub parent: Option<(ProcessId, u32)>,
    /// Its files, ordered by ordinal.
    pub files: Vec<SessionFile>,
}

impl Process {
    /// The process's stream: every file read in ordinal order, one [`Profile`] per file (each
    /// file has its own header; the body records continue where the previous file's
    /// file-end record left off).
    pub fn read(&self) -> Result<Vec<Profile>, SessionError> {
        self.files
            .iter()
            .map(|f| {
                let data = std::fs::read(&f.path).map_err(|source| SessionError::Io {
                    path: f.path.clone(),
                    source,
                })?;
                Profile::parse(&data).map_err(|source| SessionError::Invalid {
                    path: f.path.clone(),
                    source,
                })
            })
            .collect()
    }
}

/// Why a session could not be listed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// A directory or file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file's header could not be read.
    #[error("{}: {source}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The error.
        source: Error,
    },
}

/// True when `name` is `<prefix>.<48 hex>.<8 hex>` or that with a trailing `_`.
fn matches_template(name: &str, prefix: &str) -> bool {
    let Some(rest) = name.strip_prefix(prefix) else {
        return false;
    };
    let rest = rest.strip_suffix('_').unwrap_or(rest);
    let b = rest.as_bytes();
    b.len() == 1 + 48 + 1 + 8
        && b[0] == b'.'
        && b[49] == b'.'
        && b[1..49].iter().all(u8::is_ascii_hexdigit)
        && b[50..].iter().all(u8::is_ascii_hexdigit)
}

fn starts_with_magic(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 13];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == MAGIC
}

/// Lists the files of a run: for a directory, every StatProfiler file in it (template names,
/// `-file` names, open files); for any other path, the template files `<path>.<id>.<ordinal>`
/// (and `<path>_` files) plus `<path>` itself when it is a StatProfiler file (`-file`).
pub fn find_files(path: &Path) -> Result<Vec<PathBuf>, SessionError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SessionError::Io { path, source }
    };
    let (dir, prefix) = if path.is_dir() {
        (path.to_path_buf(), None)
    } else {
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let prefix = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        (dir, Some(prefix))
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io_err(&dir))? {
        let entry = entry.map_err(io_err(&dir))?;
        let p = entry.path();
        if !p.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let wanted = match &prefix {
            None => starts_with_magic(&p),
            Some(prefix) => {
                matches_template(&name, prefix)
                    || ((name == *prefix || name == format!("{prefix}_")) && starts_with_magic(&p))
            }
        };
        if wanted {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Reads the header of every file and groups the files into processes: by genealogy id, files
/// ordered by ordinal; a process's parent link comes from its first file. Processes are ordered
/// parents before children, then by id.
pub fn processes(paths: &[PathBuf]) -> Result<Vec<Process>, SessionError> {
    let mut files = Vec::new();
    for path in paths {
        let file = File::open(path).map_err(|source| SessionError::Io {
            path: path.clone(),
            source,
        })?;
        let reader = Reader::new(BufReader::new(file)).map_err(|source| SessionError::Invalid {
            path: path.clone(),
            source,
        })?;
        let open = path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with('_'));
        files.push(SessionFile {
            path: path.clone(),
            open,
            header: reader.header().clone(),
        });
    }
    files.sort_by_key(|f| (f.genealogy().id, f.genealogy().ordinal, f.path.clone()));
    let mut out: Vec<Process> = Vec::new();
    for file in files {
        let g = file.genealogy();
        match out.last_mut() {
            Some(p) if p.id == g.id => p.files.push(file),
            _ => out.push(Process {
                id: g.id,
                parent: (!g.parent_id.is_zero()).then_some((g.parent_id, g.parent_ordinal)),
                files: vec![file],
            }),
        }
    }
    // Parents first: a process's depth is the length of its parent chain.
    let depth = |p: &Process| {
        let mut d = 0usize;
        let mut cur = p.parent;
        while let Some((id, _)) = cur {
            d += 1;
            if d > out.len() {
                break;
            }
            cur = out.iter().find(|q| q.id == id).and_then(|q| q.parent);
        }
        d
    };
    let mut keyed: Vec<(usize, Process)> = out.iter().map(|p| (depth(p), p.clone())).collect();
    keyed.sort_by_key(|(d, p)| (*d, p.id));
    Ok(keyed.into_iter().map(|(_, p)| p).collect())
}

/// [`find_files`] then [`processes`].
pub fn open_session(path: &Path) -> Result<Vec<Process>, SessionError> {
    processes(&find_files(path)?)
}
