//! `profcodec report` reads source files a profile names only where the user allows it: the
//! input's own folder and `--source-root` folders, never `/proc`, `/sys` or `/dev`, never through
//! a link or `..` out of an allowed folder, only regular files of at most 16 MiB; standard error
//! says which files the page embeds and why the others are not (HOSTILE.md class 1).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod corpus_inputs;

use std::path::{Path, PathBuf};

use corpus_inputs::profcodec;
use profcodec_nytprof::read::Line;
use profcodec_nytprof::{Record, Str, Writer};

/// A NYTProf profile (no saved source) with one timed statement at line 1 of each of `files`,
/// named as given.
fn naming(files: &[String]) -> Vec<u8> {
    let mut w = Writer::new(Vec::new());
    w.header(5, 0).unwrap();
    for line in [&b"ticks_per_sec=10000000"[..], b"nv_size=8"] {
        w.record(&Record::Attribute(Line { text: line })).unwrap();
    }
    w.record(&Record::PidStart {
        pid: 7,
        ppid: 1,
        time: 1.0,
    })
    .unwrap();
    for (fid, name) in (1u32..).zip(files) {
        w.record(&Record::NewFid {
            fid,
            eval_fid: 0,
            eval_line: 0,
            flags: 0x2,
            size: 0,
            mtime: 0,
            name: Str {
                bytes: name.as_bytes(),
                utf8: false,
            },
        })
        .unwrap();
    }
    for (fid, _) in (1u32..).zip(files) {
        w.record(&Record::TimeLine {
            ticks: 1000 * fid as i32,
            fid,
            line: 1,
        })
        .unwrap();
    }
    w.record(&Record::PidEnd { pid: 7, time: 2.0 }).unwrap();
    w.finish().unwrap()
}

/// The folders of the case: `input/` (the profile and what it may show) and `secret/` (outside).
struct Case {
    _dir: tempfile::TempDir,
    input: PathBuf,
    secret: PathBuf,
    profile: PathBuf,
    marker: String,
}

fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input");
    let secret = dir.path().join("secret");
    std::fs::create_dir(&input).unwrap();
    std::fs::create_dir(&secret).unwrap();
    let marker = format!(
        "SECRET-{}-{:?}",
        std::process::id(),
        std::time::Instant::now()
    );
    std::fs::write(secret.join("id_rsa"), format!("{marker}\n")).unwrap();
    std::fs::write(input.join("ok.pl"), "print 'allowed line';\n").unwrap();
    std::fs::write(input.join("abs.pl"), "print 'absolute line';\n").unwrap();
    std::os::unix::fs::symlink(secret.join("id_rsa"), input.join("link.pl")).unwrap();
    std::fs::create_dir(input.join("folder.pl")).unwrap();
    // A sparse file: 17 MiB on the size, no disk written.
    let big = std::fs::File::create(input.join("big.pl")).unwrap();
    big.set_len(17 << 20).unwrap();
    let files = [
        "ok.pl".to_owned(),
        input.join("abs.pl").display().to_string(),
        secret.join("id_rsa").display().to_string(),
        "../secret/id_rsa".to_owned(),
        input.join("link.pl").display().to_string(),
        "/proc/self/environ".to_owned(),
        input.join("big.pl").display().to_string(),
        input.join("folder.pl").display().to_string(),
    ];
    let profile = input.join("nytprof.out");
    std::fs::write(&profile, naming(&files)).unwrap();
    Case {
        input,
        secret,
        profile,
        marker,
        _dir: dir,
    }
}

/// Runs `profcodec report` of the case with `extra` arguments, and an environment variable
/// holding the marker (which `/proc/self/environ` would show): the pages and standard error.
fn report(case: &Case, out: &Path, extra: &[&std::ffi::OsStr]) -> (String, String) {
    let mut cmd = profcodec();
    cmd.arg("report")
        .arg("-o")
        .arg(out)
        .args(extra)
        .arg(&case.profile)
        .env("PROFCODEC_TEST_MARKER", &case.marker);
    let done = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
    assert!(done.status.success(), "{cmd:?}: {stderr}");
    (report_text(out), stderr)
}

/// Every page of the report `out` (the index and the source pages), one after another.
fn report_text(out: &Path) -> String {
    let mut text = std::fs::read_to_string(out.join("index.html")).unwrap();
    if let Ok(pages) = std::fs::read_dir(out.join("files")) {
        for page in pages {
            text.push_str(&std::fs::read_to_string(page.unwrap().path()).unwrap());
        }
    }
    text
}

/// The line of standard error about the source of `file`.
fn said<'a>(stderr: &'a str, file: &str) -> &'a str {
    let head = format!("profcodec: source of {file} ");
    stderr
        .lines()
        .find(|l| l.starts_with(&head))
        .unwrap_or_else(|| panic!("nothing said of {file}:\n{stderr}"))
}

#[test]
fn only_files_under_allowed_folders_are_embedded_and_each_is_said() {
    let case = case();
    let out = case.input.parent().unwrap().join("report");
    let (page, stderr) = report(&case, &out, &[]);
    assert!(!page.contains(&case.marker), "the secret reached the page");
    assert!(page.contains("allowed line") && page.contains("absolute line"));

    let ok = said(&stderr, "ok.pl");
    assert!(ok.contains("embedded in the page, from"), "{ok}");
    let abs = said(&stderr, &case.input.join("abs.pl").display().to_string());
    assert!(abs.contains("embedded in the page"), "{abs}");
    for outside in [
        case.secret.join("id_rsa").display().to_string(),
        "../secret/id_rsa".to_owned(),
        case.input.join("link.pl").display().to_string(),
    ] {
        let line = said(&stderr, &outside);
        assert!(
            line.contains("not embedded")
                && line.contains("outside the folders allowed")
                && line.contains("the input's folder")
                && line.contains("--source-root DIR"),
            "{line}"
        );
    }
    let environ = said(&stderr, "/proc/self/environ");
    assert!(environ.contains("under /proc, /sys or /dev"), "{environ}");
    let big = said(&stderr, &case.input.join("big.pl").display().to_string());
    assert!(
        big.contains("too large: 17.0 MiB (17825792 bytes), over the 16.0 MiB"),
        "{big}"
    );
    let folder = said(&stderr, &case.input.join("folder.pl").display().to_string());
    assert!(
        folder.contains("is a folder, not a regular file"),
        "{folder}"
    );
    // The page says why too, never with the text.
    assert!(page.contains("which are never read"));
}

#[test]
fn a_source_root_lets_its_folder_in_but_never_proc() {
    let case = case();
    let out = case.input.parent().unwrap().join("report");
    let (page, stderr) = report(
        &case,
        &out,
        &["--source-root".as_ref(), case.secret.as_os_str()],
    );
    assert!(page.contains(&case.marker), "the folder allowed is shown");
    let secret = said(&stderr, &case.secret.join("id_rsa").display().to_string());
    assert!(secret.contains("embedded in the page"), "{secret}");

    let out = case.input.parent().unwrap().join("report-root");
    let (page, stderr) = report(&case, &out, &["--source-root".as_ref(), "/".as_ref()]);
    let environ = said(&stderr, "/proc/self/environ");
    assert!(environ.contains("under /proc, /sys or /dev"), "{environ}");
    assert!(
        !page.contains("PROFCODEC_TEST_MARKER"),
        "the environment reached the page"
    );
}
