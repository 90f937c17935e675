//! `NodeValues::of` (every value of a node, as converters take them) against
//! `NodeValues::get` (one metric at a time), on the test files of every version: dense rows
//! before 04.00, sparse ranges in 04.00.
#![allow(clippy::unwrap_used)] // a failure is the test's panic

use profcodec_hpcrun::{NodeValues, read_measurement};

#[test]
fn a_nodes_values_are_those_got_one_metric_at_a_time() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpcrun");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "hpcrun") {
            continue;
        }
        files += 1;
        let m = read_measurement(&std::fs::read(&path).unwrap()).unwrap();
        let mut listed = 0;
        for epoch in 0..m.epochs.len() {
            let values = NodeValues::new(&m, epoch);
            for node in 0..values.len() {
                let of: Vec<_> = values.of(node).collect();
                for &(metric, value) in &of {
                    assert_eq!(values.get(node, metric), Some(value), "{}", path.display());
                }
                if m.sparse.is_none() {
                    // A dense row lists its non-zero metrics in metric order.
                    let metrics = m.epochs[epoch].metrics.len() as u16;
                    let expected: Vec<_> = (0..metrics)
                        .filter(|&k| {
                            m.epochs[epoch].values[node * metrics as usize + k as usize] != 0
                        })
                        .collect();
                    let got: Vec<_> = of.iter().map(|&(k, _)| k).collect();
                    assert_eq!(got, expected, "{}", path.display());
                }
                listed += of.len();
            }
        }
        assert!(listed > 0, "{}", path.display());
    }
    assert!(files >= 6);
}
