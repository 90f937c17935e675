//! Every corpus capture converts into a timeline, and what the output holds is judged against
//! the reader's block tree: the Perfetto output decoded by Perfetto's own generated classes
//! (PyPI `perfetto`, `perfetto_trace_pb2`, through `profcodec_testkit::timeline::decoded`),
//! the Chrome output parsed as JSON. Tracks, slices (exactly one per block), names, nesting and
//! timestamps must be equal.
//!
//! The Perfetto half runs when `PROFCODEC_PERFETTO_PYTHON` names a Python with `perfetto`
//! installed (`cargo xtask test` makes a venv under `target/` and sets it); otherwise it prints
//! one line and only the Chrome half runs.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_common::Source;
use profcodec_easyprofiler::BlockTree;
use profcodec_easyprofiler::timeline::write_timeline;
use profcodec_testkit::timeline::{Slice, as_chrome, chrome_slices, decoded, perfetto_slices};
use profcodec_timeline::{Filter, Format, Summary};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

/// The capture at `path` as a trace.
fn convert(path: &Path, format: Format, filter: Filter) -> (Vec<u8>, Summary) {
    let data = std::fs::read(path).unwrap();
    profcodec_testkit::timeline::convert(format, filter, |timeline| {
        write_timeline(&Source::file(path, &data), timeline)
    })
}

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

#[test]
fn the_thread_filter_keeps_a_thread_by_name() {
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
