//! Every database with a trace converts into a timeline, and what the output holds is judged
//! against hpcviewer's depth rule computed naively, sample by sample, from the reader's trace
//! lines (`profcodec_testkit::timeline::reference`): the Chrome output parsed as JSON, the
//! Perfetto output decoded by Perfetto's own generated classes when `PROFCODEC_PERFETTO_PYTHON`
//! names a Python with `perfetto` installed (`cargo xtask test` sets it). Tracks, slices,
//! names, nesting and timestamps must be equal. The filters keep threads, ranks, a window and a
//! depth.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_common::Source;
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::ProfileOptions;
use profcodec_hpctoolkit::timeline::write_timeline;
use profcodec_profile::NodeId;
use profcodec_testkit::timeline::{Slice, check_sampled, chrome_slices, from_chrome, reference};
use profcodec_timeline::{Filter, Format, Summary};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

/// The database folder `dir` as a trace.
fn convert(dir: &Path, format: Format, filter: Filter) -> (Vec<u8>, Summary) {
    profcodec_testkit::timeline::convert(format, filter, |timeline| {
        write_timeline(&Source::file(dir, &[]), timeline)
    })
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
        check_sampled(
            &dir.display().to_string(),
            |timeline| write_timeline(&Source::file(&dir, &[]), timeline),
            &expected,
            ranks.len() + traces.trace_count() as usize,
        );
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
}
