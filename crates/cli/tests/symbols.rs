//! `profcodec top` of hpcrun measurements of a program built here (`gcc -g -O0`), written with
//! the hpcrun crate's writer: with the binary present the rows name functions, and their lines
//! are addr2line's; with the binary gone the addresses stay `[0x...]` and standard error says
//! which module was not found and why; `--binary-path` finds a moved binary; a structure file
//! that cannot be used is said too.
//!
//! Without gcc or binutils the tests say so loudly and pass, except in CI (`CI` set).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use profcodec_hpcrun::{MeasurementBuilder, MetricValue, ValueFormat, Version, write_measurement};
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
    let main = disassemble(bin, "main");
    let middle = disassemble(bin, "middle");
    let leaf = disassemble(bin, "leaf");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    b.header("program-name", "prog")
        .header("mpi-rank", "0")
        .header("thread-id", "0");
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    let exe = b.load_module(recorded);
    let m = b.node(None, exe, main.returns[0]);
    let mid = b.node(Some(m), exe, middle.returns[0]);
    for &ip in &leaf.instructions {
        let n = b.node(Some(mid), exe, ip);
        b.add(n, time, MetricValue::Real(SAMPLE));
    }
    let folder = dir.join("hpctoolkit-prog-measurements");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("prog-000000-000-a8c00270-1000-0.hpcrun"),
        write_measurement(&b.build()).unwrap(),
    )
    .unwrap();
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
