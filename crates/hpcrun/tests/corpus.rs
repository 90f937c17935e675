//! The real files of `hpctoolkit/meas/` of the corpus (`PROFCODEC_CORPUS`) (HPCToolkit's own test measurements):
//! every one reads, validates, and writes back byte for byte.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::PathBuf;

use profcodec_hpcrun::*;
use profcodec_testkit::corpus::{corpus_subdir, files_below};

fn meas_files(ext: &str) -> Option<Vec<PathBuf>> {
    let dir = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")?.join("meas");
    let files: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    assert!(!files.is_empty(), "no .{ext} files under {}", dir.display());
    Some(files)
}

#[test]
fn every_profile_reads_validates_and_rewrites_byte_identically() {
    let Some(files) = meas_files("hpcrun") else {
        return;
    };
    assert_eq!(files.len(), 17);
    for path in files {
        let data = std::fs::read(&path).unwrap();
        let name = path.display();
        assert_eq!(detect_version(&data).unwrap(), Version::V0400B, "{name}");
        let view = V4View::parse(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        view.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(view.is_canonical(), "{name}");
        let m = view.to_model().unwrap();
        assert_eq!(m, read_measurement(&data).unwrap());

        // What hpcrun always writes (write_data.c).
        for key in ["program-name", "mpi-rank", "thread-id", "trace-disorder"] {
            assert!(m.header_value(key).is_some(), "{name}: {key}");
        }
        assert_eq!(m.dictionary, standard_dictionary(), "{name}");
        let sparse = m.sparse.as_ref().unwrap();
        assert_eq!(sparse.end.ctx, raw::CONTEXT_END, "{name}");
        assert_eq!(sparse.end.start as usize, sparse.values.len(), "{name}");
        assert!(!sparse.id_tuple.is_empty(), "{name}");
        let e = &m.epochs[0];
        assert!(!e.metrics.is_empty() && !e.cct.is_empty() && !e.loadmap.is_empty());
        assert!(e.metrics.iter().all(|d| d.aux.is_some()));

        let out = write_measurement(&m).unwrap();
        assert!(out == data, "{name}: rewrite differs");

        // Every value's context is a node, so the inclusive sum at the roots covers them all.
        let index = CctIndex::new(&e.cct);
        for metric in 0..e.metrics.len() as u16 {
            let format = e.metrics[metric as usize].value_format();
            let total: f64 = sparse
                .values
                .iter()
                .filter(|v| v.metric == metric)
                .map(|v| MetricValue::from_bits(v.value, format).as_f64())
                .sum();
            let roots: f64 = index
                .roots()
                .map(|r| m.inclusive_sum(0, e.cct[r].id, metric))
                .sum();
            assert!(
                (total - roots).abs() <= 1e-9 * total.abs().max(1.0),
                "{name}"
            );
        }
    }
}

#[test]
fn every_trace_reads_and_rewrites_byte_identically() {
    let Some(files) = meas_files("hpctrace") else {
        return;
    };
    assert_eq!(files.len(), 13);
    for path in files {
        let data = std::fs::read(&path).unwrap();
        let name = path.display();
        let view = TraceView::parse(&data).unwrap_or_else(|e| panic!("{name}: {e}"));
        view.validate().unwrap();
        let t = view.to_model().unwrap();
        assert_eq!(t.version, TraceVersion::V0101B);
        assert!(!t.is_data_centric(), "{name}");
        assert_eq!(data.len(), 32 + 12 * t.records.len(), "{name}");
        // hpcrun writes times in order unless trace-disorder says otherwise.
        assert_eq!(write_trace(&t), data, "{name}");
    }
}

/// Each trace's contexts are CCT nodes of the profile beside it.
#[test]
fn trace_contexts_are_nodes_of_the_profile_beside_them() {
    let Some(files) = meas_files("hpctrace") else {
        return;
    };
    for trace in files {
        let profile = trace.with_extension("hpcrun");
        let m = read_measurement(&std::fs::read(&profile).unwrap()).unwrap();
        let t = read_trace(&std::fs::read(&trace).unwrap()).unwrap();
        let index = CctIndex::new(&m.epochs[0].cct);
        for r in &t.records {
            assert!(
                index.position(r.ctx as i32).is_some(),
                "{}: ctx {}",
                trace.display(),
                r.ctx
            );
        }
    }
}

#[test]
fn every_measurement_folder_opens_as_one_input() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") else {
        return;
    };
    let meas = dir.join("meas");
    let mut profiles = 0;
    let mut traces = 0;
    for entry in std::fs::read_dir(&meas).unwrap() {
        let path = entry.unwrap().path();
        let folder = MeasurementFolder::open(&path).unwrap();
        for t in folder.threads() {
            let name = &t.stem;
            let m = t.read_profile().unwrap().unwrap();
            profiles += 1;
            // The thread in the file name is the one in the profile's header.
            let header_thread = m.header_value("thread-id").unwrap().to_string();
            assert_eq!(t.thread, header_thread.trim().parse().ok(), "{name}");
            if let Some(trace) = t.read_trace() {
                traces += 1;
                let trace = trace.unwrap();
                let values = NodeValues::new(&m, 0);
                assert_eq!(values.len(), m.epochs[0].cct.len());
                let ids: std::collections::HashSet<i32> =
                    m.epochs[0].cct.iter().map(|n| n.id).collect();
                assert!(
                    trace.records.iter().all(|r| ids.contains(&(r.ctx as i32))),
                    "{name}"
                );
            }
        }
        let threads: Vec<_> = folder
            .threads()
            .iter()
            .map(|t| (t.rank, t.thread))
            .collect();
        let mut sorted = threads.clone();
        sorted.sort();
        assert_eq!(threads, sorted, "{}", path.display());
    }
    assert_eq!((profiles, traces), (17, 13));
    let cputime = MeasurementFolder::open(meas.join("loops-cputime-t.m")).unwrap();
    let threads: Vec<_> = cputime.threads().iter().map(|t| t.thread).collect();
    assert_eq!(threads, [Some(0), Some(1), Some(2), Some(3)]);
    assert_eq!(cputime.files().count(), 8);
}

#[test]
fn inclusive_sums_at_once_agree_with_one_node_at_a_time() {
    let Some(files) = meas_files("hpcrun") else {
        return;
    };
    for path in files {
        let m = read_measurement(&std::fs::read(&path).unwrap()).unwrap();
        let e = &m.epochs[0];
        for metric in 0..e.metrics.len() as u16 {
            let all = m.inclusive_sums(0, metric);
            for (i, n) in e.cct.iter().enumerate().step_by(7) {
                let one = m.inclusive_sum(0, n.id, metric);
                assert!(
                    (all[i] - one).abs() <= 1e-9 * one.abs().max(1.0),
                    "{}",
                    path.display()
                );
            }
            let name = e.metrics[usize::from(metric)].name.to_string();
            assert_eq!(
                m.metric_by_name(&name).map(|(id, _)| id <= metric),
                Some(true)
            );
        }
        for n in &e.cct {
            if n.lm_id != 0 {
                assert_eq!(e.load_module(n.lm_id).map(|lm| lm.id), Some(n.lm_id));
            }
        }
    }
}
