//! The capture in the format-neutral profile model (`Walk::to_profile`, and `BlockTree::to_profile`
//! which gives the same profile), judged by what easy_profiler's own converter wrote: for every corpus capture, the per-block-name count, total
//! duration and self time are computed from the converter's JSON (its block trees, ns times and
//! descriptors; nothing of this crate's reader is used) and compared with the model's
//! `Profile::top` grouped by function, over all threads and per thread. The testdata captures
//! (written by this crate, no converter JSON) are compared with `BlockTree::totals`.
//!
//! What is compared, per (block name, source file), which is the identity of a function row:
//! - `calls`: the number of blocks. Events and values, which the converter lists as blocks, are
//!   not code that ran: the model's frames of them are markers (`FrameKind::is_marker`), left
//!   out of the rows and counted in `Table::left_out`, and out of the comparison here;
//! - `self`: the sum over blocks of their duration minus their children's durations;
//! - `inclusive`: the sum of the durations of the blocks that have no block of the same row
//!   above them (the model counts recursion once per stack), and, summed over the model's
//!   per-node values, the sum of every block's duration (the reader's statistics, which count a
//!   block nested in its own kind twice).
//!
//! Also: one context per thread with the converter's thread id and name; spans on request; and
//! the conversion's allocations bounded by the distinct call paths, not the blocks.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;

use profcodec_easyprofiler::profcodec_profile::{
    ContextFilter, GroupBy, IdKind, Profile, Query, Source, Table,
};
use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Mode, ProfileOptions, Record, RecordBody, Thread, Version,
    parse, parse_with,
};
use serde_json::Value;

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The allocation test reads the shared counter: the tests take turns.
static TURN: Mutex<()> = Mutex::new(());

/// A row's identity: (block name, source file or `None`).
type Key = (String, Option<String>);

/// Per-name statistics.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Stats {
    calls: u64,
    self_time: u64,
    /// Durations of blocks with no same-key block above them.
    inclusive: u64,
    /// Durations of every block.
    total: u64,
}

fn corpus() -> Option<Vec<PathBuf>> {
    let dir = profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")?;
    let files: Vec<PathBuf> = profcodec_testkit::corpus::files_below(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "prof"))
        .collect();
    assert!(files.len() >= 4, "expected the four corpus captures");
    Some(files)
}

/// The statistics of one JSON block and its subtree, from the converter's fields only.
fn json_block(
    node: &Value,
    files: &HashMap<u64, String>,
    open: &mut Vec<Key>,
    stats: &mut BTreeMap<Key, Stats>,
) -> u64 {
    let name = node["name"].as_str().expect("name").to_owned();
    let file = files
        .get(&node["descriptor"].as_u64().expect("descriptor"))
        .filter(|f| !f.is_empty())
        .cloned();
    let key = (name, file);
    let duration = node["stop"].as_u64().expect("stop") - node["start"].as_u64().expect("start");
    let outermost = !open.contains(&key);
    open.push(key.clone());
    let mut children = 0u64;
    for child in node
        .get("children")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        children += json_block(child, files, open, stats);
    }
    open.pop();
    let s = stats.entry(key).or_default();
    s.calls += 1;
    s.total += duration;
    s.self_time += duration.saturating_sub(children);
    if outermost {
        s.inclusive += duration;
    }
    duration
}

/// Per-thread statistics (by thread id) and the thread names, from a converter JSON.
fn json_stats(json: &Value) -> (BTreeMap<u64, BTreeMap<Key, Stats>>, HashMap<u64, String>) {
    let files: HashMap<u64, String> = json["blockDescriptors"]
        .as_array()
        .expect("descriptors")
        .iter()
        .map(|d| {
            let id = d["id"].as_u64().expect("id");
            (id, d["sourceFile"].as_str().expect("file").to_owned())
        })
        .collect();
    let mut per_thread = BTreeMap::new();
    let mut names = HashMap::new();
    for t in json["threads"].as_array().expect("threads") {
        let id = t["threadId"].as_u64().expect("thread id");
        names.insert(id, t["threadName"].as_str().expect("name").to_owned());
        let stats = per_thread.entry(id).or_insert_with(BTreeMap::new);
        for root in t
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            json_block(root, &files, &mut Vec::new(), stats);
        }
    }
    (per_thread, names)
}

fn sum(per_thread: &BTreeMap<u64, BTreeMap<Key, Stats>>) -> BTreeMap<Key, Stats> {
    let mut all: BTreeMap<Key, Stats> = BTreeMap::new();
    for stats in per_thread.values() {
        for (k, s) in stats {
            let a = all.entry(k.clone()).or_default();
            a.calls += s.calls;
            a.self_time += s.self_time;
            a.inclusive += s.inclusive;
            a.total += s.total;
        }
    }
    all
}

/// The model's function rows as statistics (`total` from the per-node values, see below).
fn model_stats(profile: &Profile, contexts: ContextFilter) -> (Table, BTreeMap<Key, Stats>) {
    let table = profile
        .top(
            &Query::new()
                .value_type("time")
                .group(GroupBy::Function)
                .contexts(contexts.clone()),
        )
        .expect("top");
    assert_eq!(table.unit, "nanoseconds");
    assert_eq!(table.source, Source::Tree);
    let mut stats = BTreeMap::new();
    for row in &table.rows {
        let key = (
            row.function.clone().expect("a block row names its block"),
            row.file.clone(),
        );
        let s = Stats {
            calls: row.calls.expect("calls counted") as u64,
            self_time: row.self_value as u64,
            inclusive: row.inclusive.expect("inclusive measured") as u64,
            total: 0,
        };
        assert!(stats.insert(key.clone(), s).is_none(), "{key:?} twice");
    }
    // Every block's duration, as the reader's statistics add them: the measured inclusive value
    // of every node, by the node's frame.
    let time = profile.value_type_by_name("time").expect("time");
    let selected: Vec<bool> = profile
        .contexts()
        .map(|(_, c)| match &contexts {
            ContextFilter::Matching(ids) => ids.iter().all(|w| c.ids.contains(w)),
            _ => true,
        })
        .collect();
    for v in profile.node_values() {
        if v.value_type != time || !selected[v.context.index()] {
            continue;
        }
        let frame = profile.frame(profile.node(v.node).frame);
        if frame.kind.is_marker() {
            continue;
        }
        let key = (
            profile.string(frame.function.expect("named")).to_owned(),
            frame.file.map(|f| profile.string(f).to_owned()),
        );
        stats.entry(key).or_default().total += v.inclusive.expect("inclusive") as u64;
    }
    (table, stats)
}

/// `theirs` without the events and values (the profile's marker frames), which the model's
/// rows leave out; checks that the table counts them.
fn blocks_only(
    profile: &Profile,
    table: &Table,
    theirs: &BTreeMap<Key, Stats>,
) -> BTreeMap<Key, Stats> {
    let markers: std::collections::BTreeSet<Key> = profile
        .frames()
        .map(|(_, f)| f)
        .filter(|f| f.kind.is_marker())
        .map(|f| {
            (
                profile.string(f.function.expect("named")).to_owned(),
                f.file.map(|s| profile.string(s).to_owned()),
            )
        })
        .collect();
    let left_out = theirs.keys().filter(|k| markers.contains(*k)).count();
    assert_eq!(
        table.left_out.values + table.left_out.events,
        left_out,
        "markers left out"
    );
    theirs
        .iter()
        .filter(|(k, _)| !markers.contains(*k))
        .map(|(k, s)| (k.clone(), *s))
        .collect()
}

fn assert_same(ours: &BTreeMap<Key, Stats>, theirs: &BTreeMap<Key, Stats>, what: &str) {
    // The model leaves out rows with no value at all; the JSON has none such (every block
    // counts a call).
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{what}: block names"
    );
    for (k, s) in theirs {
        assert_eq!(&ours[k], s, "{what}: {k:?}");
    }
}

#[test]
fn corpus_per_name_statistics_equal_the_converter_json() {
    let Some(files) = corpus() else { return };
    for path in files {
        let name = path.display().to_string();
        let data = std::fs::read(&path).expect("read capture");
        let json: Value =
            serde_json::from_slice(&std::fs::read(path.with_extension("json")).expect("read json"))
                .expect("parse json");
        let (per_thread, thread_names) = json_stats(&json);

        let view = parse_with(&data, Mode::Strict).expect("strict");
        let profile = view.walk().expect("walk").to_profile().expect("profile");
        let tree = view.tree().expect("tree").to_profile().expect("profile");
        assert_eq!(tree, profile, "{name}: the tree's profile");

        // One context per thread, with the converter's id and name.
        assert_eq!(
            profile.contexts().len(),
            per_thread.len(),
            "{name}: threads"
        );
        for (id, c) in profile.contexts() {
            let tid = c.id(IdKind::Thread).expect("a thread id");
            let theirs = &thread_names[&tid];
            assert_eq!(
                c.name.map(|s| profile.string(s)).unwrap_or(""),
                theirs,
                "{name}: thread {tid}"
            );
            assert!(profile.context_label(id).contains(&tid.to_string()));
        }

        // Over all threads.
        let (table, ours) = model_stats(&profile, ContextFilter::Whole);
        let theirs = blocks_only(&profile, &table, &sum(&per_thread));
        assert_same(&ours, &theirs, &name);
        let total_self: u64 = theirs.values().map(|s| s.self_time).sum();
        assert_eq!(table.total.self_value as u64, total_self, "{name}: total");
        assert!(
            theirs.values().any(|s| s.self_time > 0),
            "{name}: timed blocks"
        );

        // Per thread.
        for (tid, theirs) in &per_thread {
            let filter = ContextFilter::Matching(vec![(IdKind::Thread, *tid)]);
            let (table, ours) = model_stats(&profile, filter);
            let theirs = blocks_only(&profile, &table, theirs);
            assert_same(&ours, &theirs, &format!("{name}: thread {tid}"));
        }
    }
}

#[test]
fn testdata_per_name_statistics_equal_the_tree_totals() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
    let mut n = 0;
    for path in profcodec_testkit::corpus::files_below(&dir) {
        if path.extension().is_none_or(|e| e != "prof") {
            continue;
        }
        let name = path.display().to_string();
        let data = std::fs::read(&path).expect("read");
        let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
        let profile = tree.to_profile().expect("profile");
        let mut theirs: BTreeMap<Key, Stats> = BTreeMap::new();
        for t in tree.totals() {
            let d = tree.descriptor(t.descriptor).expect("descriptor");
            let file = String::from_utf8_lossy(d.descriptor.file.as_bytes()).into_owned();
            let key = (d.name().to_string(), Some(file).filter(|f| !f.is_empty()));
            let s = theirs.entry(key).or_default();
            s.calls += t.count;
            s.self_time += t.self_time;
            s.total += t.total;
        }
        let walked = parse(&data).and_then(|v| v.walk()).expect("walk");
        assert_eq!(
            walked.to_profile().expect("profile"),
            profile,
            "{name}: walk"
        );
        let (table, mut ours) = model_stats(&profile, ContextFilter::Whole);
        let theirs = blocks_only(&profile, &table, &theirs);
        // `totals` has no recursion-once figure: compare the others.
        for s in ours.values_mut() {
            s.inclusive = 0;
        }
        assert_same(&ours, &theirs, &name);
        assert_eq!(profile.contexts().len(), tree.threads.len(), "{name}");
        n += 1;
    }
    assert_eq!(n, 6, "the six testdata captures");
}

fn descriptor(id: u32, name: &str) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line: 10 + id as i32,
        color: 0xff00_ff00,
        block_type: 1,
        status: 1,
        name: name.as_bytes().to_vec(),
        file: b"f.cpp".to_vec(),
    }))
}

fn block(begin: u64, end: u64, descriptor: u32) -> Record {
    Record {
        begin,
        end,
        descriptor,
        body: RecordBody::Named(Vec::new()),
    }
}

fn capture(names: &[&str], threads: Vec<(u64, Vec<Record>)>) -> Vec<u8> {
    let end = threads
        .iter()
        .flat_map(|(_, r)| r.iter().map(|r| r.end))
        .max()
        .unwrap_or(0)
        + 1;
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: end,
        descriptors: names
            .iter()
            .enumerate()
            .map(|(i, n)| descriptor(i as u32, n))
            .collect(),
        threads: threads
            .into_iter()
            .map(|(id, records)| Thread {
                id,
                name: Some(format!("T{id}").into_bytes()),
                context_switches: Vec::new(),
                records,
            })
            .collect(),
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    c.to_bytes().expect("writable")
}

#[test]
fn recursion_counts_once_in_inclusive_and_twice_in_the_node_totals() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // rec [0, 100) > rec [10, 60) > leaf [20, 30); post-order: leaf, inner rec, outer rec.
    let data = capture(
        &["rec", "leaf"],
        vec![(
            1,
            vec![block(20, 30, 1), block(10, 60, 0), block(0, 100, 0)],
        )],
    );
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    let profile = tree.to_profile().expect("profile");
    let (table, stats) = model_stats(&profile, ContextFilter::Whole);
    let rec = stats[&("rec".to_owned(), Some("f.cpp".to_owned()))];
    assert_eq!(
        rec,
        Stats {
            calls: 2,
            self_time: 50 + 40,
            inclusive: 100,
            total: 150
        }
    );
    let reader = tree.totals()[0];
    assert_eq!((reader.count, reader.self_time, reader.total), (2, 90, 150));
    assert_eq!(table.total.self_value, 100.0);
    assert_eq!(table.rows[0].name, "rec");
    // rec > rec > leaf: three call paths.
    assert_eq!(profile.nodes().len(), 3);
    // By line, the descriptor's line.
    let lines = profile
        .top(&Query::new().group(GroupBy::Line))
        .expect("top by line");
    assert_eq!(lines.rows[0].name, "f.cpp:10");
}

#[test]
fn spans_on_request_hold_every_block() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let data = capture(
        &["frame", "leaf"],
        vec![
            (1, vec![block(1, 2, 1), block(3, 4, 1), block(0, 5, 0)]),
            (2, vec![block(7, 9, 0)]),
        ],
    );
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    assert!(tree.to_profile().expect("profile").spans().is_empty());
    let profile = tree
        .to_profile_with(ProfileOptions::new().spans(true))
        .expect("profile");
    let mut spans: Vec<(u64, u64, String, u64)> = profile
        .spans()
        .iter()
        .map(|s| {
            let frame = profile.node(s.node).frame;
            let tid = profile.context(s.context).id(IdKind::Thread).expect("tid");
            (s.begin, s.end, profile.frame_label(frame), tid)
        })
        .collect();
    spans.sort();
    assert_eq!(
        spans,
        [
            (0, 5, "frame".to_owned(), 1),
            (1, 2, "leaf".to_owned(), 1),
            (3, 4, "leaf".to_owned(), 1),
            (7, 9, "frame".to_owned(), 2),
        ]
    );
    assert_eq!(
        profile.span_unit().map(|u| profile.unit_name(u)),
        Some("nanoseconds")
    );
    // The two leaves share one node; a span names its node's whole path.
    let leaf = profile.spans().iter().find(|s| s.begin == 1).expect("leaf");
    let stack: Vec<String> = profile
        .stack(leaf.node)
        .map(|f| profile.frame_label(f))
        .collect();
    assert_eq!(stack, ["leaf", "frame"]);
}

#[test]
fn conversion_memory_grows_with_call_paths_not_blocks() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // 100,000 frames of frame > (stage > leaf, leaf) on one thread: 400,000 blocks over 4 paths.
    const FRAMES: u64 = 100_000;
    let mut records = Vec::new();
    for f in 0..FRAMES {
        let t = f * 100;
        records.extend([
            block(t + 2, t + 3, 2),
            block(t + 1, t + 10, 1),
            block(t + 20, t + 30, 2),
            block(t, t + 50, 0),
        ]);
    }
    let data = capture(&["frame", "stage", "leaf"], vec![(1, records)]);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    let before = A.total_allocated();
    let profile = tree.to_profile().expect("profile");
    let used = A.total_allocated() - before;
    println!(
        "to_profile of {} blocks: {used} bytes allocated",
        4 * FRAMES
    );
    assert_eq!(profile.nodes().len(), 4);
    assert!(used < 64 << 10, "{used} bytes allocated for 4 call paths");
    let top = profile.top(&Query::new()).expect("top");
    let leaf = top.rows.iter().find(|r| r.name == "leaf").expect("leaf");
    assert_eq!(leaf.calls, Some(2.0 * FRAMES as f64));
    assert_eq!(leaf.self_value, 11.0 * FRAMES as f64);
    let frame = &top.rows.iter().find(|r| r.name == "frame").expect("frame");
    assert_eq!(frame.inclusive, Some(50.0 * FRAMES as f64));
    assert_eq!(frame.self_value, (50.0 - 19.0) * FRAMES as f64);
}

#[test]
fn a_block_with_many_kinds_of_children_gets_one_node_each() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // 3 frames, each with 20 children of distinct descriptors (more than the short child list
    // holds), walked three times.
    let names: Vec<String> = (0..21).map(|i| format!("b{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut records = Vec::new();
    for f in 0..3u64 {
        let t = f * 2000;
        for c in 1..21u64 {
            records.push(block(t + 30 * c, t + 30 * c + c, c as u32));
        }
        records.push(block(t, t + 1000, 0));
    }
    let data = capture(&names, vec![(1, records)]);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    let profile = tree.to_profile().expect("profile");
    assert_eq!(profile.nodes().len(), 21);
    let (_, stats) = model_stats(&profile, ContextFilter::Whole);
    for c in 1..21u64 {
        let s = stats[&(format!("b{c}"), Some("f.cpp".to_owned()))];
        assert_eq!((s.calls, s.self_time, s.inclusive), (3, 3 * c, 3 * c));
    }
    let root = stats[&("b0".to_owned(), Some("f.cpp".to_owned()))];
    assert_eq!((root.calls, root.self_time), (3, 3 * (1000 - 210)));
}

#[test]
fn deep_nesting_costs_linear_memory() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // One chain of 100,000 nested blocks of one descriptor (the tolerant mode reads beyond the
    // C++ reader's depth limit): every level is a distinct call path.
    const DEPTH: u64 = 100_000;
    let records = (0..DEPTH)
        .rev()
        .map(|d| block(d, 2 * DEPTH - d, 0))
        .collect();
    let data = capture(&["rec"], vec![(1, records)]);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tolerant tree");
    let before = A.total_allocated();
    let profile = tree.to_profile().expect("profile");
    let used = A.total_allocated() - before;
    println!(
        "to_profile of a {DEPTH}-deep chain ({} bytes): {used} bytes allocated",
        data.len()
    );
    assert_eq!(profile.nodes().len(), DEPTH as usize);
    // The builder's tables and hash indexes (two node values a path), the child lists, the
    // per-node sums and the walk's stack, counted with every reallocation of their growth:
    // about 670 bytes per distinct path (29 x this input, whose every block is a new path).
    assert!(
        used < 1024 * DEPTH as usize,
        "{used} bytes for {DEPTH} paths"
    );
    let top = profile.top(&Query::new()).expect("top");
    assert_eq!(top.rows.len(), 1);
    assert_eq!(top.rows[0].calls, Some(DEPTH as f64));
    assert_eq!(top.rows[0].inclusive, Some(2.0 * DEPTH as f64));
    assert_eq!(top.rows[0].self_value, 2.0 * DEPTH as f64);
}
