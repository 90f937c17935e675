//! `profcodec.Input`: a file or folder opened with its format detected.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert;
use crate::errors::Error;
use crate::profile::Profile;
use crate::tables;

/// A file or folder opened by `profcodec.open`: its path and detected format.
///
/// A file is memory-mapped; a database directory, measurement folder or session is read when
/// asked. Every method reads the input anew: nothing is cached but the mapping.
#[pyclass(name = "Input", module = "profcodec", frozen)]
pub(crate) struct Input {
    opened: profcodec::Opened,
}

impl Input {
    /// The input's size in bytes (a folder's files summed), which sets its conversions' output
    /// budget.
    fn input_bytes(&self) -> u64 {
        profcodec_export::input_bytes(&[self.opened.path()])
    }
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
        Ok(Profile::new(
            profile,
            Some(self.opened.format()),
            self.input_bytes(),
        ))
    }

    /// Folded stacks (`frame;frame;frame value` lines, for inferno or flamegraph.pl), as
    /// `profcodec convert --to folded` writes them for this input: a str, or None after
    /// writing them to `path` (atomically: a temporary file beside it, renamed into place).
    /// `metric`: the value type written, by default the profile's main one.
    ///
    /// `path` follows profcodec's output policy, checked before the input is read: an
    /// existing file is replaced only with `overwrite=True`; a folder is never replaced, nor
    /// the input itself; a character device or FIFO is written through.
    #[pyo3(signature = (path=None, *, metric=None, overwrite=false))]
    fn to_folded(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        metric: Option<String>,
        overwrite: bool,
    ) -> PyResult<Option<String>> {
        let output = convert::check_output(path, overwrite, Some(self.opened.path()))?;
        let profile = self.profile(py)?;
        convert::to_folded(
            py,
            profile.model(),
            profile.format(),
            output,
            metric,
            profcodec_export::default_output_budget(self.input_bytes()),
        )
    }

    /// This input as `profcodec convert --to TO` writes it: `to` is "folded", "callgrind",
    /// "speedscope" (with EasyProfiler's timed blocks), "pprof" (gzipped profile.proto) or
    /// "firefox" (the Firefox Profiler's processed format). Written to `path` atomically (a
    /// temporary file beside it, renamed over it) and None returned; without `path`, the
    /// output as bytes. `metric`: the value type written where the format carries one.
    /// `path` follows the output policy of `to_folded`; `overwrite=True` replaces an existing
    /// file (never a folder).
    ///
    /// Raises ValueError for an unknown `to`, profcodec.QueryError for an unknown metric,
    /// profcodec.FileError when `path` cannot be written or is refused.
    #[pyo3(signature = (to, path=None, *, metric=None, overwrite=false))]
    fn convert<'py>(
        &self,
        py: Python<'py>,
        to: &str,
        path: Option<PathBuf>,
        metric: Option<String>,
        overwrite: bool,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let target = convert::target(to)?;
        let output = convert::check_output(path, overwrite, Some(self.opened.path()))?;
        let profile = py
            .detach(|| match target.wants_spans() {
                true => profcodec::to_profile_with_spans(&self.opened),
                false => profcodec::to_profile(&self.opened),
            })
            .map_err(Error::from)?;
        let format = Some(self.opened.format());
        let budget = profcodec_export::default_output_budget(self.input_bytes());
        let out = convert::convert(py, &profile, format, target, output, metric, budget)?;
        Ok(convert::into_py(py, out))
    }

    /// The names of the tables of `set`: the format's own set when `set` is None
    /// ("hpctoolkit", "hpcrun", "nytprof", "easyprofiler" or "statprofiler"), or "profile",
    /// the profile model's tables, which every format has.
    #[pyo3(signature = (set=None))]
    fn table_names(&self, set: Option<&str>) -> PyResult<Vec<&'static str>> {
        tables::names(&self.opened, set)
    }

    /// The name of the input's own table set: "hpctoolkit", "hpcrun", "nytprof",
    /// "easyprofiler" or "statprofiler".
    #[getter]
    fn table_set(&self) -> &'static str {
        tables::format_set(&self.opened).name()
    }

    /// One table as a `pyarrow.Table` (pyarrow must be installed), its columns imported from
    /// Rust through the Arrow C stream interface, not copied through Python objects.
    ///
    /// `name` is a table of the format's set ("values") or a name with its set
    /// ("profile.nodes"); `set` ("profile") picks the set of a bare name. The GIL is released
    /// while the table is read. Raises profcodec.QueryError for an unknown table (the message
    /// lists the set's tables) and profcodec.UnsupportedError for an input whose format has
    /// no tables (one file of an HPCToolkit database: open its folder).
    #[pyo3(signature = (name, set=None))]
    fn table<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        set: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tables::table(py, &self.opened, name, set)
    }

    /// Every table of a set as a dict of `pyarrow.Table`s, in the set's order: the format's
    /// own set when `set` is None, or "profile" for the profile model's (which is made once).
    /// `tables()["values"].to_pandas()` gives one as a pandas DataFrame; `to_pandas()` gives
    /// them all.
    #[pyo3(signature = (set=None))]
    fn tables<'py>(&self, py: Python<'py>, set: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
        tables::tables(py, &self.opened, set)
    }

    /// Every table of a set as a dict of pandas DataFrames (pyarrow and pandas must be
    /// installed): `tables(set)` with each table's `to_pandas()`.
    #[pyo3(signature = (set=None))]
    fn to_pandas<'py>(&self, py: Python<'py>, set: Option<&str>) -> PyResult<Bound<'py, PyDict>> {
        let frames = PyDict::new(py);
        for (name, table) in tables::tables(py, &self.opened, set)?.iter() {
            frames.set_item(name, table.call_method0("to_pandas")?)?;
        }
        Ok(frames)
    }

    /// One table as a `profcodec.ArrowStream`: an object with `__arrow_c_stream__` (the Arrow
    /// PyCapsule interface) that pyarrow, polars or DuckDB read without a copy, and without
    /// pyarrow installed. `name` and `set` as for `table()`.
    #[pyo3(signature = (name, set=None))]
    fn arrow_stream(
        &self,
        py: Python<'_>,
        name: &str,
        set: Option<&str>,
    ) -> PyResult<tables::ArrowStream> {
        tables::stream(py, &self.opened, name, set)
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
