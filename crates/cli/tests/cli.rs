//! End-to-end tests of the `profcodec` binary.

use std::ffi::OsStr;
use std::process::{Command, Output};

fn profcodec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
}

/// Runs `profcodec` with `args` and asserts it succeeded, showing its stderr when not.
fn run_ok<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    let out = profcodec().args(args).output().expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn help_lists_every_subcommand() {
    let out = profcodec().arg("--help").output().expect("run profcodec");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for cmd in ["info", "validate", "dump", "rewrite"] {
        assert!(text.contains(cmd), "--help does not list {cmd}:\n{text}");
    }
}

/// A minimal header of every magic: `info` must name the format. Most bare headers are rejected
/// as truncated; a bare NYTProf header is read as an incomplete profile, as the real reader does,
/// so only the format name is checked here.
#[test]
fn info_names_every_magic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: &[(&str, &[u8], &str)] = &[
        ("meta.db", b"HPCTOOLKITmeta\x04\x00", "HPCToolkit meta.db"),
        (
            "profile.db",
            b"HPCTOOLKITprof\x04\x00",
            "HPCToolkit profile.db",
        ),
        ("cct.db", b"HPCTOOLKITctxt\x04\x00", "HPCToolkit cct.db"),
        ("trace.db", b"HPCTOOLKITtrce\x04\x00", "HPCToolkit trace.db"),
        ("a.hpcrun", b"HPCRUN____02.00l", "hpcrun measurement"),
        (
            "b.hpcrun",
            b"HPCRUN-profile____04.00b",
            "hpcrun measurement",
        ),
        ("c.hpctrace", b"HPCRUN-trace______01.01b", "hpcrun trace"),
        ("nytprof.out", b"NYTProf 5 0\n", "Devel::NYTProf profile"),
        (
            "s.statprofiler",
            b"=statprofiler\x01",
            "Devel::StatProfiler file",
        ),
        ("e.prof", b"ysaE\x00\x00\x01\x02", "EasyProfiler capture"),
    ];
    for (name, bytes, format) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let out = profcodec()
            .arg("info")
            .arg(&path)
            .output()
            .expect("run profcodec");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(format),
            "{name}: expected {format:?} in {text:?}"
        );
        assert_ne!(
            out.status.code(),
            Some(0),
            "{name}: a bare header is not a valid file"
        );
    }
}

#[test]
fn unknown_input_names_first_bytes_and_exits_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("x.bin");
    std::fs::write(&path, b"\x7fELF\x02\x01\x01").expect("write");
    let out = profcodec()
        .arg("validate")
        .arg(&path)
        .output()
        .expect("run profcodec");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("7f 45 4c 46"));
}

#[test]
fn usage_error_exits_2() {
    let out = profcodec().arg("validate").output().expect("run profcodec");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_file_is_an_error_naming_the_path() {
    let out = profcodec()
        .args(["info", "/nonexistent/profcodec-test"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/profcodec-test"));
}

/// A folder that holds no profile is an invalid input (exit 1), and a FIFO in it is never
/// opened (that would block until a writer comes).
#[test]
fn a_directory_without_a_profile_is_invalid_and_its_fifos_are_not_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for path in [dir.path(), fifo.as_path()] {
        let out = profcodec().arg("validate").arg(path).output().expect("run");
        assert_eq!(out.status.code(), Some(1), "{}", path.display());
    }
    let out = profcodec()
        .arg("validate")
        .arg(dir.path())
        .output()
        .expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("meta.db"));
}

/// A folder of `=statprofiler` files is a session: every file of every process is read.
#[test]
fn a_statprofiler_session_directory_is_read_whole() {
    let session = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/statprofiler/session"
    );
    let out = run_ok(["info", "--json", session]);
    let info: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(info[0]["info"]["details"]["processes"], 3);
    assert_eq!(info[0]["info"]["details"]["files"], 8);

    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("copy");
    run_ok([OsStr::new("rewrite"), OsStr::new(session), copy.as_os_str()]);
    run_ok([OsStr::new("validate"), copy.as_os_str()]);
    // The session's files, and the mark of a folder profcodec wrote.
    let mut names: Vec<_> = std::fs::read_dir(&copy)
        .expect("copy")
        .map(|e| e.expect("entry").file_name())
        .collect();
    names.retain(|n| n != profcodec::output::FOLDER_MARKER);
    assert_eq!(names.len(), 8);
}
