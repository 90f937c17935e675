//! `profcodec top` of hpcrun measurements of a program built here (`gcc -g -O0`), written with
//! the hpcrun crate's writer: with the binary present the rows name functions, and their lines
//! are addr2line's; with the binary gone the addresses stay `[0x...]` and standard error says
//! which module was not found and why; `--binary-path` finds a moved binary; a structure file
//! that cannot be used is said too. The timeline of the measurement's trace (`convert --to
//! chrome`) names its slices as `top` names its rows, in every thread, and keeps the addresses,
//! saying the same once for all threads, without the binary. `report --binary-path` names the
//! report's functions.
//!
//! Without gcc or binutils the tests say so loudly and pass, except in CI (`CI` set).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use profcodec_hpcrun::{
    MeasurementBuilder, MetricValue, Trace, TraceRecord, ValueFormat, Version, read_measurement,
    write_measurement, write_trace,
};
use profcodec_testkit::native::{C_PROGRAM, addr2line, build, disassemble, tools_present};
use serde_json::Value;

/// Seconds per sample.
const SAMPLE: f64 = 0.01;

fn top(args: &[&str], input: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
        .arg("top")
        .args(args)
        .arg(input)
        .output()
        .unwrap()
}

fn ok(out: &Output) -> (String, String) {
    let (stdout, stderr) = (
        String::from_utf8(out.stdout.clone()).unwrap(),
        String::from_utf8(out.stderr.clone()).unwrap(),
    );
    assert!(out.status.success(), "{stderr}");
    (stdout, stderr)
}

/// A measurement folder in `dir` of the program `bin`, recorded as `recorded`: main calls
/// middle calls leaf, one sample at every instruction of leaf. Also leaf's instructions.
fn measurement(dir: &Path, bin: &Path, recorded: &str) -> (PathBuf, Vec<u64>) {
    measurement_traced(dir, bin, recorded, false)
}

/// [`measurement`], with a trace when `traced`: one record per sample, in leaf's instruction
/// order, one sample period apart.
fn measurement_traced(dir: &Path, bin: &Path, recorded: &str, traced: bool) -> (PathBuf, Vec<u64>) {
    let main = disassemble(bin, "main");
    let middle = disassemble(bin, "middle");
    let leaf = disassemble(bin, "leaf");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    b.header("program-name", "prog")
        .header("mpi-rank", "0")
        .header("thread-id", "0");
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    let start = 1_700_000_000_000_000_000u64;
    let period = (SAMPLE * 1e9) as u64;
    let leaves = disassemble(bin, "leaf").instructions.len() as u64;
    if traced {
        b.header("trace-min-time", start.to_string())
            .header("trace-max-time", (start + leaves * period).to_string());
    }
    let exe = b.load_module(recorded);
    let m = b.node(None, exe, main.returns[0]);
    let mid = b.node(Some(m), exe, middle.returns[0]);
    for &ip in &leaf.instructions {
        let n = b.node(Some(mid), exe, ip);
        b.add(n, time, MetricValue::Real(SAMPLE));
    }
    let folder = dir.join("hpctoolkit-prog-measurements");
    std::fs::create_dir_all(&folder).unwrap();
    let stem = "prog-000000-000-a8c00270-1000-0";
    let bytes = write_measurement(&b.build()).unwrap();
    std::fs::write(folder.join(format!("{stem}.hpcrun")), &bytes).unwrap();
    if traced {
        // The records name the leaf nodes by the ids the written file gave them.
        let m = read_measurement(&bytes).unwrap();
        let records = m.epochs[0]
            .cct
            .iter()
            .filter(|n| leaf.instructions.contains(&n.ip))
            .zip(0..)
            .map(|(n, i)| TraceRecord {
                time: start + i * period,
                ctx: n.id as u32,
                metric: None,
            })
            .collect();
        let trace = Trace {
            records,
            ..Trace::default()
        };
        std::fs::write(folder.join(format!("{stem}.hpctrace")), write_trace(&trace)).unwrap();
    }
    (folder, leaf.instructions)
}

/// `top --group line --json`'s rows as (file, line) -> self value.
fn line_rows(stdout: &str) -> BTreeMap<(String, u64), f64> {
    let rows: Vec<Value> = serde_json::from_str(stdout).unwrap();
    rows.iter()
        .filter(|r| r["self"].as_f64().unwrap_or(0.0) > 0.0)
        .map(|r| {
            (
                (
                    r["file"].as_str().unwrap_or_default().to_owned(),
                    r["line"].as_u64().unwrap_or(0),
                ),
                r["self"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn top_names_the_functions_and_lines_of_a_measurement_whose_binary_is_present() {
    if !tools_present(&["gcc", "addr2line", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let (folder, leaf) = measurement(dir.path(), &bin, &bin.to_string_lossy());

    let (table, stderr) = ok(&top(&[], &folder));
    assert!(!stderr.contains("no symbols"), "{stderr}");
    assert!(table.contains("leaf") && !table.contains("[0x"), "{table}");

    // Each sample's line is addr2line's innermost line for its address (square's line where
    // square is inlined).
    let mut want: BTreeMap<(String, u64), f64> = BTreeMap::new();
    for &ip in &leaf {
        let frames = addr2line(&bin, ip);
        let inner = frames.last().unwrap();
        let key = (inner.file.clone().unwrap(), u64::from(inner.line.unwrap()));
        *want.entry(key).or_default() += SAMPLE;
    }
    let (json, _) = ok(&top(&["--group", "line", "--json", "-n", "0"], &folder));
    let got = line_rows(&json);
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (key, value) in &want {
        assert!(
            (got[key] - value).abs() < 1e-9,
            "{key:?}: {} vs {value}",
            got[key]
        );
    }
    let (json, _) = ok(&top(&["--json", "-n", "0"], &folder));
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    let leaf_row = rows.iter().find(|r| r["name"] == "leaf").unwrap();
    assert_eq!(leaf_row["file"], inner_file(&bin, leaf[0]));
}

fn inner_file(bin: &Path, ip: u64) -> String {
    addr2line(bin, ip)[0].file.clone().unwrap()
}

#[test]
fn top_keeps_addresses_and_says_why_when_the_binary_is_missing() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    // Recorded where it ran, on another machine: not found there.
    let (folder, _) = measurement(dir.path(), &bin, "/gone/build/prog");

    let (table, stderr) = ok(&top(&[], &folder));
    assert!(table.contains("[0x"), "{table}");
    assert!(!table.contains("leaf"), "{table}");
    assert!(
        stderr.contains(
            "profcodec: no symbols for /gone/build/prog (1 of 1 files): not found (tried "
        ) && stderr.contains("addresses shown as [0x...]"),
        "{stderr}"
    );

    // Found by file name through --binary-path: names, and nothing said.
    let search = dir.path().to_str().unwrap();
    let (table, stderr) = ok(&top(&["--binary-path", search], &folder));
    assert!(table.contains("leaf") && !table.contains("[0x"), "{table}");
    assert!(!stderr.contains("no symbols"), "{stderr}");

    // A structure file of the module that cannot be read is said, and the binary used.
    std::fs::create_dir(folder.join("structs")).unwrap();
    std::fs::write(
        folder.join("structs/prog.hpcstruct"),
        "<HPCToolkitStructure>",
    )
    .unwrap();
    let (table, stderr) = ok(&top(&["--binary-path", search], &folder));
    assert!(table.contains("leaf"), "{table}");
    assert!(
        stderr.contains("profcodec: no structure for /gone/build/prog (loops and inlined calls): ")
            && stderr.contains("prog.hpcstruct: the structure file ends too early"),
        "{stderr}"
    );
}

/// `profcodec ARGS`, which must succeed: its standard output and error.
fn run(args: &[&std::ffi::OsStr]) -> (String, String) {
    ok(&Command::new(env!("CARGO_BIN_EXE_profcodec"))
        .args(args)
        .output()
        .unwrap())
}

/// The names of the slices of `convert --to chrome FLAGS INPUT`, and its standard error.
fn chrome_slices(flags: &[&str], input: &Path, out: &Path) -> (BTreeSet<String>, String) {
    let mut args: Vec<&std::ffi::OsStr> = vec![
        "convert".as_ref(),
        "--to".as_ref(),
        "chrome".as_ref(),
        "-o".as_ref(),
    ];
    args.push(out.as_os_str());
    args.extend(flags.iter().map(std::ffi::OsStr::new));
    args.push(input.as_os_str());
    let (_, stderr) = run(&args);
    let doc: Value = serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap();
    let events = doc.get("traceEvents").unwrap_or(&doc).as_array().unwrap();
    let names = events
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("B" | "X")))
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    (names, stderr)
}

/// `top --json -n 0 FLAGS INPUT`'s function names.
fn top_names(flags: &[&str], input: &Path) -> BTreeSet<String> {
    let mut args = vec!["--json", "-n", "0"];
    args.extend(flags);
    let (json, _) = ok(&top(&args, input));
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    rows.iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_timeline_of_a_trace_names_its_slices_as_top_names_its_rows() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let (folder, _) = measurement_traced(dir.path(), &bin, &bin.to_string_lossy(), true);

    let (slices, stderr) = chrome_slices(&[], &folder, &dir.path().join("named.json"));
    assert!(!stderr.contains("no symbols"), "{stderr}");
    let names = top_names(&[], &folder);
    assert!(
        names.contains("leaf") && names.contains("main"),
        "{names:?}"
    );
    assert_eq!(slices, names);
    // One file's trace too (the folder it is in searched as the folder is).
    let trace = folder.join("prog-000000-000-a8c00270-1000-0.hpctrace");
    let (one, _) = chrome_slices(&[], &trace, &dir.path().join("one.json"));
    assert_eq!(one, names);
}

#[test]
fn the_timeline_keeps_addresses_and_says_why_when_the_binary_is_missing() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let (folder, _) = measurement_traced(dir.path(), &bin, "/gone/build/prog", true);

    let (slices, stderr) = chrome_slices(&[], &folder, &dir.path().join("gone.json"));
    // Each of top's `[0x...]` rows is a slice named by that address in the module (exports name
    // an address-only frame by `Profile::frame_label`: "function at 0x... in MODULE").
    let addresses: BTreeSet<String> = top_names(&[], &folder)
        .iter()
        .map(|n| {
            let address = n.strip_prefix('[').and_then(|n| n.strip_suffix(']'));
            format!("function at {} in /gone/build/prog", address.unwrap())
        })
        .collect();
    assert_eq!(slices, addresses);
    // The same words as top's, which adds its hint at rows of bare addresses.
    let (_, top_stderr) = ok(&top(&[], &folder));
    assert!(stderr.contains("profcodec: no symbols for /gone/build/prog (1 of 1 files): "));
    let hint = "are addresses without a symbol";
    assert!(top_stderr.contains(hint), "{top_stderr}");
    let top_stderr: String = top_stderr
        .lines()
        .filter(|l| !l.contains(hint))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(stderr, top_stderr);

    // Found through --binary-path: top's names.
    let search = dir.path().to_str().unwrap();
    let (slices, stderr) = chrome_slices(
        &["--binary-path", search],
        &folder,
        &dir.path().join("found.json"),
    );
    assert!(!stderr.contains("no symbols"), "{stderr}");
    assert_eq!(slices, top_names(&["--binary-path", search], &folder));
    assert!(slices.contains("leaf"), "{slices:?}");
}

/// The names of the report's whole-program top-functions table (`data-name` of its rows).
fn report_names(page: &str) -> BTreeSet<String> {
    let start = page.find("id=\"top-all\"").expect("no top-functions table");
    let end = page[start..].find("</table>").unwrap() + start;
    page[start..end]
        .split("<tr")
        .skip(1)
        .filter_map(|row| {
            let tag = &row[..row.find('>')?];
            let (_, rest) = tag.split_once(" data-name=\"")?;
            let name = &rest[..rest.find('"')?];
            Some(
                name.replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&amp;", "&"),
            )
        })
        .collect()
}

#[test]
fn report_names_its_functions_from_the_binaries_found_through_binary_path() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let (folder, _) = measurement_traced(dir.path(), &bin, "/gone/build/prog", true);
    let search = dir.path().to_str().unwrap();
    let report = |out: &str, flags: &[&str]| {
        let out = dir.path().join(out);
        let mut args: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), "-o".as_ref()];
        args.push(out.as_os_str());
        args.extend(flags.iter().map(std::ffi::OsStr::new));
        args.push(folder.as_os_str());
        let (_, stderr) = run(&args);
        let page = std::fs::read_to_string(out.join("index.html")).unwrap();
        (report_names(&page), stderr)
    };

    let (names, stderr) = report("named", &["--binary-path", search]);
    assert!(!stderr.contains("no symbols"), "{stderr}");
    assert!(
        names.contains("leaf") && names.contains("main"),
        "{names:?}"
    );
    assert_eq!(names, top_names(&["--binary-path", search], &folder));

    // Without it, top's addresses, and the same words on standard error.
    let (names, stderr) = report("gone", &[]);
    assert!(names.iter().all(|n| n.starts_with("[0x")), "{names:?}");
    assert_eq!(names, top_names(&[], &folder));
    // Once, though the measurement is read for the profile and for the timeline.
    assert_eq!(
        stderr
            .matches("profcodec: no symbols for /gone/build/prog (1 of 1 files): ")
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn every_thread_of_a_timeline_is_named_and_its_module_reported_once() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let (folder, _) = measurement_traced(dir.path(), &bin, "/gone/build/prog", true);
    // Threads 1 and 2: the same files under their names.
    let stem = "prog-000000-000-a8c00270-1000-0";
    for thread in ["001", "002"] {
        for ext in ["hpcrun", "hpctrace"] {
            std::fs::copy(
                folder.join(format!("{stem}.{ext}")),
                folder.join(format!("prog-000000-{thread}-a8c00270-1000-0.{ext}")),
            )
            .unwrap();
        }
    }
    let (slices, stderr) = chrome_slices(&[], &folder, &dir.path().join("gone.json"));
    // One report for the module over the three files.
    assert_eq!(
        stderr
            .matches("no symbols for /gone/build/prog (3 of 3 files)")
            .count(),
        1,
        "{stderr}"
    );
    assert!(slices.iter().all(|s| s.contains("0x")), "{slices:?}");

    let search = dir.path().to_str().unwrap();
    let out = dir.path().join("named.json");
    let (slices, stderr) = chrome_slices(&["--binary-path", search], &folder, &out);
    assert!(!stderr.contains("no symbols"), "{stderr}");
    assert_eq!(slices, top_names(&["--binary-path", search], &folder));
    // Each thread's track holds the named slices.
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let events = doc.get("traceEvents").unwrap_or(&doc).as_array().unwrap();
    let leaf_threads: BTreeSet<(i64, i64)> = events
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("B" | "X")) && e["name"] == "leaf")
        .map(|e| (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap()))
        .collect();
    assert_eq!(leaf_threads.len(), 3, "{leaf_threads:?}");
}
