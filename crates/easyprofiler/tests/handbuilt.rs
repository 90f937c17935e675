//! Files built field by field here (not by the crate's writer), checking what the converter's
//! JSON leaves out: context switches of every layout, values of every DataType, bookmarks, and
//! the tree rules (adoption, runtime names, ticks to ns, dropping and clamping, depth limit),
//! in both modes.

use profcodec_easyprofiler::{
    DataType, Error, Mode, Oddity, RecordBody, ValueData, parse, parse_with,
};

const SIG: u32 = 0x4561_7379;

/// A little-endian byte builder.
#[derive(Default)]
struct B(Vec<u8>);

impl B {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend(v);
        self
    }
    /// A u16 size prefix, then what `f` writes.
    fn sized(&mut self, f: impl FnOnce(&mut B)) -> &mut Self {
        let mut inner = B::default();
        f(&mut inner);
        self.u16(inner.0.len() as u16).bytes(&inner.0)
    }
    fn descriptor(&mut self, id: u32, ty: u8, name: &str) -> &mut Self {
        self.sized(|b| {
            b.u32(id).u32(10).u32(0xff00_ff00).u8(ty).u8(1);
            b.u16(name.len() as u16 + 1).bytes(name.as_bytes()).u8(0);
            b.bytes(b"f.cpp\0");
        })
    }
    /// A 1.3+ thread head: u64 id, name with its NUL, no context switches, `records` records.
    fn thread(&mut self, id: u64, name: &[u8], records: u32) -> &mut Self {
        self.u64(id).u16(name.len() as u16 + 1).bytes(name).u8(0);
        self.u32(0).u32(records)
    }
    fn block(&mut self, begin: u64, end: u64, id: u32, name: &str) -> &mut Self {
        self.sized(|b| {
            b.u64(begin).u64(end).u32(id).bytes(name.as_bytes()).u8(0);
        })
    }
}

/// Header of 2.1.0: pid, cpu_freq, begin, end, memory, desc memory, blocks, descs, threads,
/// bookmarks, padding.
#[allow(clippy::too_many_arguments)]
fn header21(
    b: &mut B,
    cpu: i64,
    begin: u64,
    blocks: u32,
    memory: u64,
    descs: u32,
    threads: u32,
    marks: u16,
) {
    b.u32(SIG)
        .u32(0x0201_0000)
        .u64(42)
        .u64(cpu as u64)
        .u64(begin)
        .u64(u64::MAX / 2);
    b.u64(memory)
        .u64(1000)
        .u32(blocks)
        .u32(descs)
        .u32(threads)
        .u16(marks)
        .u16(0);
}

#[test]
fn v120_context_switches_have_u32_ids_and_begin_end_tid_order() {
    let mut b = B::default();
    // 1.2.0: u32 pid, then the 1.x header.
    b.u32(SIG)
        .u32(0x0102_0000)
        .u32(0x1234)
        .u64(0)
        .u64(100)
        .u64(900);
    b.u32(3).u64(26 + 22 + 21).u32(1).u64(100);
    b.descriptor(0, 1, "blk");
    // Thread: u32 id, name, 2 context switches {begin, end, u32 tid, name}, 1 record.
    b.u32(77).u16(5).bytes(b"Main\0").u32(2);
    b.sized(|b| {
        b.u64(150).u64(160).u32(0xdead_beef).bytes(b"other\0");
    });
    b.sized(|b| {
        b.u64(170).u64(180).u32(5).bytes(b"x\0");
    });
    b.u32(1).block(200, 300, 0, "");
    let view = parse_with(&b.0, Mode::Strict).expect("parse");
    assert_eq!(view.header().pid, 0x1234);
    let model = view.to_model().expect("model");
    let t = &model.threads[0];
    assert_eq!(t.id, 77);
    assert_eq!(t.name.as_deref(), Some(&b"Main"[..]));
    assert_eq!(t.context_switches.len(), 2);
    let cs = &t.context_switches[0];
    assert_eq!((cs.begin, cs.end, cs.target_tid), (150, 160, 0xdead_beef));
    assert_eq!(cs.name, b"other");
    assert_eq!(t.context_switches[1].target_tid, 5);
    let tree = view.tree().expect("tree");
    assert!(tree.oddities.is_empty(), "{:?}", tree.oddities);
    assert_eq!(tree.threads[0].context_switches[1].begin, 170);
    // The record's block index comes after the two context switches.
    assert_eq!(tree.threads[0].block_index(0), 2);
    assert_eq!(model.to_bytes().expect("write"), b.0);
}

#[test]
fn v100_has_no_pid_and_v130_has_u64_ids() {
    let mut b = B::default();
    b.u32(SIG).u32(0x0100_0000).u64(0).u64(0).u64(900);
    b.u32(1).u64(21).u32(1).u64(100);
    b.descriptor(0, 1, "blk");
    b.u32(9).u16(0).u32(0).u32(1).block(1, 2, 0, "");
    let model = parse(&b.0).and_then(|v| v.to_model()).expect("1.0.0");
    assert_eq!((model.pid, model.threads[0].id), (0, 9));
    assert_eq!(model.threads[0].name, None);
    assert_eq!(model.to_bytes().expect("write"), b.0);

    let mut b = B::default();
    b.u32(SIG)
        .u32(0x0103_0000)
        .u64(u64::MAX - 1)
        .u64(0)
        .u64(0)
        .u64(900);
    b.u32(2).u64(21 + 31).u32(1).u64(100);
    b.descriptor(0, 1, "blk");
    b.u64(u64::MAX - 2).u16(1).u8(0).u32(1);
    b.sized(|b| {
        b.u64(5).u64(6).u64(u64::MAX - 3).bytes(b"target\0");
    });
    b.u32(1).block(1, 2, 0, "");
    let view = parse_with(&b.0, Mode::Strict).expect("1.3.0");
    let model = view.to_model().expect("model");
    assert_eq!(model.pid, u64::MAX - 1);
    assert_eq!(model.threads[0].id, u64::MAX - 2);
    assert_eq!(model.threads[0].name.as_deref(), Some(&b""[..]));
    assert_eq!(
        model.threads[0].context_switches[0].target_tid,
        u64::MAX - 3
    );
    assert_eq!(model.to_bytes().expect("write"), b.0);
}

/// A 2.0.1 file with one value record per (type, data) pair.
fn values_file(values: &[(u8, u8, Vec<u8>)]) -> Vec<u8> {
    let mut b = B::default();
    let memory: u64 = values.iter().map(|v| 34 + v.2.len() as u64).sum();
    b.u32(SIG).u32(0x0200_0001).u64(1).u64(0).u64(0).u64(900);
    b.u64(memory).u64(100).u32(values.len() as u32).u32(1);
    b.descriptor(0, 2, "val");
    b.u64(1).u16(0).u32(0).u32(values.len() as u32);
    for (i, (ty, arr, data)) in values.iter().enumerate() {
        b.sized(|b| {
            b.u64(10 + i as u64).u64(10 + i as u64).u32(0).u8(0).u8(0);
            b.u16(data.len() as u16)
                .u8(*ty)
                .u8(*arr)
                .u64(0xabc0 + i as u64)
                .bytes(data);
        });
    }
    b.0
}

#[test]
fn values_of_every_data_type() {
    let values: Vec<(u8, u8, Vec<u8>)> = vec![
        (0, 0, vec![1]),
        (1, 0, vec![b'c']),
        (2, 0, vec![0xff]),
        (3, 0, vec![200]),
        (4, 0, (-2i16).to_le_bytes().to_vec()),
        (5, 0, 65000u16.to_le_bytes().to_vec()),
        (6, 0, (-70000i32).to_le_bytes().to_vec()),
        (7, 0, 4_000_000_000u32.to_le_bytes().to_vec()),
        (8, 0, (-5i64).to_le_bytes().to_vec()),
        (9, 0, u64::MAX.to_le_bytes().to_vec()),
        (10, 0, 1.5f32.to_le_bytes().to_vec()),
        (11, 0, (-2.25f64).to_le_bytes().to_vec()),
        (
            6,
            1,
            [1i32, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
        (12, 1, b"text\0".to_vec()),
        (12, 1, b"str".to_vec()),
    ];
    let data = values_file(&values);
    let view = parse_with(&data, Mode::Strict).expect("parse");
    let model = view.to_model().expect("model");
    let decoded: Vec<ValueData> = model.threads[0]
        .records
        .iter()
        .map(|r| match &r.body {
            RecordBody::Value(v) => v.decode().expect("known type"),
            RecordBody::Named(_) => panic!("value expected"),
        })
        .collect();
    assert_eq!(
        decoded,
        vec![
            ValueData::Bool(vec![true]),
            ValueData::Char(vec![b'c' as i8]),
            ValueData::Int8(vec![-1]),
            ValueData::Uint8(vec![200]),
            ValueData::Int16(vec![-2]),
            ValueData::Uint16(vec![65000]),
            ValueData::Int32(vec![-70000]),
            ValueData::Uint32(vec![4_000_000_000]),
            ValueData::Int64(vec![-5]),
            ValueData::Uint64(vec![u64::MAX]),
            ValueData::Float(vec![1.5]),
            ValueData::Double(vec![-2.25]),
            ValueData::Int32(vec![1, 2, 3]),
            ValueData::String(b"text\0".to_vec()),
            ValueData::String(b"str".to_vec()),
        ]
    );
    let RecordBody::Value(v) = &model.threads[0].records[12].body else {
        panic!("value")
    };
    assert!(v.is_array());
    assert_eq!(v.kind(), Some(DataType::Int32));
    assert_eq!(v.value_id, 0xabc0 + 12);
    // Values are leaves of the tree, with begin == end.
    let tree = view.tree().expect("tree");
    assert_eq!(tree.threads[0].roots.len(), values.len());
    assert_eq!(model.to_bytes().expect("write"), data);
}

#[test]
fn value_data_size_must_match_the_record() {
    let mut data = values_file(&[(6, 0, vec![1, 2, 3, 4])]);
    // The data_size field of the one value record: after header (64), descriptor, thread head.
    let pos = data.len() - 4 - 14 + 2;
    data[pos] = 5;
    assert!(matches!(
        parse(&data).and_then(|v| v.to_model()),
        Err(Error::ValueSize { found: 5, .. })
    ));
}

/// A 2.1.0 capture of one thread holding `records` (begin, end, name), descriptor 0 a block.
fn blocks_file(cpu: i64, begin: u64, records: &[(u64, u64, &str)], blocks: Option<u32>) -> Vec<u8> {
    let mut b = B::default();
    let memory: u64 = records.iter().map(|r| 21 + r.2.len() as u64).sum();
    let count = blocks.unwrap_or(records.len() as u32);
    header21(&mut b, cpu, begin, count, memory.max(1), 1, 1, 0);
    b.descriptor(0, 1, "blk");
    b.thread(1, b"T", records.len() as u32);
    for r in records {
        b.block(r.0, r.1, 0, r.2);
    }
    b.u32(SIG);
    b.0
}

#[test]
fn adoption_follows_the_cpp_rule() {
    // Post-order: a(10..20), b(25..30), c(40..50) then p(5..60) adopts all three; then
    // q(55..58), which starts after p begins but before p ends: q adopts p (the last top-level
    // entry is always adopted), even though q is inside p in time.
    let data = blocks_file(
        0,
        0,
        &[
            (10, 20, ""),
            (25, 30, ""),
            (40, 50, ""),
            (5, 60, ""),
            (55, 58, ""),
        ],
        None,
    );
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    let t = &tree.threads[0];
    assert_eq!(t.roots, vec![4]);
    assert_eq!(t.children(4), vec![3]);
    assert_eq!(t.children(3), vec![0, 1, 2]);
    // Overlap is nesting for the C++ reader: x(30..40) then y(35..45): y begins before x ends,
    // so y adopts x; then z(20..50) adopts y.
    let data = blocks_file(0, 0, &[(30, 40, ""), (35, 45, ""), (20, 50, "")], None);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    assert_eq!(tree.threads[0].children(2), vec![1]);
    assert_eq!(tree.threads[0].children(1), vec![0]);
    // Only begin times are compared when walking back: a(10..20), b(30..40), c(12..35): c
    // adopts b (the last) but not a (12 > 10); w(11..50) adopts c but not a (11 > 10), though
    // w and a overlap.
    let data = blocks_file(
        0,
        0,
        &[(10, 20, ""), (30, 40, ""), (12, 35, ""), (11, 50, "")],
        None,
    );
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    assert_eq!(tree.threads[0].children(2), vec![1]);
    assert_eq!(tree.threads[0].roots, vec![0, 3]);
    // A later sibling that begins before an earlier one's begin is not adopted twice:
    // s1(10..20), s2(30..40), w(15..45): w adopts s2 always, s1 not (15 > 10).
    let data = blocks_file(0, 0, &[(10, 20, ""), (30, 40, ""), (15, 45, "")], None);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    assert_eq!(tree.threads[0].roots, vec![0, 2]);
    assert_eq!(tree.threads[0].children(2), vec![1]);
}

#[test]
fn ticks_become_ns_and_early_records_are_dropped_or_clamped() {
    // cpu_freq 2e9: ns = ticks / 2. begin 1000 ticks = 500 ns.
    let data = blocks_file(
        2_000_000_000,
        1000,
        &[(100, 900, ""), (800, 1400, ""), (1200, 1600, "")],
        Some(2),
    );
    let view = parse_with(&data, Mode::Strict).expect("parse");
    let tree = view.tree().expect("the kept count (2) matches the header");
    assert_eq!(tree.begin_time, 500);
    let t = &tree.threads[0];
    assert_eq!(t.nodes.len(), 2);
    assert_eq!((t.nodes[0].begin, t.nodes[0].end), (500, 700));
    assert_eq!((t.nodes[1].begin, t.nodes[1].end), (600, 800));
    // cpu_freq 1e9 means ns as well as 0.
    let data = blocks_file(1_000_000_000, 0, &[(123, 456, "")], None);
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    assert_eq!(tree.threads[0].nodes[0].end, 456);
    // Counting every record while some are dropped: the C++ reader refuses the file.
    let data = blocks_file(0, 1000, &[(100, 900, ""), (1000, 1100, "")], None);
    let e = parse_with(&data, Mode::Strict).and_then(|v| v.tree());
    assert!(matches!(
        e,
        Err(Error::Refused(Oddity::BlocksCount {
            header: 2,
            found: 1,
            ..
        }))
    ));
    let tree = parse(&data).and_then(|v| v.tree()).expect("tolerant");
    assert!(matches!(tree.oddities[..], [Oddity::BlocksCount { .. }]));
}

#[test]
fn runtime_names_get_synthetic_descriptors_by_name() {
    let data = blocks_file(
        0,
        0,
        &[(1, 2, "alpha"), (3, 4, "beta"), (5, 6, "alpha"), (7, 8, "")],
        None,
    );
    let tree = parse(&data).and_then(|v| v.tree()).expect("tree");
    let ids: Vec<u32> = tree.threads[0].nodes.iter().map(|n| n.descriptor).collect();
    assert_eq!(ids, vec![1, 2, 1, 0]);
    let names: Vec<&[u8]> = tree
        .descriptors()
        .map(|d| d.expect("d").name().as_bytes())
        .collect();
    assert_eq!(names, vec![&b"blk"[..], b"alpha", b"beta"]);
}

#[test]
fn depth_limit_254() {
    let nest = |depth: u64| -> Vec<u8> {
        // Innermost first (post-order): block k spans (k, 1000 - k) for k = depth-1 .. 0.
        let recs: Vec<(u64, u64, &str)> = (0..depth).rev().map(|k| (k + 1, 1000 - k, "")).collect();
        blocks_file(0, 0, &recs, None)
    };
    // 255 levels: the outermost block has depth 254, which the C++ reader still accepts.
    assert!(
        parse_with(&nest(255), Mode::Strict)
            .and_then(|v| v.tree())
            .is_ok()
    );
    let deep = nest(256);
    assert!(matches!(
        parse_with(&deep, Mode::Strict).and_then(|v| v.tree()),
        Err(Error::Refused(Oddity::DepthLimit { .. }))
    ));
    let tree = parse(&deep)
        .and_then(|v| v.tree())
        .expect("tolerant reads deeper trees");
    assert!(matches!(tree.oddities[..], [Oddity::DepthLimit { .. }]));
    assert_eq!(tree.threads[0].roots.len(), 1);
}

#[test]
fn zero_blocks_in_2_1_is_tolerated_and_refused_when_strict() {
    let mut b = B::default();
    header21(&mut b, 0, 0, 0, 0, 1, 1, 0);
    b.descriptor(0, 1, "blk");
    b.thread(1, b"T", 0).u32(SIG);
    let view = parse(&b.0).expect("tolerant");
    let tree = view.tree().expect("tree");
    assert!(
        tree.oddities
            .iter()
            .any(|o| matches!(o, Oddity::ZeroCounter { .. }))
    );
    assert_eq!(tree.threads[0].nodes.len(), 0);
    assert!(matches!(
        parse_with(&b.0, Mode::Strict),
        Err(Error::Refused(Oddity::ZeroCounter {
            what: "header blocks_count",
            ..
        }))
    ));
    assert_eq!(
        view.to_model().expect("model").to_bytes().expect("write"),
        b.0
    );
}

#[test]
fn bookmarks_and_end_marks() {
    let mut b = B::default();
    header21(&mut b, 0, 0, 1, 21, 1, 1, 2);
    b.descriptor(0, 1, "blk");
    b.thread(1, b"T", 1).block(1, 2, 0, "").u32(SIG);
    b.sized(|b| {
        b.u64(1500).u32(0xff11_2233).bytes(b"note\0");
    });
    b.sized(|b| {
        b.u64(1600).u32(0).u8(0);
    });
    b.u32(SIG);
    let view = parse_with(&b.0, Mode::Strict).expect("parse");
    assert!(view.tree().expect("tree").oddities.is_empty());
    let model = view.to_model().expect("model");
    assert_eq!(model.bookmarks.len(), 2);
    assert_eq!(model.bookmarks[0].text, b"note");
    assert_eq!(
        (model.bookmarks[1].position, model.bookmarks[1].text.len()),
        (1600, 0)
    );
    assert_eq!(model.to_bytes().expect("write"), b.0);

    // Without the final signature the C++ reader still reads it; we say so.
    let short = &b.0[..b.0.len() - 4];
    let tree = parse(short).and_then(|v| v.tree()).expect("tolerant");
    assert!(matches!(tree.oddities[..], [Oddity::MissingEndMark { .. }]));
    let model = parse(short).and_then(|v| v.to_model()).expect("model");
    assert_eq!(model.to_bytes().expect("write"), short);
    // A wrong signature is refused in both modes.
    let mut bad = b.0.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    assert!(matches!(
        parse(&bad).and_then(|v| v.tree()),
        Err(Error::BadSignature { .. })
    ));
}

#[test]
fn versions_above_2_1_read_as_2_1_and_below_0_1_are_refused() {
    let mut data = blocks_file(0, 0, &[(1, 2, "")], None);
    data[4..8].copy_from_slice(&0x0305_0007u32.to_le_bytes());
    let view = parse_with(&data, Mode::Strict).expect("3.5.7");
    assert_eq!(view.header().version.to_string(), "3.5.7");
    assert_eq!(view.tree().expect("tree").threads[0].nodes.len(), 1);
    data[4..8].copy_from_slice(&0x0000_ffffu32.to_le_bytes());
    assert!(matches!(
        parse(&data),
        Err(Error::UnsupportedVersion { .. })
    ));
}

#[test]
fn sections_with_the_same_thread_id_merge() {
    let mut b = B::default();
    header21(&mut b, 0, 0, 2, 42, 1, 2, 0);
    b.descriptor(0, 1, "blk");
    b.thread(1, b"A", 1).block(10, 20, 0, "");
    b.u64(1).u16(0).u32(0).u32(1).block(5, 30, 0, "");
    b.u32(SIG);
    let tree = parse_with(&b.0, Mode::Strict)
        .and_then(|v| v.tree())
        .expect("tree");
    assert_eq!(tree.threads.len(), 1);
    let t = &tree.threads[0];
    assert_eq!(t.name, b"A");
    assert_eq!(t.roots, vec![1]);
    assert_eq!(t.children(1), vec![0]);
}

#[test]
fn strict_refuses_what_the_cpp_reader_refuses() {
    // Records larger than memory_size.
    let mut data = blocks_file(0, 0, &[(1, 2, "")], None);
    data[40..48].copy_from_slice(&20u64.to_le_bytes());
    assert!(matches!(
        parse_with(&data, Mode::Strict).and_then(|v| v.tree()),
        Err(Error::Refused(Oddity::MemorySizeExceeded { .. }))
    ));
    // Non-zero padding.
    let mut data = blocks_file(0, 0, &[(1, 2, "")], None);
    data[70] = 1;
    assert!(matches!(
        parse_with(&data, Mode::Strict),
        Err(Error::Refused(Oddity::NonZeroPadding { .. }))
    ));
    assert!(parse(&data).is_ok());
    // A record naming a missing descriptor is an error in both modes.
    let mut data = blocks_file(0, 0, &[(1, 2, "")], None);
    let n = data.len();
    data[n - 4 - 1 - 4] = 9;
    let e = parse(&data).and_then(|v| v.tree()).unwrap_err();
    assert!(matches!(e, Error::BadDescriptorId { id: 9, .. }), "{e}");
    assert!(e.to_string().contains("at byte 0x"));
}

#[test]
fn truncated_records_yield_what_came_before() {
    let data = blocks_file(0, 0, &[(1, 2, ""), (3, 4, ""), (5, 6, "")], None);
    // Cut inside the third record.
    let cut = &data[..data.len() - 4 - 5];
    let view = parse(cut).expect("header");
    let thread = view.threads().next().expect("one").expect("thread");
    let got: Vec<_> = thread.records().collect();
    assert_eq!(got.len(), 3);
    assert!(got[0].is_ok() && got[1].is_ok());
    assert!(matches!(got[2], Err(Error::Truncated(_))));
}

#[test]
fn a_tree_built_in_reused_buffers_is_the_same() {
    let data = blocks_file(0, 0, &[(10, 20, ""), (25, 30, "x"), (5, 60, "")], None);
    let view = parse(&data).expect("parse");
    let first = view.tree().expect("tree");
    let nodes = first.threads[0].nodes.clone();
    let again = view.tree_with(first.into_buffers()).expect("tree again");
    assert_eq!(again.threads[0].nodes, nodes);
    assert_eq!(again.threads[0].roots, vec![2]);
}
