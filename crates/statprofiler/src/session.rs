//! Finding the files of a profiling run and grouping them into processes (the crate docs,
//! "Files").
//!
//! With `-template PATH` (the default, `statprof.out`) every process writes
//! `PATH.<48 hex id>.<8 hex ordinal>`; a file still being written ends with `_`. Rotation keeps
//! the id and adds 1 to the ordinal; a forked child gets a new id, ordinal 1, and its header's
//! genealogy names the parent's id and ordinal at the fork. With `-file PATH` the name is exact.

use std::collections::HashMap;
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

/// True when `path` is a regular file (after symlinks) that starts with the magic. Only regular
/// files are opened: opening a FIFO or a device to read its first bytes can block forever.
fn starts_with_magic(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 13];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == MAGIC
}

/// True when some regular file directly in `dir` starts with `=statprofiler`, which makes `dir`
/// a session (the files of one run: rotations and forks). Stops at the first such file; entries
/// that are not regular files (FIFOs, sockets, devices, folders) are never opened, so the probe
/// cannot block.
pub fn is_session_dir(dir: &Path) -> bool {
    probe_dir(dir, &mut 0)
}

/// [`is_session_dir`], counting the files it opens.
fn probe_dir(dir: &Path, opened: &mut u64) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let path = entry.path();
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            return false;
        }
        *opened += 1;
        starts_with_magic(&path)
    })
}

/// The `-template` of a file named `<template>.<48 hex id>.<8 hex ordinal>` (or that with the
/// trailing `_` of a file still being written): `run/statprof.out` for
/// `run/statprof.out.00007f92….00000001`.
pub fn template_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix('_').unwrap_or(name);
    let cut = name.len().checked_sub(1 + 48 + 1 + 8)?;
    let template = name.get(..cut)?;
    matches_template(name, template).then(|| path.with_file_name(template))
}

/// The files of the session a template prefix names: `prefix` is the path given to the profiler
/// with `-template` (`statprof.out` by default), and its files are
/// `<prefix>.<48 hex id>.<8 hex ordinal>` (with a trailing `_` while still open), in the prefix's
/// folder. Only regular files are listed, sorted by name; an empty list means the prefix names no
/// session. One pass over the folder, no file opened.
///
/// ```no_run
/// use std::path::Path;
/// use profcodec_statprofiler::session::{processes, template_files};
/// let files = template_files(Path::new("run/statprof.out"))?;
/// if !files.is_empty() {
///     for process in processes(&files)? {
///         println!("{}: {} files", process.id, process.files.len());
///     }
/// }
/// # Ok::<(), profcodec_statprofiler::session::SessionError>(())
/// ```
pub fn template_files(prefix: &Path) -> Result<Vec<PathBuf>, SessionError> {
    let Some(name) = prefix.file_name().and_then(|n| n.to_str()) else {
        return Ok(Vec::new());
    };
    let dir = match prefix.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let io_err = |source| SessionError::Io {
        path: dir.clone(),
        source,
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).map_err(io_err)? {
        let entry = entry.map_err(io_err)?;
        let file_name = entry.file_name();
        let Some(file_name) = file_name.to_str() else {
            continue;
        };
        let path = entry.path();
        if matches_template(file_name, name) && std::fs::metadata(&path).is_ok_and(|m| m.is_file())
        {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
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
        // `metadata` follows symlinks: FIFOs and devices are skipped before anything opens them.
        if !std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
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
///
/// Cost: one header read per file, then a sort and one pass over a map of the processes: the
/// depth of each process in the fork tree is computed once and remembered, so a chain of `P`
/// forks costs `O(P log P)`, not a walk per process. A genealogy that loops back on itself (no
/// real run writes one) puts the processes of the loop at the depth where the loop was found.
pub fn processes(paths: &[PathBuf]) -> Result<Vec<Process>, SessionError> {
    let mut files = Vec::with_capacity(paths.len());
    for path in paths {
        files.push(read_session_file(path)?);
    }
    Ok(group_processes(files))
}

/// The header of one file of a session.
fn read_session_file(path: &Path) -> Result<SessionFile, SessionError> {
    let file = File::open(path).map_err(|source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = Reader::new(BufReader::new(file)).map_err(|source| SessionError::Invalid {
        path: path.to_path_buf(),
        source,
    })?;
    let open = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with('_'));
    Ok(SessionFile {
        path: path.to_path_buf(),
        open,
        header: reader.header().clone(),
    })
}

/// Groups files into processes, parents before children (see [`processes`]).
pub fn group_processes(mut files: Vec<SessionFile>) -> Vec<Process> {
    files.sort_by(|a, b| {
        let (ga, gb) = (a.genealogy(), b.genealogy());
        (ga.id, ga.ordinal, &a.path).cmp(&(gb.id, gb.ordinal, &b.path))
    });
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
    let depths = fork_depths(&out, &mut 0);
    let mut keyed: Vec<(usize, Process)> = depths.into_iter().zip(out).collect();
    keyed.sort_by_key(|(d, p)| (*d, p.id));
    keyed.into_iter().map(|(_, p)| p).collect()
}

/// The number of known ancestors of each process (0 for a root or a process whose parent is not
/// in the session). Each process is visited a bounded number of times: a walk up the chain stops
/// at the first process whose depth is known, and then fills in the depths of the processes it
/// passed.
fn fork_depths(procs: &[Process], steps: &mut u64) -> Vec<usize> {
    const UNKNOWN: usize = usize::MAX;
    let index: HashMap<ProcessId, usize> =
        procs.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    let parent_of = |i: usize| -> Option<usize> {
        procs[i]
            .parent
            .and_then(|(id, _)| index.get(&id).copied())
            .filter(|&j| j != i)
    };
    let mut depth = vec![UNKNOWN; procs.len()];
    // Marks the processes of the walk in progress, to stop on a loop.
    let mut on_path = vec![false; procs.len()];
    let mut path = Vec::new();
    for start in 0..procs.len() {
        let mut cur = Some(start);
        let mut base = 0;
        while let Some(i) = cur {
            *steps += 1;
            if depth[i] != UNKNOWN {
                base = depth[i] + 1;
                break;
            }
            if on_path[i] {
                break;
            }
            on_path[i] = true;
            path.push(i);
            cur = parent_of(i);
        }
        for (k, &i) in path.iter().rev().enumerate() {
            depth[i] = base + k;
            on_path[i] = false;
        }
        path.clear();
    }
    depth
}

/// [`find_files`] then [`processes`].
pub fn open_session(path: &Path) -> Result<Vec<Process>, SessionError> {
    processes(&find_files(path)?)
}

/// The session `path` names as an input: a folder of StatProfiler files ([`open_session`]),
/// or a `-template` prefix that is no file itself ([`template_files`], then [`processes`]);
/// `Ok(None)` for a regular file, which is read on its own.
pub fn session_of(path: &Path) -> Result<Option<Vec<Process>>, SessionError> {
    if path.is_dir() {
        return open_session(path).map(Some);
    }
    if path.is_file() {
        return Ok(None);
    }
    processes(&template_files(path)?).map(Some)
}

/// The session of an input its caller has read: `Ok(None)` when it has bytes of its own (one
/// file, whatever its path names: `-` is standard input), else [`session_of`] its path (a
/// folder or a template, which have none).
pub fn session_of_input(path: &Path, bytes: &[u8]) -> Result<Option<Vec<Process>>, SessionError> {
    if !bytes.is_empty() {
        return Ok(None);
    }
    session_of(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Genealogy;

    fn process(i: u32, parent: Option<u32>) -> Process {
        let id = |n: u32| ProcessId::from_words([n + 1, 0, 0, 0, 0, 0]);
        Process {
            id: id(i),
            parent: parent.map(|p| (id(p), 1)),
            files: vec![SessionFile {
                path: PathBuf::from(format!("f{i}")),
                open: false,
                header: Header {
                    genealogy: Some(Genealogy {
                        ordinal: 1,
                        parent_ordinal: 1,
                        id: id(i),
                        parent_id: parent.map_or(ProcessId::default(), id),
                    }),
                    ..Header::default()
                },
            }],
        }
    }

    /// A fork chain of 4,000 processes, listed children first: each process is visited a
    /// bounded number of times (a walk per process would visit P^2 / 2 = 8 M; with a linear find
    /// per step, P^3).
    #[test]
    fn a_long_fork_chain_costs_linear_work() {
        const P: u32 = 4000;
        let procs: Vec<Process> = (0..P).rev().map(|i| process(i, i.checked_sub(1))).collect();
        let mut steps = 0;
        let depths = fork_depths(&procs, &mut steps);
        assert!(steps <= 2 * u64::from(P), "{steps} steps");
        assert_eq!(depths[0], P as usize - 1);
        assert_eq!(depths[P as usize - 1], 0);
        let grouped = group_processes(procs.into_iter().flat_map(|p| p.files).collect());
        assert_eq!(grouped.len(), P as usize);
        assert!(
            grouped
                .windows(2)
                .all(|w| w[1].parent.map(|p| p.0) == Some(w[0].id))
        );
    }

    /// A genealogy that loops back on itself ends the walk instead of going round.
    #[test]
    fn a_fork_loop_ends() {
        let procs = vec![
            process(0, Some(2)),
            process(1, Some(0)),
            process(2, Some(1)),
        ];
        let mut steps = 0;
        let depths = fork_depths(&procs, &mut steps);
        assert!(steps <= 6, "{steps} steps");
        let mut sorted = depths.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2]);
    }

    /// A folder holding a FIFO (and a file that is not a profile): the probe opens the regular
    /// file only. Were the FIFO opened, a writer thread would let the open return, so a
    /// regression fails the count instead of hanging the test.
    #[cfg(unix)]
    #[test]
    fn probing_a_folder_never_opens_a_fifo() {
        let dir = std::env::temp_dir().join(format!("statprofiler-fifo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo here: nothing to test
        }
        std::fs::write(dir.join("notes.txt"), b"not a profile").unwrap();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let unblock = {
            let (fifo, done) = (fifo.clone(), done.clone());
            std::thread::spawn(move || {
                use std::os::unix::fs::OpenOptionsExt;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    // O_NONBLOCK: fails until a reader has the FIFO open.
                    let _ = std::fs::OpenOptions::new()
                        .write(true)
                        .custom_flags(0o4000)
                        .open(&fifo);
                    std::thread::yield_now();
                }
            })
        };
        let mut opened = 0;
        let found = probe_dir(&dir, &mut opened);
        let listed = find_files(&dir).unwrap();
        let template = template_files(&dir.join("pipe")).unwrap();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        unblock.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!found);
        assert_eq!(opened, 1);
        assert!(listed.is_empty() && template.is_empty());
    }

    #[test]
    fn template_of_a_file_name() {
        let name = "run/statprof.out.00007f92000000026b026e8d47f23c445118912d397fb662.00000002";
        assert_eq!(
            template_of(Path::new(name)),
            Some(PathBuf::from("run/statprof.out"))
        );
        assert_eq!(
            template_of(Path::new(&format!("{name}_"))),
            Some(PathBuf::from("run/statprof.out"))
        );
        assert_eq!(template_of(Path::new("run/profile.bin")), None);
    }
}
