//! The filter flags (`--thread`, `--rank`, `--depth`) speak one language in every subcommand:
//! the same value filters `top`, `diff` and every `convert` target; a thread is its id or, where
//! the format names threads, its name; a filter that matches nothing is a usage error (exit
//! status 2, never an empty output) whose words list what the inputs have, and no output file
//! is left. Inputs are the real corpus: EasyProfiler captures (named threads), HPCToolkit
//! databases (RANK and THREAD ids) and NYTProf profiles (no threads).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

mod common;
use common::{run, run_ok};

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

/// The targets whose filtering the tests check, with `top`.
const TARGETS: [&str; 4] = ["folded", "pprof", "chrome", "perfetto"];

/// `convert --to TARGET -o OUT FLAGS INPUT` (`top FLAGS INPUT` for the target `top`).
fn filtered(target: &str, flags: &[&str], input: &Path, out: &Path) -> Output {
    let mut args: Vec<&OsStr> = Vec::new();
    if target == "top" {
        args.push(OsStr::new("top"));
    } else {
        args.extend(["convert", "--to", target, "-o"].map(OsStr::new));
        args.push(out.as_os_str());
    }
    args.extend(flags.iter().map(OsStr::new));
    args.push(input.as_os_str());
    run(args)
}

/// Converts `input` to `target` with `flags`, and returns the bytes written.
fn converted(target: &str, flags: &[&str], input: &Path) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let result = filtered(target, flags, input, &out);
    assert!(
        result.status.success(),
        "{target} {flags:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    std::fs::read(out).unwrap()
}

/// The sum of a folded output's values.
fn folded_total(folded: &[u8]) -> f64 {
    String::from_utf8_lossy(folded)
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// The names of the Chrome trace's threads that hold slices.
fn chrome_threads_with_slices(json: &[u8]) -> BTreeSet<String> {
    let doc: Value = serde_json::from_slice(json).unwrap();
    let events = doc
        .get("traceEvents")
        .unwrap_or(&doc)
        .as_array()
        .unwrap()
        .clone();
    let busy: BTreeSet<(i64, i64)> = events
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("B" | "X")))
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .filter(|e| busy.contains(&(e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap())))
        .map(|e| e["args"]["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `top`'s total line's first value (the self total) as printed.
fn top_total(flags: &[&str], input: &Path) -> String {
    let out = run_ok(
        [OsStr::new("top")]
            .into_iter()
            .chain(flags.iter().map(OsStr::new))
            .chain([input.as_os_str()]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let total = text.lines().find(|l| l.trim_end().ends_with("total"));
    total
        .unwrap()
        .split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// EasyProfiler names its threads: a thread by name and by id filters every output alike, to
/// that thread only, and less than the whole.
#[test]
fn a_thread_by_name_or_id_filters_every_output() {
    let Some(corpus) = corpus() else { return };
    let capture = corpus.join("easyprofiler/sample_v210_rdtsc.prof");
    let (by_name, by_id) = (["--thread", "Worker 1"], ["--thread", "1483"]);

    let whole = top_total(&[], &capture);
    let worker = top_total(&by_name, &capture);
    assert_ne!(worker, whole);
    assert_eq!(top_total(&by_id, &capture), worker);

    for target in TARGETS {
        let named = converted(target, &by_name, &capture);
        assert_eq!(named, converted(target, &by_id, &capture), "{target}");
        assert_ne!(named, converted(target, &[], &capture), "{target}");
    }
    let folded = converted("folded", &by_name, &capture);
    let all = folded_total(&converted("folded", &[], &capture));
    assert!(folded_total(&folded) > 0.0 && folded_total(&folded) < all);
    // The capture's own tracks (its bookmarks, each thread's context switches) aside, the
    // threads with slices are the one asked for.
    let chrome = converted("chrome", &by_name, &capture);
    let mut threads = chrome_threads_with_slices(&chrome);
    threads.retain(|t| t != "capture" && t != "context switches");
    assert_eq!(threads, BTreeSet::from(["Worker 1".to_owned()]));
    let perfetto = converted("perfetto", &by_name, &capture);
    let has = |bytes: &[u8], what: &str| bytes.windows(what.len()).any(|w| w == what.as_bytes());
    assert!(has(&perfetto, "Worker 1") && !has(&perfetto, "Worker 2"));

    // A comma list and repeated flags are the same filter.
    let two = converted("folded", &["--thread", "Worker 1,1484"], &capture);
    let repeated = ["--thread", "Worker 1", "--thread", "1484"];
    assert_eq!(two, converted("folded", &repeated, &capture));
    assert!(folded_total(&two) > folded_total(&folded));
}

/// HPCToolkit's THREAD and RANK ids filter `top`, `diff` and every target the same way.
#[test]
fn hpctoolkit_threads_and_ranks_filter_every_output() {
    let Some(corpus) = corpus() else { return };
    let db = corpus.join("hpctoolkit/dbase/loops-cputime-t.d");
    let thread = ["--thread", "1"];
    assert_ne!(top_total(&thread, &db), top_total(&[], &db));
    // Rank 0 holds every thread of this single-process run.
    assert_eq!(top_total(&["--rank", "0"], &db), top_total(&[], &db));
    for target in TARGETS {
        let one = converted(target, &thread, &db);
        assert_ne!(one, converted(target, &[], &db), "{target}");
        assert_eq!(
            one,
            converted(target, &["--thread", "1", "--rank", "0"], &db)
        );
    }
    let chrome = converted("chrome", &thread, &db);
    let threads = chrome_threads_with_slices(&chrome);
    assert!(
        !threads.is_empty() && threads.iter().all(|t| t.ends_with("THREAD 1")),
        "{threads:?}"
    );
    // diff filters both sides: a database against itself changes nothing.
    let dbs = [db.as_os_str(), db.as_os_str()];
    let args = ["diff", "--json", "--thread", "1"].map(OsStr::new);
    let out = run_ok(args.into_iter().chain(dbs));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!rows.is_empty() && rows.iter().all(|r| r["self_change"] == 0.0));
}

/// Checks that `flags` on `input` fail with exit status 2 in `top` and every target, with a
/// message holding each of `words`, and leave no output file.
fn refused_everywhere(input: &Path, flags: &[&str], targets: &[&str], words: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for target in targets {
        let out = dir.path().join(format!("out.{target}"));
        let result = filtered(target, flags, input, &out);
        let err = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{target} {flags:?}: {err}");
        for word in words {
            assert!(err.contains(word), "{target} {flags:?}: {err}");
        }
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists(), "{target}: {} written", out.display());
        assert!(result.stdout.is_empty(), "{target}");
    }
    // Nothing else either: no staging left beside the outputs.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// A filter that matches nothing is an error everywhere, naming what the inputs have.
#[test]
fn a_filter_that_matches_nothing_is_an_error_everywhere() {
    let Some(corpus) = corpus() else { return };
    let every: Vec<&str> = ["top"].into_iter().chain(TARGETS).collect();
    let capture = corpus.join("easyprofiler/sample_v210_rdtsc.prof");
    refused_everywhere(
        &capture,
        &["--thread", "Worker 9"],
        &every,
        &[
            "no thread matches 'Worker 9'",
            "the inputs have threads: 1481 Main, 1482 Worker 0, 1483 Worker 1, 1484 Worker 2",
        ],
    );
    refused_everywhere(
        &capture,
        &["--thread", "5"],
        &every,
        &["no thread matches '5'", "1483 Worker 1"],
    );
    let db = corpus.join("hpctoolkit/dbase/loops-cputime-t.d");
    refused_everywhere(
        &db,
        &["--thread", "99"],
        &every,
        &["no thread matches '99'; the inputs have threads: 0, 1, 2, 3"],
    );
    refused_everywhere(
        &db,
        &["--rank", "4,5"],
        &every,
        &["no rank matches 4 or 5; the inputs have ranks: 0"],
    );
    // NYTProf records no threads: a thread filter says so (it has no timeline to convert).
    let nytprof = corpus.join("nytprof/nested__default.nytprof.out");
    refused_everywhere(
        &nytprof,
        &["--thread", "1"],
        &["top", "folded", "pprof", "speedscope", "callgrind"],
        &["no thread matches '1'; the inputs record no threads"],
    );
}

/// `--depth` keeps the levels of a timeline; where no timeline is written it is refused in
/// words, not ignored.
#[test]
fn depth_is_for_timelines_and_refused_elsewhere() {
    let Some(corpus) = corpus() else { return };
    let capture = corpus.join("easyprofiler/sample_v210_rdtsc.prof");
    refused_everywhere(
        &capture,
        &["--depth", "1"],
        &["top", "folded", "pprof"],
        &["--depth keeps the levels of a timeline's slices"],
    );
    let shallow = converted("chrome", &["--depth", "1"], &capture);
    assert!(shallow.len() < converted("chrome", &[], &capture).len());
}

/// `report` takes the same flags: its page and trace show the threads kept, and a filter that
/// matches nothing leaves no report folder.
#[test]
fn the_report_takes_the_same_filters() {
    let Some(corpus) = corpus() else { return };
    let capture = corpus.join("easyprofiler/sample_v210_rdtsc.prof");
    let dir = tempfile::tempdir().unwrap();
    let report = |name: &str, flags: &[&str]| {
        let out = dir.path().join(name);
        let args = [OsStr::new("report"), OsStr::new("-o"), out.as_os_str()];
        let flags = flags.iter().map(OsStr::new);
        (
            run(args.into_iter().chain(flags).chain([capture.as_os_str()])),
            out,
        )
    };
    let (missing, out) = report("missing", &["--thread", "Worker 9"]);
    let err = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(2), "{err}");
    assert!(err.contains("no thread matches 'Worker 9'; the inputs have threads: 1481 Main"));
    assert!(!out.exists());
    let trace = |out: &Path| std::fs::read(out.join("trace.perfetto-trace")).unwrap();
    let (all, whole) = report("all", &[]);
    assert!(all.status.success());
    let (one, worker) = report("one", &["--thread", "Worker 1"]);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    assert!(trace(&worker).len() < trace(&whole).len());
    let page = std::fs::read_to_string(worker.join("index.html")).unwrap();
    assert!(page.contains("Worker 1") && !page.contains("Worker 2"));
}
