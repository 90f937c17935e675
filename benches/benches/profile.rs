//! Criterion benches of profcodec-profile on a synthetic sampled workload shaped like a
//! StatProfiler session (1.5 M samples over 3000 distinct frames and 50 000 distinct call paths
//! of 1 to 40 frames, 4 processes):
//! building the model sample by sample, the top 20 functions by self and by inclusive value,
//! grouping by line, merging the per-process profiles, and a diff.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_profile::{
    Context, ContextFilter, Frame, GroupBy, IdKind, Measured, Order, Profile, ProfileBuilder,
    Query, Unit, diff,
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
}

criterion_group!(group, benches);
criterion_main!(group);
