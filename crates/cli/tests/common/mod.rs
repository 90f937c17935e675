//! What the command line's tests share: the `profcodec` binary under test, run with arguments,
//! and the repository's `testdata/`.

// Each test file is a crate of its own that uses its share of these.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `profcodec` binary cargo built for these tests.
pub(crate) fn profcodec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
}

/// `profcodec ARGS`, run to its end.
pub(crate) fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    profcodec().args(args).output().expect("run profcodec")
}

/// `profcodec ARGS`, which must succeed (its standard error is the failure's message).
pub(crate) fn run_ok<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    let out = run(args);
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// The standard output of `profcodec ARGS`, which must succeed and print UTF-8.
pub(crate) fn stdout<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> String {
    String::from_utf8(run_ok(args).stdout).expect("UTF-8 output")
}

/// A run's standard error, as text.
pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A file or folder of the repository's `testdata/`.
pub(crate) fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}
