//! Memory grows with the distinct entries given to the builder, not with the samples: one test
//! in its own binary, so no other test allocates meanwhile.

#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use profcodec_profile::{Context, Frame, IdKind, Measured, Order, ProfileBuilder, Query, Unit};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Builds `samples` samples cycling over 64 distinct stacks on 4 threads into a profile and
/// asks for its top 10; returns the bytes the built profile holds and the peak of live bytes
/// over the process so far, both above what was live before.
fn build(samples: usize) -> (usize, usize) {
    let before = A.allocated();
    let held;
    {
        let mut b = ProfileBuilder::new();
        let time = b
            .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
            .unwrap();
        let frames: Vec<_> = (0..16)
            .map(|i| {
                let name = b.intern_string(&format!("function_{i}")).unwrap();
                b.intern_frame(Frame::function(name)).unwrap()
            })
            .collect();
        let threads: Vec<_> = (0..4)
            .map(|t| {
                b.intern_context(Context::new([(IdKind::Thread, t)]))
                    .unwrap()
            })
            .collect();
        let mut stack = Vec::with_capacity(16);
        for i in 0..samples {
            stack.clear();
            stack.extend((0..1 + i % 8).map(|d| frames[(d * 3 + i / 8 % 8) % 16]));
            b.add_sample(threads[i % 4], stack.iter().copied(), time, 1.0)
                .unwrap();
        }
        let profile = b.build();
        held = A.allocated() - before;
        let top = profile
            .top(&Query::new().by(Order::Inclusive).limit(10))
            .unwrap();
        assert_eq!(top.total.self_value, samples as f64);
    }
    (held, A.max_allocated() - before)
}

#[test]
fn memory_follows_distinct_stacks_not_samples() {
    let (small, _) = build(2_000);
    let (large, peak) = build(200_000);
    // Same distinct stacks, a hundred times the samples: the same tables (the slack covers
    // what the test harness allocates meanwhile).
    assert!(
        large <= small + small / 4,
        "{large} bytes held for 200k samples against {small} for 2k"
    );
    // One byte per sample would already be 200 kB.
    assert!(peak < 128 * 1024, "peak of {peak} bytes for 200k samples");
}
