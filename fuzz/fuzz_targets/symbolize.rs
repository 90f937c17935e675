#![no_main]
//! The symbolizer over arbitrary ELF bytes with addresses: a binary opened from bytes (its
//! header checks, symbol tables, bounded inflation of compressed DWARF, DWARF depth bound),
//! checked against the addresses and each address looked up. Nothing may panic, and memory
//! stays within the crate's stated budgets.
//!
//! Input: a count `k` (one byte, at most 16), a 16-bit mask of which addresses are return
//! addresses, `k` little-endian 64-bit addresses, then the binary's bytes.
use profcodec_symbolize::{Binary, Probe};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let k = usize::from(k % 17);
    let Some((mask, rest)) = rest.split_first_chunk::<2>() else {
        return;
    };
    let mask = u16::from_le_bytes(*mask);
    if rest.len() < k * 8 {
        return;
    }
    let (addresses, elf) = rest.split_at(k * 8);
    let probes: Vec<Probe> = addresses
        .chunks_exact(8)
        .enumerate()
        .map(|(i, a)| {
            let address = u64::from_le_bytes(a.try_into().expect("8 bytes"));
            if mask & (1 << i) != 0 {
                Probe::ret(address)
            } else {
                Probe::leaf(address)
            }
        })
        .collect();
    let Ok(mut binary) = Binary::from_bytes("fuzzed", elf.to_vec()) else {
        return;
    };
    let _ = binary.check(&probes, None);
    let _ = binary.check(&probes, Some(&[1, 2, 3, 4]));
    let _ = binary.debug_info_refused();
    for p in probes {
        let frames = binary.lookup(p);
        // Looked up once: the second answer is the first.
        assert_eq!(binary.lookup(p), frames);
    }
});
