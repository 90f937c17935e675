//! Files of the versions no public sample exists for (02.00l, 01.98b, 02.00b with and without the
//! auxiliary metric fields, 03.00b), built here byte by byte from the grammar of
//! the crate's `format` documentation (not with the crate's writer), read back with every
//! field checked, and then compared with what the writer makes of the model.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use profcodec_hpcrun::*;

/// A byte builder in one byte order: the primitives of the crate's `format` docs.
struct B {
    v: Vec<u8>,
    le: bool,
}

impl B {
    fn new(le: bool, magic: &[u8]) -> Self {
        B {
            v: magic.to_vec(),
            le,
        }
    }
    /// An integer in this builder's byte order, from its two encodings.
    fn int<const N: usize>(&mut self, le: [u8; N], be: [u8; N]) -> &mut Self {
        self.v.extend_from_slice(if self.le { &le } else { &be });
        self
    }
    fn u16(&mut self, x: u16) -> &mut Self {
        self.int(x.to_le_bytes(), x.to_be_bytes())
    }
    fn u32(&mut self, x: u32) -> &mut Self {
        self.int(x.to_le_bytes(), x.to_be_bytes())
    }
    fn u64(&mut self, x: u64) -> &mut Self {
        self.int(x.to_le_bytes(), x.to_be_bytes())
    }
    fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.v.extend_from_slice(bytes);
        self
    }
    /// `str` = u32 length + bytes, no NUL.
    fn s(&mut self, text: &str) -> &mut Self {
        self.u32(text.len() as u32).raw(text.as_bytes())
    }
    /// `nvpairs` = u32 count, then (str, str) pairs.
    fn nv(&mut self, pairs: &[(&str, &str)]) -> &mut Self {
        self.u32(pairs.len() as u32);
        for (n, v) in pairs {
            self.s(n).s(v);
        }
        self
    }
}

const REAL: u64 = 0x4004_0000_0000_0000; // 2.5
const HEADER: &[(&str, &str)] = &[
    ("program-name", "a.out"),
    ("mpi-rank", "3"),
    ("thread-id", "1"),
];

fn check_header(m: &Measurement) {
    assert_eq!(m.header.len(), 3);
    assert_eq!(m.header[0], NvPair::new("program-name", "a.out"));
    assert_eq!(m.header_value("mpi-rank").unwrap(), "3");
    assert_eq!(m.header_value("thread-id").unwrap(), "1");
    assert!(m.dictionary.is_empty() && m.sparse.is_none());
}

/// Writing the model gives the hand-built bytes back.
fn check_writer(m: &Measurement, bytes: &[u8]) {
    assert_eq!(write_measurement(m).unwrap(), bytes, "{:?}", m.version);
}

/// 02.00l (the given spec; write_data.c and cct.c at e149e9d23), little-endian.
fn build_0200l() -> Vec<u8> {
    let mut b = B::new(true, b"HPCRUN____02.00l");
    b.nv(HEADER);
    // epoch 1: tag, u64 flags, u32 ra_distance, u64 granularity, nvpairs
    b.raw(b"EPOCH___")
        .u64(0)
        .u32(1)
        .u64(4)
        .nv(&[("LIP-size", "2")]);
    // metric table: u32 n, (str name, u64 flags, u64 period)
    b.u32(2).s("PAPI_TOT_CYC").u64(0).u64(1_000_000);
    b.s("WALLCLOCK").u64(1 << 2).u64(5000);
    // loadmap: u32 n, (str name, u64 vaddr, u64 mapaddr)
    b.u32(1).s("/bin/a.out").u64(0x40_0000).u64(0x1000);
    // cct: u64 n, (u32 id, u32 parent, u32 lush_assoc, u64 ip, u64 lip[2], u64 metric[2])
    b.u64(3);
    b.u32(1)
        .u32(0)
        .u32(0)
        .u64(0x40_0100)
        .u64(0)
        .u64(0)
        .u64(10)
        .u64(0);
    b.u32(2)
        .u32(1)
        .u32(0x0100_0002)
        .u64(0x40_0200)
        .u64(7)
        .u64(8)
        .u64(5)
        .u64(REAL);
    b.u32((-3i32) as u32)
        .u32(2)
        .u32(0)
        .u64(0x40_0300)
        .u64(0)
        .u64(0)
        .u64(1)
        .u64(0);
    // epoch 2: empty tables
    b.raw(b"EPOCH___").u64(0).u32(1).u64(4).nv(&[]);
    b.u32(0).u32(0).u64(0);
    b.v
}

#[test]
fn v0200l_every_field() {
    let bytes = build_0200l();
    assert_eq!(detect_version(&bytes).unwrap(), Version::V0200L);
    let m = read_measurement(&bytes).unwrap();
    assert_eq!(m.version, Version::V0200L);
    check_header(&m);
    assert_eq!(m.epochs.len(), 2);
    let e = &m.epochs[0];
    let h = e.header.as_ref().unwrap();
    assert_eq!((h.flags, h.ra_distance, h.granularity), (0, 1, 4));
    assert_eq!(h.nvpairs, vec![NvPair::new("LIP-size", "2")]);
    assert_eq!(e.metrics.len(), 2);
    assert_eq!(e.metrics[0].name, "PAPI_TOT_CYC");
    assert_eq!(e.metrics[0].flags, MetricFlags::Legacy(0));
    assert_eq!(e.metrics[0].period, 1_000_000);
    assert_eq!(e.metrics[0].value_format(), ValueFormat::Int);
    assert_eq!(e.metrics[1].name, "WALLCLOCK");
    assert_eq!(e.metrics[1].flags, MetricFlags::Legacy(4));
    assert_eq!(e.metrics[1].period, 5000);
    assert_eq!(e.metrics[1].value_format(), ValueFormat::Real);
    assert!(
        e.metrics
            .iter()
            .all(|d| d.aux.is_none() && d.description.0.is_empty())
    );
    assert_eq!(
        e.loadmap,
        vec![LoadModule {
            id: 0,
            name: "/bin/a.out".into(),
            flags: 0,
            vaddr: 0x40_0000,
            mapaddr: 0x1000
        }]
    );
    assert_eq!(e.cct.len(), 3);
    assert_eq!(
        e.cct[1],
        CctNode {
            id: 2,
            parent: 1,
            lm_id: 0,
            ip: 0x40_0200,
            lush: Some(Lush {
                assoc: 0x0100_0002,
                lip: [7, 8]
            }),
            flags: 0
        }
    );
    assert_eq!(e.cct[2].id, -3);
    assert_eq!(e.cct[0].lush, Some(Lush::default()));
    assert_eq!(e.values, vec![10, 0, 5, REAL, 1, 0]);
    assert_eq!(e.value(1, 1), Some(MetricValue::Real(2.5)));
    assert_eq!(e.value(1, 0), Some(MetricValue::Int(5)));
    // Inclusive cycles at the root: 10 + 5 + 1.
    assert_eq!(m.inclusive_sum(0, 1, 0), 16.0);
    let index = CctIndex::new(&e.cct);
    assert_eq!(index.path_to_root(2), vec![2, 1, 0]);
    assert_eq!(index.children(0), &[1]);
    let e2 = &m.epochs[1];
    assert!(e2.metrics.is_empty() && e2.loadmap.is_empty() && e2.cct.is_empty());
    assert!(e2.header.as_ref().unwrap().nvpairs.is_empty());
    check_writer(&m, &bytes);
}

/// 01.98b (hpcrun-fmt.c at 3e304bf29 .. df8ab07f3): the 02.00l tables, big-endian, LUSH fields
/// only under epoch flag bit 0.
fn build_0198b(lush: bool) -> Vec<u8> {
    let mut b = B::new(false, b"HPCRUN-profile____01.98b");
    b.nv(HEADER);
    b.raw(b"EPOCH___")
        .u64(u64::from(lush))
        .u32(1)
        .u64(4)
        .nv(&[]);
    b.u32(1).s("WALLCLOCK").u64(1 << 2).u64(5000);
    b.u32(1).s("/lib/libc.so").u64(0x7f00_0000).u64(0);
    b.u64(2);
    b.u32(1).u32(0);
    if lush {
        b.u32(9);
    }
    b.u64(0x7f00_0010);
    if lush {
        b.u64(1).u64(2);
    }
    b.u64(REAL);
    b.u32((-2i32) as u32).u32(1);
    if lush {
        b.u32(0);
    }
    b.u64(0x7f00_0020);
    if lush {
        b.u64(0).u64(0);
    }
    b.u64(0);
    b.v
}

#[test]
fn v0198b_every_field_with_and_without_lush() {
    for lush in [false, true] {
        let bytes = build_0198b(lush);
        let m = read_measurement(&bytes).unwrap();
        assert_eq!(m.version, Version::V0198B);
        check_header(&m);
        let e = &m.epochs[0];
        let h = e.header.as_ref().unwrap();
        assert_eq!(
            (h.flags, h.ra_distance, h.granularity),
            (u64::from(lush), 1, 4)
        );
        assert_eq!(h.is_logical_unwind(), lush);
        assert_eq!(e.metrics[0].name, "WALLCLOCK");
        assert_eq!(e.metrics[0].flags, MetricFlags::Legacy(4));
        assert_eq!(e.metrics[0].period, 5000);
        assert_eq!(e.loadmap[0].name, "/lib/libc.so");
        assert_eq!((e.loadmap[0].vaddr, e.loadmap[0].mapaddr), (0x7f00_0000, 0));
        assert_eq!(e.cct.len(), 2);
        assert_eq!(
            (e.cct[0].id, e.cct[0].parent, e.cct[0].ip),
            (1, 0, 0x7f00_0010)
        );
        assert_eq!(
            (e.cct[1].id, e.cct[1].parent, e.cct[1].ip),
            (-2, 1, 0x7f00_0020)
        );
        let expect = lush.then_some(Lush {
            assoc: 9,
            lip: [1, 2],
        });
        assert_eq!(e.cct[0].lush, expect);
        assert_eq!(e.values, vec![REAL, 0]);
        assert_eq!(e.value(0, 0), Some(MetricValue::Real(2.5)));
        check_writer(&m, &bytes);
    }
}

/// 02.00b (release-2018.09 with `aux`, 2016.12/2017.06 without) and 03.00b (`aux` always).
fn build_0200b_family(magic: &[u8], aux: bool, lush: bool) -> Vec<u8> {
    let mut b = B::new(false, magic);
    b.nv(HEADER);
    // epoch: tag, u64 flags, u64 granularity, u32 (written 0), nvpairs
    b.raw(b"EPOCH___").u64(u64::from(lush)).u64(1).u32(0);
    b.nv(&[("TODO:epoch-name", "TODO:epoch-value")]);
    // metric table: u32 n, descriptors
    b.u32(2);
    for (name, fmt, partner) in [("CPUTIME (usec)", 1u8, 1u16), ("REALTIME (sec)", 2, 0)] {
        b.s(name).s("a description");
        // flags[16]: ty, valTy, valFmt, pad, partner (host order, little-endian), show,
        // showPercent, u64 unused (host order)
        b.raw(&[1, 2, fmt, 0])
            .raw(&partner.to_le_bytes())
            .raw(&[1, 0])
            .raw(&[0; 8]);
        b.u64(5000).s("$1*2").s("%.2f");
        if aux {
            // u16 is_frequency, u16 is_multiplexed, f64 threshold_mean, u64 num_samples
            b.u16(1).u16(0).u64(3.5f64.to_bits()).u64(42);
        }
    }
    // loadmap: u32 n, (u16 id, str name, u64 flags)
    b.u32(2)
        .u16(1)
        .s("/bin/a.out")
        .u64(1)
        .u16(2)
        .s("/lib/libm.so")
        .u64(0);
    // cct: u64 n, (i32 id, i32 parent, [u32 assoc], u16 lm_id, u64 lm_ip, [lip], u64 values[2])
    b.u64(2);
    for (id, parent, lm, ip, v0, v1) in [
        (1i32, 0i32, 1u16, 0x1234u64, 7u64, REAL),
        (-2, 1, 2, 0x10, 0, 0),
    ] {
        b.u32(id as u32).u32(parent as u32);
        if lush {
            b.u32(5);
        }
        b.u16(lm).u64(ip);
        if lush {
            b.u64(3).u64(4);
        }
        b.u64(v0).u64(v1);
    }
    b.v
}

fn check_0200b_family(bytes: &[u8], version: Version, lush: bool) {
    let m = read_measurement(bytes).unwrap();
    assert_eq!(m.version, version);
    check_header(&m);
    assert_eq!(m.epochs.len(), 1);
    let e = &m.epochs[0];
    let h = e.header.as_ref().unwrap();
    assert_eq!(
        (h.flags, h.granularity, h.ra_distance),
        (u64::from(lush), 1, 0)
    );
    assert_eq!(
        h.nvpairs,
        vec![NvPair::new("TODO:epoch-name", "TODO:epoch-value")]
    );
    assert_eq!(e.metrics.len(), 2);
    let d = &e.metrics[0];
    assert_eq!(d.name, "CPUTIME (usec)");
    assert_eq!(d.description, "a description");
    assert_eq!(
        d.flags,
        MetricFlags::Fields(MetricFlagFields {
            kind: 1,
            value_type: 2,
            value_format: 1,
            move2proc: 0,
            partner: 1,
            show: 1,
            show_percent: 0,
            unused: 0
        })
    );
    assert_eq!(
        (d.period, d.formula.as_bytes(), d.format.as_bytes()),
        (5000, &b"$1*2"[..], &b"%.2f"[..])
    );
    assert_eq!(d.value_format(), ValueFormat::Int);
    assert_eq!(e.metrics[1].value_format(), ValueFormat::Real);
    let aux = version.has_metric_aux().then_some(MetricAux {
        is_frequency: 1,
        is_multiplexed: 0,
        threshold_mean: 3.5,
        num_samples: 42,
    });
    assert!(e.metrics.iter().all(|d| d.aux == aux));
    assert_eq!(e.loadmap.len(), 2);
    assert_eq!((e.loadmap[0].id, e.loadmap[0].flags), (1, 1));
    assert_eq!(
        (e.loadmap[1].id, e.loadmap[1].name.as_bytes()),
        (2, &b"/lib/libm.so"[..])
    );
    let lush_fields = lush.then_some(Lush {
        assoc: 5,
        lip: [3, 4],
    });
    assert_eq!(
        e.cct,
        vec![
            CctNode {
                id: 1,
                parent: 0,
                lm_id: 1,
                ip: 0x1234,
                lush: lush_fields,
                flags: 0
            },
            CctNode {
                id: -2,
                parent: 1,
                lm_id: 2,
                ip: 0x10,
                lush: lush_fields,
                flags: 0
            },
        ]
    );
    assert_eq!(e.values, vec![7, REAL, 0, 0]);
    assert_eq!(
        m.node_values(0, 1),
        vec![(0, MetricValue::Int(7)), (1, MetricValue::Real(2.5))]
    );
    check_writer(&m, bytes);
}

#[test]
fn v0200b_with_auxiliary_fields() {
    for lush in [false, true] {
        let bytes = build_0200b_family(b"HPCRUN-profile____02.00b", true, lush);
        check_0200b_family(&bytes, Version::V0200B, lush);
    }
}

#[test]
fn v0200b_without_auxiliary_fields() {
    for lush in [false, true] {
        let bytes = build_0200b_family(b"HPCRUN-profile____02.00b", false, lush);
        check_0200b_family(&bytes, Version::V0200BNoAux, lush);
    }
}

#[test]
fn v0300b_every_field() {
    let bytes = build_0200b_family(b"HPCRUN-profile____03.00b", true, false);
    check_0200b_family(&bytes, Version::V0300B, false);
}

#[test]
fn migration_to_04_00_keeps_values_and_reports_losses() {
    let m = read_measurement(&build_0200l()).unwrap();
    let (v4, dropped) = migrate::to_v4(&m);
    assert_eq!(v4.version, Version::V0400B);
    assert!(dropped.iter().any(|d| d.contains("epochs 2..2")));
    assert!(dropped.iter().any(|d| d.contains("LUSH")));
    assert!(dropped.iter().any(|d| d.contains("vaddr")));
    let bytes = write_measurement(&v4).unwrap();
    let view = V4View::parse(&bytes).unwrap();
    view.validate().unwrap();
    assert!(view.is_canonical());
    let back = view.to_model().unwrap();
    assert_eq!(back, v4);
    assert_eq!(
        back.node_values(0, 2),
        vec![(0, MetricValue::Int(5)), (1, MetricValue::Real(2.5))]
    );
    assert_eq!(back.inclusive_sum(0, 1, 0), 16.0);
    let ids = &back.sparse.as_ref().unwrap().id_tuple;
    assert_eq!(
        ids.iter()
            .map(|i| (i.kind_id(), i.logical))
            .collect::<Vec<_>>(),
        vec![(2, 3), (3, 1)]
    );

    let m = read_measurement(&build_0200b_family(
        b"HPCRUN-profile____02.00b",
        false,
        false,
    ))
    .unwrap();
    let (v4, _) = migrate::to_v4(&m);
    let back = read_measurement(&write_measurement(&v4).unwrap()).unwrap();
    assert!(back.epochs[0].metrics.iter().all(|d| d.aux.is_some()));
    assert_eq!(back.epochs[0].loadmap[1].id, 2);
}
