//! The command line's papercuts (issue 44): what a new user met reading the README and running
//! the verbs on real profiles, each held here in the words the fix prints.
#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;

use profcodec_testkit::corpus::corpus_subdir;

mod common;
use common::{run, run_ok, stderr, stdout, testdata};

/// The total line's first cell, in the table's unit.
fn total(table: &str) -> f64 {
    let line = table
        .lines()
        .find(|l| l.trim_end().ends_with("total"))
        .unwrap();
    let first = line.split_whitespace().next().unwrap();
    first.replace(',', "").parse().unwrap()
}

/// `top --mean` of a database (whose whole program is its one summary context) averages over
/// the threads and ranks measured, and the heading says over how many; without `--mean` it is
/// the sum.
#[test]
fn mean_averages_over_the_contexts_measured() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") else {
        return;
    };
    let db = dir.join("dbase/loops-cputime-t.d");
    let sum = stdout([OsStr::new("top"), db.as_os_str()]);
    let mean = stdout([OsStr::new("top"), OsStr::new("--mean"), db.as_os_str()]);
    let heading = mean.lines().next().unwrap();
    assert!(heading.ends_with("mean of 4 contexts"), "{mean}");
    assert!(
        heading.contains("(milliseconds)") && sum.contains("(seconds)"),
        "{sum}\n{mean}"
    );
    let (sum, mean) = (total(&sum), total(&mean) / 1e3);
    assert!(
        (sum / 4.0 - mean).abs() < 1e-3,
        "sum {sum} s, mean {mean} s"
    );
}

/// A profile of one context: the mean is over 1 context, in the singular.
#[test]
fn one_context_is_one_context() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let text = stdout([OsStr::new("top"), OsStr::new("--mean"), hello.as_os_str()]);
    assert!(
        text.lines().next().unwrap().ends_with("mean of 1 context"),
        "{text}"
    );
    assert_eq!(profcodec::words::count(1u32, "track", "tracks"), "1 track");
}

/// The heading names the unit of the cells: a StatProfiler profile counted in microseconds
/// and shown in milliseconds says milliseconds.
#[test]
fn headings_name_the_unit_of_their_cells() {
    let text = stdout([
        OsStr::new("top"),
        testdata("statprofiler/features.statprof").as_os_str(),
    ]);
    let mut lines = text.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("metric time (milliseconds),"),
        "{text}"
    );
    let first_row = lines.nth(1).unwrap();
    assert!(first_row.contains(" ms "), "{text}");
}

/// hpcrun rows that are bare addresses come with a hint, once, of what says more.
#[test]
fn unsymbolized_rows_hint_at_module_and_binary_path() {
    let out = run_ok([
        OsStr::new("top"),
        testdata("hpcrun/demo-04.00b.hpcrun").as_os_str(),
    ]);
    let err = stderr(&out);
    assert_eq!(err.matches("--group module").count(), 1, "{err}");
    assert!(
        err.contains("4 of 4 rows are addresses without a symbol") && err.contains("--binary-path"),
        "{err}"
    );
    let named = run_ok([
        OsStr::new("top"),
        testdata("nytprof/hello.nytprof.out").as_os_str(),
    ]);
    assert!(!stderr(&named).contains("--group module"));
}

/// Help: `top` and `diff` do not offer `--depth` (both refuse it, in words); `merge`'s example
/// merges different files.
#[test]
fn help_offers_what_works() {
    for verb in ["top", "diff"] {
        let help = stdout([verb, "--help"]);
        assert!(!help.contains("--depth"), "{verb}: {help}");
    }
    let out = run(["top", "--depth", "1", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--depth keeps the levels of a timeline's slices"));
    let help = stdout(["merge", "--help"]);
    assert!(!help.contains("nytprof.out nytprof.out"), "{help}");
    assert!(help.contains("nytprof.out.*"), "{help}");
}

/// Under `top --group line`, a note says how the total by function differs only when the
/// difference shows in the table's unit.
#[test]
fn no_zero_note_under_lines() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let text = stdout([
        OsStr::new("top"),
        OsStr::new("--group"),
        OsStr::new("line"),
        hello.as_os_str(),
    ]);
    for line in text.lines().filter(|l| l.starts_with("note:")) {
        assert!(
            !line.contains(" 0.0 ms ") && !line.contains(" 0.000 s "),
            "{text}"
        );
    }
}
