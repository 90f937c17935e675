//! Upgrading an older measurement to 04.00 (`profcodec rewrite --to 04.00`).

use crate::model::*;
use crate::raw;
use crate::write::flag_fields;

/// The id-tuple kinds hpcrun uses (id-tuple.h).
const KIND_RANK: u16 = 2;
const KIND_THREAD: u16 = 3;

/// Converts `m` to a 04.00 measurement and lists what 04.00 cannot carry.
///
/// - Only the first epoch is kept (04.00 has one); the others are reported.
/// - The epoch header (flags, granularity, return-address distance, nvpairs), LUSH fields, and the
///   load modules' vaddr/mapaddr of 02.00l and 01.98b are dropped and reported when not zero.
/// - Legacy (02.00l, 01.98b) metric flags become 16-byte flags of the same value format; load
///   modules get ids 1, 2, ... in file order; nodes keep their absolute IP with load-module id 0.
/// - Dense values become sparse values (zero values are not stored, as hpcrun does), grouped by
///   node in CCT order; every node is marked unwound.
/// - The id tuple is made from the header's `mpi-rank` and `thread-id` (RANK, THREAD; logical
///   indexes); the standard dictionary is written.
pub fn to_v4(m: &Measurement) -> (Measurement, Vec<String>) {
    if m.version == Version::V0400B {
        return (m.clone(), Vec::new());
    }
    let mut dropped = Vec::new();
    if m.epochs.len() > 1 {
        let nodes: usize = m.epochs[1..].iter().map(|e| e.cct.len()).sum();
        dropped.push(format!(
            "epochs 2..{} ({nodes} CCT nodes): 04.00 holds one epoch",
            m.epochs.len()
        ));
    }
    let epoch = m.epochs.first().cloned().unwrap_or_default();
    if let Some(h) = &epoch.header
        && (h.flags != 0 || h.granularity != 0 || h.ra_distance != 0 || !h.nvpairs.is_empty())
    {
        dropped.push(format!(
            "epoch header (flags {:#x}, granularity {}, ra distance {}, {} nvpairs)",
            h.flags,
            h.granularity,
            h.ra_distance,
            h.nvpairs.len()
        ));
    }
    let legacy = m.version.is_legacy();
    let metrics: Vec<MetricDesc> = epoch
        .metrics
        .iter()
        .map(|d| MetricDesc {
            flags: MetricFlags::Fields(flag_fields(d.flags)),
            aux: Some(d.aux.unwrap_or_default()),
            ..d.clone()
        })
        .collect();
    if legacy && !metrics.is_empty() {
        dropped.push("legacy metric flags other than the value format".to_owned());
    }
    let loadmap: Vec<LoadModule> = epoch
        .loadmap
        .iter()
        .enumerate()
        .map(|(i, lm)| LoadModule {
            id: if legacy { (i + 1) as u16 } else { lm.id },
            name: lm.name.clone(),
            flags: lm.flags,
            vaddr: 0,
            mapaddr: 0,
        })
        .collect();
    if legacy
        && epoch
            .loadmap
            .iter()
            .any(|lm| lm.vaddr != 0 || lm.mapaddr != 0)
    {
        dropped.push("load module vaddr/mapaddr (CCT nodes keep absolute IPs, lm id 0)".to_owned());
    }
    if epoch
        .cct
        .iter()
        .any(|n| n.lush.is_some_and(|l| l != Lush::default()))
    {
        dropped.push("LUSH association and logical IP of CCT nodes".to_owned());
    }
    let cct: Vec<CctNode> = epoch
        .cct
        .iter()
        .map(|n| CctNode {
            lush: None,
            flags: raw::CCT_FLAG_UNWOUND,
            ..*n
        })
        .collect();

    let nm = epoch.metrics.len();
    let mut sparse = SparseMetrics::default();
    for (i, n) in epoch.cct.iter().enumerate() {
        let row = epoch.values.get(i * nm..(i + 1) * nm).unwrap_or(&[]);
        if row.iter().all(|&v| v == 0) {
            continue;
        }
        sparse.contexts.push(SparseContext {
            ctx: n.id as u32,
            start: sparse.values.len() as u64,
        });
        for (metric, &value) in row.iter().enumerate() {
            if value != 0 {
                sparse.values.push(SparseValue {
                    value,
                    metric: metric as u16,
                });
            }
        }
    }
    sparse.end = SparseContext {
        ctx: raw::CONTEXT_END,
        start: sparse.values.len() as u64,
    };
    let logical = |name: &str| {
        m.header_value(name)
            .and_then(|v| v.to_string_lossy().trim().parse::<u64>().ok())
    };
    // Interpretation 3 (IDTUPLE_IDS_LOGIC_ONLY): only the logical index is known.
    for (kind, name) in [(KIND_RANK, "mpi-rank"), (KIND_THREAD, "thread-id")] {
        if let Some(l) = logical(name) {
            sparse.id_tuple.push(IdTupleEntry {
                kind: kind | (3 << 14),
                physical: l,
                logical: l,
            });
        }
    }
    (
        Measurement {
            version: Version::V0400B,
            header: m.header.clone(),
            epochs: vec![Epoch {
                header: None,
                metrics,
                loadmap,
                cct,
                values: Vec::new(),
            }],
            dictionary: standard_dictionary(),
            sparse: Some(sparse),
        },
        dropped,
    )
}
