//! Interop with the real Devel::NYTProf 6.12 (Debian's libdevel-nytprof-perl, installed by
//! `cargo xtask test`): our own Perl programs are profiled with many option sets; for each
//! profile, our model equals Devel::NYTProf::Data's (through `testdata/nytprof/data_json.pl`),
//! both raw (`skip_collapse_evals => 1`) and with evals collapsed (Data.pm's default), and our
//! `dump_profile_data` text equals Data.pm's in both modes; our record-level rewrite gives the
//! same `dump_profile_data`, `nytprofhtml` accepts it, and the file our model writer makes
//! (block and sub line times included) loads back into the same model and dump. A
//! Pynytprof-layout file converted by us loads too.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_nytprof::model::AttrValue;
use profcodec_nytprof::{ModelOptions, Profile, parse, pynytprof, write};
use serde_json::{Map, Value, json};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof")
}

fn have_nytprof() -> bool {
    Command::new("perl")
        .args(["-MDevel::NYTProf::Data", "-e1"])
        .output()
        .is_ok_and(|o| o.status.success())
}

const OPTION_SETS: &[(&str, &str)] = &[
    ("default", ""),
    ("compress0", "compress=0"),
    ("compress1", "compress=1"),
    ("compress9", "compress=9"),
    ("blocks", "blocks=1"),
    ("calls0", "calls=0"),
    ("calls2", "calls=2"),
    ("stmts0", "stmts=0"),
    ("subs0", "subs=0"),
    ("savesrc0", "savesrc=0"),
    ("findcaller", "findcaller=1"),
    ("slowops0", "slowops=0"),
    (
        "mixed",
        "compress=0:blocks=1:calls=2:findcaller=1:slowops=0",
    ),
];

const EVAL_OPTION_SETS: &[(&str, &str)] = &[
    ("default", ""),
    ("compress0", "compress=0"),
    ("savesrc0", "savesrc=0"),
    ("blocks", "blocks=1:compress=0"),
];

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Data.pm's view as JSON, evals collapsed (its default) or not.
fn perl_json(file: &Path, collapse: bool) -> Value {
    let out = run(Command::new("perl")
        .arg(testdata().join("data_json.pl"))
        .arg(file)
        .args(collapse.then_some("collapse")));
    serde_json::from_slice(&out).unwrap()
}

/// `dump_profile_data({separator => "\t"})` of `file`, evals collapsed (Data.pm's default) or
/// not. With `skip_fileinfo_hook => sub { 0 }`, which skips only the merged-away evals: 6.12's
/// plain dump dies on them (`Can't call method "inc" on an undefined value`). `@INC` is emptied
/// while dumping so that file names are printed whole, as ours are, and the text is printed as
/// UTF-8 (Perl would print a Latin-1 string's characters as single bytes).
fn perl_dump(file: &Path, collapse: bool) -> String {
    let script = format!(
        "my $p = Devel::NYTProf::Data->new({{filename => shift, quiet => 1, skip_collapse_evals => {}}}); local @INC = (); binmode STDOUT, q{{:utf8}}; $p->dump_profile_data({{separator => qq{{\\t}}, skip_fileinfo_hook => sub {{ 0 }}}})",
        u8::from(!collapse)
    );
    String::from_utf8(run(Command::new("perl")
        .args(["-MDevel::NYTProf::Data", "-e", &script])
        .arg(file)))
    .unwrap()
}

/// Two dumps line by line, numbers within a relative `tol`.
fn compare_dumps(what: &str, perl: &str, ours: &str, tol: f64) {
    let (p, o): (Vec<&str>, Vec<&str>) = (perl.lines().collect(), ours.lines().collect());
    for (i, (a, b)) in p.iter().zip(&o).enumerate() {
        if a == b {
            continue;
        }
        let ta: Vec<&str> = a.split(['\t', ' ']).collect();
        let tb: Vec<&str> = b.split(['\t', ' ']).collect();
        let close = ta.len() == tb.len()
            && ta.iter().zip(&tb).all(|(x, y)| {
                x == y
                    || match (x.parse::<f64>(), y.parse::<f64>()) {
                        (Ok(x), Ok(y)) => (x - y).abs() <= tol * x.abs().max(y.abs()).max(1e-6),
                        _ => false,
                    }
            });
        assert!(
            close,
            "{what}: dump line {i} differs:\n perl {a}\n ours {b}"
        );
    }
    assert_eq!(p.len(), o.len(), "{what}: dump lengths differ");
}

fn line_json(lt: &profcodec_nytprof::model::LineTimes) -> Value {
    let mut m = Map::new();
    for (fid, lines) in lt {
        let mut l = Map::new();
        for (line, t) in lines {
            l.insert(line.to_string(), json!([t.time, t.count]));
        }
        m.insert(fid.to_string(), Value::Object(l));
    }
    Value::Object(m)
}

/// One call place as `data_json.pl` prints it.
fn call_json(c: &profcodec_nytprof::model::CallInfo) -> Value {
    json!([c.count, c.incl, c.excl, c.reci, c.rec_depth, c.calling_subs])
}

/// Our model in the shape `data_json.pl` prints.
fn our_json(p: &Profile) -> Value {
    let attrs: Map<String, Value> = p
        .data_attributes()
        .into_iter()
        .map(|(k, v)| {
            let v = match v {
                AttrValue::Text(t) => json!(t),
                AttrValue::Number(n) => json!(n),
            };
            (k, v)
        })
        .collect();
    let mut files = Map::new();
    for fi in p.files.values() {
        let (ef, el) = fi
            .eval
            .map_or((json!(""), json!("")), |e| (json!(e.fid), json!(e.line)));
        files.insert(
            fi.fid.to_string(),
            json!([
                fi.name,
                ef,
                el,
                fi.flags,
                fi.size,
                fi.mtime,
                fi.subs_defined,
                fi.merged_fids
            ]),
        );
    }
    let mut file_calls = Map::new();
    for fid in p.files.keys() {
        let mut lines = Map::new();
        for (line, subs) in p.calls_from(*fid) {
            let mut m = Map::new();
            for (name, c) in subs {
                m.insert(name.to_owned(), call_json(c));
            }
            lines.insert(line.to_string(), Value::Object(m));
        }
        if !lines.is_empty() {
            file_calls.insert(fid.to_string(), Value::Object(lines));
        }
    }
    let mut subs = Map::new();
    for (name, si) in &p.subs {
        let mut merged_subs = si.merged_subs.clone();
        merged_subs.sort();
        let mut callers = Map::new();
        for (fid, lines) in &si.callers {
            let mut l = Map::new();
            for (line, c) in lines {
                l.insert(line.to_string(), call_json(c));
            }
            callers.insert(fid.to_string(), Value::Object(l));
        }
        subs.insert(
            name.clone(),
            json!([
                si.fid,
                si.first_line,
                si.last_line,
                si.calls,
                si.incl,
                si.excl,
                si.rec_depth,
                si.reci,
                callers,
                merged_subs
            ]),
        );
    }
    let mut out = json!({
        "attribute": attrs,
        "option": p.options,
        "files": files,
        "subs": subs,
    });
    if !file_calls.is_empty() {
        out["file_calls"] = Value::Object(file_calls);
    }
    if !p.line_times.is_empty() {
        out["line_times"] = line_json(&p.line_times);
    }
    if let Some(b) = &p.block_times {
        out["block_times"] = line_json(b);
    }
    if let Some(s) = &p.sub_times {
        out["sub_times"] = line_json(s);
    }
    out
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if !s.is_empty() => s.parse().ok(),
        _ => None,
    }
}

/// Structural equality with a relative tolerance on numbers (`tol` 0 means exact).
fn compare(path: &str, a: &Value, b: &Value, tol: f64) -> Result<(), String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            // Sorted: key order is not part of the data (serde_json keeps insertion order when a
            // crate of the build enables its `preserve_order` feature).
            let mut kx: Vec<&String> = x.keys().collect();
            let mut ky: Vec<&String> = y.keys().collect();
            kx.sort_unstable();
            ky.sort_unstable();
            if kx != ky {
                return Err(format!("{path}: keys differ:\n perl {kx:?}\n ours {ky:?}"));
            }
            for k in kx {
                compare(&format!("{path}/{k}"), &x[k], &y[k], tol)?;
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                compare(&format!("{path}[{i}]"), p, q, tol)?;
            }
            Ok(())
        }
        _ => {
            if a == b {
                return Ok(());
            }
            if let (Some(x), Some(y)) = (as_number(a), as_number(b))
                && (x == y || (x - y).abs() <= tol * x.abs().max(y.abs()).max(1e-6))
            {
                return Ok(());
            }
            Err(format!("{path}: perl {a} but ours {b}"))
        }
    }
}

/// Every check on one profile written by the real profiler.
fn check_profile(file: &Path, dir: &Path) {
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let bytes = std::fs::read(file).unwrap();
    let raw = Profile::from_bytes_with(&bytes, ModelOptions::raw()).unwrap();
    let collapsed = Profile::from_bytes(&bytes).unwrap();
    if name.starts_with("evals_") {
        // evals.pl has evals to collapse, anonymous subs to merge, and merged subs called from
        // a file that did not call the surviving one (so the two call views part).
        assert!(collapsed.files.len() + 300 < raw.files.len(), "{name}");
        assert!(collapsed.subs.values().any(|s| !s.merged_subs.is_empty()));
        assert!(collapsed.file_calls.is_some() && raw.file_calls.is_none());
    }
    for (ours, collapse) in [(&raw, false), (&collapsed, true)] {
        let what = format!("{name} (collapse {collapse})");
        compare(&what, &perl_json(file, collapse), &our_json(ours), 1e-12).unwrap();
        let perl = perl_dump(file, collapse);
        compare_dumps(&what, &perl, &ours.dump_profile_data(), 0.0);
    }

    // Record-level rewrite: same dump_profile_data, and nytprofhtml takes it.
    let parsed = parse(&bytes).unwrap();
    let level = raw
        .options
        .get("compress")
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let rewritten = dir.join(format!("{name}.rewrite"));
    std::fs::write(&rewritten, write::rewrite(&parsed, level).unwrap()).unwrap();
    for collapse in [false, true] {
        assert!(
            perl_dump(file, collapse) == perl_dump(&rewritten, collapse),
            "{name}: dump_profile_data of the rewrite differs (collapse {collapse})"
        );
    }
    let html = dir.join(format!("{name}.html"));
    run(Command::new("nytprofhtml")
        .arg("-f")
        .arg(&rewritten)
        .arg("-o")
        .arg(&html)
        .current_dir(dir));

    // Model writer (from the raw model): Devel::NYTProf::Data loads it into the same model and
    // the same dump, block and sub line times and statement totals included (times within
    // rounding), and nytprofhtml takes it.
    let modeled = dir.join(format!("{name}.model"));
    let mut out = Vec::new();
    raw.write_with(&mut out, (level > 0).then_some(level))
        .unwrap();
    std::fs::write(&modeled, out).unwrap();
    compare(
        &format!("{name} (model writer)"),
        &perl_json(&modeled, false),
        &our_json(&raw),
        1e-9,
    )
    .unwrap();
    compare_dumps(
        &format!("{name} (model writer)"),
        &perl_dump(file, false),
        &perl_dump(&modeled, false),
        1e-9,
    );
    run(Command::new("nytprofhtml")
        .arg("-f")
        .arg(&modeled)
        .arg("-o")
        .arg(dir.join(format!("{name}.model.html")))
        .current_dir(dir));
}

/// A Pynytprof-layout file as the given spec describes it (banner, blank line, chunks).
fn pynytprof_sample() -> Vec<u8> {
    let mut b = b"NYTProf 5 0\n#Perl profile database. Generated by Pynytprof on Sun, 22 Nov 2026 04:00:00 +0000\n:basetime=1795320000\n:application=demo.py\n:perl_version=3.11.4\n:nv_size=8\n:clock_mod=cpu\n:ticks_per_sec=10000000\n:osname=linux\n:hz=100\n!subs=1\n!blocks=0\n!compress=0\n!calls=1\n\n".to_vec();
    let mut chunk = |token: u8, payload: &[u8]| {
        b.push(token);
        b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        b.extend_from_slice(payload);
    };
    let mut f = Vec::new();
    for v in [0u32, 0x10, 120, 1_795_320_000] {
        f.extend_from_slice(&v.to_le_bytes());
    }
    f.extend_from_slice(b"/tmp/demo.py\0");
    chunk(b'F', &f);
    let mut s = Vec::new();
    for (line, calls, inc, exc) in [
        (1u32, 1u32, 500u64, 400u64),
        (2, 10, 9000, 9000),
        (5, 1, 100, 100),
    ] {
        for v in [0u32, line, calls] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        s.extend_from_slice(&inc.to_le_bytes());
        s.extend_from_slice(&exc.to_le_bytes());
    }
    chunk(b'S', &s);
    let mut d = Vec::new();
    for (sid, name) in [(1u32, &b"main::main\0"[..]), (2, b"main::work\0")] {
        d.extend_from_slice(&sid.to_le_bytes());
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(name);
    }
    chunk(b'D', &d);
    let mut c = Vec::new();
    for v in [1u32, 2, 10] {
        c.extend_from_slice(&v.to_le_bytes());
    }
    c.extend_from_slice(&9000u64.to_le_bytes());
    c.extend_from_slice(&8000u64.to_le_bytes());
    chunk(b'C', &c);
    chunk(b'E', &[]);
    b
}

#[test]
fn pynytprof_sample_is_the_testdata_file() {
    // testdata/nytprof/pynytprof.out is this helper's output (see testdata/nytprof/README.md);
    // PROFCODEC_BLESS=1 writes it again.
    if std::env::var_os("PROFCODEC_BLESS").is_some() {
        std::fs::write(testdata().join("pynytprof.out"), pynytprof_sample()).unwrap();
    }
    let stored = std::fs::read(testdata().join("pynytprof.out")).unwrap();
    assert_eq!(stored, pynytprof_sample());
    assert!(pynytprof::detect(&stored));
    assert!(
        parse(&stored).unwrap().validate().is_err(),
        "the v5 reader rejects it"
    );
}

#[test]
fn real_devel_nytprof_agrees() {
    if !have_nytprof() {
        println!("interop tests not run: perl -MDevel::NYTProf::Data is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let interop = testdata().join("interop.pl");
    let evals = testdata().join("evals.pl");
    let fork = testdata().join("fork.pl");
    let mut jobs: Vec<(String, String, PathBuf)> = OPTION_SETS
        .iter()
        .map(|(n, o)| (format!("interop_{n}.out"), o.to_string(), interop.clone()))
        .collect();
    // Evals that Data.pm collapses, with and without saved source and in block mode.
    for (n, o) in EVAL_OPTION_SETS {
        jobs.push((format!("evals_{n}.out"), o.to_string(), evals.clone()));
    }
    jobs.push(("fork0.out".into(), "compress=0".into(), fork.clone()));
    jobs.push(("fork6.out".into(), String::new(), fork));
    for (out, opts, prog) in &jobs {
        let spec = if opts.is_empty() {
            format!("file={out}")
        } else {
            format!("file={out}:{opts}")
        };
        run(Command::new("perl")
            .arg("-d:NYTProf")
            .arg(prog)
            .env("NYTPROF", spec)
            .current_dir(dir));
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "out") || p.to_string_lossy().contains(".out.")
        })
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        jobs.len() + 2,
        "a child file per fork run: {files:?}"
    );
    // Two workers: the machine has two cores.
    let (a, b) = files.split_at(files.len() / 2);
    std::thread::scope(|s| {
        for half in [a, b] {
            s.spawn(move || half.iter().for_each(|f| check_profile(f, dir)));
        }
    });

    // A forked child merges into its parent's model.
    let parent = Profile::from_bytes(&std::fs::read(dir.join("fork0.out")).unwrap()).unwrap();
    let child_path = files
        .iter()
        .find(|p| p.to_string_lossy().contains("fork0.out."))
        .unwrap();
    let child = Profile::from_bytes(&std::fs::read(child_path).unwrap()).unwrap();
    let mut merged = parent.clone();
    merged.merge(&child);
    assert_eq!(merged.pids.len(), 2);
    assert_eq!(
        merged.subs["main::work"].calls,
        parent.subs["main::work"].calls + child.subs["main::work"].calls
    );

    // The Pynytprof layout, converted, loads in Devel::NYTProf::Data and nytprofhtml.
    let py = pynytprof::parse(&pynytprof_sample()).unwrap();
    let converted = pynytprof::to_profile(&py);
    let path = dir.join("pynytprof.converted");
    let mut out = Vec::new();
    converted.write(&mut out).unwrap();
    std::fs::write(&path, out).unwrap();
    let back = perl_json(&path, false);
    assert_eq!(back["subs"]["main::work"][3], json!(10));
    assert_eq!(back["line_times"]["1"]["2"][1], json!(10));
    run(Command::new("nytprofhtml")
        .arg("-f")
        .arg(&path)
        .arg("-o")
        .arg(dir.join("py.html"))
        .current_dir(dir));
}

/// A profile of a script (fid 1) and the files `rest` define, each `(fid, eval_fid, name)`,
/// written with the crate's writer.
fn files_profile(rest: &[(u32, u32, &str)]) -> Vec<u8> {
    use profcodec_nytprof::{Line, Record, Str, Writer};
    let mut w = Writer::new(Vec::new());
    w.header(5, 0).unwrap();
    w.record(&Record::Attribute(Line {
        text: b"ticks_per_sec=10000000",
    }))
    .unwrap();
    for &(fid, eval_fid, name) in [(1, 0, "/app/a.pl")].iter().chain(rest) {
        w.record(&Record::NewFid {
            fid,
            eval_fid,
            eval_line: u32::from(eval_fid != 0),
            flags: 0,
            size: 0,
            mtime: 0,
            name: Str::bytes(name.as_bytes()),
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// A string eval naming as the file it ran in a fid no NEW_FID defines: Devel::NYTProf::Data
/// dies on it, and so does our reader (with a typed error); an invoking file defined later
/// loads in both.
#[test]
fn an_eval_of_a_file_never_defined_is_refused_as_data_pm_refuses_it() {
    if !have_nytprof() {
        println!("interop tests not run: perl -MDevel::NYTProf::Data is not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let load = |name: &str, bytes: &[u8]| {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        Command::new("perl")
            .args([
                "-MDevel::NYTProf::Data",
                "-e",
                "Devel::NYTProf::Data->new({filename => shift, quiet => 1})",
            ])
            .arg(&path)
            .output()
            .unwrap()
    };
    let never = files_profile(&[(2, 9, "(eval 1)[/app/a.pl:1]")]);
    let out = load("never.out", &never);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "Data.pm loaded it: {stderr}");
    assert!(
        stderr.contains("has unknown invoking fid 9")
            && stderr.contains("Can't call method \"fid\" on an undefined value"),
        "{stderr}"
    );
    assert!(matches!(
        Profile::from_bytes(&never),
        Err(profcodec_nytprof::Error::UndefinedEvalFid {
            fid: 2,
            eval_fid: 9,
            ..
        })
    ));

    let later = files_profile(&[(2, 3, "(eval 1)[/app/b.pl:1]"), (3, 0, "/app/b.pl")]);
    let out = load("later.out", &later);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(Profile::from_bytes(&later).is_ok());
}
