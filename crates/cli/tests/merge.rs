//! `profcodec merge -o OUT INPUTS...`: NYTProf profiles merged into one file that
//! Devel::NYTProf reads (compared with `nytprofmerge` in `crates/nytprof/tests/merge.rs`);
//! damaged inputs and inputs of several formats are refused with a worded error and leave no
//! output; the output is placed as `rewrite` places its output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use profcodec::nytprof::Profile;

mod common;
use common::{profcodec, stderr, testdata};

fn merge(output: &Path, inputs: &[&Path], force: bool) -> Output {
    let mut cmd = profcodec();
    cmd.arg("merge").arg("-o").arg(output);
    if force {
        cmd.arg("--force");
    }
    cmd.args(inputs).output().expect("run profcodec")
}

/// The names in `dir`, sorted: no staging folder or half-written output is left there.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn load(path: &Path) -> Profile {
    Profile::from_bytes(&std::fs::read(path).expect("read")).expect("a valid profile")
}

/// Whether `perl -MDevel::NYTProf::Data` loads `file` (`None` when it is not installed; in CI,
/// where `cargo xtask test` installs it, its absence is a failure).
fn devel_nytprof_loads(file: &Path) -> Option<bool> {
    let installed = Command::new("perl")
        .args(["-MDevel::NYTProf::Data", "-e1"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        installed || std::env::var_os("CI").is_none(),
        "perl -MDevel::NYTProf::Data missing in CI: install libdevel-nytprof-perl"
    );
    if !installed {
        println!("!!!!! SKIPPED: perl -MDevel::NYTProf::Data is not installed !!!!!");
        return None;
    }
    let out = Command::new("perl")
        .args([
            "-MDevel::NYTProf::Data",
            "-e",
            "Devel::NYTProf::Data->new({filename => shift, quiet => 1})",
        ])
        .arg(file)
        .output()
        .expect("run perl");
    Some(out.status.success())
}

#[test]
fn corpus_profiles_merge_into_a_file_devel_nytprof_reads() {
    let Some(corpus) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
    else {
        return;
    };
    let a = corpus.join("multi__default.nytprof.out");
    let b = corpus.join("multi__compress0.nytprof.out");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("merged.out");
    let run = merge(&out, &[&a, &b], false);
    assert!(run.status.success(), "{}", stderr(&run));
    // The inputs were made with different compress options: nytprofmerge's warning.
    assert!(
        stderr(&run).contains("warning: option compress"),
        "{}",
        stderr(&run)
    );
    let (pa, pb, merged) = (load(&a), load(&b), load(&out));
    for name in ["My::Mod::add", "My::Mod::new", "main::BEGIN@1"] {
        assert_eq!(
            merged.subs[name].calls,
            pa.subs[name].calls + pb.subs[name].calls,
            "{name}"
        );
    }
    assert_eq!(merged.pids.len(), 2);
    assert_eq!(names_in(tmp.path()), ["merged.out"]);
    if let Some(loads) = devel_nytprof_loads(&out) {
        assert!(loads, "Devel::NYTProf::Data loads the merged file");
    }

    // Every profile of the corpus at once (a forked child's file among them).
    let mut every: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("read_dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
        .collect();
    every.sort();
    let all = tmp.path().join("all.out");
    let inputs: Vec<&Path> = every.iter().map(PathBuf::as_path).collect();
    let run = merge(&all, &inputs, false);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(load(&all).pids.len(), every.len());
    if let Some(loads) = devel_nytprof_loads(&all) {
        assert!(loads);
    }
}

#[test]
fn a_profile_merged_with_itself_counts_twice() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("twice.out");
    let run = merge(&out, &[&hello, &hello], false);
    assert!(run.status.success(), "{}", stderr(&run));
    let (once, twice) = (load(&hello), load(&out));
    assert_eq!(
        twice.subs["main::fib"].calls,
        2 * once.subs["main::fib"].calls
    );
    if let Some(loads) = devel_nytprof_loads(&out) {
        assert!(loads);
    }
}

#[test]
fn a_damaged_input_is_named_and_leaves_no_output() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let bytes = std::fs::read(&hello).expect("read");
    let tmp = tempfile::tempdir().expect("tempdir");
    let cut = tmp.path().join("cut.nytprof.out");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).expect("write");
    let out = tmp.path().join("merged.out");
    let run = merge(&out, &[&hello, &cut], false);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(message.contains("cut.nytprof.out"), "{message}");
    assert!(message.contains("byte"), "{message}");
    assert!(!message.contains("panicked"), "{message}");
    assert_eq!(
        names_in(tmp.path()),
        ["cut.nytprof.out"],
        "no output written"
    );

    // Not a profile at all.
    let junk = tmp.path().join("junk.out");
    std::fs::write(&junk, b"NYTProf 5 0\n\x01\x02\x03").expect("write");
    let run = merge(&out, &[&hello, &junk], false);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    assert!(stderr(&run).contains("junk.out"), "{}", stderr(&run));
    assert!(!out.exists());
}

#[test]
fn inputs_of_several_formats_are_refused() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let statprof = testdata("statprofiler/features.statprof");
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("merged.out");

    let run = merge(&out, &[&hello, &statprof], false);
    assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
    let message = stderr(&run);
    assert!(message.contains("features.statprof"), "{message}");
    assert!(message.contains("must be of that format"), "{message}");
    assert!(!out.exists());

    // Formats whose own tools combine many inputs without a merged file: each says how.
    let capture = testdata("easyprofiler/small_v120.prof");
    for (input, why) in [
        (&statprof, "statprofilehtml"),
        (&capture, "its GUI and converter open one file at a time"),
    ] {
        let run = merge(&out, &[input, input], false);
        assert_eq!(run.status.code(), Some(2), "{}", stderr(&run));
        let message = stderr(&run);
        assert!(message.contains("merge writes no"), "{message}");
        assert!(message.contains(why), "{message}");
        assert!(message.contains("top, convert and report"), "{message}");
    }
    assert!(names_in(tmp.path()).is_empty());
}

#[test]
fn the_output_is_placed_as_rewrite_places_it() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let tmp = tempfile::tempdir().expect("tempdir");

    // An existing folder is refused, and left as it was.
    let folder = tmp.path().join("folder");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::write(folder.join("keep"), b"mine").expect("write");
    let run = merge(&folder, &[&hello], false);
    assert!(!run.status.success());
    assert_eq!(names_in(&folder), ["keep"]);
    let run = merge(&folder, &[&hello], true);
    assert!(
        !run.status.success(),
        "--force replaces a file, not a folder"
    );
    assert_eq!(names_in(&folder), ["keep"]);

    // An existing file is replaced with --force only.
    let file = tmp.path().join("old.out");
    std::fs::write(&file, b"old").expect("write");
    let run = merge(&file, &[&hello], false);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("--force"), "{}", stderr(&run));
    assert_eq!(std::fs::read(&file).expect("read"), b"old");
    let run = merge(&file, &[&hello, &hello], true);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(load(&file).pids.len(), 2);

    // The output may not be an input.
    let copy = tmp.path().join("copy.out");
    std::fs::copy(&hello, &copy).expect("copy");
    let run = merge(&copy, &[&hello, &copy], true);
    assert!(!run.status.success());
    assert_eq!(
        std::fs::read(&copy).expect("read"),
        std::fs::read(&hello).expect("read")
    );
    assert_eq!(names_in(tmp.path()), ["copy.out", "folder", "old.out"]);
}

/// A merged file written inside a folder of profiles would be one more profile of that folder
/// (every later read would count its totals twice): refused as export refuses an output inside
/// an input, and nothing is written. `--force` does not change it, nor an output that is
/// already there from an earlier run.
#[test]
fn an_output_inside_a_folder_of_inputs_is_refused() {
    let hello = testdata("nytprof/hello.nytprof.out");
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    std::fs::create_dir(&runs).expect("mkdir");
    for name in ["nytprof.out.1", "nytprof.out.2"] {
        std::fs::copy(&hello, runs.join(name)).expect("copy");
    }
    let inside = runs.join("merged.out");
    for force in [false, true] {
        let run = merge(&inside, &[&runs], force);
        assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
        assert!(
            stderr(&run).contains("lies inside the input") && stderr(&run).contains("runs"),
            "{}",
            stderr(&run)
        );
        assert_eq!(names_in(&runs), ["nytprof.out.1", "nytprof.out.2"]);
    }
    // A merged file an earlier (unchecked) run left there is refused too, not merged again.
    std::fs::copy(&hello, &inside).expect("copy");
    let run = merge(&inside, &[&runs], true);
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    assert_eq!(
        std::fs::read(&inside).expect("read"),
        std::fs::read(&hello).expect("read")
    );
    // Beside the folder, the merge goes ahead.
    let beside = tmp.path().join("merged.out");
    let run = merge(&beside, &[&runs], false);
    assert!(run.status.success(), "{}", stderr(&run));
}
