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
    options: &Options,
) -> Result<Vec<Input>, ProfError> {
    let mut inputs = Vec::new();
    for m in measurements {
        let path = m.as_ref();
        if path.is_dir() {
            if !options.ignore_structs {
                refuse_structs(path)?;
            }
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

/// Placing contexts in the program's structure from hpcstruct files is not implemented: rather
/// than make a database that silently differs from hpcprof's, a folder with structure files is
/// refused unless they are to be ignored.
fn refuse_structs(folder: &Path) -> Result<(), ProfError> {
    let structs = folder.join("structs");
    let Ok(entries) = std::fs::read_dir(&structs) else {
        return Ok(());
    };
    let has_struct = entries
        .flatten()
        .any(|e| e.path().extension().is_some_and(|x| x == "hpcstruct"));
    if has_struct {
        return Err(ProfError::Unsupported {
            path: structs,
            what: "placing contexts in program structure from hpcstruct files is not \
                   implemented yet; run with --ignore-structs to place them as instructions \
                   in their load modules"
                .to_owned(),
        });
    }
    Ok(())
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
