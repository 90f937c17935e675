//! The native half of the Python package `profcodec` (`profcodec._profcodec`): profiles of
//! HPCToolkit, hpcrun, Devel::NYTProf, EasyProfiler and Devel::StatProfiler opened, summarised,
//! validated, dumped, rewritten, compared, converted and queried by the umbrella `profcodec`'s
//! verbs, as the command line's subcommands of those names run them; and, registered through
//! the umbrella from the HPCToolkit crate, databases as NumPy arrays and hatchet GraphFrames.
//! This crate names no format crate.
//!
//! The Python half (`python/profcodec/`) holds the exceptions, the hatchet and pandas glue and
//! the type stubs; the package's README shows its use. Every entry point releases the GIL
//! while Rust reads, and every Rust error becomes a `profcodec.Error` subclass carrying the
//! message and the byte offset: bad input never crashes the interpreter.
#![deny(missing_docs)]

mod binaries;
mod convert;
mod diff;
mod errors;
mod input;
mod inspect;
mod prof;
mod profile;
mod report;
mod sql;
mod tables;
mod timeline;

use pyo3::prelude::*;

/// The module `profcodec._profcodec`.
#[pymodule]
fn _profcodec(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(input::open, m)?)?;
    m.add_class::<input::Input>()?;
    m.add_class::<profile::Profile>()?;
    m.add_class::<profile::Top>()?;
    m.add_class::<tables::ArrowStream>()?;
    m.add_function(wrap_pyfunction!(tables::table_names, m)?)?;
    m.add_function(wrap_pyfunction!(tables::table_schema, m)?)?;
    m.add_function(wrap_pyfunction!(tables::expand_inputs, m)?)?;
    m.add_function(wrap_pyfunction!(diff::diff, m)?)?;
    m.add_function(wrap_pyfunction!(inspect::merge, m)?)?;
    m.add_function(wrap_pyfunction!(prof::prof, m)?)?;
    m.add_function(wrap_pyfunction!(profile::merged_profile, m)?)?;
    m.add_class::<diff::Diff>()?;
    m.add_function(wrap_pyfunction!(sql::sql, m)?)?;
    m.add_function(wrap_pyfunction!(sql::export_parquet, m)?)?;
    // The format crates' own classes (HPCToolkit's `Database`, hatchet's columns).
    profcodec::python::register_format_modules(m, errors::read_error)?;
    Ok(())
}
