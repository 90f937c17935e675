//! Round trips through the writers: every corpus database rewrites to the same decoded content
//! (and a second rewrite is byte-identical); proptest over synthetic databases; the streaming
//! transposition agrees with the in-memory one whatever the budget.
#![allow(clippy::unwrap_used)] // test helpers may unwrap

use std::io::Cursor;

use profcodec_hpctoolkit::model::{Database, DatabaseBuilder};
use profcodec_hpctoolkit::write::synthetic::{Synthetic, SyntheticConfig};
use profcodec_hpctoolkit::write::{
    TransposeOptions, transpose, write_context_major, write_meta, write_profiles, write_traces,
};
use profcodec_hpctoolkit::{Error, read};
use proptest::prelude::*;

/// The four files of a database, in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Files {
    meta: Vec<u8>,
    profile: Vec<u8>,
    cct: Option<Vec<u8>>,
    trace: Option<Vec<u8>>,
}

fn write(db: &Database) -> Files {
    let mut meta = Vec::new();
    write_meta(&db.meta, &mut meta).unwrap();
    let profile = write_profiles(&db.profiles, Cursor::new(Vec::new()))
        .unwrap()
        .into_inner();
    let cct = db.context_major.as_ref().map(|c| {
        write_context_major(c, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner()
    });
    let trace = db.traces.as_ref().map(|t| {
        write_traces(t, Cursor::new(Vec::new()))
            .unwrap()
            .into_inner()
    });
    Files {
        meta,
        profile,
        cct,
        trace,
    }
}

fn read_back(files: &Files) -> Database {
    let db = read::Database::from_parts(
        files.meta.as_slice(),
        Some(files.profile.as_slice()),
        files.cct.as_deref(),
        files.trace.as_deref(),
    )
    .unwrap();
    db.validate().unwrap();
    Database::from_read(&db).unwrap()
}

/// Writes `db`, reads it back, and checks the content and the second write's bytes.
fn round_trip(db: &Database) -> Database {
    let first = write(db);
    let back = read_back(&first);
    assert_eq!(back.meta, db.meta.normalized(), "meta.db content");
    assert_eq!(back.profiles, db.profiles, "profile.db content");
    assert_eq!(back.context_major, db.context_major, "cct.db content");
    assert_eq!(back.traces, db.traces, "trace.db content");
    let second = write(&back);
    assert!(second == first, "a second write is byte-identical");
    back
}

#[test]
fn corpus_databases_rewrite_to_the_same_content() {
    let Some(dir) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    else {
        println!("corpus not found; corpus rewrite test not run");
        return;
    };
    let mut dbs: Vec<_> = std::fs::read_dir(dir.join("dbase"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dbs.push(dir.join("hatchet-gamess"));
    dbs.sort();
    for path in dbs {
        let original = read::Database::open(&path).unwrap();
        let model = Database::from_read(&original).unwrap();
        round_trip(&model);
        // The file kinds the original had are all written again.
        assert_eq!(model.context_major.is_some(), path.join("cct.db").exists());
        assert_eq!(model.traces.is_some(), path.join("trace.db").exists());
        // cct.db is what transposing profile.db gives (hpcprof's own relation between the two).
        let n_ctxs = model
            .context_major
            .as_ref()
            .map(|c| c.contexts.len() as u32);
        if let Some(cct) = &model.context_major {
            assert_eq!(
                &model.transpose(n_ctxs),
                cct,
                "{}: cct.db is profile.db transposed",
                path.display()
            );
        }
        println!("{}: rewritten", path.display());
    }
}

#[test]
fn write_database_writes_a_directory() {
    let db = Synthetic::new(SyntheticConfig::default()).to_model();
    let dir = std::env::temp_dir().join(format!("profcodec-hpctoolkit-rt-{}", std::process::id()));
    profcodec_hpctoolkit::write::write_database(&db, &dir).unwrap();
    let back = Database::from_read(&read::Database::open(&dir).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(back.meta, db.meta.normalized());
    assert_eq!(back.profiles, db.profiles);
    assert_eq!(back.context_major, db.context_major);
    assert_eq!(back.traces, db.traces);
}

#[test]
fn builder_example_round_trips() {
    let mut b = DatabaseBuilder::new("t");
    let cpu = b.add_cputime_metric();
    let m = b.add_module("/bin/x");
    let f = b.add_function(profcodec_hpctoolkit::model::Function {
        name: Some("main".into()),
        module: Some(m),
        ..Default::default()
    });
    let e = b.add_entry_point(
        profcodec_hpctoolkit::model::EntryPointKind::MAIN_THREAD,
        "main thread",
    );
    let c = b.add_function_context(
        profcodec_hpctoolkit::model::Parent::EntryPoint(e),
        profcodec_hpctoolkit::model::Relation::CALL,
        f,
    );
    let p = b.add_profile(vec![]);
    let id = b.ctx_id(c);
    b.set_value(p, id, cpu.execution, 2.5);
    b.add_trace(
        p,
        vec![profcodec_hpctoolkit::model::TraceElement {
            timestamp: 5,
            ctx_id: id,
        }],
    );
    let db = b.finish();
    assert_eq!(db.profiles[0].values.get(id, cpu.execution), Some(2.5));
    round_trip(&db);
}

/// The writers refuse what readers would reject, with `InvalidInput`.
#[test]
fn writers_refuse_broken_models() {
    use profcodec_hpctoolkit::model::{
        ContextStart, MetricValue, Parent, Profile, ProfileValues, Trace, TraceElement, Traces,
    };
    let invalid = |r: std::io::Result<Cursor<Vec<u8>>>| {
        assert_eq!(r.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    };
    let value = |metric_id| MetricValue {
        metric_id,
        value: 1.0,
    };
    let profile = |contexts: Vec<ContextStart>, values| Profile {
        flags: 0,
        id_tuple: Some(vec![]),
        values: ProfileValues { contexts, values },
    };
    let start = |ctx_id, start| ContextStart { ctx_id, start };
    // Metrics out of order within a context; contexts out of order; an empty context.
    for p in [
        profile(vec![start(1, 0)], vec![value(2), value(1)]),
        profile(vec![start(2, 0), start(1, 1)], vec![value(0), value(0)]),
        profile(vec![start(1, 0), start(2, 0)], vec![value(0)]),
        profile(vec![], vec![value(0)]),
    ] {
        invalid(write_profiles(&[p], Cursor::new(Vec::new())));
    }
    let traces = Traces::from_traces(vec![Trace {
        prof_index: 1,
        elements: vec![
            TraceElement {
                timestamp: 5,
                ctx_id: 1,
            },
            TraceElement {
                timestamp: 4,
                ctx_id: 1,
            },
        ],
    }]);
    invalid(write_traces(&traces, Cursor::new(Vec::new())));
    // A stored time range that leaves elements out (found by the hpctoolkit_model fuzz target).
    let mut traces = Traces::from_traces(vec![Trace {
        prof_index: 1,
        elements: vec![TraceElement {
            timestamp: 5,
            ctx_id: 1,
        }],
    }]);
    traces.min_timestamp = 6;
    invalid(write_traces(&traces, Cursor::new(Vec::new())));
    // ctxId 0 (the global context) or a ctxId used twice in the tree (found by the fuzz target).
    for id in [0, 2] {
        let mut db = Synthetic::new(SyntheticConfig::default()).to_model();
        db.meta.contexts[0].ctx_id = id;
        db.meta.contexts[1].ctx_id = 2;
        let err = write_meta(&db.meta, &mut Vec::new()).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput, "ctxId {id}");
    }
    // A context whose parent comes after it.
    let mut db = Synthetic::new(SyntheticConfig::default()).to_model();
    db.meta.contexts[0].parent = Parent::Context(profcodec_hpctoolkit::model::ContextHandle(5));
    let err = write_meta(&db.meta, &mut Vec::new()).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

/// Contexts with more metrics than the counting sort handles take the sorting path.
#[test]
fn transposition_of_many_metrics_matches() {
    let config = SyntheticConfig {
        profiles: 3,
        contexts: 30,
        metrics: 25,
        trace_elems: 0,
        trace_run: 1,
        samples: 0,
        seed: 9,
    };
    let db = Synthetic::new(config).to_model();
    let files = write(&db);
    let n_ctxs = db.context_major.as_ref().map(|c| c.contexts.len() as u32);
    let options = TransposeOptions {
        memory_budget: 300,
        n_ctxs,
    };
    let (cct, _) = transpose(
        Cursor::new(&files.profile),
        Cursor::new(Vec::new()),
        &options,
    )
    .unwrap();
    assert_eq!(Some(cct.into_inner()), files.cct);
}

/// Damaged profile.db files make `transpose` answer an error (or a cct.db), never panic.
#[test]
fn transposition_of_damaged_input_never_panics() {
    let config = SyntheticConfig {
        profiles: 3,
        contexts: 40,
        metrics: 2,
        trace_elems: 0,
        trace_run: 1,
        samples: 0,
        seed: 5,
    };
    let files = write(&Synthetic::new(config).to_model());
    let options = TransposeOptions {
        memory_budget: 256,
        n_ctxs: None,
    };
    let run = |data: &[u8]| {
        let _ = transpose(Cursor::new(data), Cursor::new(Vec::new()), &options);
    };
    for cut in profcodec_testkit::hostile::truncation_points(files.profile.len()) {
        run(&files.profile[..cut]);
    }
    for mutant in profcodec_testkit::hostile::bit_flips(&files.profile, 2000) {
        run(&mutant);
    }
}

fn config() -> impl Strategy<Value = SyntheticConfig> {
    (0u32..6, 1u32..80, 1u16..4, 0u64..20, 0u32..40, any::<u64>()).prop_map(
        |(profiles, contexts, metrics, trace_elems, samples, seed)| SyntheticConfig {
            profiles,
            contexts,
            metrics,
            trace_elems,
            trace_run: 1,
            samples,
            seed,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// model -> bytes -> model over generated databases, then bytes again.
    #[test]
    fn generated_databases_round_trip(config in config()) {
        round_trip(&Synthetic::new(config).to_model());
    }

    /// The streaming transposition of a written profile.db equals the in-memory one, for any
    /// budget (down to one value, which forces a pass per context).
    #[test]
    fn transposition_within_a_budget_matches(config in config(), budget in 1usize..4096) {
        let db = Synthetic::new(config).to_model();
        let files = write(&db);
        let n_ctxs = db.context_major.as_ref().map(|c| c.contexts.len() as u32);
        let options = TransposeOptions { memory_budget: budget, n_ctxs };
        let (cct, stats) = transpose(Cursor::new(&files.profile), Cursor::new(Vec::new()), &options).unwrap();
        prop_assert_eq!(Some(cct.into_inner()), files.cct);
        prop_assert!(stats.passes >= 1 || n_ctxs == Some(0));
    }

    /// The streamed directory (profiles one by one, cct.db transposed from the file) decodes to
    /// the in-memory model.
    #[test]
    fn streamed_directory_matches_the_model(config in config()) {
        let synthetic = Synthetic::new(config);
        let dir = std::env::temp_dir().join(format!(
            "profcodec-hpctoolkit-stream-{}-{}", std::process::id(), config.seed
        ));
        synthetic.write_dir(&dir, 1024).unwrap();
        let back = read::Database::open(&dir).unwrap();
        back.validate().unwrap();
        let back = Database::from_read(&back).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let model = synthetic.to_model();
        prop_assert_eq!(back.meta, model.meta.normalized());
        prop_assert_eq!(back.profiles, model.profiles);
        prop_assert_eq!(back.context_major, model.context_major);
        prop_assert_eq!(back.traces, model.traces);
    }
}

/// `Database::validate` follows every trace element to meta.db: a ctxId meta.db
/// does not list, or a profIndex beyond profile.db, is a `Dangling` error at its offset; ctxId 0
/// (idle samples) is fine.
#[test]
fn trace_elements_must_name_meta_contexts_and_profiles() {
    let mut db = Synthetic::new(SyntheticConfig::default()).to_model();
    let open = |files: &Files| {
        read::Database::from_parts(
            files.meta.clone(),
            Some(files.profile.clone()),
            files.cct.clone(),
            files.trace.clone(),
        )
        .unwrap()
    };
    let traces = db.traces.as_mut().expect("synthetic traces");
    traces.traces[0].elements[0].ctx_id = 0;
    open(&write(&db))
        .validate()
        .expect("ctxId 0 is an idle sample");

    let traces = db.traces.as_mut().expect("synthetic traces");
    let unknown = 9_999_999;
    traces.traces[1].elements[3].ctx_id = unknown;
    let files = write(&db);
    let e = open(&files).validate().expect_err("unknown ctxId");
    assert!(
        matches!(
            e,
            Error::Dangling {
                field: "Elem.ctxId",
                found: 9_999_999,
                ..
            }
        ),
        "{e}"
    );
    let trace = files.trace.as_ref().expect("trace.db");
    let at = e.offset().expect("offset") as usize;
    assert_eq!(trace[at..at + 4], unknown.to_le_bytes());

    let traces = db.traces.as_mut().expect("synthetic traces");
    traces.traces[1].elements[3].ctx_id = 0;
    traces.traces[2].prof_index = 10_000;
    let e = open(&write(&db)).validate().expect_err("unknown profile");
    assert!(
        matches!(
            e,
            Error::Dangling {
                field: "CTH.profIndex",
                ..
            }
        ),
        "{e}"
    );
}

/// `Database::context_costs` reads the execution (inclusive) and function (exclusive) sums of
/// the summary profile; `metric_by_name` accepts the name with or without its unit.
#[test]
fn context_costs_are_the_summary_sums() {
    use profcodec_hpctoolkit::model::{EntryPointKind, Function, Identifier, Parent, Relation};
    let mut b = DatabaseBuilder::new("costs");
    let cpu = b.add_cputime_metric();
    let f = b.add_function(Function {
        name: Some("f".into()),
        ..Function::default()
    });
    let entry = b.add_entry_point(EntryPointKind::MAIN_THREAD, "main thread");
    let ctx = b.add_function_context(Parent::EntryPoint(entry), Relation::CALL, f);
    let id = b.ctx_id(ctx);
    for thread in 0..2 {
        let p = b.add_profile(vec![Identifier {
            kind: 3,
            logical_id: thread,
            ..Identifier::default()
        }]);
        b.set_value(p, id, cpu.execution, 1.5);
        b.set_value(p, id, cpu.function, 0.25);
    }
    let files = write(&b.finish());
    let db = read::Database::from_parts(files.meta, Some(files.profile), files.cct, files.trace)
        .unwrap();
    let meta = db.meta();
    let m = meta
        .metric_by_name("CPUTIME")
        .unwrap()
        .expect("by bare name");
    assert_eq!(m.unit(), Some("sec"));
    assert_eq!(
        meta.metric_by_name("CPUTIME (sec)")
            .unwrap()
            .map(|m| m.index),
        Some(m.index)
    );
    assert!(meta.metric_by_name("REALTIME").unwrap().is_none());
    let costs = db.context_costs("CPUTIME").unwrap().expect("costs");
    let c = costs.iter().find(|c| c.ctx_id == id).expect("the context");
    assert_eq!((c.inclusive, c.exclusive), (3.0, 0.5));
    assert!(db.context_costs("nothing").unwrap().is_none());
}

/// The meta.db writer writes a shared string once, and refuses a model whose strings would
/// expand beyond what the reader accepts (64 times the file plus 1 MiB), so that whatever it
/// writes validates.
#[test]
fn the_meta_writer_refuses_strings_the_reader_would_refuse() {
    use profcodec_hpctoolkit::model::{Meta, SourceFile};
    let model = |n: usize| Meta {
        files: (0..n)
            .map(|_| SourceFile {
                flags: 0,
                path: "p".repeat(20_000),
            })
            .collect(),
        ..Meta::default()
    };
    let e = write_meta(&model(600), &mut Vec::new()).expect_err("12 MB of paths from 30 KB");
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    let mut bytes = Vec::new();
    write_meta(&model(20), &mut bytes).expect("a few shared paths");
    read::MetaDb::parse(&bytes).unwrap().validate().unwrap();
    assert!(bytes.len() < 25_000, "the shared path is written once");
}
