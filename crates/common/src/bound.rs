//! The hostile-count rule (ARCHITECTURE.md, "Hostile counts").
//!
//! A count read from a file may be anything. Before a decoder allocates room for `count` items it
//! checks that the bytes still unread could hold that many items of their smallest encoded size;
//! a count that fails the check is an error, never an allocation.

/// A count read from the input is larger than the remaining bytes could hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "{what}: at byte {offset:#x}: expected at most {max} items in the remaining input but found a count of {count}"
)]
pub struct CountTooLarge {
    /// Absolute offset of the count field.
    pub offset: u64,
    /// The field holding the count.
    pub what: &'static str,
    /// The count as read.
    pub count: u64,
    /// The most items the remaining input could hold.
    pub max: u64,
}

/// Returns `count` as a capacity that is safe to pass to `Vec::with_capacity`.
///
/// `min_item_size` is the smallest number of input bytes one item can occupy (at least 1 is
/// assumed, so zero-sized items are bounded by the remaining length too); `remaining` is the number
/// of unread input bytes.
///
/// ```
/// use profcodec_common::checked_capacity;
/// assert_eq!(checked_capacity(3, 4, 12, 0, "n").unwrap(), 3);
/// assert!(checked_capacity(u64::MAX, 4, 12, 0, "n").is_err());
/// ```
pub fn checked_capacity(
    count: u64,
    min_item_size: usize,
    remaining: usize,
    offset: u64,
    what: &'static str,
) -> Result<usize, CountTooLarge> {
    let max = (remaining / min_item_size.max(1)) as u64;
    if count > max {
        return Err(CountTooLarge {
            offset,
            what,
            count,
            max,
        });
    }
    Ok(count as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_sized_items_are_still_bounded() {
        assert_eq!(checked_capacity(5, 0, 5, 0, "n"), Ok(5));
        assert!(checked_capacity(6, 0, 5, 0, "n").is_err());
    }
}
