//! `profcodec top` and `profcodec diff` end to end, on StatProfiler inputs (testdata files, a
//! session folder, a template, and the corpus when `PROFCODEC_CORPUS` is set).
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use profcodec_testkit::corpus::corpus_subdir;
use serde_json::Value;

mod common;
use common::{run, stdout};

fn json_rows<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Vec<Value> {
    let text = stdout(args);
    match serde_json::from_str(&text).unwrap() {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/statprofiler")
        .join(rel)
}

/// The StatProfiler corpus's inputs: each case folder (a one-file session, or the fork's two
/// processes) and the `-file` output.
fn corpus_inputs() -> Vec<PathBuf> {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") else {
        return Vec::new();
    };
    let mut inputs: Vec<PathBuf> = ["nested", "recursion", "xsubs", "evals", "fork"]
        .iter()
        .map(|case| dir.join(case))
        .collect();
    inputs.push(dir.join("file_option/profile.bin"));
    inputs
}

/// A row's identity: function (or name), file, line, module.
fn identity(row: &Value) -> String {
    format!(
        "{}|{}|{}|{}",
        row.get("function").unwrap_or(&row["name"]),
        row["file"],
        row["line"],
        row["module"]
    )
}

fn by_identity(rows: &[Value]) -> HashMap<String, &Value> {
    let map: HashMap<String, &Value> = rows.iter().map(|r| (identity(r), r)).collect();
    assert_eq!(map.len(), rows.len(), "rows are distinct");
    map
}

/// The table: a heading naming the metric and unit, a header line, rows with units and shares,
/// and a total line; value columns right-aligned.
#[test]
fn top_prints_an_aligned_table_with_units_and_a_total() {
    let text = stdout([OsStr::new("top"), testdata("features.statprof").as_os_str()]);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("metric time (milliseconds), by self, grouped by function"),
        "{text}"
    );
    assert!(
        lines[1].contains("self") && lines[1].contains("inclusive"),
        "{text}"
    );
    assert!(
        lines[1].contains("  name  ") && lines[1].ends_with("  file"),
        "{text}"
    );
    let total = lines.last().unwrap();
    assert!(
        total.contains("100.0%") && total.contains("total"),
        "{text}"
    );
    // Every row's first column (self, with its unit) ends at the same place.
    let end = |l: &str| {
        l.find(" ms")
            .or_else(|| l.find(" µs"))
            .or_else(|| l.find(" s "))
    };
    let ends: Vec<Option<usize>> = lines[2..].iter().map(|l| end(l)).collect();
    assert!(ends.iter().all(|e| e.is_some() && *e == ends[0]), "{text}");

    // Counts: thousands separators, no unit suffix.
    let samples = stdout([
        OsStr::new("top"),
        OsStr::new("--metric"),
        OsStr::new("samples"),
        OsStr::new("--group"),
        OsStr::new("line"),
        testdata("features.statprof").as_os_str(),
    ]);
    assert!(samples.starts_with("metric samples (samples), by self, grouped by line"));
    assert!(!samples.contains(" ms"), "{samples}");
}

/// `--json`: an array of rows, each with `name`, `self`, `inclusive`, `calls` (null: not
/// counted), `self_share`, `metric` and `unit`; `-n` bounds the rows; rows are ordered.
#[test]
fn top_json_rows_follow_the_schema() {
    for by in ["self", "inclusive"] {
        let rows = json_rows([
            OsStr::new("top"),
            OsStr::new("--json"),
            OsStr::new("--by"),
            OsStr::new(by),
            OsStr::new("-n"),
            OsStr::new("3"),
            testdata("features.statprof").as_os_str(),
        ]);
        assert!(!rows.is_empty() && rows.len() <= 3);
        for row in &rows {
            for key in [
                "name",
                "self",
                "inclusive",
                "calls",
                "self_share",
                "metric",
                "unit",
            ] {
                assert!(row.get(key).is_some(), "{key} missing in {row}");
            }
            assert!(row["name"].is_string() && row["self"].is_f64());
            assert!(row["calls"].is_null());
            assert_eq!(row["metric"], "time");
            assert_eq!(row["unit"], "microseconds");
            assert!(row["inclusive"].as_f64().unwrap() >= row["self"].as_f64().unwrap());
        }
        let key = if by == "self" { "self" } else { "inclusive" };
        let values: Vec<f64> = rows.iter().map(|r| r[key].as_f64().unwrap()).collect();
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
    }
}

/// A session folder and its template give the same rows; `--process` reads one process, and
/// the processes' rows add up to the session's.
#[test]
fn a_session_folder_and_its_template_give_the_same_rows() {
    let all = ["top", "--json", "-n", "0", "--metric", "samples"];
    let folder = json_rows(
        all.iter()
            .map(OsStr::new)
            .chain([testdata("session").as_os_str()]),
    );
    let template = json_rows(
        all.iter()
            .map(OsStr::new)
            .chain([testdata("session/statprof.out").as_os_str()]),
    );
    assert_eq!(folder, template);
    // The session's three processes (pids of the genealogy ids 00007f92..., 00007fa8..., 00007fb0...).
    let mut summed: HashMap<String, f64> = HashMap::new();
    for pid in [0x7f92u32, 0x7fa8, 0x7fb0] {
        let pid = pid.to_string();
        for row in json_rows(
            all.iter()
                .map(OsStr::new)
                .chain([OsStr::new("--process"), OsStr::new(&pid)])
                .chain([testdata("session").as_os_str()]),
        ) {
            *summed.entry(identity(&row)).or_default() += row["self"].as_f64().unwrap();
        }
    }
    for row in &folder {
        assert_eq!(
            summed.get(&identity(row)).copied().unwrap_or(0.0),
            row["self"].as_f64().unwrap(),
            "{row}"
        );
    }

    // A process the session does not have: exit 2, naming the ones it has.
    let out = run([
        OsStr::new("top"),
        OsStr::new("--process"),
        OsStr::new("1"),
        testdata("session").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("the inputs have processes: {}", 0x7f92)),
        "{err}"
    );
}

/// Every corpus input: the rows' self values add up to the total weight `info` counts, and
/// time is the weight times the tick.
#[test]
fn corpus_rows_add_up_to_what_info_counts() {
    for input in corpus_inputs() {
        let info: Value = serde_json::from_str(&stdout([
            OsStr::new("info"),
            OsStr::new("--json"),
            input.as_os_str(),
        ]))
        .unwrap();
        let details = &info[0]["info"]["details"];
        let ticks = details["total_weight_ticks"].as_f64().unwrap();
        let tick = details["tick_duration_us"].as_f64().unwrap();
        let sum = |metric: &str| -> f64 {
            json_rows([
                OsStr::new("top"),
                OsStr::new("--json"),
                OsStr::new("-n"),
                OsStr::new("0"),
                OsStr::new("--metric"),
                OsStr::new(metric),
                input.as_os_str(),
            ])
            .iter()
            .map(|r| r["self"].as_f64().unwrap())
            .sum()
        };
        assert_eq!(sum("samples"), ticks, "{}", input.display());
        assert_eq!(sum("time"), ticks * tick, "{}", input.display());
        // The table's total line says the same, in ms.
        let text = stdout([OsStr::new("top"), input.as_os_str()]);
        let total = text.lines().last().unwrap();
        assert!(
            total.contains(&format!("{:.1} ms", ticks * tick / 1000.0)),
            "{}: {total}",
            input.display()
        );
    }
}

/// Two inputs merged: every row is the sum of its rows in each input.
#[test]
fn merging_two_inputs_sums_their_rows() {
    let mut inputs = corpus_inputs();
    if inputs.is_empty() {
        inputs = vec![testdata("features.statprof"), testdata("session")];
    } else {
        // The same program run twice, as two files.
        inputs = vec![
            inputs[1].clone(),
            inputs.last().unwrap().clone(), // file_option: recursion.pl again
        ];
    }
    let args = |files: &[&Path]| -> Vec<Value> {
        let mut a: Vec<&OsStr> = ["top", "--json", "-n", "0", "--metric", "samples"]
            .iter()
            .map(OsStr::new)
            .collect();
        a.extend(files.iter().map(|f| f.as_os_str()));
        json_rows(a)
    };
    let a = args(&[&inputs[0]]);
    let b = args(&[&inputs[1]]);
    let merged = args(&[&inputs[0], &inputs[1]]);
    let (a, b) = (by_identity(&a), by_identity(&b));
    let mut shared = 0;
    for row in &merged {
        let id = identity(row);
        let part =
            |m: &HashMap<String, &Value>| m.get(&id).map_or(0.0, |r| r["self"].as_f64().unwrap());
        shared += usize::from(a.contains_key(&id) && b.contains_key(&id));
        assert_eq!(row["self"].as_f64().unwrap(), part(&a) + part(&b), "{row}");
    }
    assert!(shared > 0, "the two inputs share rows");
    assert!(merged.len() >= a.len().max(b.len()));
}

/// Many inputs are decoded on several threads (`--jobs`) and merged in input order: the tables,
/// the JSON rows and the converted outputs are those of one thread, byte for byte, inputs that
/// share a process (whose values add up) included, and so is the error of a damaged input.
#[test]
fn many_inputs_on_several_threads_give_the_output_of_one() {
    let mut inputs = vec![testdata("features.statprof"), testdata("session")];
    inputs.extend(corpus_inputs());
    let inputs: Vec<&Path> = inputs
        .iter()
        .cycle()
        .take(20)
        .map(PathBuf::as_path)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let commands: [&[&str]; 5] = [
        &["top", "--json", "-n", "0", "--metric", "samples"],
        &["top", "--group", "line", "-n", "50"],
        &["convert", "--to", "pprof", "--force", "-o"],
        &["convert", "--to", "folded", "--force", "-o"],
        &["diff", "--json", "-n", "0"],
    ];
    for command in commands {
        let output = |jobs: &str| -> (Vec<u8>, Vec<u8>) {
            let mut args: Vec<&OsStr> = command.iter().map(OsStr::new).collect();
            if command[0] == "convert" {
                args.push(out.as_os_str());
            }
            args.extend([OsStr::new("--jobs"), OsStr::new(jobs)]);
            let inputs = if command[0] == "diff" {
                &inputs[..2]
            } else {
                &inputs
            };
            args.extend(inputs.iter().map(|i| i.as_os_str()));
            let stdout = stdout(args).into_bytes();
            (stdout, std::fs::read(&out).unwrap_or_default())
        };
        let one = output("1");
        assert!(!one.0.is_empty() || !one.1.is_empty(), "{command:?}");
        for jobs in ["2", "3", "0"] {
            assert!(output(jobs) == one, "{command:?} --jobs {jobs}");
        }
    }
    let cut = dir.path().join("cut.statprof");
    let bytes = std::fs::read(testdata("features.statprof")).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let failure = |jobs: &str| {
        let mut args = vec![OsStr::new("top"), OsStr::new("--jobs"), OsStr::new(jobs)];
        args.extend(inputs.iter().map(|i| i.as_os_str()));
        args.extend([cut.as_os_str(), OsStr::new("/nonexistent/profile")]);
        let failed = run(args);
        (failed.status.code(), failed.stderr)
    };
    let sequential = failure("1");
    assert_eq!(sequential.0, Some(1));
    assert!(
        String::from_utf8_lossy(&sequential.1).contains("cut.statprof: "),
        "{}",
        String::from_utf8_lossy(&sequential.1)
    );
    assert_eq!(failure("2"), sequential);
}

/// `diff` of an input with itself: every row unchanged, both values equal.
#[test]
fn diff_of_an_input_with_itself_is_all_zero() {
    let mut inputs = vec![testdata("features.statprof"), testdata("session")];
    inputs.extend(corpus_inputs());
    for input in &inputs {
        for group in ["function", "line", "module"] {
            let rows = json_rows([
                OsStr::new("diff"),
                OsStr::new("--json"),
                OsStr::new("-n"),
                OsStr::new("0"),
                OsStr::new("--group"),
                OsStr::new(group),
                input.as_os_str(),
                input.as_os_str(),
            ]);
            assert!(!rows.is_empty(), "{}", input.display());
            for row in &rows {
                assert_eq!(row["self_change"], 0.0, "{row}");
                assert_eq!(row["inclusive_change"], 0.0, "{row}");
                assert_eq!(row["base"], row["new"], "{row}");
                assert!(row["metric"].is_string() && row["unit"].is_string());
            }
        }
        let text = stdout([OsStr::new("diff"), input.as_os_str(), input.as_os_str()]);
        let total = text.lines().last().unwrap();
        assert!(total.contains("0.0%") && total.contains("total"), "{total}");
    }
}

/// `diff` of two different runs: rows sorted by the absolute change, the change is new - base,
/// and the relative change is the change over the base.
#[test]
fn diff_rows_are_ordered_by_the_absolute_change() {
    let inputs = corpus_inputs();
    let (base, new) = match inputs.as_slice() {
        [] => (testdata("features.statprof"), testdata("session")),
        all => (all[1].clone(), all.last().unwrap().clone()),
    };
    let rows = json_rows([
        OsStr::new("diff"),
        OsStr::new("--json"),
        OsStr::new("-n"),
        OsStr::new("0"),
        base.as_os_str(),
        new.as_os_str(),
    ]);
    let value = |side: &Value| side.get("self").and_then(Value::as_f64).unwrap_or(0.0);
    let changes: Vec<f64> = rows
        .iter()
        .map(|r| {
            let change = r["self_change"].as_f64().unwrap();
            assert_eq!(change, value(&r["new"]) - value(&r["base"]), "{r}");
            if let Some(rel) = r["self_relative"].as_f64() {
                assert!((rel - change / value(&r["base"])).abs() < 1e-12, "{r}");
            }
            change.abs()
        })
        .collect();
    assert!(changes.windows(2).all(|w| w[0] >= w[1]), "{changes:?}");
}

/// An unknown metric: exit 2, and the message names the known ones.
#[test]
fn an_unknown_metric_exits_2_naming_the_known_ones() {
    let file = testdata("features.statprof");
    for verb in [&["top"][..], &["diff"][..]] {
        let mut args: Vec<&OsStr> = verb.iter().map(OsStr::new).collect();
        args.extend([OsStr::new("--metric"), OsStr::new("cycles")]);
        args.push(file.as_os_str());
        if verb[0] == "diff" {
            args.push(file.as_os_str());
        }
        let out = run(args);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cycles") && err.contains("samples") && err.contains("time"),
            "{err}"
        );
    }
}

/// Every format answers `top` (a table with a total, JSON rows) and `diff` (an input against
/// itself changes nothing): files, a database folder, a measurement folder and testdata files.
#[test]
fn every_format_answers_top_and_diff() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let inputs = [
        corpus.join("nytprof/nested__default.nytprof.out"),
        corpus.join("easyprofiler/sample_v210_rdtsc.prof"),
        corpus.join("hpctoolkit/dbase/loops-perf.d"),
        corpus.join("hpctoolkit/hatchet-gamess"),
        corpus.join("hpctoolkit/meas/small.m"),
        root.join("nytprof/hello.nytprof.out"),
        root.join("easyprofiler/small_v210.prof"),
        root.join("hpctoolkit/demo.d"),
        root.join("hpcrun/demo-04.00b.hpcrun"),
    ];
    for input in &inputs {
        let text = stdout([OsStr::new("top"), input.as_os_str()]);
        assert!(text.contains("total"), "{}: {text}", input.display());
        let rows = json_rows([OsStr::new("top"), OsStr::new("--json"), input.as_os_str()]);
        assert!(!rows.is_empty(), "{}", input.display());
        for row in &rows {
            assert!(row["name"].is_string() && row["self"].is_number(), "{row}");
        }
        let diff = json_rows([
            OsStr::new("diff"),
            OsStr::new("--json"),
            input.as_os_str(),
            input.as_os_str(),
        ]);
        for row in &diff {
            assert_eq!(row["self_change"], 0.0, "{}: {row}", input.display());
        }
    }
}

/// `--thread` with `--process` keeps the threads of that process; a profile of processes
/// without threads has none, which is a usage error (exit 2).
#[test]
fn one_context_filter_at_a_time() {
    let out = run([
        OsStr::new("top"),
        OsStr::new("--thread"),
        OsStr::new("1"),
        OsStr::new("--process"),
        OsStr::new("2"),
        testdata("features.statprof").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}
