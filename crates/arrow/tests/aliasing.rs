//! Aliased arrays: a database whose trace lines all point at one line's samples is refused when
//! opened, with the error `validate` gives, before any table is read (the rows would otherwise be
//! the shared samples once per alias: 364,824 bytes were 100 M rows).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec::hpctoolkit::{Database, TraceDb};
use profcodec::tables::{Input, ScanOptions, Tables};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

#[test]
fn aliased_trace_lines_are_refused_before_any_table() {
    let demo = testdata("hpctoolkit/demo.d");
    let dir = tempfile_dir("aliased-trace");
    profcodec_benches::hostile::write_hpctoolkit_aliased_database(&demo, &dir, 1000).unwrap();
    let bytes = std::fs::read(dir.join("trace.db")).unwrap();

    // validate's words.
    let expected = Database::open(&dir)
        .unwrap()
        .validate()
        .expect_err("validate refuses aliased lines")
        .to_string();
    assert!(
        expected.starts_with("data used twice: trace.db CTH.pStart"),
        "{expected}"
    );

    let e = Input::open(&dir).expect_err("aliased lines").to_string();
    assert!(
        e.contains(&expected),
        "{e}\nexpected it to hold: {expected}"
    );
    // The byte offset of the second line's pStart, as validate names it.
    let view = TraceDb::parse(&bytes).unwrap();
    let at = view.trace(1).unwrap().offset + 8;
    assert!(e.contains(&format!("at byte {at:#x}")), "{e}");

    // The same database with its own trace.db is read: the check refuses aliasing only.
    std::fs::copy(demo.join("trace.db"), dir.join("trace.db")).unwrap();
    let input = Input::open(&dir).unwrap();
    let rows: usize = input
        .batches("traces", &ScanOptions::new())
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum();
    assert!(rows > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn tempfile_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profcodec-arrow-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}
