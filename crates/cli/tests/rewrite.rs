//! `profcodec rewrite` never merges with old output, never leaves half an output behind, and
//! never creates folders the user did not ask for.

use std::path::Path;
use std::process::Output;

mod common;
use common::{profcodec, stderr, testdata};

fn rewrite(args: &[&std::ffi::OsStr]) -> Output {
    profcodec()
        .arg("rewrite")
        .args(args)
        .output()
        .expect("run profcodec")
}

/// Every file below `dir`, relative to it, sorted.
fn files_below(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).expect("below root");
                out.push(rel.display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Nothing the staging step made is left beside the output.
fn assert_no_staging_left(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let name = entry.expect("entry").file_name();
        assert!(
            !name
                .to_string_lossy()
                .starts_with(profcodec::output::STAGING_PREFIX),
            "staging folder left behind: {name:?}"
        );
    }
}

#[test]
fn an_existing_file_is_refused_without_force_and_replaced_whole_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = testdata("easyprofiler/small_v210.prof");
    let out = dir.path().join("out.prof");
    std::fs::write(&out, b"old content that must survive a refused rewrite").expect("write");

    let refused = rewrite(&[input.as_os_str(), out.as_os_str()]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("--force"), "{}", stderr(&refused));
    assert_eq!(
        std::fs::read(&out).expect("read"),
        b"old content that must survive a refused rewrite"
    );

    let forced = rewrite(&["--force".as_ref(), input.as_os_str(), out.as_os_str()]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(
        std::fs::read(&out).expect("read"),
        std::fs::read(&input).expect("read input")
    );
    assert_no_staging_left(dir.path());
}

#[test]
fn a_missing_parent_folder_is_refused_and_not_created() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = testdata("easyprofiler/small_v210.prof");
    let parent = dir.path().join("no-such-folder");
    let out = parent.join("out.prof");
    let refused = rewrite(&[input.as_os_str(), out.as_os_str()]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("does not exist"),
        "{}",
        stderr(&refused)
    );
    assert!(!parent.exists(), "the parent folder was created");
}

#[test]
fn a_failed_rewrite_leaves_no_output_and_no_staging() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bytes = std::fs::read(testdata("easyprofiler/small_v210.prof")).expect("read");
    let cut = dir.path().join("cut.prof");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    let out = dir.path().join("out.prof");
    let failed = rewrite(&[cut.as_os_str(), out.as_os_str()]);
    assert_eq!(failed.status.code(), Some(1), "{}", stderr(&failed));
    assert!(!out.exists(), "a failed rewrite left an output");
    assert_no_staging_left(dir.path());
}

#[test]
fn an_empty_folder_is_a_valid_target_for_a_database() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("db");
    std::fs::create_dir(&out).expect("mkdir");
    let input = corpus.join("hpctoolkit/hatchet-gamess");
    let done = rewrite(&[input.as_os_str(), out.as_os_str()]);
    assert!(done.status.success(), "{}", stderr(&done));
    assert!(out.join("meta.db").is_file());
    assert_no_staging_left(dir.path());
}

/// The scenario: a database with a trace rewritten over by one without leaves no
/// trace.db behind, and without --force the second rewrite is refused.
#[test]
fn force_leaves_no_file_of_the_old_database() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("X");
    let with_trace = corpus.join("hpctoolkit/dbase/small.d");
    let without_trace = corpus.join("hpctoolkit/hatchet-gamess");
    assert!(with_trace.join("trace.db").is_file());
    assert!(!without_trace.join("trace.db").exists());

    let first = rewrite(&[with_trace.as_os_str(), out.as_os_str()]);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(out.join("trace.db").is_file());
    let before = files_below(&out);

    let refused = rewrite(&[without_trace.as_os_str(), out.as_os_str()]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert_eq!(
        files_below(&out),
        before,
        "a refused rewrite changed the output"
    );

    let forced = rewrite(&[
        "--force".as_ref(),
        without_trace.as_os_str(),
        out.as_os_str(),
    ]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert!(
        !out.join("trace.db").exists(),
        "--force kept the old database's trace.db"
    );
    let validated = profcodec()
        .arg("validate")
        .arg(&out)
        .output()
        .expect("run profcodec");
    assert!(validated.status.success(), "{}", stderr(&validated));
    assert_no_staging_left(dir.path());
}

/// Rewriting a file onto itself is refused, even with --force: the output would replace the
/// input being read.
#[test]
fn a_file_is_never_rewritten_onto_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("self.prof");
    std::fs::copy(testdata("easyprofiler/small_v210.prof"), &path).expect("copy");
    let before = std::fs::read(&path).expect("read");
    let refused = rewrite(&["--force".as_ref(), path.as_os_str(), path.as_os_str()]);
    assert_eq!(refused.status.code(), Some(3), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("is the input"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(std::fs::read(&path).expect("read"), before);
    assert_no_staging_left(dir.path());
}
