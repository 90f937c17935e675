//! `profcodec prof` against the hostile checklist: an output inside the measurement and an
//! existing folder are refused before anything is written (class 9), and the warnings of what
//! was left out reach standard error escaped (classes 12 and 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A copy of demo.m (one thread's profile) at `to`.
fn demo(to: &Path) -> PathBuf {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcprof/demo.m");
    std::fs::create_dir_all(to).expect("measurement folder");
    for entry in std::fs::read_dir(demo).expect("demo.m") {
        let entry = entry.expect("entry of demo.m");
        std::fs::copy(entry.path(), to.join(entry.file_name())).expect("copy");
    }
    to.to_path_buf()
}

fn prof(args: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
        .arg("prof")
        .args(args)
        .output()
        .expect("profcodec runs")
}

/// Every path below `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("listable") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path.clone());
            }
            paths.push(path);
        }
    }
    paths.sort();
    paths
}

#[test]
fn an_output_inside_the_measurement_is_refused_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let m = demo(&tmp.path().join("demo.m"));
    let before = listing(tmp.path());
    let out = prof(&[Path::new("-o"), &m.join("db.d"), &m]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("db.d") && stderr.contains("demo.m"),
        "{stderr}"
    );
    assert_eq!(listing(tmp.path()), before, "{stderr}");
}

#[test]
fn an_existing_folder_is_refused_and_left_as_it_was() {
    let tmp = tempfile::tempdir().unwrap();
    let m = demo(&tmp.path().join("demo.m"));
    let existing = tmp.path().join("db.d");
    std::fs::create_dir(&existing).unwrap();
    std::fs::write(existing.join("mine.txt"), "kept").unwrap();
    let before = listing(tmp.path());
    let out = prof(&[Path::new("-o"), &existing, &m]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("db.d"), "{stderr}");
    assert_eq!(listing(tmp.path()), before, "{stderr}");
    assert_eq!(std::fs::read(existing.join("mine.txt")).unwrap(), b"kept");
}

#[test]
fn warnings_reach_standard_error_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let m = demo(&tmp.path().join("demo.m"));
    // A stray entry whose name sets the terminal's title and rings its bell.
    std::fs::write(m.join("stray\x1b]0;owned\x07.txt"), "not a profile").unwrap();
    std::fs::create_dir(m.join("structs")).unwrap();
    std::fs::write(
        m.join("structs/damaged.hpcstruct"),
        "<HPCToolkitStructure><LM",
    )
    .unwrap();
    let db = tmp.path().join("db.d");
    let out = prof(&[Path::new("-o"), &db, &m]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(db.join("meta.db").is_file());
    assert!(
        !out.stderr.iter().any(|&b| b == 0x1b || b == 0x07),
        "raw control bytes reached the terminal: {stderr:?}"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("profcodec prof: warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("1 entry left out") && w.contains("stray")),
        "{stderr}"
    );
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("damaged.hpcstruct") && w.contains("structure file left out")),
        "{stderr}"
    );
}
