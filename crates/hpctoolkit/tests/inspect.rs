//! The inspection verbs (feature `inspect`): `info`, `validate`, `dump` and `rewrite` over
//! databases written here (and over the corpus when it is present), as the umbrella `profcodec`
//! calls them; and the profile model of such a database with every profile read, which is what
//! the umbrella's `to_profile` chooses for a database this small.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use profcodec_common::inspect::{
    Dump, DumpLayout, DumpOptions, Error, RewriteOptions, Source, dump_to_string,
};
use profcodec_hpctoolkit::inspect;
use profcodec_hpctoolkit::model::{
    ContextStart, DatabaseBuilder, EntryPointKind, Function, Identifier, MetricValue, Parent,
    Relation, TraceElement,
};
use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_hpctoolkit::write::{ProfileDbWriter, ProfileInfo, write_database};
use serde_json::Value;

/// A small database: two threads of one rank, a call chain `depth` deep below `main`, one
/// function name shared by two functions, traces.
fn database(dir: &Path, depth: usize) {
    let mut b = DatabaseBuilder::new("demo");
    let cputime = b.add_cputime_metric();
    let module = b.add_module("/bin/demo");
    let file = b.add_file("/src/demo.c");
    let main = b.add_function(Function {
        name: Some("main".into()),
        module: Some(module),
        file: Some(file),
        line: 3,
        ..Function::default()
    });
    let work = b.add_function(Function {
        name: Some("work".into()),
        module: Some(module),
        offset: 64,
        ..Function::default()
    });
    let _twin = b.add_function(Function {
        name: Some("work".into()),
        module: Some(module),
        offset: 128,
        ..Function::default()
    });
    let entry = b.add_entry_point(EntryPointKind::MAIN_THREAD, "main thread");
    let mut ctx = b.add_function_context(Parent::EntryPoint(entry), Relation::CALL, main);
    let top = b.ctx_id(ctx);
    for _ in 0..depth {
        ctx = b.add_function_context(Parent::Context(ctx), Relation::CALL, work);
    }
    let leaf = b.ctx_id(ctx);
    for thread in 0..2u32 {
        let p = b.add_profile(vec![
            Identifier {
                kind: 2,
                logical_id: 0,
                ..Identifier::default()
            },
            Identifier {
                kind: 3,
                logical_id: thread,
                ..Identifier::default()
            },
        ]);
        b.set_value(p, leaf, cputime.point, 1.5 + f64::from(thread));
        b.set_value(p, top, cputime.execution, 2.5);
        b.add_trace(
            p,
            vec![
                TraceElement {
                    timestamp: 1_000_000_000,
                    ctx_id: top,
                },
                TraceElement {
                    timestamp: 3_500_000_000,
                    ctx_id: leaf,
                },
            ],
        );
    }
    write_database(&b.finish(), dir).expect("write database");
}

/// An input as the umbrella passes it: a database directory (no bytes of its own; its files
/// read whole), or a `.db` file and its bytes.
struct Input {
    path: PathBuf,
    bytes: Vec<u8>,
}

impl Input {
    fn source(&self) -> Source<'_> {
        Source::file(&self.path, &self.bytes)
    }
}

fn open(path: &Path) -> Input {
    let bytes = if path.is_dir() {
        Vec::new()
    } else {
        std::fs::read(path).expect("read")
    };
    Input {
        path: path.to_path_buf(),
        bytes,
    }
}

/// The dump of `input` in `layout` (compact), as text.
fn dump_text(input: &Input, layout: DumpLayout) -> String {
    let options = DumpOptions {
        layout,
        pretty: false,
    };
    dump_to_string(options, |d| inspect::dump(&input.source(), d)).expect("dump")
}

/// The whole dump of `input` as one JSON value (`{"header": ..., "records": [...]}`).
fn dump_value(input: &Input) -> Value {
    serde_json::from_str(&dump_text(input, DumpLayout::Json)).expect("a dump is JSON")
}

/// The hpctoolkit folder of the corpus, when it is available.
fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
}

fn records<'v>(dump: &'v Value, kind: &str) -> Vec<&'v Value> {
    dump["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|r| r["record"] == kind)
        .collect()
}

#[test]
fn dump_streams_flat_records_with_strings_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    database(dir.path(), 3);
    let dump = dump_value(&open(dir.path()));
    assert_eq!(dump["header"]["title"], "demo");
    assert_eq!(dump["header"]["min_timestamp_ns"], 1_000_000_000u64);
    // Every record starts with its kind (checked on the text: a parsed Map may sort its keys).
    let text = dump_text(&open(dir.path()), DumpLayout::Ndjson);
    for line in text.lines() {
        assert!(line.starts_with("{\"record\":\""), "{line}");
    }
    for r in dump["records"].as_array().expect("records") {
        for v in r.as_object().expect("object").values() {
            // Flat: at most an array of scalars, or the id tuple's array of flat objects.
            if let Some(items) = v.as_array() {
                assert!(items.iter().all(|i| !i.is_array()), "{r}");
            }
            assert!(!v.is_object(), "{r}");
        }
    }
    // "work" is one string used by two functions: written once, referred to by id.
    let strings = records(&dump, "string");
    let work: Vec<_> = strings.iter().filter(|s| s["text"] == "work").collect();
    assert_eq!(work.len(), 1);
    let functions = records(&dump, "function");
    assert_eq!(functions[1]["name"], work[0]["id"]);
    assert_eq!(functions[2]["name"], work[0]["id"]);
    // Every context as a record naming its parent and depth: the global context, the entry
    // point, then the chain below it.
    let contexts = records(&dump, "context");
    assert_eq!(contexts.len(), 6);
    assert_eq!(contexts[0]["kind"], "global");
    assert_eq!(contexts[0]["ctx_id"], 0);
    assert_eq!(contexts[0]["depth"], 0);
    assert!(contexts[0]["parent"].is_null());
    assert_eq!(contexts[1]["kind"], "entry_point");
    assert_eq!(contexts[1]["entry_point"], "main_thread");
    for (depth, pair) in contexts.windows(2).enumerate() {
        assert_eq!(pair[1]["parent"], pair[0]["ctx_id"]);
        assert_eq!(pair[1]["depth"], depth + 1);
    }
    assert_eq!(contexts[2]["kind"], "context");
    assert_eq!(contexts[2]["relation"], "call");
    assert_eq!(contexts[2]["lexical_type"], "function");
    let info = inspect::info(&open(dir.path()).source()).expect("info");
    assert_eq!(info.details["contexts"], contexts.len());
    assert_eq!(info.details["elided_contexts"], 0);
    // Identifier kinds by name; values as parallel arrays.
    let profiles = records(&dump, "profile");
    assert_eq!(profiles[0]["is_summary"], true);
    assert_eq!(profiles[1]["id_tuple"][0]["kind"], "rank");
    assert_eq!(profiles[2]["id_tuple"][1]["kind"], "thread");
    assert_eq!(profiles[2]["id_tuple"][1]["logical_id"], 1);
    let values = records(&dump, "profile_values");
    assert!(values.iter().any(|v| v["values"][0] == 2.5));
    assert_eq!(records(&dump, "samples").len(), 2);
}

/// The dump of a context chain 1024 deep stays proportional to the database (the nested dump
/// printed 29.7 MB of indentation for 33 KB).
#[test]
fn a_deep_context_chain_dumps_in_linear_size() {
    let dir = tempfile::tempdir().expect("tempdir");
    database(dir.path(), 1024);
    let input: u64 = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").metadata().expect("metadata").len())
        .sum();
    let mut out = Vec::new();
    let mut dump = Dump::new(
        &mut out,
        DumpOptions {
            layout: DumpLayout::Json,
            pretty: true,
        },
    );
    inspect::dump(&open(dir.path()).source(), &mut dump).expect("dump");
    dump.finish().expect("finish");
    let deepest = out
        .split(|&b| b == b'\n')
        .map(|l| l.iter().take_while(|&&b| b == b' ').count())
        .max()
        .unwrap_or(0);
    assert!(deepest <= 12, "indentation grows to {deepest}");
    assert!(
        (out.len() as u64) < 12 * input,
        "{} bytes of pretty dump from {input} bytes",
        out.len()
    );
}

#[test]
fn info_summarises_first_in_snake_case() {
    let dir = tempfile::tempdir().expect("tempdir");
    database(dir.path(), 2);
    let info = inspect::info(&open(dir.path()).source()).expect("info");
    let keys: Vec<&str> = info.details.keys().map(String::as_str).collect();
    // The summary comes first where serde_json keeps insertion order (its `preserve_order`
    // feature); otherwise the Map sorts its keys whatever the codec does.
    let mut probe = serde_json::Map::new();
    probe.insert("b".into(), Value::Null);
    probe.insert("a".into(), Value::Null);
    if probe.keys().next().is_some_and(|k| k == "b") {
        assert_eq!(keys[..3], ["title", "time_span_s", "profiles"]);
    }
    for k in &keys {
        assert!(
            k.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{k}"
        );
    }
    assert_eq!(info.details["time_span_s"], 2.5);
    assert_eq!(info.details["profiles"], 2);
    assert_eq!(info.details["ranks"], 1);
    assert_eq!(info.details["threads"], 2);
    assert_eq!(info.details["metrics"][0], "CPUTIME (sec)");
    assert_eq!(info.version, "4.0");
}

#[test]
fn validate_follows_trace_samples_to_meta_db() {
    let dir = tempfile::tempdir().expect("tempdir");
    database(dir.path(), 2);
    let validated = inspect::validate(&open(dir.path()).source()).expect("valid");
    assert!(validated.findings.is_empty());
    // A sample on a ctxId meta.db does not list.
    let path = dir.path().join("trace.db");
    let mut trace = std::fs::read(&path).expect("trace.db");
    let view = profcodec_hpctoolkit::TraceDb::parse(&trace).expect("trace.db");
    let at = view.trace(0).expect("line").p_start as usize + 8;
    trace[at..at + 4].copy_from_slice(&77_777u32.to_le_bytes());
    std::fs::write(&path, &trace).expect("write");
    match inspect::validate(&open(dir.path()).source()) {
        Err(Error::Invalid { message, offset }) => {
            assert_eq!(offset, Some(at as u64));
            assert!(message.contains("Elem.ctxId"), "{message}");
        }
        other => panic!("expected an invalid database, got {other:?}"),
    }
}

/// Every file of `from` but the four .db files is in `to`, byte for byte.
fn assert_others_copied(from: &Path, to: &Path, copied: &[String]) {
    let mut expected = Vec::new();
    let mut pending = vec![from.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for e in std::fs::read_dir(&dir).expect("dir") {
            let path = e.expect("entry").path();
            let rel = path.strip_prefix(from).expect("below").to_path_buf();
            if path.is_dir() {
                pending.push(path);
            } else if !(rel.extension().is_some_and(|x| x == "db")
                && rel.parent() == Some(Path::new("")))
            {
                assert_eq!(
                    std::fs::read(&path).expect("input file"),
                    std::fs::read(to.join(&rel)).expect("copied file"),
                    "{}",
                    rel.display()
                );
                expected.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    expected.sort();
    assert_eq!(copied, expected);
}

#[test]
fn rewrite_carries_the_other_files_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("in.d");
    database(&db, 2);
    std::fs::create_dir_all(db.join("metrics")).expect("mkdir");
    std::fs::create_dir_all(db.join("src/usr/include")).expect("mkdir");
    std::fs::write(db.join("metrics/default.yaml"), "# hpcviewer metrics\n").expect("write");
    std::fs::write(db.join("src/usr/include/demo.h"), [0u8, 1, 2, 255]).expect("write");
    std::fs::write(db.join("FORMATS.md"), "formats").expect("write");
    let out = dir.path().join("out.d");
    let report =
        inspect::rewrite(&open(&db).source(), &out, &RewriteOptions::default()).expect("rewrite");
    assert_eq!(
        report.copied,
        [
            "FORMATS.md",
            "metrics/default.yaml",
            "src/usr/include/demo.h"
        ]
    );
    assert!(report.dropped.is_empty());
    assert_others_copied(&db, &out, &report.copied);
    for name in ["meta.db", "profile.db", "cct.db", "trace.db"] {
        assert_eq!(
            std::fs::read(db.join(name)).expect("in"),
            std::fs::read(out.join(name)).expect("out"),
            "profcodec's own database rewrites byte-identically: {name}"
        );
    }
}

#[test]
fn rewrite_of_corpus_databases_keeps_their_other_files() {
    let Some(root) = corpus() else { return };
    for db in [root.join("dbase/small.d"), root.join("hatchet-gamess")] {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("out.d");
        let report = inspect::rewrite(&open(&db).source(), &out, &RewriteOptions::default())
            .expect("rewrite");
        assert!(
            report.copied.iter().any(|c| c.starts_with("metrics/")),
            "{report:?}"
        );
        assert_others_copied(&db, &out, &report.copied);
        inspect::validate(&open(&out).source()).expect("the rewrite validates");
    }
}

/// A profile.db whose profiles all point at one block: `dump` stops with the overlap error
/// before writing any values (it once printed the block once per profile).
#[test]
fn dump_of_aliased_blocks_stops_before_the_values() {
    let n = 2000u32;
    let mut infos = vec![ProfileInfo {
        flags: 1,
        id_tuple: None,
    }];
    infos.extend((1..n).map(|_| ProfileInfo {
        flags: 0,
        id_tuple: Some(&[]),
    }));
    let mut w = ProfileDbWriter::new(Cursor::new(Vec::new()), &infos).expect("layout");
    let contexts: Vec<ContextStart> = (0..n)
        .map(|i| ContextStart {
            ctx_id: i + 1,
            start: i.into(),
        })
        .collect();
    let values: Vec<MetricValue> = (0..n)
        .map(|_| MetricValue {
            metric_id: 0,
            value: 1.0,
        })
        .collect();
    w.write_profile(1, &contexts, &values).expect("block");
    let mut bytes = w.finish().expect("finish").into_inner();
    let view = profcodec_hpctoolkit::ProfileDb::parse(&bytes).expect("parse");
    let first = view.profile(1).expect("profile 1").offset as usize;
    let offsets: Vec<usize> = (2..n)
        .map(|i| view.profile(i).expect("profile").offset as usize)
        .collect();
    let block: [u8; 0x20] = bytes[first..first + 0x20].try_into().expect("PSVB");
    for at in offsets {
        bytes[at..at + 0x20].copy_from_slice(&block);
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("profile.db");
    std::fs::write(&path, &bytes).expect("write");
    let mut out = Vec::new();
    let mut dump = Dump::new(
        &mut out,
        DumpOptions {
            layout: DumpLayout::Ndjson,
            pretty: false,
        },
    );
    let e = inspect::dump(&open(&path).source(), &mut dump).expect_err("aliased blocks");
    assert!(e.to_string().contains("data used twice"), "{e}");
    assert!(out.len() < 1024, "{} bytes dumped", out.len());
    let e = inspect::rewrite(
        &open(&path).source(),
        &dir.path().join("out.db"),
        &RewriteOptions::default(),
    )
    .expect_err("rewrite refuses too");
    assert!(e.to_string().contains("data used twice"), "{e}");
}

#[test]
fn profile_holds_the_tree_the_metrics_and_every_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    database(dir.path(), 3);
    let profile = profcodec_hpctoolkit::Database::open(dir.path())
        .expect("open")
        .to_profile(&ProfileOptions::new().profiles(Profiles::All))
        .expect("profile");
    let labels: Vec<String> = profile
        .contexts()
        .map(|(id, _)| profile.context_label(id))
        .collect();
    assert_eq!(labels, ["summary", "rank 0 thread 0", "rank 0 thread 1"]);
    let vt = profile.default_value_type().expect("a metric");
    assert_eq!(profile.value_type_name(vt), "CPUTIME");
    assert_eq!(
        profile.value_type(vt).unit,
        profcodec_profile::Unit::Seconds
    );
    // main thread -> main -> work -> work -> work
    assert_eq!(profile.nodes().len(), 5);
    let top = profile
        .top(&profcodec_profile::Query::new().limit(2))
        .expect("top");
    assert_eq!(top.rows[0].name, "work");
    assert_eq!(top.rows[0].self_value, 1.5 + 2.5);
    assert_eq!(top.total.self_value, 4.0);
    // Thread 1 alone.
    let thread1 =
        profcodec_profile::ContextFilter::Matching(vec![(profcodec_profile::IdKind::Thread, 1)]);
    let top = profile
        .top(&profcodec_profile::Query::new().contexts(thread1))
        .expect("top");
    assert_eq!(top.rows[0].self_value, 2.5);
}
