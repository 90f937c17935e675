//! Every profile input of the shared corpus, for the tests that run each through a verb, and the
//! `profcodec` commands they run.
#![allow(dead_code, reason = "each test file uses its own part")]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_testkit::corpus::corpus_dir;

/// The `profcodec` binary under test.
pub(crate) fn profcodec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
}

/// Runs `profcodec ARGS`, panicking with its standard error when it fails; its standard output.
pub(crate) fn run_ok<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Vec<u8> {
    let mut cmd = profcodec();
    cmd.args(args);
    let out = cmd.output().expect("run profcodec");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn sorted(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("folder entry").path())
        .filter(|p| keep(p))
        .collect();
    paths.sort();
    paths
}

fn named(path: &Path, suffix: &str) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(suffix))
}

/// Every input of every format in the corpus, as a user passes them: HPCToolkit databases
/// (`*.d` and hatchet's gamess), hpcrun measurement folders and each of their `.hpcrun` files,
/// NYTProf profiles, EasyProfiler captures, StatProfiler session folders and the `-file`
/// output. Empty when there is no corpus (the caller has said so).
pub(crate) fn corpus_inputs() -> Vec<PathBuf> {
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return Vec::new();
    };
    let hpctoolkit = corpus.join("hpctoolkit");
    let mut inputs = sorted(&hpctoolkit.join("dbase"), |p| p.is_dir());
    inputs.push(hpctoolkit.join("hatchet-gamess"));
    for measurements in sorted(&hpctoolkit.join("meas"), |p| p.is_dir()) {
        inputs.extend(sorted(&measurements, |p| named(p, ".hpcrun")));
        inputs.push(measurements);
    }
    inputs.extend(sorted(&corpus.join("nytprof"), |p| {
        named(p, ".nytprof.out")
    }));
    inputs.extend(sorted(&corpus.join("easyprofiler"), |p| named(p, ".prof")));
    let statprofiler = corpus.join("statprofiler");
    inputs.extend(sorted(&statprofiler, |p| {
        p.is_dir() && !named(p, "progs") && !named(p, "file_option")
    }));
    inputs.push(statprofiler.join("file_option/profile.bin"));
    assert!(inputs.len() > 40, "the corpus lost inputs: {inputs:?}");
    inputs
}

/// A short name of a corpus input for output files: its path below the corpus, `/` as `_`.
pub(crate) fn label(input: &Path) -> String {
    let parts: Vec<String> = input
        .components()
        .rev()
        .take(3)
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("_")
}

/// `profcodec top --json -n 0 --metric METRIC INPUTS...`: every row of the metric, by function.
pub(crate) fn top_rows(inputs: &[&Path], metric: &str) -> Vec<serde_json::Value> {
    let mut args: Vec<&OsStr> = ["top", "--json", "-n", "0", "--metric", metric]
        .into_iter()
        .map(OsStr::new)
        .collect();
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    match serde_json::from_slice(&run_ok(args)).expect("top --json") {
        serde_json::Value::Array(rows) => rows,
        other => panic!("top --json printed no array: {other}"),
    }
}
