//! `to_folded()` and `convert(to=...)`: a profile model into a viewer's format through
//! profcodec-export, as `profcodec convert` writes it for one input.

use std::path::PathBuf;

use profcodec::output::{AtomicWriteError, Replace, write_file_atomically};
use profcodec::profcodec_profile::Profile;
use profcodec_export::{ExportError, ExportOptions, Target};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{Error, Kind};

/// The target called `to`, or a ValueError that lists the known ones.
pub(crate) fn target(to: &str) -> PyResult<Target> {
    Target::from_name(to).ok_or_else(|| {
        let known: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        PyValueError::new_err(format!(
            "to must be one of {}, not {to:?}",
            known.join(", ")
        ))
    })
}

/// The options `profcodec convert` uses for one input of `format`: the metric asked for, and
/// the source tool's folded frame names.
fn options(format: Option<profcodec::Format>, metric: Option<String>) -> ExportOptions {
    let mut options = ExportOptions::new();
    options.metric = metric;
    options.folded_names = format.and_then(profcodec::folded_frame_namer);
    options
}

/// Writes `profile` as `to` into the file `path`, atomically: into a temporary file beside it,
/// renamed over `path` once complete, so that `path` holds the old content or the whole new
/// one, never a part. Without `path`, returns the output. The GIL is released while writing.
pub(crate) fn convert(
    py: Python<'_>,
    profile: &Profile,
    format: Option<profcodec::Format>,
    to: Target,
    path: Option<PathBuf>,
    metric: Option<String>,
) -> PyResult<Option<Vec<u8>>> {
    let options = options(format, metric);
    py.detach(|| match path {
        None => {
            let mut out = Vec::new();
            to.write(profile, &options, &mut out)
                .map_err(export_error)?;
            Ok(Some(out))
        }
        Some(path) => write_file_atomically(&path, Replace::Always, |out| {
            to.write(profile, &options, out)
        })
        .map(|()| None)
        .map_err(output_error),
    })
    .map_err(PyErr::from)
}

/// Folded stacks as a str (every frame name is UTF-8), or written to `path`.
pub(crate) fn to_folded<'py>(
    py: Python<'py>,
    profile: &Profile,
    format: Option<profcodec::Format>,
    path: Option<PathBuf>,
    metric: Option<String>,
) -> PyResult<Option<String>> {
    let out = convert(py, profile, format, Target::Folded, path, metric)?;
    Ok(out.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// `convert()`'s result for Python: None after writing a file, else the bytes.
pub(crate) fn into_py(py: Python<'_>, out: Option<Vec<u8>>) -> Option<Bound<'_, PyBytes>> {
    out.map(|bytes| PyBytes::new(py, &bytes))
}

/// A failed atomic write: the export's own error, or the output's file error with its errno.
fn output_error(e: AtomicWriteError<ExportError>) -> Error {
    match e {
        AtomicWriteError::Write(e) => export_error(e),
        e => match e.io_error() {
            Some(io) => Error::io(e.to_string(), io),
            None => Error::new(Kind::File, e.to_string()),
        },
    }
}

fn export_error(e: ExportError) -> Error {
    match e {
        ExportError::Io(ref io) => Error::io(e.to_string(), io),
        ExportError::UnknownMetric { .. } => Error::new(Kind::Query, e.to_string()),
        ExportError::NoValues => Error::new(Kind::Unsupported, e.to_string()),
        e => Error::invalid(e, None),
    }
}
