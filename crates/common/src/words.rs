//! Counts in words, as every printer of profcodec writes them: `1 context`, `2 contexts`.

/// `n` followed by `one` when `n` is 1, else by `many`: the noun agrees with its count.
///
/// ```
/// use profcodec_common::words::count;
/// assert_eq!(count(1u32, "context", "contexts"), "1 context");
/// assert_eq!(count(0u64, "track", "tracks"), "0 tracks");
/// assert_eq!(count(3u8, "entry", "entries"), "3 entries");
/// ```
pub fn count(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// [`count`] of a `usize` (a length).
///
/// ```
/// assert_eq!(profcodec_common::words::count_of(1, "row", "rows"), "1 row");
/// ```
pub fn count_of(n: usize, one: &str, many: &str) -> String {
    count(u64::try_from(n).unwrap_or(u64::MAX), one, many)
}
