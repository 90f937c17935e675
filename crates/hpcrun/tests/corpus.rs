//! The real files of `shared/corpus/hpctoolkit/meas/` (HPCToolkit's own test measurements):
//! every one reads, validates, and writes back byte for byte.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::PathBuf;

use profcodec_common::corpus::{corpus_subdir, files_below};
use profcodec_hpcrun::*;

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
