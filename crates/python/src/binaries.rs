//! `binary_path`: where the methods that read hpcrun measurements into the profile model (or
//! their traces into a timeline) search the binaries first, and the warnings that say which
//! load modules stayed unresolved.

use std::path::PathBuf;

use pyo3::prelude::*;

/// A `UserWarning` for each load module of an hpcrun measurement that stayed unresolved, and
/// for each structure file (`structs/*.hpcstruct`) that was not used, and why, in the words of
/// the command line's standard error; each once, though a report reads a measurement twice
/// (its profile and its timeline).
fn warn_unresolved(py: Python<'_>, reports: &[profcodec::symbols::ModuleReport]) -> PyResult<()> {
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    let mut said = std::collections::HashSet::new();
    for report in reports {
        for message in profcodec::symbols::warnings(report, "binary_path") {
            if said.insert(message.clone()) {
                warn(py, &category, message)?;
            }
        }
    }
    Ok(())
}

/// Runs `read` with the GIL released and the binaries of hpcrun measurements searched in
/// `binary_path` first (then `PROFCODEC_BINARY_PATH`'s folders and the recorded paths), then
/// warns of each load module it left unresolved: what every method that builds the profile
/// model (or an hpcrun timeline) does with its `binary_path`.
pub(crate) fn resolving<T: Send>(
    py: Python<'_>,
    binary_path: Vec<PathBuf>,
    read: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let (out, reports) = py.detach(|| profcodec::symbols::resolving(binary_path, read));
    warn_unresolved(py, &reports)?;
    Ok(out)
}

/// Warns `message` in `category`, escaped for the terminal (`profcodec::terminal`): a NUL,
/// which a C string cannot hold, shows as `\x00`.
pub(crate) fn warn(
    py: Python<'_>,
    category: &Bound<'_, pyo3::types::PyType>,
    message: String,
) -> PyResult<()> {
    // Python prints a warning on standard error as it is: a name or path from a hostile input
    // is escaped for the terminal, its NUL (which a C string cannot hold) included.
    let message = std::ffi::CString::new(profcodec::terminal::escape(&message).into_owned())?;
    PyErr::warn(py, category.as_any(), &message, 1)
}
