//! The profile model ([`Database::to_profile`]) against the database's own values:
//!
//! - `top` by function equals hpcviewer's flat view computed straight from the summary
//!   profile's scopes ([`Database::context_costs`]): per function, exclusive = the sum of the
//!   `function` scope over its contexts, inclusive = the sum of the `execution` scope over its
//!   contexts without an ancestor context of the same function (recursion counted once);
//! - self values add up to the whole program (the global context's `execution` value);
//! - with every profile read, each per-profile inclusive value equals cct.db's copy of it, and
//!   the per-profile values summed equal the summary profile's sums;
//! - memory: the summary-only model of a database of many profiles costs what one profile's
//!   model costs.
//!
//! Every corpus database and `testdata/hpctoolkit/demo.d`.
#![allow(clippy::unwrap_used)] // test helpers may unwrap

use std::alloc::System;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cap::Cap;
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_hpctoolkit::read::ContextNode;
use profcodec_hpctoolkit::write::synthetic::{Synthetic, SyntheticConfig};
use profcodec_profile::{ContextFilter, GroupBy, Order, Query};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

/// The allocator counts every thread: the tests take turns so that one's count is its own.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn databases() -> Vec<PathBuf> {
    let mut dirs =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d")];
    if let Some(corpus) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        let mut found: Vec<_> = std::fs::read_dir(corpus.join("dbase"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        found.sort();
        dirs.extend(found);
        dirs.push(corpus.join("hatchet-gamess"));
    }
    dirs
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(scale)
}

/// A function as both sides name it: (name, file, module).
type Key = (Option<String>, Option<String>, Option<String>);

/// hpcviewer's flat view of `metric` (exclusive, inclusive per function), from the database.
fn flat_view(db: &Database, metric: &str) -> HashMap<Key, (f64, f64)> {
    let meta = db.meta();
    let costs: HashMap<u32, (f64, f64)> = db
        .context_costs(metric)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|c| (c.ctx_id, (c.exclusive, c.inclusive)))
        .collect();
    let mut view: HashMap<Key, (f64, f64)> = HashMap::new();
    // The functions on the path from the entry point, to count recursion once.
    let mut path: Vec<Option<Key>> = Vec::new();
    for node in meta.walk() {
        let node = node.unwrap();
        path.truncate(node.depth as usize);
        let key = match node.node {
            ContextNode::Context(c) if c.function.is_some() && c.relation.0 != 0 => {
                let f = meta.function(c.function.unwrap()).unwrap();
                Some((
                    f.name.map(str::to_owned),
                    f.file.map(|i| meta.file(i).unwrap().path.to_owned()),
                    f.module.map(|i| meta.module(i).unwrap().path.to_owned()),
                ))
            }
            _ => None,
        };
        if let Some(key) = &key {
            let (exclusive, inclusive) =
                costs.get(&node.node.ctx_id()).copied().unwrap_or_default();
            let outermost = !path.iter().any(|k| k.as_ref() == Some(key));
            let entry = view.entry(key.clone()).or_default();
            entry.0 += exclusive;
            if outermost {
                entry.1 += inclusive;
            }
        }
        path.push(key);
    }
    view
}

#[test]
fn top_by_function_is_hpcviewers_flat_view() {
    let _serial = serial();
    let mut rows = 0;
    for dir in databases() {
        let db = Database::open(&dir).unwrap();
        let profile = db.to_profile(&ProfileOptions::new()).unwrap();
        for (vt, _) in profile.value_types() {
            let name = profile.value_type_name(vt).to_owned();
            let view = flat_view(&db, &name);
            let top = profile
                .top(&Query::new().value_type(&name).group(GroupBy::Function))
                .unwrap();
            let scale = top.total.inclusive.unwrap_or(0.0).abs() * 1e-3;
            for row in &top.rows {
                if row.function.is_none() {
                    continue; // calls to addresses without a function
                }
                let key = (row.function.clone(), row.file.clone(), row.module.clone());
                let Some(&(exclusive, inclusive)) = view.get(&key) else {
                    // Entry points are roots of the model, not functions of the flat view.
                    assert_eq!(row.self_value, 0.0, "{}: {name} {key:?}", dir.display());
                    continue;
                };
                assert!(
                    close(row.self_value, exclusive, scale),
                    "{}: {name} {key:?}: self {} but exclusive {exclusive}",
                    dir.display(),
                    row.self_value
                );
                let ours = row.inclusive.unwrap();
                assert!(
                    close(ours, inclusive, scale),
                    "{}: {name} {key:?}: inclusive {ours} but flat view {inclusive}",
                    dir.display()
                );
                rows += 1;
            }
            // Every function of the flat view with a cost is a row.
            let listed = top.rows.len();
            let costly = view.values().filter(|v| v.0 != 0.0 || v.1 != 0.0).count();
            assert!(listed >= costly, "{}: {name}", dir.display());
        }
    }
    assert!(rows > 1000, "only {rows} rows compared");
}

#[test]
fn self_values_add_up_to_the_whole_program() {
    let _serial = serial();
    for dir in databases() {
        let db = Database::open(&dir).unwrap();
        let profile = db.to_profile(&ProfileOptions::new()).unwrap();
        let summary = db.profile().unwrap().profile(0).unwrap();
        for (vt, _) in profile.value_types() {
            let name = profile.value_type_name(vt).to_owned();
            let top = profile
                .top(&Query::new().value_type(&name).limit(0))
                .unwrap();
            let (inclusive_sum, _) = sum_ids(&db, &name);
            // The global context (ctxId 0) holds the whole program's execution value.
            let whole = summary.value(0, inclusive_sum).unwrap_or(0.0);
            assert!(
                close(top.total.self_value, whole, 0.0),
                "{}: {name}: self values add up to {} but the program's total is {whole}",
                dir.display(),
                top.total.self_value
            );
            assert!(close(top.total.inclusive.unwrap(), whole, 0.0));
        }
    }
}

/// The `$$` sum statistic ids of a metric's execution and function scopes.
fn sum_ids(db: &Database, name: &str) -> (u16, u16) {
    let meta = db.meta();
    let metric = meta.metric_by_name(name).unwrap().unwrap();
    let mut ids = (u16::MAX, u16::MAX);
    for s in meta.summaries(&metric) {
        let s = s.unwrap();
        match meta.scope(s.scope).unwrap().name {
            "execution" if s.combine.0 == 0 => ids.0 = s.stat_metric_id,
            "function" if s.combine.0 == 0 => ids.1 = s.stat_metric_id,
            _ => {}
        }
    }
    ids
}

#[test]
fn per_profile_values_equal_cct_db_and_sum_to_the_summary() {
    let _serial = serial();
    for dir in databases() {
        let db = Database::open(&dir).unwrap();
        let (profile, nodes) = db
            .to_profile_with_nodes(&ProfileOptions::new().profiles(Profiles::All))
            .unwrap();
        let profiles = db.profile().unwrap();
        let cct = db.cct().unwrap();
        // One context per identifier tuple, plus the summary.
        assert_eq!(profile.contexts().len() as u32, profiles.profile_count());
        // profIndex -> model context, by identifier tuple order (profile i is context i).
        let meta = db.meta();
        for (vt, _) in profile.value_types() {
            let name = profile.value_type_name(vt).to_owned();
            let metric = meta.metric_by_name(&name).unwrap().unwrap();
            let execution = meta
                .scope_instances(&metric)
                .map(|s| s.unwrap())
                .find(|s| meta.scope(s.scope).unwrap().name == "execution")
                .unwrap()
                .prop_metric_id;
            let mut ours: HashMap<(u32, u32), f64> = HashMap::new();
            for v in profile.node_values() {
                if v.value_type == vt && !profile.context(v.context).summary {
                    *ours
                        .entry((v.context.index() as u32, v.node.index() as u32))
                        .or_default() += v.inclusive.unwrap_or(0.0);
                }
            }
            let mut theirs: HashMap<(u32, u32), f64> = HashMap::new();
            for (ctx_id, node) in nodes.iter() {
                let Ok(values) = cct.context(ctx_id) else {
                    continue;
                };
                for v in values.profiles_of(execution) {
                    *theirs
                        .entry((v.prof_index(), node.index() as u32))
                        .or_default() += v.value();
                }
            }
            theirs.retain(|_, v| *v != 0.0);
            ours.retain(|_, v| *v != 0.0);
            assert_eq!(ours.len(), theirs.len(), "{}: {name}", dir.display());
            for (key, value) in &theirs {
                let got = ours.get(key).copied().unwrap_or(f64::NAN);
                assert!(
                    close(got, *value, 0.0),
                    "{}: {name} profile/node {key:?}: model {got} cct.db {value}",
                    dir.display()
                );
            }
            // The summary's sums are the profiles' values added up.
            for order in [Order::SelfValue, Order::Inclusive] {
                let q = Query::new().value_type(&name).by(order);
                let whole = profile.top(&q.clone()).unwrap();
                let all = profile.top(&q.contexts(ContextFilter::All)).unwrap();
                let scale = whole.total.inclusive.unwrap_or(0.0).abs() * 1e-6;
                assert!(close(whole.total.self_value, all.total.self_value, scale));
                for (a, b) in whole.rows.iter().zip(&all.rows).take(10) {
                    assert!(
                        close(a.self_value, b.self_value, scale)
                            || close(a.inclusive.unwrap(), b.inclusive.unwrap(), scale),
                        "{}: {name}: {} {} vs {} {}",
                        dir.display(),
                        a.name,
                        a.self_value,
                        b.name,
                        b.self_value
                    );
                }
            }
        }
    }
}

#[test]
fn summary_only_memory_does_not_grow_with_profiles() {
    let _serial = serial();
    let dir = std::env::temp_dir().join(format!("profcodec-profile-mem-{}", std::process::id()));
    let mut allocated = Vec::new();
    for profiles in [2, 200] {
        let config = SyntheticConfig {
            profiles,
            contexts: 2000,
            metrics: 2,
            trace_elems: 0,
            trace_run: 1,
            samples: 0,
            seed: 3,
        };
        let out = dir.join(profiles.to_string());
        Synthetic::new(config).write_dir(&out, 1 << 20).unwrap();
        let db = Database::open(&out).unwrap();
        let before = ALLOCATOR.total_allocated();
        let profile = db.to_profile(&ProfileOptions::new()).unwrap();
        allocated.push(ALLOCATOR.total_allocated() - before);
        println!(
            "{profiles} profiles: summary-only model allocated {} bytes",
            allocated.last().unwrap()
        );
        assert_eq!(profile.contexts().len(), 1);
        let all = db
            .to_profile(&ProfileOptions::new().profiles(Profiles::All))
            .unwrap();
        assert_eq!(all.contexts().len(), profiles as usize + 1);
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // A hundred times the profiles: the summary-only model allocates the same, give or take
    // the profile infos' iteration (nothing per profile is kept).
    assert!(
        allocated[1] < allocated[0] + allocated[0] / 4,
        "summary-only model: {allocated:?} bytes for 2 and 200 profiles"
    );
}
