//! A folder of profiles as many inputs: the runs of a test suite (`NYTPROF=addpid=1` leaves
//! one `nytprof.out.<pid>` per process), one capture per thread or rank, several databases of
//! one program.
//!
//! A folder that is itself one input (an HPCToolkit database, an hpcrun measurement folder, a
//! Devel::StatProfiler session) stays one input. Any other folder stands for the profiles in
//! it: each file whose first bytes are a profiler's magic and each sub-folder that is one input,
//! in name order, so that the merged answer is the same on every run. Every other entry (logs,
//! the test suite's own output, an empty file, a FIFO, a link to nothing, a folder of anything
//! else) is passed over with a word that says why ([`Skipped`]); a folder that holds no profile
//! is refused with the reason.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::{Format, OpenError, STDIN, UnknownFormat, open};

/// How many bytes [`Format::detect`] needs.
const HEAD: usize = 24;

/// How many skipped entries [`Expanded::warnings`] names one by one before it counts the rest.
const NAMED_SKIPS: usize = 5;

/// The inputs `paths` stand for ([`expand_inputs`]), and the entries of their folders that
/// were passed over.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Expanded {
    /// The inputs, in the order they are read and merged.
    pub paths: Vec<PathBuf>,
    /// The entries of the folders given that are not profiles, in the order they were met.
    pub skipped: Vec<Skipped>,
}

impl Expanded {
    /// What a face says of the skipped entries, one line each (`runs/prove.log: skipped: ...`):
    /// the first few named, the rest counted on a last line, so a folder of many logs costs a
    /// few lines of standard error and not one per log.
    pub fn warnings(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .skipped
            .iter()
            .take(NAMED_SKIPS)
            .map(Skipped::to_string)
            .collect();
        let rest = self.skipped.len().saturating_sub(NAMED_SKIPS);
        if rest > 0 {
            lines.push(format!(
                "{rest} more {} of the folders given skipped (no profile)",
                if rest == 1 { "entry" } else { "entries" }
            ));
        }
        lines
    }
}

/// An entry of a folder of profiles that is not read, and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct Skipped {
    /// The entry, as the folder's path joined with its name.
    pub path: PathBuf,
    /// Why it is not read.
    pub reason: SkipReason,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: skipped: {}", self.path.display(), self.reason)
    }
}

/// Why an entry of a folder of profiles is not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SkipReason {
    /// A regular file whose first bytes are no profiler's magic (a log, or an empty file).
    #[error("not a profile: {0}")]
    NotAProfile(UnknownFormat),
    /// A FIFO, socket or device: never opened, since opening or reading one can block forever.
    #[error("a {0} is not read (reading one could block): profiles are read from files")]
    NotAFile(&'static str),
    /// A symbolic link whose target does not exist.
    #[error("a symbolic link to {}, which does not exist", .0.display())]
    DanglingLink(PathBuf),
    /// A folder that is not one input: the folders in a folder of profiles are not searched.
    #[error(
        "a folder that is no HPCToolkit database, hpcrun measurement folder or \
         Devel::StatProfiler session (the folders inside a folder of profiles are not searched)"
    )]
    NotOneInput,
}

/// The inputs `paths` stand for: each path as it is, but a folder that is no single input
/// replaced by the profiles it holds. A folder that is one input (an HPCToolkit database, an
/// hpcrun measurement folder, a Devel::StatProfiler session) stays one; any other stands for
/// its files that start with a profiler's magic and its sub-folders that are one input. The
/// order of `paths` is kept; a folder's profiles come in the byte order of their names, so a
/// merged answer is the same on every run. A folder that holds no profile is
/// [`OpenError::NoProfiles`].
///
/// Nothing in a folder is dropped without a word: each entry passed over is in
/// [`Expanded::skipped`] with its reason (a file that starts with no profiler's magic, such as
/// a log or an empty file; a FIFO, socket or device, which is never opened; a symbolic link to
/// nothing; a sub-folder that is not one input), for the faces to print
/// ([`Expanded::warnings`]). A damaged profile is not skipped: a file that starts with a
/// profiler's magic is an input, and reading it fails with the error that naming the file
/// itself gives, as does an entry that cannot be read (no permission, a loop of links) and a
/// sub-folder that looks like one input but cannot be opened. A user who names a folder of
/// profiles expects every profile in it to count.
///
/// ```no_run
/// // Every nytprof.out.<pid> of a test suite's run, merged into one profile.
/// let inputs = profcodec::expand_inputs(["profiles/"])?;
/// for line in inputs.warnings() {
///     eprintln!("{line}");
/// }
/// let merged = profcodec::merged_profile(&inputs.paths, &profcodec::MergeOptions::default())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expand_inputs<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
) -> Result<Expanded, OpenError> {
    let mut expanded = Expanded::default();
    for path in paths {
        let path = path.as_ref();
        if path == Path::new(STDIN) || !path.is_dir() {
            expanded.paths.push(path.to_path_buf());
            continue;
        }
        match open(path) {
            Ok(_) => expanded.paths.push(path.to_path_buf()),
            Err(OpenError::NotADatabase(dir)) => {
                let before = expanded.paths.len();
                profiles_in(&dir, &mut expanded)?;
                if expanded.paths.len() == before {
                    return Err(OpenError::NoProfiles(dir));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(expanded)
}

/// Appends the profiles `dir` holds, in name order, and the entries it passes over.
fn profiles_in(dir: &Path, expanded: &mut Expanded) -> Result<(), OpenError> {
    let io_err = |source| OpenError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = std::fs::read_dir(dir)
        .map_err(io_err)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io_err)?;
    entries.sort();
    for entry in entries {
        match skip_reason(&entry) {
            Some(reason) => expanded.skipped.push(Skipped {
                path: entry,
                reason,
            }),
            None => expanded.paths.push(entry),
        }
    }
    Ok(())
}

/// Why `entry` is not a profile, or `None` when it is read as one (a profile, or an entry whose
/// opening will say what is wrong with it).
fn skip_reason(entry: &Path) -> Option<SkipReason> {
    let meta = match std::fs::metadata(entry) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // Listed but gone: a link to nothing (or an entry removed since it was listed).
            return std::fs::read_link(entry).ok().map(SkipReason::DanglingLink);
        }
        // No permission, a loop of links: opening it names the error.
        Err(_) => return None,
    };
    if meta.is_dir() {
        // A sub-folder counts when it is one input; folders are not searched deeper.
        return match open(entry) {
            Err(OpenError::NotADatabase(_)) => Some(SkipReason::NotOneInput),
            _ => None,
        };
    }
    if !meta.is_file() {
        return Some(SkipReason::NotAFile(special_kind(&meta.file_type())));
    }
    match first_bytes(entry) {
        Ok(head) => Format::detect(&head).err().map(SkipReason::NotAProfile),
        // A file that cannot be read is kept, so that opening it says why.
        Err(_) => None,
    }
}

/// The first bytes of a regular file (one short read, so that a folder of many large profiles
/// is listed without reading them). Never blocks: the file is opened without waiting for a
/// writer, and refused unless it is still a regular file once open (a FIFO put in its place
/// since it was listed is not read).
fn first_bytes(path: &Path) -> io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("no longer a regular file"));
    }
    let mut head = Vec::with_capacity(HEAD);
    file.take(HEAD as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// What a file that is neither regular nor a folder is, in words.
fn special_kind(kind: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "FIFO";
        }
        if kind.is_socket() {
            return "socket";
        }
        if kind.is_char_device() || kind.is_block_device() {
            return "device";
        }
    }
    let _ = kind;
    "file that is not a regular file"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata")
            .join(rel)
    }

    #[test]
    fn a_folder_of_profiles_is_its_profiles_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for (name, source) in [
            ("nytprof.out.20", "nytprof/workload-300.nytprof.out"),
            ("nytprof.out.10", "nytprof/workload-100.nytprof.out"),
        ] {
            std::fs::copy(testdata(source), dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("prove.log"), "ok 1\n").unwrap();
        std::fs::create_dir(dir.path().join("empty")).unwrap();
        let one = testdata("nytprof/hello.nytprof.out");
        let expanded = expand_inputs([one.as_path(), dir.path()]).unwrap();
        let skipped: Vec<String> = expanded.skipped.iter().map(|s| s.to_string()).collect();
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert!(skipped[0].ends_with("empty: skipped: a folder that is no HPCToolkit database, hpcrun measurement folder or Devel::StatProfiler session (the folders inside a folder of profiles are not searched)"), "{skipped:?}");
        assert!(skipped[1].contains("prove.log: skipped: not a profile: unknown format: at byte 0x0: expected a profiler file's magic but found 6f 6b"), "{skipped:?}");
        assert_eq!(
            expanded.paths,
            [
                one,
                dir.path().join("nytprof.out.10"),
                dir.path().join("nytprof.out.20")
            ]
        );
    }

    #[test]
    fn a_folder_that_is_one_input_stays_one() {
        let db = testdata("hpctoolkit/demo.d");
        assert_eq!(expand_inputs([&db]).unwrap().paths, [db]);
    }

    #[test]
    fn a_folder_without_profiles_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "no profile here").unwrap();
        let err = expand_inputs([dir.path()]).unwrap_err();
        assert!(matches!(err, OpenError::NoProfiles(_)), "{err}");
        assert!(err.to_string().contains("holds no profile"), "{err}");
    }

    #[test]
    fn many_skipped_entries_are_named_up_to_a_few_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(
            testdata("nytprof/hello.nytprof.out"),
            dir.path().join("nytprof.out.1"),
        )
        .unwrap();
        for i in 0..8 {
            std::fs::write(dir.path().join(format!("t{i}.log")), "ok\n").unwrap();
        }
        let expanded = expand_inputs([dir.path()]).unwrap();
        assert_eq!(expanded.paths.len(), 1);
        assert_eq!(expanded.skipped.len(), 8);
        let warnings = expanded.warnings();
        assert_eq!(warnings.len(), NAMED_SKIPS + 1, "{warnings:?}");
        assert!(warnings[0].contains("t0.log: skipped: not a profile"));
        assert_eq!(
            warnings[NAMED_SKIPS],
            "3 more entries of the folders given skipped (no profile)"
        );
    }
}
