//! Criterion benches of profcodec-profile on a synthetic sampled workload shaped like a
//! StatProfiler session (1.5 M samples over 3000 distinct frames and 50 000 distinct call paths
//! of 1 to 40 frames, 4 processes):
//! building the model sample by sample, the top 20 functions by self and by inclusive value,
//! grouping by line, merging the per-process profiles, and a diff; and a measured call tree
//! shaped like an hpcrun measurement (500 000 nodes in a tree, 8 values per node, one thread),
//! built node by node as `profcodec-hpcrun` converts its CCT, then its top 20.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_profile::{
    Context, ContextFilter, Frame, FrameKind, GroupBy, IdKind, Measured, Order, Profile,
    ProfileBuilder, Query, Unit, diff,
};

const SAMPLES: usize = 1_500_000;
const FRAMES: u64 = 3000;
const PROCESSES: u64 = 4;
/// Distinct call paths.
const POOL: usize = 50_000;

/// The samples as (process, stack of frame indexes, weight), from a fixed-seed generator: a pool
/// of distinct call paths made by a random walk (each path keeps a random prefix of the one
/// before and calls a few more frames, few hot frames and a long tail), and samples that wander
/// through the pool with locality and now and then jump to a hot path.
fn samples() -> Vec<(u64, Vec<u32>, u32)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut stack: Vec<u32> = Vec::new();
    let pool: Vec<Vec<u32>> = (0..POOL)
        .map(|_| {
            let keep = (next() % (stack.len() as u64 + 1)) as usize;
            stack.truncate(keep.max(1).min(stack.len()));
            for _ in 0..1 + next() % 5 {
                if stack.len() < 40 {
                    let r = next() % 55;
                    stack.push(((r * r + next() % 8) % FRAMES) as u32);
                }
            }
            stack.clone()
        })
        .collect();
    let mut at = 0usize;
    (0..SAMPLES)
        .map(|i| {
            at = if i % 50 == 0 {
                let r = (next() % 200) as usize;
                r * r % POOL
            } else {
                (at + POOL + (next() % 7) as usize - 3) % POOL
            };
            (
                (i as u64) % PROCESSES,
                pool[at].clone(),
                1 + (next() % 3) as u32,
            )
        })
        .collect()
}

/// One profile of `samples` (every sample if `process` is `None`).
fn build(samples: &[(u64, Vec<u32>, u32)], process: Option<u64>) -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("samples", Unit::Samples, Measured::SelfOnly)
        .expect("value type");
    let file = b.intern_string("lib/App/Main.pm").expect("string");
    let frames: Vec<_> = (0..FRAMES)
        .map(|i| {
            let name = b
                .intern_string(&format!("App::Module{}::sub_{i}", i % 40))
                .expect("string");
            b.intern_frame(
                Frame::function(name)
                    .with_file(file)
                    .with_line(i as u32 % 500),
            )
            .expect("frame")
        })
        .collect();
    let contexts: Vec<_> = (0..PROCESSES)
        .map(|p| {
            b.intern_context(Context::new([(IdKind::Process, 1000 + p)]))
                .expect("context")
        })
        .collect();
    for (p, stack, weight) in samples {
        if process.is_some_and(|want| want != *p) {
            continue;
        }
        b.add_sample(
            contexts[*p as usize],
            stack.iter().map(|&f| frames[f as usize]),
            time,
            f64::from(*weight),
        )
        .expect("sample");
    }
    b.build()
}

/// Nodes of the hpcrun-shaped tree.
const TREE_NODES: usize = 500_000;
/// Metrics measured at every node of the tree.
const TREE_METRICS: u32 = 8;
/// Distinct (module, address) frames of the tree, before repeats under one parent move on.
const TREE_FRAMES: u64 = 60_000;

/// The tree as (parent index, frame index) in preorder, from a fixed-seed generator: a
/// depth-first walk that mostly goes one deeper, now and then climbs back a few levels, and
/// calls few hot frames and a long tail, as a CCT of a compiled program looks.
fn tree() -> Vec<(Option<u32>, u32)> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut path: Vec<u32> = Vec::new();
    // A CCT has one node per (parent, frame): a repeat takes the next frame.
    let mut seen = std::collections::HashSet::new();
    (0..TREE_NODES as u32)
        .map(|i| {
            let up = match next() % 8 {
                0..=4 => 0,
                5 | 6 => 1 + next() % 3,
                _ => 1 + next() % 12,
            } as usize;
            path.truncate(path.len().saturating_sub(up));
            if path.len() >= 60 {
                path.truncate(30);
            }
            let parent = path.last().copied();
            path.push(i);
            let r = next() % 250;
            let mut frame = ((r * r + next() % 16) % TREE_FRAMES) as u32;
            while !seen.insert((parent, frame)) {
                frame += 1;
            }
            (parent, frame)
        })
        .collect()
}

/// The tree as a profile: per node a module-and-address frame, the node under its parent and
/// its 8 values, through the builder calls `profcodec-hpcrun`'s converter makes.
fn build_tree(tree: &[(Option<u32>, u32)]) -> Profile {
    let mut b = ProfileBuilder::new();
    let context = b
        .intern_context(Context::new([(IdKind::Rank, 0), (IdKind::Thread, 0)]))
        .expect("context");
    let metrics: Vec<_> = (0..TREE_METRICS)
        .map(|m| {
            let unit = if m == 0 { Unit::Seconds } else { Unit::Count };
            b.intern_value_type(&format!("metric_{m}"), unit, Measured::SelfOnly)
                .expect("value type")
        })
        .collect();
    let modules: Vec<_> = (0..16)
        .map(|m| {
            b.intern_string(&format!("/usr/lib/libmod{m}.so"))
                .expect("string")
        })
        .collect();
    let mut ids = Vec::with_capacity(tree.len());
    for (i, &(parent, frame)) in tree.iter().enumerate() {
        let frame = b
            .intern_frame(
                Frame::new(FrameKind::Function)
                    .with_module(modules[frame as usize % modules.len()])
                    .with_address(0x1000 + u64::from(frame) * 16),
            )
            .expect("frame");
        let node = b
            .intern_node(parent.map(|p| ids[p as usize]), frame)
            .expect("node");
        ids.push(node);
        for (m, &vt) in metrics.iter().enumerate() {
            b.add_self(context, node, vt, (1 + (i + m) % 7) as f64)
                .expect("value");
        }
    }
    b.build()
}

fn benches(c: &mut Criterion) {
    let samples = samples();
    let frames: u64 = samples.iter().map(|s| s.1.len() as u64).sum();
    let profile = build(&samples, None);
    eprintln!(
        "profile bench: {} samples, {frames} frames, {} nodes, {} node values",
        samples.len(),
        profile.nodes().len(),
        profile.node_values().len()
    );
    let per_process: Vec<Profile> = (0..PROCESSES).map(|p| build(&samples, Some(p))).collect();

    let mut g = c.benchmark_group("profile");
    g.sample_size(10);
    g.throughput(Throughput::Elements(frames));
    g.bench_function("build_from_samples", |b| {
        b.iter(|| black_box(build(&samples, None)))
    });
    g.throughput(Throughput::Elements(profile.nodes().len() as u64));
    let top = |order, group| Query::new().by(order).group(group).limit(20);
    g.bench_function("top20_function_self", |b| {
        b.iter(|| black_box(profile.top(&top(Order::SelfValue, GroupBy::Function))))
    });
    g.bench_function("top20_function_inclusive", |b| {
        b.iter(|| black_box(profile.top(&top(Order::Inclusive, GroupBy::Function))))
    });
    g.bench_function("top20_line_inclusive_one_process", |b| {
        let q = top(Order::Inclusive, GroupBy::Line)
            .contexts(ContextFilter::Matching(vec![(IdKind::Process, 1001)]));
        b.iter(|| black_box(profile.top(&q)))
    });
    g.bench_function("merge_4_processes", |b| {
        b.iter(|| black_box(Profile::merge(&per_process)))
    });
    g.bench_function("diff_two_processes", |b| {
        b.iter(|| {
            black_box(diff(
                &per_process[0],
                &per_process[1],
                &Query::new().limit(20),
            ))
        })
    });
    g.finish();

    let tree = tree();
    let profile = build_tree(&tree);
    eprintln!(
        "profile bench: tree of {} nodes, {} node values",
        profile.nodes().len(),
        profile.node_values().len()
    );
    drop(profile);
    let mut g = c.benchmark_group("profile_tree");
    g.sample_size(10);
    g.throughput(Throughput::Elements(
        TREE_NODES as u64 * u64::from(TREE_METRICS),
    ));
    g.bench_function("build_500k_nodes_8_values", |b| {
        b.iter(|| black_box(build_tree(&tree)))
    });
    g.bench_function("build_500k_nodes_8_values_top20", |b| {
        b.iter(|| {
            let profile = build_tree(&tree);
            black_box(profile.top(&Query::new().value_type("metric_0").limit(20)))
        })
    });
    g.finish();
}

criterion_group!(group, benches);
criterion_main!(group);
