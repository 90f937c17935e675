//! The files a database is made from: every thread's profile and trace, in a fixed order.

use std::path::{Path, PathBuf};

use profcodec_hpcrun::{FolderError, MeasurementFolder};

use crate::{Options, ProfError};

/// One thread's files: its `.hpcrun` profile and, when there is one, its `.hpctrace` trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    /// The `.hpcrun` profile.
    pub profile: PathBuf,
    /// The `.hpctrace` trace beside it.
    pub trace: Option<PathBuf>,
}

/// The folders hpcrun and hpcstruct put in a measurement folder, read where a profile names
/// them.
const COMPANION_FOLDERS: [&str; 4] = ["structs", "vdso", "gpubins", "kernel_symbols"];

/// How many left-out names a warning lists before it counts the rest.
const NAMES_LISTED: usize = 5;

/// The threads of every measurement, measurement by measurement, each folder's threads in
/// (rank, thread, name) order. An entry of a folder that is neither a thread's file, nor
/// hpcrun's log, nor a companion folder is left out with a warning.
pub(crate) fn list<P: AsRef<Path>>(
    measurements: &[P],
    _options: &Options,
    warnings: &mut Vec<String>,
) -> Result<Vec<Input>, ProfError> {
    let mut inputs = Vec::new();
    for m in measurements {
        let path = m.as_ref();
        if path.is_dir() {
            let folder = MeasurementFolder::open(path).map_err(|e| folder_error(path, e))?;
            for t in folder.threads() {
                if let Some(profile) = &t.profile {
                    inputs.push(Input {
                        profile: profile.clone(),
                        trace: t.trace.clone(),
                    });
                }
            }
            left_out(&folder, warnings);
        } else {
            let trace = path.with_extension("hpctrace");
            inputs.push(Input {
                profile: path.to_path_buf(),
                trace: trace.is_file().then_some(trace),
            });
        }
    }
    if inputs.is_empty() {
        return Err(ProfError::NoProfiles);
    }
    Ok(inputs)
}

/// Warns of the entries of `folder` that no thread uses and that are not hpcrun's.
fn left_out(folder: &MeasurementFolder, warnings: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(folder.path()) else {
        return;
    };
    let used: Vec<&Path> = folder.files().collect();
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| {
            let path = e.path();
            let name = e.file_name();
            let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            let known = (is_dir && COMPANION_FOLDERS.iter().any(|f| name == *f))
                || (!is_dir && path.extension().is_some_and(|x| x == "log"));
            !known && !used.contains(&path.as_path())
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.is_empty() {
        return;
    }
    names.sort();
    let count = names.len();
    let mut listed = names[..count.min(NAMES_LISTED)].join(", ");
    if count > NAMES_LISTED {
        listed.push_str(&format!(" and {} more", count - NAMES_LISTED));
    }
    warnings.push(format!(
        "{}: {count} {} left out, not a regular .hpcrun or .hpctrace file nor one of hpcrun's \
         folders ({}): {listed}",
        folder.path().display(),
        if count == 1 { "entry" } else { "entries" },
        COMPANION_FOLDERS.join(", "),
    ));
}

fn folder_error(path: &Path, e: FolderError) -> ProfError {
    match e {
        FolderError::Io { path, source } => ProfError::Io { path, source },
        FolderError::Decode { path, source } => ProfError::Decode { path, source },
        other => ProfError::Unsupported {
            path: path.to_path_buf(),
            what: other.to_string(),
        },
    }
}
