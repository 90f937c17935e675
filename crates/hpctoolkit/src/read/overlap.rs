//! The no-aliasing rule: non-empty value blocks, index arrays, identifier tuples, trace lines and
//! metric sub-arrays never share a byte with one another.
//!
//! hpcprof lays every such array out once (empty ones may share an offset, and are skipped). A
//! file that points many structures at one array would make every pass repeat the shared work
//! once per alias (400,000 profile infos over one 12,713-value block is 5 billion value checks
//! from 21 MB). Checking is one sort of the ranges by start and one scan of neighbours: sorted
//! by start, two ranges overlap only if some adjacent pair does. O(n log n) time, 32 bytes per
//! range, and afterwards every byte of the arrays belongs to one structure, so the passes that
//! follow are linear in the file.

use crate::Error;
use crate::raw::FileKind;

/// The byte range a pointer field claims.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    /// First byte.
    pub(crate) start: u64,
    /// One past the last byte (`> start`).
    pub(crate) end: u64,
    /// Offset of the pointer field (for the error).
    pub(crate) at: u64,
    /// Which field: an index into the caller's field names.
    pub(crate) field: u8,
}

/// Collects the non-empty ranges of one file; [`Spans::check`] sorts and scans them.
#[derive(Debug)]
pub(crate) struct Spans {
    spans: Vec<Span>,
    fields: &'static [&'static str],
}

impl Spans {
    /// Room for `capacity` ranges (the caller's exact count, so no doubling), named by `fields`.
    pub(crate) fn with_capacity(capacity: usize, fields: &'static [&'static str]) -> Self {
        Spans {
            spans: Vec::with_capacity(capacity),
            fields,
        }
    }

    /// Adds `size` bytes at `start` claimed by field `field` stored at `at`; empty ranges are
    /// skipped (they may share an offset, as hpcprof writes them).
    pub(crate) fn add(&mut self, start: u64, size: u64, at: u64, field: u8) {
        if size > 0 {
            self.spans.push(Span {
                start,
                end: start.saturating_add(size),
                at,
                field,
            });
        }
    }

    /// The first overlap in pointer order, as [`Error::Overlap`].
    pub(crate) fn check(mut self, file: FileKind) -> Result<(), Error> {
        // hpcprof and the writers lay the arrays out in the order of their structures (cct.db
        // blocks by ctxId, trace lines in header order), so the sort is usually skipped.
        if !self.spans.is_sorted_by_key(|s| s.start) {
            self.spans.sort_unstable_by_key(|s| (s.start, s.end, s.at));
        }
        for w in self.spans.windows(2) {
            let (a, b) = (w[0], w[1]);
            if b.start < a.end {
                return Err(Error::Overlap {
                    file,
                    field: self.fields[usize::from(b.field)],
                    offset: b.at,
                    pointer: b.start,
                    end: b.end,
                    other_field: self.fields[usize::from(a.field)],
                    other_offset: a.at,
                    other_pointer: a.start,
                    other_end: a.end,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[&str] = &["a", "b"];

    fn check(ranges: &[(u64, u64)]) -> Result<(), Error> {
        let mut s = Spans::with_capacity(ranges.len(), FIELDS);
        for (i, &(start, size)) in ranges.iter().enumerate() {
            s.add(start, size, i as u64 * 8, (i % 2) as u8);
        }
        s.check(FileKind::Profile)
    }

    #[test]
    fn adjacent_and_empty_ranges_pass_overlaps_fail() {
        assert!(check(&[(0, 10), (10, 5), (15, 1)]).is_ok());
        assert!(check(&[(10, 0), (10, 0), (0, 10), (10, 4)]).is_ok());
        let e = check(&[(20, 4), (0, 10), (9, 2)]).expect_err("overlap");
        assert!(
            matches!(
                e,
                Error::Overlap {
                    pointer: 9,
                    other_pointer: 0,
                    offset: 16,
                    other_offset: 8,
                    ..
                }
            ),
            "{e}"
        );
        // Same start, in either order.
        for ranges in [[(0, 10), (0, 4)], [(0, 4), (0, 10)]] {
            let e = check(&ranges).expect_err("shared start");
            assert!(
                matches!(
                    e,
                    Error::Overlap {
                        pointer: 0,
                        other_pointer: 0,
                        ..
                    }
                ),
                "{e}"
            );
        }
        // Input out of order is sorted first.
        assert!(check(&[(30, 5), (0, 10), (20, 5), (10, 10)]).is_ok());
        assert!(check(&[(30, 5), (0, 10), (20, 11), (10, 10)]).is_err());
        // A range enclosing two later ones overlaps its neighbour.
        assert!(check(&[(0, 100), (10, 2), (50, 2)]).is_err());
    }
}
