//! A count of the steps the lookup and tree helpers take, so that tests can hold them to linear
//! work with counts instead of timers.
//!
//! Each helper that looks something up per record (a dictionary kind, a node id, a step of a tree
//! walk, a footer candidate) adds one per step to a per-thread counter. The counter is not part
//! of the stable API.

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Adds `n` steps to this thread's counter.
#[inline]
pub(crate) fn add(n: u64) {
    STEPS.with(|s| s.set(s.get().wrapping_add(n)));
}

/// The steps counted on this thread since the last [`reset`].
pub fn steps() -> u64 {
    STEPS.with(Cell::get)
}

/// Sets this thread's counter to zero.
pub fn reset() {
    STEPS.with(|s| s.set(0));
}
