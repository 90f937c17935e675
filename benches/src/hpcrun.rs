//! Large-input generator for the hpcrun format: a synthetic 04.00b measurement of any size, made
//! with profcodec-hpcrun's own writer (shared by `benches/benches/hpcrun.rs` and
//! `cargo xtask gen-hpcrun`).

use profcodec_hpcrun::{
    CctIndex, CctNode, Epoch, IdTupleEntry, LoadModule, Measurement, MetricAux, MetricDesc,
    MetricFlagFields, MetricFlags, NvPair, SparseContext, SparseMetrics, SparseValue, Text,
    Version, raw, standard_dictionary, write_measurement,
};

use crate::Rng;

/// Metrics in the synthetic profile: half integer counters, half real times.
const METRICS: u16 = 16;

/// A 04.00b measurement of about `target_bytes` bytes: a random tree of CCT nodes written in
/// preorder, every node holding 1..=16 non-zero values.
pub fn measurement(target_bytes: u64, seed: u64) -> Measurement {
    let mut rng = Rng::new(seed);
    // Per node: 19 bytes of CCT, 12 of context index, on average 8.5 values of 10 bytes.
    let nodes = (target_bytes / (19 + 12 + 85)).max(1) as usize;
    let metrics = (0..METRICS)
        .map(|i| MetricDesc {
            name: Text::from(format!("METRIC{i}")),
            description: Text::from(format!("synthetic metric {i}")),
            flags: MetricFlags::Fields(MetricFlagFields {
                kind: 1,
                value_type: 0,
                value_format: if i % 2 == 0 { 1 } else { 2 },
                show: 1,
                show_percent: 1,
                ..MetricFlagFields::default()
            }),
            period: 1000,
            aux: Some(MetricAux::default()),
            ..MetricDesc::default()
        })
        .collect();
    let loadmap = (1..=32u16)
        .map(|id| LoadModule {
            id,
            name: Text::from(format!("/usr/lib/libsynthetic{id}.so")),
            ..LoadModule::default()
        })
        .collect();
    let mut cct = Vec::with_capacity(nodes);
    let mut sparse = SparseMetrics {
        id_tuple: vec![
            IdTupleEntry {
                kind: 1,
                physical: 0x11ac_0300,
                logical: 0,
            },
            IdTupleEntry {
                kind: 3,
                physical: 0,
                logical: 0,
            },
        ],
        values: Vec::with_capacity(nodes * 9),
        contexts: Vec::with_capacity(nodes),
        end: SparseContext::default(),
    };
    // The tree is drawn as a random recursive tree (each node's parent an earlier node), then
    // written in preorder, as hpcrun writes its CCT (`hpcrun_cct_fwrite` walks each node before
    // its children; every measurement of the corpus is in preorder).
    let mut drawn = Vec::with_capacity(nodes);
    for i in 0..nodes {
        let parent = if i == 0 {
            None
        } else {
            Some(rng.below(i as u64) as usize)
        };
        let lm_id = rng.below(32) as u16 + 1;
        let ip = rng.below(1 << 24);
        let count = rng.below(u64::from(METRICS)) as u16 + 1;
        let first = rng.below(u64::from(METRICS - count + 1)) as u16;
        let values: Vec<SparseValue> = (first..first + count)
            .map(|metric| {
                let value = if metric % 2 == 0 {
                    rng.below(1_000_000) + 1
                } else {
                    (rng.below(1_000_000) as f64 * 1e-6 + 1e-9).to_bits()
                };
                SparseValue { value, metric }
            })
            .collect();
        drawn.push((parent, lm_id, ip, values));
    }
    // Drawn with ids in drawing order, then renumbered in the order of the crate's preorder walk.
    let drawn_cct: Vec<CctNode> = drawn
        .iter()
        .enumerate()
        .map(|(i, (parent, lm_id, ip, _))| CctNode {
            id: i as i32 + 1,
            parent: parent.map_or(0, |p| p as i32 + 1),
            lm_id: *lm_id,
            ip: *ip,
            lush: None,
            flags: 1,
        })
        .collect();
    let order = CctIndex::new(&drawn_cct).preorder();
    let mut new_id = vec![0i32; nodes];
    for (k, &i) in order.iter().enumerate() {
        new_id[i] = k as i32 + 1;
    }
    for &i in &order {
        let node = &drawn_cct[i];
        let id = new_id[i];
        cct.push(CctNode {
            id,
            parent: drawn[i].0.map_or(0, |p| new_id[p]),
            ..*node
        });
        sparse.contexts.push(SparseContext {
            ctx: id as u32,
            start: sparse.values.len() as u64,
        });
        sparse.values.extend_from_slice(&drawn[i].3);
    }
    sparse.end = SparseContext {
        ctx: raw::CONTEXT_END,
        start: sparse.values.len() as u64,
    };
    Measurement {
        version: Version::V0400B,
        header: vec![
            NvPair::new("program-name", "synthetic"),
            NvPair::new("mpi-rank", "0"),
            NvPair::new("thread-id", "0"),
        ],
        epochs: vec![Epoch {
            header: None,
            metrics,
            loadmap,
            cct,
            values: Vec::new(),
        }],
        dictionary: standard_dictionary(),
        sparse: Some(sparse),
    }
}

/// The bytes of [`measurement`].
pub fn file(target_bytes: u64, seed: u64) -> Vec<u8> {
    write_measurement(&measurement(target_bytes, seed))
        .expect("the synthetic model is a valid 04.00 model")
}

#[cfg(test)]
mod tests {
    #[test]
    fn small_synthetic_files_validate() {
        let bytes = super::file(200_000, 7);
        let v = profcodec_hpcrun::V4View::parse(&bytes).expect("parses");
        v.validate().expect("validates");
        assert!(v.is_canonical());
        assert!(
            bytes.len() > 150_000 && bytes.len() < 300_000,
            "{}",
            bytes.len()
        );
    }
}
