//! Interop with hatchet (PyPI `llnl-hatchet`): `hatchet.GraphFrame.from_hpctoolkit_latest` reads
//! databases written by profcodec, and its per-node CPUTIME values equal what profcodec's reader
//! reports for the same contexts.
//!
//! Runs when `PROFCODEC_HATCHET_PYTHON` names a Python with hatchet installed (`cargo xtask test`
//! makes a venv under `target/` and sets it); otherwise prints one line and passes.
//!
//! hatchet's default mode reads the summary profile: `time (inc)` is the sum statistic of the
//! `execution` scope and `time` that of the `function` scope, per context (the node's `hnid` is
//! the `ctxId`). Its `parallel_profiles_mode` is not used: hatchet 2026.2's binary search over a
//! cct.db block reads past the end of an empty block, so it fails on hpcprof's own databases too.
//!
//! `profile_model_equals_hatchet` judges the profile model ([`read::Database::to_profile`]) on
//! the corpus databases: for every metric hatchet can name, every node's inclusive value equals
//! hatchet's `<metric> (inc)` column, and its function-scope value rebuilt from the model (the
//! node's self value plus the function-scope values of its loop, line and instruction children)
//! equals hatchet's `<metric>` column.
#![allow(clippy::unwrap_used)] // test helpers may unwrap

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::process::Command;

use profcodec_hpctoolkit::profile::ProfileOptions;
use profcodec_profile::{NodeId, Profile};

use profcodec_hpctoolkit::model::{Combine, Database, Meta};
use profcodec_hpctoolkit::read;
use profcodec_hpctoolkit::write::synthetic::{Synthetic, SyntheticConfig};
use profcodec_hpctoolkit::write::write_database;

/// Prints `{ctxId: [time (inc) bits or null, time bits or null]}` for every node hatchet made.
const SCRIPT: &str = r#"
import json, math, struct, sys
import hatchet as ht
gf = ht.GraphFrame.from_hpctoolkit_latest(sys.argv[1])
def bits(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return struct.unpack('<Q', struct.pack('<d', float(v)))[0]
out = {}
for node, row in gf.dataframe.iterrows():
    out[str(node._hatchet_nid)] = [bits(row.get('time (inc)')), bits(row.get('time'))]
print(json.dumps(out))
"#;

/// The `statMetricId` of the sum summary of the time metric's `scope`: hatchet calls a metric
/// named CPUTIME, REALTIME or CYCLES (before any `(unit)`) "time".
fn stat_id(meta: &Meta, scope: &str) -> u16 {
    let metric = meta
        .metrics
        .iter()
        .find(|m| {
            let name = m.name.to_lowercase();
            let base = name.split('(').next().unwrap_or("").trim();
            ["cputime", "realtime", "cycles"].contains(&base)
        })
        .unwrap();
    metric
        .summaries
        .iter()
        .find(|s| s.combine == Combine::SUM && meta.scopes[s.scope.index()].name == scope)
        .unwrap()
        .stat_metric_id
}

/// Runs hatchet on `dir` and compares every node's values with profcodec's reader.
fn compare(python: &str, dir: &Path) -> usize {
    let out = Command::new(python)
        .arg("-c")
        .arg(SCRIPT)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hatchet failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let nodes: BTreeMap<String, [Option<u64>; 2]> = serde_json::from_slice(&out.stdout).unwrap();
    let db = read::Database::open(dir).unwrap();
    db.validate().unwrap();
    let meta = Meta::from_read(&db.meta()).unwrap();
    let (inclusive, exclusive) = (stat_id(&meta, "execution"), stat_id(&meta, "function"));
    let summary = db.profile().unwrap().profile(0).unwrap();
    assert!(!nodes.is_empty());
    for (ctx, [inc, exc]) in &nodes {
        let ctx: u32 = ctx.parse().unwrap();
        let ours = |metric| summary.value(ctx, metric).map(f64::to_bits);
        assert_eq!(*inc, ours(inclusive), "ctxId {ctx}: time (inc)");
        assert_eq!(*exc, ours(exclusive), "ctxId {ctx}: time");
    }
    nodes.len()
}

#[test]
fn hatchet_reads_what_profcodec_writes() {
    let Some(python) = std::env::var_os("PROFCODEC_HATCHET_PYTHON") else {
        println!("PROFCODEC_HATCHET_PYTHON is not set; hatchet interop test not run");
        return;
    };
    let python = python.to_str().unwrap().to_owned();
    let base = std::env::temp_dir().join(format!("profcodec-hatchet-{}", std::process::id()));

    // A synthetic database: functions, loops, lines, instructions; CPU and GPU profiles.
    let config = SyntheticConfig {
        profiles: 9,
        contexts: 300,
        metrics: 2,
        trace_elems: 50,
        trace_run: 1,
        samples: 0,
        seed: 7,
    };
    let dir = base.join("synthetic");
    Synthetic::new(config).write_dir(&dir, 4096).unwrap();
    let n = compare(&python, &dir);
    println!("synthetic: hatchet agrees on {n} nodes");

    // hatchet's own test database, rewritten by profcodec.
    if let Some(corpus) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        let original = read::Database::open(corpus.join("hatchet-gamess")).unwrap();
        let model = Database::from_read(&original).unwrap();
        let dir = base.join("gamess");
        write_database(&model, &dir).unwrap();
        let n = compare(&python, &dir);
        println!("hatchet-gamess rewritten: hatchet agrees on {n} nodes");
    }
    std::fs::remove_dir_all(&base).unwrap();
}

/// Prints `{column: {ctxId: value bits or null}}` for the given metric names (hatchet's
/// spelling); bits, because JSON's decimal floats need not read back bit for bit.
const ALL_METRICS_SCRIPT: &str = r#"
import json, math, struct, sys
import hatchet as ht
names = json.loads(sys.argv[2])
gf = ht.GraphFrame.from_hpctoolkit_latest(sys.argv[1], metric_names=names, summary_metrics=['sum'])
out = {}
for node, row in gf.dataframe.iterrows():
    for col in gf.dataframe.columns:
        if col == 'name':
            continue
        v = row[col]
        v = None if v is None or (isinstance(v, float) and math.isnan(v)) else \
            struct.unpack('<Q', struct.pack('<d', float(v)))[0]
        out.setdefault(col, {})[str(node._hatchet_nid)] = v
print(json.dumps(out))
"#;

/// hatchet's name of a metric (lower case, unit dropped, the time metrics called "time").
fn hatchet_name(model_name: &str) -> String {
    let name = model_name.to_lowercase();
    match name.as_str() {
        "cputime" | "realtime" | "cycles" => "time".to_owned(),
        _ => name,
    }
}

/// The model's per-node (inclusive, function-scope) values of one value type in the summary.
fn model_columns(profile: &Profile, value_type: &str) -> (Vec<f64>, Vec<f64>) {
    let vt = profile.value_type_by_name(value_type).unwrap();
    let n = profile.nodes().len();
    let (mut inclusive, mut function) = (vec![0.0; n], vec![0.0; n]);
    for v in profile.node_values() {
        if v.value_type == vt && profile.context(v.context).summary {
            inclusive[v.node.index()] += v.inclusive.unwrap_or(0.0);
            function[v.node.index()] += v.self_value.unwrap_or(0.0);
        }
    }
    // Children come after their parents: one backward sweep adds each loop, line and
    // instruction to the node it lies in.
    let nodes: Vec<_> = profile.nodes().map(|(_, node)| *node).collect();
    for i in (0..n).rev() {
        let node = nodes[i];
        if let Some(parent) = node.parent
            && !profile.frame(node.frame).kind.is_function_like()
        {
            function[parent.index()] += function[i];
        }
    }
    (inclusive, function)
}

/// Runs hatchet on a corpus database and compares every metric column with the model.
/// Returns the number of (node, column) pairs compared, `None` when hatchet cannot read it.
fn compare_model(python: &str, dir: &Path) -> Option<usize> {
    let db = read::Database::open(dir).unwrap();
    let (profile, nodes) = db.to_profile_with_nodes(&ProfileOptions::new()).unwrap();
    // hatchet needs a time metric and a main-thread entry point; it names metrics by their
    // lower-case base name, so metrics whose names collide there are left out.
    let mut by_hatchet: HashMap<String, Vec<String>> = HashMap::new();
    for (id, _) in profile.value_types() {
        let name = profile.value_type_name(id).to_owned();
        by_hatchet
            .entry(hatchet_name(&name))
            .or_default()
            .push(name);
    }
    by_hatchet.retain(|_, v| v.len() == 1);
    let has_main = db
        .meta()
        .entry_points()
        .any(|e| e.unwrap().kind == read::EntryPointKind::MAIN_THREAD);
    if !by_hatchet.contains_key("time") || !has_main {
        return None;
    }
    let names: Vec<&String> = by_hatchet.keys().collect();
    let out = Command::new(python)
        .arg("-c")
        .arg(ALL_METRICS_SCRIPT)
        .arg(dir)
        .arg(serde_json::to_string(&names).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hatchet failed on {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let columns: BTreeMap<String, BTreeMap<u32, Option<u64>>> =
        serde_json::from_slice(&out.stdout).unwrap();
    // The ctxIds of each model node (sibling contexts with one frame share a node).
    let mut ctx_of_node: HashMap<NodeId, Vec<u32>> = HashMap::new();
    for (ctx, node) in nodes.iter() {
        ctx_of_node.entry(node).or_default().push(ctx);
    }
    // Every node hatchet made has a row, so the time column lists them all.
    let hatchet_nodes = &columns["time (inc)"];
    let mut compared = 0;
    for (hatchet, model) in &by_hatchet {
        let (inclusive, function) = model_columns(&profile, &model[0]);
        let total: f64 = inclusive.iter().map(|v| v.abs()).fold(0.0, f64::max);
        for (column, ours, exact) in [
            (format!("{hatchet} (inc)"), &inclusive, true),
            (hatchet.clone(), &function, false),
        ] {
            // hatchet leaves out a column without any value.
            let theirs = columns.get(&column);
            for (node, ctxs) in &ctx_of_node {
                let present = ctxs
                    .iter()
                    .filter(|c| hatchet_nodes.contains_key(c))
                    .count();
                if present == 0 {
                    continue; // outside the one entry point hatchet reads
                }
                assert_eq!(
                    present,
                    ctxs.len(),
                    "{}: node of ctxIds {ctxs:?}",
                    dir.display()
                );
                let expected: f64 = ctxs
                    .iter()
                    .map(|c| theirs.and_then(|t| t[c]).map_or(0.0, f64::from_bits))
                    .sum();
                let got = ours[node.index()];
                // A single stored value is copied, bit for bit; sums of several, and the
                // function scope rebuilt from self values, agree up to rounding.
                if exact && ctxs.len() == 1 {
                    assert_eq!(
                        got.to_bits(),
                        expected.to_bits(),
                        "{}: ctxId {ctxs:?} {column}: model {got} hatchet {expected}",
                        dir.display()
                    );
                } else {
                    assert!(
                        (got - expected).abs() <= 1e-9 * expected.abs().max(1e-3 * total),
                        "{}: ctxIds {ctxs:?} {column}: model {got} hatchet {expected}",
                        dir.display()
                    );
                }
                compared += 1;
            }
        }
    }
    Some(compared)
}

#[test]
fn profile_model_equals_hatchet() {
    let Some(python) = std::env::var_os("PROFCODEC_HATCHET_PYTHON") else {
        println!("PROFCODEC_HATCHET_PYTHON is not set; hatchet judge of the profile model not run");
        return;
    };
    let python = python.to_str().unwrap().to_owned();
    let Some(corpus) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    else {
        println!("no corpus; hatchet judge of the profile model not run");
        return;
    };
    let mut dirs: Vec<_> = std::fs::read_dir(corpus.join("dbase"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.push(corpus.join("hatchet-gamess"));
    dirs.sort();
    let mut judged = 0;
    for dir in &dirs {
        match compare_model(&python, dir) {
            Some(n) => {
                println!(
                    "{}: hatchet agrees on {n} (node, column) values",
                    dir.display()
                );
                judged += 1;
            }
            None => println!(
                "{}: no time metric or main thread; hatchet cannot read it",
                dir.display()
            ),
        }
    }
    // small, small.nostruct, loops-cputime-t (2), hatchet-gamess at least.
    assert!(judged >= 5, "hatchet judged only {judged} databases");
}
