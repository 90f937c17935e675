//! The hatchet reading of a database: the columns of `hatchet.GraphFrame.from_hpctoolkit_latest`
//! in summary mode ([`hatchet_columns`]), and hatchet's `Node` and `Frame` objects for its rows
//! made in one loop ([`hatchet_nodes`]).

use std::collections::HashMap;
use std::path::PathBuf;

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use super::{Error, Failure, member, meta_of, no_file};
use crate::FileKind;
use crate::read::{
    Combine, ContextNode, EntryPointKind, FileIndex, FunctionIndex, LexicalType, ModuleIndex,
};

/// The columns of hatchet's summary-mode GraphFrame of the database at `path` (see
/// `profcodec.hpctoolkit.read`, which passes hatchet's options). Only meta.db and profile.db
/// are read, as hatchet reads them. Returns a dict with `ctx_id` (uint32, hatchet's `hnid`),
/// `parent` (int64 row of the parent, -1 for the root), `depth` (int64), `kind` (uint8, an
/// index into hatchet's node types), `name_id` (uint32, an index into `names`, 2^32 - 1 for a
/// context hatchet cannot name), `names`, `name` (the rows' names, None where unnamed),
/// `columns` (the DataFrame's columns in hatchet's order, "name" among them), `metrics`
/// (column name to float64 array, NaN where the summary profile has no value) and
/// `time_metric` (hatchet's default metric, "time (inc)", or None).
#[pyfunction]
#[pyo3(signature = (path, *, metric_names, metric_scopes, summary_metrics, label_function_nodes, max_depth, min_percentage_of_application_time, directory_mapping, exclude))]
#[allow(clippy::too_many_arguments)] // hatchet's keyword arguments
pub(super) fn hatchet_columns<'py>(
    py: Python<'py>,
    path: PathBuf,
    metric_names: Vec<String>,
    metric_scopes: Vec<String>,
    summary_metrics: Vec<String>,
    label_function_nodes: bool,
    max_depth: Option<i64>,
    min_percentage_of_application_time: Option<f64>,
    directory_mapping: Vec<(String, String)>,
    exclude: Vec<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut options = HatchetOptions {
        metric_names,
        metric_scopes,
        summary_metrics,
        label_function_nodes,
        max_depth,
        min_percentage: min_percentage_of_application_time,
        directory_mapping,
        ..HatchetOptions::default()
    };
    for e in &exclude {
        options.exclude(e)?;
    }
    let tree = py.detach(|| -> Result<_, Failure> {
        use crate::{MetaDb, ProfileDb};
        let meta = meta_of(&path)?;
        let profile =
            member(&path, FileKind::Profile)?.ok_or_else(|| no_file(&path, "profile.db"))?;
        let meta = MetaDb::parse(meta.as_ref())?;
        // Before anything reads meta.db's arrays: aliased ones would make the walk quadratic.
        meta.check_overlaps()?;
        Ok(hatchet_tree(
            meta,
            ProfileDb::parse(profile.as_ref())?,
            &path,
            &options,
        )?)
    })?;
    tree.into_py_dict(py)
}

/// A NumPy array of Python objects.
type NodeArray = PyArray1<Py<PyAny>>;

/// Builds hatchet's `Frame` and `Node` objects for the rows of [`hatchet_columns`]
/// (`kind` indexes hatchet's node types, `name_id` the unique `names`, `u32::MAX` for none) in
/// one loop and links them (`parents`, `children`). Returns the roots (a list) and the nodes in
/// row order (a NumPy object array, the DataFrame's index as it is).
///
/// With `fast`, each object is made by `object.__new__` and given the attributes hatchet's
/// constructors would give it, one by one (the caller checks first that a `Frame` and a `Node`
/// made by hatchet's constructors have exactly those attributes); otherwise through the
/// constructors.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the columns of one table
pub(super) fn hatchet_nodes<'py>(
    py: Python<'py>,
    frame_class: Bound<'py, PyAny>,
    node_class: Bound<'py, PyAny>,
    ctx_id: PyReadonlyArray1<'py, u32>,
    parent: PyReadonlyArray1<'py, i64>,
    depth: PyReadonlyArray1<'py, i64>,
    kind: PyReadonlyArray1<'py, u8>,
    name_id: PyReadonlyArray1<'py, u32>,
    names: Vec<Bound<'py, PyAny>>,
    fast: bool,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, NodeArray>)> {
    let (ctx_id, parent, depth) = (ctx_id.as_slice()?, parent.as_slice()?, depth.as_slice()?);
    let (kind, name_id) = (kind.as_slice()?, name_id.as_slice()?);
    let n = ctx_id.len();
    if [parent.len(), depth.len(), kind.len(), name_id.len()] != [n; 4] {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "hatchet_nodes: the columns differ in length",
        ));
    }
    let types: Vec<_> = TYPES
        .iter()
        .map(|t| pyo3::types::PyString::intern(py, t))
        .collect();
    let new = py
        .import("builtins")?
        .getattr("object")?
        .getattr("__new__")?;
    // The arguments of `object.__new__`, made once.
    let (frame_new, node_new) = (
        PyTuple::new(py, [&frame_class])?,
        PyTuple::new(py, [&node_class])?,
    );
    let k = |s: &str| pyo3::types::PyString::intern(py, s);
    let (k_type, k_name, k_attrs, k_repr) = (k("type"), k("name"), k("attrs"), k("_tuple_repr"));
    let (k_frame, k_depth, k_nid, k_parents, k_children) = (
        k("frame"),
        k("_depth"),
        k("_hatchet_nid"),
        k("parents"),
        k("children"),
    );
    let none = py.None().into_bound(py);
    let mut nodes: Vec<Bound<'py, PyAny>> = Vec::with_capacity(n);
    let mut children: Vec<Bound<'py, PyList>> = Vec::with_capacity(if fast { n } else { 0 });
    let roots = PyList::empty(py);
    for i in 0..n {
        let attrs = PyDict::new(py);
        let node_type = types
            .get(usize::from(kind[i]))
            .ok_or_else(|| pyo3::exceptions::PyValueError::new_err("hatchet_nodes: bad kind"))?;
        attrs.set_item(&k_type, node_type)?;
        if let Some(name) = names.get(name_id[i] as usize) {
            attrs.set_item(&k_name, name)?;
        }
        let parent_row = usize::try_from(parent[i]).ok().filter(|&p| p < i);
        let node = if fast {
            // Attribute by attribute, as the constructors set them: the objects keep their
            // attributes in the compact per-instance values CPython gives constructed objects
            // (a `__dict__` assigned whole would cost a dictionary per object).
            let frame = new.call1(&frame_new)?;
            frame.setattr(&k_attrs, attrs)?;
            frame.setattr(&k_repr, &none)?;
            let node = new.call1(&node_new)?;
            let parents = match parent_row {
                Some(p) => PyList::new(py, [&nodes[p]])?,
                None => PyList::empty(py),
            };
            let own_children = PyList::empty(py);
            node.setattr(&k_frame, frame)?;
            node.setattr(&k_depth, depth[i])?;
            node.setattr(&k_nid, ctx_id[i])?;
            node.setattr(&k_parents, parents)?;
            node.setattr(&k_children, &own_children)?;
            if let Some(p) = parent_row {
                children[p].append(&node)?;
            }
            children.push(own_children);
            node
        } else {
            let frame = frame_class.call1((attrs,))?;
            let kwargs = PyDict::new(py);
            let parent_node = parent_row.map(|p| &nodes[p]);
            kwargs.set_item("parent", parent_node)?;
            kwargs.set_item("hnid", ctx_id[i])?;
            kwargs.set_item("depth", depth[i])?;
            let node = node_class.call((frame,), Some(&kwargs))?;
            if let Some(p) = parent_node {
                p.call_method1("add_child", (&node,))?;
            }
            node
        };
        if parent_row.is_none() {
            roots.append(&node)?;
        }
        nodes.push(node);
    }
    let nodes: Vec<Py<PyAny>> = nodes.into_iter().map(Bound::unbind).collect();
    Ok((roots, PyArray1::from_vec(py, nodes)))
}

/// `from_hpctoolkit_latest`'s options, summary mode.
#[derive(Debug, Default)]
struct HatchetOptions {
    metric_names: Vec<String>,
    metric_scopes: Vec<String>,
    summary_metrics: Vec<String>,
    label_function_nodes: bool,
    max_depth: Option<i64>,
    min_percentage: Option<f64>,
    directory_mapping: Vec<(String, String)>,
    exclude_mpi_function_details: bool,
    exclude_openmp_function_details: bool,
    exclude_cuda_function_details: bool,
    exclude_system_libraries_source_code: bool,
    exclude_function_call_lines: bool,
    exclude_no_source_code_instructions: bool,
    exclude_instructions: bool,
    exclude_non_function_nodes: bool,
}

impl HatchetOptions {
    /// Sets `exclude_<what>`.
    fn exclude(&mut self, what: &str) -> PyResult<()> {
        let flag = match what {
            "mpi_function_details" => &mut self.exclude_mpi_function_details,
            "openmp_function_details" => &mut self.exclude_openmp_function_details,
            "cuda_function_details" => &mut self.exclude_cuda_function_details,
            "system_libraries_source_code" => &mut self.exclude_system_libraries_source_code,
            "function_call_lines" => &mut self.exclude_function_call_lines,
            "no_source_code_instructions" => &mut self.exclude_no_source_code_instructions,
            "instructions" => &mut self.exclude_instructions,
            "non_function_nodes" => &mut self.exclude_non_function_nodes,
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown exclusion {what:?}"
                )));
            }
        };
        *flag = true;
        Ok(())
    }
}

/// Node types, as hatchet names them (`NODE_TYPE_MAPPING`, and "entry" for the root).
const TYPES: [&str; 5] = ["function", "loop", "line", "instruction", "entry"];
const ENTRY: u8 = 4;

/// The rows of hatchet's GraphFrame, in hatchet's order (pre-order, children in meta.db's
/// order), and its metric columns.
#[derive(Debug, Default)]
struct HatchetTree {
    ctx_id: Vec<u32>,
    parent: Vec<i64>,
    depth: Vec<i64>,
    kind: Vec<u8>,
    /// Index into `names`; `u32::MAX` for a context hatchet cannot name.
    name: Vec<u32>,
    names: Vec<String>,
    /// The DataFrame's columns in hatchet's order ("name" among them).
    columns: Vec<String>,
    /// The metric columns, by name.
    metrics: Vec<(String, Vec<f64>)>,
    time_metric: Option<String>,
}

impl HatchetTree {
    fn into_py_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let d = PyDict::new(py);
        let names: Vec<Bound<'_, PyAny>> = self
            .names
            .iter()
            .map(|s| pyo3::types::PyString::new(py, s).into_any())
            .collect();
        let none = py.None().into_bound(py);
        let row_names = PyList::new(
            py,
            self.name
                .iter()
                .map(|&i| names.get(i as usize).unwrap_or(&none)),
        )?;
        d.set_item("ctx_id", PyArray1::from_vec(py, self.ctx_id))?;
        d.set_item("parent", PyArray1::from_vec(py, self.parent))?;
        d.set_item("depth", PyArray1::from_vec(py, self.depth))?;
        d.set_item("kind", PyArray1::from_vec(py, self.kind))?;
        d.set_item("name_id", PyArray1::from_vec(py, self.name))?;
        d.set_item("names", PyList::new(py, names)?)?;
        d.set_item("name", row_names)?;
        d.set_item("columns", self.columns)?;
        let metrics = PyDict::new(py);
        for (name, values) in self.metrics {
            metrics.set_item(name, PyArray1::from_vec(py, values))?;
        }
        d.set_item("metrics", metrics)?;
        d.set_item("time_metric", self.time_metric)?;
        Ok(d)
    }
}

/// hatchet's function name: an MPI routine cut after its name (`MPI_Send` of
/// `MPI_Send.part.0`), then everything from the first `" ["`, `"."`, `"@"`, `"("` or `"<"`
/// that does not start the name cut off, in that order.
fn hatchet_function_name(raw: &str) -> String {
    let mut name = raw;
    let mpi = name
        .strip_prefix("PMPI_")
        .map(|rest| (name.len() - rest.len(), rest))
        .or_else(|| name.strip_prefix("MPI_").map(|rest| (4, rest)));
    // `re.fullmatch("P?MPI_.+")`: at least one character after the prefix, none a newline.
    if let Some((prefix, rest)) = mpi
        && !rest.is_empty()
        && !rest.contains('\n')
    {
        let word = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphabetic() || *b == b'_')
            .count();
        // hatchet fails on `MPI_` followed by no letter; the name is then kept whole.
        if word > 0 {
            name = &name[..prefix + word];
        }
    }
    for cut in [" [", ".", "@", "(", "<"] {
        if let Some(at) = name.find(cut)
            && at > 0
        {
            name = &name[..at];
        }
    }
    name.to_owned()
}

/// A metric's name as hatchet matches it against `metric_names`: lower case, without its
/// `(unit)`, CPUTIME, REALTIME and CYCLES called "time".
fn hatchet_metric_name(raw: &str) -> String {
    crate::read::hatchet_metric_base(raw)
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The names of the nodes, each made once: per function, per source position, per
/// instruction (the Python strings are made from these, once each).
#[derive(Default)]
struct Names {
    names: Vec<String>,
}

impl Names {
    fn add(&mut self, name: String) -> u32 {
        self.names.push(name);
        self.names.len() as u32 - 1
    }
}

/// Appends `n` in decimal (what Python's f-string makes of an int), without the formatting
/// machinery: names are made once per context of a database, and this is most of their cost.
fn push_decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// A function node as hatchet makes it: its name (labelled) and whether its subtree is kept.
#[derive(Clone, Copy)]
struct FunctionNode {
    name: u32,
    include_subtree: bool,
}

/// A loop or line node's name, and whether its file is a system library's source.
#[derive(Clone, Copy)]
struct SourceNode {
    name: u32,
    system_source: bool,
}

/// The names of a walk, each computed once per function, source position and instruction;
/// files and modules decoded once.
struct Lookup<'o, 'a> {
    meta: crate::MetaDb<'a>,
    options: &'o HatchetOptions,
    names: Names,
    functions: FastMap<FunctionIndex, FunctionNode>,
    sources: FastMap<(u8, FileIndex, u32), SourceNode>,
    instructions: FastMap<(ModuleIndex, u64), u32>,
    files: FastMap<FileIndex, String>,
    modules: FastMap<ModuleIndex, &'a str>,
}

impl<'a> Lookup<'_, 'a> {
    /// A source file's path as hatchet shows it: a leading `src` cut off (hpcprof's copies
    /// live in `src/`), then the first `directory_mapping` prefix that matches replaced.
    fn file(&mut self, index: FileIndex) -> Result<&str, Error> {
        if !self.files.contains_key(&index) {
            let raw = self.meta.file(index)?.path;
            let mut path = raw.strip_prefix("src").unwrap_or(raw).to_owned();
            for (from, to) in &self.options.directory_mapping {
                let mut prefix = from.clone();
                if !prefix.starts_with('/') {
                    prefix.insert(0, '/');
                }
                if !prefix.ends_with('/') {
                    prefix.push('/');
                }
                if let Some(rest) = path.strip_prefix(&prefix) {
                    path = format!("{to}/{rest}");
                    break;
                }
            }
            self.files.insert(index, path);
        }
        Ok(&self.files[&index])
    }

    fn module(&mut self, index: ModuleIndex) -> Result<&'a str, Error> {
        if let Some(p) = self.modules.get(&index) {
            return Ok(p);
        }
        let path = self.meta.module(index)?.path;
        self.modules.insert(index, path);
        Ok(path)
    }

    /// A function context's node: hatchet's name of the function (`function: ` before it
    /// when labelled, `<omp> ` when its OpenMP details are excluded) and whether the MPI,
    /// OpenMP or CUDA exclusions drop its subtree.
    fn function(&mut self, index: FunctionIndex) -> Result<FunctionNode, Error> {
        if let Some(f) = self.functions.get(&index) {
            return Ok(*f);
        }
        let f = self.meta.function(index)?;
        let options = self.options;
        let mut name = hatchet_function_name(f.name.unwrap_or(""));
        let mut include_subtree = !(options.exclude_mpi_function_details
            && (name.starts_with("MPI_") || name.starts_with("PMPI_")));
        if let Some(file) = f.file {
            let file = self.file(file)?;
            let openmp = options.exclude_openmp_function_details && file.contains("/openmp/");
            let cuda = options.exclude_cuda_function_details
                && CUDA_PATHS.iter().any(|p| file.contains(p));
            if openmp {
                name = format!("<omp> {name}");
            }
            include_subtree &= !openmp && !cuda;
        }
        if options.label_function_nodes {
            name = format!("function: {name}");
        }
        let node = FunctionNode {
            name: self.names.add(name),
            include_subtree,
        };
        self.functions.insert(index, node);
        Ok(node)
    }

    /// A loop or line context's name, `"<type> <file>:<line>"`.
    fn source(&mut self, kind: u8, file: FileIndex, line: u32) -> Result<SourceNode, Error> {
        if let Some(s) = self.sources.get(&(kind, file, line)) {
            return Ok(*s);
        }
        let path = self.file(file)?;
        let system_source = ["/usr/src/debug", "/usr/tce"]
            .iter()
            .any(|p| path.starts_with(p));
        let kind_name = TYPES[usize::from(kind)];
        let mut name = String::with_capacity(kind_name.len() + path.len() + 12);
        name.push_str(kind_name);
        name.push(' ');
        name.push_str(path);
        name.push(':');
        push_decimal(&mut name, line.into());
        let node = SourceNode {
            name: self.names.add(name),
            system_source,
        };
        self.sources.insert((kind, file, line), node);
        Ok(node)
    }

    /// An instruction context's name, `"<module path>:<offset>"`.
    fn instruction(&mut self, module: ModuleIndex, offset: u64) -> Result<u32, Error> {
        if let Some(&name) = self.instructions.get(&(module, offset)) {
            return Ok(name);
        }
        let path = self.module(module)?;
        let mut name = String::with_capacity(path.len() + 21);
        name.push_str(path);
        name.push(':');
        push_decimal(&mut name, offset);
        let name = self.names.add(name);
        self.instructions.insert((module, offset), name);
        Ok(name)
    }
}

/// Which DataFrame column each summary statistic id fills, and the column names.
struct MetricColumns {
    by_stat_id: FastMap<u16, usize>,
    names: Vec<String>,
    /// The column of the execution-scope sum of time ("time (inc)"), when stored.
    time: Option<usize>,
    /// hatchet's default metric: "time (inc)" when any statistic would be named so.
    time_metric: Option<String>,
}

/// hatchet's `_read_metric_descriptions` in summary mode.
fn metric_columns(
    meta: &crate::MetaDb<'_>,
    options: &HatchetOptions,
) -> Result<MetricColumns, Error> {
    let mut columns = MetricColumns {
        by_stat_id: FastMap::default(),
        names: Vec::new(),
        time: None,
        time_metric: None,
    };
    for metric in meta.metrics() {
        let metric = metric?;
        let name = hatchet_metric_name(metric.name);
        if !options.metric_names.contains(&name) {
            continue;
        }
        for ss in meta.summaries(&metric) {
            let ss = ss?;
            let summary = match ss.combine {
                Combine::SUM => "sum",
                Combine::MIN => "min",
                Combine::MAX => "max",
                _ => continue,
            };
            let store = options.summary_metrics.iter().any(|s| s == summary);
            // min_percentage_of_application_time reads the sum even when it is not shown.
            let needed = store || (options.min_percentage.is_some() && summary == "sum");
            if !needed {
                continue;
            }
            let scope = match meta.scope(ss.scope)?.name.to_lowercase().trim() {
                "execution" => "i",
                "function" => "e",
                "point" => "p",
                "lex_aware" => "c",
                _ => continue,
            };
            if !options.metric_scopes.iter().any(|s| s == scope) {
                continue;
            }
            let base = if summary == "sum" {
                name.clone()
            } else {
                format!("{name}:{summary}")
            };
            let full = if scope == "i" {
                format!("{base} (inc)")
            } else {
                base
            };
            if full == "time (inc)" {
                columns.time_metric = Some(full.clone());
            }
            if store {
                let col = match columns.names.iter().position(|n| *n == full) {
                    Some(c) => c,
                    None => {
                        columns.names.push(full.clone());
                        columns.names.len() - 1
                    }
                };
                if full == "time (inc)" {
                    columns.time = Some(col);
                }
                columns.by_stat_id.insert(ss.stat_metric_id, col);
            }
        }
    }
    Ok(columns)
}

/// hatchet's summary-mode reading of `db`: the rows below the first main-thread entry point
/// and the metric columns of the summary profile.
fn hatchet_tree(
    meta: crate::MetaDb<'_>,
    profiles: crate::ProfileDb<'_>,
    path: &std::path::Path,
    options: &HatchetOptions,
) -> Result<HatchetTree, Error> {
    let summary = profiles.profile(0)?;
    let metrics = metric_columns(&meta, options)?;
    // The value hatchet's summary dict holds for a context and column: the last stored
    // statistic that maps to it.
    let column_value = |ctx: u32, col: usize| {
        summary
            .metrics_of(ctx)
            .iter()
            .rev()
            .find(|v| metrics.by_stat_id.get(&v.metric_id()) == Some(&col))
            .map(|v| v.value())
    };
    let mut lookup = Lookup {
        meta,
        options,
        names: Names::default(),
        functions: FastMap::default(),
        sources: FastMap::default(),
        instructions: FastMap::default(),
        files: FastMap::default(),
        modules: FastMap::default(),
    };
    let mut tree = HatchetTree::default();
    // hpcprof gives nearly every context a value in the summary profile: a fair capacity.
    tree.reserve(summary.ctx_indices.len());
    let entry_name = lookup.names.add("entry".to_owned());
    let mut total_time = None;
    // Attach points by meta.db depth: (depth, row the children hang from, its hatchet depth).
    let mut attach: Vec<(u32, i64, i64)> = Vec::new();
    let mut skip_below: Option<u32> = None;
    let mut in_main = false;
    for node in meta.walk() {
        let node = node?;
        let c = match node.node {
            ContextNode::EntryPoint(e) => {
                if in_main {
                    break;
                }
                if e.kind == EntryPointKind::MAIN_THREAD {
                    in_main = true;
                    if let Some(col) = metrics.time {
                        total_time = column_value(e.ctx_id, col);
                    }
                    tree.push_row(e.ctx_id, -1, 0, ENTRY, entry_name);
                    attach = vec![(0, 0, 0)];
                    skip_below = None;
                }
                continue;
            }
            ContextNode::Context(c) => c,
        };
        if !in_main {
            continue;
        }
        if let Some(s) = skip_below {
            if node.depth > s {
                continue;
            }
            skip_below = None;
        }
        while attach.last().is_some_and(|a| a.0 >= node.depth) {
            attach.pop();
        }
        let Some(&(_, parent_row, parent_depth)) = attach.last() else {
            continue;
        };
        if let Some(min) = options.min_percentage {
            let Some(time_col) = metrics.time else {
                return Err(Error::Unsupported(
                    "min_percentage_of_application_time needs the time (inc) column: \
                     metric_names with \"time\", metric_scopes with \"i\" and \
                     summary_metrics with \"sum\""
                        .to_owned(),
                ));
            };
            let total = total_time.unwrap_or(f64::NAN);
            let keep = column_value(c.ctx_id, time_col).is_some_and(|t| t / total * 100.0 >= min);
            if !keep {
                skip_below = Some(node.depth);
                continue;
            }
        }
        let kind = match c.lexical_type {
            LexicalType::FUNCTION => 0u8,
            LexicalType::LOOP => 1,
            LexicalType::LINE => 2,
            LexicalType::INSTRUCTION => 3,
            // hatchet knows no other type (it fails on one).
            _ => {
                skip_below = Some(node.depth);
                continue;
            }
        };
        let mut include_node = !(options.exclude_non_function_nodes && kind != 0);
        let mut include_subtree = true;
        let mut name = None;
        if include_node && !c.flex.is_empty() {
            match kind {
                0 => {
                    if let Some(f) = c.function {
                        let f = lookup.function(f)?;
                        include_subtree = f.include_subtree;
                        name = Some(f.name);
                    }
                }
                3 => {
                    if let (Some(m), Some(offset)) = (c.module, c.module_offset) {
                        name = Some(lookup.instruction(m, offset)?);
                    }
                    if options.exclude_instructions {
                        include_node = false;
                    }
                }
                _ => {
                    if let (Some(f), Some(line)) = (c.file, c.line) {
                        let source = lookup.source(kind, f, line)?;
                        if (options.exclude_system_libraries_source_code && source.system_source)
                            || (options.exclude_no_source_code_instructions && line == 0)
                            || (options.exclude_function_call_lines
                                && kind == 2
                                && !c.children.is_empty())
                        {
                            include_node = false;
                        }
                        name = Some(source.name);
                    }
                }
            }
        }
        let (row, depth) = if include_node {
            let name = name.unwrap_or(u32::MAX);
            let row = tree.push_row(c.ctx_id, parent_row, parent_depth + 1, kind, name);
            (row, parent_depth + 1)
        } else {
            (parent_row, parent_depth)
        };
        if include_subtree && options.max_depth.is_none_or(|m| depth < m) {
            attach.push((node.depth, row, depth));
        } else {
            skip_below = Some(node.depth);
        }
    }
    if tree.ctx_id.is_empty() {
        return Err(Error::Unsupported(format!(
            "{}: hatchet reads the tree of the main-thread entry point, and meta.db has none",
            path.display()
        )));
    }
    tree.names = lookup.names.names;
    tree.fill_columns(&summary, &metrics);
    tree.time_metric = metrics.time_metric;
    Ok(tree)
}

/// The source paths whose functions `exclude_cuda_function_details` collapses.
const CUDA_PATHS: [&str; 8] = [
    "libcuda.so",
    "libcudart.so",
    "libcusparse.so",
    "libcublas.so",
    "libcurand.so",
    "libcusolver.so",
    "libcufft.so",
    "/cuda/",
];

impl HatchetTree {
    fn reserve(&mut self, rows: usize) {
        self.ctx_id.reserve(rows);
        self.parent.reserve(rows);
        self.depth.reserve(rows);
        self.kind.reserve(rows);
        self.name.reserve(rows);
    }

    fn push_row(&mut self, ctx_id: u32, parent: i64, depth: i64, kind: u8, name: u32) -> i64 {
        self.ctx_id.push(ctx_id);
        self.parent.push(parent);
        self.depth.push(depth);
        self.kind.push(kind);
        self.name.push(name);
        self.ctx_id.len() as i64 - 1
    }

    /// The metric columns from the summary profile, and the columns' order: pandas makes a
    /// DataFrame's columns from its records in order of first appearance, and each of
    /// hatchet's records lists its metrics in the order of the stored values, then `name`.
    fn fill_columns(&mut self, summary: &crate::read::Profile<'_>, metrics: &MetricColumns) {
        let n = self.ctx_id.len();
        let mut values = vec![vec![f64::NAN; n]; metrics.names.len()];
        let mut seen = vec![false; metrics.names.len()];
        let mut order = Vec::new();
        for (row, &ctx) in self.ctx_id.iter().enumerate() {
            for v in summary.metrics_of(ctx) {
                if let Some(&col) = metrics.by_stat_id.get(&v.metric_id()) {
                    values[col][row] = v.value();
                    if !seen[col] {
                        seen[col] = true;
                        order.push(metrics.names[col].clone());
                    }
                }
            }
            if row == 0 {
                order.push("name".to_owned());
            }
        }
        self.columns = order;
        self.metrics = metrics
            .names
            .iter()
            .cloned()
            .zip(values)
            .zip(seen)
            .filter(|(_, seen)| *seen)
            .map(|(c, _)| c)
            .collect();
    }
}
