//! Allocation bound under hostile counts: u32::MAX / u64::MAX (the field's largest
//! value) patched into every count and size field of real files must not make the reader
//! allocate more than a small multiple of the input.
//!
//! The views allocate only for the context tree (the walk's stack and the ctxId index: at most
//! 24 bytes per context of at least 0x20 bytes, bounded by the Context Tree section's size, never
//! by a count) and the metric-id maps of `Database` (16 bytes per 16-byte {PSI}/{SS}, plus two
//! fixed 8 KiB bitmaps). Vec doubling at most doubles that, so a factor of 4 of the input (plus
//! the shared 1 MiB budget) holds whatever the counts say.
//!
//! One test only, so that no other test allocates in this binary meanwhile.

mod read_support;

use profcodec_hpctoolkit::FileKind;
use profcodec_testkit::hostile::allocation_limit;
use read_support::{corpus_files, count_fields, patched_max, touch, touch_database};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

const FACTOR: usize = 4;

#[test]
fn hostile_counts_stay_within_the_allocation_bound() {
    let mut checked = 0usize;
    let mut worst = 0f64;
    for (kind, path) in corpus_files() {
        // Keep the test quick: the large hatchet files are covered by the sweep in hostile.rs.
        let data = std::fs::read(&path).expect("read corpus file");
        if data.len() > 256 * 1024 {
            continue;
        }
        for (at, width) in count_fields(kind, &data) {
            let mutant = patched_max(&data, at, width);
            let before = A.total_allocated();
            let _ = touch(kind, &mutant);
            let used = A.total_allocated() - before;
            let limit = allocation_limit(mutant.len(), FACTOR);
            assert!(
                used <= limit,
                "{} field at {at:#x} ({width} bytes): allocated {used} bytes, limit {limit}",
                path.display()
            );
            worst = worst.max(used as f64 / mutant.len() as f64);
            checked += 1;
        }
    }
    // The database as a whole (cross-links, metric maps) under patched meta.db counts.
    if let Some(root) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        let dir = root.join("dbase/loops-cuda-nvidiapc-t.d");
        let read = |k: FileKind| std::fs::read(dir.join(k.file_name())).expect("corpus file");
        let [meta, profile, cct, trace] = FileKind::ALL.map(read);
        let total = meta.len() + profile.len() + cct.len() + trace.len();
        for (at, width) in count_fields(FileKind::Meta, &meta) {
            let mutant = patched_max(&meta, at, width);
            let before = A.total_allocated();
            let _ = touch_database(&mutant, Some(&profile), Some(&cct), Some(&trace));
            let used = A.total_allocated() - before;
            assert!(
                used <= allocation_limit(total, FACTOR),
                "meta.db field at {at:#x}: {used} bytes"
            );
            checked += 1;
        }
    }
    println!("{checked} hostile count fields checked; worst allocation {worst:.2} x the input");
}
