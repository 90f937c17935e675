//! Round trips model -> bytes -> model for every version the writer supports (1.0.0 without
//! pid, 1.2.0 with u32 ids, 1.3.0, 2.0.1, 2.1.0 and a later version read as 2.1), and the GUI
//! convention keeping the block tree.

use profcodec_easyprofiler::{
    BlockTree, Bookmark, Capture, ContextSwitch, Convention, Descriptor, Mode, Record, RecordBody,
    Tail, Thread, Value, Version, parse, parse_with,
};
use proptest::prelude::*;

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn capture(version: Version) -> impl Strategy<Value = Capture> {
    let layout = version.layout();
    let wide = layout.wide_ids();
    let values = layout.has_values();
    let v21 = layout >= profcodec_easyprofiler::Layout::V2_1;
    let id_max = if wide { u64::MAX } else { u64::from(u32::MAX) };
    let pid = match layout {
        profcodec_easyprofiler::Layout::V1NoPid => Just(0u64).boxed(),
        _ => (0..=id_max).boxed(),
    };
    let descriptor = (
        any::<i32>(),
        any::<u32>(),
        0u8..if values { 3 } else { 2 },
        any::<u8>(),
        bytes(12),
        bytes(12),
    );
    let descriptors = prop::collection::vec(prop::option::weighted(0.9, descriptor), 1..6);
    (
        pid,
        any::<i64>(),
        any::<u64>(),
        any::<u64>(),
        descriptors,
        any::<bool>(),
    )
        .prop_flat_map(move |(pid, cpu, begin, end, descs, gui)| {
            let descs: Vec<Option<Box<Descriptor>>> = descs
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    d.map(|(line, color, block_type, status, name, file)| {
                        Box::new(Descriptor {
                            id: i as u32,
                            line,
                            color,
                            block_type,
                            status,
                            name,
                            file,
                        })
                    })
                })
                .collect();
            let present: Vec<(u32, u8)> = descs
                .iter()
                .flatten()
                .map(|d| (d.id, d.block_type))
                .collect();
            let present = if present.is_empty() {
                vec![(u32::MAX, 1)]
            } else {
                present
            };
            let record = (
                prop::sample::select(present),
                any::<u64>(),
                any::<u64>(),
                bytes(6),
                0u8..16,
                any::<u8>(),
                any::<u64>(),
            )
                .prop_map(move |((id, ty), b, e, data, dt, arr, vid)| Record {
                    begin: b,
                    end: e,
                    descriptor: id,
                    body: if ty == 2 && values {
                        RecordBody::Value(Value {
                            stub: [0, 0],
                            data_type: dt,
                            is_array: arr,
                            value_id: vid,
                            data,
                        })
                    } else {
                        RecordBody::Named(data)
                    },
                });
            let cs = (any::<u64>(), any::<u64>(), 0..=id_max, bytes(6)).prop_map(
                |(begin, end, target_tid, name)| ContextSwitch {
                    begin,
                    end,
                    target_tid,
                    name,
                },
            );
            let thread = (
                0..=id_max,
                prop::option::of(bytes(8)),
                prop::collection::vec(cs, 0..4),
                prop::collection::vec(record, 0..10),
            )
                .prop_map(|(id, name, context_switches, records)| Thread {
                    id,
                    name,
                    context_switches,
                    records,
                });
            let bookmark =
                (any::<u64>(), any::<u32>(), bytes(8)).prop_map(|(position, color, text)| {
                    Bookmark {
                        position,
                        color,
                        text,
                    }
                });
            let bookmarks = if v21 {
                prop::collection::vec(bookmark, 0..3).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            let trailing = if v21 {
                bytes(6).boxed()
            } else {
                Just(Vec::new()).boxed()
            };
            (
                Just(descs),
                prop::collection::vec(thread, 0..4),
                bookmarks,
                trailing,
            )
                .prop_map(move |(descriptors, threads, bookmarks, trailing)| {
                    let mut c = Capture {
                        version,
                        pid,
                        cpu_frequency: cpu,
                        begin_time: begin,
                        end_time: end,
                        descriptors,
                        threads,
                        bookmarks,
                        tail: Tail {
                            trailing,
                            ..Tail::default()
                        },
                        ..Capture::default()
                    };
                    // Records must name a present descriptor.
                    for t in &mut c.threads {
                        t.records.retain(|r| r.descriptor != u32::MAX);
                    }
                    c.update_counters(if gui {
                        Convention::Gui
                    } else {
                        Convention::Runtime
                    });
                    c
                })
        })
}

fn round_trip(c: &Capture) {
    let bytes = c.to_bytes().expect("write");
    let view = parse(&bytes).expect("parse");
    assert_eq!(&view.to_model().expect("model"), c);
    // The tree never fails on what the writer made, only reports oddities.
    let _ = view.tree().expect("tree");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn v1_0_0(c in capture(Version::V1_0_0)) { round_trip(&c) }
    #[test]
    fn v1_2_0(c in capture(Version::V1_2_0)) { round_trip(&c) }
    #[test]
    fn v1_3_0(c in capture(Version::V1_3_0)) { round_trip(&c) }
    #[test]
    fn v2_0_1(c in capture(Version::V2_0_1)) { round_trip(&c) }
    #[test]
    fn v2_1_0(c in capture(Version::V2_1_0)) { round_trip(&c) }
    #[test]
    fn later_versions_read_as_2_1(c in capture(Version::new(2, 5, 3))) { round_trip(&c) }

    #[test]
    fn gui_convention_keeps_the_tree(c in capture(Version::V2_1_0)) {
        let bytes = c.to_bytes().expect("write");
        let gui = c.to_gui_convention().to_bytes().expect("write gui");
        let a = parse(&bytes).and_then(|v| v.tree()).expect("tree");
        let b = parse(&gui).and_then(|v| v.tree()).expect("gui tree");
        prop_assert_eq!(shape(&a), shape(&b));
    }
}

/// Name, begin, end (ns), subtree start and block index of a node.
type NodeShape = (Vec<u8>, u64, u64, u32, u32);

/// Names, ns times, nesting and block indices of every thread.
fn shape(t: &BlockTree<'_>) -> Vec<(u64, Vec<NodeShape>)> {
    t.threads
        .iter()
        .map(|th| {
            let nodes = th
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let name = t
                        .descriptor(n.descriptor)
                        .map(|d| d.name().to_vec())
                        .unwrap_or_default();
                    (
                        name,
                        n.begin,
                        n.end,
                        n.subtree_start,
                        th.block_index(i as u32),
                    )
                })
                .collect();
            (th.id, nodes)
        })
        .collect()
}

#[test]
fn corpus_gui_saves_keep_the_tree_and_pass_strict() {
    let Some(dir) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")
    else {
        return;
    };
    for path in profcodec_testkit::corpus::files_below(&dir) {
        if path.extension().is_none_or(|e| e != "prof") {
            continue;
        }
        let data = std::fs::read(&path).expect("read");
        let view = parse(&data).expect("parse");
        let mut gui = view.to_model().expect("model").to_gui_convention();
        gui.bookmarks.push(Bookmark {
            position: 5,
            color: 0xff00_0000,
            text: b"mark".to_vec(),
        });
        gui.update_counters(Convention::Gui);
        let out = gui.to_bytes().expect("write");
        let gview = parse_with(&out, Mode::Strict).expect("strict");
        let gtree = gview.tree().expect("gui tree");
        assert_eq!(shape(&view.tree().expect("tree")), shape(&gtree));
        assert_eq!(gview.to_model().expect("model").bookmarks.len(), 1);
    }
}
