//! `prof`: HPCToolkit databases from hpcrun measurements, as HPCToolkit's `hpcprof` makes them
//! (`profcodec-hpcprof`), written through the output policy of every other writer.

use std::path::{Path, PathBuf};

pub use profcodec_hpcprof::{Options as ProfOptions, ProfError};

use crate::output::{OutputError, OutputPath, WriteError};

/// Why `prof` made no database; the output is as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfFailure {
    /// The output path is refused by the output policy, or the database could not be put in
    /// place.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The measurements could not be read or placed.
    #[error(transparent)]
    Prof(#[from] ProfError),
    /// A database file could not be written.
    #[error("writing the database: {0}")]
    Write(std::io::Error),
}

/// What `prof` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProfSummary {
    /// The database folder.
    pub path: PathBuf,
    /// Contexts of the unified tree (entry points and contexts, without the global one).
    pub contexts: usize,
    /// Thread profiles (without the summary profile).
    pub threads: usize,
    /// Whether trace.db was written.
    pub traces: bool,
    /// What was left out, in words, each naming the file and why (see
    /// [`profcodec_hpcprof::Made::warnings`]).
    pub warnings: Vec<String>,
}

/// Makes the database of `measurements` (folders or `.hpcrun` files) into the new folder
/// `output`. The output path is checked before any measurement is read; the database appears
/// whole or not at all, and an existing folder is never replaced.
pub fn prof<P: AsRef<Path>>(
    measurements: &[P],
    options: &ProfOptions,
    output: &Path,
) -> Result<ProfSummary, ProfFailure> {
    let checked = OutputPath::folder(output)
        .inputs(measurements.iter().map(|m| m.as_ref().to_path_buf()))
        .check()?;
    let made = profcodec_hpcprof::make(measurements, options)?;
    let db = made.database;
    let summary = ProfSummary {
        path: output.to_path_buf(),
        contexts: db.meta.entry_points.len() + db.meta.contexts.len(),
        threads: db.profiles.iter().filter(|p| !p.is_summary()).count(),
        traces: db.traces.is_some(),
        warnings: made.warnings,
    };
    checked
        .write_with(|staged| profcodec_hpcprof::write_database(&db, staged))
        .map_err(|e| match e {
            WriteError::Output(o) => ProfFailure::Output(o),
            WriteError::Write(w) => ProfFailure::Write(w),
        })?;
    Ok(summary)
}
