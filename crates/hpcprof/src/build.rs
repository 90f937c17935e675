//! Decoding each thread's files on the worker pool, unifying their trees in input order, and
//! laying the result out as a database.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use profcodec_hpcrun::{Measurement, MetricValue, Trace};
use profcodec_hpctoolkit::model::{
    CodePoint, Context, ContextHandle, Database, EntryPoint, EntryPointHandle, EntryPointKind,
    FileHandle, Function, FunctionHandle, Identifier, LexicalType, LoadModule, Meta, Metric,
    MetricValue as DbValue, ModuleHandle, Parent, Profile, ProfileValues, PropagationScope,
    Relation, ScopeHandle, ScopeInstance, ScopeType, SourceFile, SourceLocation, Summary,
    Trace as DbTrace, TraceElement, Traces,
};
use rayon::prelude::*;

use crate::structure;
use crate::symbols::{self, ModuleSymbols, Symbol};
use crate::{Input, Options, ProfError};
use profcodec_hpcrun::structs::{ModuleStructure, ScopeKind};

const fn placeholder(code: &[u8; 8]) -> u64 {
    u64::from_be_bytes(*code)
}

/// hpcrun's placeholder load module (`HPCRUN_PLACEHOLDER_LM`) and the codes hpcprof reads.
const PLACEHOLDER_LM: u16 = 0;
const ROOT_PRIMARY: u64 = placeholder(b"^Primary");
const ROOT_PARTIAL: u64 = placeholder(b"^Partial");
const UNNORMALIZED_IP: u64 = placeholder(b"*Unnorm ");
const NO_ACTIVITY: u64 = placeholder(b"NoActvty");
const FENCE_MAIN: u64 = placeholder(b"| Main  ");
const FENCE_THREAD: u64 = placeholder(b"| Thread");

/// The propagation scopes, in the order hpcprof lists them, with the index of each metric's
/// sub-metric of that scope.
const SCOPES: [(&str, ScopeType, u8); 4] = [
    ("point", ScopeType::POINT, 255),
    ("function", ScopeType::TRANSITIVE, 0),
    ("lex_aware", ScopeType::CUSTOM, 255),
    ("execution", ScopeType::EXECUTION, 255),
];
const FUNCTION: usize = 1;
/// The cell of the function value without inner loops, written as `lex_aware`.
const NO_LOOPS: usize = 2;
const EXECUTION: usize = 3;

/// What a node of a calling-context tree is, below its parent.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// An entry point (a thread fence).
    Entry(u16),
    /// An address hpcprof cannot place: `(unknown)`, called from its parent.
    Unknown,
    /// An instruction: load module (by path) and offset.
    Point(Rel, u32, u64),
    /// A function (an index into the unified functions): the one the module's own symbols (the
    /// vdso's, the kernel's) or its structure place an instruction in.
    Function(Rel, u32),
    /// A loop of the structure: module, entry, file (an index into the unified files), line.
    Loop(u32, u64, u32, u32),
    /// A source line of the structure: file and line.
    Line(u32, u32),
}

/// How a context relates to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Rel {
    /// Called from it.
    Call,
    /// Inlined into it.
    Inlined,
    /// Lexically inside it.
    Enclosure,
}

impl Key {
    /// A call or inlined call: function-scope values stop below it.
    fn is_call(&self) -> bool {
        matches!(
            self,
            Key::Entry(_)
                | Key::Unknown
                | Key::Point(Rel::Call | Rel::Inlined, ..)
                | Key::Function(Rel::Call | Rel::Inlined, _)
        )
    }

    /// An instruction nested in its line: hpcprof keeps its values but not its context in
    /// meta.db, where its children hang from its parent.
    fn elided(&self) -> bool {
        matches!(self, Key::Point(Rel::Enclosure, ..))
    }
}

/// A metric as hpcrun describes it, unified across files by name.
#[derive(Debug, Clone)]
struct MetricInfo {
    name: String,
}

/// One thread's files, decoded and turned into local tree nodes.
#[derive(Debug, Default)]
struct Decoded {
    program: Option<String>,
    id_tuple: Vec<profcodec_hpcrun::IdTupleEntry>,
    metrics: Vec<Option<(MetricInfo, f64, bool)>>,
    modules: Vec<String>,
    /// Local nodes: parent (`None`: the global context) and key with a local module index.
    nodes: Vec<(Option<u32>, Key)>,
    /// Point values: local node (`None`: the global context), local metric, value.
    values: Vec<(Option<u32>, u16, f64)>,
    /// Trace: time and local node (`None`: the global context).
    trace: Option<Vec<(u64, Option<u32>)>>,
}

/// Where an hpcrun node id went.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Global,
    Node(u32),
}

impl Slot {
    fn node(self) -> Option<u32> {
        match self {
            Slot::Global => None,
            Slot::Node(n) => Some(n),
        }
    }
}

/// The most entries of a thread's identifier tuple (hpcrun's hold rank, thread, node, core,
/// GPU context and stream: a handful).
const MAX_ID_TUPLE: usize = 64;

fn unsupported(path: &Path, what: impl Into<String>) -> ProfError {
    ProfError::Unsupported {
        path: path.to_path_buf(),
        what: what.into(),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, ProfError> {
    std::fs::read(path).map_err(|source| ProfError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn decode(input: &Input, options: &Options) -> Result<Decoded, ProfError> {
    let path = input.profile.as_path();
    let bytes = read(path)?;
    let m = Measurement::parse(&bytes).map_err(|source| ProfError::Decode {
        path: path.to_path_buf(),
        source,
    })?;
    drop(bytes);
    let mut out = Decoded {
        program: m
            .header_value("program-name")
            .map(|t| t.to_string_lossy().into_owned()),
        ..Decoded::default()
    };
    let Some(epoch) = m.epochs.first() else {
        return Err(unsupported(path, "the profile holds no epoch"));
    };
    if m.epochs.len() > 1 {
        return Err(unsupported(
            path,
            "profiles of more than one epoch (hpcrun before 2020) are not read by hpcprof",
        ));
    }
    let Some(sparse) = &m.sparse else {
        return Err(unsupported(
            path,
            "only HPCRUN-profile____04.00b files hold what hpcprof reads (sparse values and an identifier tuple)",
        ));
    };
    if sparse.id_tuple.len() > MAX_ID_TUPLE {
        // The logical indexes are numbered per prefix of the tuple: a tuple as long as the
        // input allows would copy prefixes in the square of its length.
        return Err(unsupported(
            path,
            format!(
                "an identifier tuple of {} entries (hpcrun writes a few; more than {MAX_ID_TUPLE} are refused)",
                sparse.id_tuple.len()
            ),
        ));
    }
    out.id_tuple = sparse.id_tuple.clone();
    for desc in &epoch.metrics {
        let stored = desc.formula.as_bytes().is_empty();
        let is_int = matches!(desc.value_format(), profcodec_hpcrun::ValueFormat::Int);
        out.metrics.push(stored.then(|| {
            (
                MetricInfo {
                    name: desc.name.to_string_lossy().into_owned(),
                },
                desc.period as f64,
                is_int,
            )
        }));
    }
    let mut module_of: HashMap<u16, u32> = HashMap::new();
    for lm in &epoch.loadmap {
        // gpubins and vdso are named relative to the measurement folder; hpcprof names the
        // module as hpcrun recorded it.
        let full = lm.name.to_string_lossy().into_owned();
        module_of.insert(lm.id, out.modules.len() as u32);
        out.modules.push(full);
    }
    let mut slots: HashMap<i32, Slot> = HashMap::with_capacity(epoch.cct.len());
    // `(unknown)` below the global context, made once when needed.
    let mut unknown_top: Option<u32> = None;
    for node in &epoch.cct {
        let bad = |what: String| unsupported(path, format!("CCT node {}: {what}", node.id));
        if node.parent == 0 || node.parent == node.id {
            if node.lm_id == PLACEHOLDER_LM && node.ip == ROOT_PRIMARY {
                slots.insert(node.id, Slot::Global);
                continue;
            }
            return Err(bad(format!(
                "a root that is not hpcrun's primary root (load module {}, address {:#x}); \
                 GPU range trees are not placed yet",
                node.lm_id, node.ip
            )));
        }
        let Some(&parent) = slots.get(&node.parent) else {
            return Err(bad(format!(
                "its parent {} does not come before it",
                node.parent
            )));
        };
        let mut parent = parent;
        let key = if node.lm_id == PLACEHOLDER_LM {
            match node.ip {
                NO_ACTIVITY if matches!(parent, Slot::Global) => {
                    slots.insert(node.id, Slot::Global);
                    continue;
                }
                FENCE_MAIN => Key::Entry(EntryPointKind::MAIN_THREAD.0),
                FENCE_THREAD => Key::Entry(EntryPointKind::APPLICATION_THREAD.0),
                ROOT_PARTIAL | UNNORMALIZED_IP => Key::Unknown,
                code => {
                    let text = String::from_utf8_lossy(&code.to_be_bytes()).into_owned();
                    return Err(bad(format!(
                        "placeholder {text:?} is not placed yet (only the roots and thread fences are)"
                    )));
                }
            }
        } else {
            let Some(&module) = module_of.get(&node.lm_id) else {
                return Err(bad(format!(
                    "load module {} is not in the load map",
                    node.lm_id
                )));
            };
            if !node.is_unwound() {
                return Err(bad(
                    "nodes that need reconstruction (not unwound) are not placed yet".to_owned(),
                ));
            }
            if matches!(parent, Slot::Global) {
                // An instruction cannot be a top-level context: hpcprof puts it under
                // `(unknown)`, a partial call path.
                let top = *unknown_top.get_or_insert_with(|| {
                    out.nodes.push((None, Key::Unknown));
                    out.nodes.len() as u32 - 1
                });
                parent = Slot::Node(top);
            }
            Key::Point(Rel::Call, module, node.ip)
        };
        out.nodes.push((parent.node(), key));
        slots.insert(node.id, Slot::Node(out.nodes.len() as u32 - 1));
    }
    for (i, c) in sparse.contexts.iter().enumerate() {
        let Some(&slot) = slots.get(&(c.ctx as i32)) else {
            return Err(unsupported(
                path,
                format!("values for CCT node {} that is not in the tree", c.ctx),
            ));
        };
        for v in sparse.values_of(i) {
            let Some(Some((_, factor, is_int))) = out.metrics.get(usize::from(v.metric)) else {
                continue;
            };
            let format = if *is_int {
                profcodec_hpcrun::ValueFormat::Int
            } else {
                profcodec_hpcrun::ValueFormat::Real
            };
            let value = MetricValue::from_bits(v.value, format).as_f64() * factor;
            out.values.push((slot.node(), v.metric, value));
        }
    }
    if let (Some(trace_path), false) = (&input.trace, options.no_traces) {
        let bytes = read(trace_path)?;
        let trace = Trace::parse(&bytes).map_err(|source| ProfError::Decode {
            path: trace_path.clone(),
            source,
        })?;
        if !trace.is_data_centric() {
            let line = trace
                .records
                .iter()
                .filter_map(|r| slots.get(&(r.ctx as i32)).map(|slot| (r.time, slot.node())))
                .collect();
            out.trace = Some(line);
        }
    }
    Ok(out)
}

/// The unified tree: node 0 is the global context.
#[derive(Debug, Default)]
struct Tree {
    parent: Vec<u32>,
    key: Vec<Key>,
    index: HashMap<(u32, Key), u32>,
}

impl Tree {
    fn new() -> Self {
        Tree {
            parent: vec![0],
            key: vec![Key::Unknown],
            index: HashMap::new(),
        }
    }

    fn child(&mut self, parent: u32, key: Key) -> u32 {
        let next = self.parent.len() as u32;
        let id = *self.index.entry((parent, key.clone())).or_insert(next);
        if id == next {
            self.parent.push(parent);
            self.key.push(key);
        }
        id
    }
}

/// A thread's point values and trace, in unified terms.
#[derive(Debug)]
struct Thread {
    id_tuple: Vec<profcodec_hpcrun::IdTupleEntry>,
    /// node -> unified metric -> value.
    values: BTreeMap<u32, BTreeMap<u16, f64>>,
    trace: Option<Vec<(u64, u32)>>,
}

/// Makes the database of the threads `inputs` (see [`crate::prof`]).
pub fn prof_inputs(inputs: &[Input], options: &Options) -> Result<Database, ProfError> {
    make_inputs(inputs, options, &mut Vec::new())
}

/// [`prof_inputs`], with a warning for each companion file left out.
pub(crate) fn make_inputs(
    inputs: &[Input],
    options: &Options,
    warnings: &mut Vec<String>,
) -> Result<Database, ProfError> {
    let jobs = options.jobs.unwrap_or(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| ProfError::Pool {
            jobs,
            message: e.to_string(),
        })?;
    let decoded: Vec<Result<Decoded, ProfError>> =
        pool.install(|| inputs.par_iter().map(|i| decode(i, options)).collect());

    let mut tree = Tree::new();
    let mut modules: Vec<String> = Vec::new();
    let mut module_index: HashMap<String, u32> = HashMap::new();
    let mut metrics: Vec<MetricInfo> = Vec::new();
    let mut metric_index: HashMap<String, u16> = HashMap::new();
    let mut threads: Vec<Thread> = Vec::new();
    let mut program: Option<String> = None;
    let mut module_symbols: Vec<Option<ModuleSymbols>> = Vec::new();
    let mut module_structure: Vec<Option<ModuleStructure>> = Vec::new();
    let mut structures: HashMap<PathBuf, HashMap<String, ModuleStructure>> = HashMap::new();
    let mut functions = Functions::default();
    let mut files = Strings::default();
    for (d, input) in decoded.into_iter().zip(inputs) {
        let d = d?;
        let folder = input.profile.parent().unwrap_or(Path::new("."));
        let folder_structure = if options.ignore_structs {
            None
        } else {
            Some(
                structures
                    .entry(folder.to_path_buf())
                    .or_insert_with(|| structure::load(folder, warnings)),
            )
        };
        if program.is_none() {
            program = d.program.clone();
        }
        let module_map: Vec<u32> = d
            .modules
            .iter()
            .map(|m| {
                *module_index.entry(m.clone()).or_insert_with(|| {
                    modules.push(m.clone());
                    module_symbols.push(symbols::load(folder, m, warnings));
                    module_structure
                        .push(folder_structure.as_ref().and_then(|s| s.get(m)).cloned());
                    modules.len() as u32 - 1
                })
            })
            .collect();
        let metric_map: Vec<Option<u16>> = d
            .metrics
            .iter()
            .map(|m| {
                m.as_ref().map(|(info, _, _)| {
                    *metric_index.entry(info.name.clone()).or_insert_with(|| {
                        metrics.push(info.clone());
                        metrics.len() as u16 - 1
                    })
                })
            })
            .collect();
        let mut node_map: Vec<u32> = Vec::with_capacity(d.nodes.len());
        for (parent, key) in d.nodes {
            let mut parent = parent.map_or(0, |p| node_map[p as usize]);
            let key = match key {
                Key::Point(rel, m, offset) => {
                    let m = module_map[m as usize];
                    let placed = module_structure[m as usize]
                        .as_ref()
                        .and_then(|s| s.lookup(offset));
                    if let Some(scopes) = placed {
                        let mut rel = rel;
                        for scope in scopes {
                            let file = scope.file.map(|f| files.index(f));
                            let line = scope.line.unwrap_or(0);
                            let key = match scope.kind {
                                ScopeKind::Procedure | ScopeKind::Inlined => {
                                    let symbol = Symbol {
                                        entry: scope
                                            .entry
                                            .filter(|_| scope.kind == ScopeKind::Procedure),
                                        name: scope.name.unwrap_or_default().to_owned(),
                                        file,
                                        line,
                                        inlined_at: (scope.kind == ScopeKind::Inlined)
                                            .then_some(scope.element),
                                    };
                                    Key::Function(rel, functions.index(m, symbol))
                                }
                                ScopeKind::Loop => Key::Loop(
                                    m,
                                    scope.entry.unwrap_or(0),
                                    file.unwrap_or(u32::MAX),
                                    line,
                                ),
                                _ => Key::Line(file.unwrap_or(u32::MAX), line),
                            };
                            parent = tree.child(parent, key);
                            rel = if scope.kind == ScopeKind::CallSite {
                                Rel::Inlined
                            } else {
                                Rel::Enclosure
                            };
                        }
                        Key::Point(Rel::Enclosure, m, offset)
                    } else if module_structure[m as usize].is_some() {
                        Key::Point(rel, m, offset)
                    } else {
                        match module_symbols[m as usize]
                            .as_ref()
                            .and_then(|s| s.function_at(offset))
                        {
                            Some(symbol) => Key::Function(rel, functions.index(m, symbol)),
                            None => Key::Point(rel, m, offset),
                        }
                    }
                }
                other => other,
            };
            node_map.push(tree.child(parent, key));
        }
        let unified = |n: Option<u32>| n.map_or(0, |n| node_map[n as usize]);
        let mut values: BTreeMap<u32, BTreeMap<u16, f64>> = BTreeMap::new();
        for (node, metric, value) in d.values {
            let Some(Some(metric)) = metric_map.get(usize::from(metric)) else {
                continue;
            };
            *values
                .entry(unified(node))
                .or_default()
                .entry(*metric)
                .or_default() += value;
        }
        let trace = d
            .trace
            .map(|t| t.into_iter().map(|(time, n)| (time, unified(n))).collect());
        threads.push(Thread {
            id_tuple: d.id_tuple,
            values,
            trace,
        });
    }
    let places = Places {
        modules,
        files: files.list,
        functions,
    };
    Ok(layout(tree, &places, metrics, threads, program, options))
}

/// What the unified tree's keys refer to by index: load modules, source files, functions.
#[derive(Debug)]
struct Places {
    modules: Vec<String>,
    files: Vec<String>,
    functions: Functions,
}

/// Strings (source file paths) unified, each given the index of its first appearance.
#[derive(Debug, Default)]
struct Strings {
    list: Vec<String>,
    index: HashMap<String, u32>,
}

impl Strings {
    fn index(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.list.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

/// The functions of the modules' own symbols and structure, unified by module, entry, name,
/// file and line.
#[derive(Debug, Default)]
struct Functions {
    list: Vec<(u32, Symbol)>,
    index: HashMap<(u32, Symbol), u32>,
}

impl Functions {
    fn index(&mut self, module: u32, symbol: Symbol) -> u32 {
        let next = self.list.len() as u32;
        *self
            .index
            .entry((module, symbol))
            .or_insert_with_key(|key| {
                self.list.push(key.clone());
                next
            })
    }
}

/// Lays the unified tree, metrics and threads out as a database.
fn layout(
    tree: Tree,
    places: &Places,
    metrics: Vec<MetricInfo>,
    threads: Vec<Thread>,
    program: Option<String>,
    options: &Options,
) -> Database {
    let Places {
        modules,
        files,
        functions,
    } = places;
    let n = tree.parent.len();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    for node in 1..n {
        children[tree.parent[node] as usize].push(node as u32);
    }
    // Siblings in key order, so that the layout depends on the tree only, not on the order the
    // threads were merged in.
    for c in &mut children {
        c.sort_by(|a, b| tree.key[*a as usize].cmp(&tree.key[*b as usize]));
    }
    // Preorder from the global context: context ids in that order.
    let mut order: Vec<u32> = Vec::with_capacity(n);
    let mut stack = vec![0u32];
    while let Some(node) = stack.pop() {
        order.push(node);
        stack.extend(children[node as usize].iter().rev());
    }
    let mut ctx_id = vec![0u32; n];
    for (i, &node) in order.iter().enumerate() {
        ctx_id[node as usize] = i as u32;
    }

    let mut meta = Meta {
        title: options
            .title
            .clone()
            .or(program)
            .unwrap_or_else(|| "<unnamed>".to_owned()),
        description: "TODO database description".to_owned(),
        // The standard identifier names hpcprof writes, as the database crate's builder knows them.
        id_names: profcodec_hpctoolkit::model::DatabaseBuilder::DEFAULT_ID_NAMES
            .map(str::to_owned)
            .to_vec(),
        ..Meta::default()
    };
    for (name, scope_type, propagation_index) in SCOPES {
        meta.scopes.push(PropagationScope {
            name: name.to_owned(),
            scope_type,
            propagation_index,
        });
    }
    for (m, info) in metrics.iter().enumerate() {
        let id = |s: usize| (m * SCOPES.len() + s) as u16;
        meta.metrics.push(Metric {
            name: info.name.clone(),
            scope_insts: (0..SCOPES.len())
                .map(|s| ScopeInstance {
                    scope: ScopeHandle(s as u32),
                    prop_metric_id: id(s),
                })
                .collect(),
            summaries: (0..SCOPES.len())
                .map(|s| Summary {
                    scope: ScopeHandle(s as u32),
                    formula: "$$".to_owned(),
                    combine: profcodec_hpctoolkit::model::Combine::SUM,
                    stat_metric_id: id(s),
                })
                .collect(),
        });
    }

    // Modules in the order the contexts first use them; only used ones are written.
    let mut module_handle: HashMap<u32, ModuleHandle> = HashMap::new();
    let mut function_handle: HashMap<u32, FunctionHandle> = HashMap::new();
    let mut file_handle: HashMap<u32, FileHandle> = HashMap::new();
    let mut entry_of: HashMap<u32, EntryPointHandle> = HashMap::new();
    let mut context_of: HashMap<u32, ContextHandle> = HashMap::new();
    for &node in order.iter().skip(1) {
        let parent_node = tree.parent[node as usize];
        let parent = if let Some(&e) = entry_of.get(&parent_node) {
            Parent::EntryPoint(e)
        } else if let Some(&c) = context_of.get(&parent_node) {
            Parent::Context(c)
        } else {
            Parent::Context(ContextHandle(u32::MAX))
        };
        match &tree.key[node as usize] {
            Key::Entry(kind) if parent_node == 0 => {
                let kind = EntryPointKind(*kind);
                let pretty_name = match kind {
                    EntryPointKind::MAIN_THREAD => "main thread",
                    EntryPointKind::APPLICATION_THREAD => "application thread",
                    _ => "unknown entry",
                };
                meta.entry_points.push(EntryPoint {
                    ctx_id: ctx_id[node as usize],
                    kind,
                    pretty_name: pretty_name.to_owned(),
                });
                entry_of.insert(node, EntryPointHandle(meta.entry_points.len() as u32 - 1));
            }
            Key::Unknown if parent_node == 0 => {
                meta.entry_points.push(EntryPoint {
                    ctx_id: ctx_id[node as usize],
                    kind: EntryPointKind::UNKNOWN,
                    pretty_name: "unknown entry".to_owned(),
                });
                entry_of.insert(node, EntryPointHandle(meta.entry_points.len() as u32 - 1));
            }
            key if key.elided() => {
                // Its children hang from its parent in meta.db.
                if let Some(&e) = entry_of.get(&parent_node) {
                    entry_of.insert(node, e);
                } else if let Some(&c) = context_of.get(&parent_node) {
                    context_of.insert(node, c);
                }
            }
            key => {
                let mut module_of = |m: u32| {
                    let next = ModuleHandle(meta.modules.len() as u32);
                    *module_handle.entry(m).or_insert_with(|| {
                        meta.modules.push(LoadModule {
                            flags: 0,
                            path: modules[m as usize].clone(),
                        });
                        next
                    })
                };
                let mut file_of = |f: u32| {
                    let next = FileHandle(meta.files.len() as u32);
                    *file_handle.entry(f).or_insert_with(|| {
                        meta.files.push(SourceFile {
                            flags: 0,
                            path: files.get(f as usize).cloned().unwrap_or_default(),
                        });
                        next
                    })
                };
                let mut source = None;
                let mut relation = Rel::Call;
                let (point, function, lexical_type) = match key {
                    Key::Point(rel, m, offset) => {
                        relation = *rel;
                        let point = CodePoint {
                            module: module_of(*m),
                            offset: *offset,
                        };
                        (Some(point), None, LexicalType::INSTRUCTION)
                    }
                    Key::Loop(m, entry, f, line) => {
                        relation = Rel::Enclosure;
                        source = Some(SourceLocation {
                            file: file_of(*f),
                            line: *line,
                        });
                        let point = CodePoint {
                            module: module_of(*m),
                            offset: *entry,
                        };
                        (Some(point), None, LexicalType::LOOP)
                    }
                    Key::Line(f, line) => {
                        relation = Rel::Enclosure;
                        source = Some(SourceLocation {
                            file: file_of(*f),
                            line: *line,
                        });
                        (None, None, LexicalType::LINE)
                    }
                    Key::Function(rel, f) => {
                        relation = *rel;
                        let next = FunctionHandle(meta.functions.len() as u32);
                        let handle = *function_handle.entry(*f).or_insert_with(|| {
                            let (m, symbol) = &functions.list[*f as usize];
                            let module = Some(module_of(*m));
                            let file = symbol.file.map(&mut file_of);
                            meta.functions.push(Function {
                                name: Some(symbol.name.clone()),
                                module,
                                offset: symbol.entry.unwrap_or(0),
                                file,
                                line: symbol.line,
                                flags: 0,
                            });
                            next
                        });
                        (None, Some(handle), LexicalType::FUNCTION)
                    }
                    _ => (None, None, LexicalType::INSTRUCTION),
                };
                let (relation, propagation) = match relation {
                    Rel::Call => (Relation::CALL, 0),
                    Rel::Inlined => (Relation::INLINED_CALL, 0),
                    Rel::Enclosure => (Relation::LEXICAL, 1),
                };
                meta.contexts.push(Context {
                    parent,
                    ctx_id: ctx_id[node as usize],
                    relation,
                    lexical_type,
                    propagation,
                    function,
                    source,
                    point,
                });
                context_of.insert(node, ContextHandle(meta.contexts.len() as u32 - 1));
            }
        }
    }

    let mut profiles = vec![Profile {
        flags: Profile::IS_SUMMARY,
        id_tuple: None,
        values: ProfileValues::default(),
    }];
    let mut summary: BTreeMap<u32, BTreeMap<u16, f64>> = BTreeMap::new();
    let tuples = id_tuples(&threads);
    let mut traces = Vec::new();
    for (thread, tuple) in threads.iter().zip(tuples) {
        // Per node, per metric and scope, bottom-up over the preorder reversed. Sparse: a node
        // holds only the metrics measured below it, so that an ancestor chain as deep as the
        // input costs its length, not its length times every metric the profile declares.
        let mut cells: HashMap<u32, BTreeMap<u16, [f64; 4]>> = HashMap::new();
        for (&node, values) in &thread.values {
            let cell = cells.entry(node).or_default();
            for (&m, &v) in values {
                cell.insert(m, [v; 4]);
            }
        }
        for &node in order.iter().rev() {
            if node == 0 {
                continue;
            }
            let Some(cell) = cells.get(&node).cloned() else {
                continue;
            };
            let parent = tree.parent[node as usize];
            let up = cells.entry(parent).or_default();
            // hpcprof's propagation: execution from every child; function from the children
            // that are not calls; function without loops from those that are not loops either.
            let key = &tree.key[node as usize];
            let pull_function = !key.is_call();
            let pull_no_loops = pull_function && !matches!(key, Key::Loop(..));
            for (&m, v) in &cell {
                let up = up.entry(m).or_insert([0.0; 4]);
                up[EXECUTION] += v[EXECUTION];
                if pull_function {
                    up[FUNCTION] += v[FUNCTION];
                }
                if pull_no_loops {
                    up[NO_LOOPS] += v[NO_LOOPS];
                }
            }
        }

        let mut by_ctx: BTreeMap<u32, Vec<DbValue>> = BTreeMap::new();
        for (node, cell) in &cells {
            let is_loop = matches!(tree.key[*node as usize], Key::Loop(..));
            let mut vals = Vec::new();
            for (&m, v) in cell {
                let m = usize::from(m);
                for s in 0..SCOPES.len() {
                    // lex_aware: a thread's profile gives the function value, as hpcprof's
                    // does; the summary a loop's function value without its inner loops.
                    let (x, sum) = match s {
                        NO_LOOPS if is_loop => (v[FUNCTION], v[NO_LOOPS]),
                        NO_LOOPS => (v[FUNCTION], v[FUNCTION]),
                        s => (v[s], v[s]),
                    };
                    let metric_id = (m * SCOPES.len() + s) as u16;
                    if x != 0.0 {
                        vals.push(DbValue {
                            metric_id,
                            value: x,
                        });
                    }
                    if sum != 0.0 {
                        *summary
                            .entry(ctx_id[*node as usize])
                            .or_default()
                            .entry(metric_id)
                            .or_default() += sum;
                    }
                }
            }
            if !vals.is_empty() {
                by_ctx.insert(ctx_id[*node as usize], vals);
            }
        }
        let mut values = ProfileValues::default();
        for (ctx, vals) in by_ctx {
            values.push(ctx, vals);
        }
        profiles.push(Profile {
            flags: 0,
            id_tuple: Some(tuple),
            values,
        });
        if let Some(t) = &thread.trace {
            traces.push(DbTrace {
                prof_index: profiles.len() as u32 - 1,
                elements: t
                    .iter()
                    .map(|&(timestamp, node)| {
                        // A sample in an instruction meta.db leaves out is in its line.
                        let shown = if tree.key[node as usize].elided() {
                            tree.parent[node as usize]
                        } else {
                            node
                        };
                        TraceElement {
                            timestamp,
                            ctx_id: ctx_id[shown as usize],
                        }
                    })
                    .collect(),
            });
        }
    }
    for (ctx, vals) in summary {
        profiles[0].values.push(
            ctx,
            vals.into_iter()
                .map(|(metric_id, value)| DbValue { metric_id, value }),
        );
    }
    let mut db = Database {
        meta,
        profiles,
        context_major: None,
        traces: (!options.no_traces && !traces.is_empty()).then(|| Traces::from_traces(traces)),
    };
    db.context_major = Some(db.transpose(Some(n as u32)));
    db
}

/// The identifier tuples of the threads, with the logical indexes hpcrun leaves to hpcprof
/// generated: for `LOGIC_LOCAL`, numbered within the entries before it; for `LOGIC_GLOBAL`,
/// within the kind. Physical indexes are numbered in increasing order, so the numbering does not
/// depend on the order the files were read.
fn id_tuples(threads: &[Thread]) -> Vec<Vec<Identifier>> {
    type LocalKey = (Vec<(u16, u64)>, u16);
    let mut local: BTreeMap<LocalKey, BTreeMap<u64, u64>> = BTreeMap::new();
    let mut global: BTreeMap<u16, BTreeMap<u64, u64>> = BTreeMap::new();
    for t in threads {
        for (i, e) in t.id_tuple.iter().enumerate() {
            match e.interpretation() {
                1 => {
                    let prefix = t.id_tuple[..i]
                        .iter()
                        .map(|p| (p.kind_id(), p.physical))
                        .collect();
                    local
                        .entry((prefix, e.kind_id()))
                        .or_default()
                        .insert(e.physical, 0);
                }
                2 => {
                    global.entry(e.kind_id()).or_default().insert(e.physical, 0);
                }
                _ => {}
            }
        }
    }
    for map in local.values_mut().chain(global.values_mut()) {
        for (i, v) in map.values_mut().enumerate() {
            *v = i as u64;
        }
    }
    threads
        .iter()
        .map(|t| {
            t.id_tuple
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let logical = match e.interpretation() {
                        1 => {
                            let prefix: Vec<(u16, u64)> = t.id_tuple[..i]
                                .iter()
                                .map(|p| (p.kind_id(), p.physical))
                                .collect();
                            local[&(prefix, e.kind_id())][&e.physical]
                        }
                        2 => global[&e.kind_id()][&e.physical],
                        _ => e.logical,
                    };
                    Identifier {
                        kind: e.kind_id() as u8,
                        flags: u16::from(e.interpretation() != 3),
                        logical_id: logical as u32,
                        physical_id: e.physical,
                    }
                })
                .collect()
        })
        .collect()
}
