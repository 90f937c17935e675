//! HPCToolkit's own accuracy test of hpcprof (`tst-accuracy`): each canonical database of
//! `../shared/corpus/hpctoolkit/dbase` is made again from its measurement, with one job and with
//! three, and `hpctesttool test db-compare NEW CANONICAL` must report no difference.
//!
//! hpctesttool is named by the environment variable `PROFCODEC_HPCTESTTOOL` (its executable, or
//! a Python that has it installed); `cargo xtask prepare` installs it. Without it, or without
//! the corpus, the test says so in one line and passes.

use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_hpcprof::{Options, prof, write_database};

/// The databases that must compare equal.
const PASSING: &[&str] = &[
    "small.nostruct",
    "loops-cputime-t.nostruct",
    "loops-perf.nostruct",
    "small",
    "loops-cputime-t",
    "loops-perf",
];

/// The databases that do not compare equal yet, and why. Each is asserted still different (or
/// still refused), so that progress shows as a failure here to be moved to [`PASSING`].
const NOT_YET: &[(&str, &str)] = &[
    (
        "loops-cuda-nvidia-t",
        "GPU measurements (range trees, gpubins) are not placed",
    ),
    (
        "loops-cuda-nvidia-t.nostruct",
        "GPU range trees and GPU placeholders are not placed",
    ),
    (
        "loops-cuda-nvidiapc-t",
        "GPU measurements (range trees, gpubins) are not placed",
    ),
    (
        "loops-cuda-nvidiapc-t.nostruct",
        "GPU range trees and GPU placeholders are not placed",
    ),
    (
        "loops-hip-amd-t",
        "GPU measurements (range trees, gpubins) are not placed",
    ),
    (
        "loops-hip-amd-t.nostruct",
        "GPU range trees and GPU placeholders are not placed",
    ),
    (
        "recursion-cuda-nvidiapc-t",
        "GPU measurements (range trees, gpubins) are not placed",
    ),
    (
        "recursion-cuda-nvidiapc-t.nostruct",
        "GPU range trees and GPU placeholders are not placed",
    ),
];

fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/hpctoolkit");
    dir.join("dbase").is_dir().then_some(dir)
}

/// The command that runs hpctesttool: its executable, or `python -m hpctesttool`.
fn hpctesttool() -> Option<Command> {
    let tool = std::env::var_os("PROFCODEC_HPCTESTTOOL")?;
    let path = PathBuf::from(tool);
    let name = path.file_name()?.to_string_lossy().into_owned();
    if name.starts_with("python") {
        let mut c = Command::new(path);
        c.args(["-m", "hpctesttool"]);
        Some(c)
    } else {
        Some(Command::new(path))
    }
}

/// Makes database `name` from its measurement with `jobs` workers; `Err` says why not.
fn make(corpus: &Path, name: &str, jobs: usize, out: &Path) -> Result<(), String> {
    let (meas, nostruct) = match name.strip_suffix(".nostruct") {
        Some(m) => (m, true),
        None => (name, false),
    };
    let options = Options {
        jobs: Some(jobs),
        ignore_structs: nostruct,
        ..Options::default()
    };
    let db = prof(&[corpus.join("meas").join(format!("{meas}.m"))], &options)
        .map_err(|e| e.to_string())?;
    write_database(&db, out).map_err(|e| e.to_string())
}

/// Runs db-compare; `Ok` when it reports no difference, else its report.
fn db_compare(new: &Path, canonical: &Path) -> Result<(), String> {
    let mut c = hpctesttool().expect("hpctesttool");
    let out = c
        .args(["test", "db-compare"])
        .arg(new)
        .arg(canonical)
        .output()
        .expect("hpctesttool runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn hpctesttool_db_compare_finds_no_difference() {
    let (Some(corpus), Some(_)) = (corpus(), hpctesttool()) else {
        println!(
            "skipped: set PROFCODEC_HPCTESTTOOL (cargo xtask prepare) and keep ../shared/corpus"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    for name in PASSING {
        for jobs in [1, 3] {
            let out = tmp.path().join(format!("{name}-j{jobs}.d"));
            make(&corpus, name, jobs, &out).unwrap_or_else(|e| panic!("{name} -j{jobs}: {e}"));
            let canonical = corpus.join("dbase").join(format!("{name}.d"));
            if let Err(report) = db_compare(&out, &canonical) {
                panic!("{name} -j{jobs} differs from the canonical database:\n{report}");
            }
        }
    }
}

#[test]
fn databases_not_yet_equal_are_still_different() {
    let (Some(corpus), Some(_)) = (corpus(), hpctesttool()) else {
        println!(
            "skipped: set PROFCODEC_HPCTESTTOOL (cargo xtask prepare) and keep ../shared/corpus"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    for (name, why) in NOT_YET {
        let out = tmp.path().join(format!("{name}.d"));
        let canonical = corpus.join("dbase").join(format!("{name}.d"));
        let result = make(&corpus, name, 2, &out).and_then(|()| db_compare(&out, &canonical));
        assert!(
            result.is_err(),
            "{name} now compares equal ({why} no longer holds): move it to PASSING"
        );
    }
}

#[test]
fn the_database_is_the_same_for_any_number_of_jobs() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcprof/demo.m");
    let mut inputs = vec![demo];
    if let Some(corpus) = corpus() {
        inputs.push(corpus.join("meas/loops-cputime-t.m"));
    }
    for input in inputs {
        let make = |jobs| {
            let options = Options {
                jobs: Some(jobs),
                ignore_structs: true,
                ..Options::default()
            };
            prof(&[&input], &options).expect("prof")
        };
        let one = make(1);
        assert_eq!(one, make(3), "{}", input.display());
        assert!(one.profiles.len() >= 2);
    }
}

/// HPCToolkit's flags test (`tst-flags-effective`): `check-db --trace` of a database made from a
/// traced measurement, and `check-db --no-trace` of one made with `--no-traces` (or from a
/// measurement without traces), find every file they expect.
#[test]
fn hpctesttool_check_db_finds_the_files_hpcprof_writes() {
    let (Some(corpus), Some(_)) = (corpus(), hpctesttool()) else {
        println!(
            "skipped: set PROFCODEC_HPCTESTTOOL (cargo xtask prepare) and keep ../shared/corpus"
        );
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let measurements = ["small", "loops-cputime-t", "loops-perf"];
    for meas in measurements {
        let folder = corpus.join("meas").join(format!("{meas}.m"));
        let traced = std::fs::read_dir(&folder)
            .expect("measurement folder")
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "hpctrace"));
        for no_traces in [false, true] {
            let flag = if traced && !no_traces {
                "--trace"
            } else {
                "--no-trace"
            };
            let out = tmp.path().join(format!("{meas}{no_traces}.d"));
            let options = Options {
                no_traces,
                ..Options::default()
            };
            let db = prof(&[&folder], &options).unwrap_or_else(|e| panic!("{meas}: {e}"));
            write_database(&db, &out).expect("write");
            let result = hpctesttool()
                .expect("hpctesttool")
                .args(["test", "check-db", flag])
                .arg(&out)
                .output()
                .expect("hpctesttool runs");
            assert!(
                result.status.success(),
                "{meas} check-db {flag}:\n{}{}",
                String::from_utf8_lossy(&result.stdout),
                String::from_utf8_lossy(&result.stderr)
            );
        }
    }
}
