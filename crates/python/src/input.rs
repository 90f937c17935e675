//! `profcodec.Input`: a file or folder opened with its format detected.

use std::path::PathBuf;

use pyo3::prelude::*;

use crate::errors::Error;
use crate::profile::Profile;

/// A file or folder opened by `profcodec.open`: its path and detected format.
///
/// A file is memory-mapped; a database directory, measurement folder or session is read when
/// asked. Every method reads the input anew: nothing is cached but the mapping.
#[pyclass(name = "Input", module = "profcodec", frozen)]
pub(crate) struct Input {
    opened: profcodec::Opened,
}

#[pymethods]
impl Input {
    /// The path that was opened.
    #[getter]
    fn path(&self) -> PathBuf {
        self.opened.path().to_path_buf()
    }

    /// The detected format, as `profcodec info` names it (for example "HPCToolkit database",
    /// "Devel::NYTProf profile").
    #[getter]
    fn format(&self) -> &'static str {
        self.opened.format().name()
    }

    /// The format family, the name of the profcodec crate that reads it: "hpctoolkit",
    /// "hpcrun", "nytprof", "easyprofiler" or "statprofiler".
    #[getter]
    fn codec(&self) -> &'static str {
        self.opened.format().feature()
    }

    /// The format version as the file states it (for example "4.0", "04.00b", "5.0", "2.1.0"),
    /// read as `info()` reads the input.
    #[getter]
    fn version(&self, py: Python<'_>) -> PyResult<String> {
        let info = py.detach(|| profcodec::info(&self.opened));
        Ok(info.map_err(Error::from)?.version)
    }

    /// What `profcodec info --json` prints: the format, its version and a dict of counts and
    /// properties in display order (title, time span, threads, metrics...).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let json = py.detach(|| {
            let info = profcodec::info(&self.opened)?;
            Ok::<_, profcodec::ReadError>(serde_json::to_string(&info).unwrap_or_default())
        });
        py.import("json")?
            .call_method1("loads", (json.map_err(Error::from)?,))
    }

    /// The input in the format-neutral profile model (see `profcodec.Profile`). A database,
    /// measurement folder or session is one profile. The GIL is released while it is read.
    fn profile(&self, py: Python<'_>) -> PyResult<Profile> {
        let profile = py
            .detach(|| profcodec::to_profile(&self.opened))
            .map_err(Error::from)?;
        Ok(Profile::new(profile))
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.Input {:?}: {}>",
            self.opened.path().display().to_string(),
            self.opened.format()
        )
    }

    /// The path, so that an `Input` can be given wherever a path is taken (`os.fspath`).
    fn __fspath__(&self) -> std::ffi::OsString {
        self.opened.path().as_os_str().to_os_string()
    }
}

/// Opens a profile: a file (memory-mapped) or a folder (an HPCToolkit database, an hpcrun
/// measurement folder, a Devel::StatProfiler session), and detects its format from its
/// first bytes.
///
/// Raises `profcodec.FileError` when the path cannot be read and
/// `profcodec.UnknownFormatError` when it is no profile profcodec knows.
#[pyfunction]
pub(crate) fn open(py: Python<'_>, path: PathBuf) -> PyResult<Input> {
    let opened = py.detach(|| profcodec::open(&path)).map_err(Error::from)?;
    Ok(Input { opened })
}
