//! Proptest: arbitrary valid value blocks and trace lines, placed at arbitrary 4-byte-aligned
//! offsets (real files only 4-align them, as-implemented "Alignment"), read back exactly.
//!
//! The files are assembled here from the `raw` structures, independently of the writer, so that
//! a shared misunderstanding between writer and reader cannot hide.

use std::collections::BTreeMap;
use std::io::Cursor;

use binrw::BinWrite;
use profcodec_hpctoolkit::raw::{
    CctDbHeader, ContextInfosHeader, ContextTraceHeader, ContextTraceHeadersHeader,
    ContextValueBlock, CtxIndex, FileHeader, FileKind, IdTupleHeader, Identifier, MetricIndex,
    ProfValue, ProfileDbHeader, ProfileInfo, ProfileInfosHeader, ProfileValueBlock, Section,
    TraceDbHeader, TraceElem, Value,
};
use profcodec_hpctoolkit::{CctDb, ProfileDb, TraceDb};
use proptest::prelude::*;
use zerocopy::IntoBytes;

fn put<T: for<'a> BinWrite<Args<'a> = ()> + binrw::meta::WriteEndian>(
    buf: &mut Vec<u8>,
    at: usize,
    v: &T,
) {
    let mut c = Cursor::new(Vec::new());
    v.write(&mut c).expect("write to a Vec");
    let bytes = c.into_inner();
    if buf.len() < at + bytes.len() {
        buf.resize(at + bytes.len(), 0);
    }
    buf[at..at + bytes.len()].copy_from_slice(&bytes);
}

fn pad_to(buf: &mut Vec<u8>, align: usize) {
    while !buf.len().is_multiple_of(align) {
        buf.push(0);
    }
}

/// A sparse plane: outer key, inner key, value bits (bits, so that NaNs compare exactly).
type Plane<K1, K2> = BTreeMap<K1, BTreeMap<K2, u64>>;

fn profile_plane() -> impl Strategy<Value = Plane<u32, u16>> {
    prop::collection::btree_map(
        any::<u32>(),
        prop::collection::btree_map(any::<u16>(), any::<u64>(), 1..6),
        0..12,
    )
}

/// Builds a profile.db holding `profiles`, each value block preceded by `gaps[i] * 4` bytes.
fn build_profile_db(profiles: &[Plane<u32, u16>], gaps: &[(u8, u8)]) -> Vec<u8> {
    let n = profiles.len();
    let mut buf = vec![0u8; 0x30];
    // Profile Info section at 0x30: header (0x10 with padding), then the {PI} array.
    let infos_at = 0x30;
    let pis_at = infos_at + 0x10;
    let infos_size = 0x10 + n * ProfileInfo::SIZE;
    buf.resize(infos_at + infos_size, 0);
    put(
        &mut buf,
        infos_at,
        &ProfileInfosHeader {
            p_profiles: pis_at as u64,
            n_profiles: n as u32,
            sz_profile: 0x30,
        },
    );
    // Identifier tuples: one id per profile.
    pad_to(&mut buf, 8);
    let tuples_at = buf.len();
    let mut tuple_ptrs = Vec::new();
    for i in 0..n {
        tuple_ptrs.push(buf.len() as u64);
        let at = buf.len();
        put(&mut buf, at, &IdTupleHeader { n_ids: 1 });
        buf.extend_from_slice(Identifier::new(3, 0, i as u32, 0).as_bytes());
    }
    let tuples_size = buf.len() - tuples_at;
    for (i, plane) in profiles.iter().enumerate() {
        pad_to(&mut buf, 4);
        buf.resize(buf.len() + usize::from(gaps[i].0) * 4, 0);
        let p_values = buf.len() as u64;
        let mut idx = Vec::new();
        let mut n_values = 0u64;
        for (&ctx, row) in plane {
            idx.push(CtxIndex::new(ctx, n_values));
            for (&m, &bits) in row {
                buf.extend_from_slice(Value::new(m, f64::from_bits(bits)).as_bytes());
                n_values += 1;
            }
        }
        pad_to(&mut buf, 4);
        buf.resize(buf.len() + usize::from(gaps[i].1) * 4, 0);
        let p_ctx_indices = buf.len() as u64;
        buf.extend_from_slice(idx.as_bytes());
        let pi = ProfileInfo {
            value_block: ProfileValueBlock {
                n_values,
                p_values,
                n_ctxs: idx.len() as u32,
                p_ctx_indices,
            },
            p_id_tuple: tuple_ptrs[i],
            flags: 0,
        };
        put(&mut buf, pis_at + i * ProfileInfo::SIZE, &pi);
    }
    pad_to(&mut buf, 4);
    buf.extend_from_slice(&FileKind::Profile.footer());
    let header = ProfileDbHeader {
        file: FileHeader::new(FileKind::Profile),
        profile_infos: Section {
            size: infos_size as u64,
            offset: infos_at as u64,
        },
        id_tuples: Section {
            size: tuples_size as u64,
            offset: tuples_at as u64,
        },
    };
    put(&mut buf, 0, &header);
    buf
}

fn build_cct_db(contexts: &[Plane<u16, u32>], gap: u8) -> Vec<u8> {
    let n = contexts.len();
    let mut buf = vec![0u8; 0x30];
    let infos_at = 0x30;
    let cis_at = infos_at + 0x10;
    let infos_size = 0x10 + n * ContextValueBlock::SIZE;
    buf.resize(infos_at + infos_size, 0);
    put(
        &mut buf,
        infos_at,
        &ContextInfosHeader {
            p_ctxs: cis_at as u64,
            n_ctxs: n as u32,
            sz_ctx: 0x20,
        },
    );
    for (i, plane) in contexts.iter().enumerate() {
        buf.resize(buf.len() + usize::from(gap) * 4, 0);
        let p_values = buf.len() as u64;
        let mut idx = Vec::new();
        let mut n_values = 0u64;
        for (&m, row) in plane {
            idx.push(MetricIndex::new(m, n_values));
            for (&p, &bits) in row {
                buf.extend_from_slice(ProfValue::new(p, f64::from_bits(bits)).as_bytes());
                n_values += 1;
            }
        }
        pad_to(&mut buf, 4);
        let p_metric_indices = buf.len() as u64;
        buf.extend_from_slice(idx.as_bytes());
        pad_to(&mut buf, 4);
        let ci = ContextValueBlock {
            n_values,
            p_values,
            n_metrics: idx.len() as u16,
            p_metric_indices,
        };
        put(&mut buf, cis_at + i * ContextValueBlock::SIZE, &ci);
    }
    buf.extend_from_slice(&FileKind::Cct.footer());
    let header = CctDbHeader {
        file: FileHeader::new(FileKind::Cct),
        ctx_infos: Section {
            size: infos_size as u64,
            offset: infos_at as u64,
        },
    };
    put(&mut buf, 0, &header);
    buf
}

fn build_trace_db(traces: &[Vec<(u64, u32)>], gap: u8) -> Vec<u8> {
    let n = traces.len();
    let mut buf = vec![0u8; 0x20];
    let sec_at = 0x20;
    let ths_at = sec_at + 0x20;
    let sec_size = 0x20 + n * ContextTraceHeader::SIZE;
    buf.resize(sec_at + sec_size, 0);
    let all = traces.iter().flatten().map(|e| e.0);
    let (min, max) = (all.clone().min().unwrap_or(0), all.max().unwrap_or(0));
    put(
        &mut buf,
        sec_at,
        &ContextTraceHeadersHeader {
            p_traces: ths_at as u64,
            n_traces: n as u32,
            sz_trace: 0x18,
            min_timestamp: min,
            max_timestamp: max,
        },
    );
    for (i, line) in traces.iter().enumerate() {
        buf.resize(buf.len() + usize::from(gap) * 4, 0);
        let p_start = buf.len() as u64;
        for &(ts, ctx) in line {
            buf.extend_from_slice(TraceElem::new(ts, ctx).as_bytes());
        }
        let th = ContextTraceHeader {
            prof_index: i as u32 + 1,
            p_start,
            p_end: buf.len() as u64,
        };
        put(&mut buf, ths_at + i * ContextTraceHeader::SIZE, &th);
    }
    buf.extend_from_slice(&FileKind::Trace.footer());
    let header = TraceDbHeader {
        file: FileHeader::new(FileKind::Trace),
        ctx_traces: Section {
            size: sec_size as u64,
            offset: sec_at as u64,
        },
    };
    put(&mut buf, 0, &header);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn profile_value_blocks_read_back(
        profiles in prop::collection::vec(profile_plane(), 1..5),
        gaps in prop::collection::vec((0u8..6, 0u8..6), 5),
        probe_ctx in any::<u32>(),
        probe_metric in any::<u16>(),
    ) {
        let data = build_profile_db(&profiles, &gaps);
        let db = ProfileDb::parse(&data).expect("parse");
        db.validate().expect("validate");
        prop_assert_eq!(db.profile_count() as usize, profiles.len());
        for (i, plane) in profiles.iter().enumerate() {
            let p = db.profile(i as u32).expect("profile");
            let mut back: Plane<u32, u16> = BTreeMap::new();
            for (ctx, vals) in p.contexts() {
                let row = back.entry(ctx).or_default();
                for v in vals {
                    row.insert(v.metric_id(), v.value().to_bits());
                }
            }
            prop_assert_eq!(&back, plane);
            for (&ctx, row) in plane {
                prop_assert_eq!(p.metrics_of(ctx).len(), row.len());
                for (&m, &bits) in row {
                    prop_assert_eq!(p.value(ctx, m).map(f64::to_bits), Some(bits));
                }
            }
            let expected = plane.get(&probe_ctx).and_then(|r| r.get(&probe_metric)).copied();
            prop_assert_eq!(p.value(probe_ctx, probe_metric).map(f64::to_bits), expected);
            let tuple = p.id_tuple.expect("id tuple");
            prop_assert_eq!(tuple.ids[0].logical_id.get(), i as u32);
        }
    }

    #[test]
    fn cct_value_blocks_read_back(
        contexts in prop::collection::vec(
            prop::collection::btree_map(any::<u16>(), prop::collection::btree_map(any::<u32>(), any::<u64>(), 1..5), 0..6),
            1..8,
        ),
        gap in 0u8..6,
    ) {
        let data = build_cct_db(&contexts, gap);
        let db = CctDb::parse(&data).expect("parse");
        db.validate().expect("validate");
        prop_assert_eq!(db.context_count() as usize, contexts.len());
        for (i, plane) in contexts.iter().enumerate() {
            let c = db.context(i as u32).expect("context");
            let mut back: Plane<u16, u32> = BTreeMap::new();
            for (m, vals) in c.metrics() {
                let row = back.entry(m).or_default();
                for v in vals {
                    row.insert(v.prof_index(), v.value().to_bits());
                }
            }
            prop_assert_eq!(&back, plane);
            for (&m, row) in plane {
                for (&p, &bits) in row {
                    prop_assert_eq!(c.value(p, m).map(f64::to_bits), Some(bits));
                }
            }
        }
    }

    #[test]
    fn trace_lines_read_back(
        lines in prop::collection::vec(prop::collection::vec((0u64..1_000_000, any::<u32>()), 0..40), 1..5),
        gap in 0u8..6,
        probe in 0u64..1_100_000,
    ) {
        let traces: Vec<Vec<(u64, u32)>> = lines
            .into_iter()
            .map(|mut l| {
                l.sort_by_key(|e| e.0);
                l
            })
            .collect();
        let data = build_trace_db(&traces, gap);
        let db = TraceDb::parse(&data).expect("parse");
        db.validate().expect("validate");
        for (i, line) in traces.iter().enumerate() {
            let t = db.trace(i as u32).expect("trace");
            prop_assert_eq!(t.prof_index, i as u32 + 1);
            let back: Vec<(u64, u32)> = t.elems.iter().map(|e| (e.timestamp(), e.ctx_id())).collect();
            prop_assert_eq!(&back, line);
            let expected = line.iter().rposition(|e| e.0 <= probe);
            prop_assert_eq!(t.index_at(probe), expected);
        }
    }
}
