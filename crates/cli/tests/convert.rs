//! `profcodec convert --to folded|callgrind|speedscope`, judged by the real consumers on every
//! corpus input of every format (and the testdata profiles):
//!
//! - folded: inferno's flame graph renders every output; for every NYTProf profile the lines
//!   equal `nytprofcalls`' as a multiset;
//! - callgrind: `callgrind_annotate` reads every output and its program totals equal the
//!   profile's (`profcodec top`'s total of each event's value type); for NYTProf, its
//!   per-function inclusive costs equal those of `nytprofcg`'s output;
//! - speedscope: every output validates against the schema speedscope ships (ajv), and the
//!   speedscope app renders an EasyProfiler capture (evented) and an NYTProf profile (sampled)
//!   in headless Chromium.
//!
//! The consumers come from `cargo xtask test` (`PROFCODEC_EXPORT_CONSUMERS=1` and the paths
//! it sets); outside it a test whose consumer is missing says so and checks what it can.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

mod corpus_inputs;

use corpus_inputs::profcodec;
use profcodec_testkit::corpus::corpus_dir;

mod common;
use common::testdata;

/// Whether the xtask installed the consumers: a missing tool is then a failure, not a skip.
fn under_xtask() -> bool {
    std::env::var_os("PROFCODEC_EXPORT_CONSUMERS").is_some()
}

/// Whether `program` runs; a failure under the xtask, a loud skip otherwise.
fn have(program: &str, args: &[&str]) -> bool {
    let ok = Command::new(program).args(args).output().is_ok();
    assert!(
        ok || !under_xtask(),
        "{program} is missing although cargo xtask test installs it"
    );
    if !ok {
        println!("{program} is not installed: its check is not run (cargo xtask test installs it)");
    }
    ok
}

/// Runs `cmd` and returns its standard output, panicking with its standard error when it fails.
fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Runs `profcodec convert --to TO INPUT [EXTRA...]` and returns the output's bytes.
fn convert(to: &str, input: &Path, extra: &[&str]) -> Vec<u8> {
    stdout_of(
        profcodec()
            .args(["convert", "--to", to])
            .args(extra)
            .arg(input),
    )
}

fn nytprof_inputs() -> Vec<PathBuf> {
    let mut files = vec![testdata("nytprof/hello.nytprof.out")];
    if let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        let mut corpus: Vec<PathBuf> = std::fs::read_dir(corpus.join("nytprof"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
            .collect();
        corpus.sort();
        assert!(!corpus.is_empty());
        files.extend(corpus);
    }
    files
}

/// Every input of every format: the corpus's files, databases, measurement folders and
/// sessions, and testdata files where the corpus has none of a kind.
fn all_inputs() -> Vec<PathBuf> {
    let mut inputs = nytprof_inputs();
    inputs.push(testdata("nytprof/pynytprof.out"));
    inputs.push(testdata("easyprofiler/small_v210.prof"));
    inputs.push(testdata("statprofiler/features.statprof"));
    inputs.push(testdata("hpctoolkit/demo.d"));
    inputs.push(testdata("hpcrun/demo-04.00b.hpcrun"));
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return inputs;
    };
    let sorted = |dir: PathBuf, keep: &dyn Fn(&Path) -> bool| {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| keep(p))
            .collect();
        found.sort();
        found
    };
    let ends = |p: &Path, s: &str| p.to_string_lossy().ends_with(s);
    inputs.extend(sorted(corpus.join("easyprofiler"), &|p| ends(p, ".prof")));
    inputs.extend(sorted(corpus.join("hpctoolkit/dbase"), &|p| ends(p, ".d")));
    inputs.push(corpus.join("hpctoolkit/hatchet-gamess"));
    inputs.extend(sorted(corpus.join("hpctoolkit/meas"), &|p| ends(p, ".m")));
    for case in ["nested", "recursion", "xsubs", "evals", "fork"] {
        inputs.push(corpus.join("statprofiler").join(case));
    }
    inputs.push(corpus.join("statprofiler/file_option/profile.bin"));
    inputs
}

/// A multiset of lines.
fn lines(text: &[u8]) -> BTreeMap<Vec<u8>, usize> {
    let mut m = BTreeMap::new();
    for l in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        *m.entry(l.to_vec()).or_insert(0) += 1;
    }
    m
}

#[test]
fn folded_nytprof_equals_nytprofcalls() {
    if !have("nytprofcalls", &["--help"]) {
        return;
    }
    for file in nytprof_inputs() {
        let ours = convert("folded", &file, &[]);
        let theirs = stdout_of(Command::new("nytprofcalls").arg(&file));
        let (ours, theirs) = (lines(&ours), lines(&theirs));
        assert!(!ours.is_empty(), "{}", file.display());
        if ours != theirs {
            let o: HashSet<_> = ours.keys().collect();
            let t: HashSet<_> = theirs.keys().collect();
            let show = |s: Vec<&&Vec<u8>>| {
                s.iter()
                    .take(5)
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect::<Vec<_>>()
            };
            panic!(
                "{}: lines differ:\n only ours {:?}\n only nytprofcalls {:?}",
                file.display(),
                show(o.difference(&t).collect()),
                show(t.difference(&o).collect())
            );
        }
    }
}

/// inferno's flame graph of `folded`: an SVG with one rectangle per frame drawn.
fn flamegraph(folded: &[u8]) -> String {
    let mut options = inferno::flamegraph::Options::default();
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(&mut options, folded, &mut svg).unwrap();
    String::from_utf8(svg).unwrap()
}

#[test]
fn every_input_folds_into_a_flame_graph() {
    for input in all_inputs() {
        let folded = convert("folded", &input, &[]);
        let total: u64 = folded
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                let text = std::str::from_utf8(l).unwrap();
                let (stack, value) = text.rsplit_once(' ').unwrap();
                assert!(!stack.is_empty(), "{}: {text}", input.display());
                value.parse::<u64>().unwrap()
            })
            .sum();
        if total == 0 {
            // inferno refuses a graph of nothing; a profile of zeros has no flame graph.
            println!("{}: all values are zero", input.display());
            continue;
        }
        let svg = flamegraph(&folded);
        assert!(
            svg.contains("<svg") && svg.matches("<rect").count() > 1,
            "{}: {}",
            input.display(),
            &svg[..svg.len().min(500)]
        );
    }
}

/// The `event:` descriptions of a callgrind file: (event, value type name, unit written).
fn callgrind_events(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .map(|l| {
            let (event, rest) = l.split_once(" : ").unwrap();
            let (name, unit) = rest.rsplit_once(" (").unwrap();
            (
                event.to_owned(),
                name.to_owned(),
                unit.trim_end_matches(')').to_owned(),
            )
        })
        .collect()
}

/// `callgrind_annotate`'s program totals, by event.
fn annotate_totals(file: &Path) -> Vec<i64> {
    let text = String::from_utf8(stdout_of(Command::new("callgrind_annotate").arg(file))).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .unwrap_or_else(|| panic!("{}: no program totals:\n{text}", file.display()));
    let mut totals = Vec::new();
    for w in line.split_whitespace() {
        if w == "PROGRAM" {
            break;
        }
        if w.starts_with('(') {
            continue;
        }
        totals.push(w.replace(',', "").parse().unwrap());
    }
    totals
}

/// `profcodec top`'s total self value of `metric` (summed over every row).
fn top_total(input: &Path, metric: &str) -> (f64, String) {
    let out = stdout_of(
        profcodec()
            .args(["top", "--json", "-n", "0", "--metric", metric])
            .arg(input),
    );
    let rows: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let rows = rows.as_array().unwrap();
    let total = rows.iter().map(|r| r["self"].as_f64().unwrap()).sum();
    let unit = rows
        .first()
        .map_or(String::new(), |r| r["unit"].as_str().unwrap().to_owned());
    (total, unit)
}

#[test]
fn every_input_reads_in_callgrind_annotate_with_the_profiles_totals() {
    let annotate = have("callgrind_annotate", &["--help"]);
    let tmp = tempfile::tempdir().unwrap();
    for (n, input) in all_inputs().iter().enumerate() {
        let text = String::from_utf8(convert("callgrind", input, &[])).unwrap();
        let file = tmp.path().join(format!("{n}.callgrind"));
        std::fs::write(&file, &text).unwrap();
        let events = callgrind_events(&text);
        assert!(!events.is_empty(), "{}: no events", input.display());
        let written: Vec<i64> = text
            .lines()
            .find_map(|l| l.strip_prefix("totals: "))
            .unwrap()
            .split(' ')
            .map(|v| v.parse().unwrap())
            .collect();
        let cost_lines = text
            .lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count() as f64;
        for (e, (event, name, unit)) in events.iter().enumerate() {
            let (total, top_unit) = top_total(input, name);
            let scale = if unit == "microseconds" && top_unit == "seconds" {
                1e6
            } else {
                1.0
            };
            // Each cost line is written as an integer: at most one unit lost to truncation.
            let slack = cost_lines.max(1.0);
            assert!(
                (written[e] as f64 - total * scale).abs() <= slack,
                "{}: event {event}: totals {} but profcodec top says {}",
                input.display(),
                written[e],
                total * scale
            );
        }
        if annotate {
            assert_eq!(annotate_totals(&file), written, "{}", input.display());
        }
    }
}

/// The called functions of a callgrind file as `callgrind_annotate` names them
/// (`file:function`, the file being the `cfl=` before the `cfn=`), by function name; names
/// compressed as `(id) name` are expanded.
fn callees(text: &str) -> HashMap<String, HashSet<String>> {
    let mut files: HashMap<String, String> = HashMap::new();
    let mut functions: HashMap<String, String> = HashMap::new();
    let expand = |table: &mut HashMap<String, String>, name: &str| -> String {
        let compressed = name
            .strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .filter(|(id, _)| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        match compressed {
            Some((id, rest)) if !rest.trim().is_empty() => {
                table.insert(id.to_owned(), rest.trim().to_owned());
                rest.trim().to_owned()
            }
            Some((id, _)) => table[id].clone(),
            None => name.to_owned(),
        }
    };
    let mut callee_file = String::new();
    let mut called: HashMap<String, HashSet<String>> = HashMap::new();
    for line in text.lines() {
        if let Some(f) = line.strip_prefix("fl=") {
            expand(&mut files, f);
        } else if let Some(f) = line.strip_prefix("fn=") {
            expand(&mut functions, f);
        } else if let Some(f) = line.strip_prefix("cfl=") {
            callee_file = expand(&mut files, f);
        } else if let Some(f) = line.strip_prefix("cfn=") {
            let function = expand(&mut functions, f);
            called
                .entry(function.clone())
                .or_default()
                .insert(format!("{callee_file}:{function}"));
        }
    }
    called
}

/// Per called function, `callgrind_annotate --inclusive=yes`'s cost of the first event: the
/// costs of the calls into it.
fn annotate_inclusive(file: &Path) -> HashMap<String, i64> {
    let called = callees(&std::fs::read_to_string(file).unwrap());
    let labels: HashMap<&str, &str> = called
        .iter()
        .flat_map(|(f, labels)| labels.iter().map(move |l| (l.as_str(), f.as_str())))
        .collect();
    let out = stdout_of(
        Command::new("callgrind_annotate")
            .args(["--inclusive=yes", "--threshold=100", "--auto=no"])
            .arg(file)
            // callgrind_annotate strips the working folder from `fl=` names but not from `cfl=`
            // ones: from the root it strips nothing.
            .current_dir("/"),
    );
    let text = String::from_utf8(out).unwrap();
    let mut rows = HashMap::new();
    let table = text.split("file:function").nth(1).unwrap();
    for line in table.lines().skip(2) {
        let line = line.trim();
        if line.is_empty() || line.starts_with('-') {
            break;
        }
        let (cost, rest) = line.split_once(' ').unwrap();
        let cost: i64 = cost.replace(',', "").parse().unwrap();
        // After the percentage (one event only): `file:function [object]`.
        let label = rest.split_once("%) ").map_or(rest, |(_, l)| l).trim();
        let label = label.rsplit_once(" [").map_or(label, |(l, _)| l);
        if let Some(&function) = labels.get(label) {
            *rows.entry(function.to_owned()).or_insert(0) += cost;
        }
    }
    assert_eq!(
        rows.len(),
        called.len(),
        "{}: rows of called functions missing",
        file.display()
    );
    rows
}

#[test]
fn callgrind_nytprof_inclusive_costs_equal_nytprofcg() {
    if !have("callgrind_annotate", &["--help"]) || !have("nytprofcg", &["--help"]) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    for (n, input) in nytprof_inputs().iter().enumerate() {
        let ours = tmp.path().join(format!("{n}.ours"));
        std::fs::write(&ours, convert("callgrind", input, &["--metric", "time"])).unwrap();
        let theirs = tmp.path().join(format!("{n}.nytprofcg"));
        stdout_of(
            Command::new("nytprofcg")
                .arg("-f")
                .arg(input)
                .arg("-o")
                .arg(&theirs),
        );
        let (ours, theirs) = (annotate_inclusive(&ours), annotate_inclusive(&theirs));
        assert!(!theirs.is_empty(), "{}", input.display());
        assert_eq!(ours, theirs, "{}", input.display());
    }
}

#[test]
fn every_input_validates_against_speedscopes_schema() {
    let speedscope = profcodec_testkit::speedscope::Speedscope::from_env();
    let tmp = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (n, input) in all_inputs().iter().enumerate() {
        let json = convert("speedscope", input, &[]);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert!(
            !value["profiles"].as_array().unwrap().is_empty(),
            "{}: no profile",
            input.display()
        );
        let file = tmp.path().join(format!("{n}.speedscope.json"));
        std::fs::write(&file, json).unwrap();
        files.push(file);
    }
    let (Some(speedscope), Some(node_path)) = (speedscope, std::env::var_os("PROFCODEC_NODE_PATH"))
    else {
        assert!(
            !under_xtask(),
            "PROFCODEC_NODE_PATH is unset under the xtask"
        );
        return;
    };
    stdout_of(
        Command::new("node")
            .arg(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/validate-speedscope.cjs"),
            )
            .arg(speedscope.schema())
            .args(&files)
            .env("NODE_PATH", node_path),
    );
}

#[test]
fn speedscope_renders_an_evented_and_a_sampled_export() {
    let Some(speedscope) = profcodec_testkit::speedscope::Speedscope::from_env() else {
        assert!(
            !under_xtask(),
            "PROFCODEC_SPEEDSCOPE is unset under the xtask"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    for (input, evented) in [
        (testdata("easyprofiler/small_v210.prof"), true),
        (testdata("nytprof/hello.nytprof.out"), false),
    ] {
        let json = convert("speedscope", &input, &[]);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(
            value["profiles"][0]["type"],
            if evented { "evented" } else { "sampled" }
        );
        let name = value["name"].as_str().unwrap().to_owned();
        let file = tmp.path().join("profile.speedscope.json");
        std::fs::write(&file, &json).unwrap();
        let rendered = speedscope.load(&file, tmp.path()).unwrap();
        assert!(
            rendered.shows(&name),
            "{}: speedscope shows {:?}",
            input.display(),
            rendered.title
        );
        // A page with a flame chart drawn is far from a blank PNG of a few hundred bytes.
        let png = std::fs::metadata(&rendered.screenshot).unwrap().len();
        assert!(
            png > 8_000,
            "{}: screenshot of {png} bytes",
            input.display()
        );
    }
}

#[test]
fn convert_refuses_an_unknown_metric_and_writes_atomically() {
    let input = testdata("nytprof/hello.nytprof.out");
    let out = profcodec()
        .args(["convert", "--to", "folded", "--metric", "bogus"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("time"));
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out.folded");
    for force in [false, true] {
        let mut cmd = profcodec();
        cmd.args(["convert", "--to", "folded", "-o"])
            .arg(&target)
            .arg(&input);
        if force {
            cmd.arg("--force");
        }
        stdout_of(&mut cmd);
    }
    let again = profcodec()
        .args(["convert", "--to", "folded", "-o"])
        .arg(&target)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(
        again.status.code(),
        Some(3),
        "an existing output needs --force"
    );
    assert_eq!(
        std::fs::read(&target).unwrap(),
        convert("folded", &input, &[])
    );
    let folder = tmp.path().join("split");
    std::fs::create_dir(&folder).unwrap();
    stdout_of(
        profcodec()
            .args(["convert", "--to", "callgrind", "--split", "-o"])
            .arg(&folder)
            .args([&input, &testdata("easyprofiler/small_v210.prof")]),
    );
    let mut names: Vec<String> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["hello.nytprof.out.callgrind", "small_v210.prof.callgrind"]
    );
}

#[test]
fn max_output_refuses_a_larger_output_and_writes_nothing() {
    let input = testdata("nytprof/hello.nytprof.out");
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("out.folded");
    for to in ["folded", "speedscope", "pprof"] {
        let refused = profcodec()
            .args(["convert", "--to", to, "--max-output", "10", "-o"])
            .arg(&target)
            .arg(&input)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(!refused.status.success(), "{to}: {stderr}");
        assert!(stderr.contains("--max-output"), "{to}: {stderr}");
        assert!(!target.exists(), "{to}: an output was left");
    }
    let bad = profcodec()
        .args(["convert", "--to", "folded", "--max-output", "lots"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    // Within the budget (or without one), the output is the same.
    let within = convert("folded", &input, &["--max-output", "1M"]);
    assert_eq!(
        within,
        convert("folded", &input, &["--max-output", "unlimited"])
    );
    assert_eq!(within, convert("folded", &input, &[]));
}

#[test]
fn folded_string_evals_equal_nytprofcalls() {
    if !have("nytprofcalls", &["--help"]) {
        return;
    }
    let file = testdata("nytprof/evals_small.nytprof.out");
    let ours = lines(&convert("folded", &file, &[]));
    let theirs = lines(&stdout_of(Command::new("nytprofcalls").arg(&file)));
    assert!(
        ours.keys()
            .any(|l| String::from_utf8_lossy(l).contains("(eval 0)[")),
        "{ours:?}"
    );
    assert_eq!(ours, theirs);
}
