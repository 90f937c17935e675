//! `profcodec.Profile` (the format-neutral profile model) and `profcodec.Top` (its answer to
//! "which functions, lines or modules cost the most").

use profcodec::profile::{self as model, Measured, Selection, Source};
use profcodec::query::{TopOptions, group_named, order_named};
use profcodec::text::TableOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use std::path::PathBuf;

use crate::convert;
use crate::errors::{Error, Kind};

/// A profile in the format-neutral model: interned frames, a call tree whose nodes carry self
/// and inclusive values, value types with units, and the contexts (threads, ranks, processes,
/// or a summary) values were measured in. Made by `Input.profile()`.
#[pyclass(name = "Profile", module = "profcodec", frozen)]
pub(crate) struct Profile {
    inner: model::Profile,
    /// The format it was read from: folded stacks name frames as its tools do.
    format: Option<profcodec::Format>,
    /// The output budget of its conversions (`profcodec_export::default_output_budget` of the
    /// input's size), so that a deep call chain cannot make gigabytes.
    budget: u64,
    /// The inputs it was read from, as given (a folder of profiles, not its files): an output
    /// of its conversions inside one of them is refused, as `profcodec convert` refuses it.
    inputs: Vec<PathBuf>,
}

impl Profile {
    pub(crate) fn new(
        inner: model::Profile,
        format: Option<profcodec::Format>,
        input_bytes: u64,
        inputs: Vec<PathBuf>,
    ) -> Self {
        Profile {
            inner,
            format,
            budget: profcodec_export::default_output_budget(input_bytes),
            inputs,
        }
    }

    pub(crate) fn model(&self) -> &model::Profile {
        &self.inner
    }

    pub(crate) fn format(&self) -> Option<profcodec::Format> {
        self.format
    }
}

fn measured_name(m: Measured) -> &'static str {
    match m {
        Measured::SelfOnly => "self",
        Measured::InclusiveOnly => "inclusive",
        Measured::SelfAndInclusive => "self_and_inclusive",
    }
}

/// The options of `top()` and `profcodec.diff()` for the keyword arguments they share: `by`
/// ("self" or "inclusive"), `group` ("function", "line", "module" or "path": call paths), the
/// metric, the most rows, the threads, ranks and processes kept (`selection`), and `mean`.
pub(crate) fn top_options(
    metric: Option<String>,
    by: &str,
    group: &str,
    limit: Option<usize>,
    selection: &Selection,
    mean: bool,
) -> PyResult<TopOptions> {
    let mut options = TopOptions::new();
    options.order = order_named(by).ok_or_else(|| {
        PyValueError::new_err(format!("by must be \"self\" or \"inclusive\", not {by:?}"))
    })?;
    options.group = group_named(group).ok_or_else(|| {
        PyValueError::new_err(format!(
            "group must be \"function\", \"line\", \"module\" or \"path\", not {group:?}"
        ))
    })?;
    options.metric = metric;
    options.limit = limit;
    options.selection = selection.clone();
    options.mean = mean;
    Ok(options)
}

/// A `thread=` argument: a thread's id or name, or a list of them (`--thread`'s values).
#[derive(FromPyObject)]
pub(crate) enum Threads {
    One(IdOrName),
    Many(Vec<IdOrName>),
}

/// One thread: its id, or its name where the format names threads.
#[derive(FromPyObject)]
pub(crate) enum IdOrName {
    Id(u64),
    Name(String),
}

impl IdOrName {
    fn text(self) -> String {
        match self {
            IdOrName::Id(id) => id.to_string(),
            IdOrName::Name(name) => name,
        }
    }
}

/// A `rank=` or `process=` argument: a number or a list of them.
#[derive(FromPyObject)]
pub(crate) enum Numbers {
    One(u64),
    Many(Vec<u64>),
}

impl Numbers {
    fn list(self) -> Vec<u64> {
        match self {
            Numbers::One(n) => vec![n],
            Numbers::Many(n) => n,
        }
    }
}

/// The threads, ranks and processes `top()` and `profcodec.diff()` keep: the model's
/// selection, as the command line's `--thread`, `--rank` and `--process` make it.
pub(crate) fn selection(
    thread: Option<Threads>,
    rank: Option<Numbers>,
    process: Option<Numbers>,
) -> Selection {
    let threads = match thread {
        None => Vec::new(),
        Some(Threads::One(t)) => vec![t.text()],
        Some(Threads::Many(ts)) => ts.into_iter().map(IdOrName::text).collect(),
    };
    Selection::new()
        .threads(threads)
        .ranks(rank.map(Numbers::list).unwrap_or_default())
        .processes(process.map(Numbers::list).unwrap_or_default())
}

#[pymethods]
impl Profile {
    /// The value types (metrics): a list of dicts with `name`, `unit` and `measured`
    /// ("self", "inclusive" or "self_and_inclusive").
    #[getter]
    fn value_types<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for (_, vt) in self.inner.value_types() {
            let d = PyDict::new(py);
            d.set_item("name", self.inner.string(vt.name))?;
            d.set_item("unit", self.inner.unit_name(vt.unit))?;
            d.set_item("measured", measured_name(vt.measured))?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The name of the value type `top()` reads by default (time where the profile has time).
    #[getter]
    fn default_value_type(&self) -> Option<&str> {
        self.inner
            .default_value_type()
            .map(|id| self.inner.value_type_name(id))
    }

    /// The contexts values were measured in, spelled out: "summary", "rank 3 thread 0",
    /// "process 4711"...
    #[getter]
    fn contexts(&self) -> Vec<String> {
        self.inner
            .contexts()
            .map(|(id, _)| self.inner.context_label(id))
            .collect()
    }

    /// The number of call-tree nodes.
    #[getter]
    fn node_count(&self) -> usize {
        self.inner.nodes().len()
    }

    /// The number of distinct frames (functions, lines, loops, instructions).
    #[getter]
    fn frame_count(&self) -> usize {
        self.inner.frames().len()
    }

    /// The functions (or source lines, or modules) that cost the most, largest first.
    ///
    /// Arguments:
    ///     metric: the value type by name; None for the profile's main one.
    ///     by: "self" or "inclusive": the value that orders the rows.
    ///     group: "function", "line", "module" or "path" (call paths, root first).
    ///     limit: the most rows returned; None for all.
    ///     thread, rank, process: only these threads (an id or a name, or a list of them),
    ///         MPI ranks (all their threads) or processes (a pid or a list); a selection
    ///         that keeps nothing raises profcodec.QueryError listing what the profile has.
    ///     mean: average over the contexts read instead of summing them.
    ///     full_names: whether `Top.to_text()` prints function names whole (the command
    ///         line's `--full-names`); by default C++ template arguments and parameter lists
    ///         show as <…> and (…). The rows always hold the full names, as `top --json`.
    ///
    /// Raises profcodec.QueryError for an unknown metric (the message lists the known ones).
    #[pyo3(signature = (metric=None, *, by="self", group="function", limit=Some(20), thread=None, rank=None, process=None, mean=false, full_names=false))]
    #[allow(clippy::too_many_arguments)] // Python keyword arguments
    fn top(
        slf: &Bound<'_, Self>,
        py: Python<'_>,
        metric: Option<String>,
        by: &str,
        group: &str,
        limit: Option<usize>,
        thread: Option<Threads>,
        rank: Option<Numbers>,
        process: Option<Numbers>,
        mean: bool,
        full_names: bool,
    ) -> PyResult<Top> {
        let selection = selection(thread, rank, process);
        let mut options = top_options(metric, by, group, limit, &selection, mean)?;
        options.full_names = full_names;
        let query = options.query();
        let inner = &slf.get().inner;
        let table = py
            .detach(|| inner.top(&query))
            .map_err(|e| Error::new(Kind::Query, e.to_string()))?;
        let options = options.table_options();
        Ok(Top {
            table,
            profile: slf.clone().unbind(),
            options,
        })
    }

    /// Folded stacks (`frame;frame;frame value` lines, for inferno or flamegraph.pl) of this
    /// profile, frames named as the source tool's own folded output names them: a str, or
    /// None after writing them to `path` (atomically: a temporary file beside it, renamed
    /// over it). `metric`: the value type written, by default the profile's main one.
    /// `path` follows profcodec's output policy: an existing file is replaced only with
    /// `overwrite=True`, a folder never.
    #[pyo3(signature = (path=None, *, metric=None, overwrite=false))]
    fn to_folded(
        &self,
        py: Python<'_>,
        path: Option<PathBuf>,
        metric: Option<String>,
        overwrite: bool,
    ) -> PyResult<Option<String>> {
        let output =
            convert::check_output(path, overwrite, self.inputs.iter().map(PathBuf::as_path))?;
        convert::to_folded(py, &self.inner, self.format, output, metric, self.budget)
    }

    /// This profile in a viewer's format: `to` is "folded", "callgrind", "speedscope",
    /// "pprof" (gzipped profile.proto) or "firefox" (the Firefox Profiler's processed format).
    /// Written to `path` atomically (a temporary file beside it, renamed over it) and None
    /// returned; without `path`, the output as bytes. `metric`: the value type written where
    /// the format carries one. The model has no timed spans (EasyProfiler's blocks):
    /// `Input.convert("speedscope")` reads them, as `profcodec convert` does.
    ///
    /// `path` follows the output policy of `to_folded` (`overwrite=True` replaces a file).
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
        let target = convert::target(to, &[])?;
        let output =
            convert::check_output(path, overwrite, self.inputs.iter().map(PathBuf::as_path))?;
        let out = convert::convert(
            py,
            &self.inner,
            self.format,
            target,
            output,
            metric,
            self.budget,
        )?;
        Ok(convert::into_py(py, out))
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.Profile: {} contexts, {} nodes, {} frames, value types {:?}>",
            self.inner.contexts().len(),
            self.inner.nodes().len(),
            self.inner.frames().len(),
            self.inner
                .value_types()
                .map(|(id, _)| self.inner.value_type_name(id))
                .collect::<Vec<_>>()
        )
    }
}

/// The answer of `Profile.top()`: rows largest first, and the totals over every group (not
/// only the rows returned).
#[pyclass(name = "Top", module = "profcodec", frozen)]
pub(crate) struct Top {
    table: model::Table,
    /// The profile asked, whose units the text table shows.
    profile: Py<Profile>,
    /// How the text table is headed and whether it shows names whole.
    options: TableOptions,
}

#[pymethods]
impl Top {
    /// The value type's name.
    #[getter]
    fn value_type(&self) -> &str {
        &self.table.value_type
    }

    /// Its unit ("seconds", "nanoseconds", "samples"...).
    #[getter]
    fn unit(&self) -> &str {
        &self.table.unit
    }

    /// Where the values came from: "tree" (the call tree) or "flat" (per-frame tables, as
    /// NYTProf's per-sub times).
    #[getter]
    fn source(&self) -> &'static str {
        match self.table.source {
            Source::Flat => "flat",
            _ => "tree",
        }
    }

    /// The number of contexts read.
    #[getter]
    fn contexts(&self) -> usize {
        self.table.contexts
    }

    /// The sum of every group's self value: the program's total.
    #[getter]
    fn total_self(&self) -> f64 {
        self.table.total.self_value
    }

    /// The sum of the roots' inclusive values (tree source only).
    #[getter]
    fn total_inclusive(&self) -> Option<f64> {
        self.table.total.inclusive
    }

    /// The rows: dicts with `name`, `function`, `file`, `line`, `module`, `address` (None where
    /// unknown), `self`, `inclusive`, `calls`, `statements` (line rows, where the profile counts
    /// statements) and `path` (call-path rows: the functions, root first).
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for row in &self.table.rows {
            let d = PyDict::new(py);
            d.set_item("name", &row.name)?;
            d.set_item("function", &row.function)?;
            d.set_item("file", &row.file)?;
            d.set_item("line", row.line)?;
            d.set_item("module", &row.module)?;
            d.set_item("address", row.address)?;
            d.set_item("self", row.self_value)?;
            d.set_item("inclusive", row.inclusive)?;
            d.set_item("calls", row.calls.map(|c| count(py, c)))?;
            d.set_item("statements", row.statements.map(|c| count(py, c)))?;
            d.set_item("path", &row.path)?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// The rows as a pandas DataFrame (pandas must be installed), one column per row key.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = py.import("pandas")?;
        let columns = [
            "name",
            "function",
            "file",
            "line",
            "module",
            "address",
            "self",
            "inclusive",
            "calls",
        ];
        let kwargs = PyDict::new(py);
        kwargs.set_item("columns", columns)?;
        pandas.call_method("DataFrame", (self.rows(py)?,), Some(&kwargs))
    }

    /// The table `profcodec top` prints for the same query: a heading, one line per row
    /// (values in human units, their shares of the total, the name and its file), and a total
    /// line. Function names show C++ template arguments and parameter lists as <…> and (…)
    /// unless `top()` was asked `full_names=True`. `width`: the most characters a line takes,
    /// the name and file columns cut with a visible … (the command line cuts to the terminal's
    /// width, or 200 off a terminal; not with `--full-names`); None for lines as long as their
    /// cells. `str(top)` is `top.to_text()`.
    #[pyo3(signature = (width=None))]
    fn to_text(&self, width: Option<usize>) -> PyResult<String> {
        let options = self.options.clone().width(width);
        let mut out = Vec::new();
        profcodec::text::write_top(&mut out, self.profile.get().model(), &self.table, &options)
            .map_err(|e| Error::io(e.to_string(), &e))?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn __str__(&self) -> PyResult<String> {
        self.to_text(None)
    }

    fn __len__(&self) -> usize {
        self.table.rows.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.Top: {} rows of {} ({}), total self {}>",
            self.table.rows.len(),
            self.table.value_type,
            self.table.unit,
            self.table.total.self_value
        )
    }
}

/// A count as Python reads it: an `int` when whole (calls, statements), a `float` when not (a
/// mean over contexts), as `top --json` writes it.
fn count(py: Python<'_>, x: f64) -> Bound<'_, PyAny> {
    // Within ±2^53 a whole f64 converts to i64 exactly.
    if x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_992.0 {
        (x as i64)
            .into_pyobject(py)
            .map(|i| i.into_any())
            .unwrap_or_else(|e| match e {})
    } else {
        pyo3::types::PyFloat::new(py, x).into_any()
    }
}

/// The inputs `inputs` stand for (a folder of profiles, its profiles), with a `UserWarning`
/// for each entry of a folder passed over and why, in the words of the command line's standard
/// error.
pub(crate) fn expand_inputs(py: Python<'_>, inputs: &[PathBuf]) -> PyResult<Vec<PathBuf>> {
    let expanded = profcodec::expand_inputs(inputs).map_err(Error::from)?;
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for warning in expanded.warnings() {
        crate::binaries::warn(py, &category, warning)?;
    }
    Ok(expanded.paths)
}

/// `profcodec.merged_profile(inputs, *, jobs=None, binary_path=None)`: many inputs as one
/// profile, as `profcodec top A B ...` and `profcodec convert` read them. Each input is a file,
/// a database, measurement or session folder, or a folder of profiles (its profiles in name
/// order); they are decoded on `jobs` threads (every core by default) and merged in input
/// order, each input's contexts kept apart, so the result is the same with any `jobs`.
/// Raises the error of the first input at fault, in input order.
#[pyfunction]
#[pyo3(signature = (inputs, *, jobs=None, binary_path=None))]
pub(crate) fn merged_profile(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    jobs: Option<usize>,
    binary_path: Option<Vec<PathBuf>>,
) -> PyResult<Profile> {
    if inputs.is_empty() {
        return Err(PyValueError::new_err(
            "merged_profile needs at least one input",
        ));
    }
    let given = inputs;
    let inputs = expand_inputs(py, &given)?;
    let options = profcodec::MergeOptions::new().jobs(jobs.unwrap_or(0));
    let merged = crate::binaries::resolving(py, binary_path.unwrap_or_default(), || {
        profcodec::merged_profile(&inputs, &options)
    })?
    .map_err(Error::from)?;
    let format = merged.format();
    Ok(Profile::new(
        merged.profile,
        format,
        profcodec_export::input_bytes(&inputs),
        given,
    ))
}
