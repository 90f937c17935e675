//! The Arrow tables of any input (`profcodec::tables`) handed to Python through the Arrow C stream interface
//! (the Arrow PyCapsule interface): `Input.arrow_stream()` gives a `profcodec.ArrowStream`,
//! an object with `__arrow_c_stream__` that pyarrow, polars or DuckDB import without a copy,
//! and `Input.table()`/`tables()` make `pyarrow.Table`s of them.

use std::path::{Path, PathBuf};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use profcodec::tables::{Input, ProfileTables, ScanOptions, TableSet, Tables};
use pyo3::exceptions::PyImportError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::errors::{Error, Kind};

/// The name the Arrow PyCapsule interface gives a capsule holding an `ArrowArrayStream`.
const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

/// One table read whole, as Arrow record batches, ready to be handed to any Arrow consumer.
///
/// `pyarrow.table(stream)`, `pyarrow.RecordBatchReader.from_stream(stream)`,
/// `polars.from_arrow(stream)` and DuckDB read it through `__arrow_c_stream__` (the Arrow
/// PyCapsule interface): the columns Rust made are shared, never copied through Python
/// objects. It can be consumed any number of times.
#[pyclass(name = "ArrowStream", module = "profcodec", frozen)]
pub(crate) struct ArrowStream {
    name: String,
    schema: arrow_schema::SchemaRef,
    batches: Vec<RecordBatch>,
}

impl ArrowStream {
    /// The table `name` of `schema`, read whole into `batches` (a query's result).
    pub(crate) fn new(
        name: String,
        schema: arrow_schema::SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> ArrowStream {
        ArrowStream {
            name,
            schema,
            batches,
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The table's name, with its set: "hpctoolkit.values", "profile.nodes".
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// The number of rows.
    #[getter]
    fn num_rows(&self) -> usize {
        self.batches.iter().map(RecordBatch::num_rows).sum()
    }

    /// The Arrow PyCapsule interface: a capsule named "arrow_array_stream" holding an
    /// `ArrowArrayStream` of the table's record batches. `requested_schema` is not applied
    /// (the interface lets a producer keep its own schema; the consumer casts).
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        // Cloning a batch clones `Arc`s to its buffers, not the data.
        let reader = RecordBatchIterator::new(
            self.batches.clone().into_iter().map(Ok),
            self.schema.clone(),
        );
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out of the capsule (leaving a released stream behind,
        // whose drop does nothing); a capsule never consumed releases it when collected.
        PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.ArrowStream {}: {} rows, {} columns>",
            self.name,
            self.num_rows(),
            self.schema.fields().len()
        )
    }
}

/// A table asked for: its set and its name within the set.
#[derive(Debug, Clone, Copy)]
struct TableName<'a> {
    set: TableSet,
    table: &'a str,
}

/// The set called `name`, or the input's own when `None`.
fn set_named(name: Option<&str>, own: TableSet) -> Result<TableSet, Error> {
    let Some(name) = name else { return Ok(own) };
    let known = [own, PROFILE];
    known.into_iter().find(|s| s.name() == name).ok_or_else(|| {
        Error::new(
            Kind::Query,
            format!(
                "no table set {name:?} for this input: it has \"{own}\" (its format's tables) \
                 and \"profile\" (the profile model's)"
            ),
        )
    })
}

/// The set of the profile model's tables.
const PROFILE: TableSet = profcodec_arrow::profile::SET;

/// The set of `opened`'s format: which set of `profcodec::tables` reads it.
pub(crate) fn format_set(opened: &profcodec::Opened) -> TableSet {
    // This package builds every format, each with its tables: the fallback is never taken.
    profcodec::tables::format_set(opened.format()).unwrap_or(PROFILE)
}

/// `name` ("values", "profile.nodes") resolved against `set` (a set name or `None`).
fn table_name<'a>(name: &'a str, set: Option<&str>, own: TableSet) -> Result<TableName<'a>, Error> {
    let (set, table) = match name.split_once('.') {
        Some((prefix, table)) if set.is_none() || set == Some(prefix) => {
            (set_named(Some(prefix), own)?, table)
        }
        Some((prefix, _)) => {
            return Err(Error::new(
                Kind::Query,
                format!("table {name:?} is in the set {prefix:?}, not {set:?}"),
            ));
        }
        None => (set_named(set, own)?, name),
    };
    set.table(table).map_err(Error::from)?;
    Ok(TableName { set, table })
}

/// The names of the tables of `set` (the input's own when `None`), in order.
pub(crate) fn names(opened: &profcodec::Opened, set: Option<&str>) -> PyResult<Vec<&'static str>> {
    let set = set_named(set, format_set(opened))?;
    Ok(set.tables().iter().map(|t| t.name).collect())
}

/// Reads the tables `wanted` of the input at `path` whole, with the GIL released: the
/// format's tables from profcodec-arrow's reader, the `profile` tables from the model, made
/// once for all of them.
fn read(
    py: Python<'_>,
    opened: &profcodec::Opened,
    wanted: &[TableName<'_>],
    binary_path: Vec<PathBuf>,
) -> PyResult<Vec<ArrowStream>> {
    let path: &Path = opened.path();
    let streams =
        crate::binaries::resolving(py, binary_path, || -> Result<Vec<ArrowStream>, Error> {
            let format = match wanted.iter().any(|n| n.set != PROFILE) {
                true => Some(Input::open(path)?),
                false => None,
            };
            let profile = match wanted.iter().any(|n| n.set == PROFILE) {
                true => Some(ProfileTables::new(profcodec::to_profile(opened)?)),
                false => None,
            };
            let options = ScanOptions::new();
            let mut streams = Vec::with_capacity(wanted.len());
            for name in wanted {
                let def = name.set.table(name.table)?;
                let tables: &dyn Tables = match (name.set == PROFILE, &profile, &format) {
                    (true, Some(profile), _) => profile,
                    (false, _, Some(format)) => format,
                    _ => unreachable!("opened above for every set asked for"),
                };
                let batches = tables
                    .batches(name.table, &options)?
                    .collect::<Result<Vec<_>, _>>()?;
                streams.push(ArrowStream {
                    name: format!("{}.{}", name.set, name.table),
                    schema: def.schema(),
                    batches,
                });
            }
            // A file that shrank while it was read gave zeros: raise in place of those tables.
            if let Some(format) = &format {
                format.check_intact()?;
            }
            Ok(streams)
        })??;
    Ok(streams)
}

/// `Input.arrow_stream(name, set)`: one table as an `ArrowStream`.
pub(crate) fn stream(
    py: Python<'_>,
    opened: &profcodec::Opened,
    name: &str,
    set: Option<&str>,
    binary_path: Vec<PathBuf>,
) -> PyResult<ArrowStream> {
    let name = table_name(name, set, format_set(opened))?;
    let mut streams = read(py, opened, &[name], binary_path)?;
    Ok(streams.remove(0))
}

/// `profcodec.table_names()`: every table this build declares, as `set.table`
/// ("hpctoolkit.values", "profile.nodes"), set by set in `profcodec::tables::SETS`' order.
#[pyfunction]
pub(crate) fn table_names() -> Vec<String> {
    profcodec::tables::SETS
        .iter()
        .flat_map(|set| {
            set.tables()
                .iter()
                .map(move |t| format!("{set}.{}", t.name))
        })
        .collect()
}

/// `profcodec.table_schema(name)`: the Arrow schema the table `name` ("hpctoolkit.values",
/// "profile.nodes") is declared with, as a `pyarrow.Schema`, read from no input: what a query
/// engine plans with before any profile is decoded.
#[pyfunction]
pub(crate) fn table_schema<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let unknown = || {
        Error::new(
            Kind::Query,
            format!(
                "no table {name:?}: a table is named with its set, one of {}",
                table_names().join(", ")
            ),
        )
    };
    let (set, table) = name.split_once('.').ok_or_else(unknown)?;
    let set = profcodec::tables::set(set).ok_or_else(unknown)?;
    let def = set.table(table).map_err(Error::from)?;
    let pyarrow = pyarrow(py)?;
    let empty = ArrowStream::new(name.to_owned(), def.schema(), Vec::new());
    to_pyarrow(py, &pyarrow, empty)?.getattr("schema")
}

/// `profcodec.expand_inputs(paths)`: the inputs `paths` stand for, as `sql()` and
/// `merged_profile()` read them: each file, database, measurement folder or session as it is,
/// a folder of profiles replaced by its profiles in name order (a `UserWarning` for each
/// entry passed over, and why). Opens no more of each than its first bytes.
#[pyfunction]
pub(crate) fn expand_inputs(py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<Vec<PathBuf>> {
    crate::profile::expand_inputs(py, &paths)
}

/// pyarrow, or an ImportError that says how to install it.
pub(crate) fn pyarrow(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("pyarrow").map_err(|e| {
        let err = PyImportError::new_err(
            "profcodec's tables are pyarrow Tables: install pyarrow >= 15 (pip install pyarrow, \
             or pip install \"profcodec[arrow]\"), or read Input.arrow_stream() with another \
             Arrow library",
        );
        err.set_cause(py, Some(e));
        err
    })
}

/// An `ArrowStream` as a `pyarrow.Table`, imported through the C stream interface.
pub(crate) fn to_pyarrow<'py>(
    py: Python<'py>,
    pyarrow: &Bound<'py, PyModule>,
    stream: ArrowStream,
) -> PyResult<Bound<'py, PyAny>> {
    let stream = Bound::new(py, stream)?;
    pyarrow
        .getattr("RecordBatchReader")?
        .call_method1("from_stream", (stream,))?
        .call_method0("read_all")
}

/// `Input.table(name, set)`: one table as a `pyarrow.Table`.
pub(crate) fn table<'py>(
    py: Python<'py>,
    opened: &profcodec::Opened,
    name: &str,
    set: Option<&str>,
    binary_path: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyAny>> {
    let pyarrow = pyarrow(py)?;
    to_pyarrow(py, &pyarrow, stream(py, opened, name, set, binary_path)?)
}

/// `Input.tables(set)`: every table of a set, as a dict of `pyarrow.Table`s in the set's order.
pub(crate) fn tables<'py>(
    py: Python<'py>,
    opened: &profcodec::Opened,
    set: Option<&str>,
    binary_path: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let pyarrow = pyarrow(py)?;
    let set = set_named(set, format_set(opened))?;
    let wanted: Vec<TableName<'_>> = set
        .tables()
        .iter()
        .map(|t| TableName { set, table: t.name })
        .collect();
    let dict = PyDict::new(py);
    for (name, stream) in wanted.iter().zip(read(py, opened, &wanted, binary_path)?) {
        dict.set_item(name.table, to_pyarrow(py, &pyarrow, stream)?)?;
    }
    Ok(dict)
}

impl From<profcodec::tables::Error> for Error {
    fn from(e: profcodec::tables::Error) -> Self {
        use profcodec::tables::Error as E;
        match e {
            // The umbrella's opener's error, for the input or a file of it.
            E::Open(e) => match e.downcast::<profcodec::OpenError>() {
                Ok(open) => (*open).into(),
                Err(other) => Error::new(Kind::File, other.to_string()),
            },
            E::Unsupported { .. } => Error::new(Kind::Unsupported, e.to_string()),
            E::UnknownTable { .. } => Error::new(Kind::Query, e.to_string()),
            E::Profile(source) => match source.downcast::<profcodec::ReadError>() {
                Ok(read) => (*read).into(),
                Err(other) => Error::invalid(other, None),
            },
            e => {
                let offset = e.offset();
                Error::invalid(e, offset)
            }
        }
    }
}
