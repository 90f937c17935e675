//! The inputs people pass besides single files: a StatProfiler template (the `-template` given to
//! the profiler, naming no file itself), an hpcrun measurement folder (`*.m`), and a folder of
//! profiles (a test suite's runs), which stands for the profiles in it.

use std::ffi::OsStr;

mod common;
use common::{profcodec, run_ok, testdata};

#[test]
fn a_statprofiler_template_opens_its_session() {
    let template = testdata("statprofiler/session/statprof.out");
    assert!(!template.exists());
    let out = profcodec()
        .arg("info")
        .arg("--json")
        .arg(&template)
        .output()
        .expect("run profcodec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let infos: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let details = &infos[0]["info"]["details"];
    assert_eq!(details["processes"], 3, "{details}");
}

#[test]
fn a_path_that_is_neither_a_file_nor_a_template_names_itself() {
    let missing = testdata("statprofiler/session/no-such-template");
    let out = profcodec()
        .arg("info")
        .arg(&missing)
        .output()
        .expect("run profcodec");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-template"));
}

#[test]
fn an_hpcrun_measurement_folder_is_one_input() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let folder = corpus.join("hpctoolkit/meas/small.m");
    for verb in ["info", "validate"] {
        let out = profcodec()
            .arg(verb)
            .arg(&folder)
            .output()
            .expect("run profcodec");
        assert!(
            out.status.success(),
            "{verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = profcodec()
        .args(["info", "--json"])
        .arg(&folder)
        .output()
        .expect("run profcodec");
    let infos: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(infos[0]["info"]["details"]["threads"], 1);
}

#[test]
fn a_folder_of_profiles_is_the_profiles_in_it_in_name_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    std::fs::create_dir(&runs).expect("mkdir");
    let (a, b) = (runs.join("nytprof.out.101"), runs.join("nytprof.out.202"));
    std::fs::copy(testdata("nytprof/workload-100.nytprof.out"), &a).expect("copy");
    std::fs::copy(testdata("nytprof/workload-300.nytprof.out"), &b).expect("copy");
    // What a test suite leaves beside its profiles is passed over.
    std::fs::write(runs.join("prove.log"), "ok 1 - works\n").expect("write");
    for verb in [&["top", "--json"][..], &["convert", "--to", "folded"][..]] {
        let verb = || verb.iter().map(OsStr::new);
        let by_folder = run_ok(verb().chain([runs.as_os_str()])).stdout;
        let by_files = run_ok(verb().chain([a.as_os_str(), b.as_os_str()])).stdout;
        assert_eq!(by_folder, by_files, "{:?}", verb().collect::<Vec<_>>());
    }
    let (merged_folder, merged_files) = (tmp.path().join("f.out"), tmp.path().join("g.out"));
    let merge = ["merge".as_ref(), "-o".as_ref()];
    run_ok(
        merge
            .into_iter()
            .chain([merged_folder.as_os_str(), runs.as_os_str()]),
    );
    run_ok(
        merge
            .into_iter()
            .chain([merged_files.as_os_str(), a.as_os_str(), b.as_os_str()]),
    );
    assert_eq!(
        std::fs::read(&merged_folder).expect("read"),
        std::fs::read(&merged_files).expect("read")
    );
}

#[test]
fn a_folder_without_profiles_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("notes.txt"), "no profile here").expect("write");
    let out = profcodec()
        .arg("top")
        .arg(tmp.path())
        .output()
        .expect("run profcodec");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the folder holds no profile"), "{stderr}");
}

/// `profcodec ARGS`, stopped if it runs past a minute (a FIFO read would block forever).
fn run_bounded(args: &[&OsStr]) -> std::process::Output {
    let mut child = profcodec()
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run profcodec");
    let start = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().expect("kill");
            panic!("profcodec {args:?} still runs after a minute");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// A folder of one good profile beside what a folder of profiles may also hold: an empty file,
/// a FIFO, a symbolic link to nothing and a folder that is no input.
fn folder_with_strays() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    std::fs::create_dir(&runs).expect("mkdir");
    std::fs::copy(
        testdata("nytprof/hello.nytprof.out"),
        runs.join("nytprof.out.1"),
    )
    .expect("copy");
    std::fs::write(runs.join("nytprof.out.2"), b"").expect("write");
    let status = std::process::Command::new("mkfifo")
        .arg(runs.join("nytprof.out.3"))
        .status()
        .expect("run mkfifo");
    assert!(status.success());
    std::os::unix::fs::symlink(tmp.path().join("gone"), runs.join("nytprof.out.4"))
        .expect("symlink");
    std::fs::create_dir(runs.join("nytprof.out.5")).expect("mkdir");
    std::fs::write(runs.join("nytprof.out.5/notes.txt"), "no profile").expect("write");
    (tmp, runs)
}

#[test]
fn each_entry_of_a_folder_that_is_skipped_is_said_with_the_reason() {
    let (tmp, runs) = folder_with_strays();
    let good = runs.join("nytprof.out.1");
    for verb in [&["top", "--json"][..], &["convert", "--to", "folded"][..]] {
        let mut args: Vec<&OsStr> = verb.iter().map(OsStr::new).collect();
        args.push(runs.as_os_str());
        let out = run_bounded(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{verb:?}: {stderr}");
        let at = |name: &str| runs.join(name).display().to_string();
        let expected = [
            format!(
                "profcodec: {}: skipped: not a profile: unknown format: at byte 0x0: expected \
                 a profiler file's magic but found an empty input",
                at("nytprof.out.2")
            ),
            format!(
                "profcodec: {}: skipped: a FIFO is not read (reading one could block): \
                 profiles are read from files",
                at("nytprof.out.3")
            ),
            format!(
                "profcodec: {}: skipped: a symbolic link to {}, which does not exist",
                at("nytprof.out.4"),
                tmp.path().join("gone").display()
            ),
            format!(
                "profcodec: {}: skipped: a folder that is no HPCToolkit database, hpcrun \
                 measurement folder or Devel::StatProfiler session (the folders inside a folder \
                 of profiles are not searched)",
                at("nytprof.out.5")
            ),
        ];
        let skips: Vec<&str> = stderr
            .lines()
            .filter(|l| l.contains(": skipped: "))
            .collect();
        assert_eq!(skips, expected, "{verb:?}");
        // What was read is the one profile, as if it alone had been named.
        let mut alone: Vec<&OsStr> = verb.iter().map(OsStr::new).collect();
        alone.push(good.as_os_str());
        assert_eq!(out.stdout, run_ok(alone).stdout, "{verb:?}");
    }
}

#[test]
fn a_damaged_profile_in_a_folder_fails_the_run_naming_it() {
    let (_tmp, runs) = folder_with_strays();
    let hello = std::fs::read(testdata("nytprof/hello.nytprof.out")).expect("read");
    // A profile cut short: its magic is there, the rest of it is not.
    let damaged = runs.join("nytprof.out.0");
    std::fs::write(&damaged, &hello[..hello.len() / 2]).expect("write");
    let out = run_bounded(&[OsStr::new("top"), OsStr::new("--json"), runs.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "{stderr}");
    // The skipped entries are still said, and the failure names the damaged file.
    assert_eq!(stderr.matches(": skipped: ").count(), 4, "{stderr}");
    let last = stderr.lines().last().expect("a message");
    assert!(
        last.contains(&*damaged.display().to_string()),
        "the failure names the file: {stderr}"
    );
}
