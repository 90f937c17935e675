//! Shared pieces of the hostile-input tests (issue "Hostile input across every decoder").
//!
//! Every format crate runs the same three checks on its real and generated files:
//! truncation at every point (or a dense sample), single-bit flips, and an allocation bound. The
//! input-mutation logic and the bound live here once; each crate supplies its decoder as a closure.
//! Allocation is measured by the test binary's own global allocator (the `cap` crate), which each
//! crate's `tests/hostile.rs` installs; this module only holds the rule.

/// Truncation points to try for an input of `len` bytes: every point up to 4096 bytes; above
/// that, every point in the first and last 1024 bytes and about 2048 more spread evenly.
pub fn truncation_points(len: usize) -> Vec<usize> {
    if len <= 4096 {
        return (0..len).collect();
    }
    let mut points: Vec<usize> = (0..1024).chain(len - 1024..len).collect();
    let step = (len / 2048).max(1);
    points.extend((1024..len - 1024).step_by(step));
    points.sort_unstable();
    points.dedup();
    points
}

/// Deterministic single-bit-flip mutants of `data`: about `count` of them, at positions spread
/// over the whole input (denser in the first 256 bytes, where headers live).
pub fn bit_flips(data: &[u8], count: usize) -> impl Iterator<Item = Vec<u8>> + '_ {
    let len = data.len();
    let head = len.min(256);
    let positions: Vec<(usize, u8)> = (0..count)
        .map(|i| {
            // A fixed multiplicative hash spreads the flips without a random number generator.
            let h = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 17;
            let pos = if i % 2 == 0 && head > 0 {
                (h as usize) % head
            } else {
                (h as usize) % len.max(1)
            };
            (pos, (h % 8) as u8)
        })
        .collect();
    positions
        .into_iter()
        .filter(move |_| len > 0)
        .map(move |(pos, bit)| {
            let mut mutant = data.to_vec();
            mutant[pos] ^= 1 << bit;
            mutant
        })
}

/// Copies of `data` with one window of `width` bytes set to 0xff, for every width in `widths`
/// and every offset: `(offset, width, mutant)`.
///
/// 0xff over 4 or 8 bytes is the largest value of a u32 or u64 count field, in either byte order,
/// so the allocation tests cover every count field of a file without knowing its layout.
pub fn max_value_windows<'a>(
    data: &'a [u8],
    widths: &'a [usize],
) -> impl Iterator<Item = (usize, usize, Vec<u8>)> + 'a {
    widths.iter().flat_map(move |&width| {
        (0..(data.len() + 1).saturating_sub(width)).map(move |at| {
            let mut mutant = data.to_vec();
            mutant[at..at + width].fill(0xff);
            (at, width, mutant)
        })
    })
}

/// The allocation rule: decoding `input_len` bytes may allocate at most `factor` times the input
/// plus a fixed budget of 1 MiB, in total, whatever the counts inside the input claim.
pub fn allocation_limit(input_len: usize, factor: usize) -> usize {
    input_len.saturating_mul(factor).saturating_add(1 << 20)
}

/// Runs `f` with at most `cap` bytes allocatable through `allocator` (the test binary's global
/// allocator) beyond what is allocated now; returns `f`'s result and what it allocated in all (an
/// upper bound of its peak). Allocating past the cap fails, so a decoder that is not bounded
/// aborts the test.
pub fn capped<T, H: std::alloc::GlobalAlloc>(
    allocator: &cap::Cap<H>,
    cap: usize,
    f: impl FnOnce() -> T,
) -> (T, usize) {
    let before = allocator.total_allocated();
    allocator
        .set_limit(allocator.allocated() + cap)
        .expect("cap above what is allocated");
    let out = f();
    allocator.set_limit(usize::MAX).expect("uncap");
    (out, allocator.total_allocated() - before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_inputs_are_cut_everywhere() {
        assert_eq!(truncation_points(5), vec![0, 1, 2, 3, 4]);
        let big = truncation_points(1 << 20);
        assert!(big.len() < 5000 && big.contains(&0) && big.contains(&((1 << 20) - 1)));
    }

    #[test]
    fn windows_cover_every_offset() {
        let data = [0u8; 6];
        let all: Vec<_> = max_value_windows(&data, &[4, 8]).collect();
        assert_eq!(all.len(), 3);
        assert_eq!(all[2], (2, 4, vec![0, 0, 0xff, 0xff, 0xff, 0xff]));
    }

    #[test]
    fn flips_change_one_bit() {
        let data = vec![0u8; 1000];
        for m in bit_flips(&data, 50) {
            assert_eq!(m.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
        }
        assert_eq!(bit_flips(&[], 5).count(), 0);
    }
}
