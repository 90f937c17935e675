//! Every corpus capture and database with a trace converts, and what the output holds is judged
//! against profcodec's readers: the Perfetto output decoded by Perfetto's own generated classes
//! (PyPI `perfetto`, `perfetto_trace_pb2`, through `perfetto_decode.py`), the Chrome output
//! parsed as JSON. Tracks, slices (EasyProfiler: exactly one per block), names, nesting and
//! timestamps must be equal.
//!
//! The Perfetto half runs when `PROFCODEC_PERFETTO_PYTHON` names a Python with `perfetto`
//! installed (`cargo xtask test` makes a venv under `target/` and sets it); otherwise it prints
//! one line and only the Chrome half runs.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use profcodec_easyprofiler::BlockTree;
use profcodec_hpcrun::{MeasurementFolder, ProfileConverter};
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::ProfileOptions;
use profcodec_profile::{NodeId, Profile};
use profcodec_timeline::{Filter, Format, Summary, TimelineWriter};
use serde_json::Value;

/// A slice as both outputs and the reference spell it: (track name, name, begin, end, depth).
type Slice = (String, String, u64, u64, u64);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

fn convert(input: &Path, format: Format, filter: Filter) -> (Vec<u8>, Summary) {
    let mut w = TimelineWriter::new(Vec::new(), format, filter);
    let summary = w.add_path(input).unwrap_or_else(|e| panic!("{e}"));
    (w.finish().unwrap(), summary)
}

/// The Perfetto output decoded by Perfetto's classes, or `None` without the venv.
fn decoded(bytes: &[u8]) -> Option<Value> {
    let python = std::env::var_os("PROFCODEC_PERFETTO_PYTHON")?;
    let file = std::env::temp_dir().join(format!(
        "profcodec-timeline-{}-{:?}.pftrace",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/perfetto_decode.py"))
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(
        out.status.success(),
        "perfetto_decode.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The decoded Perfetto trace's slices (on tracks of the given kinds) and track count.
fn perfetto_slices(d: &Value, kinds: &[&str]) -> (Vec<Slice>, usize) {
    let tracks: HashMap<u64, (&str, &str)> = d["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["uuid"].as_u64().unwrap(),
                (t["name"].as_str().unwrap(), t["kind"].as_str().unwrap()),
            )
        })
        .collect();
    let mut slices: Vec<Slice> = d["slices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let (track, kind) = tracks[&s["track"].as_u64().unwrap()];
            kinds.contains(&kind).then(|| {
                (
                    track.to_owned(),
                    s["name"].as_str().unwrap().to_owned(),
                    s["begin"].as_u64().unwrap(),
                    s["end"].as_u64().unwrap(),
                    s["depth"].as_u64().unwrap(),
                )
            })
        })
        .collect();
    slices.sort();
    (slices, tracks.len())
}

/// The Chrome output's slices, per lane named by its `thread_name` metadata.
fn chrome_slices(bytes: &[u8]) -> Vec<Slice> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    let mut names: HashMap<(i64, i64), String> = HashMap::new();
    let mut open: HashMap<(i64, i64), Vec<(String, u64)>> = HashMap::new();
    let mut out = Vec::new();
    // Microseconds as a JSON reader gets them (a double): compared as such, see `as_chrome`.
    let ns = |e: &Value| -> u64 { e["ts"].as_f64().unwrap().to_bits() };
    for e in v["traceEvents"].as_array().unwrap() {
        let lane = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "thread_name" => {
                names.insert(lane, e["args"]["name"].as_str().unwrap().to_owned());
            }
            "B" => open
                .entry(lane)
                .or_default()
                .push((e["name"].as_str().unwrap().to_owned(), ns(e))),
            "E" => {
                let stack = open.get_mut(&lane).unwrap();
                let (name, begin) = stack.pop().unwrap();
                let track = names.get(&lane).cloned().unwrap_or_default();
                out.push((track, name, begin, ns(e), stack.len() as u64));
            }
            _ => {}
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open");
    out.sort();
    out
}

/// Slices with their times as a JSON reader of the Chrome output gets them: the microseconds
/// with three decimals the writer prints, read as a double (its bits, which order as the times).
fn as_chrome(slices: &[Slice]) -> Vec<Slice> {
    let us = |ns: u64| -> u64 {
        format!("{}.{:03}", ns / 1000, ns % 1000)
            .parse::<f64>()
            .unwrap()
            .to_bits()
    };
    let mut out: Vec<Slice> = slices
        .iter()
        .map(|s| (s.0.clone(), s.1.clone(), us(s.2), us(s.3), s.4))
        .collect();
    out.sort();
    out
}

fn from_chrome(slices: &[Slice]) -> Vec<Slice> {
    let ns = |bits: u64| (f64::from_bits(bits) * 1000.0).round() as u64;
    slices
        .iter()
        .map(|s| (s.0.clone(), s.1.clone(), ns(s.2), ns(s.3), s.4))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// EasyProfiler

fn captures() -> Vec<PathBuf> {
    let mut files = profcodec_testkit::corpus::files_below(&root().join("testdata/easyprofiler"));
    if let Some(c) = corpus() {
        files.extend(profcodec_testkit::corpus::files_below(
            &c.join("easyprofiler"),
        ));
    }
    files.retain(|p| p.extension().is_some_and(|e| e == "prof"));
    files
}

/// Every block of the capture (descriptor type 1; events and values are not slices), from the
/// reader's tree: (thread name, block name, begin, end, depth).
fn blocks(tree: &BlockTree<'_>) -> Vec<Slice> {
    let mut out = Vec::new();
    for th in &tree.threads {
        let label = if th.name.is_empty() {
            format!("thread {}", th.id)
        } else {
            th.name.to_string()
        };
        for f in th.flat() {
            let d = tree.descriptor(f.node.descriptor).unwrap();
            if matches!(d.descriptor.block_type, 0 | 2) {
                continue;
            }
            out.push((
                label.clone(),
                d.name().to_string(),
                f.node.begin,
                f.node.end,
                u64::from(f.depth),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn easyprofiler_captures_one_slice_per_block() {
    let files = captures();
    assert!(files.len() >= 4 || corpus().is_none(), "{files:?}");
    let mut judged = false;
    for path in files {
        let data = std::fs::read(&path).unwrap();
        let view = profcodec_easyprofiler::parse(&data).unwrap();
        let tree = view.tree().unwrap();
        let expected = blocks(&tree);
        let name = path.display();

        let (json, _) = convert(&path, Format::Chrome, Filter::new());
        let mut chrome = chrome_slices(&json);
        chrome.retain(|s| s.0 != "capture" && s.0 != "context switches");
        assert_eq!(chrome, as_chrome(&expected), "{name}: Chrome slices");

        let (bytes, summary) = convert(&path, Format::Perfetto, Filter::new());
        let Some(d) = decoded(&bytes) else { continue };
        judged = true;
        let (slices, tracks) = perfetto_slices(&d, &["thread"]);
        assert_eq!(tracks as u64, summary.tracks, "{name}: tracks");
        assert_eq!(
            slices, expected,
            "{name}: one slice per block, same names, times, nesting"
        );
        let threads: Vec<&Value> = d["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "thread")
            .collect();
        assert_eq!(threads.len(), tree.threads.len(), "{name}: thread tracks");
        for (t, th) in threads.iter().zip(&tree.threads) {
            assert_eq!(t["tid"].as_u64(), Some(th.id), "{name}");
            assert_eq!(t["pid"].as_u64(), Some(view.header().pid), "{name}");
        }
        // Every block's source location is its descriptor's.
        for s in d["slices"].as_array().unwrap() {
            if s["file"].is_string() {
                assert!(
                    tree.descriptors().flatten().any(|d| {
                        d.descriptor.file.as_bytes() == s["file"].as_str().unwrap().as_bytes()
                            && i64::from(d.descriptor.line) == s["line"].as_i64().unwrap()
                    }),
                    "{name}: {s}"
                );
            }
        }
        let events: usize = tree
            .threads
            .iter()
            .flat_map(|t| &t.nodes)
            .filter(|n| tree.descriptor(n.descriptor).unwrap().descriptor.block_type == 0)
            .count();
        let instants = d["instants"].as_array().unwrap().len();
        assert!(
            instants >= events,
            "{name}: {instants} instants, {events} events"
        );
        assert_eq!(
            d["counters"].as_array().unwrap().len() as u64,
            summary.counter_values
        );
    }
    if !judged {
        println!("PROFCODEC_PERFETTO_PYTHON is not set; Perfetto decoding of captures not run");
    }
}

// ---------------------------------------------------------------------------------------------
// HPCToolkit and hpcrun: the reference is hpcviewer's rule computed naively, sample by sample.

/// The procedure frames (function-like nodes) of `node`'s call path, outermost first.
fn procedure_path(profile: &Profile, node: Option<NodeId>) -> Vec<NodeId> {
    let mut path: Vec<NodeId> = std::iter::successors(node, |&n| profile.node(n).parent)
        .filter(|&n| profile.frame(profile.node(n).frame).kind.is_function_like())
        .collect();
    path.reverse();
    path
}

/// Slices of one line: at each depth, every maximal run of consecutive samples whose paths
/// share the prefix up to that depth; a run lasts until the next sample, the last until `end`.
fn reference(
    track: &str,
    profile: &Profile,
    samples: &[(u64, Option<NodeId>)],
    end: u64,
) -> Vec<Slice> {
    let paths: Vec<Vec<NodeId>> = samples
        .iter()
        .map(|&(_, n)| procedure_path(profile, n))
        .collect();
    let depth = paths.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for d in 0..depth {
        let mut i = 0;
        while i < samples.len() {
            if paths[i].len() <= d {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < samples.len() && paths[j].len() > d && paths[j][..=d] == paths[i][..=d] {
                j += 1;
            }
            let stop = samples.get(j).map_or(end, |s| s.0);
            let name = profile.frame_label(profile.node(paths[i][d]).frame);
            out.push((track.to_owned(), name, samples[i].0, stop, d as u64));
            i = j;
        }
    }
    out.sort();
    out
}

fn databases() -> Vec<PathBuf> {
    let mut dirs = vec![root().join("testdata/hpctoolkit/demo.d")];
    if let Some(c) = corpus() {
        dirs.extend(
            profcodec_testkit::corpus::files_below(&c.join("hpctoolkit"))
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n == "trace.db"))
                .filter_map(|p| p.parent().map(Path::to_path_buf)),
        );
    }
    dirs
}

fn check(input: &Path, expected: &[Slice], tracks: usize) {
    let name = input.display();
    let (json, summary) = convert(input, Format::Chrome, Filter::new());
    assert_eq!(
        chrome_slices(&json),
        as_chrome(expected),
        "{name}: Chrome slices"
    );
    assert_eq!(summary.slices as usize, expected.len(), "{name}");
    let (bytes, summary) = convert(input, Format::Perfetto, Filter::new());
    if let Some(d) = decoded(&bytes) {
        let (slices, n) = perfetto_slices(&d, &["track"]);
        assert_eq!(slices, expected, "{name}: Perfetto slices");
        assert_eq!(n, tracks, "{name}: tracks");
        assert_eq!(n as u64, summary.tracks, "{name}: tracks");
    }
}

#[test]
fn hpctoolkit_traces_are_hpcviewer_depth_slices() {
    let dbs = databases();
    assert!(dbs.len() >= 12 || corpus().is_none());
    for dir in dbs {
        let db = Database::open(&dir).unwrap();
        let (profile, nodes) = db.to_profile_with_nodes(&ProfileOptions::new()).unwrap();
        let traces = db.trace().unwrap();
        let profiles = db.profile().unwrap();
        let mut expected = Vec::new();
        let mut ranks = std::collections::BTreeSet::new();
        for t in traces.traces() {
            let t = t.unwrap();
            let tuple = profiles.profile(t.prof_index).unwrap().id_tuple.unwrap();
            ranks.insert(
                tuple
                    .ids
                    .iter()
                    .find(|i| i.kind == 2)
                    .map_or(0, |i| i.logical_id.get()),
            );
            let samples: Vec<(u64, Option<NodeId>)> = t
                .elems
                .iter()
                .map(|e| (e.timestamp(), nodes.node(e.ctx_id())))
                .collect();
            expected.extend(reference(
                &tuple.to_string(),
                &profile,
                &samples,
                traces.max_timestamp(),
            ));
        }
        expected.sort();
        check(&dir, &expected, ranks.len() + traces.trace_count() as usize);
    }
}

#[test]
fn hpcrun_traces_are_hpcviewer_depth_slices() {
    let Some(c) = corpus() else { return };
    let mut folders: Vec<PathBuf> = std::fs::read_dir(c.join("hpctoolkit/meas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            std::fs::read_dir(p).unwrap().any(|f| {
                f.unwrap()
                    .path()
                    .extension()
                    .is_some_and(|e| e == "hpctrace")
            })
        })
        .collect();
    folders.sort();
    assert!(folders.len() >= 6);
    for dir in folders {
        let folder = MeasurementFolder::open(&dir).unwrap();
        let mut expected = Vec::new();
        let mut tracks = 0;
        let mut ranks = std::collections::BTreeSet::new();
        for thread in folder.threads() {
            let Some(trace) = thread.read_trace() else {
                continue;
            };
            let trace = trace.unwrap();
            let m = thread.read_profile().unwrap().unwrap();
            let mut converter = ProfileConverter::new();
            let (context, nodes) = converter.add_with_nodes(&m, Some(thread)).unwrap();
            let profile = converter.finish();
            let ids = &profile.context(context).ids;
            ranks.insert(
                ids.iter()
                    .find(|(k, _)| *k == profcodec_profile::IdKind::Rank)
                    .map_or(0, |i| i.1),
            );
            let label = ids
                .iter()
                .map(|&(k, v)| format!("{} {v}", k.name().unwrap().replace('_', "").to_uppercase()))
                .collect::<Vec<_>>()
                .join(" / ");
            let node = |ctx: u32| {
                nodes
                    .binary_search_by_key(&(ctx as i32), |e| e.0)
                    .ok()
                    .map(|i| nodes[i].1)
            };
            let samples: Vec<(u64, Option<NodeId>)> = trace
                .records
                .iter()
                .map(|r| (r.time, node(r.ctx)))
                .collect();
            let last = samples.last().map_or(0, |s| s.0);
            let end = m
                .header_value("trace-max-time")
                .and_then(|v| v.to_string_lossy().parse::<u64>().ok())
                .unwrap_or(last)
                .max(last);
            expected.extend(reference(&label, &profile, &samples, end));
            tracks += 1;
        }
        expected.sort();
        check(&dir, &expected, tracks + ranks.len());
    }
}

#[test]
fn filters_keep_threads_ranks_a_window_and_a_depth() {
    let demo = root().join("testdata/hpctoolkit/demo.d");
    let slices = |f: Filter| from_chrome(&chrome_slices(&convert(&demo, Format::Chrome, f).0));
    let all = slices(Filter::new());
    assert!(!all.is_empty());

    let mut f = Filter::new();
    f.depth = Some(1);
    let top = slices(f);
    let expected: Vec<Slice> = all.iter().filter(|s| s.4 == 0).cloned().collect();
    assert_eq!(top, expected);

    // A window: every slice cut to it, those outside it gone.
    let (lo, hi) = (
        all.iter().map(|s| s.2).min().unwrap(),
        all.iter().map(|s| s.3).max().unwrap(),
    );
    let (from, until) = (lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3);
    let mut f = Filter::new();
    f.from = Some(from);
    f.until = Some(until);
    let window = slices(f);
    assert!(!window.is_empty());
    // The Chrome output's microseconds read as doubles are within a microsecond of the times.
    let near = |a: u64, b: u64| a.abs_diff(b) <= 1000;
    for s in &window {
        assert!(
            near(s.2.max(from), s.2) && s.2 <= s.3 && near(s.3.min(until), s.3),
            "{s:?}"
        );
        assert!(
            all.iter().any(|a| a.0 == s.0
                && a.1 == s.1
                && a.4 == s.4
                && near(a.2.max(from), s.2)
                && near(a.3.min(until), s.3)),
            "{s:?} is no slice of the whole trace cut to the window"
        );
    }

    // Threads and ranks: only the tracks whose tuple holds them.
    let mut f = Filter::new();
    f.threads = vec!["0".to_owned()];
    let thread0 = slices(f);
    assert!(!thread0.is_empty());
    assert!(
        thread0.iter().all(|s| s.0.contains("THREAD 0")),
        "{thread0:?}"
    );
    let mut f = Filter::new();
    f.ranks = vec![12345];
    assert!(slices(f).is_empty());

    // EasyProfiler threads by name.
    let capture = root().join("testdata/easyprofiler/small_v210.prof");
    let data = std::fs::read(&capture).unwrap();
    let tree_view = profcodec_easyprofiler::parse(&data).unwrap();
    let tree = tree_view.tree().unwrap();
    let first = tree.threads[0].name.to_string();
    let mut f = Filter::new();
    f.threads = vec![first.clone()];
    let kept = chrome_slices(&convert(&capture, Format::Chrome, f).0);
    assert!(
        kept.iter()
            .all(|s| s.0 == first || s.0 == "capture" || s.0 == "context switches")
    );
    assert_eq!(
        kept.iter().filter(|s| s.0 == first).count(),
        blocks(&tree).iter().filter(|s| s.0 == first).count()
    );
}
