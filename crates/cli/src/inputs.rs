//! The inputs a command line names, as every verb of both programs takes them: a folder of
//! profiles stands for the profiles in it (`profcodec::expand_inputs`), and each entry of a
//! folder passed over is said on standard error with the reason.

use std::path::PathBuf;

use crate::failure::{Failure, say};

/// The inputs `paths` stand for, in order, each folder of profiles replaced by its profiles;
/// an entry passed over is said on standard error.
pub fn expand_inputs(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Failure> {
    let expanded = profcodec::expand_inputs(paths)?;
    for warning in expanded.warnings() {
        say(format_args!("profcodec: {warning}"));
    }
    Ok(expanded.paths)
}
