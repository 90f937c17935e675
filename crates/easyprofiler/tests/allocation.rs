//! Allocation bound: whatever the counts in a file say, reading allocates at most a
//! small multiple of the input. One test in its own binary, so no other test allocates meanwhile.
//!
//! Every 4- and 8-byte window of a 1.2.0 capture and of a 2.1.0 GUI capture with bookmarks is
//! overwritten with 0xff (u32::MAX, u64::MAX), which covers every count field of both header
//! layouts (blocks, memory, descriptors, descriptor memory, threads, bookmarks), the per-thread
//! context-switch and record counts, and every u16 size prefix, among other fields.
//!
//! The factor: the owned model holds a record of at least 23 bytes on disk in 64 bytes, plus a
//! small vector for its name or data; the tree holds it in 32 bytes plus 8 bytes of stack; both
//! are built (vectors sized from counts checked against the remaining bytes), so 16 leaves room
//! for vector growth and the error path. The walk, its profile and its walk in time order are
//! counted too: they hold no record, but chunks of up to 4096 blocks (48 bytes each, reused), a
//! few fixed tables and, like the tree, a list sized by the thread count the bytes can hold, so
//! on these few-kilobyte files they use much of the mebibyte the limit adds.

use std::path::Path;

use profcodec_easyprofiler::{Mode, parse_with};
use profcodec_testkit::hostile::{allocation_limit, max_value_windows};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

const FACTOR: usize = 16;

fn decode(data: &[u8]) {
    // Strict mode walks the same code; only its header check differs.
    let _ = parse_with(data, Mode::Strict);
    if let Ok(view) = parse_with(data, Mode::Tolerant) {
        let _ = view.tree();
        let _ = view.to_model();
        if let Ok(walk) = view.walk() {
            let _ = walk.to_profile();
            for th in &walk.threads {
                let _ = walk.pre_order(th).count();
            }
        }
    }
}

#[test]
fn hostile_counts_do_not_allocate_beyond_the_input() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
    let mut worst = 0.0f64;
    let mut tried = 0usize;
    for name in ["small_v120.prof", "small_v210_gui_bookmarks.prof"] {
        let data = std::fs::read(dir.join(name)).expect("testdata file");
        for (at, width, mutant) in max_value_windows(&data, &[4, 8]) {
            let before = A.total_allocated();
            decode(&mutant);
            let used = A.total_allocated() - before;
            let limit = allocation_limit(mutant.len(), FACTOR);
            assert!(
                used <= limit,
                "{name} with 0xff x {width} at {at:#x}: {used} bytes allocated, limit {limit}"
            );
            worst = worst.max(used as f64 / mutant.len() as f64);
            tried += 1;
        }
    }
    println!("{tried} mutants; worst allocation {worst:.1} x the input");
}
