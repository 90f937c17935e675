//! One definition of a context across `info`, `dump` and the `contexts` table (features
//! `inspect` and `arrow`): the global context, meta.db's entry points and contexts, and the
//! elided contexts (ctxIds with values that meta.db leaves out). On every database of the
//! corpus and the one of testdata, `info`'s `contexts`, the `context` records of `dump` and the
//! table's rows are the same contexts with the same depths, and joining `values` with
//! `contexts` on `ctx_id` keeps every value.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use profcodec_common::inspect::{DumpLayout, DumpOptions, Source, dump_to_string};
use profcodec_common::source::ReadWhole;
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::inspect;
use profcodec_hpctoolkit::tables::TableReader;
use profcodec_tables::arrow_array::cast::AsArray;
use profcodec_tables::arrow_array::types::{Float64Type, UInt16Type, UInt32Type};
use profcodec_tables::arrow_array::{Array, RecordBatch};
use profcodec_tables::{ScanOptions, SourceTables};
use serde_json::Value;

/// The databases checked: testdata's, then the corpus's when it is present.
fn databases() -> Vec<PathBuf> {
    let mut dbs =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d")];
    if let Some(hpc) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(hpc.join("dbase"))
            .expect("dbase")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        dbs.extend(dirs);
        dbs.push(hpc.join("hatchet-gamess"));
    }
    dbs
}

fn source(dir: &Path) -> Source<'_> {
    Source {
        path: dir,
        bytes: &[],
        members: &ReadWhole,
    }
}

/// Every batch of `table`.
fn table(dir: &Path, name: &str) -> Vec<RecordBatch> {
    let tables = TableReader::open(&source(dir)).expect("tables");
    tables
        .batches(source(dir), name, &ScanOptions::new())
        .expect("table")
        .map(|b| b.expect("batch"))
        .collect()
}

/// A context as each output gives it: kind, parent, depth.
type Ctx = (String, Option<u64>, Option<u64>);

/// The `context` records of the dump, by ctxId.
fn dumped(dir: &Path) -> BTreeMap<u64, Ctx> {
    let options = DumpOptions {
        layout: DumpLayout::Ndjson,
        pretty: false,
    };
    let text = dump_to_string(options, |d| inspect::dump(&source(dir), d)).expect("dump");
    let mut out = BTreeMap::new();
    for line in text.lines().skip(1) {
        let r: Value = serde_json::from_str(line).expect("record");
        if r["record"] != "context" {
            continue;
        }
        let id = r["ctx_id"].as_u64().expect("ctx_id");
        let ctx = (
            r["kind"].as_str().expect("kind").to_owned(),
            r["parent"].as_u64(),
            r["depth"].as_u64(),
        );
        assert!(out.insert(id, ctx).is_none(), "ctx {id} dumped twice");
    }
    out
}

/// The rows of the `contexts` table, by ctxId.
fn tabled(dir: &Path) -> BTreeMap<u64, Ctx> {
    let mut out = BTreeMap::new();
    for b in table(dir, "contexts") {
        let col = |name: &str| b.column_by_name(name).expect(name).clone();
        let (ids, parents, depths) = (col("ctx_id"), col("parent"), col("depth"));
        let (ids, parents, depths) = (
            ids.as_primitive::<UInt32Type>(),
            parents.as_primitive::<UInt32Type>(),
            depths.as_primitive::<UInt32Type>(),
        );
        let kinds = col("kind");
        let kinds = kinds.as_string::<i32>();
        let opt = |a: &dyn Array, v: u32, i: usize| a.is_valid(i).then_some(u64::from(v));
        for i in 0..b.num_rows() {
            let ctx = (
                kinds.value(i).to_owned(),
                opt(parents, parents.value(i), i),
                opt(depths, depths.value(i), i),
            );
            let id = u64::from(ids.value(i));
            assert!(out.insert(id, ctx).is_none(), "ctx {id} has two rows");
        }
    }
    out
}

#[test]
fn info_dump_and_table_count_the_same_contexts_at_the_same_depths() {
    for dir in databases() {
        let what = dir.display().to_string();
        let info = inspect::info(&source(&dir)).expect("info");
        let dumped = dumped(&dir);
        let tabled = tabled(&dir);
        assert_eq!(
            info.details["contexts"],
            dumped.len(),
            "{what}: info vs dump"
        );
        assert_eq!(dumped, tabled, "{what}: dump vs table");
        // The parts add up: the global context, the tree, the elided contexts.
        let db = Database::open(&dir).expect("open");
        let elided = db.elided_contexts().expect("elided");
        assert_eq!(info.details["elided_contexts"], elided.len(), "{what}");
        assert_eq!(
            dumped.len(),
            1 + db.context_index().len() + elided.len(),
            "{what}"
        );
        let kind = |k: &str| dumped.values().filter(|c| c.0 == k).count();
        assert_eq!(kind("global"), 1, "{what}");
        assert_eq!(info.details["entry_points"], kind("entry_point"), "{what}");
        assert_eq!(kind("elided"), elided.len(), "{what}");
        // Depth: the global context 0, an entry point 1, a context its parent's + 1; an
        // elided context's place is unknown.
        for (id, (kind, parent, depth)) in &dumped {
            match kind.as_str() {
                "global" => assert_eq!((*id, *parent, *depth), (0, None, Some(0)), "{what}"),
                "elided" => {
                    assert_eq!((*parent, *depth), (None, None), "{what}: ctx {id}");
                    assert!(!db.context_index().contains(*id as u32), "{what}: ctx {id}");
                }
                _ => {
                    let parent = parent.expect("a parent");
                    let above = dumped[&parent].2.expect("the parent's depth");
                    assert_eq!(*depth, Some(above + 1), "{what}: ctx {id}");
                }
            }
        }
    }
}

#[test]
fn joining_values_with_contexts_drops_nothing() {
    for dir in databases() {
        let what = dir.display().to_string();
        let ids: HashSet<u32> = tabled(&dir).keys().map(|&id| id as u32).collect();
        let (mut rows, mut joined_rows) = (0usize, 0usize);
        let (mut total, mut joined) = (0f64, 0f64);
        for b in table(&dir, "values") {
            let ctx = b.column_by_name("ctx_id").expect("ctx_id");
            let ctx = ctx.as_primitive::<UInt32Type>();
            let value = b.column_by_name("value").expect("value");
            let value = value.as_primitive::<Float64Type>();
            for i in 0..b.num_rows() {
                rows += 1;
                total += value.value(i);
                if ids.contains(&ctx.value(i)) {
                    joined_rows += 1;
                    joined += value.value(i);
                }
            }
        }
        assert_eq!(joined_rows, rows, "{what}: values without a context row");
        assert_eq!(joined.to_bits(), total.to_bits(), "{what}");
    }
}

/// The hatchet GAMESS database: meta.db elides contexts that hold some of the largest
/// exclusive times (hpcprof leaves out instruction contexts below lines and loops); ranking
/// call paths through the `contexts` table keeps them, as rows of kind `elided`.
#[test]
fn gamess_elided_contexts_hold_large_values_and_have_rows() {
    let Some(hpc) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    else {
        return;
    };
    let dir = hpc.join("hatchet-gamess");
    let info = inspect::info(&source(&dir)).expect("info");
    let db = Database::open(&dir).expect("open");
    let tree = db.context_index().len();
    let elided = db.elided_contexts().expect("elided");
    assert!(!elided.is_empty());
    assert_eq!(info.details["contexts"], 1 + tree + elided.len());
    // The summary's sum of REALTIME at exactly each context (the `point` scope).
    let mut point = None;
    for b in table(&dir, "metrics") {
        let col = |name: &str| b.column_by_name(name).expect(name).clone();
        let (id, summary) = (col("metric_id"), col("summary"));
        let (name, scope, combine) = (col("name"), col("scope"), col("combine"));
        for i in 0..b.num_rows() {
            if summary.as_boolean().value(i)
                && name.as_string::<i32>().value(i) == "REALTIME (sec)"
                && scope.as_string::<i32>().value(i) == "point"
                && combine.as_string::<i32>().value(i) == "sum"
            {
                point = Some(id.as_primitive::<UInt16Type>().value(i));
            }
        }
    }
    let point = point.expect("REALTIME's point sum");
    let mut ranked = Vec::new();
    for b in table(&dir, "values") {
        let col = |name: &str| b.column_by_name(name).expect(name).clone();
        let (ctx, metric) = (col("ctx_id"), col("metric_id"));
        let (value, summary) = (col("value"), col("summary"));
        for i in 0..b.num_rows() {
            if summary.as_boolean().value(i)
                && metric.as_primitive::<UInt16Type>().value(i) == point
            {
                ranked.push((
                    value.as_primitive::<Float64Type>().value(i),
                    ctx.as_primitive::<UInt32Type>().value(i),
                ));
            }
        }
    }
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
    let tabled = tabled(&dir);
    let kinds: Vec<(String, &str)> = ranked[..3]
        .iter()
        .map(|(v, ctx)| (format!("{v:.1}"), tabled[&u64::from(*ctx)].0.as_str()))
        .collect();
    // The second and third largest are on elided contexts: an inner join without their rows
    // lost them.
    assert_eq!(kinds[1], ("795.9".to_owned(), "elided"), "{kinds:?}");
    assert_eq!(kinds[2], ("259.9".to_owned(), "elided"), "{kinds:?}");
    // The context the issue quoted, at the depth meta.db implies (the global context 0).
    assert_eq!(tabled[&18107].2, Some(26));
    assert_eq!(dumped(&dir)[&18107].2, Some(26));
}

/// A crafted profile.db with values at ctxIds far beyond meta.db's tree (the largest a u32
/// holds among them): each is an elided context, once, in `info`, `dump` and the table, and
/// the scan's memory is the elided ids, not the id range.
#[test]
fn values_at_ids_meta_db_lacks_are_elided_contexts_once() {
    use profcodec_hpctoolkit::model::{ContextStart, MetricValue};
    use profcodec_hpctoolkit::write::{ProfileDbWriter, ProfileInfo};

    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(demo.join("meta.db"), dir.path().join("meta.db")).expect("meta.db");
    let far = [3_000_000_000u32, u32::MAX];
    let infos = [
        ProfileInfo {
            flags: 1,
            id_tuple: None,
        },
        ProfileInfo {
            flags: 0,
            id_tuple: Some(&[]),
        },
    ];
    let mut w = ProfileDbWriter::new(std::io::Cursor::new(Vec::new()), &infos).expect("layout");
    // Both profiles name the same far ids (and the global context, which is not elided).
    let ids = [0, far[0], far[1]];
    let contexts: Vec<ContextStart> = (0..3)
        .map(|i| ContextStart {
            ctx_id: ids[i],
            start: i as u64,
        })
        .collect();
    let values: Vec<MetricValue> = (0..3)
        .map(|i| MetricValue {
            metric_id: 0,
            value: f64::from(i + 1),
        })
        .collect();
    w.write_profile(0, &contexts, &values).expect("summary");
    w.write_profile(1, &contexts, &values).expect("thread");
    let bytes = w.finish().expect("finish").into_inner();
    std::fs::write(dir.path().join("profile.db"), bytes).expect("profile.db");

    let dir = dir.path();
    let db = Database::open(dir).expect("open");
    assert_eq!(db.elided_contexts().expect("elided"), far);
    let info = inspect::info(&source(dir)).expect("info");
    assert_eq!(info.details["elided_contexts"], 2);
    let dumped = dumped(dir);
    assert_eq!(info.details["contexts"], dumped.len());
    assert_eq!(dumped, tabled(dir));
    for id in far {
        assert_eq!(dumped[&u64::from(id)], ("elided".to_owned(), None, None));
    }
}
