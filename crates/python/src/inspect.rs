//! `Input.validate()`, `Input.dump()`, `Input.records()`, `Input.rewrite()` and
//! `profcodec.merge()`: the inspection verbs of `profcodec validate`, `dump`, `rewrite` and
//! `merge`, through `profcodec::inspect`.

use std::path::PathBuf;

use profcodec::Opened;
use profcodec::inspect::{Dump, DumpLayout, DumpOptions, RewriteOptions};
use profcodec::output::{OutputPath, Overwrite};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::convert;
use crate::errors::Error;

/// `Input.validate(allow_trailing)`: the findings as dicts (each with its `message`); raises on
/// damage, and on trailing data unless `allow_trailing`, as `profcodec validate` fails.
pub(crate) fn validate<'py>(
    py: Python<'py>,
    opened: &Opened,
    allow_trailing: bool,
) -> PyResult<Bound<'py, PyList>> {
    let validated = py
        .detach(|| profcodec::validate(opened))
        .map_err(Error::from)?;
    if let Some(first) = validated.findings.first()
        && !allow_trailing
    {
        let offset = match first {
            profcodec::inspect::Finding::TrailingData { offset, .. } => Some(*offset),
            _ => None,
        };
        return Err(Error::invalid(
            format!(
                "{}: not valid: {first} (allow_trailing=True accepts it)",
                opened.path().display()
            ),
            offset,
        )
        .into());
    }
    let json = py.import("json")?;
    let list = PyList::empty(py);
    for finding in &validated.findings {
        let text = serde_json::to_string(finding).unwrap_or_default();
        let d = json.call_method1("loads", (text,))?.cast_into::<PyDict>()?;
        d.set_item("message", finding.to_string())?;
        list.append(d)?;
    }
    Ok(list)
}

/// The layout called `name` ("json" or "ndjson").
fn layout(name: &str) -> PyResult<DumpLayout> {
    match name {
        "json" => Ok(DumpLayout::Json),
        "ndjson" => Ok(DumpLayout::Ndjson),
        _ => Err(PyValueError::new_err(format!(
            "format must be \"json\" or \"ndjson\", not {name:?}"
        ))),
    }
}

/// Streams the dump of `opened` into `out`. On damage, with `partial`, the document is closed
/// with an `error` record and the dump succeeds; otherwise the error is returned.
fn dump_into(
    opened: &Opened,
    out: &mut dyn std::io::Write,
    options: DumpOptions,
    partial: bool,
) -> Result<(), profcodec::inspect::Error> {
    let mut dump = Dump::new(out, options);
    match profcodec::dump(opened, &mut dump) {
        Ok(()) => dump.finish(),
        Err(e) if partial => dump.finish_with_error(&e),
        Err(e) => Err(e),
    }
}

/// `Input.dump(path, format, pretty, partial, overwrite)`: the dump as a str, or None after
/// writing it to `path` atomically (checked against the output policy before the input is
/// read).
pub(crate) fn dump(
    py: Python<'_>,
    opened: &Opened,
    path: Option<PathBuf>,
    format: &str,
    pretty: bool,
    partial: bool,
    overwrite: bool,
) -> PyResult<Option<String>> {
    let options = DumpOptions {
        layout: layout(format)?,
        pretty,
    };
    let output = convert::check_output(path, overwrite, [opened.path()])?;
    let written = py.detach(|| match output {
        None => {
            let mut out = Vec::new();
            dump_into(opened, &mut out, options, partial).map_err(Error::from)?;
            // serde_json writes UTF-8.
            Ok(Some(String::from_utf8_lossy(&out).into_owned()))
        }
        Some(output) => output
            .write_file(|out| dump_into(opened, out, options, partial))
            .map(|()| None)
            .map_err(|e| convert::write_error(e, Error::from)),
    })?;
    Ok(written)
}

/// `Input.records()`: the dump's records as dicts, the header first (`"record": "header"`).
pub(crate) fn records<'py>(py: Python<'py>, opened: &Opened) -> PyResult<Bound<'py, PyList>> {
    let text = dump(py, opened, None, "ndjson", false, false, false)?.unwrap_or_default();
    let loads = py.import("json")?.getattr("loads")?;
    let list = PyList::empty(py);
    for line in text.lines().filter(|l| !l.is_empty()) {
        list.append(loads.call1((line,))?)?;
    }
    Ok(list)
}

/// `Input.rewrite(out, to, overwrite)`: the input decoded and encoded again at `out` (a file, or
/// a folder for a folder input), placed atomically, as `profcodec rewrite` writes it. Returns
/// what the rewrite dropped and the files it copied unchanged.
pub(crate) fn rewrite<'py>(
    py: Python<'py>,
    opened: &Opened,
    out: PathBuf,
    to: Option<String>,
    overwrite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let output = convert::check(
        OutputPath::like_input(out, opened.path(), opened.format())
            .overwrite(Overwrite::from_force(overwrite)),
    )?;
    let options = RewriteOptions { to };
    let report = py
        .detach(|| profcodec::rewrite(opened, output, &options))
        .map_err(|e| convert::write_error(e, Error::from))?;
    let d = PyDict::new(py);
    d.set_item("dropped", report.dropped)?;
    d.set_item("copied", report.copied)?;
    Ok(d)
}

/// Merges the profiles `inputs` of one program (the runs of a test suite, a forked child's
/// file), all of one format, into one file `out` of that format that the format's own tool
/// reads, as `profcodec merge` does: NYTProf, as `nytprofmerge` merges them (Devel::NYTProf
/// loads it with the same per-sub and per-line totals). A folder among `inputs` stands for
/// the profiles in it (its files with a profiler's magic, in name order). The file appears whole once complete;
/// an existing file is replaced only with `overwrite=True`, a folder never, an input never.
///
/// Returns a dict: `inputs` (how many were merged) and `warnings` (what the format's merge
/// tool would warn about, such as a sub defined differently in two inputs). Raises
/// profcodec.InvalidDataError naming the damaged input, UnsupportedError for a format without
/// a merge or inputs of several formats, FileError for a refused output.
#[pyfunction]
#[pyo3(signature = (inputs, out, *, overwrite=false))]
pub(crate) fn merge<'py>(
    py: Python<'py>,
    inputs: Vec<PathBuf>,
    out: PathBuf,
    overwrite: bool,
) -> PyResult<Bound<'py, PyDict>> {
    // The inputs as given: the output may not lie inside a folder of profiles (as for export),
    // where it would be one more profile, counted again by every later read.
    let output = convert::check(
        OutputPath::file(out)
            .overwrite(Overwrite::from_force(overwrite))
            .inputs(&inputs),
    )?;
    let inputs = crate::profile::expand_inputs(py, &inputs)?;
    let report = py
        .detach(|| profcodec::merge_files(&inputs, output))
        .map_err(|e| convert::write_error(e, Error::from))?;
    let d = PyDict::new(py);
    d.set_item("inputs", report.inputs)?;
    d.set_item("warnings", report.warnings)?;
    Ok(d)
}
