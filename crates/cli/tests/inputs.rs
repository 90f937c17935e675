//! The inputs people pass besides single files: a StatProfiler template (the `-template` given to
//! the profiler, naming no file itself) and an hpcrun measurement folder (`*.m`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn profcodec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profcodec"))
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

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
