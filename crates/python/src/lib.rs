//! The native half of the Python package `profcodec` (`profcodec._profcodec`): profiles of
//! HPCToolkit, hpcrun, Devel::NYTProf, EasyProfiler and Devel::StatProfiler opened, summarised
//! and converted into the format-neutral profile model by the profcodec crates, and HPCToolkit
//! databases as NumPy arrays and hatchet GraphFrames.
//!
//! The Python half (`python/profcodec/`) holds the exceptions, the hatchet and pandas glue and
//! the type stubs; the package's README shows its use. Every entry point releases the GIL
//! while Rust reads, and every Rust error becomes a `profcodec.Error` subclass carrying the
//! message and the byte offset: bad input never crashes the interpreter.
#![deny(missing_docs)]

mod convert;
mod errors;
mod hpctoolkit;
mod input;
mod profile;
mod tables;

use pyo3::prelude::*;

/// The module `profcodec._profcodec`.
#[pymodule]
fn _profcodec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(input::open, m)?)?;
    m.add_class::<input::Input>()?;
    m.add_class::<profile::Profile>()?;
    m.add_class::<profile::Top>()?;
    m.add_class::<tables::ArrowStream>()?;
    m.add_class::<hpctoolkit::Database>()?;
    m.add_function(wrap_pyfunction!(hpctoolkit::hatchet_columns, m)?)?;
    m.add_function(wrap_pyfunction!(hpctoolkit::hatchet_nodes, m)?)?;
    Ok(())
}
