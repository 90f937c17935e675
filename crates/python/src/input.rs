//! `profcodec.Input`: a file or folder opened with its format detected.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::binaries::resolving;
use crate::convert;
use crate::errors::Error;
use crate::inspect;
use crate::profile::Profile;
use crate::tables;
use crate::timeline;

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

    /// The input in the profile model, read with the GIL released; the binaries of hpcrun
    /// measurements searched in `binary_path` first (then `PROFCODEC_BINARY_PATH`'s folders
    /// and the recorded paths), and a warning for each load module left unresolved.
    pub(crate) fn to_profile(
        &self,
        py: Python<'_>,
        binary_path: Vec<PathBuf>,
    ) -> PyResult<Profile> {
        let profile = resolving(py, binary_path, || profcodec::to_profile(&self.opened))?
            .map_err(Error::from)?;
        Ok(Profile::new(
            profile,
            Some(self.opened.format()),
            self.input_bytes(),
            vec![self.opened.path().to_owned()],
        ))
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
            Ok::<_, profcodec::inspect::Error>(serde_json::to_string(&info).unwrap_or_default())
        });
        py.import("json")?
            .call_method1("loads", (json.map_err(Error::from)?,))
    }

    /// Decodes everything and checks every offset, count and cross-reference, as
    /// `profcodec validate` does. Returns the findings that are not damage (dicts with
    /// `finding`, "trailing_data", its `offset` and `size`, and a `message`).
    ///
    /// Raises profcodec.InvalidDataError at the first damage, and, unless `allow_trailing`,
    /// on data after the end of the stream (what the real tools ignore or warn on).
    #[pyo3(signature = (*, allow_trailing=false))]
    fn validate<'py>(&self, py: Python<'py>, allow_trailing: bool) -> PyResult<Bound<'py, PyList>> {
        inspect::validate(py, &self.opened, allow_trailing)
    }

    /// The full content as flat JSON records, as `profcodec dump` prints it (the schemas are
    /// in the CLI README): a str, or None after writing it to `path` atomically (a staging
    /// file renamed over it; `overwrite=True` replaces an existing file, never a folder).
    ///
    /// `format`: "json" (`{"header": {...}, "records": [...]}`; `pretty=True` indents it) or
    /// "ndjson" (the header, then one record a line). `partial=True`: on damage, what was
    /// decoded before it, closed with an `error` record, instead of raising
    /// profcodec.InvalidDataError.
    #[pyo3(signature = (path=None, *, format="json", pretty=false, partial=false, overwrite=false))]
    fn dump(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        format: &str,
        pretty: bool,
        partial: bool,
        overwrite: bool,
    ) -> PyResult<Option<String>> {
        inspect::dump(py, &self.opened, path, format, pretty, partial, overwrite)
    }

    /// The records of `dump()` as a list of dicts, the header first (`"record": "header"`).
    /// The whole dump is held in memory: for a large input, `dump(path, format="ndjson")`.
    fn records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        inspect::records(py, &self.opened)
    }

    /// Decodes the input and encodes it again at `out`, as `profcodec rewrite` does: a file,
    /// or a folder for a folder input (an HPCToolkit database), which appears whole once
    /// complete. `to`: another version or format (for example "04.00" for hpcrun, "nytprof"
    /// for the Pynytprof layout); by default the input's own. `overwrite=True` replaces an
    /// existing output whole (nothing of it is kept or merged); never the input itself.
    ///
    /// Returns a dict: `dropped` (what the target could not carry) and `copied` (files carried
    /// over unchanged, relative to `out`).
    #[pyo3(signature = (out, to=None, *, overwrite=false))]
    fn rewrite<'py>(
        &self,
        py: Python<'py>,
        out: PathBuf,
        to: Option<String>,
        overwrite: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        inspect::rewrite(py, &self.opened, out, to, overwrite)
    }

    /// The input in the format-neutral profile model (see `profcodec.Profile`). A database,
    /// measurement folder or session is one profile. The GIL is released while it is read.
    ///
    /// The addresses of hpcrun measurements are named by function, file and line from the
    /// binaries their load maps name, as `profcodec top` names them: `binary_path`, a list of
    /// folders searched first for each binary by its file name (the command line's
    /// `--binary-path`), then the folders of the environment variable `PROFCODEC_BINARY_PATH`,
    /// then the recorded path. Each load module left unresolved (its addresses kept as
    /// `[0x...]`) is said, with why, by a `UserWarning`.
    #[pyo3(signature = (*, binary_path=None))]
    fn profile(&self, py: Python<'_>, binary_path: Option<Vec<PathBuf>>) -> PyResult<Profile> {
        self.to_profile(py, binary_path.unwrap_or_default())
    }

    /// Folded stacks (`frame;frame;frame value` lines, for inferno or flamegraph.pl), as
    /// `profcodec convert --to folded` writes them for this input: a str, or None after
    /// writing them to `path` (atomically: a temporary file beside it, renamed into place).
    /// `metric`: the value type written, by default the profile's main one.
    ///
    /// `path` follows profcodec's output policy, checked before the input is read: an
    /// existing file is replaced only with `overwrite=True`; a folder is never replaced, nor
    /// the input itself; a character device or FIFO is written through. `binary_path`: as for
    /// `profile()`.
    #[pyo3(signature = (path=None, *, metric=None, overwrite=false, binary_path=None))]
    fn to_folded(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        metric: Option<String>,
        overwrite: bool,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<Option<String>> {
        let output = convert::check_output(path, overwrite, [self.opened.path()])?;
        let profile = self.to_profile(py, binary_path.unwrap_or_default())?;
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
    /// "speedscope" (with EasyProfiler's timed blocks), "pprof" (gzipped profile.proto),
    /// "firefox" (the Firefox Profiler's processed format), or, for an input with a timeline
    /// (an EasyProfiler capture, an HPCToolkit database with a trace.db, hpcrun `.hpctrace`
    /// files), "perfetto" (Perfetto's protobuf trace) or "chrome" (Chrome's trace-event JSON).
    /// Written to `path` atomically (a temporary file beside it, renamed over it) and None
    /// returned; without `path`, the output as bytes. `metric`: the value type written where
    /// the format carries one. `path` follows the output policy of `to_folded`;
    /// `overwrite=True` replaces an existing file (never a folder). `max_output`: the most
    /// bytes written (by default 100 times the input's size plus 64 MiB; an output projected
    /// over it is refused and nothing is written).
    ///
    /// The timelines keep what the filters let through: `threads` (EasyProfiler thread ids or
    /// names, the THREAD ids of HPCToolkit profiles or hpcrun files), `ranks` (MPI ranks; a
    /// profile without one is rank 0), the window `from_ns`..`until_ns` (nanoseconds on the
    /// trace's own clock, as `dump` prints its timestamps) and `depth` (the deepest nesting
    /// kept; 1: top-level slices only).
    ///
    /// `binary_path`: as for `profile()`, for the profile and for an hpcrun timeline, whose
    /// slices are then named as `profile().top()` names its rows (`--binary-path`).
    ///
    /// Raises ValueError for an unknown `to`, profcodec.QueryError for an unknown metric or
    /// for `threads` or `ranks` that keep none of the timeline's (the message lists those it
    /// has), profcodec.UnsupportedError for a timeline of an input that has none,
    /// profcodec.FileError when `path` cannot be written or is refused.
    #[pyo3(signature = (to, path=None, *, metric=None, overwrite=false, max_output=None, threads=None, ranks=None, from_ns=None, until_ns=None, depth=None, binary_path=None))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments
    fn convert<'py>(
        &self,
        py: Python<'py>,
        to: &str,
        path: Option<PathBuf>,
        metric: Option<String>,
        overwrite: bool,
        max_output: Option<u64>,
        threads: Option<Vec<String>>,
        ranks: Option<Vec<u64>>,
        from_ns: Option<u64>,
        until_ns: Option<u64>,
        depth: Option<u32>,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let binary_path = binary_path.unwrap_or_default();
        let budget = max_output
            .unwrap_or_else(|| profcodec_export::default_output_budget(self.input_bytes()));
        if let Some(format) = timeline::format(to) {
            let filter = timeline::filter(
                threads.unwrap_or_default(),
                ranks.unwrap_or_default(),
                from_ns,
                until_ns,
                depth,
            )?;
            let output = convert::check_output(path, overwrite, [self.opened.path()])?;
            let out = timeline::convert(
                py,
                &self.opened,
                format,
                filter,
                output,
                budget,
                binary_path,
            )?;
            return Ok(convert::into_py(py, out));
        }
        let target = convert::target(to, &timeline::TARGETS)?;
        let output = convert::check_output(path, overwrite, [self.opened.path()])?;
        let profile = resolving(py, binary_path, || match target.wants_spans() {
            true => profcodec::to_profile_with_spans(&self.opened),
            false => profcodec::to_profile(&self.opened),
        })?
        .map_err(Error::from)?;
        let format = Some(self.opened.format());
        let out = convert::convert(py, &profile, format, target, output, metric, budget)?;
        Ok(convert::into_py(py, out))
    }

    /// Writes the HTML report `profcodec report` writes into the folder `out` (index.html, the
    /// flame graphs beside it; it works offline): summary, top functions, flame graph, callers
    /// and callees, source line by line, timelines (with the Perfetto trace beside the page),
    /// and with `base` (a path) a comparison with that profile. `metric`: the main value type;
    /// `min_width`: the flame graph leaves out frames narrower than this percentage of the
    /// total. `binary_path`: as for `profile()`, for the input, `base` and the timeline
    /// (`--binary-path`). `source_roots`: folders (or `FROM=TO` to map a recorded path prefix)
    /// whose source files the page may show besides the input's own folder (`--source-root`);
    /// a file the profile names elsewhere, under /proc, /sys or /dev, not a regular file or
    /// over 16 MiB is not read. A `UserWarning` for each source file says where its text came
    /// from, or why the page has none.
    ///
    /// `out` follows profcodec's output policy, checked before the input is read: an existing
    /// report is replaced only with `overwrite=True`, a folder profcodec did not write never.
    /// `max_output`: the most bytes the report folder may take, by default 100 times the
    /// input's size plus 64 MiB (`--max-output`); a report projected over it raises
    /// profcodec.UnsupportedError and nothing is written.
    /// Raises profcodec.QueryError for an unknown metric, profcodec.FileError when `out` is
    /// refused or cannot be written.
    #[pyo3(signature = (out, base=None, *, overwrite=false, metric=None, min_width=0.1, binary_path=None, source_roots=None, max_output=None))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments
    fn report(
        &self,
        py: Python<'_>,
        out: PathBuf,
        base: Option<PathBuf>,
        overwrite: bool,
        metric: Option<String>,
        min_width: f64,
        binary_path: Option<Vec<PathBuf>>,
        source_roots: Option<Vec<String>>,
        max_output: Option<u64>,
    ) -> PyResult<()> {
        let options = crate::report::ReportOptions {
            max_output,
            overwrite,
            metric,
            min_width,
            binary_path: binary_path.unwrap_or_default(),
            source_roots: source_roots.unwrap_or_default(),
        };
        crate::report::report(py, &self.opened, out, base, options)
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
    ///
    /// `binary_path`: as for `profile()`, for the "profile" tables, which name the frames of
    /// an hpcrun measurement as `profile()` does.
    #[pyo3(signature = (name, set=None, *, binary_path=None))]
    fn table<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        set: Option<&str>,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        tables::table(py, &self.opened, name, set, binary_path.unwrap_or_default())
    }

    /// Every table of a set as a dict of `pyarrow.Table`s, in the set's order: the format's
    /// own set when `set` is None, or "profile" for the profile model's (which is made once).
    /// `tables()["values"].to_pandas()` gives one as a pandas DataFrame; `to_pandas()` gives
    /// them all. `binary_path`: as for `table()`.
    #[pyo3(signature = (set=None, *, binary_path=None))]
    fn tables<'py>(
        &self,
        py: Python<'py>,
        set: Option<&str>,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        tables::tables(py, &self.opened, set, binary_path.unwrap_or_default())
    }

    /// Every table of a set as a dict of pandas DataFrames (pyarrow and pandas must be
    /// installed): `tables(set)` with each table's `to_pandas()`.
    #[pyo3(signature = (set=None, *, binary_path=None))]
    fn to_pandas<'py>(
        &self,
        py: Python<'py>,
        set: Option<&str>,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let frames = PyDict::new(py);
        let binary_path = binary_path.unwrap_or_default();
        for (name, table) in tables::tables(py, &self.opened, set, binary_path)?.iter() {
            frames.set_item(name, table.call_method0("to_pandas")?)?;
        }
        Ok(frames)
    }

    /// One table as a `profcodec.ArrowStream`: an object with `__arrow_c_stream__` (the Arrow
    /// PyCapsule interface) that pyarrow, polars or DuckDB read without a copy, and without
    /// pyarrow installed. `name`, `set` and `binary_path` as for `table()`.
    #[pyo3(signature = (name, set=None, *, binary_path=None))]
    fn arrow_stream(
        &self,
        py: Python<'_>,
        name: &str,
        set: Option<&str>,
        binary_path: Option<Vec<PathBuf>>,
    ) -> PyResult<tables::ArrowStream> {
        tables::stream(py, &self.opened, name, set, binary_path.unwrap_or_default())
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
