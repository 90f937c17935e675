//! `profcodec.sql(query, paths)` and `profcodec.export_parquet(paths, out)`: SQL over the inputs'
//! tables in an embedded DataFusion session, and their Parquet export, as `profcodec sql` and
//! `profcodec export --parquet` run them (`profcodec-arrow`'s `sql` and `parquet`). They link
//! DataFusion and Parquet, so they are built with the package's cargo feature `sql`; without
//! it both raise `profcodec.UnsupportedError` saying so.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{Error, Kind};

/// One path, or a sequence of them (str, `os.PathLike`, `profcodec.Input`), in order.
fn paths_of(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    let one = paths.is_instance_of::<pyo3::types::PyString>()
        || paths.hasattr(pyo3::intern!(paths.py(), "__fspath__"))?;
    if one {
        return Ok(vec![paths.extract()?]);
    }
    let mut all = Vec::new();
    for path in paths.try_iter()? {
        all.push(path?.extract()?);
    }
    if all.is_empty() {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "paths must name at least one input",
        ));
    }
    Ok(all)
}

/// The inputs `paths` stand for, as the command line's `sql` and `export --parquet` read them:
/// a folder of profiles is its profiles in name order (a `UserWarning` for each entry passed
/// over), a database, measurement folder or session stays one input.
fn inputs_of(paths: &Bound<'_, PyAny>) -> PyResult<Vec<PathBuf>> {
    crate::profile::expand_inputs(paths.py(), &paths_of(paths)?)
}

/// Runs the read-only SQL `query` over the tables of the inputs at `paths` (a path or a list of
/// them, numbered from 0 in order: the `input` column; a folder of profiles stands for its
/// profiles in name order), as `profcodec sql` runs it, and returns
/// the result as a `pyarrow.Table` (pyarrow must be installed).
///
/// The tables are `<set>.<table>` (`nytprof.lines`, `hpctoolkit.values`, `profile.frames`...)
/// and `inputs`; a bare `<table>` works where one set of the inputs has it.
/// `SELECT * FROM information_schema.columns` lists them. COPY, CREATE, INSERT, DROP and SET
/// are refused. `memory_limit`: the bytes the query's joins, sorts and aggregations may hold at
/// once (None: no limit); `spill_limit`: the bytes of temporary files a query over its memory
/// may spill sorts and aggregations to, in the system's temporary folder (2 GiB by default;
/// None: no limit); `timeout`: seconds after which the query is cancelled (600 by default, so
/// that a recursive query that never ends stops; None: never).
///
/// Raises profcodec.QueryError for a query refused or over its limits, an unknown table, and
/// profcodec.UnsupportedError when the package was built without its `sql` feature.
#[pyfunction]
#[pyo3(signature = (query, paths, *, memory_limit=Some(1 << 30), timeout=Some(600.0), spill_limit=Some(2 << 30)))]
pub(crate) fn sql<'py>(
    py: Python<'py>,
    query: &str,
    paths: &Bound<'py, PyAny>,
    memory_limit: Option<usize>,
    timeout: Option<f64>,
    spill_limit: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let paths = inputs_of(paths)?;
    let timeout = match timeout {
        Some(s) => Some(
            std::time::Duration::try_from_secs_f64(s)
                .ok()
                .filter(|d| !d.is_zero())
                .ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "timeout must be a positive number of seconds, not {s}"
                    ))
                })?,
        ),
        None => None,
    };
    imp::sql(
        py,
        query,
        &paths,
        imp::Limits {
            memory_limit,
            timeout,
            spill_limit,
        },
    )
}

/// Exports the tables of the inputs at `paths` (a path or a list of them, numbered from 0 in
/// order; a folder of profiles stands for its profiles in name order) as a Hive-partitioned Parquet dataset in the folder `out`, as
/// `profcodec export --parquet` writes it: `out/<set>/<table>/input=<k>/part-<n>.parquet` and
/// `out/inputs/`, which DuckDB, Spark, Trino and DataFusion read. Returns the rows written per
/// table (`"set.table"`), in order.
///
/// `compression`: "zstd", "snappy" or "none". `tables`: only these (`set.table`, `table` or a
/// whole `set`). `overwrite=True` replaces an existing `out` that profcodec wrote (never
/// another folder, nor a file); the dataset appears whole once complete. `append=True` adds
/// the inputs to the dataset `out` that profcodec wrote, numbered after its highest input, in
/// new files only (new `input=<k>` folders, a new part of the `inputs` table), which appear
/// once all are written; a missing or empty `out` becomes a new dataset, a path the dataset has
/// already is added again with a UserWarning, and `overwrite=True` with it is a ValueError.
/// `threads`: how many
/// tables are written at once (the machine's cores by default). `dry_run=True` reads every
/// table as the export would and writes nothing (`out` may then be None).
///
/// Raises profcodec.FileError when `out` is refused or cannot be written, and
/// profcodec.UnsupportedError when the package was built without its `sql` feature.
#[pyfunction]
#[pyo3(signature = (paths, out=None, *, compression="zstd", tables=None, overwrite=false, threads=None, dry_run=false, append=false))]
#[allow(clippy::too_many_arguments)] // Python keyword arguments
pub(crate) fn export_parquet<'py>(
    py: Python<'py>,
    paths: &Bound<'py, PyAny>,
    out: Option<PathBuf>,
    compression: &str,
    tables: Option<Vec<String>>,
    overwrite: bool,
    threads: Option<usize>,
    dry_run: bool,
    append: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let paths = inputs_of(paths)?;
    if append && overwrite {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "append=True adds to a dataset and overwrite=True replaces it: not both",
        ));
    }
    let out = match (out, dry_run) {
        (out, true) => out,
        (Some(out), false) => Some(out),
        (None, false) => {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "out names the dataset's folder (or dry_run=True writes nothing)",
            ));
        }
    };
    let rows = imp::export(
        py,
        &paths,
        out.filter(|_| !dry_run),
        imp::Export {
            compression,
            tables: tables.unwrap_or_default(),
            overwrite,
            threads,
            append,
        },
    )?;
    let d = PyDict::new(py);
    for (table, rows) in rows {
        d.set_item(table, rows)?;
    }
    Ok(d)
}

/// Rows per `set.table`, in order of first appearance.
fn totals(tables: impl IntoIterator<Item = (String, u64)>) -> Vec<(String, u64)> {
    let mut totals: Vec<(String, u64)> = Vec::new();
    for (table, rows) in tables {
        match totals.iter_mut().find(|(t, _)| *t == table) {
            Some((_, total)) => *total += rows,
            None => totals.push((table, rows)),
        }
    }
    totals
}

#[cfg(feature = "sql")]
mod imp {
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use profcodec_arrow::parquet::{self, ExportOptions};
    use profcodec_arrow::sql::Session;
    use profcodec_arrow::{Error as TablesError, InputTables};
    use pyo3::prelude::*;

    use super::{Error, Kind, totals};
    use crate::tables::{ArrowStream, pyarrow, to_pyarrow};

    /// The options of an export.
    pub(super) struct Export<'a> {
        pub(super) compression: &'a str,
        pub(super) tables: Vec<String>,
        pub(super) overwrite: bool,
        pub(super) threads: Option<usize>,
        pub(super) append: bool,
    }

    /// Opens every input with its format's tables and its lazily made `profile` tables.
    fn open_inputs(paths: &[PathBuf]) -> Result<Vec<InputTables>, Error> {
        let mut inputs = Vec::with_capacity(paths.len());
        for path in paths {
            inputs.push(profcodec::tables::Input::open(path)?.into_tables());
        }
        Ok(inputs)
    }

    /// Checks that no input shrank while it was read: what a cut file gave is zeros.
    fn check_intact(inputs: &[InputTables]) -> Result<(), Error> {
        for input in inputs {
            input.check_intact().map_err(error)?;
        }
        Ok(())
    }

    /// What a query may use, as the keywords of `sql()` give it.
    pub(super) struct Limits {
        pub(super) memory_limit: Option<usize>,
        pub(super) timeout: Option<Duration>,
        pub(super) spill_limit: Option<u64>,
    }

    pub(super) fn sql<'py>(
        py: Python<'py>,
        query: &str,
        paths: &[PathBuf],
        limits: Limits,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pyarrow = pyarrow(py)?;
        let stream = py.detach(|| -> Result<ArrowStream, Error> {
            let inputs = open_inputs(paths)?;
            let limits = profcodec_arrow::sql::Limits::new()
                .memory(limits.memory_limit)
                .timeout(limits.timeout)
                .spill(limits.spill_limit);
            let session = Session::with_limits(
                &inputs,
                profcodec::tables::SETS,
                &Default::default(),
                &limits,
            )
            .map_err(error)?;
            let rows = session.query(query).map_err(error)?;
            let schema = rows.schema();
            let batches = rows.collect::<Result<Vec<_>, _>>().map_err(error)?;
            check_intact(&inputs)?;
            Ok(ArrowStream::new("sql".to_owned(), schema, batches))
        })?;
        to_pyarrow(py, &pyarrow, stream)
    }

    pub(super) fn export(
        py: Python<'_>,
        paths: &[PathBuf],
        out: Option<PathBuf>,
        export: Export<'_>,
    ) -> PyResult<Vec<(String, u64)>> {
        let compression = match export.compression {
            "zstd" => parquet::Compression::Zstd,
            "snappy" => parquet::Compression::Snappy,
            "none" => parquet::Compression::None,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "compression must be \"zstd\", \"snappy\" or \"none\", not {other:?}"
                )));
            }
        };
        // The output is checked before any input is read.
        let output = match out {
            Some(out) => Some(crate::convert::check(
                profcodec::output::OutputPath::folder(out)
                    .overwrite(profcodec::output::Overwrite::from_force(export.overwrite))
                    .append(export.append)
                    .commit_last(parquet::COMMIT_LAST)
                    .inputs(paths),
            )?),
            None => None,
        };
        // The dataset added to: the numbers its new inputs take, and which it has already.
        let dataset = match &output {
            Some(output) if export.append => {
                let mut dataset = parquet::Dataset::read(output.path(), paths).map_err(error)?;
                // What an append killed before its commit left; this call holds the dataset.
                if output.holds_appended_folder() {
                    for left in dataset.remove_leftovers().map_err(error)? {
                        let message = format!(
                            "removed {}, left by an append that did not complete",
                            left.display()
                        );
                        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
                        crate::binaries::warn(py, &category, message)?;
                    }
                }
                for (i, path) in paths.iter().enumerate() {
                    if let Some(k) = dataset.present(i) {
                        let message = format!(
                            "{} is in {} already (input {k}); it is added again as input {}",
                            path.display(),
                            output.path().display(),
                            u64::from(dataset.first_input()) + i as u64
                        );
                        let category = py.get_type::<pyo3::exceptions::PyUserWarning>();
                        crate::binaries::warn(py, &category, message)?;
                    }
                }
                Some(dataset)
            }
            _ => None,
        };
        let mut options = ExportOptions::new()
            .compression(compression)
            .tables(export.tables);
        if let Some(threads) = export.threads {
            options = options.threads(threads);
        }
        let rows = py.detach(|| -> Result<Vec<(String, u64)>, Error> {
            let inputs = open_inputs(paths)?;
            let Some(output) = output else {
                let scanned = parquet::scan(&inputs, &options).map_err(error)?;
                check_intact(&inputs)?;
                return Ok(totals(
                    scanned
                        .into_iter()
                        .map(|s| (format!("{}.{}", s.set, s.table), s.rows)),
                ));
            };
            let written = output
                .write_with(|staged| -> Result<_, Error> {
                    std::fs::create_dir(staged).map_err(|e| Error::io(e.to_string(), &e))?;
                    let written = match &dataset {
                        Some(dataset) => parquet::export_after(staged, &inputs, &options, dataset),
                        None => parquet::export(staged, &inputs, &options),
                    }
                    .map_err(error)?;
                    // A file that shrank while it was read gave zeros: nothing is placed.
                    check_intact(&inputs)?;
                    Ok(written
                        .into_iter()
                        .map(|w| (table_of(staged, &w.path), w.rows))
                        .collect::<Vec<_>>())
                })
                .map_err(|e| crate::convert::write_error(e, |e| e))?;
            Ok(totals(written))
        })?;
        Ok(rows)
    }

    /// `set.table` of a file written below `root` (`nytprof/lines/input=0/...`), or `inputs`.
    fn table_of(root: &Path, path: &Path) -> String {
        let relative = path.strip_prefix(root).unwrap_or(path);
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match parts.as_slice() {
            [set, table, _, _] => format!("{set}.{table}"),
            [table, ..] => table.clone(),
            [] => String::new(),
        }
    }

    /// A tables error as Python raises it: the input's own errors keep their class; a query
    /// refused, over its limits or naming no table is a QueryError; a file that cannot be
    /// written a FileError.
    fn error(e: TablesError) -> Error {
        match e {
            TablesError::Tables(e) => e.into(),
            TablesError::Io { ref source, .. } => Error::io(e.to_string(), source),
            TablesError::Parquet { .. } | TablesError::Dataset { .. } => {
                Error::new(Kind::File, e.to_string())
            }
            TablesError::MemoryLimit { .. } => Error::new(
                Kind::Query,
                format!("{e}; memory_limit= raises it (None for no limit)"),
            ),
            TablesError::SpillLimit { .. } => Error::new(
                Kind::Query,
                format!("{e}; spill_limit= raises it (None for no limit)"),
            ),
            TablesError::Timeout { .. } => Error::new(
                Kind::Query,
                format!("{e}; timeout= sets how long a query may run"),
            ),
            TablesError::NoSuchTable { .. } | TablesError::ReadOnly { .. } => {
                Error::new(Kind::Query, e.to_string())
            }
            TablesError::Sql(ref sql) => {
                // A failure while reading an input travels inside DataFusion's error.
                let mut source: Option<&(dyn std::error::Error + 'static)> = Some(sql);
                while let Some(s) = source {
                    if let Some(inner) = s.downcast_ref::<TablesError>() {
                        return Error::invalid(e.to_string(), inner.offset());
                    }
                    source = s.source();
                }
                Error::new(Kind::Query, e.to_string())
            }
            e => {
                let offset = e.offset();
                Error::invalid(e, offset)
            }
        }
    }
}

#[cfg(not(feature = "sql"))]
mod imp {
    use std::path::PathBuf;
    use std::time::Duration;

    use pyo3::prelude::*;

    use super::{Error, Kind};

    /// The options of an export.
    pub(super) struct Export<'a> {
        pub(super) compression: &'a str,
        pub(super) tables: Vec<String>,
        pub(super) overwrite: bool,
        pub(super) threads: Option<usize>,
        pub(super) append: bool,
    }

    fn not_built(verb: &str) -> PyErr {
        Error::new(
            Kind::Unsupported,
            format!(
                "profcodec.{verb} needs the package built with its cargo feature `sql` \
                 (DataFusion and Parquet): MATURIN_PEP517_ARGS=\"--features sql\" pip install \
                 crates/python, or maturin build --features sql"
            ),
        )
        .into()
    }

    /// What a query may use, as the keywords of `sql()` give it.
    pub(super) struct Limits {
        pub(super) memory_limit: Option<usize>,
        pub(super) timeout: Option<Duration>,
        pub(super) spill_limit: Option<u64>,
    }

    pub(super) fn sql<'py>(
        _: Python<'py>,
        _: &str,
        _: &[PathBuf],
        limits: Limits,
    ) -> PyResult<Bound<'py, PyAny>> {
        let _ = (limits.memory_limit, limits.timeout, limits.spill_limit);
        Err(not_built("sql"))
    }

    pub(super) fn export(
        _: Python<'_>,
        _: &[PathBuf],
        _: Option<PathBuf>,
        export: Export<'_>,
    ) -> PyResult<Vec<(String, u64)>> {
        let _ = (
            export.compression,
            export.tables,
            export.overwrite,
            export.threads,
            export.append,
        );
        let _ = super::totals(Vec::new());
        Err(not_built("export_parquet"))
    }
}
