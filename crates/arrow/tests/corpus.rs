//! Every corpus file's tables agree with profcodec's own readers: row counts, sums per metric,
//! and a sample of rows (the first, middle and last of each table checked field by field).
//!
//! Runs on the shared corpus (`PROFCODEC_CORPUS`, or `../shared/corpus` beside the workspace).
//! Batches are read 100 rows at a time, so that every table of more than 100 rows is checked
//! across batch boundaries.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Float64Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use profcodec::tables::Input;
use profcodec_arrow::{ProfileTables, ScanOptions, Tables};
use profcodec_testkit::corpus::{corpus_dir, files_below};

/// One table, read whole, its columns by name as text or numbers.
struct Table {
    rows: usize,
    batches: Vec<RecordBatch>,
}

impl Table {
    fn read(tables: &dyn Tables, name: &str) -> Table {
        let def = tables.set().table(name).unwrap();
        let options = ScanOptions::new().batch_rows(100);
        let batches: Vec<RecordBatch> = tables
            .batches(name, &options)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        for b in &batches {
            assert!(
                b.num_rows() > 0 && b.num_rows() <= 100,
                "{name}: bounded batches"
            );
            assert_eq!(b.schema(), def.schema(), "{name}: the documented schema");
        }
        Table {
            rows: batches.iter().map(RecordBatch::num_rows).sum(),
            batches,
        }
    }

    /// Column `name` as numbers (null as NaN).
    fn f64s(&self, name: &str) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.rows);
        for b in &self.batches {
            let c = b.column_by_name(name).unwrap();
            for i in 0..c.len() {
                out.push(if c.is_null(i) {
                    f64::NAN
                } else {
                    match c.data_type() {
                        DataType::Float64 => c.as_primitive::<Float64Type>().value(i),
                        DataType::UInt8 => c.as_primitive::<UInt8Type>().value(i).into(),
                        DataType::UInt16 => c.as_primitive::<UInt16Type>().value(i).into(),
                        DataType::UInt32 => c.as_primitive::<UInt32Type>().value(i).into(),
                        DataType::UInt64 => c.as_primitive::<UInt64Type>().value(i) as f64,
                        DataType::Int32 => c.as_primitive::<Int32Type>().value(i).into(),
                        DataType::Int64 => c.as_primitive::<Int64Type>().value(i) as f64,
                        DataType::Boolean => f64::from(u8::from(c.as_boolean().value(i))),
                        other => panic!("{name} is {other}"),
                    }
                });
            }
        }
        out
    }

    /// Column `name` as integers (null as -1).
    fn ints(&self, name: &str) -> Vec<i64> {
        self.f64s(name)
            .into_iter()
            .map(|v| if v.is_nan() { -1 } else { v as i64 })
            .collect()
    }

    /// Column `name` as text.
    fn strs(&self, name: &str) -> Vec<Option<String>> {
        let mut out = Vec::with_capacity(self.rows);
        for b in &self.batches {
            let c = b.column_by_name(name).unwrap().as_string::<i32>();
            for i in 0..c.len() {
                out.push(c.is_valid(i).then(|| c.value(i).to_owned()));
            }
        }
        out
    }
}

/// The first, middle and last index of `n` rows.
fn sample(n: usize) -> Vec<usize> {
    let mut s = vec![0, n / 2, n.saturating_sub(1)];
    s.dedup();
    s.retain(|&i| i < n);
    s
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Sums `value` per key.
fn sums(keys: impl IntoIterator<Item = i64>, values: &[f64]) -> BTreeMap<i64, f64> {
    let mut out = BTreeMap::new();
    for (k, v) in keys.into_iter().zip(values) {
        *out.entry(k).or_insert(0.0) += v;
    }
    out
}

fn assert_sums(what: &str, got: &BTreeMap<i64, f64>, want: &BTreeMap<i64, f64>) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>(),
        "{what}: keys"
    );
    for (k, w) in want {
        assert!(close(got[k], *w), "{what}: {k}: {} vs {w}", got[k]);
    }
}

fn corpus() -> Option<PathBuf> {
    corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// The corpus's HPCToolkit databases.
fn databases(corpus: &Path) -> Vec<PathBuf> {
    let mut dbs = subdirs(&corpus.join("hpctoolkit/dbase"));
    dbs.push(corpus.join("hpctoolkit/hatchet-gamess"));
    dbs
}

#[test]
fn hpctoolkit_tables_agree_with_the_reader() {
    let Some(corpus) = corpus() else { return };
    for dir in databases(&corpus) {
        let what = dir.display().to_string();
        let input = Input::open(&dir).unwrap();
        assert_eq!(input.set(), profcodec::hpctoolkit::tables::SET);
        let db = profcodec::hpctoolkit::Database::open(&dir).unwrap();
        db.validate().unwrap();
        let meta = db.meta();

        // contexts: every node of the tree, the global context and the elided contexts (ids
        // with values that meta.db leaves out); a sample by ctxId.
        let contexts = Table::read(&input, "contexts");
        let index = db.context_index();
        let elided = db.elided_contexts().unwrap();
        assert_eq!(
            contexts.rows,
            index.len() + 1 + elided.len(),
            "{what}: contexts"
        );
        let ids = contexts.ints("ctx_id");
        let functions = contexts.strs("function");
        let parents = contexts.ints("parent");
        for i in sample(contexts.rows) {
            let ctx = ids[i] as u32;
            if ctx == 0 || elided.binary_search(&ctx).is_ok() {
                assert_eq!(parents[i], -1);
                continue;
            }
            assert_eq!(parents[i], i64::from(index.parent(ctx).unwrap()), "{what}");
            let want = match db.context(ctx).unwrap().unwrap() {
                profcodec::hpctoolkit::read::ContextNode::EntryPoint(e) => {
                    Some(e.pretty_name.to_owned())
                }
                profcodec::hpctoolkit::read::ContextNode::Context(c) => c
                    .function
                    .map(|f| meta.function(f).unwrap().name.unwrap().to_owned()),
            };
            assert_eq!(functions[i], want, "{what}: ctx {ctx}");
        }

        // metrics: every scope instance and summary statistic.
        let metrics = Table::read(&input, "metrics");
        let mut want = 0;
        for m in meta.metrics() {
            let m = m.unwrap();
            want += usize::from(m.scope_instance_count()) + usize::from(m.summary_count());
        }
        assert_eq!(metrics.rows, want, "{what}: metrics");

        // profiles and values: counts, and the sum of every (profile, metric id).
        let Some(pdb) = db.profile() else { continue };
        let profiles = Table::read(&input, "profiles");
        assert_eq!(profiles.rows, pdb.profile_count() as usize, "{what}");
        let values = Table::read(&input, "values");
        let mut want = BTreeMap::new();
        let mut count = 0;
        for p in pdb.profiles() {
            let p = p.unwrap();
            for v in p.values {
                let key = i64::from(p.index) << 16 | i64::from(v.metric_id());
                *want.entry(key).or_insert(0.0) += v.value();
                count += 1;
            }
        }
        assert_eq!(values.rows, count, "{what}: values");
        let keys = values
            .ints("profile")
            .into_iter()
            .zip(values.ints("metric_id"))
            .map(|(p, m)| p << 16 | m);
        assert_sums(&what, &sums(keys, &values.f64s("value")), &want);
        // A sample of values: the reader's value at that (profile, ctx, metric).
        let (vp, vc, vm, vv) = (
            values.ints("profile"),
            values.ints("ctx_id"),
            values.ints("metric_id"),
            values.f64s("value"),
        );
        for i in sample(values.rows) {
            let got = db
                .value(vp[i] as u32, vc[i] as u32, vm[i] as u16)
                .unwrap()
                .unwrap();
            assert_eq!(got, vv[i], "{what}: value {i}");
        }
        // Every row, in order (batches of 100 rows cut across contexts and profiles): each
        // context's run of values, the context's id on every row of it.
        let mut k = 0;
        for p in pdb.profiles() {
            let p = p.unwrap();
            for (i, c) in p.ctx_indices.iter().enumerate() {
                let end = p
                    .ctx_indices
                    .get(i + 1)
                    .map_or(p.values.len(), |n| n.start_index() as usize);
                for v in &p.values[c.start_index() as usize..end] {
                    let want = (
                        i64::from(p.index),
                        i64::from(c.ctx_id()),
                        i64::from(v.metric_id()),
                        v.value(),
                    );
                    assert_eq!((vp[k], vc[k], vm[k], vv[k]), want, "{what}: value row {k}");
                    k += 1;
                }
            }
        }
        assert_eq!(k, values.rows, "{what}: values by context");

        // traces: every element, and the sum of timestamps per profile.
        let traces = Table::read(&input, "traces");
        let mut want = BTreeMap::new();
        let mut count = 0;
        if let Some(tdb) = db.trace() {
            for t in tdb.traces() {
                let t = t.unwrap();
                for e in t.elems {
                    *want.entry(i64::from(t.prof_index)).or_insert(0.0) += e.timestamp() as f64;
                    count += 1;
                }
            }
        }
        assert_eq!(traces.rows, count, "{what}: traces");
        assert_sums(
            &what,
            &sums(traces.ints("profile"), &traces.f64s("timestamp")),
            &want,
        );
    }
}

#[test]
fn hpcrun_tables_agree_with_the_reader() {
    let Some(corpus) = corpus() else { return };
    for dir in subdirs(&corpus.join("hpctoolkit/meas")) {
        let what = dir.display().to_string();
        let input = Input::open(&dir).unwrap();
        assert_eq!(input.set(), profcodec::hpcrun::tables::SET);
        let folder = profcodec::hpcrun::MeasurementFolder::open(&dir).unwrap();
        let profiles = Table::read(&input, "profiles");
        assert_eq!(profiles.rows, folder.threads().len(), "{what}");
        let names = profiles.strs("name");
        let (mut nodes, mut metrics, mut records) = (0, 0, 0);
        let mut value_sums = BTreeMap::new();
        let mut time_sums = BTreeMap::new();
        for (k, t) in folder.threads().iter().enumerate() {
            assert_eq!(names[k].as_deref(), Some(t.stem.as_str()));
            let k = k as i64;
            if let Some(m) = t.read_profile() {
                let m = m.unwrap();
                for (e, epoch) in m.epochs.iter().enumerate() {
                    nodes += epoch.cct.len();
                    metrics += epoch.metrics.len();
                    for node in &epoch.cct {
                        for (metric, v) in m.node_values(e, node.id) {
                            *value_sums.entry(k << 16 | i64::from(metric)).or_insert(0.0) +=
                                v.as_f64();
                        }
                    }
                }
            }
            if let Some(trace) = t.read_trace() {
                let trace = trace.unwrap();
                records += trace.records.len();
                for r in &trace.records {
                    *time_sums.entry(k).or_insert(0.0) += r.time as f64;
                }
            }
        }
        assert_eq!(Table::read(&input, "nodes").rows, nodes, "{what}: nodes");
        assert_eq!(Table::read(&input, "metrics").rows, metrics, "{what}");
        let values = Table::read(&input, "values");
        let keys = values
            .ints("profile")
            .into_iter()
            .zip(values.ints("metric_id"))
            .map(|(p, m)| p << 16 | m);
        // The table has the non-zero values; zeros add nothing to the sums.
        value_sums.retain(|_, v| *v != 0.0);
        let mut got = sums(keys, &values.f64s("value"));
        got.retain(|_, v| *v != 0.0);
        assert_sums(&what, &got, &value_sums);
        let trace = Table::read(&input, "trace");
        assert_eq!(trace.rows, records, "{what}: trace");
        assert_sums(
            &what,
            &sums(trace.ints("profile"), &trace.f64s("time")),
            &time_sums,
        );
    }
}

#[test]
fn nytprof_tables_agree_with_the_reader() {
    let Some(corpus) = corpus() else { return };
    for file in files_below(&corpus.join("nytprof")) {
        if !file.to_string_lossy().ends_with(".nytprof.out") {
            continue;
        }
        let what = file.display().to_string();
        let input = Input::open(&file).unwrap();
        let model =
            profcodec::nytprof::Profile::from_bytes(&std::fs::read(&file).unwrap()).unwrap();
        let files = Table::read(&input, "files");
        assert_eq!(files.rows, model.files.len(), "{what}");
        let lines = Table::read(&input, "lines");
        let want: usize = model.line_times.values().map(|l| l.len()).sum();
        assert_eq!(lines.rows, want, "{what}: lines");
        let want_time: f64 = model
            .line_times
            .values()
            .flat_map(|l| l.values())
            .map(|t| t.time)
            .sum();
        let got_time: f64 = lines.f64s("time").iter().sum();
        assert!(
            close(got_time, want_time),
            "{what}: {got_time} vs {want_time}"
        );
        let (fids, nums, counts) = (lines.ints("fid"), lines.ints("line"), lines.ints("count"));
        for i in sample(lines.rows) {
            let t = model.line_times[&(fids[i] as u32)][&(nums[i] as u32)];
            assert_eq!(counts[i], t.count, "{what}: line {i}");
        }
        let subs = Table::read(&input, "subs");
        assert_eq!(subs.rows, model.subs.len(), "{what}: subs");
        let (names, excl, calls) = (
            subs.strs("name"),
            subs.f64s("exclusive_time"),
            subs.ints("calls"),
        );
        for i in sample(subs.rows) {
            let s = &model.subs[names[i].as_deref().unwrap()];
            assert_eq!((excl[i], calls[i]), (s.excl, s.calls as i64), "{what}");
        }
        let calls = Table::read(&input, "calls");
        let want: usize = model
            .subs
            .values()
            .flat_map(|s| s.callers.values())
            .map(|l| l.len())
            .sum();
        assert_eq!(calls.rows, want, "{what}: calls");
        let want_count: u64 = model
            .subs
            .values()
            .flat_map(|s| s.callers.values().flat_map(|l| l.values()))
            .map(|c| c.count)
            .sum();
        assert_eq!(calls.ints("count").iter().sum::<i64>(), want_count as i64);
    }
}

#[test]
fn easyprofiler_tables_agree_with_the_reader() {
    let Some(corpus) = corpus() else { return };
    for file in files_below(&corpus.join("easyprofiler")) {
        if file.extension().is_none_or(|e| e != "prof") {
            continue;
        }
        let what = file.display().to_string();
        let input = Input::open(&file).unwrap();
        let bytes = std::fs::read(&file).unwrap();
        let view = profcodec::easyprofiler::parse(&bytes).unwrap();
        let tree = view.tree().unwrap();
        let threads = Table::read(&input, "threads");
        assert_eq!(threads.rows, tree.threads.len(), "{what}");
        let blocks = Table::read(&input, "blocks");
        let want: usize = tree.threads.iter().map(|t| t.nodes.len()).sum();
        assert_eq!(blocks.rows, want, "{what}: blocks");
        // Durations per descriptor: the reader's totals.
        let (begin, end) = (blocks.f64s("begin_ns"), blocks.f64s("end_ns"));
        let durations: Vec<f64> = begin.iter().zip(&end).map(|(b, e)| e - b).collect();
        let got = sums(blocks.ints("descriptor"), &durations);
        let want: BTreeMap<i64, f64> = tree
            .totals()
            .iter()
            .map(|t| (i64::from(t.descriptor), t.total as f64))
            .collect();
        assert_sums(&what, &got, &want);
        // A sample of blocks: parents and depths as the reader's flat walk gives them.
        let flat: Vec<_> = tree.threads.iter().flat_map(|t| t.flat()).collect();
        let (ids, parents, depths) = (
            blocks.ints("id"),
            blocks.ints("parent"),
            blocks.ints("depth"),
        );
        for i in sample(blocks.rows) {
            assert_eq!(ids[i], i64::from(flat[i].id));
            assert_eq!(
                parents[i],
                flat[i].parent.map_or(-1, i64::from),
                "{what}: {i}"
            );
            assert_eq!(depths[i], i64::from(flat[i].depth));
        }
        let descriptors = Table::read(&input, "descriptors");
        let want = tree.descriptors().filter(Option::is_some).count();
        assert_eq!(descriptors.rows, want, "{what}: descriptors");
        let switches = Table::read(&input, "context_switches");
        let want: usize = tree.threads.iter().map(|t| t.context_switches.len()).sum();
        assert_eq!(switches.rows, want, "{what}: context switches");
        let values = Table::read(&input, "values");
        let value_descriptors = values.ints("descriptor");
        for d in &value_descriptors {
            let d = tree.descriptor(*d as u32).unwrap();
            assert_eq!(
                d.descriptor.block_type, 2,
                "{what}: values are value blocks"
            );
        }
        assert_eq!(
            Table::read(&input, "bookmarks").rows,
            tree.tail().bookmarks.len()
        );
    }
}

/// The StatProfiler inputs: each case folder (a session) and the `-file` output.
fn statprofiler_inputs(corpus: &Path) -> Vec<PathBuf> {
    let dir = corpus.join("statprofiler");
    let mut inputs: Vec<PathBuf> = subdirs(&dir)
        .into_iter()
        .filter(|d| !d.ends_with("progs") && !d.ends_with("file_option"))
        .collect();
    inputs.push(dir.join("file_option/profile.bin"));
    inputs
}

#[test]
fn statprofiler_tables_agree_with_the_reader() {
    let Some(corpus) = corpus() else { return };
    for path in statprofiler_inputs(&corpus) {
        let what = path.display().to_string();
        let input = Input::open(&path).unwrap();
        let files: Vec<PathBuf> = if path.is_file() {
            vec![path.clone()]
        } else {
            profcodec::statprofiler::session::find_files(&path).unwrap()
        };
        let (mut samples, mut weight, mut frames) = (0u64, 0u64, 0u64);
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let mut traces = profcodec::statprofiler::TraceReader::new(
                profcodec::statprofiler::Reader::from_slice(&bytes).unwrap(),
            );
            while let Some(t) = traces.next_trace().unwrap() {
                if t.weight == 0 && t.frame_count() == 0 {
                    continue;
                }
                samples += 1;
                weight += u64::from(t.weight);
                frames += t.frame_count() as u64;
            }
        }
        let table = Table::read(&input, "samples");
        assert_eq!(table.rows as u64, samples, "{what}: samples");
        assert_eq!(table.ints("weight").iter().sum::<i64>() as u64, weight);
        assert_eq!(table.ints("depth").iter().sum::<i64>() as u64, frames);
        let frame_table = Table::read(&input, "frames");
        assert_eq!(frame_table.rows as u64, frames, "{what}: frames");
        let processes = Table::read(&input, "processes");
        let want = if path.is_file() {
            1
        } else {
            profcodec::statprofiler::session::open_session(&path)
                .unwrap()
                .len()
        };
        assert_eq!(processes.rows, want, "{what}: processes");
    }
}

/// The profile tables of `profile` agree with it: every table's row count, and the sum of the
/// values of every value type.
fn check_profile_tables(what: &str, profile: profcodec_profile::Profile) {
    let want_nodes = profile.nodes().len();
    let mut want_self: BTreeMap<i64, f64> = BTreeMap::new();
    for v in profile.node_values() {
        *want_self.entry(v.value_type.index() as i64).or_insert(0.0) += v.self_value.unwrap_or(0.0);
    }
    let counts = [
        ("contexts", profile.contexts().len()),
        ("value_types", profile.value_types().len()),
        ("frames", profile.frames().len()),
        ("nodes", want_nodes),
        ("node_values", profile.node_values().len()),
        ("flat_values", profile.flat_values().len()),
        ("call_edges", profile.call_edges().len()),
        ("edge_values", profile.edge_values().len()),
        ("spans", profile.spans().len()),
    ];
    let parents: Vec<Option<usize>> = profile
        .nodes()
        .map(|(_, n)| n.parent.map(|p| p.index()))
        .collect();
    let tables = ProfileTables::new(profile);
    for (name, want) in counts {
        assert_eq!(
            Table::read(&tables, name).rows,
            want,
            "{what}: profile.{name}"
        );
    }
    let values = Table::read(&tables, "node_values");
    let selfs: Vec<f64> = values
        .f64s("self_value")
        .into_iter()
        .map(|v| if v.is_nan() { 0.0 } else { v })
        .collect();
    assert_sums(what, &sums(values.ints("value_type"), &selfs), &want_self);
    let nodes = Table::read(&tables, "nodes");
    let got_parents = nodes.ints("parent");
    for i in sample(nodes.rows) {
        assert_eq!(
            got_parents[i],
            parents[i].map_or(-1, |p| p as i64),
            "{what}"
        );
    }
}

#[test]
fn profile_tables_agree_with_the_model() {
    let Some(corpus) = corpus() else { return };
    for dir in databases(&corpus) {
        let db = profcodec::hpctoolkit::Database::open(&dir).unwrap();
        let options = profcodec::hpctoolkit::profile::ProfileOptions::new();
        check_profile_tables(&dir.display().to_string(), db.to_profile(&options).unwrap());
    }
    for dir in subdirs(&corpus.join("hpctoolkit/meas")) {
        let folder = profcodec::hpcrun::MeasurementFolder::open(&dir).unwrap();
        check_profile_tables(&dir.display().to_string(), folder.to_profile().unwrap());
    }
    for file in files_below(&corpus.join("nytprof")) {
        if file.to_string_lossy().ends_with(".nytprof.out") {
            let bytes = std::fs::read(&file).unwrap();
            let profile = profcodec::nytprof::to_profile::to_profile(&bytes).unwrap();
            check_profile_tables(&file.display().to_string(), profile);
        }
    }
    for file in files_below(&corpus.join("easyprofiler")) {
        if file.extension().is_some_and(|e| e == "prof") {
            let bytes = std::fs::read(&file).unwrap();
            let tree = profcodec::easyprofiler::parse(&bytes)
                .unwrap()
                .tree()
                .unwrap();
            let options = profcodec::easyprofiler::ProfileOptions::new().spans(true);
            check_profile_tables(
                &file.display().to_string(),
                tree.to_profile_with(options).unwrap(),
            );
        }
    }
    for path in statprofiler_inputs(&corpus) {
        let mut converter = profcodec::statprofiler::ProfileConverter::new();
        let files = if path.is_file() {
            vec![path.clone()]
        } else {
            profcodec::statprofiler::session::find_files(&path).unwrap()
        };
        for f in files {
            converter.add_file(&std::fs::read(f).unwrap()).unwrap();
        }
        check_profile_tables(&path.display().to_string(), converter.finish());
    }
}

#[test]
fn unknown_tables_and_single_database_files_are_refused_in_words() {
    let Some(corpus) = corpus() else { return };
    let db = corpus.join("hpctoolkit/dbase/small.d");
    let input = Input::open(&db).unwrap();
    let err = input.batches("lines", &ScanOptions::new()).err().unwrap();
    assert_eq!(
        err.to_string(),
        "no table \"lines\" in the hpctoolkit tables: the set has contexts, metrics, profiles, values, traces"
    );
    let err = Input::open(db.join("meta.db")).unwrap_err();
    assert!(
        err.to_string()
            .contains("give the folder that holds meta.db"),
        "{err}"
    );
}
