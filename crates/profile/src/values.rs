//! The node values of a profile, stored by column: one [`NodeValueColumn`] per (context, value
//! type), holding a node id, a self value and, where given, an inclusive value per entry (12 to
//! 20 bytes and a presence byte a value), and the index that finds a node's entry while building.
//!
//! A query reads the columns of the one value type it needs and nothing else. While building,
//! a column whose nodes come in increasing order (a measured tree converted in the order of its
//! node ids, each node's values handed over once) needs no index at all: a new node goes at the
//! end, the same node as the last is the last entry. The first node to come out of order gives
//! the column an index (dense by node id while the column covers its nodes densely, hashed
//! otherwise), so every value added costs a bounded amount of work whatever the order.

use std::collections::HashMap;

use foldhash::fast::RandomState;

use crate::ids::{ContextId, NodeId, ValueTypeId};

/// Bit of a column's presence byte: the entry has a self value.
const HAS_SELF: u8 = 1;
/// Bit of a column's presence byte: the entry has a measured inclusive value.
const HAS_INCLUSIVE: u8 = 2;

/// The values of one value type measured in one context: one entry per call-tree node that has
/// a value, in the order the nodes were first given one. Read through
/// [`Profile::node_value_columns`](crate::Profile::node_value_columns).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeValueColumn {
    context: ContextId,
    value_type: ValueTypeId,
    nodes: Vec<NodeId>,
    /// Per entry; 0 where the entry has no self value.
    self_values: Vec<f64>,
    /// Per entry, or empty while no entry has an inclusive value; 0 where an entry has none.
    inclusive: Vec<f64>,
    /// Per entry, [`HAS_SELF`] and [`HAS_INCLUSIVE`].
    present: Vec<u8>,
}

impl NodeValueColumn {
    pub(crate) fn new(context: ContextId, value_type: ValueTypeId) -> NodeValueColumn {
        NodeValueColumn {
            context,
            value_type,
            nodes: Vec::new(),
            self_values: Vec::new(),
            inclusive: Vec::new(),
            present: Vec::new(),
        }
    }

    /// Where the values were measured.
    pub fn context(&self) -> ContextId {
        self.context
    }

    /// Moves the column to context `context` (a profile keeping some of its contexts
    /// renumbers them).
    pub(crate) fn set_context(&mut self, context: ContextId) {
        self.context = context;
    }

    /// The value type.
    pub fn value_type(&self) -> ValueTypeId {
        self.value_type
    }

    /// The number of entries (nodes with a value).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the column has no entry.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The node of each entry; no node appears twice.
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// The self value of each entry, 0 where the entry has none (see
    /// [`get`](Self::get) for the distinction).
    pub fn self_values(&self) -> &[f64] {
        &self.self_values
    }

    /// The measured inclusive value of each entry, 0 where the entry has none; `None` when no
    /// entry has one.
    pub fn inclusive_values(&self) -> Option<&[f64]> {
        (!self.inclusive.is_empty()).then_some(&self.inclusive[..])
    }

    /// Entry `i` as a [`NodeValue`], `None` past the end.
    pub fn get(&self, i: usize) -> Option<NodeValue> {
        (i < self.len()).then(|| self.value_at(i))
    }

    /// Every entry as a [`NodeValue`], in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = NodeValue> + '_ {
        (0..self.len()).map(|i| self.value_at(i))
    }

    /// Entry `i`, which exists.
    fn value_at(&self, i: usize) -> NodeValue {
        let present = self.present[i];
        NodeValue {
            context: self.context,
            node: self.nodes[i],
            value_type: self.value_type,
            self_value: (present & HAS_SELF != 0).then(|| self.self_values[i]),
            inclusive: (present & HAS_INCLUSIVE != 0).then(|| self.inclusive[i]),
        }
    }

    /// A new entry for `node`, with no value yet; returns its position.
    #[inline]
    fn push(&mut self, node: NodeId) -> usize {
        self.nodes.push(node);
        self.self_values.push(0.0);
        self.present.push(0);
        if !self.inclusive.is_empty() {
            self.inclusive.push(0.0);
        }
        self.nodes.len() - 1
    }

    /// A new entry for `node` with these values.
    #[inline]
    fn push_values(&mut self, node: NodeId, self_value: Option<f64>, inclusive: Option<f64>) {
        self.nodes.push(node);
        self.self_values.push(self_value.unwrap_or(0.0));
        let mut present = if self_value.is_some() { HAS_SELF } else { 0 };
        if let Some(x) = inclusive {
            if self.inclusive.is_empty() {
                self.inclusive.resize(self.nodes.len() - 1, 0.0);
            }
            present |= HAS_INCLUSIVE;
            self.inclusive.push(x);
        } else if !self.inclusive.is_empty() {
            self.inclusive.push(0.0);
        }
        self.present.push(present);
    }

    /// Adds the given values to entry `i`.
    #[inline]
    pub(crate) fn add(&mut self, i: usize, self_value: Option<f64>, inclusive: Option<f64>) {
        if let Some(x) = self_value {
            if self.present[i] & HAS_SELF == 0 {
                self.self_values[i] = x;
                self.present[i] |= HAS_SELF;
            } else {
                self.self_values[i] += x;
            }
        }
        if let Some(x) = inclusive {
            if self.inclusive.is_empty() {
                self.inclusive.resize(self.nodes.len(), 0.0);
            }
            if self.present[i] & HAS_INCLUSIVE == 0 {
                self.inclusive[i] = x;
                self.present[i] |= HAS_INCLUSIVE;
            } else {
                self.inclusive[i] += x;
            }
        }
    }

    fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.self_values.reserve(additional);
        self.present.reserve(additional);
    }

    fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
        self.self_values.shrink_to_fit();
        self.inclusive.shrink_to_fit();
        self.present.shrink_to_fit();
    }
}

/// Every node value of a profile ([`Profile::node_values`](crate::Profile::node_values)), column
/// by column.
#[derive(Debug, Clone, Copy)]
pub struct NodeValues<'a> {
    columns: &'a [NodeValueColumn],
}

impl<'a> NodeValues<'a> {
    pub(crate) fn new(columns: &'a [NodeValueColumn]) -> NodeValues<'a> {
        NodeValues { columns }
    }

    /// The number of values (one per (context, node, value type)).
    pub fn len(&self) -> usize {
        self.columns.iter().map(NodeValueColumn::len).sum()
    }

    /// Whether the profile has no node value.
    pub fn is_empty(&self) -> bool {
        self.columns.iter().all(NodeValueColumn::is_empty)
    }

    /// Every value, column by column.
    pub fn iter(&self) -> NodeValueIter<'a> {
        NodeValueIter {
            columns: self.columns,
            position: 0,
        }
    }
}

impl<'a> IntoIterator for NodeValues<'a> {
    type Item = NodeValue;
    type IntoIter = NodeValueIter<'a>;

    fn into_iter(self) -> NodeValueIter<'a> {
        self.iter()
    }
}

/// The iterator of [`NodeValues`].
#[derive(Debug, Clone)]
pub struct NodeValueIter<'a> {
    /// The columns not yet finished, the first from `position` on.
    columns: &'a [NodeValueColumn],
    position: usize,
}

impl Iterator for NodeValueIter<'_> {
    type Item = NodeValue;

    fn next(&mut self) -> Option<NodeValue> {
        loop {
            let (column, rest) = self.columns.split_first()?;
            if let Some(value) = column.get(self.position) {
                self.position += 1;
                return Some(value);
            }
            self.columns = rest;
            self.position = 0;
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = NodeValues::new(self.columns).len() - self.position;
        (left, Some(left))
    }
}

impl ExactSizeIterator for NodeValueIter<'_> {}

/// No entry in a [`DenseIndex`] slot.
const NONE: u32 = u32::MAX;

/// A dense table holds at most this many slots per key it holds (plus [`DENSE_SLACK`]): dense
/// while the keys cover their range, hashed when they are scattered over a large one.
const DENSE_PER_ENTRY: usize = 4;
/// Slots every dense table may have, whatever its number of keys.
const DENSE_SLACK: usize = 16;

/// A map from small `u32` keys (node or value type ids) to `u32` positions: a vector indexed by
/// key while the keys cover their range densely (at most [`DENSE_PER_ENTRY`] slots per key plus
/// [`DENSE_SLACK`]), a hash table for the keys beyond, hashed with a random seed (keys come from
/// the input).
#[derive(Debug, Default)]
struct DenseIndex {
    dense: Vec<u32>,
    entries: usize,
    sparse: HashMap<u32, u32, RandomState>,
}

impl DenseIndex {
    #[inline]
    fn get(&self, key: u32) -> Option<u32> {
        match self.dense.get(key as usize) {
            Some(&at) if at != NONE => Some(at),
            // A key put in the hash table may lie below the dense table's end once it grew.
            _ if self.sparse.is_empty() => None,
            _ => self.sparse.get(&key).copied(),
        }
    }

    /// Records `key` (not yet in the index) at `at`.
    #[inline]
    fn insert(&mut self, key: u32, at: u32) {
        self.entries += 1;
        let k = key as usize;
        let bound = self.entries * DENSE_PER_ENTRY + DENSE_SLACK;
        if k >= self.dense.len() && k < bound {
            // Grown geometrically (within the bound): keys mostly come in order.
            let len = (k + 1).max(self.dense.len() * 2).min(bound);
            self.dense.resize(len, NONE);
        }
        if k < self.dense.len() {
            self.dense[k] = at;
        } else {
            self.sparse.insert(key, at);
        }
    }
}

/// A column while building, with what finds a node's entry in it.
#[derive(Debug)]
struct ColumnBuilder {
    column: NodeValueColumn,
    /// `None` while the column's nodes increase strictly (a node's entry is then the last one or
    /// none), else the position of every node's entry.
    index: Option<DenseIndex>,
}

impl ColumnBuilder {
    /// The position of `node`'s entry, made if new.
    #[inline]
    fn entry(&mut self, node: NodeId) -> usize {
        match (&mut self.index, self.column.nodes.last()) {
            (None, None) => self.column.push(node),
            (None, Some(&last)) if node > last => self.column.push(node),
            (None, Some(&last)) if node == last => self.column.len() - 1,
            (None, Some(_)) => {
                let mut index = DenseIndex::default();
                for (at, n) in self.column.nodes.iter().enumerate() {
                    index.insert(n.0, at as u32);
                }
                self.index = Some(index);
                self.entry(node)
            }
            (Some(index), _) => match index.get(node.0) {
                Some(at) => at as usize,
                None => {
                    let at = self.column.push(node);
                    index.insert(node.0, at as u32);
                    at
                }
            },
        }
    }
}

/// The node values while building: the columns in creation order, found per context by value
/// type id.
#[derive(Debug, Default)]
pub(crate) struct ColumnStore {
    columns: Vec<ColumnBuilder>,
    /// Indexed by context: that context's columns by value type id.
    by_context: Vec<DenseIndex>,
    /// The column of the last value added, by (context, value type).
    last: Option<((ContextId, ValueTypeId), u32)>,
    /// Values announced by [`ColumnStore::reserve`] not yet reserved in a column.
    reserved: usize,
    /// The number of value types, to share `reserved` among a context's new columns.
    value_types: usize,
    /// Columns given a share of `reserved` since it was last announced.
    shared: usize,
}

/// What a [`ColumnStore`] refuses: a column would hold more entries than a `u32` names.
pub(crate) struct ColumnFull;

impl ColumnStore {
    /// The column of (context, value type), made if new. The caller has checked both handles.
    #[inline]
    pub(crate) fn column(&mut self, context: ContextId, value_type: ValueTypeId) -> usize {
        let key = (context, value_type);
        if let Some((last, at)) = self.last
            && last == key
        {
            return at as usize;
        }
        if self.by_context.len() <= context.index() {
            self.by_context
                .resize_with(context.index() + 1, DenseIndex::default);
        }
        let index = &mut self.by_context[context.index()];
        let at = match index.get(value_type.0) {
            Some(at) => at,
            None => {
                // Columns are at most one per (context, value type), both u32 handles, and far
                // fewer than the values: a u32 holds their count.
                let at = self.columns.len() as u32;
                let mut column = NodeValueColumn::new(context, value_type);
                if self.reserved > 0 {
                    // An even share among the value types not given one yet: the columns of a
                    // context made one after the other each reserve what they will hold, where
                    // a share of what is left each time under-reserved the last ones.
                    let left = self.value_types.saturating_sub(self.shared).max(1);
                    let share = (self.reserved / left).max(self.reserved.min(1024));
                    column.reserve(share);
                    self.reserved -= share;
                    self.shared += 1;
                }
                self.columns.push(ColumnBuilder {
                    column,
                    index: None,
                });
                index.insert(value_type.0, at);
                at
            }
        };
        self.last = Some((key, at));
        at as usize
    }

    /// Adds values to `node`'s entry in column `column`.
    #[inline]
    pub(crate) fn add(
        &mut self,
        column: usize,
        node: NodeId,
        self_value: Option<f64>,
        inclusive: Option<f64>,
    ) -> Result<(), ColumnFull> {
        let column = &mut self.columns[column];
        if column.column.len() >= crate::ids::MAX_ENTRIES as usize {
            return Err(ColumnFull);
        }
        if column.index.is_none() && column.column.nodes.last().is_none_or(|&last| node > last) {
            // The bulk path: a new node after the last, its values written as they come.
            column.column.push_values(node, self_value, inclusive);
            return Ok(());
        }
        let at = column.entry(node);
        column.column.add(at, self_value, inclusive);
        Ok(())
    }

    /// Announces about `additional` more values over `value_types` value types: new columns
    /// reserve their share.
    pub(crate) fn reserve(&mut self, additional: usize, value_types: usize) {
        self.reserved = self.reserved.saturating_add(additional);
        self.value_types = value_types;
        self.shared = 0;
    }

    /// The columns, trimmed to their length, without their indexes.
    pub(crate) fn build(self) -> Vec<NodeValueColumn> {
        self.columns
            .into_iter()
            .map(|c| {
                let mut column = c.column;
                column.shrink_to_fit();
                column
            })
            .collect()
    }
}

/// Serializes the columns as the list of their [`NodeValue`]s.
#[cfg(feature = "serde")]
#[allow(clippy::ptr_arg)] // serde's `serialize_with` passes the field as it is declared.
pub(crate) fn serialize_rows<S: serde::Serializer>(
    columns: &Vec<NodeValueColumn>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(NodeValues::new(columns))
}

/// The columns of a list of node values whose handles the caller has checked, the values of a
/// (context, node, value type) listed twice added.
#[cfg(feature = "serde")]
pub(crate) fn columns_from_rows(rows: &[NodeValue]) -> Result<Vec<NodeValueColumn>, ColumnFull> {
    let mut store = ColumnStore::default();
    for v in rows {
        let column = store.column(v.context, v.value_type);
        store.add(column, v.node, v.self_value, v.inclusive)?;
    }
    Ok(store.build())
}

/// The values of one value type at one call-tree node in one context.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NodeValue {
    /// Where it was measured.
    pub context: ContextId,
    /// The call path.
    pub node: NodeId,
    /// The value type.
    pub value_type: ValueTypeId,
    /// The self (exclusive) value: the cost at exactly this node, not in any child node (a
    /// function's lines and loops are child nodes).
    pub self_value: Option<f64>,
    /// The measured inclusive value: the cost of the node's whole subtree.
    pub inclusive: Option<f64>,
}
