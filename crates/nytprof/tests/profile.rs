//! The format-neutral model (`profcodec_nytprof::to_profile`) judged by the real tools of
//! Devel::NYTProf 6.12 (Debian's libdevel-nytprof-perl):
//! - per sub, the model's `top` rows (flat values: calls, self and inclusive time) equal
//!   `Devel::NYTProf::Data`'s `SubInfo` `calls`, `excl_time` and `incl_time` (printed with 17
//!   significant digits, so compared exactly), evals collapsed as Data.pm does by default;
//! - the model's call stacks, written as `nytprofcalls` writes them (names with `(eval 0)`,
//!   values in ticks), equal the lines `nytprofcalls` prints, as a multiset; so do their call
//!   counts against `nytprofcalls --calls`.
//!
//! Profiles: every corpus profile (`PROFCODEC_CORPUS`), the testdata profiles, and profiles made
//! at test time of `testdata/nytprof/*.pl` (recursion.pl: direct, mutual, deep recursion and
//! recursion through closures; interop.pl with several option sets; evals.pl) and of a real
//! program with recursion (`json_pp` decoding deeply nested JSON).
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_nytprof::calls::nytprofcalls_name;
use profcodec_profile::{FrameKind, Query, Source};
use serde_json::Value;

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof")
}

fn have_nytprof() -> bool {
    Command::new("perl")
        .args(["-MDevel::NYTProf::Data", "-e1"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Per sub, Data.pm's calls, exclusive and inclusive seconds (17 significant digits).
const SUBS_PL: &str = r#"
use Devel::NYTProf::Data; use JSON::PP;
my $p = Devel::NYTProf::Data->new({ filename => shift, quiet => 1 });
my %out;
for my $si (values %{ $p->subname_subinfo_map }) {
    $out{ $si->subname } = [ $si->calls + 0, sprintf('%.17g', $si->excl_time), sprintf('%.17g', $si->incl_time) ];
}
print JSON::PP->new->canonical->utf8->encode(\%out);
"#;

/// Text as Perl prints a byte string: one character per byte.
fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The lines `nytprofcalls [--calls] FILE` prints, as a sorted multiset of (path, value).
fn nytprofcalls(file: &Path, calls: bool) -> Vec<(String, i64)> {
    let out = run(Command::new("nytprofcalls")
        .args(calls.then_some("--calls"))
        .arg(file));
    let mut lines: Vec<(String, i64)> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let space = l.iter().rposition(|&b| b == b' ').unwrap();
            let value = std::str::from_utf8(&l[space + 1..]).unwrap();
            (latin1(&l[..space]), value.parse().unwrap())
        })
        .collect();
    lines.sort();
    lines
}

/// `%d` of a sum of ticks, as Perl's printf truncates it; a sum that came back from seconds
/// within rounding of an integer is that integer.
fn perl_d(ticks: f64) -> i64 {
    let r = ticks.round();
    if (ticks - r).abs() <= 1e-6 * r.abs().max(1.0) {
        r as i64
    } else {
        ticks.trunc() as i64
    }
}

struct Figures {
    subs: usize,
    stack_lines: usize,
    /// Stack lines in which a sub calls itself, directly or through others.
    recursive_lines: usize,
}

/// Every check on one profile; returns what was compared.
fn check(file: &Path) -> Figures {
    let name = file.display().to_string();
    let bytes = std::fs::read(file).unwrap();
    let model = profcodec_nytprof::to_profile::to_profile(&bytes).unwrap();
    let raw = profcodec_nytprof::Profile::from_bytes(&bytes).unwrap();
    let tps = f64::from(raw.ticks_per_sec());

    // Per sub: the model's top rows against Data.pm's SubInfo.
    let perl: BTreeMap<String, Value> =
        serde_json::from_slice(&run(Command::new("perl").args(["-e", SUBS_PL]).arg(file))).unwrap();
    let table = model.top(&Query::new().source(Source::Flat)).unwrap();
    assert_eq!(table.value_type, "time");
    assert_eq!(table.unit, "seconds");
    let rows: HashMap<&str, _> = table.rows.iter().map(|r| (r.name.as_str(), r)).collect();
    assert_eq!(rows.len(), table.rows.len(), "{name}: one row per sub");
    for (sub, v) in &perl {
        let calls = v[0].as_f64().unwrap();
        let excl: f64 = v[1].as_str().unwrap().parse().unwrap();
        let incl: f64 = v[2].as_str().unwrap().parse().unwrap();
        match rows.get(sub.as_str()) {
            Some(row) => {
                assert_eq!(row.calls, Some(calls), "{name}: calls of {sub}");
                assert_eq!(row.self_value, excl, "{name}: exclusive time of {sub}");
                assert_eq!(row.inclusive, Some(incl), "{name}: inclusive time of {sub}");
            }
            // A sub never called and without time makes no row.
            None => assert_eq!((calls, excl, incl), (0.0, 0.0, 0.0), "{name}: {sub}"),
        }
    }
    for row in &table.rows {
        assert!(perl.contains_key(&row.name), "{name}: {} unknown", row.name);
    }

    // Call stacks: the model's nodes written as nytprofcalls writes them.
    let time = model.value_type_by_name("time").unwrap();
    let calls = model.calls_value_type().unwrap();
    let mut ticks: HashMap<String, f64> = HashMap::new();
    let mut returns: HashMap<String, f64> = HashMap::new();
    for v in model.node_values() {
        let mut frames: Vec<_> = model.stack(v.node).collect();
        frames.reverse();
        let path = frames
            .iter()
            .map(|&f| {
                assert_eq!(model.frame(f).kind, FrameKind::Function);
                nytprofcalls_name(&model.frame_label(f)).into_owned()
            })
            .collect::<Vec<_>>()
            .join(";");
        let value = v.self_value.unwrap();
        if v.value_type == time {
            *ticks.entry(path).or_default() += value * tps;
        } else if v.value_type == calls {
            *returns.entry(path).or_default() += value;
        }
    }
    for (want_calls, ours) in [(false, &ticks), (true, &returns)] {
        let mut ours: Vec<(String, i64)> =
            ours.iter().map(|(p, &t)| (p.clone(), perl_d(t))).collect();
        ours.sort();
        let theirs = nytprofcalls(file, want_calls);
        if ours != theirs {
            let o: std::collections::BTreeSet<_> = ours.iter().collect();
            let t: std::collections::BTreeSet<_> = theirs.iter().collect();
            panic!(
                "{name}: stacks differ (--calls {want_calls}):\n only ours {:?}\n only nytprofcalls {:?}",
                o.difference(&t).take(10).collect::<Vec<_>>(),
                t.difference(&o).take(10).collect::<Vec<_>>()
            );
        }
    }
    let recursive_lines = ticks
        .keys()
        .filter(|p| {
            let subs: Vec<&str> = p.split(';').collect();
            let distinct: std::collections::HashSet<&&str> = subs.iter().collect();
            distinct.len() < subs.len()
        })
        .count();
    Figures {
        subs: perl.len(),
        stack_lines: ticks.len(),
        recursive_lines,
    }
}

fn profile_program(dir: &Path, out: &str, options: &str, args: &[&str], stdin: Option<&Path>) {
    let spec = if options.is_empty() {
        format!("file={out}")
    } else {
        format!("file={out}:{options}")
    };
    let mut cmd = Command::new("perl");
    cmd.arg("-d:NYTProf")
        .args(args)
        .env("NYTPROF", spec)
        .current_dir(dir);
    if let Some(input) = stdin {
        cmd.stdin(std::fs::File::open(input).unwrap());
    }
    run(&mut cmd);
}

#[test]
fn model_equals_data_pm_and_nytprofcalls() {
    if !have_nytprof() {
        println!("not run: perl -MDevel::NYTProf::Data is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let mut files: Vec<PathBuf> = Vec::new();
    if let Some(corpus) = std::env::var_os("PROFCODEC_CORPUS") {
        let mut corpus: Vec<PathBuf> = std::fs::read_dir(Path::new(&corpus).join("nytprof"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
            .collect();
        corpus.sort();
        assert!(!corpus.is_empty());
        files.extend(corpus);
    }
    for f in ["hello.nytprof.out", "evals_small.nytprof.out"] {
        files.push(testdata().join(f));
    }
    let t = testdata();
    let recursion = t.join("recursion.pl");
    let interop = t.join("interop.pl");
    let evals = t.join("evals.pl");
    let recursion = recursion.to_str().unwrap();
    for (out, options) in [
        ("recursion.out", ""),
        ("recursion_calls2.out", "calls=2:compress=0"),
    ] {
        profile_program(dir, out, options, &[recursion, "20"], None);
        files.push(dir.join(out));
    }
    for (out, options) in [
        ("interop.out", ""),
        ("interop_blocks.out", "blocks=1"),
        ("interop_savesrc0.out", "savesrc=0"),
        ("interop_findcaller.out", "findcaller=1:calls=2"),
    ] {
        profile_program(dir, out, options, &[interop.to_str().unwrap()], None);
        files.push(dir.join(out));
    }
    profile_program(dir, "evals.out", "", &[evals.to_str().unwrap()], None);
    files.push(dir.join("evals.out"));
    // A real program with recursion: JSON::PP's recursive-descent decoder in json_pp, on
    // JSON nested 60 deep, many times over.
    let json = dir.join("nested.json");
    let mut text = String::from("[");
    for i in 0..1500 {
        if i > 0 {
            text.push(',');
        }
        let depth = 1 + i % 60;
        text.push_str(&"{\"a\":[".repeat(depth));
        text.push_str(&i.to_string());
        text.push_str(&"]}".repeat(depth));
    }
    text.push(']');
    std::fs::write(&json, text).unwrap();
    let json_pp =
        String::from_utf8(run(Command::new("sh").args(["-c", "command -v json_pp"]))).unwrap();
    profile_program(
        dir,
        "json_pp.out",
        "",
        &[json_pp.trim(), "-t", "null"],
        Some(&json),
    );
    files.push(dir.join("json_pp.out"));

    let (a, b) = files.split_at(files.len() / 2);
    let figures: Vec<(String, Figures)> = std::thread::scope(|s| {
        let handles: Vec<_> = [a, b]
            .into_iter()
            .map(|half| {
                s.spawn(move || {
                    half.iter()
                        .map(|f| {
                            (
                                f.file_name().unwrap().to_string_lossy().into_owned(),
                                check(f),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (file, f) in &figures {
        println!(
            "{file}: {} subs, {} stack lines ({} recursive)",
            f.subs, f.stack_lines, f.recursive_lines
        );
        assert!(f.subs > 0, "{file}");
    }
    // The recursive programs do recurse in the stacks compared.
    for (file, f) in &figures {
        if file.starts_with("recursion") || file.starts_with("json_pp") || file.starts_with("hello")
        {
            assert!(f.recursive_lines > 10, "{file}: no recursion in the stacks");
        }
    }
}
