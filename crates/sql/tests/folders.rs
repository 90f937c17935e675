//! `profcodec sql` and `profcodec export` take a folder of profiles as every verb does (its
//! profiles, in order), and print floats without a sum's rounding noise in their tables.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// `profcodec-sql ARGS`: status, stdout, stderr.
fn run(args: &[&std::ffi::OsStr]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh folder of this test's own under the temporary folder.
fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("profcodec-folders-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A folder holding two copies of testdata's NYTProf `hello` profile.
fn folder(dir: &Path) -> std::path::PathBuf {
    let hello =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof/hello.nytprof.out");
    let profiles = dir.join("profiles");
    std::fs::create_dir(&profiles).unwrap();
    for name in ["a.nytprof.out", "b.nytprof.out"] {
        std::fs::copy(&hello, profiles.join(name)).unwrap();
    }
    profiles
}

#[test]
fn sql_and_export_take_a_folder_of_profiles() {
    let dir = temp("take");
    let profiles = folder(&dir);
    let (status, out, err) = run(&[
        "sql".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
        "SELECT count(DISTINCT input) AS inputs FROM profile.frames".as_ref(),
        profiles.as_os_str(),
    ]);
    assert_eq!(status, Some(0), "{err}");
    assert_eq!(out.lines().nth(1), Some("2"), "{out}");

    let parquet = dir.join("dataset");
    let (status, out, err) = run(&[
        "export".as_ref(),
        "--parquet".as_ref(),
        parquet.as_os_str(),
        profiles.as_os_str(),
    ]);
    assert_eq!(status, Some(0), "{err}");
    assert!(out.contains("profile.frames"), "{out}");
    assert!(parquet.join("profile/frames/input=1").is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A sum of floats prints as the shortest text of its value rounded to 12 digits, never as
/// `0.30000000000000004`; CSV keeps every digit.
#[test]
fn table_floats_have_no_rounding_noise() {
    let dir = temp("floats");
    let profiles = folder(&dir);
    let query = "SELECT 0.1 + 0.2 AS x FROM profile.frames LIMIT 1";
    let (status, out, err) = run(&["sql".as_ref(), query.as_ref(), profiles.as_os_str()]);
    assert_eq!(status, Some(0), "{err}");
    assert!(
        out.contains("| 0.3 ") && !out.contains("0.30000000000000004"),
        "{out}"
    );
    let (_, csv, _) = run(&[
        "sql".as_ref(),
        "--format".as_ref(),
        "csv".as_ref(),
        query.as_ref(),
        profiles.as_os_str(),
    ]);
    assert!(csv.contains("0.30000000000000004"), "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}
