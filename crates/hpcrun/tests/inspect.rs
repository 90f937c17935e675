//! The inspection verbs (feature `inspect`): every testdata file validates, rewrites to the same
//! bytes and dumps flat records; trailing bytes are a finding; migration reports what it drops;
//! a measurement folder of the corpus is one input.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_common::inspect::{
    DumpLayout, DumpOptions, Error, Finding, Info, ReadWhole, RewriteOptions, Source, Validated,
    dump_to_string,
};
use profcodec_hpcrun::inspect;
use profcodec_testkit::corpus::corpus_subdir;
use serde_json::{Value, json};

fn testdata_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hpcrun")
        .join(name)
}

/// A file input: its path and bytes.
struct File {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl File {
    fn open(path: impl Into<PathBuf>) -> File {
        let path = path.into();
        let bytes = std::fs::read(&path).unwrap();
        File { path, bytes }
    }

    fn source(&self) -> Source<'_> {
        Source::file(&self.path, &self.bytes)
    }
}

fn testdata(name: &str) -> File {
    File::open(testdata_path(name))
}

/// A folder input: no bytes of its own, its files read whole.
fn folder_source(dir: &Path) -> Source<'_> {
    Source {
        path: dir,
        bytes: &[],
        members: &ReadWhole,
    }
}

fn info(input: &Source<'_>) -> Info {
    inspect::info(input).unwrap()
}

fn validate(input: &Source<'_>) -> Validated {
    inspect::validate(input).unwrap()
}

/// The dump as text, whose keys keep their order.
fn dump_text(input: &Source<'_>, layout: DumpLayout) -> String {
    let options = DumpOptions {
        layout,
        pretty: false,
    };
    dump_to_string(options, |d| inspect::dump(input, d)).unwrap()
}

/// The whole dump as one JSON value (`{"header": ..., "records": [...]}`).
fn dump_value(input: &Source<'_>) -> Value {
    serde_json::from_str(&dump_text(input, DumpLayout::Json)).unwrap()
}

const TESTDATA: [&str; 8] = [
    "demo-02.00l.hpcrun",
    "demo-01.98b.hpcrun",
    "demo-02.00b.hpcrun",
    "demo-02.00b-no-aux.hpcrun",
    "demo-03.00b.hpcrun",
    "demo-04.00b.hpcrun",
    "demo.hpctrace",
    "demo-datacentric.hpctrace",
];

#[test]
fn migration_reports_what_it_dropped_and_writes_a_valid_04_00_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("m.hpcrun");
    let input = testdata("demo-02.00l.hpcrun");
    let report = inspect::rewrite(&input.source(), &out, &RewriteOptions::to("04.00")).unwrap();
    assert!(report.dropped.iter().any(|d| d.contains("vaddr")));
    let migrated = File::open(&out);
    assert!(validate(&migrated.source()).findings.is_empty());
    let info = info(&migrated.source());
    assert_eq!(info.version, "04.00b");
    assert_eq!(info.details["values"], json!(6));
    assert!(matches!(
        inspect::rewrite(&input.source(), &out, &RewriteOptions::to("03.00")),
        Err(Error::Usage(_))
    ));
}

#[test]
fn every_testdata_file_rewrites_identically_and_dumps_flat_records() {
    let dir = tempfile::tempdir().unwrap();
    for name in TESTDATA {
        let input = testdata(name);
        let source = input.source();
        assert!(validate(&source).findings.is_empty());
        let out = dir.path().join(name);
        let report = inspect::rewrite(&source, &out, &RewriteOptions::default()).unwrap();
        assert!(report.dropped.is_empty());
        assert_eq!(std::fs::read(&out).unwrap(), input.bytes, "{name}");
        let doc = dump_value(&source);
        assert!(doc["header"]["version"].is_string(), "{name}");
        for line in dump_text(&source, DumpLayout::Ndjson).lines().skip(1) {
            assert!(line.starts_with("{\"record\":"), "{name}: {line}");
        }
        for r in doc["records"].as_array().unwrap() {
            let r = r.as_object().unwrap();
            // Flat: no record holds an object, and keys are snake_case.
            assert!(r.values().all(|v| !v.is_object()), "{name}: {r:?}");
            assert!(
                r.keys()
                    .all(|k| !k.contains(|c: char| c.is_ascii_uppercase() || c == ' '))
            );
        }
        let info = info(&source);
        assert!(info.details.keys().all(|k| !k.contains(' ')), "{name}");
    }
    let doc = dump_value(&testdata("demo-04.00b.hpcrun").source());
    let records = doc["records"].as_array().unwrap();
    let values: Vec<&Value> = records.iter().filter(|r| r["record"] == "value").collect();
    assert_eq!(values[3]["value"], json!(0.035));
    let node = records.iter().find(|r| r["record"] == "node").unwrap();
    assert!(node["parent"].is_null() || node["parent"].is_number());
    let tuple: Vec<&Value> = records
        .iter()
        .filter(|r| r["record"] == "id_tuple_entry")
        .collect();
    assert!(
        tuple
            .iter()
            .all(|t| t["kind"].is_string() && t["interpretation"].is_string())
    );
    let metric = records.iter().find(|r| r["record"] == "metric").unwrap();
    assert!(metric["kind"].is_string() && metric["value_format"].is_string());
}

#[test]
fn trailing_bytes_are_a_finding_and_the_last_dump_record() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "demo-04.00b.hpcrun",
        "demo-02.00l.hpcrun",
        "demo-02.00b.hpcrun",
    ] {
        let mut data = std::fs::read(testdata_path(name)).unwrap();
        let end = data.len() as u64;
        data.extend_from_slice(&[0x55; 300]);
        let path = dir.path().join(name);
        std::fs::write(&path, &data).unwrap();
        let input = File::open(&path);
        let source = input.source();
        let validated = validate(&source);
        assert_eq!(
            validated.findings,
            [Finding::TrailingData {
                offset: end,
                size: 300
            }],
            "{name}"
        );
        let doc = dump_value(&source);
        let last = doc["records"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(
            last,
            json!({"record": "trailing_data", "offset": end, "size": 300})
        );
        let out = dir.path().join(format!("out-{name}"));
        let report = inspect::rewrite(&source, &out, &RewriteOptions::default()).unwrap();
        assert!(report.dropped[0].contains("300 bytes"), "{name}");
        assert_eq!(std::fs::read(&out).unwrap(), &data[..end as usize]);
    }
}

#[test]
fn a_measurement_folder_is_one_input() {
    let Some(hpctoolkit) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") else {
        return;
    };
    let dir = hpctoolkit.join("meas/loops-cputime-t.m");
    let input = folder_source(&dir);
    let info = info(&input);
    assert_eq!(info.version, "04.00b");
    assert!(info.details["program"].is_string());
    assert_eq!(info.details["threads"], json!(4));
    assert_eq!(info.details["profiles"], json!(4));
    assert_eq!(info.details["traces"], json!(4));
    assert!(info.details["duration_s"].as_f64().unwrap() > 0.0);
    assert!(!info.details["metrics"].as_array().unwrap().is_empty());
    assert!(validate(&input).findings.is_empty());
    let doc = dump_value(&input);
    assert_eq!(doc["header"]["files"], json!(8));
    let records = doc["records"].as_array().unwrap();
    let files: Vec<&Value> = records.iter().filter(|r| r["record"] == "file").collect();
    assert_eq!(files.len(), 8);
    assert_eq!(files[1]["kind"], "trace");
    assert!(
        records
            .iter()
            .filter(|r| r["record"] != "file")
            .all(|r| r["file"].is_u64())
    );
    let samples = records.iter().filter(|r| r["record"] == "sample").count() as u64;
    assert_eq!(json!(samples), info.details["trace_records"]);
}
