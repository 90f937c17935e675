//! Opening a file (read into memory, or memory-mapped when large) or a database directory, with
//! its format detected.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use profcodec_common::source::{Member, Members, Source};

use crate::mapping::Mapping;
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
    /// A folder given as a set of profiles ([`expand_inputs`](crate::expand_inputs)) that
    /// holds none: no file with a profiler's magic and no folder that is one input.
    #[error("{}: the folder holds no profile: no file starts with a profiler's magic, and no folder in it is an HPCToolkit database (meta.db), an hpcrun measurement folder (.hpcrun files) or a Devel::StatProfiler session (=statprofiler files)", .0.display())]
    NoProfiles(PathBuf),
}

#[derive(Debug)]
enum Data {
    /// Read whole (below the mapping threshold, or when no guarded mapping was available).
    Read(Vec<u8>),
    /// Mapped, with the file kept open to tell, at [`Opened::check_intact`], whether it shrank.
    Mapped {
        mapping: Mapping,
        file: File,
    },
    Empty,
}

/// How [`open`] reads a file: whole into memory below a size, memory-mapped above it.
///
/// ```no_run
/// // Map every file, however small (what the tests of a mapped input do).
/// let input = profcodec::OpenOptions::new().map_threshold(0).open("nytprof.out")?;
/// # Ok::<(), profcodec::OpenError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    map_threshold: u64,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions::new()
    }
}

impl OpenOptions {
    /// The default [`map_threshold`](OpenOptions::map_threshold): 1 MiB. Above it a file's
    /// bytes are the page cache's, which the kernel reclaims under memory pressure, so a
    /// process's own memory follows what the answer needs, not the input's size; below it one
    /// read costs less than setting up a mapping.
    pub const DEFAULT_MAP_THRESHOLD: u64 = 1 << 20;

    /// The options of [`open`]: files below [`OpenOptions::DEFAULT_MAP_THRESHOLD`] read into
    /// memory, larger ones mapped.
    pub fn new() -> Self {
        OpenOptions {
            map_threshold: Self::DEFAULT_MAP_THRESHOLD,
        }
    }

    /// Files of at least `bytes` bytes are memory-mapped (their pages read as the decoders
    /// reach them, so memory stays bounded whatever the file's size); smaller ones are read
    /// into memory at once. `0` maps every non-empty file, `u64::MAX` reads every file.
    pub fn map_threshold(mut self, bytes: u64) -> Self {
        self.map_threshold = bytes;
        self
    }

    /// [`open`] with these options. The files of a database directory, measurement folder or
    /// session that profcodec opens for this input are opened with them too. The path `-`
    /// ([`STDIN`]) reads standard input ([`open_stdin`]).
    pub fn open(&self, path: impl AsRef<Path>) -> Result<Opened, OpenError> {
        let path = path.as_ref();
        if path == Path::new(STDIN) {
            return self.open_stdin();
        }
        open_with(*self, path, Arc::default())
    }

    /// [`open_stdin`] with these options.
    pub fn open_stdin(&self) -> Result<Opened, OpenError> {
        let path = PathBuf::from(STDIN);
        let io_err = |source| OpenError::Io {
            path: path.clone(),
            source,
        };
        let stdin = io::stdin();
        if std::io::IsTerminal::is_terminal(&stdin) {
            return Err(io_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard input is a terminal: pipe a profile into it, or name a file",
            )));
        }
        let mut bytes = Vec::new();
        stdin.lock().read_to_end(&mut bytes).map_err(io_err)?;
        let data = if bytes.is_empty() {
            Data::Empty
        } else {
            Data::Read(bytes)
        };
        detected(path, data, *self, Arc::default())
    }
}

/// The first file of an input, or of the files opened for it ([`Opened::open_member`]), found
/// to have shrunk: shared by them, so that the input's [`Opened::check_intact`] reports it.
#[derive(Debug, Default)]
struct Shrinks(Mutex<Option<Shrunk>>);

/// A file that shrank while it was read.
#[derive(Debug, Clone)]
struct Shrunk {
    path: PathBuf,
    /// Its length when it was opened.
    from: u64,
    /// Its length when it was found shorter, if it could be read.
    to: Option<u64>,
}

impl Shrunk {
    fn error(&self) -> OpenError {
        OpenError::Io {
            path: self.path.clone(),
            source: shrank(self.from, self.to),
        }
    }
}

/// The error of a file that shrank from `from` bytes (to `to`, when known) while it was read.
fn shrank(from: u64, to: Option<u64>) -> io::Error {
    let sizes = match to {
        Some(to) => format!("from {from} to {to} bytes"),
        None => format!("from {from} bytes"),
    };
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the input shrank while it was read ({sizes}): it is being rewritten?"),
    )
}

impl Shrinks {
    fn record(&self, shrunk: Shrunk) {
        let mut first = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        first.get_or_insert(shrunk);
    }

    fn first(&self) -> Option<Shrunk> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// A file opened by [`open`]: its path, detected format and bytes.
#[derive(Debug)]
pub struct Opened {
    path: PathBuf,
    format: Format,
    data: Data,
    options: OpenOptions,
    shrinks: Arc<Shrinks>,
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
    ///
    /// For a mapped file ([`Opened::is_mapped`]) that shrank while it is read, the bytes past
    /// its new end read as zeros: [`Opened::check_intact`] then fails.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            Data::Read(bytes) => bytes,
            Data::Mapped { mapping, .. } => mapping.bytes(),
            Data::Empty => &[],
        }
    }

    /// True when the file is memory-mapped ([`OpenOptions::map_threshold`]), false when it was
    /// read into memory or is a directory.
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Data::Mapped { .. })
    }

    /// Whether the bytes read are the file's: an error when a mapped file shrank (a profiler
    /// rewriting it truncates it first), so that [`bytes`](Opened::bytes) read zeros in place
    /// of what was cut, or when one of the files opened for this input
    /// ([`Opened::open_member`]) did. The error names the file and both lengths.
    ///
    /// [`to_profile`](crate::to_profile) and [`info`](crate::info) check it before they
    /// return; a caller that decodes [`bytes`](Opened::bytes) itself checks it after, and
    /// reports this error in place of its result.
    pub fn check_intact(&self) -> Result<(), OpenError> {
        if let Some(shrunk) = self.own_shrink() {
            self.shrinks.record(shrunk.clone());
            return Err(shrunk.error());
        }
        match self.shrinks.first() {
            Some(shrunk) => Err(shrunk.error()),
            None => Ok(()),
        }
    }

    /// Opens `path`, a file of this input (of its database directory, measurement folder or
    /// session), with this input's [`OpenOptions`]; a shrink of that file is reported by this
    /// input's [`check_intact`](Opened::check_intact) too, even once it is closed.
    pub fn open_member(&self, path: impl AsRef<Path>) -> Result<Opened, OpenError> {
        open_with(self.options, path.as_ref(), Arc::clone(&self.shrinks))
    }

    /// This file's shrink, if it is mapped and its reads faulted or it is now shorter.
    fn own_shrink(&self) -> Option<Shrunk> {
        let Data::Mapped { mapping, file } = &self.data else {
            return None;
        };
        let from = mapping.bytes().len() as u64;
        let now = file.metadata().map(|m| m.len()).ok();
        let shorter = now.is_some_and(|now| now < from);
        (mapping.faulted() || shorter).then(|| Shrunk {
            path: self.path.clone(),
            from,
            to: now,
        })
    }
}

/// A file opened for an input ([`Opened::open_member`]) that shrank leaves its error to the
/// input when it is closed.
impl Drop for Opened {
    fn drop(&mut self) {
        if let Some(shrunk) = self.own_shrink() {
            self.shrinks.record(shrunk);
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

/// The files of a folder input, opened as the input was ([`Opened::open_member`]): mapped
/// above the threshold, and a file cut while read reported by the input's `check_intact`.
impl Members for Opened {
    fn open(&self, path: &Path) -> io::Result<Member> {
        // The error's message names the file (as `open`'s errors do); its kind is kept.
        match self.open_member(path) {
            Ok(opened) => Ok(Box::new(opened)),
            Err(e) => {
                let kind = match &e {
                    OpenError::Io { source, .. } => source.kind(),
                    _ => io::ErrorKind::InvalidData,
                };
                Err(io::Error::new(kind, e))
            }
        }
    }
}

impl Opened {
    /// This input as the format crates' verbs and conversions take it: its path, its bytes and
    /// its other files opened through [`Opened::open_member`].
    #[allow(dead_code)] // used by `inspect` and `to_profile`, both behind features
    pub(crate) fn source(&self) -> Source<'_> {
        Source {
            path: self.path(),
            bytes: self.bytes(),
            members: self,
        }
    }
}

/// The error of [`Members::open`] on an [`Opened`] input as a [`ReadError`](crate::ReadError): the
/// [`OpenError`] it carries, as [`Opened::open_member`] gave it.
#[cfg(all(feature = "profile", feature = "hpctoolkit"))]
pub(crate) fn member_error(e: io::Error) -> crate::ReadError {
    use crate::ReadError;
    if !e.get_ref().is_some_and(|inner| inner.is::<OpenError>()) {
        return ReadError::Io(e);
    }
    let kind = e.kind();
    match e.into_inner().map(|inner| inner.downcast::<OpenError>()) {
        Some(Ok(open)) => ReadError::Open(*open),
        // Not reached: the check above saw an `OpenError`.
        Some(Err(other)) => ReadError::Io(io::Error::new(kind, other)),
        None => ReadError::Io(kind.into()),
    }
}

/// The path that names standard input: [`open`] reads it ([`open_stdin`]) rather than a file of
/// that name (which `./-` names).
pub const STDIN: &str = "-";

/// Opens standard input: reads it whole into memory (a pipe cannot be mapped) and detects its
/// format from its first bytes, as [`open`] does a file's. Any input of one file can come this
/// way (`gunzip -c prof.gz | profcodec info -`); a database, measurement folder or session
/// cannot. The input's path is `-`. A terminal is refused: nothing was piped in.
///
/// ```no_run
/// let input = profcodec::open_stdin()?;
/// println!("{}", input.format());
/// # Ok::<(), profcodec::OpenError>(())
/// ```
pub fn open_stdin() -> Result<Opened, OpenError> {
    OpenOptions::new().open_stdin()
}

/// Opens `path`, reads or memory-maps it and detects its format. The path `-` ([`STDIN`]) is
/// standard input ([`open_stdin`]).
///
/// A directory is accepted when it holds `meta.db` (an HPCToolkit database), `.hpcrun` files (an
/// hpcrun measurement folder, `*.m`: one profile and trace per thread) or files starting with
/// `=statprofiler` (a Devel::StatProfiler session: rotated and forked files of one run);
/// its files are not mapped here, since the format's reader opens them itself. A path that does
/// not exist but is the template of a StatProfiler session (`statprof.out` for the files
/// `statprof.out.<id>.<ordinal>`) opens that session.
///
/// A file below 1 MiB ([`OpenOptions::map_threshold`]) is read into memory; a larger one is
/// memory-mapped, so that memory stays bounded. A file that shrinks while it is read (a
/// profiler rewriting it truncates it first) gives an I/O error, never a crash: a short read
/// fails here; a mapped file's pages past its new end read as zeros in place of a SIGBUS, and
/// [`Opened::check_intact`] (which [`to_profile`](crate::to_profile) and [`info`](crate::info)
/// call) reports that the input shrank, naming the file and both lengths.
pub fn open(path: impl AsRef<Path>) -> Result<Opened, OpenError> {
    OpenOptions::new().open(path)
}

fn open_with(
    options: OpenOptions,
    path: &Path,
    shrinks: Arc<Shrinks>,
) -> Result<Opened, OpenError> {
    let path = path.to_path_buf();
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
                options,
                shrinks,
            });
        }
        Err(e) => return Err(io_err(e)),
    };
    if meta.is_dir() {
        let format = if path.join("meta.db").is_file() {
            Format::HpctoolkitDatabase
        } else if holds_hpcrun_files(&path) {
            Format::Hpcrun
        } else if holds_statprofiler_files(&path) {
            Format::StatProfiler
        } else {
            return Err(OpenError::NotADatabase(path));
        };
        return Ok(Opened {
            path,
            format,
            data: Data::Empty,
            options,
            shrinks,
        });
    }
    if !meta.is_file() {
        return Err(OpenError::NotAFile(path));
    }
    let file = File::open(&path).map_err(io_err)?;
    let data = read_or_map(file, &options).map_err(io_err)?;
    detected(path, data, options, shrinks)
}

/// The input of one file, `data` read from `path`, with its format detected.
fn detected(
    path: PathBuf,
    data: Data,
    options: OpenOptions,
    shrinks: Arc<Shrinks>,
) -> Result<Opened, OpenError> {
    let mut opened = Opened {
        path,
        format: Format::Nytprof,
        data,
        options,
        shrinks,
    };
    opened.format = Format::detect(opened.bytes()).map_err(|source| OpenError::Unknown {
        path: opened.path.clone(),
        source,
    })?;
    // Detection read the first bytes: a mapped file already cut there fails now.
    opened.check_intact()?;
    Ok(opened)
}

/// The bytes of `file`: mapped from the threshold on (when a guarded mapping is available),
/// else read whole, a read shorter than the file's length being an error.
fn read_or_map(file: File, options: &OpenOptions) -> io::Result<Data> {
    // The length of the open file, not of whatever the path names by now.
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(Data::Empty);
    }
    if len >= options.map_threshold
        && let Some(mapping) = Mapping::map(&file)?
    {
        return Ok(Data::Mapped { mapping, file });
    }
    read_len(file, len).map(Data::Read)
}

/// The `len` bytes of `reader`: a reader that ends before them (a file cut while it is read)
/// is the error that says so.
fn read_len(reader: impl Read, len: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(len).unwrap_or(usize::MAX))
        .map_err(|e| io::Error::new(io::ErrorKind::OutOfMemory, e))?;
    reader.take(len).read_to_end(&mut bytes)?;
    let read = bytes.len() as u64;
    if read < len {
        return Err(shrank(len, Some(read)));
    }
    Ok(bytes)
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

    /// A file read into memory that ends before its length (cut during the read): an error
    /// that names both lengths.
    #[test]
    fn a_short_read_is_the_shrink_error() {
        let e = read_len(&b"0123456789"[..], 4096).expect_err("short");
        assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(
            e.to_string(),
            "the input shrank while it was read (from 4096 to 10 bytes): it is being rewritten?"
        );
        assert_eq!(read_len(&b"0123456789"[..], 4).expect("read"), b"0123");
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
