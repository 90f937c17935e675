//! The profile model of each corpus measurement folder (`hpctoolkit/meas/*.m`) against the
//! databases hpcprof made from it (`hpctoolkit/dbase/<name>.d`, with binary structure, and
//! `<name>.nostruct.d`, without), read with profcodec-hpctoolkit.
//!
//! # How functions are matched
//!
//! An hpcrun file names no procedure: a CCT node is a load module and an offset in it, and the
//! model's frames are exactly that. hpcprof names procedures from the binaries' symbols and
//! structure (hpcstruct), which the measurement does not hold. So the judge resolves the
//! model's (module, offset) frames through the database's own tables:
//!
//! - an offset at which the database has an instruction context (what hpcprof makes where it has
//!   no structure for the module) is that instruction;
//! - otherwise it belongs to the function of that module whose entry offset is the greatest at
//!   or below it, among the functions hpcprof placed as called (not inlined) contexts;
//! - a placeholder (`<gpu kernel>`, ...) is matched by name.
//!
//! On the database side, the `function` scope (hpcviewer's exclusive value) of every called
//! function context and every instruction context is summed per function name or per
//! instruction; the value of an inlined function context is added to the called function it
//! was inlined into, because machine code inlined into a function lies at that function's
//! addresses and no measurement can tell it apart. What agrees, and is asserted for every
//! metric of every folder and both databases: the total per metric (the sum of every point
//! value), the total per load module, and the self value per function so matched (or per
//! instruction). What cannot agree and is not compared: the split between a function and the
//! functions inlined into it, and anything per source line or loop.
//!
//! The model's totals are also held to the sum of every node value read directly from the files.
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use profcodec_hpcrun::profile::value_type_name;
use profcodec_hpcrun::{MeasurementFolder, NodeValues};
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::read::{Combine, ContextNode, LexicalType, Relation, ScopeType};
use profcodec_profile::{ContextFilter, GroupBy, IdKind, Profile, Query, Source};
use profcodec_testkit::corpus::corpus_subdir;

/// What a self value is attributed to when comparing per function.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// A named function (or placeholder).
    Function(String),
    /// An instruction: module path and offset.
    Instruction(String, u64),
}

type Sums<K> = BTreeMap<K, f64>;

/// Per metric name: the total, per module and per function.
#[derive(Debug, Default)]
struct Figures {
    total: HashMap<String, f64>,
    by_module: HashMap<String, Sums<Option<String>>>,
    by_function: HashMap<String, Sums<Key>>,
}

/// What the database knows to resolve a (module, offset).
#[derive(Debug, Default)]
struct Resolver {
    /// Called functions per module path: (entry offset, name), sorted.
    entries: HashMap<String, Vec<(u64, String)>>,
    /// Instruction contexts.
    instructions: HashSet<(String, u64)>,
}

impl Resolver {
    fn resolve(&self, module: Option<&str>, offset: Option<u64>) -> Key {
        let (Some(module), Some(offset)) = (module, offset) else {
            return Key::Function(format!("{module:?}+{offset:?}"));
        };
        if self.instructions.contains(&(module.to_owned(), offset)) {
            return Key::Instruction(module.to_owned(), offset);
        }
        let entries = self.entries.get(module).map_or(&[][..], Vec::as_slice);
        let at = entries.partition_point(|(entry, _)| *entry <= offset);
        match at.checked_sub(1) {
            Some(i) => Key::Function(entries[i].1.clone()),
            None => Key::Instruction(module.to_owned(), offset),
        }
    }
}

/// Reads the database's summary profile: figures per metric, and the resolver.
fn database_figures(dir: &Path) -> (Figures, Resolver, Vec<Vec<(u8, u32)>>) {
    let db = Database::open(dir).unwrap();
    db.validate().unwrap();
    let meta = db.meta();

    // Each metric's point and function-scope sum statistics.
    let mut stat: HashMap<u16, (String, ScopeType)> = HashMap::new();
    for m in meta.metrics() {
        let m = m.unwrap();
        for s in meta.summaries(&m) {
            let s = s.unwrap();
            let scope = meta.scope(s.scope).unwrap();
            let wanted = scope.kind == ScopeType::POINT
                || (scope.kind == ScopeType::TRANSITIVE && scope.name == "function");
            if s.combine == Combine::SUM && s.formula == "$$" && wanted {
                // Named as both conversions name it: without hpcprof's unit suffix.
                let base = m
                    .unit()
                    .map_or(m.name, |u| &m.name[..m.name.len() - u.len() - 3]);
                stat.insert(s.stat_metric_id, (base.to_owned(), scope.kind));
            }
        }
    }

    // One walk of the tree: each context's module and the function (or instruction) its
    // function-scope value counts for.
    let module_path = |i| meta.module(i).unwrap().path.to_owned();
    let mut module_of: HashMap<u32, Option<String>> = HashMap::new();
    let mut owner_of: HashMap<u32, Option<Key>> = HashMap::new();
    // A called function's own module (a placeholder has none).
    let mut owner_module: HashMap<Key, Option<String>> = HashMap::new();
    // The contexts whose function-scope value is a function's own (not a line's or loop's,
    // which is already in its function's).
    let mut function_like: HashSet<u32> = HashSet::new();
    let mut resolver = Resolver::default();
    for node in meta.walk() {
        let node = node.unwrap();
        let ctx = node.node.ctx_id();
        let (module, owner) = match node.node {
            ContextNode::EntryPoint(_) => (None, None),
            ContextNode::Context(c) => {
                let function = c.function.map(|f| meta.function(f).unwrap());
                let module = c
                    .module
                    .or(function.and_then(|f| f.module))
                    .map(module_path)
                    .or_else(|| module_of.get(&node.parent).cloned().flatten());
                let inherited = || owner_of.get(&node.parent).cloned().flatten();
                let owner = match (c.relation, c.lexical_type) {
                    // hpcprof's unknown procedure (where a GPU binary lacked the control flow
                    // graph to place a sample) has no function.
                    (Relation::CALL, LexicalType::FUNCTION) if function.is_none() => {
                        Some(Key::Function("<unknown procedure>".to_owned()))
                    }
                    (Relation::CALL, LexicalType::FUNCTION) => {
                        let f = function.unwrap();
                        let name = f.name.unwrap_or("<unknown procedure>").to_owned();
                        if let Some(m) = f.module {
                            resolver
                                .entries
                                .entry(module_path(m))
                                .or_default()
                                .push((f.offset, name.clone()));
                        }
                        Some(Key::Function(name))
                    }
                    (Relation::CALL, LexicalType::INSTRUCTION) => {
                        let key = (module.clone().unwrap(), c.module_offset.unwrap());
                        resolver.instructions.insert(key.clone());
                        Some(Key::Instruction(key.0, key.1))
                    }
                    _ => inherited(),
                };
                if c.lexical_type == LexicalType::FUNCTION
                    || c.lexical_type == LexicalType::INSTRUCTION
                {
                    function_like.insert(ctx);
                }
                if let (Some(key), Relation::CALL) = (&owner, c.relation) {
                    let own = function.and_then(|f| f.module).map(module_path);
                    owner_module.entry(key.clone()).or_insert(own);
                }
                (module, owner)
            }
        };
        module_of.insert(ctx, module);
        owner_of.insert(ctx, owner);
    }
    for entries in resolver.entries.values_mut() {
        entries.sort();
        entries.dedup();
    }

    let profiles = db.profile().unwrap();
    let mut figures = Figures::default();
    let mut tuples = Vec::new();
    for index in 0..profiles.profile_count() {
        let p = profiles.profile(index).unwrap();
        if !p.is_summary() {
            let ids = p.id_tuple.map_or(&[][..], |t| t.ids);
            tuples.push(
                ids.iter()
                    .map(|id| (id.kind, id.logical_id.get()))
                    .collect(),
            );
            continue;
        }
        for (ctx, values) in p.contexts() {
            for v in values {
                let Some((metric, scope)) = stat.get(&v.metric_id()) else {
                    continue;
                };
                if *scope == ScopeType::POINT {
                    *figures.total.entry(metric.clone()).or_default() += v.value();
                    continue;
                }
                // meta.db leaves out instruction contexts nested in a line (their values are
                // in profile.db, and in their enclosing function's function-scope value).
                if !function_like.contains(&ctx) {
                    continue;
                }
                let owner = &owner_of[&ctx];
                let owner = owner.clone().unwrap_or_else(|| {
                    panic!(
                        "{}: context {ctx} has a function value but no function",
                        dir.display()
                    )
                });
                let module = match &owner {
                    Key::Instruction(module, _) => Some(module.clone()),
                    Key::Function(_) => owner_module[&owner].clone(),
                };
                *figures
                    .by_module
                    .entry(metric.clone())
                    .or_default()
                    .entry(module)
                    .or_default() += v.value();
                *figures
                    .by_function
                    .entry(metric.clone())
                    .or_default()
                    .entry(owner)
                    .or_default() += v.value();
            }
        }
    }
    tuples.sort();
    (figures, resolver, tuples)
}

/// The model's figures for every value type, functions resolved through `resolver`.
fn model_figures(profile: &Profile, resolver: &Resolver) -> Figures {
    let mut figures = Figures::default();
    for (id, _) in profile.value_types() {
        let name = profile.value_type_name(id).to_owned();
        let query = Query::new()
            .value_type(&name)
            .contexts(ContextFilter::All)
            .source(Source::Tree);
        let functions = profile.top(&query.clone()).unwrap();
        figures
            .total
            .insert(name.clone(), functions.total.self_value);
        let by_function = figures.by_function.entry(name.clone()).or_default();
        for row in &functions.rows {
            let key = match &row.function {
                Some(f) => Key::Function(f.clone()),
                None => resolver.resolve(row.module.as_deref(), row.address),
            };
            *by_function.entry(key).or_default() += row.self_value;
        }
        let modules = profile.top(&query.group(GroupBy::Module)).unwrap();
        let by_module = figures.by_module.entry(name).or_default();
        for row in &modules.rows {
            *by_module.entry(row.module.clone()).or_default() += row.self_value;
        }
    }
    figures
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12
}

/// Compares two tables of sums, leaving out zeros; returns the number of entries compared.
fn assert_same<K: Ord + std::fmt::Debug>(what: &str, model: &Sums<K>, db: &Sums<K>) -> usize {
    let (m, d) = (nonzero(model), nonzero(db));
    let same = m.len() == d.len()
        && m.iter()
            .zip(&d)
            .all(|((km, vm), (kd, vd))| km == kd && close(*vm, *vd));
    assert!(same, "{what}:\n model    {m:?}\n database {d:?}");
    m.len()
}

fn nonzero<K>(sums: &Sums<K>) -> Vec<(&K, f64)> {
    sums.iter()
        .filter(|(_, v)| **v != 0.0)
        .map(|(k, v)| (k, *v))
        .collect()
}

/// Sums every node value of every profile of the folder times its metric's period, per metric
/// name, straight from the files.
fn direct_totals(folder: &MeasurementFolder) -> HashMap<String, f64> {
    let mut totals = HashMap::new();
    for thread in folder.threads() {
        let Some(m) = thread.read_profile() else {
            continue;
        };
        let m = m.unwrap();
        for epoch in 0..m.epochs.len() {
            let values = NodeValues::new(&m, epoch);
            for node in 0..values.len() {
                for (metric, value) in values.of(node) {
                    let desc = &m.epochs[epoch].metrics[usize::from(metric)];
                    // As hpcprof scales them.
                    let period = desc.period.max(1) as f64;
                    *totals.entry(value_type_name(desc)).or_default() += value.as_f64() * period;
                }
            }
        }
    }
    totals
}

#[test]
fn every_corpus_measurement_agrees_with_its_databases() {
    let Some(corpus) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") else {
        return;
    };
    let mut folders: Vec<_> = std::fs::read_dir(corpus.join("meas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "m"))
        .collect();
    folders.sort();
    assert_eq!(folders.len(), 7);
    let (mut databases, mut functions, mut modules, mut metrics) = (0, 0, 0, 0);
    for dir in folders {
        let folder = MeasurementFolder::open(&dir).unwrap();
        let profile = folder.to_profile().unwrap();
        let name = dir.file_stem().unwrap().to_string_lossy().into_owned();
        let profiles = folder
            .threads()
            .iter()
            .filter(|t| t.profile.is_some())
            .count();
        assert_eq!(profile.contexts().len(), profiles, "{name}");

        // The model's totals are the files' values.
        let direct = direct_totals(&folder);
        let model = model_figures(&profile, &Resolver::default());
        for (metric, total) in &direct {
            let got = model.total.get(metric).copied().unwrap_or(0.0);
            assert!(
                close(got, *total),
                "{name} {metric}: model {got} but files {total}"
            );
        }
        assert!(
            model
                .total
                .iter()
                .all(|(m, v)| *v == 0.0 || direct.contains_key(m)),
            "{name}"
        );

        for suffix in [".d", ".nostruct.d"] {
            let db_dir = corpus.join("dbase").join(format!("{name}{suffix}"));
            let (db, resolver, tuples) = database_figures(&db_dir);
            let what = format!("{name}{suffix}");
            databases += 1;

            // One context per profile hpcprof kept, with the same identifier tuples.
            let mut ours: Vec<Vec<(u8, u32)>> = profile
                .contexts()
                .map(|(_, c)| {
                    c.ids
                        .iter()
                        .map(|&(kind, v)| (kind_id(kind), v as u32))
                        .collect()
                })
                .collect();
            ours.sort();
            assert_eq!(ours, tuples, "{what}: identifier tuples");

            let model = model_figures(&profile, &resolver);
            for (metric, total) in &model.total {
                if *total == 0.0 {
                    continue;
                }
                let db_total = db.total.get(metric).copied().unwrap_or(0.0);
                assert!(
                    close(*total, db_total),
                    "{what} {metric}: model {total} but database {db_total}"
                );
                metrics += 1;
                // The function table covers every point value (none is lost by the walk).
                let covered: f64 = db.by_function[metric].values().sum();
                assert!(
                    close(covered, db_total),
                    "{what} {metric}: {covered} of {db_total}"
                );
                modules += assert_same(
                    &format!("{what} {metric} per module"),
                    &model.by_module[metric],
                    &db.by_module[metric],
                );
                functions += assert_same(
                    &format!("{what} {metric} per function"),
                    &model.by_function[metric],
                    &db.by_function[metric],
                );
            }
        }
    }
    assert_eq!(databases, 14);
    eprintln!(
        "compared {metrics} (database, metric) totals, {modules} module sums, {functions} \
         function or instruction sums"
    );
    assert!(functions > 0 && modules > 0);
}

/// The id-tuple kind number of `id-tuple.h` for a model kind.
fn kind_id(kind: IdKind) -> u8 {
    match kind {
        IdKind::Node => 1,
        IdKind::Rank => 2,
        IdKind::Thread => 3,
        IdKind::GpuDevice => 4,
        IdKind::GpuContext => 5,
        IdKind::GpuStream => 6,
        IdKind::Core => 7,
        _ => u8::MAX,
    }
}

#[test]
fn every_version_converts_with_its_totals() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun");
    let mut converted = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "hpcrun") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let m = profcodec_hpcrun::read_measurement(&bytes).unwrap();
        let profile = m.to_profile().unwrap();
        let name = path.display();
        assert_eq!(profile.contexts().len(), 1, "{name}");
        let nodes: usize = m.epochs.iter().map(|e| e.cct.len()).sum();
        assert!(profile.nodes().len() <= nodes, "{name}");
        let mut direct: HashMap<String, f64> = HashMap::new();
        for epoch in 0..m.epochs.len() {
            let values = NodeValues::new(&m, epoch);
            for node in 0..values.len() {
                for (metric, value) in values.of(node) {
                    let desc = &m.epochs[epoch].metrics[usize::from(metric)];
                    if desc.formula.as_bytes().is_empty() {
                        *direct.entry(value_type_name(desc)).or_default() +=
                            value.as_f64() * desc.period.max(1) as f64;
                    }
                }
            }
        }
        let model = model_figures(&profile, &Resolver::default());
        for (metric, total) in &direct {
            assert!(close(model.total[metric], *total), "{name} {metric}");
        }
        // Every frame is a module and an offset, or a named placeholder.
        for (_, frame) in profile.frames() {
            assert!(
                frame.function.is_some() || frame.address.is_some(),
                "{name}"
            );
        }
        converted += 1;
    }
    assert_eq!(converted, 6);
}
