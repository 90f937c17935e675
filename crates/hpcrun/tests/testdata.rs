//! The small files of `testdata/hpcrun/`, made by this crate's writer from the models below.
//! The test checks the files are what the writer makes now; `PROFCODEC_BLESS=1 cargo test -p
//! profcodec-hpcrun --test testdata` rewrites them.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::PathBuf;

use profcodec_hpcrun::*;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun")
}

/// A small program's measurement: main -> compute -> two leaves, two metrics (int cycles and
/// real seconds), three load modules.
fn sample(version: Version) -> Measurement {
    let header = vec![
        NvPair::new("program-name", "demo"),
        NvPair::new("program-path", "/opt/demo/bin/demo"),
        NvPair::new("mpi-rank", "1"),
        NvPair::new("thread-id", "0"),
    ];
    let legacy = version.is_legacy();
    let metric = |name: &str, real: bool, period: u64| MetricDesc {
        name: name.into(),
        description: if legacy { Text::default() } else { name.into() },
        flags: if legacy {
            MetricFlags::Legacy(if real { 4 } else { 0 })
        } else {
            MetricFlags::Fields(MetricFlagFields {
                kind: 1,
                value_format: if real { 2 } else { 1 },
                show: 1,
                show_percent: 1,
                ..MetricFlagFields::default()
            })
        },
        period,
        formula: Text::default(),
        format: Text::default(),
        aux: version.has_metric_aux().then_some(MetricAux {
            is_frequency: 0,
            is_multiplexed: 0,
            threshold_mean: 0.0,
            num_samples: 9,
        }),
    };
    let metrics = vec![
        metric("CYCLES", false, 1_000_000),
        metric("CPUTIME (sec)", true, 5000),
    ];
    let loadmap = [
        "/opt/demo/bin/demo",
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libm.so.6",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| LoadModule {
        id: if legacy { 0 } else { i as u16 + 1 },
        name: (*name).into(),
        flags: 0,
        vaddr: if legacy {
            0x40_0000 + (i as u64) * 0x100_0000
        } else {
            0
        },
        mapaddr: 0,
    })
    .collect();
    let v4 = version == Version::V0400B;
    let lush = (version == Version::V0200L).then_some(Lush::default());
    // (id, parent, lm, ip, cycles, seconds); pre-04.00 hpcrun makes leaf ids negative.
    let rows: [(i32, i32, u16, u64, u64, f64); 4] = [
        (1, 0, 1, 0x1100, 0, 0.0),
        (2, 1, 1, 0x1200, 3_000_000, 0.015),
        (if v4 { 3 } else { -3 }, 2, 3, 0x2040, 7_000_000, 0.035),
        (if v4 { 4 } else { -4 }, 2, 2, 0x8800, 1_000_000, 0.005),
    ];
    let cct: Vec<CctNode> = rows
        .iter()
        .map(|&(id, parent, lm, ip, _, _)| CctNode {
            id,
            parent,
            lm_id: if legacy { 0 } else { lm },
            ip: if legacy { 0x40_0000 + ip } else { ip },
            lush,
            flags: if v4 { 1 } else { 0 },
        })
        .collect();
    let header_epoch = (!v4).then(|| EpochHeader {
        flags: 0,
        ra_distance: if legacy { 1 } else { 0 },
        granularity: 1,
        nvpairs: vec![NvPair::new("TODO:epoch-name", "TODO:epoch-value")],
    });
    let values: Vec<u64> = if v4 {
        Vec::new()
    } else {
        rows.iter().flat_map(|r| [r.4, r.5.to_bits()]).collect()
    };
    let mut m = Measurement {
        version,
        header,
        epochs: vec![Epoch {
            header: header_epoch,
            metrics,
            loadmap,
            cct,
            values,
        }],
        ..Measurement::default()
    };
    if v4 {
        let mut s = SparseMetrics {
            id_tuple: vec![
                IdTupleEntry {
                    kind: 1,
                    physical: 0x11ac_0300,
                    logical: 0,
                },
                IdTupleEntry {
                    kind: 2 | (3 << 14),
                    physical: 1,
                    logical: 1,
                },
                IdTupleEntry {
                    kind: 3 | (3 << 14),
                    physical: 0,
                    logical: 0,
                },
            ],
            ..SparseMetrics::default()
        };
        for r in &rows[1..] {
            s.contexts.push(SparseContext {
                ctx: r.0 as u32,
                start: s.values.len() as u64,
            });
            s.values.push(SparseValue {
                value: r.4,
                metric: 0,
            });
            s.values.push(SparseValue {
                value: r.5.to_bits(),
                metric: 1,
            });
        }
        s.end = SparseContext {
            ctx: raw::CONTEXT_END,
            start: s.values.len() as u64,
        };
        m.sparse = Some(s);
        m.dictionary = standard_dictionary();
    }
    m
}

fn trace(data_centric: bool) -> Trace {
    Trace {
        version: TraceVersion::V0101B,
        flags: u64::from(data_centric),
        records: (0..6)
            .map(|i| TraceRecord {
                time: 1_714_000_000_000_000_000 + i * 5_000_000,
                ctx: [3, 4, 3, 2, 3, 4][i as usize],
                metric: data_centric.then_some((i % 2) as u32),
            })
            .collect(),
    }
}

/// Every testdata file and the bytes the writer makes for it.
fn expected() -> Vec<(&'static str, Vec<u8>)> {
    let mut out: Vec<(&'static str, Vec<u8>)> = [
        ("demo-02.00l.hpcrun", Version::V0200L),
        ("demo-01.98b.hpcrun", Version::V0198B),
        ("demo-02.00b.hpcrun", Version::V0200B),
        ("demo-02.00b-no-aux.hpcrun", Version::V0200BNoAux),
        ("demo-03.00b.hpcrun", Version::V0300B),
        ("demo-04.00b.hpcrun", Version::V0400B),
    ]
    .into_iter()
    .map(|(name, v)| (name, write_measurement(&sample(v)).unwrap()))
    .collect();
    out.push(("demo.hpctrace", write_trace(&trace(false))));
    out.push(("demo-datacentric.hpctrace", write_trace(&trace(true))));
    out
}

#[test]
fn testdata_files_are_what_the_writer_makes() {
    let bless = std::env::var_os("PROFCODEC_BLESS").is_some();
    for (name, bytes) in expected() {
        let path = dir().join(name);
        if bless {
            std::fs::write(&path, &bytes).unwrap();
        }
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(on_disk == bytes, "{name} differs from the writer's output");
    }
}

#[test]
fn testdata_files_read_back() {
    for v in Version::ALL {
        let m = sample(v);
        let back = read_measurement(&write_measurement(&m).unwrap()).unwrap();
        assert_eq!(back, m, "{v:?}");
        // Inclusive cycles at main: 3 + 7 + 1 million.
        assert_eq!(back.inclusive_sum(0, 1, 0), 11_000_000.0, "{v:?}");
    }
    let bytes = write_measurement(&sample(Version::V0400B)).unwrap();
    let v4 = V4View::parse(&bytes).unwrap();
    v4.validate().unwrap();
    assert_eq!(
        v4.context_values(1).collect::<Vec<_>>(),
        vec![
            (0, MetricValue::Int(7_000_000)),
            (1, MetricValue::Real(0.035))
        ]
    );
    for dc in [false, true] {
        let t = trace(dc);
        assert_eq!(read_trace(&write_trace(&t)).unwrap(), t);
    }
}
