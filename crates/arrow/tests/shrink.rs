//! An input that shrinks while its tables are read (a profiler rewriting its file truncates it
//! first) gives the input's worded I/O error, never a crash nor tables read from zeros.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use profcodec::tables::{Input, ScanOptions, Tables};

#[test]
fn a_mapped_input_cut_while_read_fails_its_check() {
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof/hello.nytprof.out");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nytprof.out");
    std::fs::copy(&source, &path).unwrap();
    // Mapped whatever its size, so that the cut pages fault.
    let input = Input::open_with(&path, profcodec::OpenOptions::new().map_threshold(0)).unwrap();
    input.check_intact().unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(64).unwrap();
    // Reading may fail on the zeros or not; the check says what happened either way.
    let _ = input
        .batches("lines", &ScanOptions::new())
        .map(|batches| batches.count());
    let err = input.check_intact().unwrap_err();
    let message = err.to_string();
    assert!(message.contains("shrank"), "{message}");
    assert!(message.contains("nytprof.out"), "{message}");
}
