//! Compressed debugging sections that claim (or hold) far more than their size, and a 2 GiB
//! file named as a binary, opened under an allocation cap: refused with words, never inflated
//! or read whole. One test in its own binary, so no other test allocates meanwhile.

#![cfg(unix)]

mod common;

use common::*;
use profcodec_symbolize::{Binary, MAX_INFLATION_RATIO, Probe};
use profcodec_testkit::hostile::{allocation_limit, capped};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Opens `bytes` under the cap and says why its DWARF was refused. The cap: what the ratio
/// lets a section claim (its inflated bytes, and a zstd window no larger, beside its compressed
/// copy), never what it says.
fn refused(bytes: Vec<u8>) -> String {
    let limit = allocation_limit(bytes.len(), 4 * MAX_INFLATION_RATIO as usize);
    let (why, used) = capped(&A, limit, || {
        let mut binary = Binary::from_bytes("bomb", bytes).expect("the binary opens");
        // The symbol table still names the address.
        let frames = binary.lookup(Probe::leaf(LEAF));
        assert_eq!(frames[0].function.as_deref(), Some("work"));
        binary.debug_info_refused().map(str::to_owned)
    });
    assert!(used < limit, "{used} bytes allocated");
    why.expect("its DWARF is refused")
}

#[test]
fn bombs_and_huge_files_stay_under_the_cap() {
    // zlib and zstd claiming 1.9 GB, refused from the header's claim.
    for (format, data) in [(1, zlib_zeros(4 << 20)), (2, zstd_zeros(4 << 20))] {
        let why = refused(bomb_program(compressed(format, 1_900_000_000, &data)));
        assert!(
            why.contains(&format!(
                "more than {MAX_INFLATION_RATIO} times its size: refused as a decompression bomb"
            )),
            "{why}"
        );
    }
    // A claim within the ratio over a stream that inflates past it: inflation stops at the
    // claim.
    let data = zlib_zeros(4 << 20);
    let claim = data.len() as u64 * MAX_INFLATION_RATIO;
    let why = refused(bomb_program(compressed(1, claim, &data)));
    assert!(why.contains("inflates past the"), "{why}");
    let data = zstd_zeros(4 << 20);
    let claim = data.len() as u64 * MAX_INFLATION_RATIO;
    let why = refused(bomb_program(compressed(2, claim, &data)));
    assert!(why.contains("inflates past the"), "{why}");
    // A zstd stream that is garbage after its magic: an error (or a caught panic), worded.
    let mut garbage = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58];
    garbage.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let why = refused(bomb_program(compressed(2, 1 << 16, &garbage)));
    assert!(why.starts_with(".debug_str:"), "{why}");

    // A 2 GiB file: an ELF header, then zeros (sparse). Bounded: its headers and symbol
    // tables are read, not the file.
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("prog");
    let header = program(["main", "other", "work"], Vec::new());
    std::fs::write(&big, &header).expect("write");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .and_then(|f| f.set_len(2 << 30))
        .expect("a sparse 2 GiB file");
    let (opened, used) = capped(&A, 8 << 20, || {
        Binary::open(&big).map(|b| b.has_debug_info())
    });
    assert_eq!(opened, Ok(false));
    assert!(used < 8 << 20, "{used} bytes allocated for a 2 GiB file");
    // Zeros from the start: refused from its first bytes.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .and_then(|f| std::os::unix::fs::FileExt::write_all_at(&f, &[0; 64], 0))
        .expect("zero the header");
    let (e, used) = capped(&A, 1 << 20, || Binary::open(&big).map(|_| ()));
    assert!(
        e.expect_err("refused")
            .to_string()
            .contains("not an ELF file")
    );
    assert!(used < 1 << 20);
}
