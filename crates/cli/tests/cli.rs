//! End-to-end tests of the `profcodec` binary.

use std::ffi::OsStr;
use std::process::Command;

mod common;
use common::{profcodec, run_ok};

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

/// `profcodec` alone in `dir` (no `profcodec-sql` beside it), a fresh copy of the binary.
fn profcodec_alone(dir: &std::path::Path) -> std::path::PathBuf {
    let alone = dir.join(format!("profcodec{}", std::env::consts::EXE_SUFFIX));
    std::fs::copy(env!("CARGO_BIN_EXE_profcodec"), &alone).expect("copy profcodec");
    alone
}

/// `profcodec sql` and `profcodec export` are run by the program `profcodec-sql`: the one beside
/// `profcodec` (the workspace's, when `cargo test --workspace` built it), else the one on PATH,
/// with the same arguments and its exit status; without one, profcodec says how to install it
/// (exit status 2) and prints nothing on stdout.
#[test]
fn sql_and_export_run_profcodec_sql_or_say_how_to_install_it() {
    let hello = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/nytprof/hello.nytprof.out"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let install = "cargo install --path crates/sql";

    // The workspace's profcodec-sql beside profcodec.
    let me = std::path::Path::new(env!("CARGO_BIN_EXE_profcodec"));
    let beside = me.with_file_name(format!("profcodec-sql{}", std::env::consts::EXE_SUFFIX));
    let out = profcodec()
        .args([
            "sql",
            "--format",
            "csv",
            "SELECT count(*) AS n FROM nytprof.lines",
        ])
        .arg(hello)
        .env("PATH", &empty)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if beside.is_file() {
        assert!(out.status.success(), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "n\n42\n");
        // Its exit statuses are the command's: an unknown table is a usage error.
        let out = profcodec()
            .args(["sql", "SELECT * FROM nytprof.nothing", hello])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2));
    } else {
        println!("profcodec-sql is not built beside profcodec; its message checked instead");
        assert_eq!(out.status.code(), Some(2));
        assert!(stderr.contains(install), "{stderr}");
    }

    // Alone, with nothing on PATH: how to install it, for both verbs and their --help.
    let alone = profcodec_alone(&mkdir(dir.path().join("alone")));
    for args in [
        &["sql", "SELECT 1", hello][..],
        &["export", "--parquet", "out", hello][..],
        &["sql", "--help"][..],
    ] {
        let out = Command::new(&alone)
            .args(args)
            .env("PATH", &empty)
            .output()
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(install), "{args:?}: {stderr}");
        assert!(stderr.contains("profcodec-sql"), "{stderr}");
        assert!(out.stdout.is_empty());
    }

    // Found on PATH, and beside profcodec before PATH; the arguments passed as they were
    // given, and the program's exit status returned.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let fake = |folder: &std::path::Path, says: &str| {
            let path = folder.join("profcodec-sql");
            std::fs::write(
                &path,
                format!("#!/bin/sh\necho {says}\nprintf '%s\\n' \"$@\"\nexit 7\n"),
            )
            .expect("write");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        };
        let on_path = mkdir(dir.path().join("bin"));
        fake(&on_path, "on-path");
        let args = ["sql", "--format", "json", "SELECT 'a b' -- c", "in put"];
        let out = Command::new(&alone)
            .args(args)
            .env("PATH", &on_path)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(7));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("on-path\n{}\n", args.join("\n"))
        );
        fake(&dir.path().join("alone"), "beside");
        let out = Command::new(&alone)
            .args(["export", "--help"])
            .env("PATH", &on_path)
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(7));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "beside\nexport\n--help\n"
        );
    }
}

/// Makes the folder `path` and returns it.
fn mkdir(path: std::path::PathBuf) -> std::path::PathBuf {
    std::fs::create_dir_all(&path).expect("mkdir");
    path
}
