//! Property tests: model -> bytes -> model for every version the writer supports, and traces.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use profcodec_hpcrun::*;
use proptest::collection::vec;
use proptest::prelude::*;

fn text() -> impl Strategy<Value = Text> {
    vec(any::<u8>(), 0..10).prop_map(Text)
}

fn nvpairs() -> impl Strategy<Value = Vec<NvPair>> {
    vec(
        (text(), text()).prop_map(|(name, value)| NvPair { name, value }),
        0..3,
    )
}

fn metric(version: Version) -> BoxedStrategy<MetricDesc> {
    if version.is_legacy() {
        return (text(), any::<u64>(), any::<u64>())
            .prop_map(|(name, flags, period)| MetricDesc {
                name,
                flags: MetricFlags::Legacy(flags),
                period,
                ..MetricDesc::default()
            })
            .boxed();
    }
    let fields = (any::<[u8; 6]>(), any::<u16>(), any::<u64>()).prop_map(|(b, partner, unused)| {
        MetricFlags::Fields(MetricFlagFields {
            kind: b[0],
            value_type: b[1],
            value_format: b[2],
            move2proc: b[3],
            partner,
            show: b[4],
            show_percent: b[5],
            unused,
        })
    });
    let aux =
        (any::<u16>(), any::<u16>(), -1e12f64..1e12, any::<u64>()).prop_map(|(a, b, c, d)| {
            MetricAux {
                is_frequency: a,
                is_multiplexed: b,
                threshold_mean: c,
                num_samples: d,
            }
        });
    let has_aux = version.has_metric_aux();
    (text(), text(), fields, any::<u64>(), text(), text(), aux)
        .prop_map(
            move |(name, description, flags, period, formula, format, aux)| MetricDesc {
                name,
                description,
                flags,
                period,
                formula,
                format,
                aux: has_aux.then_some(aux),
            },
        )
        .boxed()
}

fn load_module(version: Version) -> BoxedStrategy<LoadModule> {
    if version.is_legacy() {
        (text(), any::<u64>(), any::<u64>())
            .prop_map(|(name, vaddr, mapaddr)| LoadModule {
                name,
                vaddr,
                mapaddr,
                ..LoadModule::default()
            })
            .boxed()
    } else {
        (any::<u16>(), text(), any::<u64>())
            .prop_map(|(id, name, flags)| LoadModule {
                id,
                name,
                flags,
                ..LoadModule::default()
            })
            .boxed()
    }
}

fn node(version: Version, lush: bool) -> impl Strategy<Value = CctNode> {
    (
        any::<i32>(),
        any::<i32>(),
        any::<u16>(),
        any::<u64>(),
        any::<(u32, u64, u64)>(),
        any::<u8>(),
    )
        .prop_map(
            move |(id, parent, lm_id, ip, (assoc, a, b), flags)| CctNode {
                id,
                parent,
                lm_id: if version.is_legacy() { 0 } else { lm_id },
                ip,
                lush: lush.then_some(Lush { assoc, lip: [a, b] }),
                flags: if version == Version::V0400B { flags } else { 0 },
            },
        )
}

fn epoch(version: Version) -> BoxedStrategy<Epoch> {
    let header = (any::<u64>(), any::<u32>(), any::<u64>(), nvpairs());
    let tables = (vec(metric(version), 0..3), vec(load_module(version), 0..3));
    (header, tables)
        .prop_flat_map(
            move |((flags, ra_distance, granularity, nvpairs), (metrics, loadmap))| {
                let v4 = version == Version::V0400B;
                let lush = !v4 && (version == Version::V0200L || flags & 1 != 0);
                let nm = metrics.len();
                vec(node(version, lush), 0..5).prop_flat_map(move |cct| {
                    let n = if v4 { 0 } else { cct.len() * nm };
                    let header = (!v4).then(|| EpochHeader {
                        flags,
                        ra_distance,
                        granularity,
                        nvpairs: nvpairs.clone(),
                    });
                    let (metrics, loadmap) = (metrics.clone(), loadmap.clone());
                    vec(any::<u64>(), n).prop_map(move |values| Epoch {
                        header: header.clone(),
                        metrics: metrics.clone(),
                        loadmap: loadmap.clone(),
                        cct: cct.clone(),
                        values,
                    })
                })
            },
        )
        .boxed()
}

fn sparse() -> impl Strategy<Value = SparseMetrics> {
    let id = any::<(u16, u64, u64)>().prop_map(|(kind, physical, logical)| IdTupleEntry {
        kind,
        physical,
        logical,
    });
    let value = any::<(u64, u16)>().prop_map(|(value, metric)| SparseValue { value, metric });
    let ctx = any::<(u32, u64)>().prop_map(|(ctx, start)| SparseContext { ctx, start });
    (vec(id, 0..3), vec(value, 0..8), vec(ctx.clone(), 0..4), ctx).prop_map(
        |(id_tuple, values, contexts, end)| SparseMetrics {
            id_tuple,
            values,
            contexts,
            end,
        },
    )
}

fn measurement(version: Version) -> BoxedStrategy<Measurement> {
    if version == Version::V0400B {
        let dict = vec(
            (any::<u16>(), text()).prop_map(|(kind, name)| DictionaryEntry { kind, name }),
            0..4,
        );
        return (nvpairs(), epoch(version), dict, sparse())
            .prop_map(move |(header, e, dictionary, sparse)| Measurement {
                version,
                header,
                epochs: vec![e],
                dictionary,
                sparse: Some(sparse),
            })
            .boxed();
    }
    (nvpairs(), vec(epoch(version), 0..3))
        .prop_map(move |(header, epochs)| Measurement {
            version,
            header,
            epochs,
            ..Measurement::default()
        })
        .boxed()
}

fn round_trip(m: &Measurement) {
    let bytes = write_measurement(m).unwrap();
    let back = read_measurement(&bytes).unwrap();
    // A 02.00b file without auxiliary fields is only told apart from one with them by whether
    // the descriptors parse; without descriptors both layouts are the same bytes.
    if m.version == Version::V0200BNoAux && back.version == Version::V0200B {
        assert!(m.epochs.iter().all(|e| e.metrics.is_empty()));
    } else {
        assert_eq!(&back, m);
    }
    assert_eq!(write_measurement(&back).unwrap(), bytes);
    if m.version == Version::V0400B {
        let v = V4View::parse(&bytes).unwrap();
        assert!(v.is_canonical());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn v0200l(m in measurement(Version::V0200L)) { round_trip(&m) }

    #[test]
    fn v0198b(m in measurement(Version::V0198B)) { round_trip(&m) }

    #[test]
    fn v0200b(m in measurement(Version::V0200B)) { round_trip(&m) }

    #[test]
    fn v0200b_without_aux(m in measurement(Version::V0200BNoAux)) { round_trip(&m) }

    #[test]
    fn v0300b(m in measurement(Version::V0300B)) { round_trip(&m) }

    #[test]
    fn v0400b(m in measurement(Version::V0400B)) { round_trip(&m) }

    #[test]
    fn migrated_files_validate(mut m in measurement(Version::V0200B)) {
        // Make the generated trees trees: every parent a root marker, every node outside modules.
        for e in &mut m.epochs {
            for n in &mut e.cct {
                n.parent = 0;
                n.lm_id = 0;
            }
        }
        let (v4, _) = migrate::to_v4(&m);
        let bytes = write_measurement(&v4).unwrap();
        let view = V4View::parse(&bytes).unwrap();
        // Every context is a node and every metric id names a metric.
        view.validate().unwrap();
    }

    #[test]
    fn traces(dc in any::<bool>(), old in any::<bool>(), flags in any::<u64>(),
              recs in vec(any::<(u64, u32, u32)>(), 0..20)) {
        let version = if old { TraceVersion::V0100B } else { TraceVersion::V0101B };
        let flags = if old { 0 } else { (flags & !1) | u64::from(dc) };
        let dc = dc && !old;
        let t = Trace {
            version,
            flags,
            records: recs.iter().map(|&(time, ctx, m)| TraceRecord { time, ctx, metric: dc.then_some(m) }).collect(),
        };
        let bytes = write_trace(&t);
        prop_assert_eq!(read_trace(&bytes).unwrap(), t);
    }
}

#[test]
fn the_builder_makes_every_version() {
    for version in Version::ALL {
        let mut b = MeasurementBuilder::new(version);
        b.header("program-name", "demo")
            .header("mpi-rank", "2")
            .header("thread-id", "0");
        let cycles = b.metric("CYCLES", ValueFormat::Int, 1000);
        let time = b.metric("TIME", ValueFormat::Real, 5000);
        let exe = b.load_module("/bin/demo");
        let libc = b.load_module("/lib/libc.so.6");
        let main = b.node(None, exe, 0x10);
        let f = b.node(Some(main), exe, 0x20);
        let g = b.node(Some(f), libc, 0x30);
        b.add(f, cycles, MetricValue::Int(4));
        b.add(g, cycles, MetricValue::Int(6));
        b.add(g, time, MetricValue::Real(0.25));
        b.add(g, time, MetricValue::Real(0.5));
        let m = b.build();
        assert_eq!(m.version, version);
        let back = read_measurement(&write_measurement(&m).unwrap()).unwrap();
        assert_eq!(back, m, "{version:?}");
        assert_eq!(back.inclusive_sum(0, 1, 0), 10.0, "{version:?}");
        assert_eq!(back.inclusive_sum(0, 2, 1), 0.75, "{version:?}");
        assert_eq!(
            back.node_values(0, 3),
            vec![(0, MetricValue::Int(6)), (1, MetricValue::Real(0.75))],
            "{version:?}"
        );
        if version == Version::V0400B {
            let bytes = write_measurement(&m).unwrap();
            V4View::parse(&bytes).unwrap().validate().unwrap();
            assert!(back.epochs[0].cct.iter().all(CctNode::is_unwound));
        } else {
            assert_eq!(
                back.epochs[0].cct[2].lm_id,
                if version.is_legacy() { 0 } else { 2 }
            );
        }
    }
}
