//! `to_folded()` and `convert(to=...)`: a profile model into a viewer's format through
//! profcodec-export, as `profcodec convert` writes it for one input.

use std::path::PathBuf;

use profcodec::output::{CheckedOutput, OutputError, OutputPath, Overwrite, WriteError};
use profcodec::profile::Profile;
use profcodec_export::{ExportError, ExportOptions, Target};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{Error, Kind};

/// The target called `to`, or a ValueError that lists the known ones: the profile model's,
/// then `also` (the timelines' for an input).
pub(crate) fn target(to: &str, also: &[&str]) -> PyResult<Target> {
    Target::from_name(to).ok_or_else(|| {
        let mut known: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
        known.extend(also);
        PyValueError::new_err(format!(
            "to must be one of {}, not {to:?}",
            known.join(", ")
        ))
    })
}

/// The options `profcodec convert` uses for one input of `format`: the metric asked for, the
/// source tool's folded frame names, and the output budget (`profcodec convert`'s default:
/// 100 times the input's size plus 64 MiB).
fn options(
    format: Option<profcodec::Format>,
    metric: Option<String>,
    budget: u64,
) -> ExportOptions {
    let mut options = ExportOptions::new();
    options.metric = metric;
    options.max_output = Some(budget);
    options.folded_names = format.and_then(profcodec::folded_frame_namer);
    options
}

/// Checks `path` against profcodec's output policy before anything is read (see
/// `profcodec::output`): an existing file is replaced only when `overwrite`, a folder never,
/// and an output that is one of `inputs`, as given (a folder of profiles too), or lies inside
/// one is refused. `None` when there is no path.
pub(crate) fn check_output<'a>(
    path: Option<PathBuf>,
    overwrite: bool,
    inputs: impl IntoIterator<Item = &'a std::path::Path>,
) -> PyResult<Option<CheckedOutput>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let mut spec = OutputPath::file(path).overwrite(Overwrite::from_force(overwrite));
    for input in inputs {
        spec = spec.input(input);
    }
    Ok(Some(check(spec)?))
}

/// Checks `spec` against the output policy; a refusal is a FileError.
pub(crate) fn check(spec: OutputPath) -> PyResult<CheckedOutput> {
    spec.check().map_err(|e| PyErr::from(policy_error(e)))
}

/// Writes `profile` as `to` into the checked `output`, atomically: into a staging file beside
/// it, renamed into place once complete, so that the path holds the old content or the whole
/// new one, never a part. Without an output, returns the output's bytes. The GIL is released
/// while writing.
pub(crate) fn convert(
    py: Python<'_>,
    profile: &Profile,
    format: Option<profcodec::Format>,
    to: Target,
    output: Option<CheckedOutput>,
    metric: Option<String>,
    budget: u64,
) -> PyResult<Option<Vec<u8>>> {
    let options = options(format, metric, budget);
    py.detach(|| match output {
        None => {
            let mut out = Vec::new();
            to.write(profile, &options, &mut out)
                .map_err(export_error)?;
            Ok(Some(out))
        }
        Some(output) => output
            .write_file(|out| to.write(profile, &options, out))
            .map(|()| None)
            .map_err(output_error),
    })
    .map_err(PyErr::from)
}

/// Folded stacks as a str (every frame name is UTF-8), or written to the checked `output`.
pub(crate) fn to_folded(
    py: Python<'_>,
    profile: &Profile,
    format: Option<profcodec::Format>,
    output: Option<CheckedOutput>,
    metric: Option<String>,
    budget: u64,
) -> PyResult<Option<String>> {
    let out = convert(py, profile, format, Target::Folded, output, metric, budget)?;
    Ok(out.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// `convert()`'s result for Python: None after writing a file, else the bytes.
pub(crate) fn into_py(py: Python<'_>, out: Option<Vec<u8>>) -> Option<Bound<'_, PyBytes>> {
    out.map(|bytes| PyBytes::new(py, &bytes))
}

/// A failed atomic write: the export's own error, or the output's.
fn output_error(e: WriteError<ExportError>) -> Error {
    write_error(e, export_error)
}

/// A failed atomic write: the writer's own error (made an [`Error`] by `writer`), or the
/// output's ([`policy_error`]).
pub(crate) fn write_error<E>(e: WriteError<E>, writer: impl FnOnce(E) -> Error) -> Error {
    match e {
        WriteError::Write(e) => writer(e),
        WriteError::Output(e) => policy_error(e),
        // The enum may grow: a failure of the output all the same.
        _ => Error::new(Kind::File, "the output could not be written"),
    }
}

/// An output refused by the policy, or not put in place: a FileError (an OSError with the
/// errno where the OS gave one), whose message says how to replace an existing output.
pub(crate) fn policy_error(e: OutputError) -> Error {
    if let Some(io) = e.io_error() {
        return Error::io(e.to_string(), io);
    }
    Error::new(Kind::File, e.message_with_override("overwrite=True"))
}

fn export_error(e: ExportError) -> Error {
    match e {
        ExportError::Io(ref io) => Error::io(e.to_string(), io),
        ExportError::UnknownMetric { .. } => Error::new(Kind::Query, e.to_string()),
        ExportError::NoValues | ExportError::OutputTooLarge { .. } => {
            Error::new(Kind::Unsupported, e.to_string())
        }
        e => Error::invalid(e, None),
    }
}
