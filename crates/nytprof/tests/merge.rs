//! `merge`: corpus profiles merged as `nytprofmerge` merges them. Without Perl: the merged model
//! adds up the inputs and its file loads back into it. With the real Devel::NYTProf 6.12
//! (Debian's libdevel-nytprof-perl, which `cargo xtask test` installs): Devel::NYTProf::Data
//! loads our merged file, and its per-line and per-sub totals (through
//! `testdata/nytprof/data_json.pl`, evals collapsed as Data.pm does by default) and
//! `nytprofcsv`'s report equal those of `nytprofmerge`'s output of the same inputs: corpus
//! profiles of one program, a forked child with its parent, a file with itself, two different
//! programs, every corpus profile at once, and runs of a program full of string evals.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_nytprof::merge::{Merger, merge};
use profcodec_nytprof::{ModelOptions, Profile, parse};
use serde_json::Value;

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof")
}

/// Whether the real Devel::NYTProf is installed (as `tests/interop.rs` finds it); in CI, where
/// `cargo xtask test` installs it, its absence is a failure.
fn have_nytprof() -> bool {
    let found = Command::new("perl")
        .args(["-MDevel::NYTProf::Data", "-e1"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found || std::env::var_os("CI").is_none(),
        "perl -MDevel::NYTProf::Data missing in CI: install libdevel-nytprof-perl \
         (cargo xtask test does)"
    );
    if !found {
        println!(
            "!!!!! SKIPPED: perl -MDevel::NYTProf::Data is not installed; the comparison with \
             nytprofmerge did not run !!!!!"
        );
    }
    found
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// Our merge of `inputs`, written to `out` (deflated when an input was, as the CLI writes it).
fn our_merge(inputs: &[PathBuf], out: &Path) -> Profile {
    let mut merger = Merger::new();
    for input in inputs {
        merger.add_bytes(&read(input)).unwrap();
    }
    let level = merger.compression();
    let merged = merger.finish();
    let mut bytes = Vec::new();
    merged.write_with(&mut bytes, level).unwrap();
    std::fs::write(out, bytes).unwrap();
    merged
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-3)
}

#[test]
fn a_file_merged_with_itself_counts_twice() {
    let Some(dir) = corpus() else { return };
    let bytes = read(&dir.join("nested__default.nytprof.out"));
    let once = Profile::from_bytes(&bytes).unwrap();
    let twice = merge([&bytes[..], &bytes[..]]).unwrap();
    assert_eq!(twice.files.len(), once.files.len());
    assert_eq!(twice.pids.len(), 2 * once.pids.len());
    for (name, si) in &once.subs {
        let m = &twice.subs[name];
        assert_eq!(m.calls, 2 * si.calls, "{name}");
        assert!(close(m.incl, 2.0 * si.incl), "{name}");
        assert_eq!((m.fid, m.first_line), (si.fid, si.first_line), "{name}");
    }
    // Every line counts twice, but for the first statement of the second run, which the `-`
    // left pending at the end of the first discounts (as in nytprofmerge's file).
    let mut short = 0;
    for (fid, lines) in &once.line_times {
        for (line, lt) in lines {
            let m = twice.line_times[fid][line];
            assert!(close(m.time, 2.0 * lt.time));
            short += 2 * lt.count - m.count;
        }
    }
    assert!((0..=1).contains(&short), "{short}");
    assert_eq!(
        twice.totals.stmts_discounted,
        2 * once.totals.stmts_discounted + short as u64
    );
    let d = once.totals.profiler_duration.unwrap();
    assert!(close(twice.totals.profiler_duration.unwrap(), 2.0 * d));

    // The written file loads back into the merged model.
    let mut out = Vec::new();
    twice.write(&mut out).unwrap();
    let back = Profile::from_bytes(&out).unwrap();
    assert_eq!(back.pids.len(), twice.pids.len());
    assert!(back.complete());
    assert!(close(
        back.totals.profiler_duration.unwrap(),
        twice.totals.profiler_duration.unwrap()
    ));
    assert_eq!(back.totals.stmts_measured, twice.totals.stmts_measured);
    for (name, si) in &twice.subs {
        assert_eq!(back.subs[name].calls, si.calls, "{name}");
    }
    for (fid, lines) in &twice.line_times {
        for (line, lt) in lines {
            assert_eq!(back.line_times[fid][line].count, lt.count);
        }
    }
}

#[test]
fn files_are_matched_by_name_and_attributes_merged() {
    let Some(dir) = corpus() else { return };
    let parent = read(&dir.join("fork__compress0.nytprof.out"));
    let child = read(&dir.join("fork__compress0.31274.nytprof.out"));
    let (p, c) = (
        Profile::from_bytes(&parent).unwrap(),
        Profile::from_bytes(&child).unwrap(),
    );
    let mut merger = Merger::new();
    merger.add_bytes(&parent).unwrap();
    merger.add_bytes(&child).unwrap();
    assert_eq!(merger.inputs(), 2);
    assert_eq!(merger.compression(), None);
    // The child's forkdepth option differs: said once, the parent's kept.
    assert!(
        merger.warnings().iter().any(|w| w.contains("forkdepth")),
        "{:?}",
        merger.warnings()
    );
    let merged = merger.finish();
    assert_eq!(merged.options["forkdepth"], p.options["forkdepth"]);
    let names = |p: &Profile| {
        let mut n: Vec<String> = p.files.values().map(|f| f.name.clone()).collect();
        n.sort();
        n.dedup();
        n
    };
    let mut all = names(&p);
    all.extend(names(&c));
    all.sort();
    all.dedup();
    assert_eq!(names(&merged), all);
    assert_eq!(
        merged.subs["main::work"].calls,
        p.subs["main::work"].calls + c.subs["main::work"].calls
    );
    let basetime = |p: &Profile| p.attributes["basetime"].parse::<f64>().unwrap();
    assert_eq!(basetime(&merged), basetime(&p).min(basetime(&c)));
    assert_eq!(
        merged.attributes["application"],
        format!("{} (2 runs)", p.attributes["application"])
    );
}

#[test]
fn a_damaged_input_is_an_error_and_merges_nothing() {
    let Some(dir) = corpus() else { return };
    let good = read(&dir.join("multi__compress0.nytprof.out"));
    let zipped = read(&dir.join("multi__default.nytprof.out"));
    let mut merger = Merger::new();
    merger.add_bytes(&good).unwrap();
    let before = merger.finish();
    // Cut in a record, in the middle of the zlib stream, in the last record (a process's end).
    let cuts = [
        (&good, good.len() / 3),
        (&good, good.len() - 7),
        (&zipped, zipped.len() / 3),
        (&zipped, zipped.len() / 2),
    ];
    for (bytes, cut) in cuts {
        let mut merger = Merger::new();
        merger.add_bytes(&good).unwrap();
        let e = merger.add_bytes(&bytes[..cut]).unwrap_err();
        assert!(e.to_string().contains("byte"), "{e}");
        assert_eq!(merger.inputs(), 1, "nothing of the cut file is merged");
        assert_eq!(merger.finish(), before);
    }
    let e = merge([&good[..], b"NYTProf 5 0\n\x01\x02"]).unwrap_err();
    assert_eq!(e.0, 1, "the failing input's position");
    assert!(merge([&b"not a profile"[..]]).is_err());
}

/// Data.pm's view (`data_json.pl`, evals collapsed) of `file`.
fn data_json(file: &Path) -> Value {
    let out = Command::new("perl")
        .arg(testdata().join("data_json.pl"))
        .arg(file)
        .arg("collapse")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "Devel::NYTProf::Data cannot load {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Equal JSON, numbers within float rounding (the merged file sums each line's ticks once; the
/// real one sums every statement's). `path` names the place of a difference.
fn same(ours: &Value, theirs: &Value, path: &str, diffs: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => same(x, y, &format!("{path}/{k}"), diffs),
                    _ => diffs.push(format!("{path}/{k} is only in one")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                same(x, y, &format!("{path}/{i}"), diffs);
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            if !close(a.as_f64().unwrap(), b.as_f64().unwrap()) {
                diffs.push(format!("{path}: ours {a}, theirs {b}"));
            }
        }
        (a, b) if a == b => {}
        (a, b) => diffs.push(format!("{path}: ours {a}, theirs {b}")),
    }
}

/// `nytprofcsv`'s report of `file` into `out`: per file (named with its fid), per line, the
/// time, the count and the code.
fn csv(file: &Path, out: &Path) -> BTreeMap<String, Vec<(f64, String)>> {
    let status = Command::new("nytprofcsv")
        .arg("-f")
        .arg(file)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    assert!(status.status.success(), "nytprofcsv {}", file.display());
    let mut report = BTreeMap::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let rows = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| {
                let (time, rest) = l.split_once(',').unwrap();
                let (count, rest) = rest.split_once(',').unwrap();
                let (_, code) = rest.split_once(',').unwrap();
                (time.parse().unwrap(), format!("{count},{code}"))
            })
            .collect();
        report.insert(path.file_name().unwrap().to_string_lossy().into(), rows);
    }
    report
}

/// Merges `inputs` with `nytprofmerge` and with us, and compares what Devel::NYTProf reads.
fn compare(inputs: &[PathBuf], dir: &Path, name: &str) {
    let theirs = dir.join(format!("{name}.theirs"));
    let out = Command::new("nytprofmerge")
        .arg("-o")
        .arg(&theirs)
        .args(inputs)
        .output()
        .unwrap();
    assert!(out.status.success(), "nytprofmerge {name}");
    let ours = dir.join(format!("{name}.ours"));
    our_merge(inputs, &ours);

    let mut diffs = Vec::new();
    same(&data_json(&ours), &data_json(&theirs), "", &mut diffs);
    assert!(
        diffs.is_empty(),
        "{name}: Data.pm's views differ: {diffs:#?}"
    );

    // nytprofcsv prints seconds to the microsecond; a time on a half microsecond may print
    // either way after float rounding.
    let (a, b) = (
        csv(&ours, &dir.join(format!("{name}.csv.ours"))),
        csv(&theirs, &dir.join(format!("{name}.csv.theirs"))),
    );
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "{name}: nytprofcsv's files"
    );
    for (file, rows) in &a {
        let other = &b[file];
        assert_eq!(rows.len(), other.len(), "{name}: {file}");
        for ((t1, r1), (t2, r2)) in rows.iter().zip(other) {
            assert_eq!(r1, r2, "{name}: {file}: count and code");
            assert!(
                (t1 - t2).abs() <= 1.0001e-6,
                "{name}: {file}: {t1} vs {t2} ({r1})"
            );
        }
    }
}

#[test]
fn real_nytprofmerge_agrees() {
    let Some(corpus) = corpus() else { return };
    if !have_nytprof() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let c = |n: &str| corpus.join(n);
    let mut every: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
        .collect();
    every.sort();
    let sets: Vec<(&str, Vec<PathBuf>)> = vec![
        (
            "multi",
            vec![
                c("multi__default.nytprof.out"),
                c("multi__compress0.nytprof.out"),
            ],
        ),
        (
            "fork",
            vec![
                c("fork__compress0.nytprof.out"),
                c("fork__compress0.31274.nytprof.out"),
            ],
        ),
        (
            "itself",
            vec![
                c("nested__default.nytprof.out"),
                c("nested__default.nytprof.out"),
            ],
        ),
        (
            "two_programs",
            vec![
                c("nested__compress0.nytprof.out"),
                c("multi__default.nytprof.out"),
            ],
        ),
        ("every", every),
    ];
    for (name, inputs) in &sets {
        compare(inputs, dir, name);
    }

    // Runs of programs of string evals, with and without block times: the eval and sub
    // folding. `evals.pl`: anonymous subs in evals, nested evals, many sources at one line;
    // the program below: a named sub defined again, alike, in evals at one line, and once
    // with another body (and line range) at that line.
    let redefined = dir.join("redefined.pl");
    std::fs::write(&redefined, REDEFINED).unwrap();
    for (name, program, options) in [
        ("evals", testdata().join("evals.pl"), "compress=0"),
        ("evals_blocks", testdata().join("evals.pl"), "blocks=1"),
        ("redefined", redefined.clone(), "compress=0"),
        ("redefined_blocks", redefined.clone(), "blocks=1:compress=0"),
    ] {
        let runs: Vec<PathBuf> = (0..3)
            .map(|i| {
                let out = dir.join(format!("{name}.{i}.out"));
                let status = Command::new("perl")
                    .arg("-d:NYTProf")
                    .arg(&program)
                    .env("NYTPROF", format!("file={}:{options}", out.display()))
                    .current_dir(dir)
                    .output()
                    .unwrap();
                assert!(
                    status.status.success(),
                    "perl -d:NYTProf {}",
                    program.display()
                );
                out
            })
            .collect();
        compare(&runs, dir, name);
    }
}

/// `testdata/nytprof/line-directive.pl`'s two runs: string evals with a `#line N "file"`
/// directive (as Test::Builder's `cmp_ok` compiles them), whose statements count in a plain file
/// of that name, and a named sub defined by an eval at one place with another line range in each
/// run. `nytprofmerge` writes the second definition with the fid it has in its input, which in
/// the merged file is the `#line` file's: Data.pm lists the sub among that file's subs, and
/// `nytprofcsv` then folds that file's leading blank lines differently (the place of its
/// counts in the report).
#[test]
fn a_sub_redefined_with_other_lines_is_defined_at_its_input_fid() {
    let runs: Vec<PathBuf> = [1, 2]
        .map(|i| testdata().join(format!("line-directive.{i}.nytprof.out")))
        .into();
    let inputs: Vec<Vec<u8>> = runs.iter().map(|p| read(p)).collect();
    let merged = merge(inputs.iter().map(Vec::as_slice)).unwrap();
    let fid_of = |suffix: &str| {
        let found: Vec<u32> = merged
            .files
            .values()
            .filter(|f| f.name.ends_with(suffix))
            .map(|f| f.fid)
            .collect();
        found
    };
    let line_file = fid_of("/(eval in cmp_ok) line-directive.pl");
    let evals = fid_of("[line-directive.pl:25]");
    assert_eq!(line_file.len(), 1, "the `#line` file, matched by name");
    assert_eq!(evals.len(), 2, "one eval per run");
    let [first, second] = [evals[0], evals[1]];
    // The second run's eval has fid 3 in its input, the `#line` file's merged fid.
    assert_eq!(line_file[0], 3);
    let defined_in = |fid: u32| merged.files[&fid].subs_defined.contains("Gen::new");
    assert!(defined_in(first) && defined_in(line_file[0]) && !defined_in(second));
    // Its definition is the lowest fid's, the first run's (lines 2 to 5), as Data.pm keeps it;
    // its calls stay where they were made.
    let new = &merged.subs["Gen::new"];
    assert_eq!(
        (new.fid, new.first_line, new.last_line),
        (Some(first), Some(2), Some(5))
    );
    assert_eq!(new.calls, 6);
    // Each eval keeps its own lines: the second's sub body is one line lower.
    let lines = |fid: u32| merged.line_times[&fid].keys().copied().collect::<Vec<_>>();
    assert_eq!(
        (lines(first), lines(second)),
        (vec![3, 4, 6], vec![4, 5, 7])
    );

    if !have_nytprof() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    compare(&runs, tmp.path(), "line_directive");
    // Either order of the runs.
    let reversed: Vec<PathBuf> = runs.iter().rev().cloned().collect();
    compare(&reversed, tmp.path(), "line_directive_reversed");
}

/// A named sub defined in string evals at one line: four times alike, then with a longer body.
const REDEFINED: &str = r#"use strict; use warnings; no warnings 'redefine';
my $t = 0;
for my $i (1 .. 4) { eval "sub named {\n my \$x = shift;\n return \$x * 2;\n}\n1" or die $@; $t += named($i) }
for my $i (1 .. 2) { eval "sub named {\n my \$x = shift;\n my \$y = \$x + 1;\n return \$y * 3;\n}\n1" or die $@; $t += named($i) }
print "$t\n";
"#;

#[test]
fn the_merged_file_is_a_valid_profile() {
    let Some(dir) = corpus() else { return };
    let inputs = [
        dir.join("multi__default.nytprof.out"),
        dir.join("multi__compress0.nytprof.out"),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("merged.out");
    let merged = our_merge(&inputs, &out);
    let bytes = read(&out);
    parse(&bytes).unwrap().validate().unwrap();
    let (_, report, error) = Profile::from_bytes_report(&bytes, ModelOptions::raw());
    assert!(error.is_none());
    assert!(report.compressed, "deflated, as the first input was");
    let back = Profile::from_bytes(&bytes).unwrap();
    assert_eq!(
        back.subs.len(),
        Profile::from_bytes(&bytes).unwrap().subs.len()
    );
    assert_eq!(
        back.subs["My::Mod::add"].calls,
        merged.subs["My::Mod::add"].calls
    );
}

/// Damaged files (bit flips and cuts of a testdata profile) after a good one: an error, or a
/// merged model that writes or refuses with a typed error; never a panic.
#[test]
fn damaged_inputs_never_panic() {
    let hello = read(&testdata().join("hello.nytprof.out"));
    let evals = read(&testdata().join("evals_small.nytprof.out"));
    for good in [&hello, &evals] {
        let cuts = profcodec_testkit::hostile::truncation_points(good.len())
            .into_iter()
            .step_by(17)
            .map(|cut| good[..cut].to_vec());
        for bad in profcodec_testkit::hostile::bit_flips(good, 150).chain(cuts) {
            let mut merger = Merger::new();
            merger.add_bytes(good).unwrap();
            if merger.add_bytes(&bad).is_ok() {
                // A flip the format cannot see (a time, a count): merged again.
                let _ = merger.add_bytes(&bad);
            }
            let merged = merger.finish();
            let mut out = Vec::new();
            if merged.write(&mut out).is_ok() {
                Profile::from_bytes(&out).unwrap();
            }
        }
    }
}

/// Merged counts beyond the 32 bits of a `c` record are refused, not cut.
#[test]
fn a_count_beyond_32_bits_is_refused() {
    let hello = read(&testdata().join("hello.nytprof.out"));
    let mut merged = merge([&hello[..]]).unwrap();
    let fib = merged.subs.get_mut("main::fib").unwrap();
    let place = fib
        .callers
        .values_mut()
        .flat_map(|l| l.values_mut())
        .next()
        .unwrap();
    place.count += u64::from(u32::MAX);
    fib.calls += u64::from(u32::MAX);
    let e = merged.write(&mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("call count"), "{e}");
}
