//! An input that shrinks while it is read (a profiler rewriting its file truncates it first)
//! gives an I/O error that says so, and the process lives: no SIGBUS.
#![cfg(all(unix, feature = "profile", feature = "nytprof", feature = "hpctoolkit"))]
#![allow(clippy::unwrap_used)]

use std::fs::OpenOptions as FsOpenOptions;
use std::path::{Path, PathBuf};

use profcodec::{OpenError, OpenOptions, ReadError};

fn testdata(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(path)
}

/// A copy of `name` in a temporary folder, which the test may truncate.
fn copy(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(Path::new(name).file_name().unwrap());
    std::fs::copy(testdata(name), &path).unwrap();
    path
}

fn truncate(path: &Path, len: u64) {
    FsOpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

fn assert_shrank(e: &OpenError, path: &Path, from: u64, to: u64) {
    let message = e.to_string();
    assert!(
        matches!(e, OpenError::Io { path: p, .. } if p == path),
        "{e:?}"
    );
    assert!(
        message.contains(&format!(
            "the input shrank while it was read (from {from} to {to} bytes): it is being rewritten?"
        )),
        "{message}"
    );
}

fn shrank_read_error(e: ReadError) -> OpenError {
    match e {
        ReadError::Open(e) => e,
        other => panic!("not the shrink error: {other:?}"),
    }
}

/// A mapped file cut under its reader: the pages past the new end read as zeros (no SIGBUS),
/// and `check_intact` names the file and both lengths.
#[test]
fn a_mapped_file_cut_while_read_reads_zeros_and_fails_its_check() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "nytprof/hello.nytprof.out");
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 16 * 4096, "the file spans many pages");
    let input = OpenOptions::new().map_threshold(0).open(&path).unwrap();
    assert!(input.is_mapped());
    input.check_intact().unwrap();
    let first: Vec<u8> = input.bytes()[..100].to_vec();

    truncate(&path, 4096);
    let bytes = input.bytes();
    assert_eq!(bytes.len() as u64, len, "the mapping keeps its length");
    // Every page past the cut faults: each reads as zeros.
    assert!(bytes[2 * 4096..].iter().all(|&b| b == 0));
    assert_eq!(
        &bytes[..100],
        &first[..],
        "the bytes before the cut are the file's"
    );
    assert_shrank(&input.check_intact().unwrap_err(), &path, len, 4096);
    // The flag stays: every later check fails too.
    assert!(input.check_intact().is_err());
}

/// A verb on a mapped input cut before it runs: the I/O error, not what the zeros gave.
#[test]
fn verbs_on_a_cut_mapped_input_give_the_shrink_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "nytprof/hello.nytprof.out");
    let len = std::fs::metadata(&path).unwrap().len();
    let input = OpenOptions::new().map_threshold(0).open(&path).unwrap();
    truncate(&path, 100);
    let e = shrank_read_error(profcodec::to_profile(&input).unwrap_err());
    assert_shrank(&e, &path, len, 100);
    #[cfg(feature = "inspect")]
    {
        // The inspection verbs report the same error, as an invalid input.
        let e = profcodec::info(&input).unwrap_err();
        let message = e.to_string();
        assert!(
            message.contains(&format!("from {len} to 100 bytes"))
                && message.contains(&path.display().to_string()),
            "{message}"
        );
    }
}

/// A file of the input cut while it is read, and closed since: the input's check reports it.
#[test]
fn a_cut_member_file_fails_its_inputs_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = testdata("hpctoolkit/demo.d");
    let input = OpenOptions::new().map_threshold(0).open(&db).unwrap();
    let profile_db = dir.path().join("profile.db");
    std::fs::copy(db.join("profile.db"), &profile_db).unwrap();
    let len = std::fs::metadata(&profile_db).unwrap().len();
    {
        let member = input.open_member(&profile_db).unwrap();
        assert!(member.is_mapped());
        truncate(&profile_db, 0);
        assert!(member.bytes().iter().all(|&b| b == 0));
    }
    assert_shrank(&input.check_intact().unwrap_err(), &profile_db, len, 0);
    let e = shrank_read_error(profcodec::to_profile(&input).unwrap_err());
    assert_shrank(&e, &profile_db, len, 0);
}

/// A small file is read into memory when it is opened: cutting it afterwards changes nothing.
#[test]
fn a_small_file_is_read_whole_and_unaffected_by_a_later_cut() {
    let dir = tempfile::tempdir().unwrap();
    let path = copy(dir.path(), "nytprof/hello.nytprof.out");
    let input = profcodec::open(&path).unwrap();
    assert!(!input.is_mapped());
    let whole = std::fs::read(testdata("nytprof/hello.nytprof.out")).unwrap();
    truncate(&path, 0);
    assert_eq!(input.bytes(), &whole[..]);
    input.check_intact().unwrap();
    profcodec::to_profile(&input).unwrap();
}

/// Several threads reading mapped inputs cut under them at once: each gets its error.
#[test]
fn concurrent_cuts_are_each_reported() {
    let dir = tempfile::tempdir().unwrap();
    std::thread::scope(|scope| {
        for i in 0..4 {
            let dir = dir.path().join(i.to_string());
            scope.spawn(move || {
                std::fs::create_dir(&dir).unwrap();
                let path = copy(&dir, "nytprof/hello.nytprof.out");
                let input = OpenOptions::new().map_threshold(0).open(&path).unwrap();
                truncate(&path, 0);
                assert!(profcodec::to_profile(&input).is_err());
                assert!(input.check_intact().is_err());
            });
        }
    });
}

/// A SIGBUS that is not a guarded input's still kills the process as before: run in a child
/// process (this test binary, asked for the ignored test below).
#[test]
fn a_fault_outside_the_guarded_inputs_still_kills() {
    use std::os::unix::process::ExitStatusExt;
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "unguarded_fault",
            "--ignored",
            "--test-threads=1",
        ])
        .env("PROFCODEC_SHRINK_CHILD", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}");
}

/// The child of the test above: installs the guard (a guarded input), then reads past the end
/// of a mapping of its own.
#[test]
#[ignore = "run by a_fault_outside_the_guarded_inputs_still_kills in a child process"]
#[allow(unsafe_code)]
fn unguarded_fault() {
    if std::env::var_os("PROFCODEC_SHRINK_CHILD").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let guarded = copy(dir.path(), "nytprof/hello.nytprof.out");
    let input = OpenOptions::new().map_threshold(0).open(&guarded).unwrap();
    assert!(input.is_mapped());
    let path = dir.path().join("other");
    std::fs::write(&path, vec![1u8; 3 * 4096]).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    // SAFETY: the test truncates the file on purpose, to fault.
    let map = unsafe { memmap2::Mmap::map(&file).unwrap() };
    truncate(&path, 0);
    let sum: u64 = map.iter().map(|&b| u64::from(b)).sum();
    println!("{sum}");
    unreachable!("the read past the end of the file did not fault");
}
