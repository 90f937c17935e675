//! The format crates' own classes in the Python package `profcodec` (feature `python`): the one
//! place that knows which format crate has some, and registers them in the package's native
//! module with [`register_format_modules`].
//!
//! A format crate's Python module opens files and raises exceptions through what this module
//! lends it: files are opened as [`open`](crate::open) opens any input (read, or mapped behind
//! the SIGBUS guard, their format detected), and its errors become [`ReadError`]s, which the
//! package turns into its exceptions as it does every other reading error.

use pyo3::prelude::*;

use crate::ReadError;

/// Registers every format crate's classes and functions in `module`, the package's native
/// module: HPCToolkit's `Database`, `hatchet_columns` and `hatchet_nodes` (where the format is
/// compiled in). `exception` is the package's exception for a reading error.
pub fn register_format_modules(
    module: &Bound<'_, PyModule>,
    exception: fn(ReadError) -> PyErr,
) -> PyResult<()> {
    #[cfg(feature = "hpctoolkit")]
    profcodec_hpctoolkit::python::register(module, Box::new(Lent { exception }))?;
    let _ = (module, exception);
    Ok(())
}

/// What a format crate's Python module is lent: the umbrella's opener, and the package's
/// exceptions.
#[allow(dead_code)] // without a format feature, nothing is lent
struct Lent {
    exception: fn(ReadError) -> PyErr,
}

#[cfg(feature = "hpctoolkit")]
impl profcodec_hpctoolkit::python::Host for Lent {
    fn open(&self, path: &std::path::Path) -> PyResult<profcodec_hpctoolkit::python::Opened> {
        let opened = crate::open(path).map_err(|e| (self.exception)(e.into()))?;
        Ok(profcodec_hpctoolkit::python::Opened {
            format: opened.format().to_string(),
            bytes: Box::new(opened),
        })
    }

    fn exception(&self, error: profcodec_hpctoolkit::python::Error) -> PyErr {
        use profcodec_hpctoolkit::python::Error;
        (self.exception)(match error {
            Error::Invalid(e) => e.into(),
            Error::Unsupported(message) => ReadError::Unsupported(message),
            other => ReadError::Unsupported(other.to_string()),
        })
    }
}
