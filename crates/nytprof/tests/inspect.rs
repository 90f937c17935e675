//! The inspection verbs (feature `inspect`): `info`, `validate`, `dump` and `rewrite` over the
//! testdata and hand-built files, as the umbrella `profcodec` calls them; and the conversion into
//! the profile model that `top`, `diff` and the exporters read.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec_common::inspect::{
    DumpLayout, DumpOptions, Finding, RewriteOptions, Source, dump_to_string,
};
use profcodec_nytprof::{Line, Record, Writer, inspect};

fn testdata(name: &str) -> (PathBuf, Vec<u8>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/nytprof")
        .join(name);
    let bytes = std::fs::read(&path).expect("read testdata");
    (path, bytes)
}

/// The whole dump of `source` as one JSON value (`{"header": ..., "records": [...]}`).
fn dump_value(source: &Source<'_>) -> serde_json::Value {
    let options = DumpOptions {
        layout: DumpLayout::Json,
        pretty: false,
    };
    let text = dump_to_string(options, |d| inspect::dump(source, d)).expect("dump");
    serde_json::from_str(&text).expect("a dump is JSON")
}

#[test]
fn dump_streams_flat_records_with_names_once() {
    let (path, bytes) = testdata("hello.nytprof.out");
    let value = dump_value(&Source::file(&path, &bytes));
    let records = value["records"].as_array().expect("records");
    assert!(records.iter().all(|r| r["record"].is_string()));
    // No record nests an object or an array of objects.
    for r in records {
        for (_, v) in r.as_object().expect("object") {
            assert!(!v.is_object(), "{r}");
        }
    }
    let names: Vec<&str> = records
        .iter()
        .filter(|r| r["record"] == "name")
        .filter_map(|r| r["name"].as_str())
        .collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(names.len(), unique.len(), "each name is written once");
    assert!(records.iter().any(|r| r["record"] == "time_line"));
}

#[test]
fn validate_reports_bytes_after_the_trailer_once() {
    let mut w = Writer::new(Vec::new());
    w.header(5, 0).expect("header");
    w.record(&Record::Attribute(Line {
        text: b"ticks_per_sec=10000000",
    }))
    .expect("record");
    w.record(&Record::StartDeflate).expect("z");
    w.record(&Record::Discount).expect("record");
    let mut bytes = w.finish().expect("finish");
    let clean = Source::file(Path::new("clean.nytprof.out"), &bytes);
    assert!(
        inspect::validate(&clean)
            .expect("valid")
            .findings
            .is_empty()
    );
    let end = bytes.len() as u64;
    bytes.extend_from_slice(b"junk");
    let junk = Source::file(Path::new("junk.nytprof.out"), &bytes);
    assert_eq!(
        inspect::validate(&junk).expect("valid").findings,
        [Finding::TrailingData {
            offset: end,
            size: 4
        }]
    );
}

#[test]
fn a_pynytprof_conversion_that_would_explode_is_refused() {
    let mut data = b"NYTProf 5 0\n:ticks_per_sec=10000000\n\n".to_vec();
    let mut entry = Vec::new();
    for v in [0u32, 1, 1 << 24] {
        entry.extend_from_slice(&v.to_le_bytes());
    }
    entry.extend_from_slice(&[0; 16]);
    data.push(b'S');
    data.extend_from_slice(&(entry.len() as u32).to_le_bytes());
    data.extend_from_slice(&entry);
    data.extend_from_slice(b"E\0\0\0\0");
    let dir = tempfile::tempdir().expect("tempdir");
    let input = Source::file(Path::new("py.out"), &data);
    let out = dir.path().join("out.nytprof");
    let options = RewriteOptions::to("nytprof");
    let err = inspect::rewrite(&input, &out, &options).expect_err("refused");
    assert!(
        err.to_string()
            .starts_with("the converted file would be far larger")
    );
    assert!(!out.exists(), "nothing half-written is left");
}

#[cfg(feature = "profile")]
#[test]
fn profile_has_subs_lines_edges_and_stacks() {
    use profcodec_nytprof::pynytprof;
    use profcodec_profile::{GroupBy, IdKind, Query};

    let (_, bytes) = testdata("hello.nytprof.out");
    let profile = profcodec_nytprof::to_profile::to_profile(&bytes).expect("profile");
    let top = profile.top(&Query::new().limit(3)).expect("top");
    assert_eq!(top.value_type, "time");
    assert_eq!(top.unit, "seconds");
    let fib = profile
        .top(&Query::new())
        .expect("top")
        .rows
        .into_iter()
        .find(|r| r.name == "main::fib")
        .expect("main::fib");
    assert!(fib.calls.is_some_and(|c| c > 1.0));
    assert!(fib.inclusive.is_some_and(|i| i >= fib.self_value));
    let lines = profile
        .top(&Query::new().group(GroupBy::Line))
        .expect("lines");
    assert!(lines.rows[0].name.contains("hello.pl:"));
    assert!(profile.call_edges().len() > 0);
    assert!(profile.nodes().len() > 0);
    let (_, context) = profile.contexts().next().expect("a context");
    assert_eq!(context.ids[0].0, IdKind::Process);
    // The old layout converts too (no stacks there).
    let (_, bytes) = testdata("pynytprof.out");
    let py = pynytprof::to_profile(&pynytprof::parse(&bytes).expect("pynytprof"))
        .to_profile(None)
        .expect("pynytprof");
    assert_eq!(py.nodes().len(), 0);
    assert!(!py.flat_values().is_empty());
}

#[test]
fn info_leads_with_the_summary() {
    let (path, bytes) = testdata("hello.nytprof.out");
    let info = inspect::info(&Source::file(&path, &bytes)).expect("info");
    let keys: Vec<&String> = info.details.keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("application"));
    assert!(
        keys.iter()
            .all(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
    );
}
