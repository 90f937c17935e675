//! Atomic output: a file or folder that appears whole once it is complete, or not at all.
//!
//! [`write_atomically`] hands its writer a staging path in a fresh folder beside the output (so
//! the final rename stays on one file system) and renames what the writer made there into place
//! only when the writer succeeded. [`write_file_atomically`] does the same for a writer into an
//! [`io::Write`], buffered and synced to the disk before the rename. Whatever happens, the output
//! holds its old content or the whole new one, never a part, and never a mix of both: an existing
//! folder is replaced whole, not merged into.
//!
//! - The folder the output goes into must exist: it is not created, so that a typo in a path
//!   does not make one ([`AtomicWriteError::FolderMissing`]).
//! - An existing output is refused unless it is an empty folder, or [`Replace::Always`] says to
//!   replace it ([`AtomicWriteError::Exists`]).
//! - An existing output is moved aside, not deleted, until the new one is in place: the input
//!   of a conversion may be its output (a memory map of it stays valid), and a failed rename
//!   puts it back. An existing file replaced by a file is renamed over in one step.
//! - When the writer fails, its error comes back as [`AtomicWriteError::Write`], the output is
//!   untouched and the staging folder is removed.
//!
//! ```
//! use profcodec::output::{AtomicWriteError, Replace, write_file_atomically};
//! use std::io::Write;
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("out.folded");
//! write_file_atomically(&path, Replace::IfEmptyFolder, |out| writeln!(out, "main;work 3"))?;
//! assert_eq!(std::fs::read_to_string(&path)?, "main;work 3\n");
//!
//! // An existing output is only replaced when asked to.
//! let again = write_file_atomically(&path, Replace::IfEmptyFolder, |out| writeln!(out, "new"));
//! assert!(matches!(again, Err(AtomicWriteError::Exists { .. })));
//! write_file_atomically(&path, Replace::Always, |out| writeln!(out, "main 1"))?;
//! assert_eq!(std::fs::read_to_string(&path)?, "main 1\n");
//!
//! // A failed write leaves the old output as it was.
//! let failed = write_file_atomically(&path, Replace::Always, |out| {
//!     out.write_all(b"half")?;
//!     Err::<(), _>(std::io::Error::other("the profile has no samples"))
//! });
//! assert!(matches!(failed, Err(AtomicWriteError::Write(_))));
//! assert_eq!(std::fs::read_to_string(&path)?, "main 1\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::{Path, PathBuf};

/// The prefix of the staging folder made beside the output, removed before
/// [`write_atomically`] returns unless a replaced output could not be put back
/// ([`AtomicWriteError::NotRestored`]).
pub const STAGING_PREFIX: &str = ".profcodec-staging-";

/// What to do with an output that already exists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Replace {
    /// Write only where nothing is, or over an empty folder; anything else is refused with
    /// [`AtomicWriteError::Exists`].
    #[default]
    IfEmptyFolder,
    /// Replace an existing output, file or folder, whole.
    Always,
}

/// The step of [`write_atomically`] at which an I/O error happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Step {
    /// Reading the metadata of the folder the output goes into.
    InspectFolder,
    /// Reading the metadata, or the entries, of the existing output.
    InspectOutput,
    /// Creating the staging folder beside the output.
    CreateStaging,
    /// Creating the staged file ([`write_file_atomically`]).
    CreateFile,
    /// Writing the rest of the buffered staged file and syncing it to the disk
    /// ([`write_file_atomically`]).
    SyncFile,
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
            Step::MoveAside => "move aside the existing output",
            Step::Rename => "rename the staged output into place at",
            Step::RemoveStaging => "remove the staging folder",
        })
    }
}

/// Why [`write_atomically`] or [`write_file_atomically`] did not put a new output in place.
///
/// Every error leaves the output as it was before the call, but two: an
/// [`AtomicWriteError::Io`] at [`Step::RemoveStaging`] (the new output is in place; the staging
/// folder, with the output it replaced, is left behind) and [`AtomicWriteError::NotRestored`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AtomicWriteError<E> {
    /// The writer failed; its own error.
    #[error(transparent)]
    Write(E),
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
    /// The output exists and is not an empty folder, and [`Replace::IfEmptyFolder`] was asked
    /// for.
    #[error("{} already exists and is not an empty folder", .path.display())]
    Exists {
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

impl<E> AtomicWriteError<E> {
    /// The I/O error behind this error, when there is one (not for [`AtomicWriteError::Write`],
    /// whose error is the writer's): for a caller that reports the OS's error code.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            AtomicWriteError::FolderMissing { source, .. }
            | AtomicWriteError::Io { source, .. }
            | AtomicWriteError::NotRestored { source, .. } => Some(source),
            AtomicWriteError::Write(_)
            | AtomicWriteError::NotAFolder { .. }
            | AtomicWriteError::Exists { .. } => None,
        }
    }
}

/// An [`AtomicWriteError::Io`] maker for errors at `step` on `path`.
fn io_at<E>(step: Step, path: &Path) -> impl FnOnce(io::Error) -> AtomicWriteError<E> + '_ {
    move |source| AtomicWriteError::Io {
        step,
        path: path.to_path_buf(),
        source,
    }
}

/// Runs `write` on a staging path beside `output` and renames what it made there (a file or a
/// folder: `write` creates it) into place when it succeeds; see the [module](self) for the
/// rules.
///
/// The staging path does not exist when `write` is called and its parent folder does. When
/// `write` fails, its error is returned as [`AtomicWriteError::Write`] and `output` is
/// untouched.
pub fn write_atomically<T, E>(
    output: &Path,
    replace: Replace,
    write: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, AtomicWriteError<E>> {
    stage_and_rename(output, replace, |staged| {
        write(staged).map_err(AtomicWriteError::Write)
    })
}

/// Runs `write` on a buffered file beside `output`, syncs that file to the disk and renames it
/// into place when `write` succeeds; see [`write_atomically`] and the [module](self) for the
/// rules.
pub fn write_file_atomically<T, E>(
    output: &Path,
    replace: Replace,
    write: impl FnOnce(&mut dyn Write) -> Result<T, E>,
) -> Result<T, AtomicWriteError<E>> {
    stage_and_rename(output, replace, |staged| {
        let file = File::create(staged).map_err(io_at(Step::CreateFile, output))?;
        let mut out = BufWriter::new(file);
        let value = write(&mut out).map_err(AtomicWriteError::Write)?;
        let file = out
            .into_inner()
            .map_err(|e| io_at(Step::SyncFile, output)(e.into_error()))?;
        file.sync_all().map_err(io_at(Step::SyncFile, output))?;
        Ok(value)
    })
}

/// [`write_atomically`] with a writer whose errors are already [`AtomicWriteError`]s.
fn stage_and_rename<T, E>(
    output: &Path,
    replace: Replace,
    write: impl FnOnce(&Path) -> Result<T, AtomicWriteError<E>>,
) -> Result<T, AtomicWriteError<E>> {
    let folder = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    match std::fs::metadata(folder) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(AtomicWriteError::NotAFolder {
                folder: folder.to_path_buf(),
            });
        }
        Err(source)
            if matches!(
                source.kind(),
                ErrorKind::NotFound | ErrorKind::NotADirectory
            ) =>
        {
            return Err(AtomicWriteError::FolderMissing {
                folder: folder.to_path_buf(),
                source,
            });
        }
        Err(e) => return Err(io_at(Step::InspectFolder, folder)(e)),
    }
    // The existing output, if any: whether it is a folder.
    let existing = match std::fs::symlink_metadata(output) {
        Ok(meta) => {
            let empty_folder = meta.is_dir()
                && std::fs::read_dir(output)
                    .map_err(io_at(Step::InspectOutput, output))?
                    .next()
                    .is_none();
            if !empty_folder && replace != Replace::Always {
                return Err(AtomicWriteError::Exists {
                    path: output.to_path_buf(),
                });
            }
            Some(meta.is_dir())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => return Err(io_at(Step::InspectOutput, output)(e)),
    };
    // Removed, with whatever it holds, when dropped: on every early return below.
    let staging = tempfile::Builder::new()
        .prefix(STAGING_PREFIX)
        .tempdir_in(folder)
        .map_err(io_at(Step::CreateStaging, folder))?;
    let staged = staging.path().join("output");
    let value = write(&staged)?;
    let staged_is_folder = std::fs::symlink_metadata(&staged).is_ok_and(|m| m.is_dir());
    match existing {
        // A folder cannot be renamed over, nor a file over a folder: the old output goes aside
        // first, and comes back if the new one cannot take its place.
        Some(existing_is_folder) if existing_is_folder || staged_is_folder => {
            let aside = staging.path().join("replaced");
            std::fs::rename(output, &aside).map_err(io_at(Step::MoveAside, output))?;
            if let Err(rename) = std::fs::rename(&staged, output) {
                if let Err(source) = std::fs::rename(&aside, output) {
                    // Removing the staging folder would delete the only copy of the old output.
                    let kept = staging.keep().join("replaced");
                    return Err(AtomicWriteError::NotRestored {
                        path: output.to_path_buf(),
                        kept,
                        rename,
                        source,
                    });
                }
                return Err(io_at(Step::Rename, output)(rename));
            }
        }
        // Nothing to replace, or a file over a file: one rename, so the output is never missing.
        _ => std::fs::rename(&staged, output).map_err(io_at(Step::Rename, output))?,
    }
    let staging_path = staging.path().to_path_buf();
    staging
        .close()
        .map_err(io_at(Step::RemoveStaging, &staging_path))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn write_text(text: &str) -> impl FnOnce(&mut dyn Write) -> io::Result<()> + '_ {
        move |out| out.write_all(text.as_bytes())
    }

    #[test]
    fn a_new_file_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out");
        write_file_atomically(&out, Replace::IfEmptyFolder, write_text("new")).expect("write");
        assert_eq!(std::fs::read_to_string(&out).expect("read"), "new");
        assert_eq!(names(dir.path()), ["out"]);
    }

    #[test]
    fn an_existing_output_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("file");
        std::fs::write(&file, "old").expect("write");
        let err = write_file_atomically(&file, Replace::IfEmptyFolder, write_text("new"))
            .expect_err("refused");
        assert!(
            matches!(&err, AtomicWriteError::Exists { path } if *path == file),
            "{err:?}"
        );
        assert!(err.to_string().contains("already exists"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "old");

        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).expect("mkdir");
        std::fs::write(folder.join("keep"), "old").expect("write");
        let err = write_atomically(&folder, Replace::IfEmptyFolder, |staged| {
            std::fs::create_dir(staged)
        })
        .expect_err("refused");
        assert!(matches!(err, AtomicWriteError::Exists { .. }), "{err:?}");
        assert_eq!(names(&folder), ["keep"]);
        assert_eq!(names(dir.path()), ["file", "folder"]);
    }

    #[test]
    fn an_empty_folder_is_replaced_without_always() {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = dir.path().join("db");
        std::fs::create_dir(&folder).expect("mkdir");
        write_atomically(&folder, Replace::IfEmptyFolder, |staged| {
            std::fs::create_dir(staged)?;
            std::fs::write(staged.join("meta.db"), "new")
        })
        .expect("write");
        assert_eq!(names(&folder), ["meta.db"]);
        assert_eq!(names(dir.path()), ["db"]);
    }

    #[test]
    fn always_replaces_a_file_or_a_folder_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("file");
        std::fs::write(&file, "old content, longer than the new").expect("write");
        write_file_atomically(&file, Replace::Always, write_text("new")).expect("write");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "new");

        let folder = dir.path().join("db");
        std::fs::create_dir(&folder).expect("mkdir");
        std::fs::write(folder.join("trace.db"), "old").expect("write");
        write_atomically(&folder, Replace::Always, |staged| {
            std::fs::create_dir(staged)?;
            std::fs::write(staged.join("meta.db"), "new")
        })
        .expect("write");
        assert_eq!(names(&folder), ["meta.db"], "merged with the old folder");

        // A file where a folder was, and a folder where a file was.
        write_file_atomically(&folder, Replace::Always, write_text("file")).expect("write");
        assert_eq!(std::fs::read_to_string(&folder).expect("read"), "file");
        write_atomically(&file, Replace::Always, |staged| std::fs::create_dir(staged))
            .expect("write");
        assert!(file.is_dir());
        assert_eq!(names(dir.path()), ["db", "file"]);
    }

    #[test]
    fn the_input_may_be_the_output() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("self");
        std::fs::write(&path, "old").expect("write");
        write_atomically(&path, Replace::Always, |staged| {
            let old = std::fs::read_to_string(&path)?;
            std::fs::write(staged, old + " and new")
        })
        .expect("write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "old and new");
        assert_eq!(names(dir.path()), ["self"]);
    }

    #[test]
    fn a_failed_writer_leaves_the_old_output_and_no_staging() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("file");
        std::fs::write(&file, "old").expect("write");
        let err = write_file_atomically(&file, Replace::Always, |out| {
            out.write_all(b"half of the new")?;
            Err::<(), _>(io::Error::other("no samples"))
        })
        .expect_err("failed");
        assert!(matches!(err, AtomicWriteError::Write(_)), "{err:?}");
        assert_eq!(err.to_string(), "no samples");
        assert_eq!(std::fs::read_to_string(&file).expect("read"), "old");

        let folder = dir.path().join("db");
        std::fs::create_dir(&folder).expect("mkdir");
        std::fs::write(folder.join("meta.db"), "old").expect("write");
        let err = write_atomically(&folder, Replace::Always, |staged| {
            std::fs::create_dir(staged)?;
            std::fs::write(staged.join("meta.db"), "half")?;
            Err::<(), _>(io::Error::other("damaged input"))
        })
        .expect_err("failed");
        assert_eq!(err.to_string(), "damaged input");
        assert_eq!(
            std::fs::read_to_string(folder.join("meta.db")).expect("read"),
            "old"
        );
        assert_eq!(names(dir.path()), ["db", "file"]);

        // Nor is an output left where there was none.
        let new = dir.path().join("new");
        write_atomically(&new, Replace::IfEmptyFolder, |staged| {
            std::fs::write(staged, "half")?;
            Err::<(), _>(io::Error::other("damaged input"))
        })
        .expect_err("failed");
        assert_eq!(names(dir.path()), ["db", "file"]);
    }

    #[test]
    fn a_missing_folder_is_a_typed_error_and_is_not_created() {
        let dir = tempfile::tempdir().expect("tempdir");
        let folder = dir.path().join("no such folder");
        let err = write_file_atomically(&folder.join("out"), Replace::Always, write_text("new"))
            .expect_err("refused");
        match &err {
            AtomicWriteError::FolderMissing { folder: f, source } => {
                assert_eq!(*f, folder);
                assert_eq!(source.kind(), ErrorKind::NotFound);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err.io_error().map(io::Error::kind),
            Some(ErrorKind::NotFound)
        );
        let message = err.to_string();
        assert!(
            message.contains("does not exist") && message.contains("no such folder"),
            "{message}"
        );
        assert!(!folder.exists());

        // A file where the folder should be.
        let file = dir.path().join("file");
        std::fs::write(&file, "").expect("write");
        let err = write_file_atomically(&file.join("out"), Replace::Always, write_text("new"))
            .expect_err("refused");
        assert!(
            matches!(&err, AtomicWriteError::NotAFolder { folder } if *folder == file),
            "{err:?}"
        );
        assert_eq!(names(dir.path()), ["file"]);
    }

    #[test]
    fn a_relative_output_goes_into_the_current_folder() {
        // Only the folder's lookup differs; a relative path with no folder must not be refused
        // as a missing "" folder.
        let err = write_atomically(
            Path::new("profcodec-output-test-never-written"),
            Replace::IfEmptyFolder,
            |_| Err::<(), _>("stop before writing"),
        )
        .expect_err("the writer failed");
        assert!(matches!(err, AtomicWriteError::Write(_)), "{err:?}");
    }

    #[test]
    fn an_io_error_names_the_step_and_the_path() {
        let err: AtomicWriteError<io::Error> =
            io_at(Step::Rename, Path::new("/x/out"))(io::Error::other("disk full"));
        assert_eq!(
            err.to_string(),
            "could not rename the staged output into place at /x/out: disk full"
        );
    }
}
