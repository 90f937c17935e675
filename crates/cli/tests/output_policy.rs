//! The output policy of every subcommand that writes (`convert`, `rewrite`; `export --parquet` in
//! crates/sql/tests/tables.rs),
//! on the mistakes a user makes: an output path never deletes or replaces what profcodec did
//! not write, is checked before any input is read, and fails with exit status 3 and the path.
#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use profcodec::output::{STAGING_LOCK, STAGING_PREFIX};

mod common;
use common::{profcodec, run, stderr, testdata};

/// Exit status 3 (an output error) with `words` in the message.
fn assert_refused(out: &Output, words: &str) {
    assert_eq!(out.status.code(), Some(3), "{}", stderr(out));
    assert!(stderr(out).contains(words), "{}", stderr(out));
}

/// The sorted names in `dir`.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `convert --to folded -o results --force f` once turned the folder `results` into a file.
#[test]
fn a_folder_is_never_replaced_by_a_file_output() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata("nytprof/hello.nytprof.out");
    let results = dir.path().join("results");
    std::fs::create_dir(&results).unwrap();
    std::fs::write(results.join("thesis.tex"), "mine").unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for folder in [&results, &empty] {
        for force in [false, true] {
            let mut args = vec![
                OsStr::new("convert"),
                OsStr::new("--to"),
                OsStr::new("folded"),
                OsStr::new("-o"),
                folder.as_os_str(),
                input.as_os_str(),
            ];
            if force {
                args.push(OsStr::new("--force"));
            }
            let out = run(&args);
            assert_refused(&out, "is a folder");
            assert!(!stderr(&out).contains("--force"), "{}", stderr(&out));
        }
    }
    assert_eq!(names(&results), ["thesis.tex"]);
    assert!(names(&empty).is_empty());
}

/// `convert -o self.out --force self.out` once replaced the input with its own folded text;
/// `export --parquet db --force db` destroyed a database.
#[test]
fn an_output_that_is_the_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("self.out");
    std::fs::copy(testdata("nytprof/hello.nytprof.out"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    let out = run([
        OsStr::new("convert"),
        OsStr::new("--to"),
        OsStr::new("folded"),
        OsStr::new("--force"),
        OsStr::new("-o"),
        input.as_os_str(),
        input.as_os_str(),
    ]);
    assert_refused(&out, "is the input");
    assert_eq!(std::fs::read(&input).unwrap(), before);

    let db = testdata("hpctoolkit/demo.d");
    let copy = dir.path().join("db");
    std::fs::create_dir(&copy).unwrap();
    for name in names(&db) {
        std::fs::copy(db.join(&name), copy.join(&name)).unwrap();
    }
    let before = names(&copy);
    // `export --parquet db --force db`: crates/sql/tests/tables.rs.
    // `rewrite db db/copy` once copied the database into itself until the path was too long.
    let inside = copy.join("copy");
    let out = run([OsStr::new("rewrite"), copy.as_os_str(), inside.as_os_str()]);
    assert_refused(&out, "lies inside the input");
    // `rewrite --force parent/db parent` once deleted the other files of `parent`.
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let out = run([
        OsStr::new("rewrite"),
        OsStr::new("--force"),
        copy.as_os_str(),
        dir.path().as_os_str(),
    ]);
    assert_refused(&out, "holds the input");
    assert_eq!(names(&copy), before);
    assert_eq!(names(dir.path()), ["db", "notes.txt", "self.out"]);
}

/// A folder that profcodec did not write is never replaced by a folder output, even with
/// --force; a database of the same format is.
#[test]
fn force_replaces_only_an_output_of_the_same_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = testdata("hpctoolkit/demo.d");
    let parent = dir.path().join("parent");
    std::fs::create_dir(&parent).unwrap();
    std::fs::write(parent.join("thesis.tex"), "mine").unwrap();
    let out = run([
        OsStr::new("rewrite"),
        OsStr::new("--force"),
        db.as_os_str(),
        parent.as_os_str(),
    ]);
    assert_refused(&out, "never replaces");
    assert_eq!(names(&parent), ["thesis.tex"]);
    // A file is not replaced by a folder output either.
    let file = dir.path().join("file");
    std::fs::write(&file, "mine").unwrap();
    let out = run([
        OsStr::new("rewrite"),
        OsStr::new("--force"),
        db.as_os_str(),
        file.as_os_str(),
    ]);
    assert_refused(&out, "is a file");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    // A database that profcodec wrote, or any database of the format, is replaced with --force.
    let copy = dir.path().join("copy.d");
    let first = run([OsStr::new("rewrite"), db.as_os_str(), copy.as_os_str()]);
    assert!(first.status.success(), "{}", stderr(&first));
    let again = run([OsStr::new("rewrite"), db.as_os_str(), copy.as_os_str()]);
    assert_refused(&again, "--force replaces it");
    let forced = run([
        OsStr::new("rewrite"),
        OsStr::new("--force"),
        db.as_os_str(),
        copy.as_os_str(),
    ]);
    assert!(forced.status.success(), "{}", stderr(&forced));
}

/// `-o /dev/null`, the usual way to time a conversion, writes through the device (and a FIFO
/// is written through too); the device stays a device.
#[cfg(unix)]
#[test]
fn a_character_device_or_fifo_is_written_through() {
    use std::os::unix::fs::FileTypeExt;
    let input = testdata("nytprof/hello.nytprof.out");
    for force in [false, true] {
        let mut args = vec!["convert", "--to", "pprof", "-o", "/dev/null"];
        if force {
            args.push("--force");
        }
        let out = profcodec().args(args).arg(&input).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let out = profcodec()
        .args(["convert", "--to", "folded", "-o"])
        .arg(&fifo)
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let folded = reader.join().unwrap();
    assert!(folded.lines().count() > 1, "{folded}");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

/// `-o /dev/stdout` (a symbolic link to the descriptor's device or pipe) is written through,
/// and what a refused output is gets its own words: a symbolic link to a folder is not "a
/// file", nor is a device.
#[cfg(unix)]
#[test]
fn dev_stdout_is_written_through_and_each_kind_is_named() {
    let input = testdata("nytprof/hello.nytprof.out");
    let out = profcodec()
        .args(["convert", "--to", "folded", "-o", "/dev/stdout"])
        .arg(&input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).lines().count() > 1);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&folder, &link).unwrap();
    let out = profcodec()
        .args(["report", "-o"])
        .arg(&link)
        .arg(&input)
        .output()
        .unwrap();
    assert_refused(
        &out,
        "is a symbolic link to a folder, which a folder output never replaces",
    );
    let out = profcodec()
        .args(["report", "-o", "/dev/null"])
        .arg(&input)
        .output()
        .unwrap();
    assert_refused(
        &out,
        "is a character device, which a folder output never replaces",
    );
    let out = profcodec()
        .args(["convert", "--to", "folded", "-o"])
        .arg(&link)
        .arg(&input)
        .output()
        .unwrap();
    assert_refused(&out, "already exists (a symbolic link to a folder)");
}

/// A bad output path is refused before the input is read: a damaged input does not get to
/// say so (exit status 3, not 1), and a trailing `/` costs nothing.
#[test]
fn the_output_is_checked_before_any_input_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(testdata("easyprofiler/small_v210.prof")).unwrap();
    let damaged = dir.path().join("cut.prof");
    std::fs::write(&damaged, &bytes[..bytes.len() / 2]).unwrap();
    let mut slash = dir.path().join("results").into_os_string();
    slash.push("/");
    let out = run([
        OsStr::new("convert"),
        OsStr::new("--to"),
        OsStr::new("folded"),
        OsStr::new("-o"),
        &slash,
        damaged.as_os_str(),
    ]);
    assert_refused(&out, "is a folder");
    let existing = dir.path().join("out.folded");
    std::fs::write(&existing, "old").unwrap();
    let out = run([
        OsStr::new("convert"),
        OsStr::new("--to"),
        OsStr::new("folded"),
        OsStr::new("-o"),
        existing.as_os_str(),
        damaged.as_os_str(),
    ]);
    assert_refused(&out, "already exists (a file)");
    assert!(!stderr(&out).contains("not an empty folder"));
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "old");
}

/// `--split` names outputs so that inputs of the same file name in different folders never
/// become one output, and makes a missing output folder.
#[test]
fn split_outputs_of_inputs_with_the_same_name_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    for run_name in ["a", "b"] {
        std::fs::create_dir(dir.path().join(run_name)).unwrap();
        std::fs::copy(
            testdata("nytprof/hello.nytprof.out"),
            dir.path().join(run_name).join("nytprof.out"),
        )
        .unwrap();
    }
    let outputs = dir.path().join("new");
    let out = profcodec()
        .args(["convert", "--to", "folded", "--split", "-o"])
        .arg(&outputs)
        .arg(dir.path().join("a/nytprof.out"))
        .arg(dir.path().join("b/nytprof.out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        names(&outputs),
        ["a-nytprof.out.folded", "b-nytprof.out.folded"]
    );
}

/// Staging left by a killed run (nobody holds its lock) is removed by the next run that writes
/// into the same folder, which says so.
#[cfg(unix)]
#[test]
fn staging_of_a_killed_run_is_removed_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    // The pid in its name is of a running process (this test's): only the lock tells.
    let stale = dir
        .path()
        .join(format!("{STAGING_PREFIX}{}-abcdef", std::process::id()));
    std::fs::create_dir(&stale).unwrap();
    std::fs::write(stale.join("output"), vec![0u8; 4096]).unwrap();
    std::fs::write(stale.join(STAGING_LOCK), "").unwrap();
    let out = profcodec()
        .args(["convert", "--to", "folded", "-o"])
        .arg(dir.path().join("out.folded"))
        .arg(testdata("nytprof/hello.nytprof.out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists());
    assert!(
        stderr(&out).contains("left by an earlier run"),
        "{}",
        stderr(&out)
    );
    assert_eq!(names(dir.path()), ["out.folded"]);
}

/// SIGINT while an output is written leaves no staging behind (whether the signal came before
/// or after the output was complete).
#[cfg(unix)]
#[test]
fn an_interrupted_run_leaves_no_staging() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let input = corpus.join("hpctoolkit/hatchet-gamess");
    for delay_ms in [0u64, 50, 200] {
        let out_path = dir.path().join(format!("out-{delay_ms}.pb.gz"));
        let mut child = profcodec()
            .args(["convert", "--to", "pprof", "-o"])
            .arg(&out_path)
            .arg(&input)
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        assert!(
            Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status()
                .unwrap()
                .success()
        );
        let status = child.wait().unwrap();
        // Done, interrupted by the handler (130), or killed before the handler was installed.
        use std::os::unix::process::ExitStatusExt;
        assert!(
            status.success() || status.code() == Some(130) || status.signal() == Some(2),
            "{status:?}"
        );
        for name in names(dir.path()) {
            assert!(!name.starts_with(STAGING_PREFIX), "{name} left behind");
        }
    }
}

/// A closed standard output (`| head`) ends the command quietly with status 0.
#[test]
fn a_closed_standard_output_ends_quietly() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    // A dump far larger than a pipe's buffer, so that writing fails once the reader is gone.
    let mut child = profcodec()
        .args(["dump", "--format", "ndjson"])
        .arg(corpus.join("hpctoolkit/hatchet-gamess"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// A timeline's size follows its samples times their depth, which the input's size does not
/// bound: it stops at the output budget, says so, and writes nothing.
#[test]
fn a_timeline_stops_at_its_budget_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata("easyprofiler/small_v210.prof");
    for to in ["chrome", "perfetto"] {
        let out_path = dir.path().join(format!("trace.{to}"));
        let out = profcodec()
            .args(["convert", "--to", to, "--max-output", "1K", "-o"])
            .arg(&out_path)
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("--max-output"), "{}", stderr(&out));
        assert!(!out_path.exists());
        // Within the budget, the same conversion succeeds.
        let out = profcodec()
            .args(["convert", "--to", to, "-o"])
            .arg(&out_path)
            .arg(&input)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(names(dir.path()), ["trace.chrome", "trace.perfetto"]);
}

/// `report -o runs/report runs` and `convert -o runs/x.folded runs` were checked against the
/// profiles the folder `runs` stands for, not the folder: the output was written inside it,
/// one more entry of the folder of profiles. Both are refused, as merge's, and nothing is
/// written (`--force` too, and with `--split` each output is checked the same way).
#[test]
fn report_and_convert_refuse_an_output_inside_a_folder_given_as_input() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).unwrap();
    for name in ["nytprof.out.1", "nytprof.out.2"] {
        std::fs::copy(testdata("nytprof/hello.nytprof.out"), runs.join(name)).unwrap();
    }
    let before = names(&runs);
    for force in [false, true] {
        let force: &[&str] = if force { &["--force"] } else { &[] };
        let report = profcodec()
            .args(["report", "-o"])
            .arg(runs.join("report"))
            .args(force)
            .arg(&runs)
            .output()
            .unwrap();
        assert_refused(&report, "lies inside the input");
        for (to, output) in [("folded", "x.folded"), ("perfetto", "x.perfetto-trace")] {
            let convert = profcodec()
                .args(["convert", "--to", to, "-o"])
                .arg(runs.join(output))
                .args(force)
                .arg(&runs)
                .output()
                .unwrap();
            assert_refused(&convert, "lies inside the input");
        }
        let split = profcodec()
            .args(["convert", "--to", "folded", "--split", "-o"])
            .arg(&runs)
            .args(force)
            .arg(&runs)
            .output()
            .unwrap();
        assert_refused(&split, "lies inside the input");
        assert_eq!(names(&runs), before);
    }
    // Beside the folder, both go ahead, reading both profiles.
    let report = profcodec()
        .args(["report", "-o"])
        .arg(dir.path().join("report"))
        .arg(&runs)
        .output()
        .unwrap();
    assert!(report.status.success(), "{}", stderr(&report));
    let convert = profcodec()
        .args(["convert", "--to", "folded", "-o"])
        .arg(dir.path().join("x.folded"))
        .arg(&runs)
        .output()
        .unwrap();
    assert!(convert.status.success(), "{}", stderr(&convert));
    assert_eq!(names(&runs), before);
}
