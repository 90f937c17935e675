//! Rust errors as the exceptions of `profcodec._errors` (defined in Python, so that
//! `FileError` can be both a `profcodec.Error` and an `OSError`).

use profcodec::{OpenError, ReadError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Which exception class of `profcodec._errors` an error becomes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    /// `InvalidDataError`: the input is damaged.
    Invalid,
    /// `UnknownFormatError`: the input is no profile profcodec knows.
    UnknownFormat,
    /// `UnsupportedError`: the input cannot give what was asked.
    Unsupported,
    /// `FileError`: a file could not be read.
    File,
    /// `QueryError`: a question the profile cannot answer.
    Query,
}

impl Kind {
    fn class_name(self) -> &'static str {
        match self {
            Kind::Invalid => "InvalidDataError",
            Kind::UnknownFormat => "UnknownFormatError",
            Kind::Unsupported => "UnsupportedError",
            Kind::File => "FileError",
            Kind::Query => "QueryError",
        }
    }
}

/// An error on its way to Python: the class, the message and what the exception carries.
#[derive(Debug)]
pub(crate) struct Error {
    kind: Kind,
    message: String,
    offset: Option<u64>,
    errno: Option<i32>,
}

impl Error {
    pub(crate) fn new(kind: Kind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            offset: None,
            errno: None,
        }
    }

    pub(crate) fn invalid(message: impl std::fmt::Display, offset: Option<u64>) -> Self {
        Error {
            offset,
            ..Error::new(Kind::Invalid, message.to_string())
        }
    }

    pub(crate) fn io(message: String, e: &std::io::Error) -> Self {
        Error {
            errno: e.raw_os_error(),
            ..Error::new(Kind::File, message)
        }
    }
}

impl From<OpenError> for Error {
    fn from(e: OpenError) -> Self {
        match &e {
            OpenError::Io { source, .. } => Error::io(e.to_string(), source),
            OpenError::Unknown { .. } | OpenError::NotADatabase(_) | OpenError::NoProfiles(_) => {
                Error::new(Kind::UnknownFormat, e.to_string())
            }
            OpenError::NotAFile(_) => Error::new(Kind::File, e.to_string()),
            _ => Error::new(Kind::Invalid, e.to_string()),
        }
    }
}

/// A merge of many inputs: the error of the first input at fault, its path first.
impl From<profcodec::MergeError> for Error {
    fn from(e: profcodec::MergeError) -> Self {
        use profcodec::MergeError as E;
        match e {
            E::Open(e) => e.into(),
            E::Read { input, source, .. } => {
                let mut error = Error::from(source);
                error.message = format!("{}: {}", input.display(), error.message);
                error
            }
            e => Error::new(Kind::Unsupported, e.to_string()),
        }
    }
}

impl From<ReadError> for Error {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Open(e) => e.into(),
            ReadError::Io(ref source) => Error::io(e.to_string(), source),
            ReadError::Unsupported(message) => Error::new(Kind::Unsupported, message),
            e => {
                let offset = e.offset();
                Error::invalid(e, offset)
            }
        }
    }
}

/// The package's exception for a reading error: what the format crates' own classes raise
/// (lent to them through `profcodec::python::register_format_modules`).
pub(crate) fn read_error(e: ReadError) -> PyErr {
    Error::from(e).into()
}

/// An inspection verb's error (`info`, `validate`, `dump`, `rewrite`): damage is
/// `InvalidDataError` with its offset, what the input or this build cannot do
/// `UnsupportedError`, a file that cannot be read or written `FileError` (the opener's own
/// error where it carries one: a file of a folder input that is missing or of no known
/// format).
impl From<profcodec::inspect::Error> for Error {
    fn from(e: profcodec::inspect::Error) -> Self {
        use profcodec::inspect::Error as E;
        match e {
            E::Io(io) => io_or_open(io),
            E::Invalid { offset, .. } => Error::invalid(e, offset),
            E::Usage(message) => Error::new(Kind::Unsupported, message),
            e => Error::new(Kind::Unsupported, e.to_string()),
        }
    }
}

/// An I/O error, or the [`OpenError`] it carries (a folder input's `Members` hand one over
/// inside an I/O error).
pub(crate) fn io_or_open(e: std::io::Error) -> Error {
    if !e.get_ref().is_some_and(|inner| inner.is::<OpenError>()) {
        return Error::io(e.to_string(), &e);
    }
    let message = e.to_string();
    match e.into_inner().map(|inner| inner.downcast::<OpenError>()) {
        Some(Ok(open)) => (*open).into(),
        _ => Error::new(Kind::File, message),
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        Python::attach(|py| match exception(py, &e) {
            Ok(exc) => PyErr::from_value(exc),
            // The package's own module is missing: still an exception, never a crash.
            Err(import_error) => {
                let err = PyRuntimeError::new_err(e.message);
                err.set_cause(py, Some(import_error));
                err
            }
        })
    }
}

/// The exception object for `e`: `Class(message, offset=..., errno=...)`.
fn exception<'py>(py: Python<'py>, e: &Error) -> PyResult<Bound<'py, PyAny>> {
    let class = py
        .import("profcodec._errors")?
        .getattr(e.kind.class_name())?;
    let kwargs = PyDict::new(py);
    kwargs.set_item("offset", e.offset)?;
    if let Some(errno) = e.errno {
        kwargs.set_item("errno", errno)?;
    }
    class.call((e.message.as_str(),), Some(&kwargs))
}
