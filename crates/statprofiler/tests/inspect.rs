//! The inspection verbs (feature `inspect`): `info`, `validate`, `dump` and `rewrite` over the
//! files of `testdata/statprofiler/`.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use profcodec_common::inspect::{
    DumpLayout, DumpOptions, Finding, RewriteOptions, Source, dump_to_string,
};
use profcodec_statprofiler::{inspect, text};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/statprofiler")
        .join(name)
}

/// The whole dump of `path` as one JSON value (`{"header": ..., "records": [...]}`).
fn dump_value(path: &Path, bytes: &[u8]) -> serde_json::Value {
    let options = DumpOptions {
        layout: DumpLayout::Json,
        pretty: false,
    };
    let text = dump_to_string(options, |d| inspect::dump(&Source::file(path, bytes), d)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every string and frame is defined once, before the first record that uses it, and every
/// sample is one record holding its whole stack.
#[test]
fn dump_defines_strings_and_frames_before_samples_use_them() {
    let path = testdata("features.statprof");
    let bytes = std::fs::read(&path).unwrap();
    let dump = dump_value(&path, &bytes);
    assert_eq!(dump["header"]["format"], "statprofiler");
    let (mut strings, mut frames, mut samples) = (HashSet::new(), HashSet::new(), 0);
    for r in dump["records"].as_array().unwrap() {
        match r["record"].as_str().unwrap() {
            "string" => assert!(strings.insert(r["id"].as_u64().unwrap())),
            "frame" => {
                for key in ["package", "name", "file"] {
                    if let Some(id) = r[key].as_u64() {
                        assert!(strings.contains(&id), "{r}");
                    }
                }
                assert!(frames.insert(r["id"].as_u64().unwrap()));
            }
            "sample" => {
                samples += 1;
                assert!(strings.contains(&r["op"].as_u64().unwrap()));
                for id in r["frames"].as_array().unwrap() {
                    assert!(frames.contains(&id.as_u64().unwrap()), "{r}");
                }
            }
            _ => {}
        }
    }
    let summary = profcodec_statprofiler::validate(&bytes).unwrap();
    assert_eq!(samples, summary.samples);
}

/// Packets after the stream-end record are a finding with their offset and size.
#[test]
fn validate_reports_packets_after_the_stream_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = testdata("features.statprof");
    let mut bytes = std::fs::read(&path).unwrap();
    let end = bytes.len() as u64;
    assert!(
        inspect::validate(&Source::file(&path, &bytes))
            .unwrap()
            .findings
            .is_empty()
    );
    // Packets of a one-byte Snappy block (an empty piece of stream), 1,000 of them.
    for _ in 0..1000 {
        bytes.extend_from_slice(&[0, 1, 0]);
    }
    let path = dir.path().join("trailing.statprof");
    std::fs::write(&path, &bytes).unwrap();
    let found = inspect::validate(&Source::file(&path, &bytes)).unwrap();
    assert_eq!(
        found.findings,
        [Finding::TrailingData {
            offset: end,
            size: 3000
        }]
    );
}

/// The text written sample by sample equals the text of the owned model's samples.
#[test]
fn text_rewrite_streams_what_the_model_gives() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["features.statprof", "features.plain.statprof"] {
        let path = testdata(name);
        let bytes = std::fs::read(&path).unwrap();
        let out = dir.path().join(format!("{name}.txt"));
        inspect::rewrite(
            &Source::file(&path, &bytes),
            &out,
            &RewriteOptions::to("text"),
        )
        .unwrap();
        let profile = profcodec_statprofiler::Profile::parse(&bytes).unwrap();
        let expected = text::write_text(&text::samples(&profile), Vec::new()).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), expected, "{name}");
    }
}

/// A session is summarised once: counts, no list of every file's path.
#[test]
fn session_info_is_a_summary() {
    let info = inspect::info(&Source::file(&testdata("session"), &[])).unwrap();
    let d = &info.details;
    assert_eq!(d["processes"], 3);
    assert_eq!(d["files"], 8);
    assert_eq!(d["open_files"], 1);
    assert!(d.values().all(|v| !v.is_array() && !v.is_object()), "{d:?}");
    // First in display order once serde_json keeps insertion order (`preserve_order`).
    assert!(d.contains_key("program") && d.contains_key("sampled_time_s"));
}
