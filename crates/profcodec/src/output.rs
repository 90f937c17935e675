//! Output paths: what profcodec writes appears whole once it is complete, or not at all, and
//! never deletes or replaces what profcodec could not have written.
//!
//! Every front end (the `profcodec` command, the Python package, a library user) writes through
//! this one policy, in two steps: [`OutputPath::check`] before any input is read, so that a bad
//! output path costs nothing, then [`CheckedOutput::write_file`] or
//! [`CheckedOutput::write_with`], which write into a staging folder beside the output (so the
//! final rename stays on one file system) and rename the result into place only when the writer
//! succeeded.
//!
//! The policy:
//!
//! - The folder the output goes into must exist: a typo in a path does not make one
//!   ([`OutputError::FolderMissing`]).
//! - A single-file output never replaces a folder, empty or not ([`OutputError::IsAFolder`]),
//!   and a folder output never replaces a file, a symbolic link or a special file
//!   ([`OutputError::IsAFile`]); each is named by its kind (a symbolic link to a folder, a
//!   character device, a FIFO...).
//! - An existing output is replaced only when [`Overwrite::SameKind`] says so, and only by an
//!   output of the same kind: a file by a file, or a folder by a folder that profcodec wrote
//!   (every folder written here holds a [`FOLDER_MARKER`] file) or that is a database of the
//!   same format ([`OutputPath::format`]). Any other folder is never replaced
//!   ([`OutputError::NotReplaceable`]). An empty folder may take a folder output: nothing is
//!   lost.
//! - An append ([`OutputPath::append`]) adds to a folder that profcodec wrote, or makes it when
//!   nothing (or an empty folder) is there: what the writer stages is moved in beside what is
//!   there, folder by folder, and nothing in the folder is replaced, rewritten or removed. An
//!   entry that is already there fails the append ([`OutputError::AppearedMeanwhile`]: another
//!   writer of the same folder) and what it had moved in is moved back out. Any other folder,
//!   a file or a symbolic link is never appended to ([`OutputError::NotAppendable`]).
//! - Character devices and FIFOs (`/dev/null`, a named pipe), and symbolic links to them
//!   (`/dev/stdout`), are written through, as `cp` does; other special files are refused.
//! - An output that is an input, contains one or lies inside one is refused
//!   ([`OutputError::OverlapsInput`]).
//! - A new output is placed without replacing anything (`renameat2(RENAME_NOREPLACE)` on
//!   Linux, a hard link elsewhere): of two writers of one path, the second fails with
//!   [`OutputError::AppearedMeanwhile`] instead of replacing the first one's output.
//! - A replaced output is moved aside, not deleted, until the new one is in place, and comes
//!   back if the new one cannot take its place. A file replaced by a file is renamed over in one
//!   step, so the path is never missing.
//! - The staging folder is removed whatever happens. A front end removes it on a signal too
//!   ([`remove_live_staging`]), and staging left by a process that was killed is removed by
//!   the next check of an output in that folder ([`CheckedOutput::removed_stale_staging`]).
//!   A staging folder belongs to its run by a lock (`flock`) the run holds on the
//!   [`STAGING_LOCK`] file inside it for as long as it writes, not by the process id in its
//!   name: process ids repeat across containers sharing a bind mount and across the hosts of
//!   a network file system, so a live run's staging must never be judged by one. Only a
//!   staging folder whose lock file nobody holds is removed; one without a lock file (kept on
//!   purpose, see [`OutputError::NotRestored`], or made by an older profcodec) is left alone.
//!
//! ```
//! use profcodec::output::{OutputError, OutputPath, Overwrite, WriteError};
//! use std::io::Write;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.folded");
//! let output = OutputPath::file(&path).check()?; // before any input is read
//! output.write_file(|out| writeln!(out, "main;work 3"))?;
//! assert_eq!(std::fs::read_to_string(&path)?, "main;work 3\n");
//!
//! // An existing output is only replaced when asked to.
//! let again = OutputPath::file(&path).check();
//! assert!(matches!(again, Err(OutputError::Exists { .. })));
//! OutputPath::file(&path)
//!     .overwrite(Overwrite::SameKind)
//!     .check()?
//!     .write_file(|out| writeln!(out, "main 1"))?;
//! assert_eq!(std::fs::read_to_string(&path)?, "main 1\n");
//!
//! // A folder is never replaced by a file, whatever the overwrite policy.
//! let folder = OutputPath::file(dir.path()).overwrite(Overwrite::SameKind).check();
//! assert!(matches!(folder, Err(OutputError::IsAFolder { .. })));
//!
//! // A failed write leaves the old output as it was.
//! let failed = OutputPath::file(&path).overwrite(Overwrite::SameKind).check()?.write_file(|out| {
//!     out.write_all(b"half")?;
//!     Err::<(), _>(std::io::Error::other("the profile has no samples"))
//! });
//! assert!(matches!(failed, Err(WriteError::Write(_))));
//! assert_eq!(std::fs::read_to_string(&path)?, "main 1\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::Format;

mod names;
pub use names::distinct_names;

/// The prefix of the staging folder made beside an output, followed by the writing process's
/// id (for the person who finds one; whether its run lives is told by [`STAGING_LOCK`]) and a
/// dash; removed before a write returns unless a replaced output could not be put back
/// ([`OutputError::NotRestored`]).
pub const STAGING_PREFIX: &str = ".profcodec-staging-";

/// The file inside a staging folder that its run holds locked (`flock`, exclusive) while it
/// writes: a staging folder whose lock can be taken belongs to no live run.
pub const STAGING_LOCK: &str = ".profcodec-lock";

/// The file every folder written through this module holds, so that [`Overwrite::SameKind`]
/// knows the folder for one profcodec may replace. Readers of every format ignore it.
pub const FOLDER_MARKER: &str = ".profcodec-output";

/// What an output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OutputKind {
    /// One file.
    File,
    /// A folder of files (an HPCToolkit database, a Parquet dataset, a report).
    Folder,
}

/// What to do with an output that already exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Overwrite {
    /// Write only where nothing is (or, for a folder output, over an empty folder); anything
    /// else is refused with [`OutputError::Exists`].
    #[default]
    Never,
    /// Replace an existing output of the same kind whole (the command line's `--force`, the
    /// Python package's `overwrite=True`): a file by a file, or a folder that profcodec wrote
    /// or that is a database of the output's format by a folder. Nothing else is ever replaced.
    SameKind,
}

impl Overwrite {
    /// [`Overwrite::SameKind`] when `force`, else [`Overwrite::Never`].
    pub fn from_force(force: bool) -> Overwrite {
        if force {
            Overwrite::SameKind
        } else {
            Overwrite::Never
        }
    }
}

/// What stands at an output path that was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Existing {
    /// A regular file.
    File,
    /// A symbolic link to a file, or to nothing (replacing it replaces the link, never what it
    /// points to).
    Symlink,
    /// A symbolic link to a folder.
    SymlinkToFolder,
    /// A symbolic link to a character device, a FIFO or another special file (`/dev/stdout`).
    SymlinkToSpecial,
    /// A folder that profcodec wrote (it holds [`FOLDER_MARKER`]).
    ProfcodecFolder,
    /// A folder that is a database, measurement or session of this format.
    Database(Format),
    /// Any other folder that is not empty.
    Folder,
    /// A character device (`/dev/null`, a terminal).
    CharDevice,
    /// A FIFO (a named pipe).
    Fifo,
    /// A block device (a disk).
    BlockDevice,
    /// A socket.
    Socket,
    /// A special file of a kind this system does not tell.
    Special,
}

impl fmt::Display for Existing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Existing::File => f.write_str("a file"),
            Existing::Symlink => f.write_str("a symbolic link"),
            Existing::SymlinkToFolder => f.write_str("a symbolic link to a folder"),
            Existing::SymlinkToSpecial => {
                f.write_str("a symbolic link to a device, FIFO or other special file")
            }
            Existing::ProfcodecFolder => f.write_str("a folder that profcodec wrote"),
            Existing::Database(format) => write!(f, "a folder of {}", format.name()),
            Existing::Folder => f.write_str("a folder that is not empty"),
            Existing::CharDevice => f.write_str("a character device"),
            Existing::Fifo => f.write_str("a FIFO (named pipe)"),
            Existing::BlockDevice => f.write_str("a block device"),
            Existing::Socket => f.write_str("a socket"),
            Existing::Special => f.write_str("a special file"),
        }
    }
}

/// How an output overlaps an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Overlap {
    /// The output is the input.
    Is,
    /// The output is a folder that holds the input.
    Contains,
    /// The output lies inside the input, a folder.
    Inside,
}

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Overlap::Is => "is",
            Overlap::Contains => "holds",
            Overlap::Inside => "lies inside",
        })
    }
}

/// The step at which an I/O error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Reading the metadata of the folder the output goes into.
    InspectFolder,
    /// Reading the metadata, or the entries, of the existing output.
    InspectOutput,
    /// Creating the staging folder beside the output.
    CreateStaging,
    /// Creating the staged file, or opening a device or FIFO written through.
    CreateFile,
    /// Writing the rest of the buffered staged file and syncing it to the disk.
    SyncFile,
    /// Marking a staged folder as profcodec's ([`FOLDER_MARKER`]).
    MarkFolder,
    /// Moving the existing output aside into the staging folder.
    MoveAside,
    /// Renaming the staged output into place.
    Rename,
    /// Removing the staging folder, with the output it replaced, once the new output is in place.
    RemoveStaging,
}

impl fmt::Display for Step {
    /// The step as the words that complete "could not ... PATH".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::InspectFolder => "read the metadata of the output's folder",
            Step::InspectOutput => "read the existing output",
            Step::CreateStaging => "create a staging folder in",
            Step::CreateFile => "create the staged file for",
            Step::SyncFile => "write and sync the staged file for",
            Step::MarkFolder => "mark the staged folder for",
            Step::MoveAside => "move aside the existing output",
            Step::Rename => "rename the staged output into place at",
            Step::RemoveStaging => "remove the staging folder",
        })
    }
}

/// Why an output path was refused, or an output could not be put in place.
///
/// Every error leaves the output as it was before, but two: an [`OutputError::Io`] at
/// [`Step::RemoveStaging`] (the new output is in place; the staging folder, with the output it
/// replaced, is left behind) and [`OutputError::NotRestored`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The folder the output goes into does not exist (it is not created: a typo in a path
    /// should not make one).
    #[error("the output's folder {} does not exist (it is not created; make it first)", .folder.display())]
    FolderMissing {
        /// The folder.
        folder: PathBuf,
        /// The error of looking it up, which carries the OS's error code.
        #[source]
        source: io::Error,
    },
    /// What the output should go into is not a folder.
    #[error("the output's folder {} is not a folder", .folder.display())]
    NotAFolder {
        /// The path that should be a folder.
        folder: PathBuf,
    },
    /// A single-file output names a folder (or ends with `/`): never replaced.
    #[error("{} is a folder, and a single-file output never replaces a folder", .path.display())]
    IsAFolder {
        /// The output.
        path: PathBuf,
    },
    /// A folder output names something that is not a folder (a file, a symbolic link, a
    /// device, a FIFO): never replaced.
    #[error("{} is {existing}, which a folder output never replaces", .path.display())]
    IsAFile {
        /// The output.
        path: PathBuf,
        /// What is there.
        existing: Existing,
    },
    /// The output exists and is of the output's kind, and [`Overwrite::Never`] was asked for;
    /// [`Overwrite::SameKind`] replaces it.
    #[error("{} already exists ({existing})", .path.display())]
    Exists {
        /// The output.
        path: PathBuf,
        /// What is there.
        existing: Existing,
    },
    /// The output exists and is nothing profcodec may replace, whatever the overwrite policy.
    #[error("{} is {existing}, which profcodec did not write and never replaces", .path.display())]
    NotReplaceable {
        /// The output.
        path: PathBuf,
        /// What is there.
        existing: Existing,
    },
    /// An append names something that is not a folder profcodec wrote: never added to.
    #[error("{} is {existing}, which profcodec did not write and never adds to", .path.display())]
    NotAppendable {
        /// The output.
        path: PathBuf,
        /// What is there.
        existing: Existing,
    },
    /// The output is, holds or lies inside an input.
    #[error("{} {overlap} the input {}; write the output elsewhere", .path.display(), .input.display())]
    OverlapsInput {
        /// The output.
        path: PathBuf,
        /// The input.
        input: PathBuf,
        /// How they overlap.
        overlap: Overlap,
    },
    /// Something appeared at the output path while the output was written (another writer of
    /// the same path): it is left as it is and the new output is discarded.
    #[error(
        "{} appeared while the output was being written (another writer?); it is left as it \
         is and this output is discarded",
        .path.display()
    )]
    AppearedMeanwhile {
        /// The output.
        path: PathBuf,
    },
    /// Another run is adding to the folder an append names: it holds the folder's
    /// [`FOLDER_MARKER`] locked from its check until its last entry is in.
    #[error(
        "another profcodec run is adding to {} (it holds {} locked); try again once it ends",
        .path.display(),
        .path.join(FOLDER_MARKER).display()
    )]
    InUse {
        /// The output.
        path: PathBuf,
    },
    /// An I/O error at `step` on `path`.
    #[error("could not {step} {}: {source}", .path.display())]
    Io {
        /// What was being done.
        step: Step,
        /// The path it was done on: the output, or the folder it goes into; at
        /// [`Step::RemoveStaging`], the staging folder left behind.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The staged output could not be renamed into place, nor the replaced output moved back:
    /// the output is missing and its old content is kept at `kept`, in the staging folder, which
    /// is left behind for that reason.
    #[error(
        "could not rename the staged output into place at {} ({rename}), nor move the replaced \
         output back; it is kept at {}: {source}",
        .path.display(),
        .kept.display()
    )]
    NotRestored {
        /// The output.
        path: PathBuf,
        /// Where the old output is kept.
        kept: PathBuf,
        /// Why the staged output could not be renamed into place.
        rename: io::Error,
        /// Why the replaced output could not be moved back.
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    /// This error's message, followed by how to ask for the replacement where overwriting
    /// would let the write go ahead (an existing output of the same kind): `how` is the front
    /// end's way to ask, `--force` on the command line, `overwrite=True` in Python.
    pub fn message_with_override(&self, how: &str) -> String {
        match self {
            OutputError::Exists { .. } => format!("{self}; {how} replaces it"),
            _ => self.to_string(),
        }
    }

    /// The I/O error behind this error, when there is one: for a caller that reports the OS's
    /// error code.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            OutputError::FolderMissing { source, .. }
            | OutputError::Io { source, .. }
            | OutputError::NotRestored { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The output path the error is about.
    pub fn path(&self) -> &Path {
        match self {
            OutputError::FolderMissing { folder, .. } | OutputError::NotAFolder { folder } => {
                folder
            }
            OutputError::IsAFolder { path }
            | OutputError::IsAFile { path, .. }
            | OutputError::Exists { path, .. }
            | OutputError::NotReplaceable { path, .. }
            | OutputError::NotAppendable { path, .. }
            | OutputError::OverlapsInput { path, .. }
            | OutputError::AppearedMeanwhile { path }
            | OutputError::InUse { path }
            | OutputError::Io { path, .. }
            | OutputError::NotRestored { path, .. } => path,
        }
    }
}

/// A failed write: the output's own error, or the writer's.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError<E> {
    /// The output could not be put in place; it is as it was (see [`OutputError`]).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The writer failed; its own error. The output is as it was.
    #[error(transparent)]
    Write(E),
}

/// An output path and its policy, to [`check`](OutputPath::check) before any input is read.
#[derive(Debug, Clone)]
pub struct OutputPath {
    path: PathBuf,
    kind: OutputKind,
    overwrite: Overwrite,
    inputs: Vec<PathBuf>,
    format: Option<Format>,
    append: bool,
    commit_last: Option<PathBuf>,
}

impl OutputPath {
    /// A single-file output at `path`.
    pub fn file(path: impl Into<PathBuf>) -> OutputPath {
        OutputPath::new(path.into(), OutputKind::File)
    }

    /// A folder output at `path`.
    pub fn folder(path: impl Into<PathBuf>) -> OutputPath {
        OutputPath::new(path.into(), OutputKind::Folder)
    }

    /// An output of `kind` at `path`.
    pub fn new(path: impl Into<PathBuf>, kind: OutputKind) -> OutputPath {
        OutputPath {
            path: path.into(),
            kind,
            overwrite: Overwrite::Never,
            inputs: Vec::new(),
            format: None,
            append: false,
            commit_last: None,
        }
    }

    /// An output of `input`'s kind (a folder for a folder input, else a file) at `path`, which
    /// may not overlap `input`, written in `format` ([`format`](OutputPath::format)): what
    /// `rewrite` writes.
    pub fn like_input(
        path: impl Into<PathBuf>,
        input: impl Into<PathBuf>,
        format: Format,
    ) -> OutputPath {
        let input = input.into();
        let kind = match input.is_dir() {
            true => OutputKind::Folder,
            false => OutputKind::File,
        };
        OutputPath::new(path, kind).input(input).format(format)
    }

    /// What to do with an existing output ([`Overwrite::Never`] unless set).
    pub fn overwrite(mut self, overwrite: Overwrite) -> OutputPath {
        self.overwrite = overwrite;
        self
    }

    /// An input of the conversion: the output may not be it, hold it or lie inside it.
    pub fn input(mut self, input: impl Into<PathBuf>) -> OutputPath {
        self.inputs.push(input.into());
        self
    }

    /// The inputs of the conversion (see [`input`](OutputPath::input)).
    pub fn inputs<P: Into<PathBuf>>(mut self, inputs: impl IntoIterator<Item = P>) -> OutputPath {
        self.inputs.extend(inputs.into_iter().map(Into::into));
        self
    }

    /// Whether a folder output adds to the folder at its path, which profcodec wrote, instead of
    /// replacing it (a file output ignores it, and it takes precedence over
    /// [`overwrite`](OutputPath::overwrite)): the staged folder's entries are moved in beside
    /// what is there, never replacing any. Nothing there, or an empty folder, takes the output
    /// as a new folder.
    pub fn append(mut self, append: bool) -> OutputPath {
        self.append = append;
        self
    }

    /// The entry of the staged folder (a path relative to it) that an append moves in after
    /// every other: the append's commit point. A reader that counts only what that entry lists
    /// (a dataset's table of its inputs) sees the folder as it was until that one rename, and
    /// as it is after; entries moved in before it by an append that was killed are left over,
    /// for the folder's own format to tell and remove.
    pub fn commit_last(mut self, entry: impl Into<PathBuf>) -> OutputPath {
        self.commit_last = Some(entry.into());
        self
    }

    /// The format a folder output is written in: an existing database of that format may be
    /// replaced under [`Overwrite::SameKind`] although profcodec did not write it.
    pub fn format(mut self, format: Format) -> OutputPath {
        self.format = Some(format);
        self
    }

    /// Checks the output path against the policy (see the [module](self)), without writing
    /// anything but the removal of stale staging folders left by killed processes.
    pub fn check(self) -> Result<CheckedOutput, OutputError> {
        let folder = match self.path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match std::fs::metadata(&folder) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(OutputError::NotAFolder { folder }),
            Err(source)
                if matches!(
                    source.kind(),
                    ErrorKind::NotFound | ErrorKind::NotADirectory
                ) =>
            {
                return Err(OutputError::FolderMissing { folder, source });
            }
            Err(e) => return Err(io_at(Step::InspectFolder, &folder)(e)),
        }
        let names_a_folder = self.path.file_name().is_none()
            || self.path.as_os_str().as_encoded_bytes().last() == Some(&b'/');
        if names_a_folder && self.kind == OutputKind::File {
            return Err(OutputError::IsAFolder { path: self.path });
        }
        self.check_inputs(&folder)?;
        let plan = self.plan()?;
        let append_lock = match plan {
            Plan::Merge => Some(self.lock_appended()?),
            _ => None,
        };
        let removed_stale_staging = remove_stale_staging(&folder);
        Ok(CheckedOutput {
            path: self.path,
            kind: self.kind,
            folder,
            plan,
            removed_stale_staging,
            commit_last: self.commit_last,
            append_lock,
        })
    }

    /// Takes the lock of the folder appended to (an exclusive `flock` on its
    /// [`FOLDER_MARKER`]), held until the append ends: appends to one folder follow each other,
    /// and what one has moved in before its commit point is never taken for a killed append's
    /// leftovers by another.
    fn lock_appended(&self) -> Result<File, OutputError> {
        let marker = self.path.join(FOLDER_MARKER);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&marker)
            .map_err(io_at(Step::InspectOutput, &marker))?;
        match try_lock(&file) {
            Ok(true) => Ok(file),
            // Without flock (not Unix) nothing is locked, and nothing is removed as leftovers.
            Ok(false) if cfg!(not(unix)) => Ok(file),
            Ok(false) => Err(OutputError::InUse {
                path: self.path.clone(),
            }),
            Err(e) => Err(io_at(Step::InspectOutput, &marker)(e)),
        }
    }

    /// Refuses an output that is, holds or lies inside an input.
    fn check_inputs(&self, folder: &Path) -> Result<(), OutputError> {
        if self.inputs.is_empty() {
            return Ok(());
        }
        // The output as its folder's real path and its own name: a symbolic link at the output
        // is replaced, never followed, so its target does not matter.
        let real_folder =
            std::fs::canonicalize(folder).map_err(io_at(Step::InspectFolder, folder))?;
        let output = match self.path.file_name() {
            Some(name) => real_folder.join(name),
            None => std::fs::canonicalize(&self.path).unwrap_or(real_folder),
        };
        for input in &self.inputs {
            // An input that cannot be resolved cannot be compared; opening it will say why.
            let Ok(real_input) = std::fs::canonicalize(input) else {
                continue;
            };
            let overlap = if real_input == output {
                Overlap::Is
            } else if real_input.starts_with(&output) {
                Overlap::Contains
            } else if output.starts_with(&real_input) {
                Overlap::Inside
            } else {
                continue;
            };
            return Err(OutputError::OverlapsInput {
                path: self.path.clone(),
                input: input.clone(),
                overlap,
            });
        }
        Ok(())
    }

    /// How the output will be placed, given what is at its path now.
    fn plan(&self) -> Result<Plan, OutputError> {
        if self.append && self.kind == OutputKind::Folder {
            return self.plan_append();
        }
        let meta = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Plan::Create),
            Err(e) => return Err(io_at(Step::InspectOutput, &self.path)(e)),
        };
        let path = || self.path.clone();
        let kind = meta.file_type();
        let existing = if kind.is_dir() {
            if self.kind == OutputKind::File {
                return Err(OutputError::IsAFolder { path: path() });
            }
            if self.is_empty_folder()? {
                return Ok(Plan::OverEmptyFolder);
            }
            match self.folder_kind() {
                Existing::Folder => {
                    return Err(OutputError::NotReplaceable {
                        path: path(),
                        existing: Existing::Folder,
                    });
                }
                existing => existing,
            }
        } else {
            let existing = what_is(&self.path, &kind);
            if self.kind == OutputKind::Folder {
                return Err(OutputError::IsAFile {
                    path: path(),
                    existing,
                });
            }
            match existing {
                Existing::File | Existing::Symlink | Existing::SymlinkToFolder => existing,
                // Written through as `cp` writes: `-o /dev/stdout`, `-o /dev/null`, a pipe.
                Existing::CharDevice | Existing::Fifo => return Ok(Plan::WriteThrough),
                Existing::SymlinkToSpecial
                    if std::fs::metadata(&self.path)
                        .is_ok_and(|target| is_written_through(&target.file_type())) =>
                {
                    return Ok(Plan::WriteThrough);
                }
                existing => {
                    return Err(OutputError::NotReplaceable {
                        path: path(),
                        existing,
                    });
                }
            }
        };
        match self.overwrite {
            Overwrite::Never => Err(OutputError::Exists {
                path: path(),
                existing,
            }),
            Overwrite::SameKind => Ok(Plan::Replace {
                folder: self.kind == OutputKind::Folder,
            }),
        }
    }

    /// True when the output, an existing folder, holds nothing (so nothing can be lost there).
    fn is_empty_folder(&self) -> Result<bool, OutputError> {
        Ok(std::fs::read_dir(&self.path)
            .map_err(io_at(Step::InspectOutput, &self.path))?
            .next()
            .is_none())
    }

    /// How an appended folder output will be placed: new, over an empty folder, or merged into
    /// a folder that profcodec wrote.
    fn plan_append(&self) -> Result<Plan, OutputError> {
        let meta = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Plan::Create),
            Err(e) => return Err(io_at(Step::InspectOutput, &self.path)(e)),
        };
        let kind = meta.file_type();
        let existing = if kind.is_dir() {
            if self.is_empty_folder()? {
                return Ok(Plan::OverEmptyFolder);
            }
            match self.folder_kind() {
                Existing::ProfcodecFolder => return Ok(Plan::Merge),
                existing => existing,
            }
        } else if kind.is_file() {
            return Err(OutputError::IsAFile {
                path: self.path.clone(),
                existing: Existing::File,
            });
        } else {
            what_is(&self.path, &kind)
        };
        Err(OutputError::NotAppendable {
            path: self.path.clone(),
            existing,
        })
    }

    /// What a folder that is not empty is: profcodec's, a database of the output's format, or
    /// anything else.
    fn folder_kind(&self) -> Existing {
        if self.path.join(FOLDER_MARKER).is_file() {
            return Existing::ProfcodecFolder;
        }
        match self.format {
            Some(format) if crate::open(&self.path).is_ok_and(|o| o.format() == format) => {
                Existing::Database(format)
            }
            _ => Existing::Folder,
        }
    }
}

/// What stands at `path`, which is no folder; `kind` is its own type (a symbolic link not
/// followed), and a symbolic link is told by what it leads to.
fn what_is(path: &Path, kind: &std::fs::FileType) -> Existing {
    if kind.is_symlink() {
        return match std::fs::metadata(path) {
            Ok(target) if target.is_dir() => Existing::SymlinkToFolder,
            Ok(target) if !target.is_file() => Existing::SymlinkToSpecial,
            // A link to a file, or to nothing (replacing it replaces the link).
            _ => Existing::Symlink,
        };
    }
    if kind.is_file() {
        return Existing::File;
    }
    special_kind(kind)
}

/// The kind of a special file (neither a file, a folder nor a symbolic link).
#[cfg(unix)]
fn special_kind(kind: &std::fs::FileType) -> Existing {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_char_device() {
        Existing::CharDevice
    } else if kind.is_fifo() {
        Existing::Fifo
    } else if kind.is_block_device() {
        Existing::BlockDevice
    } else if kind.is_socket() {
        Existing::Socket
    } else {
        Existing::Special
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> Existing {
    Existing::Special
}

/// Whether a special file is written through rather than replaced: character devices and FIFOs.
#[cfg(unix)]
fn is_written_through(kind: &std::fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    kind.is_char_device() || kind.is_fifo()
}

#[cfg(not(unix))]
fn is_written_through(_: &std::fs::FileType) -> bool {
    false
}

/// How a checked output is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    /// Nothing is there: placed without replacing what may appear meanwhile.
    Create,
    /// An empty folder takes a folder output (a rename over it fails if it filled meanwhile).
    OverEmptyFolder,
    /// An output of the same kind is replaced whole.
    Replace {
        /// Whether it is a folder (moved aside first) or a file (renamed over).
        folder: bool,
    },
    /// A character device or FIFO: written into directly.
    WriteThrough,
    /// A folder that profcodec wrote takes the staged folder's entries beside its own.
    Merge,
}

/// An output path that passed [`OutputPath::check`], ready to be written.
#[derive(Debug)]
pub struct CheckedOutput {
    path: PathBuf,
    kind: OutputKind,
    folder: PathBuf,
    plan: Plan,
    removed_stale_staging: Vec<PathBuf>,
    commit_last: Option<PathBuf>,
    /// An append's lock on the folder appended to, held until the append ends.
    append_lock: Option<File>,
}

impl CheckedOutput {
    /// The output path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this is an append to a folder that is there, which this check has locked
    /// against every other append until the write ends: what an append killed before its
    /// commit point left in the folder may be removed now (by the folder's own format, which
    /// alone can tell it).
    pub fn holds_appended_folder(&self) -> bool {
        self.append_lock.is_some()
    }

    /// Staging folders of killed profcodec processes that the check found beside the output
    /// and removed: for the caller to mention.
    pub fn removed_stale_staging(&self) -> &[PathBuf] {
        &self.removed_stale_staging
    }

    /// Runs `write` on a buffered file and puts it in place when `write` succeeds (a staged
    /// file synced to the disk and renamed; a device or FIFO written directly).
    pub fn write_file<T, E>(
        self,
        write: impl FnOnce(&mut dyn Write) -> Result<T, E>,
    ) -> Result<T, WriteError<E>> {
        if self.plan == Plan::WriteThrough {
            let file = OpenOptions::new()
                .write(true)
                .open(&self.path)
                .map_err(io_at(Step::CreateFile, &self.path))?;
            let mut out = BufWriter::new(file);
            let value = write(&mut out).map_err(WriteError::Write)?;
            out.flush().map_err(io_at(Step::SyncFile, &self.path))?;
            return Ok(value);
        }
        let path = self.path.clone();
        self.stage_and_place(|staged| {
            let file = File::create(staged).map_err(io_at(Step::CreateFile, &path))?;
            let mut out = BufWriter::new(file);
            let value = write(&mut out).map_err(WriteError::Write)?;
            let file = out
                .into_inner()
                .map_err(|e| io_at(Step::SyncFile, &path)(e.into_error()))?;
            file.sync_all().map_err(io_at(Step::SyncFile, &path))?;
            Ok(value)
        })
    }

    /// Runs `write` on a staging path (which does not exist yet; its parent folder does) where
    /// it makes the output, a file or a folder as checked, and renames that into place when
    /// `write` succeeds. A device or FIFO output is handed to `write` itself.
    pub fn write_with<T, E>(
        self,
        write: impl FnOnce(&Path) -> Result<T, E>,
    ) -> Result<T, WriteError<E>> {
        if self.plan == Plan::WriteThrough {
            return write(&self.path).map_err(WriteError::Write);
        }
        self.stage_and_place(|staged| write(staged).map_err(WriteError::Write))
    }

    /// Writes into a staging folder beside the output, then places what was written.
    fn stage_and_place<T, E>(
        self,
        write: impl FnOnce(&Path) -> Result<T, WriteError<E>>,
    ) -> Result<T, WriteError<E>> {
        let mut staging = Staging::new(&self.folder)?;
        let staged = staging.path().join("output");
        let value = write(&staged)?;
        let staged_meta =
            std::fs::symlink_metadata(&staged).map_err(io_at(Step::Rename, &staged))?;
        match (self.kind, staged_meta.is_dir()) {
            (OutputKind::File, true) => {
                return Err(OutputError::IsAFolder { path: self.path }.into());
            }
            (OutputKind::Folder, false) => {
                return Err(OutputError::IsAFile {
                    path: self.path,
                    existing: Existing::File,
                }
                .into());
            }
            // The folder appended to is marked already.
            (OutputKind::Folder, true) if self.plan == Plan::Merge => {}
            (OutputKind::Folder, true) => {
                let marker = staged.join(FOLDER_MARKER);
                std::fs::write(
                    &marker,
                    concat!(
                        "This folder was written by profcodec ",
                        env!("CARGO_PKG_VERSION"),
                        "; its --force may replace it whole.\n"
                    ),
                )
                .map_err(io_at(Step::MarkFolder, &self.path))?;
            }
            (OutputKind::File, false) => {}
        }
        self.place(&mut staging, &staged)?;
        staging.close()?;
        Ok(value)
    }

    /// Renames `staged` into place as the plan says.
    fn place(&self, staging: &mut Staging, staged: &Path) -> Result<(), OutputError> {
        let output = &self.path;
        let appeared = |e: io::Error| match e.kind() {
            ErrorKind::AlreadyExists | ErrorKind::DirectoryNotEmpty => {
                OutputError::AppearedMeanwhile {
                    path: output.clone(),
                }
            }
            _ => io_at(Step::Rename, output)(e),
        };
        match self.plan {
            Plan::Create => rename_noreplace(staged, output).map_err(appeared),
            // A folder renamed over an empty folder replaces it; over one that filled meanwhile
            // the rename fails.
            Plan::OverEmptyFolder => std::fs::rename(staged, output).map_err(appeared),
            // A file over a file: one rename, so the output is never missing.
            Plan::Replace { folder: false } => {
                std::fs::rename(staged, output).map_err(io_at(Step::Rename, output))
            }
            // A folder cannot be renamed over: the old output goes aside first, and comes back
            // if the new one cannot take its place.
            Plan::Replace { folder: true } => {
                let aside = staging.path().join("replaced");
                std::fs::rename(output, &aside).map_err(io_at(Step::MoveAside, output))?;
                if let Err(rename) = rename_noreplace(staged, output) {
                    if let Err(source) = std::fs::rename(&aside, output) {
                        // Removing the staging folder would delete the only copy of the old
                        // output.
                        staging.keep();
                        return Err(OutputError::NotRestored {
                            path: output.clone(),
                            kept: aside,
                            rename,
                            source,
                        });
                    }
                    return Err(appeared(rename));
                }
                Ok(())
            }
            Plan::WriteThrough => Ok(()),
            Plan::Merge => {
                let mut moved = Vec::new();
                let mut merge = Merge {
                    last: self.commit_last.as_deref().map(|last| staged.join(last)),
                    moved: &mut moved,
                    renames_left: renames_before_abort(),
                };
                let merged = merge.merge(staged, output).and_then(|()| {
                    // The commit point: one rename, after every other entry is in.
                    match self.commit_last.as_deref() {
                        Some(last) if staged.join(last).exists() => {
                            merge.last = None;
                            merge.entry(&staged.join(last), &output.join(last))
                        }
                        _ => Ok(()),
                    }
                });
                if merged.is_err() {
                    // Back out, newest first, what this append had moved in. A move that
                    // fails leaves a whole staged file or folder in the output.
                    for (from, to) in moved.iter().rev() {
                        let _ = std::fs::rename(to, from);
                    }
                }
                merged
            }
        }
    }
}

/// An append's moves of a staged folder's entries into the folder appended to.
struct Merge<'a> {
    /// The staged entry moved in last, by the caller, once every other is in.
    last: Option<PathBuf>,
    /// Each move made, (from, to), for backing out.
    moved: &'a mut Vec<(PathBuf, PathBuf)>,
    /// Tests only: the renames after which the process aborts, as a kill would stop it.
    renames_left: Option<u64>,
}

impl Merge<'_> {
    /// Moves each entry of the folder `staged` into the folder `output` (but the one kept for
    /// last), recursing into the folders both have.
    fn merge(&mut self, staged: &Path, output: &Path) -> Result<(), OutputError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(staged).map_err(io_at(Step::Rename, staged))? {
            names.push(entry.map_err(io_at(Step::Rename, staged))?.file_name());
        }
        names.sort();
        for name in names {
            let from = staged.join(&name);
            if self.last.as_deref() == Some(from.as_path()) {
                continue;
            }
            self.entry(&from, &output.join(&name))?;
        }
        Ok(())
    }

    /// Moves `from` to `to` where nothing is there (a whole folder in one rename), merges two
    /// folders, and fails with [`OutputError::AppearedMeanwhile`] on anything else at `to`.
    fn entry(&mut self, from: &Path, to: &Path) -> Result<(), OutputError> {
        let from_dir = std::fs::symlink_metadata(from)
            .map_err(io_at(Step::Rename, from))?
            .is_dir();
        match std::fs::symlink_metadata(to) {
            Ok(meta) if meta.is_dir() && from_dir => self.merge(from, to),
            Ok(_) => Err(OutputError::AppearedMeanwhile {
                path: to.to_path_buf(),
            }),
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if let Some(left) = self.renames_left.as_mut() {
                    if *left == 0 {
                        std::process::abort();
                    }
                    *left -= 1;
                }
                rename_noreplace(from, to).map_err(|e| match e.kind() {
                    ErrorKind::AlreadyExists | ErrorKind::DirectoryNotEmpty => {
                        OutputError::AppearedMeanwhile {
                            path: to.to_path_buf(),
                        }
                    }
                    _ => io_at(Step::Rename, to)(e),
                })?;
                self.moved.push((from.to_path_buf(), to.to_path_buf()));
                Ok(())
            }
            Err(e) => Err(io_at(Step::InspectOutput, to)(e)),
        }
    }
}

/// Tests only (builds with debug assertions): how many of an append's renames are made before
/// the process aborts, from `PROFCODEC_TEST_ABORT_AFTER_RENAMES`, so that a test can stop an
/// append at each of its steps as a `kill -9` would.
fn renames_before_abort() -> Option<u64> {
    if cfg!(debug_assertions) {
        std::env::var("PROFCODEC_TEST_ABORT_AFTER_RENAMES")
            .ok()?
            .parse()
            .ok()
    } else {
        None
    }
}

/// Renames `from` to `to` unless something is at `to`, atomically where the OS can
/// (`renameat2(RENAME_NOREPLACE)` on Linux); fails with [`ErrorKind::AlreadyExists`] otherwise.
fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            // A file system without the flag: the fallback below.
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(e.into()),
        }
    }
    if std::fs::symlink_metadata(from)?.is_dir() {
        // Folders cannot be linked: a check, then a rename (which still fails over a folder
        // that is not empty).
        if std::fs::symlink_metadata(to).is_ok() {
            return Err(io::Error::from(ErrorKind::AlreadyExists));
        }
        return std::fs::rename(from, to);
    }
    // A hard link fails when `to` exists; the staged name then goes with the staging folder.
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// The staging folders of this process that exist now: what [`remove_live_staging`] removes.
static LIVE_STAGING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the staging folders this process is writing into, for a front end's signal handler
/// (SIGINT, SIGTERM) to call just before the process exits: the outputs being written are not
/// placed, and nothing is left behind. Returns how many were removed.
pub fn remove_live_staging() -> usize {
    live_staging()
        .iter()
        .filter(|path| std::fs::remove_dir_all(path).is_ok())
        .count()
}

/// A staging folder beside an output, named after this process (for the person who finds
/// one), held by this run through the lock on its [`STAGING_LOCK`], registered for
/// [`remove_live_staging`] and removed (with what it holds) when dropped.
#[derive(Debug)]
struct Staging {
    /// `None` once kept or closed.
    dir: Option<tempfile::TempDir>,
    path: PathBuf,
    /// The open lock file, holding the lock; `None` once kept.
    lock: Option<File>,
}

impl Staging {
    fn new(folder: &Path) -> Result<Staging, OutputError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("{STAGING_PREFIX}{}-", std::process::id()))
            .tempdir_in(folder)
            .map_err(io_at(Step::CreateStaging, folder))?;
        let path = dir.path().to_path_buf();
        let lock = take_staging_lock(&path).map_err(io_at(Step::CreateStaging, folder))?;
        live_staging().push(path.clone());
        Ok(Staging {
            dir: Some(dir),
            path,
            lock: Some(lock),
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// Leaves the folder behind: it holds the only copy of a replaced output. Its lock file
    /// goes, so that no later run takes it for a killed run's staging and removes it.
    fn keep(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_file(self.path.join(STAGING_LOCK));
            drop(self.lock.take());
            let _ = dir.keep();
        }
    }

    /// Removes the folder now, reporting a failure.
    fn close(mut self) -> Result<(), OutputError> {
        match self.dir.take() {
            Some(dir) => dir.close().map_err(io_at(Step::RemoveStaging, &self.path)),
            None => Ok(()),
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // The TempDir, if still held, removes the folder as it drops after this; the lock is
        // released after that, as the lock file closes.
        live_staging().retain(|p| *p != self.path);
    }
}

/// The list behind [`remove_live_staging`], usable after a panic elsewhere.
fn live_staging() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    LIVE_STAGING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes the lock file of the new staging folder `dir` and takes its lock. The file is made
/// under another name, locked, then renamed to [`STAGING_LOCK`]: a lock file that can be seen
/// is locked already, so no other run can find it free between its making and its locking.
fn take_staging_lock(dir: &Path) -> io::Result<File> {
    let unnamed = dir.join(".profcodec-lock-new");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&unnamed)?;
    if !try_lock(&file)? {
        return Err(io::Error::new(
            ErrorKind::WouldBlock,
            "the new staging folder's lock file is locked by another process",
        ));
    }
    std::fs::rename(&unnamed, dir.join(STAGING_LOCK))?;
    Ok(file)
}

/// Takes an exclusive `flock` on `file` without waiting: `false` when another open file (of
/// this process or another) holds it. Locks are per open file description, so a second
/// `open` of the same file in one process is refused as another process would be. On a
/// network file system Linux takes the lock on the server (NFS: byte-range locks), so runs
/// on other hosts see it too.
#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Without `flock`, no lock is taken, and none is ever found free: no staging folder is
/// judged dead.
#[cfg(not(unix))]
fn try_lock(_: &File) -> io::Result<bool> {
    Ok(false)
}

/// Whether the staging folder `dir` belongs to no live run: its [`STAGING_LOCK`] exists and
/// its lock could be taken (the lock, on `Some`, is held until the file returned is dropped).
/// A folder without a lock file is never judged dead: it was kept on purpose, made by an
/// older profcodec that judged by process id, or is being made at this moment.
fn dead_staging(dir: &Path) -> Option<File> {
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .open(dir.join(STAGING_LOCK))
        .ok()?;
    try_lock(&lock).ok()?.then_some(lock)
}

/// Removes the staging folders in `folder` left by profcodec runs that no longer run (a
/// `kill -9`, a power cut, in this container or another, on this host or another), returning
/// their paths. A folder whose lock a run holds, or which has no lock file, is left alone.
fn remove_stale_staging(folder: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(entries) = std::fs::read_dir(folder) else {
        return removed;
    };
    for entry in entries.flatten() {
        let is_staging = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(STAGING_PREFIX));
        if !is_staging || !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let path = entry.path();
        // The lock stays taken while the folder is removed: no other run can judge it again.
        let Some(_lock) = dead_staging(&path) else {
            continue;
        };
        if std::fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// An [`OutputError::Io`] maker for errors at `step` on `path`.
fn io_at(step: Step, path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        step,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests;
