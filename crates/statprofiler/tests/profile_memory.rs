//! The profile model's memory follows the distinct call paths, not the samples: converting ten
//! times the samples over the same stacks allocates no more. One test in its own binary, so
//! nothing else allocates concurrently.
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_statprofiler::{Event, Frame, PerlStr, profcodec_profile::Query, to_profile};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// A file of `samples` samples cycling over 50 distinct stacks of 3 to 12 frames.
fn file(samples: u32) -> Vec<u8> {
    let names: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    common::file_of_events((0..samples).flat_map(|s| {
        let shape = s % 50;
        let op: &[u8] = if s % 7 == 0 { b"sort" } else { b"add" };
        let frames = (0..(3 + shape % 10)).map(|depth| {
            let name = &names[((shape + depth * 3) % 20) as usize];
            Event::Frame(Frame::Sub {
                package: PerlStr::bytes(b"App"),
                name: PerlStr::bytes(name.as_bytes()),
                file: PerlStr::bytes(b"lib/App.pm"),
                line: 10 + depth as i32,
                first_line: 5,
            })
        });
        common::sample_in_main(1 + s % 3, op, frames.collect::<Vec<_>>())
    }))
}

/// The bytes allocated while converting `data` and answering a top-20.
fn allocated_by_conversion(data: &[u8]) -> (usize, f64) {
    let before = A.total_allocated();
    let profile = to_profile(data).unwrap();
    let top = profile
        .top(&Query::new().value_type("samples").limit(20))
        .unwrap();
    (A.total_allocated() - before, top.total.self_value)
}

#[test]
fn memory_follows_the_distinct_stacks_not_the_samples() {
    let small = file(5_000);
    let large = file(50_000);
    let (small_bytes, small_total) = allocated_by_conversion(&small);
    let (large_bytes, large_total) = allocated_by_conversion(&large);
    assert!(large_total > 9.0 * small_total);
    // Every allocation counted, not only the peak: nothing is allocated per sample.
    assert!(
        large_bytes < small_bytes + small_bytes / 10,
        "{small_bytes} bytes for 5,000 samples, {large_bytes} for 50,000"
    );
}
