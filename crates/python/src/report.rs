//! `Input.report()`: the HTML report `profcodec report` writes, by the same library function
//! (`profcodec::report::report`) under the same output policy.

use std::path::PathBuf;

use profcodec::output::{OutputPath, Overwrite};
use profcodec::report::{Error as ReportError, Input, Options, SourceRoot};
use pyo3::prelude::*;

use crate::convert::{policy_error, write_error};
use crate::errors::{Error, Kind};

/// A report's error as Python raises it: an input's as its other methods raise it, an unknown
/// metric as a QueryError, a write as a FileError.
fn report_error(e: ReportError) -> Error {
    use profcodec::report::ReportError as Page;
    match e {
        ReportError::Open(e) => e.into(),
        // As the input's other methods raise it.
        ReportError::Read { source, .. } => source.into(),
        ReportError::Report(Page::Query(q)) => Error::new(Kind::Query, q.to_string()),
        // As an export over its budget.
        ReportError::Report(ref over @ Page::OutputTooLarge { .. }) => {
            Error::new(Kind::Unsupported, over.to_string())
        }
        ReportError::Report(Page::Io(ref io)) | ReportError::Io(ref io) => {
            Error::io(e.to_string(), io)
        }
        e => Error::new(Kind::File, e.to_string()),
    }
}

/// The options of `Input.report()` beside its input, output and base.
pub(crate) struct ReportOptions {
    /// The most bytes of the report folder; `None` for `profcodec report`'s default.
    pub(crate) max_output: Option<u64>,
    /// Replace an existing report.
    pub(crate) overwrite: bool,
    /// The main value type.
    pub(crate) metric: Option<String>,
    /// The flame graph's narrowest frame, in percent of the total.
    pub(crate) min_width: f64,
    /// Where the binaries of hpcrun measurements are searched first.
    pub(crate) binary_path: Vec<PathBuf>,
    /// Folders (or `FROM=TO` mappings) whose source files the page may show, besides the
    /// input's own folder (`--source-root`).
    pub(crate) source_roots: Vec<String>,
}

/// Writes the report of `opened` (compared with the profile at `base`) into the folder `out`,
/// checked against the output policy before anything is read. The GIL is released meanwhile.
/// Where each source file's text on the page came from, or why there is none, is said by a
/// `UserWarning` each, in the words of the command line's standard error.
pub(crate) fn report(
    py: Python<'_>,
    opened: &profcodec::Opened,
    out: PathBuf,
    base: Option<PathBuf>,
    options: ReportOptions,
) -> PyResult<()> {
    let ReportOptions {
        max_output,
        overwrite,
        metric,
        min_width,
        binary_path,
        source_roots,
    } = options;
    let mut spec = OutputPath::folder(out)
        .overwrite(Overwrite::from_force(overwrite))
        .input(opened.path());
    if let Some(base) = &base {
        spec = spec.input(base);
    }
    let checked = spec.check().map_err(policy_error)?;
    let mut options = Options::new().min_width(min_width);
    options.metric = metric;
    options.max_output = max_output;
    options.source_roots = source_roots
        .iter()
        .map(|root| root.parse::<SourceRoot>().unwrap_or_else(|e| match e {}))
        .collect();
    let written = crate::binaries::resolving(py, binary_path, || {
        let base = base.as_deref().map(Input::Path);
        profcodec::report::report(
            &[Input::Opened(opened)],
            base,
            &options,
            checked,
            &mut |_| {},
        )
    })?
    .map_err(|e| write_error(e, report_error))?;
    let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
    for source in &written.sources {
        crate::binaries::warn(py, &category, source.to_string())?;
    }
    Ok(())
}
