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

/// The threads of every measurement, measurement by measurement, each folder's threads in
/// (rank, thread, name) order.
pub(crate) fn list<P: AsRef<Path>>(
    measurements: &[P],
    _options: &Options,
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
