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
#![allow(clippy::unwrap_used)] // test helpers may unwrap

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

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
        samples: 0,
        seed: 7,
    };
    let dir = base.join("synthetic");
    Synthetic::new(config).write_dir(&dir, 4096).unwrap();
    let n = compare(&python, &dir);
    println!("synthetic: hatchet agrees on {n} nodes");

    // hatchet's own test database, rewritten by profcodec.
    if let Some(corpus) =
        profcodec_common::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
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
