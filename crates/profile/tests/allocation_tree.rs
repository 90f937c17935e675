//! Memory of a measured call tree (nodes added in order, every node with a value of each
//! metric, as a CCT is converted) is a small constant per node and per value, in the builder and
//! in the built profile: one test in its own binary, so no other test allocates meanwhile.

#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use profcodec_profile::{Context, Frame, FrameKind, IdKind, Measured, ProfileBuilder, Unit};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

const METRICS: usize = 8;
/// Distinct frames of the tree (a frame is shared by many nodes, as addresses are in a CCT).
const FRAMES: usize = 1000;

/// Builds a tree of `nodes` nodes with `METRICS` values each in one context, reserving the
/// tables first if `reserve`; returns the bytes the built profile holds and the peak of live
/// bytes while building, both above what was live before.
fn build(nodes: usize, reserve: bool) -> (usize, usize) {
    let before = A.allocated();
    let held;
    {
        let mut b = ProfileBuilder::new();
        if reserve {
            b.reserve_nodes(nodes);
            b.reserve_node_values(nodes * METRICS);
        }
        let context = b
            .intern_context(Context::new([(IdKind::Thread, 0)]))
            .unwrap();
        let metrics: Vec<_> = (0..METRICS)
            .map(|m| {
                b.intern_value_type(&format!("m{m}"), Unit::Count, Measured::SelfOnly)
                    .unwrap()
            })
            .collect();
        let module = b.intern_string("/usr/lib/libm.so").unwrap();
        let frames: Vec<_> = (0..FRAMES as u64)
            .map(|f| {
                b.intern_frame(
                    Frame::new(FrameKind::Function)
                        .with_module(module)
                        .with_address(f * 16),
                )
                .unwrap()
            })
            .collect();
        let mut ids = Vec::with_capacity(nodes);
        for i in 0..nodes {
            // Each node under one of the last few: a bushy tree of distinct (parent, frame).
            let parent = i.checked_sub(1 + i % 5).map(|p| ids[p]);
            let node = b.intern_node(parent, frames[i * 7 % FRAMES]).unwrap();
            ids.push(node);
            for &m in &metrics {
                b.add_self(context, node, m, 1.0).unwrap();
            }
        }
        drop(ids);
        let profile = b.build();
        assert_eq!(profile.nodes().len(), nodes);
        assert_eq!(profile.node_values().len(), nodes * METRICS);
        held = A.allocated() - before;
    }
    (held, A.max_allocated() - before)
}

#[test]
fn bytes_per_node_and_value_are_bounded() {
    let nodes = 100_000;
    let values = nodes * METRICS;
    // Reserved first: its lower peak does not hide the other's (the peak is the process's).
    for reserve in [true, false] {
        let (held, peak) = build(nodes, reserve);
        let held_per_value = held as f64 / values as f64;
        let peak_per_value = peak as f64 / values as f64;
        eprintln!(
            "reserve {reserve}: held {held} bytes ({held_per_value:.1} per value, {:.1} per \
             node), peak {peak} bytes ({peak_per_value:.1} per value)",
            held as f64 / nodes as f64
        );
        // A built profile holds 13 bytes per value in its columns (node id, self value, a
        // presence byte) and a 12-byte `Node` per node (1.5 bytes per value at 8 values a node),
        // trimmed to length.
        assert!(
            held_per_value < 16.0,
            "{held_per_value} bytes per value held"
        );
        // While building: the tables' spare capacity (none when reserved), per node the
        // (parent, frame) hash index; a column whose nodes come in order keeps no index.
        let bound = if reserve { 36.0 } else { 48.0 };
        assert!(
            peak_per_value < bound,
            "{peak_per_value} bytes per value at the peak"
        );
    }
}
