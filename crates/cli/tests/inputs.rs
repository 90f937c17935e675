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
