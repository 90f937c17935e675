//! Hostile input: every truncation point and many single-bit flips of every corpus and
//! testdata file give `Ok` or a typed error, never a panic; truncated files keep what came before
//! the damage.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::PathBuf;

use profcodec_hpcrun::*;
use profcodec_testkit::corpus::{corpus_subdir, files_below};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

fn files() -> Vec<PathBuf> {
    let mut files =
        files_below(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun"));
    if let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") {
        files.extend(files_below(&dir.join("meas")));
    }
    files.retain(|p| {
        p.extension()
            .is_some_and(|e| e == "hpcrun" || e == "hpctrace")
    });
    assert!(files.len() >= 8);
    files
}

/// Runs every decoder entry point and what a user does next with the result.
fn decode_everything(data: &[u8]) {
    if let Ok(m) = read_measurement(data) {
        let again = write_measurement(&m).unwrap();
        assert_eq!(
            read_measurement(&again).unwrap().epochs.len(),
            m.epochs.len()
        );
        for (i, e) in m.epochs.iter().enumerate() {
            let index = CctIndex::new(&e.cct);
            for r in index.roots().take(4) {
                let _ = index.path_to_root(r);
                let _ = m.inclusive_sum(i, e.cct[r].id, 0);
            }
            if let Some(n) = e.cct.last() {
                let _ = m.node_values(i, n.id);
            }
            let values = NodeValues::new(&m, i);
            let _ = (0..values.len())
                .map(|n| values.of(n).count())
                .sum::<usize>();
            let _ = m.inclusive_sums(i, 0);
        }
        let _ = m.id_tuple_names();
        let _ = migrate::to_v4(&m);
        #[cfg(feature = "profile")]
        let _ = m.to_profile();
    }
    let _ = read_measurement_partial(data);
    let _ = read_measurement_prefix(data);
    if let Ok(v) = V4View::parse_prefix(data) {
        let _ = v.validate();
    }
    if let Ok(v) = V4View::parse(data) {
        let _ = v.validate();
        let _ = v.is_canonical();
        let _ = v.to_model();
        let _ = v.context_values(0).count();
    }
    if let Ok(t) = TraceView::parse(data) {
        let _ = t.iter().count();
        let _ = t.to_model();
    }
}

#[test]
fn every_truncation_point_gives_ok_or_an_error() {
    for path in files() {
        let data = std::fs::read(&path).unwrap();
        for cut in truncation_points(data.len()) {
            decode_everything(&data[..cut]);
        }
    }
}

#[test]
fn bit_flips_give_ok_or_an_error() {
    for path in files() {
        let data = std::fs::read(&path).unwrap();
        for mutant in bit_flips(&data, 250) {
            decode_everything(&mutant);
        }
    }
}

#[test]
fn errors_carry_offsets_inside_the_input() {
    for path in files() {
        let data = std::fs::read(&path).unwrap();
        for cut in truncation_points(data.len()).into_iter().step_by(7) {
            let part = &data[..cut];
            let err = if path.extension().is_some_and(|e| e == "hpctrace") {
                TraceView::parse(part).and_then(|t| t.validate()).err()
            } else {
                read_measurement(part).err()
            };
            if let Some(e) = err {
                assert!(e.offset().unwrap() <= cut as u64, "{}: {e}", path.display());
                assert!(e.to_string().contains(": at byte 0x"), "{e}");
            }
        }
    }
}

#[test]
fn a_cut_trace_keeps_every_complete_record() {
    for path in files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "hpctrace"))
    {
        let data = std::fs::read(&path).unwrap();
        let full = read_trace(&data).unwrap();
        let size = if full.is_data_centric() { 16 } else { 12 };
        for cut in (32..data.len()).step_by(5) {
            let view = TraceView::parse(&data[..cut]).unwrap();
            let items: Vec<_> = view.iter().collect();
            let complete = (cut - 32) / size;
            let oks: Vec<TraceRecord> = items
                .iter()
                .filter_map(|r| r.as_ref().ok().copied())
                .collect();
            assert_eq!(oks, full.records[..complete], "{}", path.display());
            let cut_short = (cut - 32) % size != 0;
            assert_eq!(items.last().is_some_and(Result::is_err), cut_short);
        }
    }
}

#[test]
fn a_cut_epoch_file_keeps_every_complete_epoch() {
    // Two epochs: cut inside the second keeps the first.
    let data = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun/demo-02.00b.hpcrun"),
    )
    .unwrap();
    let m = read_measurement(&data).unwrap();
    let mut two = m.clone();
    two.epochs.push(m.epochs[0].clone());
    let bytes = write_measurement(&two).unwrap();
    for cut in data.len() + 1..bytes.len() {
        let (partial, err) = read_measurement_partial(&bytes[..cut]);
        assert!(err.is_some());
        assert_eq!(partial.unwrap().epochs, m.epochs);
    }
}

#[test]
fn a_cyclic_cct_does_not_hang_the_helpers() {
    let nodes = [
        CctNode {
            id: 1,
            parent: 2,
            ..CctNode::default()
        },
        CctNode {
            id: 2,
            parent: 1,
            ..CctNode::default()
        },
        CctNode {
            id: 3,
            parent: 3,
            ..CctNode::default()
        },
    ];
    let index = CctIndex::new(&nodes);
    assert!(index.path_to_root(0).len() <= 4);
    assert_eq!(index.subtree(0).len(), 2);
    assert_eq!(index.inclusive_sum(1, |_| 1.0), 2.0);
    assert_eq!(index.roots().collect::<Vec<_>>(), vec![2]);
    #[cfg(feature = "profile")]
    {
        // The nodes on a cycle are reachable from no root and stay out of the profile.
        let m = Measurement {
            epochs: vec![Epoch {
                cct: nodes.to_vec(),
                ..Epoch::default()
            }],
            ..Measurement::default()
        };
        assert_eq!(m.to_profile().unwrap().nodes().len(), 1);
    }
}

/// Regression: validating a 04.00 file with no CCT node overflowed the id-range computation.
#[test]
fn a_04_00_file_without_nodes_validates_or_errors() {
    let m = Measurement {
        epochs: vec![Epoch::default()],
        sparse: Some(SparseMetrics {
            contexts: vec![SparseContext { ctx: 5, start: 0 }],
            end: SparseContext {
                ctx: raw::CONTEXT_END,
                start: 0,
            },
            ..SparseMetrics::default()
        }),
        ..Measurement::default()
    };
    let bytes = write_measurement(&m).unwrap();
    assert!(V4View::parse(&bytes).unwrap().validate().is_err());
}

#[test]
fn validate_rejects_dangling_parents_and_load_modules() {
    let mut b = MeasurementBuilder::new(Version::V0400B);
    let lm = b.load_module("/bin/x");
    let root = b.node(None, lm, 1);
    b.node(Some(root), lm, 2);
    let good = b.build();
    let check = |f: &dyn Fn(&mut CctNode)| {
        let mut m = good.clone();
        f(&mut m.epochs[0].cct[1]);
        let bytes = write_measurement(&m).unwrap();
        V4View::parse(&bytes).unwrap().validate()
    };
    assert!(check(&|_| {}).is_ok());
    let e = check(&|n| n.parent = 9).unwrap_err();
    assert!(
        e.to_string().contains(": cct node parent: at byte 0x81f:"),
        "{e}"
    );
    let e = check(&|n| n.lm_id = 7).unwrap_err();
    assert!(
        e.to_string().contains(": cct node load-module id: at byte"),
        "{e}"
    );
    assert!(check(&|n| n.lm_id = 0).is_ok());
}
