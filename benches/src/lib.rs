//! Large-input generators shared by the criterion benches (`benches/benches/<format>.rs`) and
//! `cargo xtask gen-<format>`. Every generator writes with the format crate's own writer, so the
//! inputs are valid files of any size without shipping any.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod easyprofiler;
pub mod hostile;
pub mod hpcrun;
pub mod hpctoolkit;
pub mod nytprof;
pub mod statprofiler;

/// A small deterministic pseudo-random generator (xorshift64*), so that generated inputs are the
/// same on every run and machine without a dependency.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (0 is replaced by a fixed non-zero seed).
    pub fn new(seed: u64) -> Self {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
