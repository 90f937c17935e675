//! `profcodec.diff(base, new)` and `profcodec.Diff`: what changed between two profiles, as
//! `profcodec diff` compares them (`profcodec::profile::diff`) and as `profcodec diff --json`
//! writes its rows (`profcodec::text::write_diff_json`).

use std::path::PathBuf;

use profcodec::profile::{self as model, Amount, DiffOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{Error, Kind};
use crate::profile::{Numbers, Profile, Threads, selection, top_options};

/// What changed between two profiles: rows matched by function (or line, or module) with both
/// values, the change and the relative change, largest change first. Made by
/// `profcodec.diff()`.
#[pyclass(name = "Diff", module = "profcodec", frozen)]
pub(crate) struct Diff {
    inner: model::Diff,
}

/// A profile to compare: a `Profile` as it is, or a path (or `Input`) read into one, the
/// binaries of an hpcrun measurement searched in `binary_path` first.
fn profile_of(
    py: Python<'_>,
    side: &Bound<'_, PyAny>,
    binary_path: &[PathBuf],
) -> PyResult<Py<Profile>> {
    if let Ok(profile) = side.cast::<Profile>() {
        return Ok(profile.clone().unbind());
    }
    let path: PathBuf = side.extract()?;
    let input = crate::input::open(py, path)?;
    Py::new(py, input.to_profile(py, binary_path.to_vec())?)
}

/// `min_change`: a number in the metric's unit, or a str as `--min-change` takes it (`"2.5"`,
/// or a time: `"0.1ms"`, `"250us"`, `"2s"`).
fn amount(value: &Bound<'_, PyAny>) -> PyResult<Amount> {
    if let Ok(text) = value.extract::<String>() {
        return text
            .parse::<Amount>()
            .map_err(|e| PyValueError::new_err(format!("min_change: {e}")));
    }
    match value.extract::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Amount::Plain(x)),
        _ => Err(PyValueError::new_err(format!(
            "min_change must be a number not below 0 or a str such as \"0.1ms\", not {value}"
        ))),
    }
}

/// `min_relative`: a fraction of the base value (`0.05`), or a percentage as a str (`"5%"`,
/// as `--min-relative 5` means).
fn fraction(value: &Bound<'_, PyAny>) -> PyResult<f64> {
    let fraction = match value.extract::<String>() {
        Ok(text) => text
            .trim()
            .strip_suffix('%')
            .and_then(|pct| pct.trim().parse::<f64>().ok())
            .map(|pct| pct / 100.0),
        Err(_) => value.extract::<f64>().ok(),
    };
    match fraction {
        Some(x) if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(PyValueError::new_err(format!(
            "min_relative must be a fraction not below 0 (0.05) or a percentage such as \"5%\", not {value}"
        ))),
    }
}

/// What changed from `base` to `new` (each a path, an `Input` or a `Profile`), as
/// `profcodec diff` compares them: every function (or line, or module) of either profile,
/// matched by name, file, line and module, with both sides' values and the absolute and
/// relative change, largest absolute change first.
///
/// Arguments as `Profile.top()`'s: `metric` (by default the base profile's main one, which
/// must have the same unit in both), `by` ("self" or "inclusive": the change that orders the
/// rows), `group` ("function", "line", "module" or "path"), `limit` (the most rows; None for all),
/// `thread`, `rank` and `process` (only those contexts, in both) and `mean`; `binary_path`
/// as `Input.profile()`'s, for the sides given as paths or inputs.
///
/// Rows that change little are left out as `profcodec diff --min-change/--min-relative` leave
/// them out, by the change of the ordering value, before `limit` applies: `min_change`, the
/// least absolute change (a number in the metric's unit, or a time as a str: "0.1ms",
/// "250us", "2s"), and `min_relative`, the least change relative to the base value (a
/// fraction, 0.05, or a percentage as a str, "5%"; a row new in one profile always passes).
///
/// Raises profcodec.QueryError for an unknown metric, units that differ, or a time for
/// `min_change` where the metric is not a time; ValueError for a malformed minimum.
#[pyfunction]
#[pyo3(signature = (base, new, metric=None, *, by="self", group="function", limit=Some(20), thread=None, rank=None, process=None, mean=false, min_change=None, min_relative=None, binary_path=None))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments
pub(crate) fn diff(
    py: Python<'_>,
    base: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    metric: Option<String>,
    by: &str,
    group: &str,
    limit: Option<usize>,
    thread: Option<Threads>,
    rank: Option<Numbers>,
    process: Option<Numbers>,
    mean: bool,
    min_change: Option<&Bound<'_, PyAny>>,
    min_relative: Option<&Bound<'_, PyAny>>,
    binary_path: Option<Vec<PathBuf>>,
) -> PyResult<Diff> {
    let query = top_options(
        metric,
        by,
        group,
        limit,
        &selection(thread, rank, process),
        mean,
    )?
    .query();
    let mut options = DiffOptions::new();
    options.min_change = min_change.map(amount).transpose()?;
    options.min_relative = min_relative.map(fraction).transpose()?;
    let binary_path = binary_path.unwrap_or_default();
    let (base, new) = (
        profile_of(py, base, &binary_path)?,
        profile_of(py, new, &binary_path)?,
    );
    let (base, new) = (base.get().model(), new.get().model());
    let inner = py
        .detach(|| model::diff_with(base, new, &query, &options))
        .map_err(|e| Error::new(Kind::Query, e.to_string()))?;
    Ok(Diff { inner })
}

#[pymethods]
impl Diff {
    /// The value type compared.
    #[getter]
    fn value_type(&self) -> &str {
        &self.inner.value_type
    }

    /// Its unit ("seconds", "nanoseconds", "samples"...).
    #[getter]
    fn unit(&self) -> &str {
        &self.inner.unit
    }

    /// The base profile's totals: a dict with `self` (every group's self value summed) and
    /// `inclusive` (the roots' inclusive values summed; None where the values are flat).
    #[getter]
    fn base_total<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        total(py, &self.inner.base_total)
    }

    /// The new profile's totals, as `base_total`.
    #[getter]
    fn new_total<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        total(py, &self.inner.new_total)
    }

    /// The rows, as `profcodec diff --json` writes them: dicts with `name`, `function`,
    /// `file`, `line`, `module`, `address`, `base` and `new` (dicts of `self`, `inclusive` and
    /// `calls`; None on the side that lacks the row), `self_change`, `inclusive_change`,
    /// `self_relative`, `inclusive_relative` (None where the base is 0), `metric` and `unit`.
    #[getter]
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let mut json = Vec::new();
        profcodec::text::write_diff_json(&mut json, &self.inner)
            .map_err(|e| Error::io(e.to_string(), &e))?;
        let rows = py
            .import("json")?
            .call_method1("loads", (String::from_utf8_lossy(&json),))?;
        Ok(rows.cast_into::<PyList>()?)
    }

    /// The rows as a pandas DataFrame (pandas must be installed), `base` and `new` flattened
    /// into columns `base.self`, `new.inclusive`...
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("pandas")?
            .call_method1("json_normalize", (self.rows(py)?,))
    }

    fn __len__(&self) -> usize {
        self.inner.rows.len()
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.Diff: {} rows of {} ({}), total self {} -> {}>",
            self.inner.rows.len(),
            self.inner.value_type,
            self.inner.unit,
            self.inner.base_total.self_value,
            self.inner.new_total.self_value
        )
    }
}

/// A total as a dict: `self` and `inclusive`.
fn total<'py>(py: Python<'py>, total: &model::Total) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("self", total.self_value)?;
    d.set_item("inclusive", total.inclusive)?;
    Ok(d)
}
