//! `profcodec.prof()`: an HPCToolkit database from hpcrun measurements, as `profcodec prof`
//! (and HPCToolkit's `hpcprof`) makes it.

use std::path::PathBuf;

use profcodec::prof::{ProfError, ProfFailure, ProfOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert;
use crate::errors::{Error, Kind};

/// Makes the HPCToolkit database (database v4: meta.db, profile.db, cct.db, trace.db,
/// metrics/default.yaml) of the hpcrun `measurements` (measurement folders or `.hpcrun`
/// files) into the new folder `out`, as `profcodec prof` and HPCToolkit's `hpcprof` make it.
/// `jobs`: threads decoding measurement files (every core by default; the database is the
/// same for any number); `ignore_structs`: leave out the structs/ folders' hpcstruct files;
/// `no_traces`: no trace.db; `title`: the database's title (the program's name by default).
/// The folder appears whole once complete; an existing folder is never replaced, and an output
/// inside a measurement is refused.
///
/// Returns a dict: `path`, `contexts`, `threads` (thread profiles) and `traces` (whether
/// trace.db was written). Each file left out (an entry of a measurement folder that is no
/// thread's file, a structure or symbols file refused or unreadable) is a `UserWarning` naming
/// it and why. Raises profcodec.InvalidDataError naming a damaged measurement file,
/// UnsupportedError for what is not placed yet, FileError for a refused output.
#[pyfunction]
#[pyo3(signature = (measurements, out, *, jobs=None, ignore_structs=false, no_traces=false, title=None))]
pub(crate) fn prof<'py>(
    py: Python<'py>,
    measurements: Vec<PathBuf>,
    out: PathBuf,
    jobs: Option<usize>,
    ignore_structs: bool,
    no_traces: bool,
    title: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    if measurements.is_empty() {
        return Err(PyValueError::new_err("prof needs at least one measurement"));
    }
    if jobs == Some(0) {
        return Err(PyValueError::new_err("jobs must be at least 1"));
    }
    let options = ProfOptions {
        jobs,
        ignore_structs,
        no_traces,
        title,
    };
    let summary = py
        .detach(|| profcodec::prof::prof(&measurements, &options, &out))
        .map_err(|e| PyErr::from(error(e)))?;
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for warning in &summary.warnings {
        crate::binaries::warn(py, &category, warning.clone())?;
    }
    let d = PyDict::new(py);
    d.set_item("path", summary.path)?;
    d.set_item("contexts", summary.contexts)?;
    d.set_item("threads", summary.threads)?;
    d.set_item("traces", summary.traces)?;
    Ok(d)
}

/// The Python error of a failed `prof`.
fn error(e: ProfFailure) -> Error {
    match e {
        ProfFailure::Output(o) => convert::policy_error(o),
        ProfFailure::Write(ref io) => Error::io(e.to_string(), io),
        ProfFailure::Prof(ProfError::Io { ref source, .. }) => Error::io(e.to_string(), source),
        ProfFailure::Prof(ProfError::Decode { ref source, .. }) => {
            Error::invalid(&e, source.offset())
        }
        ProfFailure::Prof(ProfError::Unsupported { .. }) => {
            Error::new(Kind::Unsupported, e.to_string())
        }
        e => Error::new(Kind::Invalid, e.to_string()),
    }
}
