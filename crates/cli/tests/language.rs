//! One language across subcommands, and output people can read and scripts can trust: one name
//! per format in every machine-readable output, integer counts in JSON, `info` as text in every
//! format, the folded output's unit, `diff`'s minimum change and inclusive totals, and `-` for
//! standard input. Inputs are the project's `testdata`.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

mod common;
use common::{profcodec, run, run_ok, stdout, testdata};

/// `profcodec ARGS` with `input` on its standard input.
fn run_piped(args: &[&str], input: &[u8]) -> Output {
    let mut child = profcodec()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A verb that fails before reading all of it closes the pipe: not this test's concern.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// One input of each format and kind, with its format's one name.
fn inputs_and_names() -> Vec<(PathBuf, &'static str)> {
    vec![
        (testdata("hpctoolkit/demo.d"), "hpctoolkit"),
        (testdata("hpctoolkit/demo.d/meta.db"), "hpctoolkit"),
        (testdata("hpcrun/demo-04.00b.hpcrun"), "hpcrun"),
        (testdata("hpcrun/demo.hpctrace"), "hpcrun"),
        (testdata("nytprof/hello.nytprof.out"), "nytprof"),
        (testdata("easyprofiler/small_v210.prof"), "easyprofiler"),
        (testdata("statprofiler/features.statprof"), "statprofiler"),
        (testdata("statprofiler/session"), "statprofiler"),
    ]
}

/// `dump`'s header and `info --json` name a format as `sql` and `export` do (their table
/// sets): `hpctoolkit`, `hpcrun`, `nytprof`, `easyprofiler`, `statprofiler`, whatever the kind
/// of input; `info`'s text keeps the name for people.
#[test]
fn every_machine_readable_output_names_the_format_alike() {
    for (input, name) in inputs_and_names() {
        let dump = stdout(["dump", "--format", "ndjson", p(&input)]);
        let header: Value = serde_json::from_str(dump.lines().next().unwrap()).unwrap();
        assert_eq!(header["record"], "header");
        assert_eq!(header["format"], name, "dump of {}", input.display());

        let info: Value = serde_json::from_str(&stdout(["info", "--json", p(&input)])).unwrap();
        assert_eq!(
            info[0]["info"]["format"],
            name,
            "info of {}",
            input.display()
        );
    }
    let text = stdout(["info", p(&testdata("nytprof/hello.nytprof.out"))]);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .ends_with(": Devel::NYTProf profile 5.0"),
        "{text}"
    );
}

/// What counts (calls, samples, statements) is an integer in `top --json` and `diff --json`;
/// times keep their fraction.
#[test]
fn json_counts_are_integers() {
    let nytprof = testdata("nytprof/hello.nytprof.out");
    let top = stdout(["top", "--json", p(&nytprof)]);
    assert!(!top.contains("\"calls\": 1.0"), "{top}");
    let rows: Vec<Value> = serde_json::from_str(&top).unwrap();
    assert!(rows.iter().any(|r| r["calls"].is_u64()), "{top}");
    for row in &rows {
        assert!(row["calls"].is_null() || row["calls"].is_u64(), "{row}");
        assert!(row["self"].is_f64(), "time keeps its fraction: {row}");
    }

    for (metric, input) in [
        ("samples", testdata("statprofiler/features.statprof")),
        ("statements", nytprof.clone()),
    ] {
        let rows: Vec<Value> = serde_json::from_str(&stdout([
            "top",
            "--json",
            "--group",
            "line",
            "--metric",
            metric,
            p(&input),
        ]))
        .unwrap();
        assert!(!rows.is_empty(), "{metric}");
        for row in &rows {
            assert!(row["self"].is_u64(), "{metric}: {row}");
            assert!(row["unit"].is_string(), "{row}");
        }
    }

    let other = testdata("nytprof/evals_small.nytprof.out");
    let diff: Vec<Value> =
        serde_json::from_str(&stdout(["diff", "--json", p(&nytprof), p(&other)])).unwrap();
    assert!(!diff.is_empty());
    for row in &diff {
        for side in ["base", "new"] {
            let calls = &row[side]["calls"];
            assert!(calls.is_null() || calls.is_u64(), "{row}");
        }
    }
    let samples: Vec<Value> = serde_json::from_str(&stdout([
        "diff",
        "--json",
        "--metric",
        "samples",
        p(&testdata("statprofiler/features.statprof")),
        p(&testdata("statprofiler/session")),
    ]))
    .unwrap();
    assert!(!samples.is_empty());
    for row in &samples {
        assert!(row["self_change"].is_i64(), "{row}");
    }
}

/// `info`'s text has no JSON in it for any format: lists of objects (NYTProf's top subs) read
/// as `name: key value, key value; ...`, numbers rounded.
#[test]
fn info_text_is_text_in_every_format() {
    for (input, _) in inputs_and_names() {
        let text = stdout(["info", p(&input)]);
        assert!(
            !text.contains("{\"") && !text.contains("[{"),
            "{}: {text}",
            input.display()
        );
    }
    let text = stdout(["info", p(&testdata("nytprof/hello.nytprof.out"))]);
    let top = text
        .lines()
        .find(|l| l.trim_start().starts_with("top_subs_by_exclusive_seconds"))
        .unwrap();
    assert!(top.contains(": exclusive_seconds "), "{top}");
    assert!(top.contains(", calls "), "{top}");
}

/// The folded output's values are bare numbers: standard error says what they are, and the
/// standard output is the folded lines alone.
#[test]
fn folded_output_says_its_unit() {
    let cases = [
        (
            testdata("nytprof/hello.nytprof.out"),
            "profcodec: folded values: time in ticks (",
        ),
        (
            testdata("statprofiler/features.statprof"),
            "profcodec: folded values: time in microseconds",
        ),
        (testdata("hpctoolkit/demo.d"), "profcodec: folded values: "),
    ];
    for (input, want) in cases {
        let out = run_ok(["convert", "--to", "folded", p(&input)]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.starts_with(want), "{}: {err}", input.display());
        let folded = String::from_utf8(out.stdout).unwrap();
        assert!(!folded.contains("folded values"));
    }
    let out = run_ok([
        "convert",
        "--to",
        "folded",
        "--metric",
        "samples",
        p(&testdata("statprofiler/features.statprof")),
    ]);
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "profcodec: folded values: samples\n"
    );
    let nytprof = run_ok([
        "convert",
        "--to",
        "folded",
        p(&testdata("nytprof/hello.nytprof.out")),
    ]);
    assert!(
        String::from_utf8(nytprof.stderr)
            .unwrap()
            .contains("time in ticks (10000000 per second)")
    );
}

/// The rows of a `diff --json`, and the changes of its ordering value.
fn diff_rows(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["diff", "--json", "-n", "0"];
    all.extend_from_slice(args);
    serde_json::from_str(&stdout(all)).unwrap()
}

/// `--min-change` (in the metric's unit, or a time with its unit) and `--min-relative` (a
/// percentage of the base value) leave out the rows that change less; without them every row
/// is listed.
#[test]
fn diff_lists_only_the_rows_that_change_enough() {
    let base = testdata("statprofiler/features.statprof");
    let new = testdata("statprofiler/session");
    let (base, new) = (p(&base), p(&new));
    let all = diff_rows(&[base, new]);
    let changes: Vec<f64> = all
        .iter()
        .map(|r| r["self_change"].as_f64().unwrap().abs())
        .collect();
    let mut sorted = changes.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    assert!(sorted.len() >= 2, "the inputs differ: {all:?}");
    // A threshold between two changes: the rows below it go, the others stay.
    let min = (sorted[0] + sorted[1]) / 2.0;
    let min_text = min.to_string();
    let kept = diff_rows(&["--min-change", &min_text, base, new]);
    let want = changes.iter().filter(|&&c| c >= min).count();
    assert_eq!(kept.len(), want);
    assert!(kept.len() < all.len());
    for row in &kept {
        assert!(row["self_change"].as_f64().unwrap().abs() >= min, "{row}");
    }

    // The same threshold as a time (the metric is in microseconds).
    let as_time = format!("{}us", min);
    assert_eq!(
        diff_rows(&["--min-change", &as_time, base, new]).len(),
        want
    );

    // Relative: a row new in one profile always changes enough; 0% keeps every row.
    assert_eq!(
        diff_rows(&["--min-relative", "0", base, new]).len(),
        all.len()
    );
    let relative = diff_rows(&["--min-relative", "50", base, new]);
    for row in &relative {
        match row["self_relative"].as_f64() {
            Some(r) => assert!(r.abs() >= 0.5, "{row}"),
            None => assert!(row["self_change"].as_f64().unwrap() != 0.0, "{row}"),
        }
    }

    // An input against itself: nothing changes, so nothing is listed; the text keeps its
    // heading and total.
    assert!(diff_rows(&["--min-relative", "1", base, base]).is_empty());
    let text = stdout(["diff", "--min-change", "1us", base, base]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[2].ends_with("total"), "{text}");
}

/// A time for a metric that is no time, or words that are no amount, are usage errors.
#[test]
fn a_minimum_change_must_fit_the_metric() {
    let input = testdata("statprofiler/features.statprof");
    let out = run([
        "diff",
        "--metric",
        "samples",
        "--min-change",
        "2ms",
        p(&input),
        p(&input),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("not a time") && err.contains("samples"),
        "{err}"
    );

    for bad in [
        ["--min-change", "lots"],
        ["--min-change", "-1"],
        ["--min-relative", "x%"],
    ] {
        let out = run(["diff", bad[0], bad[1], p(&input), p(&input)]);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
}

/// The total line of `diff --by inclusive` shows inclusive totals: for NYTProf, whose per-sub
/// inclusive times overlap, the whole program's time (every statement's, as `top --group line`
/// totals it), not the subs' self total.
#[test]
fn diff_by_inclusive_totals_inclusive_values() {
    let input = testdata("nytprof/hello.nytprof.out");
    let total = |text: &str| -> Vec<String> {
        // The total line: the last but for a note under it (`top --group line`).
        let line = text
            .lines()
            .rfind(|l| !l.starts_with("note: "))
            .unwrap()
            .to_owned();
        assert!(line.ends_with("total"), "{text}");
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let lines = stdout(["top", "--group", "line", p(&input)]);
    let functions = stdout(["top", p(&input)]);
    let inclusive = stdout(["diff", "--by", "inclusive", p(&input), p(&input)]);
    let by_self = stdout(["diff", p(&input), p(&input)]);
    // top: self, %, total. diff: base, new, change, %, total.
    let (line_total, function_total) = (&total(&lines)[0], &total(&functions)[0]);
    assert_ne!(line_total, function_total, "top-level code takes time");
    assert_eq!(&total(&inclusive)[0], line_total, "{inclusive}");
    assert_eq!(&total(&inclusive)[1], line_total, "{inclusive}");
    assert_eq!(&total(&by_self)[0], function_total, "{by_self}");
}

/// `-` reads standard input for the verbs of one input, with the same detection and the same
/// output as the file gives (named `-`).
#[test]
fn a_dash_reads_standard_input() {
    for (input, _) in inputs_and_names() {
        if input.is_dir() {
            continue;
        }
        let bytes = std::fs::read(&input).unwrap();
        let file = p(&input);
        for verb in [
            &["info"][..],
            &["info", "--json"],
            &["validate"],
            &["dump", "--format", "ndjson"],
            &["top"],
            &["convert", "--to", "folded"],
        ] {
            let mut args = verb.to_vec();
            args.push(file);
            let want = run(&args);
            *args.last_mut().unwrap() = "-";
            let got = run_piped(&args, &bytes);
            assert_eq!(got.status.code(), want.status.code(), "{verb:?} {file}");
            let named = |out: &[u8]| {
                String::from_utf8_lossy(out)
                    .replace(file, "-")
                    .replace(&serde_json::to_string(file).unwrap(), "\"-\"")
            };
            assert_eq!(named(&got.stdout), named(&want.stdout), "{verb:?} {file}");
        }
    }

    let empty = run_piped(&["info", "-"], b"");
    assert_eq!(empty.status.code(), Some(2));
    let err = String::from_utf8(empty.stderr).unwrap();
    assert!(err.contains("-: unknown format"), "{err}");
    assert!(err.contains("an empty input"), "{err}");
}

/// A metric is named alike in `top --metric` and in SQL: HPCToolkit's tables show
/// `CPUTIME (sec)`, the profile model keeps `CPUTIME` and its unit apart; both names work.
#[test]
fn a_metric_is_named_as_the_tables_name_it() {
    let db = testdata("hpctoolkit/demo.d");
    let bare = stdout(["top", "--metric", "CPUTIME", p(&db)]);
    let with_unit = stdout(["top", "--metric", "CPUTIME (sec)", p(&db)]);
    assert_eq!(bare, with_unit);
    let out = run(["top", "--metric", "CPUTIME (sec) (x)", p(&db)]);
    assert_eq!(out.status.code(), Some(2));
}
