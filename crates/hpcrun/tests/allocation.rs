//! Allocation bound: whatever the counts in a file say, decoding allocates at most a
//! small multiple of the input. One test in its own binary, so no other test allocates meanwhile.
//!
//! Every 4- and 8-byte window of every testdata file is overwritten with 0xff (u32::MAX and
//! u64::MAX), which covers every count field of every version (string lengths, nvpair, metric,
//! load-module, CCT, dictionary, id-tuple, value and context counts) among other fields.
//!
//! The factor: the owned model is at most about 6 times its encoding (an empty name/value pair is
//! 8 bytes on disk and 48 in the model), and a 02.00b file may be decoded twice (with and without
//! the auxiliary metric fields), so 16 leaves room for vector headers and the error path.

use std::path::PathBuf;

use profcodec_hpcrun::*;
use profcodec_testkit::corpus::files_below;
use profcodec_testkit::hostile::{allocation_limit, max_value_windows};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

const FACTOR: usize = 16;

fn decode(data: &[u8]) {
    let _ = read_measurement(data);
    let _ = read_measurement_partial(data);
    if let Ok(v) = V4View::parse(data) {
        let _ = v.validate();
        let _ = v.to_model();
    }
    let _ = read_trace(data);
}

#[test]
fn hostile_counts_do_not_allocate_beyond_the_input() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun");
    let mut worst = 0.0f64;
    let mut tried = 0usize;
    for path in files_below(&dir) {
        if !path
            .extension()
            .is_some_and(|e| e == "hpcrun" || e == "hpctrace")
        {
            continue;
        }
        let data = std::fs::read(&path).expect("testdata file");
        for (at, width, mutant) in max_value_windows(&data, &[4, 8]) {
            let before = A.total_allocated();
            decode(&mutant);
            let used = A.total_allocated() - before;
            let limit = allocation_limit(mutant.len(), FACTOR);
            assert!(
                used <= limit,
                "{} with 0xff x {width} at {at:#x}: {used} bytes allocated, limit {limit}",
                path.display()
            );
            worst = worst.max(used as f64 / mutant.len() as f64);
            tried += 1;
        }
    }
    assert!(tried > 10_000);
    println!("{tried} mutants; worst allocation {worst:.1} x the input (limit {FACTOR} x + 1 MiB)");
}
