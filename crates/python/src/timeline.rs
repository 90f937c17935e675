//! `Input.convert("perfetto")` and `Input.convert("chrome")`: the input's timeline (an
//! EasyProfiler capture, an HPCToolkit trace.db, hpcrun `.hpctrace` files) as a trace, through
//! `profcodec::timeline`, as `profcodec convert --to perfetto|chrome` writes it.

use std::path::PathBuf;

use profcodec::Opened;
use profcodec::output::{CheckedOutput, WriteError};
use profcodec::timeline::{Filter, Format, TraceInput, write_trace};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{Error, Kind};

/// The names of the timeline targets, after the profile model's in `convert`'s error.
pub(crate) const TARGETS: [&str; 2] = ["perfetto", "chrome"];

/// The trace format called `to`, if `to` names one.
pub(crate) fn format(to: &str) -> Option<Format> {
    match to {
        "perfetto" => Some(Format::Perfetto),
        "chrome" => Some(Format::Chrome),
        _ => None,
    }
}

/// The filter of what a trace keeps: `threads` (an EasyProfiler thread id or name, the THREAD
/// id of an HPCToolkit profile or hpcrun file), `ranks`, the window `[from_ns, until_ns]` on
/// the trace's own clock, and the deepest nesting kept.
pub(crate) fn filter(
    threads: Vec<String>,
    ranks: Vec<u64>,
    from_ns: Option<u64>,
    until_ns: Option<u64>,
    depth: Option<u32>,
) -> PyResult<Filter> {
    if let (Some(from), Some(until)) = (from_ns, until_ns)
        && from > until
    {
        return Err(PyValueError::new_err(format!(
            "from_ns {from} is after until_ns {until}"
        )));
    }
    if depth == Some(0) {
        return Err(PyValueError::new_err("depth must be at least 1"));
    }
    let mut filter = Filter::new();
    filter.threads = threads;
    filter.ranks = ranks;
    filter.from = from_ns;
    filter.until = until_ns;
    filter.depth = depth;
    Ok(filter)
}

/// Writes the timeline of `opened` as `format` into `output` atomically, or returns its bytes
/// without one. The trace stops at `budget` bytes, and nothing is written then.
pub(crate) fn convert(
    py: Python<'_>,
    opened: &Opened,
    format: Format,
    filter: Filter,
    output: Option<CheckedOutput>,
    budget: u64,
    binary_path: Vec<PathBuf>,
) -> PyResult<Option<Vec<u8>>> {
    let write = |out: &mut dyn std::io::Write| -> Result<(), Error> {
        let budgeted = profcodec_export::BudgetWriter::new(out, budget);
        let inputs = [TraceInput::Opened(opened)];
        write_trace(budgeted, format, filter.clone(), &inputs).map_err(error)?;
        Ok(())
    };
    let written = crate::binaries::resolving(py, binary_path, || match output {
        None => {
            let mut out = Vec::new();
            write(&mut out)?;
            Ok(Some(out))
        }
        Some(output) => output
            .write_file(write)
            .map(|()| None)
            .map_err(|e| match e {
                WriteError::Write(e) => e,
                e => crate::convert::write_error(e, |e| e),
            }),
    })??;
    Ok(written)
}

/// A conversion error as Python raises it: an input that is no timeline, or a trace over its
/// budget, is unsupported; damage is invalid; the reader's own errors keep their class.
fn error(e: profcodec::timeline::Error) -> Error {
    use profcodec::timeline::Error as E;
    match e {
        E::NotATimeline { .. } => Error::new(Kind::Unsupported, e.to_string()),
        // A thread or rank filter that kept nothing: as `Profile.top()` raises it.
        E::NoMatch(_) => Error::new(Kind::Query, e.to_string()),
        E::Write(io) => match profcodec_export::over_budget(&io) {
            Some(over) => Error::new(
                Kind::Unsupported,
                format!(
                    "the trace would be larger than its budget of {} bytes (by default 100 \
                     times the input's size plus 64 MiB); nothing was written; max_output= \
                     allows more, depth= or from_ns=/until_ns= make it smaller",
                    over.budget
                ),
            ),
            None => Error::io(io.to_string(), &io),
        },
        E::Read(source) => match source.downcast::<profcodec::ReadError>() {
            Ok(read) => (*read).into(),
            Err(other) => Error::invalid(other, None),
        },
        e => Error::invalid(e, None),
    }
}
