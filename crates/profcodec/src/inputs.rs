//! A folder of profiles as many inputs: the runs of a test suite (`NYTPROF=addpid=1` leaves
//! one `nytprof.out.<pid>` per process), one capture per thread or rank, several databases of
//! one program.
//!
//! A folder that is itself one input (an HPCToolkit database, an hpcrun measurement folder, a
//! Devel::StatProfiler session) stays one input. Any other folder stands for the profiles in
//! it: each file whose first bytes are a profiler's magic and each sub-folder that is one input,
//! in name order, so that the merged answer is the same on every run. Other files (logs, the
//! test suite's own output) are passed over; a folder that holds no profile is refused with
//! the reason.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::{Format, OpenError, STDIN, open};

/// How many bytes [`Format::detect`] needs.
const HEAD: usize = 24;

/// The inputs `paths` stand for: each path as it is, but a folder that is no single input
/// replaced by the profiles it holds. A folder that is one input (an HPCToolkit database, an
/// hpcrun measurement folder, a Devel::StatProfiler session) stays one; any other stands for
/// its files that start with a profiler's magic and its sub-folders that are one input (other
/// files, such as a test suite's logs, are passed over). The order of `paths` is kept; a
/// folder's profiles come in the byte order of their names, so a merged answer is the same on
/// every run. A folder that holds no profile is [`OpenError::NoProfiles`].
///
/// ```no_run
/// // Every nytprof.out.<pid> of a test suite's run, merged into one profile.
/// let inputs = profcodec::expand_inputs(["profiles/"])?;
/// let merged = profcodec::merged_profile(&inputs, &profcodec::MergeOptions::default())?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn expand_inputs<P: AsRef<Path>>(
    paths: impl IntoIterator<Item = P>,
) -> Result<Vec<PathBuf>, OpenError> {
    let mut inputs = Vec::new();
    for path in paths {
        let path = path.as_ref();
        if path == Path::new(STDIN) || !path.is_dir() {
            inputs.push(path.to_path_buf());
            continue;
        }
        match open(path) {
            Ok(_) => inputs.push(path.to_path_buf()),
            Err(OpenError::NotADatabase(dir)) => {
                let before = inputs.len();
                profiles_in(&dir, &mut inputs)?;
                if inputs.len() == before {
                    return Err(OpenError::NoProfiles(dir));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(inputs)
}

/// Appends the profiles `dir` holds, in name order.
fn profiles_in(dir: &Path, inputs: &mut Vec<PathBuf>) -> Result<(), OpenError> {
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
        let is_profile = if entry.is_dir() {
            // A sub-folder counts when it is one input; folders are not searched deeper.
            open(&entry).is_ok()
        } else {
            entry.is_file() && starts_with_magic(&entry)
        };
        if is_profile {
            inputs.push(entry);
        }
    }
    Ok(())
}

/// True when the file's first bytes are a profiler's magic (one short read, so that a folder
/// of many large profiles is listed without reading them).
fn starts_with_magic(path: &Path) -> bool {
    let mut head = Vec::with_capacity(HEAD);
    let read = File::open(path).and_then(|f| f.take(HEAD as u64).read_to_end(&mut head));
    match read {
        Ok(_) => Format::detect(&head).is_ok(),
        // A file that cannot be read is kept, so that opening it says why.
        Err(e) => e.kind() != io::ErrorKind::NotFound,
    }
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
        let inputs = expand_inputs([one.as_path(), dir.path()]).unwrap();
        assert_eq!(
            inputs,
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
        assert_eq!(expand_inputs([&db]).unwrap(), [db]);
    }

    #[test]
    fn a_folder_without_profiles_is_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "no profile here").unwrap();
        let err = expand_inputs([dir.path()]).unwrap_err();
        assert!(matches!(err, OpenError::NoProfiles(_)), "{err}");
        assert!(err.to_string().contains("holds no profile"), "{err}");
    }
}
