//! HPCToolkit databases in Python (feature `python`): `profcodec.hpctoolkit.Database`
//! (per-profile values and traces as NumPy arrays) and the columns behind
//! `profcodec.hpctoolkit.read` (a hatchet GraphFrame), for the Python package `profcodec`.
//!
//! The package registers them in its native module with [`register`], lending this module a
//! [`Host`]: how it opens files (read or mapped, their format detected, as it opens any input)
//! and which of its exceptions an error becomes. This crate maps nothing and names none of
//! the package's exceptions itself.
//!
//! The hatchet reading (`hatchet.rs`) reproduces `hatchet.GraphFrame.from_hpctoolkit_latest`
//! (hatchet's `readers/hpctoolkit_reader_latest.py`, summary mode): the tree below the first
//! main-thread entry point in meta.db's order, each context named as hatchet names it, the
//! summary profile's statistics of the chosen metrics as columns named `time (inc)`, `time`,
//! `time:min`... Rust walks the files and returns column arrays; the Python layer
//! (`profcodec/hpctoolkit.py`) builds the DataFrame and the GraphFrame from them, and Rust
//! makes hatchet's `Node` and `Frame` objects in one loop.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use numpy::IntoPyArray;
use profcodec_common::source::Member;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::FileKind;

mod hatchet;

/// What the Python package lends this module: how it opens files, and its exceptions.
pub trait Host: Send + Sync {
    /// Opens the file or folder at `path` as the package opens any input (a file read into
    /// memory or mapped, its format detected). The error is the package's exception: the path
    /// cannot be read, or holds nothing the package knows.
    fn open(&self, path: &Path) -> PyResult<Opened>;

    /// The package's exception for `error`.
    fn exception(&self, error: Error) -> PyErr;
}

/// A file or folder as the [`Host`] opened it.
pub struct Opened {
    /// Its bytes (a folder's are empty).
    pub bytes: Member,
    /// Its detected format, as the package names it ("HPCToolkit database").
    pub format: String,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("bytes", &(*self.bytes).as_ref().len())
            .field("format", &self.format)
            .finish()
    }
}

/// Why this module failed, for the [`Host`] to raise as one of its exceptions.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file of the database is damaged.
    #[error(transparent)]
    Invalid(#[from] crate::Error),
    /// The input cannot give what was asked: it is no database folder, the database has no
    /// trace.db, hatchet's reading finds no main-thread entry point.
    #[error("{0}")]
    Unsupported(String),
}

/// The host lent by [`register`].
static HOST: OnceLock<Box<dyn Host>> = OnceLock::new();

/// Adds `Database`, `hatchet_columns` and `hatchet_nodes` to `module` (the package's native
/// module), which opens files and raises exceptions through `host`. The first host registered
/// in a process is the one used.
pub fn register(module: &Bound<'_, PyModule>, host: Box<dyn Host>) -> PyResult<()> {
    let _ = HOST.set(host);
    module.add_class::<Database>()?;
    module.add_function(wrap_pyfunction!(hatchet::hatchet_columns, module)?)?;
    module.add_function(wrap_pyfunction!(hatchet::hatchet_nodes, module)?)?;
    Ok(())
}

/// A failure on its way to Python: the host's exception already made, or an error of this
/// module that the host turns into one.
#[derive(Debug)]
enum Failure {
    Raised(PyErr),
    Error(Error),
}

impl From<PyErr> for Failure {
    fn from(e: PyErr) -> Self {
        Failure::Raised(e)
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

impl From<crate::Error> for Failure {
    fn from(e: crate::Error) -> Self {
        Failure::Error(Error::Invalid(e))
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> PyErr {
        match (f, HOST.get()) {
            (Failure::Raised(e), _) => e,
            (Failure::Error(e), Some(host)) => host.exception(e),
            // Not reached: the classes and functions exist only once registered with a host.
            (Failure::Error(e), None) => PyRuntimeError::new_err(e.to_string()),
        }
    }
}

/// Opens `path` through the host.
fn open(path: &Path) -> Result<Opened, Failure> {
    match HOST.get() {
        Some(host) => Ok(host.open(path)?),
        None => Err(PyRuntimeError::new_err("profcodec.hpctoolkit has no host").into()),
    }
}

/// The bytes of a file the host opened, for [`crate::Database`].
struct Bytes(Member);

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// The meta.db of the database directory `path`. A path that is no database folder is an
/// error that says what it is (the host's, when it is nothing the package knows).
fn meta_of(path: &Path) -> Result<Bytes, Failure> {
    if let Some(meta) = member(path, FileKind::Meta)? {
        return Ok(meta);
    }
    let opened = open(path)?;
    Err(Error::Unsupported(format!(
        "{}: {} is not an HPCToolkit database directory",
        path.display(),
        opened.format
    ))
    .into())
}

/// The database's file of `kind`, opened by the host, if it has one.
fn member(path: &Path, kind: FileKind) -> Result<Option<Bytes>, Failure> {
    if !path.is_dir() {
        return Ok(None);
    }
    let file = path.join(kind.file_name());
    Ok(if file.is_file() {
        Some(Bytes(open(&file)?.bytes))
    } else {
        None
    })
}

/// Opens the database's files (meta.db required) and cross-links them.
fn open_db(path: &Path) -> Result<crate::Database<Bytes>, Failure> {
    Ok(crate::Database::from_parts(
        meta_of(path)?,
        member(path, FileKind::Profile)?,
        member(path, FileKind::Cct)?,
        member(path, FileKind::Trace)?,
    )?)
}

fn no_file(path: &Path, name: &str) -> Failure {
    Error::Unsupported(format!("{}: the database has no {name}", path.display())).into()
}

/// An HPCToolkit database directory, its files memory-mapped.
#[pyclass(name = "Database", module = "profcodec.hpctoolkit", frozen)]
struct Database {
    db: crate::Database<Bytes>,
    path: PathBuf,
}

#[pymethods]
impl Database {
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let db = py.detach(|| open_db(&path))?;
        Ok(Database { db, path })
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The title hpcprof gave the database (usually the program's name).
    #[getter]
    fn title(&self) -> PyResult<String> {
        Ok(self.db.meta().title().map_err(Failure::from)?.to_owned())
    }

    /// Checks every file and every cross-reference once (what `profcodec validate` checks).
    /// Raises profcodec.InvalidDataError at the first damage.
    fn validate(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| self.db.validate()).map_err(Failure::from)?;
        Ok(())
    }

    /// The metric ids of meta.db: a list of dicts, one per propagated metric id (`role`
    /// "propagated": thread profiles and cct.db) and per summary statistic id (`role`
    /// "summary": the summary profile), with the metric's `name`, the `scope` name and the
    /// statistic's `combine` ("sum", "min", "max"; None for propagated ids).
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let meta = self.db.meta();
        let list = PyList::empty(py);
        let scope_name = |s| meta.scope(s).map(|s| s.name).map_err(Failure::from);
        for metric in meta.metrics() {
            let metric = metric.map_err(Failure::from)?;
            for psi in meta.scope_instances(&metric) {
                let psi = psi.map_err(Failure::from)?;
                let d = PyDict::new(py);
                d.set_item("id", psi.prop_metric_id)?;
                d.set_item("role", "propagated")?;
                d.set_item("name", metric.name)?;
                d.set_item("scope", scope_name(psi.scope)?)?;
                d.set_item("combine", py.None())?;
                list.append(d)?;
            }
            for ss in meta.summaries(&metric) {
                let ss = ss.map_err(Failure::from)?;
                let d = PyDict::new(py);
                d.set_item("id", ss.stat_metric_id)?;
                d.set_item("role", "summary")?;
                d.set_item("name", metric.name)?;
                d.set_item("scope", scope_name(ss.scope)?)?;
                d.set_item("combine", ss.combine.to_string())?;
                list.append(d)?;
            }
        }
        Ok(list)
    }

    /// The profiles of profile.db: a list of dicts with `profile` (the profile index, 0 the
    /// summary), `summary` (bool) and one entry per identifier of its tuple, named as meta.db
    /// names the kind in lower case ("rank", "thread", "gpucontext"...) with the logical id
    /// (the physical one for "node" and "core", as hatchet reads them).
    fn profiles<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let profiles = self
            .db
            .profile()
            .ok_or_else(|| no_file(&self.path, "profile.db"))?;
        let kinds: Vec<String> = self
            .db
            .meta()
            .id_names()
            .map(|n| n.map(|n| n.to_lowercase()))
            .collect::<Result<_, _>>()
            .map_err(Failure::from)?;
        let list = PyList::empty(py);
        for p in profiles.profiles() {
            let p = p.map_err(Failure::from)?;
            let d = PyDict::new(py);
            d.set_item("profile", p.index)?;
            d.set_item("summary", p.is_summary())?;
            for id in p.id_tuple.iter().flat_map(|t| t.ids) {
                let kind = kinds
                    .get(usize::from(id.kind))
                    .cloned()
                    .unwrap_or_else(|| format!("kind {}", id.kind));
                let value = if matches!(kind.as_str(), "node" | "core") {
                    id.physical_id.get()
                } else {
                    u64::from(id.logical_id.get())
                };
                d.set_item(kind, value)?;
            }
            list.append(d)?;
        }
        Ok(list)
    }

    /// The values of profile.db as NumPy arrays: a dict of `ctx_id` (uint32), `metric_id`
    /// (uint16) and `value` (float64), for one profile, or for every profile with a
    /// `profile` (uint32) array too. Only the values stored (non-zero) are listed.
    #[pyo3(signature = (profile=None))]
    fn values<'py>(&self, py: Python<'py>, profile: Option<u32>) -> PyResult<Bound<'py, PyDict>> {
        let profiles = self
            .db
            .profile()
            .ok_or_else(|| no_file(&self.path, "profile.db"))?;
        if let Some(p) = profile
            && p >= profiles.profile_count()
        {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "profile {p}: profile.db has {} profiles",
                profiles.profile_count()
            )));
        }
        let columns = py.detach(|| -> Result<_, Failure> {
            let mut prof = Vec::new();
            let mut ctx = Vec::new();
            let mut metric = Vec::new();
            let mut value = Vec::new();
            let mut add = |p: &crate::read::Profile<'_>| {
                for (ctx_id, values) in p.contexts() {
                    for v in values {
                        prof.push(p.index);
                        ctx.push(ctx_id);
                        metric.push(v.metric_id());
                        value.push(v.value());
                    }
                }
            };
            match profile {
                Some(i) => add(&profiles.profile(i)?),
                None => {
                    for p in profiles.profiles() {
                        add(&p?);
                    }
                }
            }
            Ok((prof, ctx, metric, value))
        })?;
        let (prof, ctx, metric, value) = columns;
        let d = PyDict::new(py);
        if profile.is_none() {
            d.set_item("profile", prof.into_pyarray(py))?;
        }
        d.set_item("ctx_id", ctx.into_pyarray(py))?;
        d.set_item("metric_id", metric.into_pyarray(py))?;
        d.set_item("value", value.into_pyarray(py))?;
        Ok(d)
    }

    /// The traces of trace.db as NumPy arrays: a dict of `profile` (uint32, the profIndex of
    /// profile.db), `timestamp` (uint64, ns) and `ctx_id` (uint32; 0 when the thread was not
    /// running), line after line, each sorted by time. `profile` selects one line's profile.
    #[pyo3(signature = (profile=None))]
    fn traces<'py>(&self, py: Python<'py>, profile: Option<u32>) -> PyResult<Bound<'py, PyDict>> {
        let traces = self
            .db
            .trace()
            .ok_or_else(|| no_file(&self.path, "trace.db"))?;
        let (prof, time, ctx) = py.detach(|| -> Result<_, Failure> {
            let (mut prof, mut time, mut ctx) = (Vec::new(), Vec::new(), Vec::new());
            for t in traces.traces() {
                let t = t?;
                if profile.is_some_and(|p| p != t.prof_index) {
                    continue;
                }
                prof.extend(std::iter::repeat_n(t.prof_index, t.elems.len()));
                time.extend(t.elems.iter().map(|e| e.timestamp()));
                ctx.extend(t.elems.iter().map(|e| e.ctx_id()));
            }
            Ok((prof, time, ctx))
        })?;
        let d = PyDict::new(py);
        d.set_item("profile", prof.into_pyarray(py))?;
        d.set_item("timestamp", time.into_pyarray(py))?;
        d.set_item("ctx_id", ctx.into_pyarray(py))?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<profcodec.hpctoolkit.Database {:?}>",
            self.path.display().to_string()
        )
    }
}
