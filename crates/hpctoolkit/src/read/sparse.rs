//! Lookups in a sparse value block, shared by profile.db and cct.db.
//!
//! FORMATS.md gives the Profile-Major and the Context-Major Sparse Value Blocks the same shape:
//! an index of `(key, startIndex)` pairs sorted by key, over runs of `(subkey, value)` pairs
//! sorted by subkey (profile.db: ctxId then metricId; cct.db: metricId then profIndex). One set of
//! lookups serves both, through the two small traits below.

use crate::raw::{CtxIndex, MetricIndex, ProfValue, Value};

/// An index entry: a key and the start of its run of values.
pub(crate) trait IndexEntry {
    /// The key the index is sorted by.
    type Key: Ord + Copy;
    fn key(&self) -> Self::Key;
    fn start_index(&self) -> u64;
}

/// A value entry: a subkey and its value.
pub(crate) trait ValueEntry {
    /// The subkey a run is sorted by.
    type Key: Ord + Copy;
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

/// The run of `key` (empty when the index has no such key).
#[inline]
pub(crate) fn run_of<'a, I: IndexEntry, V>(index: &[I], values: &'a [V], key: I::Key) -> &'a [V] {
    match index.binary_search_by_key(&key, IndexEntry::key) {
        Ok(i) => run_at(index, values, i),
        Err(_) => &[],
    }
}

/// The value of `key` in a run, `None` when it is not stored (a zero).
#[inline]
pub(crate) fn value_in<V: ValueEntry>(run: &[V], key: V::Key) -> Option<f64> {
    run.binary_search_by_key(&key, ValueEntry::key)
        .ok()
        .map(|i| run[i].value())
}
