//! `profcodec convert --to pprof` judged by the real consumer: `go tool pprof` reads the export
//! of every corpus input of every format, and for every metric its `-top` report (total, and
//! every function's flat and cum) equals `profcodec top --json` (self and inclusive).
//!
//! Runs when `PROFCODEC_GO` names a `go` binary (`cargo xtask test` installs Debian's golang-go
//! and sets it); otherwise it says so and checks nothing.
#![allow(clippy::unwrap_used)]

mod corpus_inputs;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use corpus_inputs::{corpus_inputs, label, run_ok, top_rows};

fn go() -> Option<PathBuf> {
    let go = std::env::var_os("PROFCODEC_GO").map(PathBuf::from);
    if go.is_none() {
        println!(
            "PROFCODEC_GO is not set: the pprof exports were not judged by `go tool pprof` \
             (cargo xtask test installs golang-go and sets it)"
        );
    }
    go
}

/// `go tool pprof ARGS`'s standard output, panicking with its standard error on failure.
fn pprof(go: &Path, args: &[&str], file: &Path) -> String {
    let mut cmd = Command::new(go);
    cmd.args(["tool", "pprof"]).args(args).arg(file);
    // pprof keeps nothing of a local file, but may want a home for its settings.
    cmd.env("PPROF_TMPDIR", std::env::temp_dir());
    let out = cmd.output().expect("run go tool pprof");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The sample types (`name`, `unit`) of a pprof file and its number of samples, from `-raw`.
fn sample_types(go: &Path, file: &Path) -> (Vec<(String, String)>, usize) {
    let raw = pprof(go, &["-raw"], file);
    let mut lines = raw.lines().skip_while(|l| *l != "Samples:").skip(1);
    let types = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(|t| {
            let t = t.trim_end_matches("[dflt]");
            let (name, unit) = t.rsplit_once('/').unwrap_or((t, ""));
            (name.to_owned(), unit.to_owned())
        })
        .collect();
    let samples = lines
        .take_while(|l| !l.starts_with("Locations"))
        .filter(|l| l.contains(": ") && !l.trim_start().starts_with(|c: char| c.is_alphabetic()))
        .count();
    (types, samples)
}

/// One `-top` report: the total and each function's flat and cum.
struct Top {
    total: f64,
    rows: HashMap<String, (f64, f64)>,
}

/// A value as `-top` prints it (`1143500ns`, `24B`, `240`).
fn number(cell: &str) -> f64 {
    let digits = cell.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    digits
        .parse()
        .unwrap_or_else(|e| panic!("{cell:?} is no value: {e}"))
}

fn top(go: &Path, file: &Path, metric: &str, unit: &str) -> Top {
    // Every node (no fraction dropped), in the smallest unit so that no digit is rounded off.
    let shown = match unit {
        "nanoseconds" => "ns",
        "bytes" => "B",
        _ => "count",
    };
    let text = pprof(
        go,
        &[
            "-top",
            "-nodecount=1000000",
            "-nodefraction=0",
            "-edgefraction=0",
            &format!("-sample_index={metric}"),
            &format!("-unit={shown}"),
        ],
        file,
    );
    let total = text
        .lines()
        .find_map(|l| l.strip_prefix("Showing nodes accounting for "))
        .and_then(|l| l.strip_suffix(" total"))
        .and_then(|l| l.rsplit(' ').next())
        .map(number)
        .unwrap_or_else(|| panic!("no total in {text}"));
    let mut rows = HashMap::new();
    let mut in_rows = false;
    for line in text.lines() {
        if line.trim_start().starts_with("flat") {
            in_rows = true;
            continue;
        }
        if !in_rows {
            continue;
        }
        let mut cells = line.split_whitespace();
        let flat = number(cells.next().unwrap());
        let cum = number(cells.nth(2).unwrap());
        // The name is the rest of the line after the five value columns (names hold spaces).
        let name = line
            .split_whitespace()
            .skip(5)
            .collect::<Vec<_>>()
            .join(" ");
        let previous = rows.insert(name.clone(), (flat, cum));
        assert!(previous.is_none(), "{name} twice in {text}");
    }
    Top { total, rows }
}

/// The factor from `profcodec top`'s unit to the pprof unit.
fn factor(top_unit: &str, pprof_unit: &str) -> f64 {
    match (top_unit, pprof_unit) {
        ("seconds", "nanoseconds") => 1e9,
        ("microseconds", "nanoseconds") => 1e3,
        ("nanoseconds", "nanoseconds") => 1.0,
        (_, "nanoseconds") => panic!("{top_unit} is no time unit of known length"),
        _ => 1.0,
    }
}

/// `a` and `b` agree: pprof rounds each sample's value to an integer, so they may differ by
/// half a unit per sample (and by float rounding in sums of large values).
fn close(a: f64, b: f64, samples: usize) -> bool {
    (a - b).abs() <= 0.5 * samples as f64 + 1e-9 * a.abs().max(b.abs())
}

/// Judges the export of `inputs` (merged when several) at `file`: every metric's total and
/// rows. Returns the number of (metric, row) pairs compared.
fn judge(go: &Path, inputs: &[&Path], file: &Path) -> usize {
    let (types, samples) = sample_types(go, file);
    assert!(!types.is_empty(), "{}: no sample types", file.display());
    let mut compared = 0;
    for (metric, unit) in &types {
        let rows = top_rows(inputs, metric);
        let pprof = top(go, file, metric, unit);
        let what = format!("{inputs:?} metric {metric}");
        let scale = rows
            .first()
            .map_or(1.0, |r| factor(r["unit"].as_str().unwrap(), unit));
        // A function's rows under one name (the same name in several files or modules): pprof
        // shows one row for a name.
        let mut by_name: HashMap<&str, Vec<&serde_json::Value>> = HashMap::new();
        for row in &rows {
            by_name
                .entry(row["name"].as_str().unwrap())
                .or_default()
                .push(row);
        }
        let total: f64 = rows.iter().map(|r| r["self"].as_f64().unwrap().abs()).sum();
        assert!(
            close(pprof.total, total * scale, samples),
            "{what}: pprof total {} but top's {}",
            pprof.total,
            total * scale
        );
        for (name, group) in &by_name {
            let own: f64 = group.iter().map(|r| r["self"].as_f64().unwrap()).sum();
            // Top has no inclusive value for a metric it reads from NYTProf's flat tables
            // without one (calls).
            let inclusive = group[0]["inclusive"].as_f64();
            let (flat, cum) = pprof.rows.get(*name).copied().unwrap_or_default();
            assert!(
                close(flat, own * scale, samples),
                "{what}: {name}: pprof flat {flat} but top's self {}",
                own * scale
            );
            if let (1, Some(inclusive)) = (group.len(), inclusive) {
                assert!(
                    close(cum, inclusive * scale, samples),
                    "{what}: {name}: pprof cum {cum} but top's inclusive {}",
                    inclusive * scale
                );
            }
            compared += 1;
        }
        for (name, &(flat, cum)) in &pprof.rows {
            assert!(
                by_name.contains_key(name.as_str()) || (flat == 0.0 && cum == 0.0),
                "{what}: pprof shows {name} ({flat}, {cum}), top does not"
            );
        }
    }
    compared
}

#[test]
fn go_tool_pprof_reads_every_export_as_top_does() {
    let Some(go) = go() else { return };
    let inputs = corpus_inputs();
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for input in &inputs {
        let file = dir.path().join(format!("{}.pb.gz", label(input)));
        run_ok([
            "convert".as_ref(),
            "--to".as_ref(),
            "pprof".as_ref(),
            "-o".as_ref(),
            file.as_os_str(),
            input.as_os_str(),
        ]);
        compared += judge(&go, &[input], &file);
    }
    println!(
        "{} inputs, {compared} (metric, function) rows equal in go tool pprof and profcodec top",
        inputs.len()
    );
}

/// Several inputs (a forked NYTProf run's parent and child) are one profile, each input's
/// process a label.
#[test]
fn a_merged_export_is_read_as_top_reads_the_inputs() {
    let Some(go) = go() else { return };
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let parent = corpus.join("nytprof/fork__compress0.nytprof.out");
    let child = corpus.join("nytprof/fork__compress0.31274.nytprof.out");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fork.pb.gz");
    run_ok([
        "convert".as_ref(),
        "--to".as_ref(),
        "pprof".as_ref(),
        "-o".as_ref(),
        file.as_os_str(),
        parent.as_os_str(),
        child.as_os_str(),
    ]);
    assert!(judge(&go, &[&parent, &child], &file) > 0);
    let tags = pprof(&go, &["-tags"], &file);
    assert!(tags.contains("process") && tags.contains("31274"), "{tags}");
}
