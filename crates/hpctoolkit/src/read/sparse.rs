//! Lookups in a sparse value block, shared by profile.db and cct.db.
//!
//! FORMATS.md gives the Profile-Major and the Context-Major Sparse Value Blocks the same shape:
//! an index of `(key, startIndex)` pairs sorted by key, over runs of `(subkey, value)` pairs
//! sorted by subkey (profile.db: ctxId then metricId; cct.db: metricId then profIndex). One set of
//! lookups serves both, through the two small traits below.
//!
//! Keys are found by a safeguarded interpolation search ([`find`]): hpcprof numbers contexts
//! densely and the index stores a sorted subset of them, so the key's value predicts its position
//! and a lookup touches a handful of cache lines instead of the ~20 of a binary search over a
//! multi-megabyte index (each a cache and TLB miss on a large database). After log2(n) interpolation
//! steps the search bisects, so hostile layouts still cost O(log n) probes.

use crate::raw::{CtxIndex, MetricIndex, ProfValue, Value};

/// An index entry: a key and the start of its run of values.
pub(crate) trait IndexEntry {
    /// The key the index is sorted by.
    type Key: Ord + Copy + Into<u64>;
    fn key(&self) -> Self::Key;
    fn start_index(&self) -> u64;
}

/// A value entry: a subkey and its value.
pub(crate) trait ValueEntry {
    /// The subkey a run is sorted by.
    type Key: Ord + Copy + Into<u64>;
    fn key(&self) -> Self::Key;
    fn value(&self) -> f64;
}

impl IndexEntry for CtxIndex {
    type Key = u32;
    #[inline]
    fn key(&self) -> u32 {
        self.ctx_id()
    }
    #[inline]
    fn start_index(&self) -> u64 {
        CtxIndex::start_index(self)
    }
}

impl IndexEntry for MetricIndex {
    type Key = u16;
    #[inline]
    fn key(&self) -> u16 {
        self.metric_id()
    }
    #[inline]
    fn start_index(&self) -> u64 {
        MetricIndex::start_index(self)
    }
}

impl ValueEntry for Value {
    type Key = u16;
    #[inline]
    fn key(&self) -> u16 {
        self.metric_id()
    }
    #[inline]
    fn value(&self) -> f64 {
        Value::value(self)
    }
}

impl ValueEntry for ProfValue {
    type Key = u32;
    #[inline]
    fn key(&self) -> u32 {
        self.prof_index()
    }
    #[inline]
    fn value(&self) -> f64 {
        ProfValue::value(self)
    }
}

/// The run of the `i`-th index entry: from its start to the next entry's start (or the end);
/// empty when the block is damaged there.
#[inline]
pub(crate) fn run_at<'a, I: IndexEntry, V>(index: &[I], values: &'a [V], i: usize) -> &'a [V] {
    let Some(entry) = index.get(i) else {
        return &[];
    };
    let start = entry.start_index();
    let end = index
        .get(i + 1)
        .map_or(values.len() as u64, IndexEntry::start_index);
    if start > end || end > values.len() as u64 {
        return &[];
    }
    &values[start as usize..end as usize]
}

/// Below this many candidates a linear scan beats further probes: they span a few adjacent
/// cache lines, whose loads the CPU issues together.
const SCAN: usize = 8;

/// The position of `key` in `items`, sorted by `key_of` (strictly ascending, as `validate`
/// checks; on unsorted input the answer may be `None` or another position holding `key`, never a
/// panic or a loop: every probe shrinks the candidate range).
#[inline]
pub(crate) fn find<T>(items: &[T], key: u64, key_of: impl Fn(&T) -> u64) -> Option<usize> {
    let (first, last) = (items.first()?, items.last()?);
    let (mut a, mut b) = (key_of(first), key_of(last));
    if key <= a || key >= b {
        return if key == a {
            Some(0)
        } else if key == b {
            Some(items.len() - 1)
        } else {
            None
        };
    }
    // Candidates are items[lo..hi]; a is the key at lo - 1 and b the key at hi, a < key < b.
    // Interpolation steps first (about log log n of them on hpcprof's dense ctxIds), bisection
    // once log2(n) of them have not found the key: O(log n) probes whatever the layout.
    let (mut lo, mut hi) = (1usize, items.len() - 1);
    let mut interpolations = usize::BITS - items.len().leading_zeros();
    while hi - lo > SCAN {
        let len = hi - lo;
        let g = if interpolations == 0 || a >= b || key <= a || key >= b {
            lo + len / 2
        } else {
            interpolations -= 1;
            // Position among the len + 1 gaps between a and b, by value (no overflow: u128).
            let step = u128::from(key - a) * (len as u128 + 1) / u128::from(b - a);
            (lo - 1).saturating_add(step as usize).clamp(lo, hi - 1)
        };
        let k = key_of(&items[g]);
        if k == key {
            return Some(g);
        }
        if k < key {
            (lo, a) = (g + 1, k);
        } else {
            (hi, b) = (g, k);
        }
    }
    items[lo..hi]
        .iter()
        .position(|x| key_of(x) == key)
        .map(|i| lo + i)
}

/// The run of `key` (empty when the index has no such key).
#[inline]
pub(crate) fn run_of<'a, I: IndexEntry, V>(index: &[I], values: &'a [V], key: I::Key) -> &'a [V] {
    match find(index, key.into(), |e| e.key().into()) {
        Some(i) => run_at(index, values, i),
        None => &[],
    }
}

/// The value of `key` in a run, `None` when it is not stored (a zero).
#[inline]
pub(crate) fn value_in<V: ValueEntry>(run: &[V], key: V::Key) -> Option<f64> {
    find(run, key.into(), |v| v.key().into()).map(|i| run[i].value())
}

/// The fast filter of the validation passes: true when every run of values is strictly sorted
/// by subkey and every value's subkey passes `ok`. `index` must already be known sorted with
/// non-decreasing `startIndex <= values.len()`.
///
/// Instead of a loop per run (a mispredicted exit for every few values), one branch-free pass
/// counts the "breaks" (a subkey not above the one before it) over all values, and one pass over
/// the index counts the breaks that fall on a run start. The runs are sorted exactly when the
/// two counts agree. A false answer (or values before the first run) sends the caller to its
/// exact, slower check, which finds and names the fault.
pub(crate) fn runs_sorted<I: IndexEntry, V: ValueEntry>(
    index: &[I],
    values: &[V],
    ok: impl Fn(V::Key) -> bool,
) -> bool {
    let mut breaks = 0usize;
    let mut all_ok = true;
    let mut prev: Option<V::Key> = None;
    for v in values {
        let k = v.key();
        breaks += usize::from(prev.is_some_and(|p| k <= p));
        all_ok &= ok(k);
        prev = Some(k);
    }
    let mut at_starts = 0usize;
    let mut last = 0u64;
    for e in index {
        let s = e.start_index();
        if s != last && (s as usize) < values.len() {
            let (a, b) = (&values[s as usize - 1], &values[s as usize]);
            at_starts += usize::from(b.key() <= a.key());
        }
        last = s;
    }
    all_ok && breaks == at_starts
}

#[cfg(test)]
mod tests {
    use super::{IndexEntry, ValueEntry, find, runs_sorted};

    struct Start(u64);
    struct Key(u16);

    impl IndexEntry for Start {
        type Key = u32;
        fn key(&self) -> u32 {
            0
        }
        fn start_index(&self) -> u64 {
            self.0
        }
    }

    impl ValueEntry for Key {
        type Key = u16;
        fn key(&self) -> u16 {
            self.0
        }
        fn value(&self) -> f64 {
            0.0
        }
    }

    fn sorted(starts: &[u64], keys: &[u16], limit: u16) -> bool {
        let index: Vec<Start> = starts.iter().map(|&s| Start(s)).collect();
        let values: Vec<Key> = keys.iter().map(|&k| Key(k)).collect();
        runs_sorted(&index, &values, |k| k < limit)
    }

    #[test]
    fn run_filter_accepts_sorted_runs_only() {
        // Runs [1 5 9] [0 2] [] [3]: breaks only at run starts.
        assert!(sorted(&[0, 3, 5, 5], &[1, 5, 9, 0, 2, 3], 10));
        assert!(sorted(&[], &[], 10));
        // A break inside a run, an equal pair, a subkey failing the predicate.
        assert!(!sorted(&[0, 3], &[1, 5, 4, 0, 2], 10));
        assert!(!sorted(&[0, 3], &[1, 5, 9, 2, 2], 10));
        assert!(!sorted(&[0, 3], &[1, 5, 9, 0, 2], 9));
        // Values before the first run: the filter declines, the exact check decides.
        assert!(!sorted(&[2], &[5, 1, 3], 10));
    }

    /// Every key of `items` (sorted, distinct) is found at its position, and keys between and
    /// around them are not.
    fn check(items: &[u64]) {
        for (i, &k) in items.iter().enumerate() {
            assert_eq!(find(items, k, |&x| x), Some(i), "key {k} at {i}");
        }
        let absent = items
            .iter()
            .flat_map(|&k| [k.wrapping_sub(1), k + 1])
            .chain([0, u64::MAX]);
        for k in absent {
            if !items.contains(&k) {
                assert_eq!(find(items, k, |&x| x), None, "key {k} absent");
            }
        }
    }

    #[test]
    fn finds_in_dense_sparse_and_skewed_layouts() {
        check(&[]);
        check(&[5]);
        check(&(1..100).collect::<Vec<_>>());
        check(&(0..5000).map(|i| i * 3 + (i % 3)).collect::<Vec<_>>());
        // Skewed: interpolation guesses badly, the bisection fallback still finds everything.
        let mut skewed: Vec<u64> = (0..3000).collect();
        skewed.extend((0..40).map(|i| u64::MAX / 2 + i * (u64::MAX / 100)));
        check(&skewed);
        check(&(0..2000).map(|i: u64| i * i * i).collect::<Vec<_>>());
    }

    proptest::proptest! {
        /// Any strictly ascending keys (dense runs, gaps, clusters far apart): `find` agrees
        /// with a binary search for present and absent keys.
        #[test]
        fn find_agrees_with_binary_search(
            steps in proptest::collection::vec(
                proptest::prop_oneof![1u64..3, 1u64..1000, 1u64..(1 << 40)],
                0..600,
            ),
            probes in proptest::collection::vec(proptest::num::u64::ANY, 0..40),
        ) {
            let mut items: Vec<u64> = steps
                .iter()
                .scan(0u64, |acc, s| {
                    *acc = acc.saturating_add(*s);
                    Some(*acc)
                })
                .collect();
            items.dedup();
            for (i, &k) in items.iter().enumerate() {
                proptest::prop_assert_eq!(find(&items, k, |&x| x), Some(i));
            }
            for k in probes {
                proptest::prop_assert_eq!(find(&items, k, |&x| x), items.binary_search(&k).ok());
            }
        }
    }

    #[test]
    fn unsorted_input_neither_panics_nor_loops() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let items: Vec<u64> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % 1000
            })
            .collect();
        for key in 0..1100 {
            if let Some(i) = find(&items, key, |&x| x) {
                assert_eq!(items[i], key);
            }
        }
        let equal = vec![7u64; 100];
        assert_eq!(find(&equal, 7, |&x| x), Some(0));
        assert_eq!(find(&equal, 8, |&x| x), None);
    }
}
