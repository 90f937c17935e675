//! The inspection verbs (feature `inspect`): `info`, `validate`, `dump` and `rewrite` over
//! hand-built captures and the testdata, as the umbrella `profcodec` calls them.

use std::path::Path;

use profcodec_common::inspect::{
    DumpLayout, DumpOptions, Error, Finding, RewriteOptions, Source, dump_to_string,
};
use profcodec_easyprofiler::{self as ep, inspect};

fn block(begin: u64, end: u64, descriptor: u32) -> ep::Record {
    ep::Record {
        begin,
        end,
        descriptor,
        body: ep::RecordBody::Named(Vec::new()),
    }
}

fn capture(name: Vec<u8>, records: Vec<ep::Record>) -> Vec<u8> {
    let end = records.iter().map(|r| r.end).max().unwrap_or(0) + 1;
    let mut c = ep::Capture {
        version: ep::Version::V2_1_0,
        pid: 1,
        end_time: end,
        descriptors: vec![Some(Box::new(ep::Descriptor {
            id: 0,
            block_type: 1,
            status: 1,
            name,
            file: b"f.cpp".to_vec(),
            ..ep::Descriptor::default()
        }))],
        threads: vec![ep::Thread {
            id: 7,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..ep::Capture::default()
    };
    c.update_counters(ep::Convention::Runtime);
    c.to_bytes().expect("writable")
}

/// `bytes` as the input file `c.prof` (a capture is one file: no other file is opened).
fn source(bytes: &[u8]) -> Source<'_> {
    Source::file(Path::new("c.prof"), bytes)
}

/// The dump of `bytes` in `layout` (compact), as text.
fn dump_text(bytes: &[u8], layout: DumpLayout) -> String {
    let options = DumpOptions {
        layout,
        pretty: false,
    };
    dump_to_string(options, |d| inspect::dump(&source(bytes), d)).expect("dump")
}

fn dump_bytes(bytes: &[u8]) -> Vec<u8> {
    dump_text(bytes, DumpLayout::Ndjson).into_bytes()
}

/// The whole dump of `bytes` as one JSON value (`{"header": ..., "records": [...]}`).
fn dump_value(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_str(&dump_text(bytes, DumpLayout::Json)).expect("a dump is JSON")
}

fn testdata(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
    std::fs::read(dir.join(name)).expect("testdata")
}

/// The profile the umbrella's `to_profile` builds for a capture: the tolerant tree's.
#[cfg(feature = "profile")]
#[test]
fn profile_ranks_blocks_per_thread() {
    let input = testdata("small_v210.prof");
    let view = ep::parse(&input).expect("parse");
    let tree = view.tree().expect("tree");
    let profile = tree.to_profile().expect("profile");
    assert_eq!(profile.contexts().len(), tree.threads.len());
    let top = profile
        .top(&ep::profcodec_profile::Query::new().limit(3))
        .expect("top");
    assert_eq!(top.unit, "nanoseconds");
    assert_eq!(top.rows.len(), 3);
    // The first row is the block with the most self time, as the reader's totals say.
    let mut totals = tree.totals();
    totals.sort_by_key(|t| std::cmp::Reverse(t.self_time));
    let first = tree.descriptor(totals[0].descriptor).expect("descriptor");
    assert_eq!(top.rows[0].name, first.name().to_string());
    assert_eq!(top.rows[0].self_value, totals[0].self_time as f64);
    assert!(top.rows[0].calls.is_some_and(|c| c > 0.0));
}

#[test]
fn a_long_name_is_dumped_once() {
    // 2,000 tiny blocks under one 65,000-byte name: 111 KB that once dumped 130 MB.
    let name = vec![b'n'; 65_000];
    let records = (0..2_000u64).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
    let bytes = capture(name, records);
    let out = dump_bytes(&bytes);
    let long = vec![b'n'; 65_000];
    let times = out.windows(long.len()).filter(|w| *w == &long[..]).count();
    assert_eq!(times, 1);
    assert!(
        out.len() < 4 * bytes.len(),
        "{} bytes dumped from {}",
        out.len(),
        bytes.len()
    );
}

#[test]
fn the_dump_is_flat_snake_case_records() {
    let records = (0..20_000u64).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
    let out = dump_bytes(&capture(b"flat".to_vec(), records));
    let lines: Vec<serde_json::Value> = out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect();
    // Header, descriptor, thread, then the blocks.
    assert_eq!(lines.len(), 3 + 20_000);
    assert_eq!(lines[0]["record"], "header");
    assert_eq!(lines[1]["record"], "descriptor");
    assert_eq!(lines[2]["record"], "thread");
    for (i, l) in lines[3..].iter().enumerate() {
        assert_eq!(l["record"], "block");
        assert_eq!(l["id"], i);
        assert_eq!(l["parent"], serde_json::Value::Null);
        assert_eq!(l["depth"], 0);
    }
    for l in &lines {
        for k in l.as_object().expect("object").keys() {
            assert!(!k.chars().any(|c| c.is_ascii_uppercase()), "{k}");
        }
    }
}

#[test]
fn blocks_name_their_parent_and_depth() {
    let doc = dump_value(&testdata("small_v210_gui_bookmarks.prof"));
    let records = doc["records"].as_array().expect("records");
    let by_kind = |k: &str| records.iter().filter(|r| r["record"] == k).count();
    assert_eq!(by_kind("bookmark"), 2);
    assert_eq!(by_kind("context_switch"), 2);
    assert_eq!(by_kind("thread"), 2);
    assert_eq!(by_kind("value"), 24);
    let blocks: Vec<_> = records
        .iter()
        .filter(|r| r["record"] == "block" || r["record"] == "value")
        .collect();
    let depth_of = |id: &serde_json::Value| {
        blocks
            .iter()
            .find(|b| b["id"] == *id && b["thread"] == blocks[0]["thread"])
            .map(|b| b["depth"].as_u64().expect("depth"))
    };
    for b in blocks.iter().filter(|b| b["thread"] == blocks[0]["thread"]) {
        match depth_of(&b["parent"]) {
            Some(d) => assert_eq!(b["depth"].as_u64(), Some(d + 1)),
            None => assert_eq!(b["depth"], 0),
        }
    }
    let value = records
        .iter()
        .find(|r| r["record"] == "value")
        .expect("a value");
    assert_eq!(value["data_type"], "uint32");
    assert!(value["data"].is_u64());
}

#[test]
fn validate_refuses_what_the_cpp_reader_refuses_by_depth() {
    let nest = |levels: u64| {
        capture(
            b"b".to_vec(),
            (0..levels)
                .rev()
                .map(|k| block(k + 1, 1000 - k, 0))
                .collect(),
        )
    };
    let ok = nest(255);
    assert!(
        inspect::validate(&source(&ok))
            .expect("valid")
            .findings
            .is_empty()
    );
    let deep = nest(256);
    match inspect::validate(&source(&deep)) {
        Err(Error::Invalid { message, offset }) => {
            assert!(message.contains("expected a depth below 254"), "{message}");
            assert!(offset.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn trailing_bytes_are_a_finding() {
    let mut bytes = testdata("small_v210.prof");
    let end = bytes.len() as u64;
    bytes.extend_from_slice(&[0; 10]);
    let v = inspect::validate(&source(&bytes)).expect("valid");
    assert_eq!(
        v.findings,
        vec![Finding::TrailingData {
            offset: end,
            size: 10
        }]
    );
}

#[test]
fn info_leads_with_the_human_summary() {
    let bytes = testdata("small_v210_gui_bookmarks.prof");
    let info = inspect::info(&source(&bytes)).expect("info");
    assert_eq!(info.details["time_span"], "559 ns");
    assert_eq!(
        info.details["thread_names"],
        "Main (tid 1481), Worker (tid 1482)"
    );
    assert_eq!(info.details["values"], 24);
    assert!(
        info.details["top_blocks_by_self_time"]
            .as_str()
            .expect("text")
            .starts_with("leaf: ")
    );
    for k in info.details.keys() {
        assert!(
            !k.contains(' ') && !k.chars().any(|c| c.is_ascii_uppercase()),
            "{k}"
        );
    }
}

#[test]
fn rewrite_keeps_the_bytes_or_converts() {
    let bytes = testdata("small_v210_gui_bookmarks.prof");
    let input = source(&bytes);
    let dir = tempfile::tempdir().expect("tempdir");
    let same = dir.path().join("same.prof");
    inspect::rewrite(&input, &same, &RewriteOptions::default()).expect("rewrite");
    assert_eq!(std::fs::read(&same).expect("read"), bytes);
    let old = dir.path().join("old.prof");
    let report = inspect::rewrite(&input, &old, &RewriteOptions::to("1.3.0")).expect("rewrite");
    assert_eq!(report.dropped.len(), 2, "{:?}", report.dropped);
}
