//! [`ProfileBuilder`]: interning tables that turn a format's records into a [`Profile`].

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, Hash};

use foldhash::fast::RandomState;

use crate::ids::{ContextId, EdgeId, FrameId, MAX_ENTRIES, NodeId, StringId, ValueTypeId};
use crate::model::{
    CallEdge, Context, EdgeValue, FlatValue, Frame, IdKind, Measured, Node, Profile, Span, Unit,
    ValueType,
};
use crate::values::{ColumnFull, ColumnStore};

/// What went wrong while building (or deserializing) a profile. Every variant names the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A table would hold more entries than a `u32` handle can name.
    #[error("too many entries for the profile model: {table}: more than {max} distinct entries")]
    TooMany {
        /// The table (`"strings"`, `"frames"`, `"nodes"` ...).
        table: &'static str,
        /// The most entries the table holds.
        max: u32,
    },
    /// A handle does not name an entry of this builder (it came from another builder or
    /// profile), or in deserialized data a handle is out of range.
    #[error(
        "handle names no entry of this profile: {table}: index {index} but the table holds {len}"
    )]
    InvalidId {
        /// The table the handle points into.
        table: &'static str,
        /// The handle's index.
        index: u32,
        /// The number of entries in the table.
        len: u32,
    },
    /// In deserialized data, a node's parent does not come before it.
    #[error(
        "call tree out of order: nodes: node {node} names parent {parent}, which does not come before it"
    )]
    ParentAfterChild {
        /// The node.
        node: u32,
        /// Its parent.
        parent: u32,
    },
    /// A stack with no frame was given where a call path is needed.
    #[error("empty stack: a call path needs at least one frame")]
    EmptyStack,
}

/// The hash tables of the builder. Their keys come from the input (names, addresses), so they
/// hash with a seed drawn at random for each table: a hostile input cannot aim at collisions.
type Map<K, V> = HashMap<K, V, RandomState>;

/// What the builder hashes to find an interned entry: its fields packed into a few words,
/// rather than the derived `Hash` of every field and `Option` discriminant. Equal entries pack
/// alike; unequal ones may too (the index compares the entries themselves).
trait Packed {
    type Words: Hash;
    fn packed(&self) -> Self::Words;
    /// Whether the two are the same entry (for a value, the same key).
    fn same(&self, other: &Self) -> bool;
}

/// A handle or `u32::MAX` for none (handles never reach `u32::MAX`).
fn word(id: Option<u32>) -> u64 {
    u64::from(id.unwrap_or(u32::MAX))
}

impl Packed for Frame {
    type Words = (u64, u64, u64);
    fn same(&self, other: &Frame) -> bool {
        self == other
    }
    #[inline]
    fn packed(&self) -> (u64, u64, u64) {
        let line = self.line.map_or(0, |l| u64::from(l) + 1);
        let address = self.address.map_or(0, |a| a.rotate_left(8) ^ 1);
        (
            word(self.function.map(|s| s.0)) | word(self.file.map(|s| s.0)) << 32,
            word(self.module.map(|s| s.0)) ^ line << 32,
            address ^ self.kind as u64,
        )
    }
}

impl Packed for Node {
    type Words = u64;
    fn same(&self, other: &Node) -> bool {
        self == other
    }
    #[inline]
    fn packed(&self) -> u64 {
        word(self.parent.map(|p| p.0)) << 32 | u64::from(self.frame.0)
    }
}

/// A flat value is found by its (context, frame, value type), in its context's index: the
/// hash packs the frame and the value type.
impl Packed for FlatValue {
    type Words = u64;
    fn same(&self, other: &FlatValue) -> bool {
        (self.context, self.frame, self.value_type)
            == (other.context, other.frame, other.value_type)
    }
    #[inline]
    fn packed(&self) -> u64 {
        u64::from(self.frame.0) << 32 | u64::from(self.value_type.0)
    }
}

/// The handles of a table's entries, found by value: the table holds the values, so a slot of
/// the index costs a `u32` handle (and hashbrown's control byte) instead of a copy of the key.
/// Hashed with a seed drawn at random, as [`Map`].
#[derive(Debug, Default)]
struct HandleIndex {
    handles: hashbrown::HashTable<u32>,
    hasher: RandomState,
}

impl HandleIndex {
    /// The hash of `value`, and the handle of the entry of `entries` equal to it.
    #[inline]
    fn find<T: Packed>(&self, entries: &[T], value: &T) -> (u64, Option<u32>) {
        let hash = self.hasher.hash_one(value.packed());
        let found = self
            .handles
            .find(hash, |&h| entries[h as usize].same(value))
            .copied();
        (hash, found)
    }

    /// Records `handle` (an entry of `entries` whose value hashes to `hash`), not yet indexed.
    #[inline]
    fn insert<T: Packed>(&mut self, entries: &[T], hash: u64, handle: u32) {
        let hasher = &self.hasher;
        self.handles.insert_unique(hash, handle, |&h| {
            hasher.hash_one(entries[h as usize].packed())
        });
    }

    /// The handle of the entry of `entries` equal to `value`; if none, `value` is pushed as a new
    /// entry of `table` once `valid` accepts it.
    #[inline]
    fn intern<T: Packed>(
        &mut self,
        entries: &mut Vec<T>,
        value: T,
        table: &'static str,
        valid: impl FnOnce() -> Result<(), ModelError>,
    ) -> Result<u32, ModelError> {
        let (hash, found) = self.find(entries, &value);
        if let Some(id) = found {
            return Ok(id);
        }
        valid()?;
        let id = next_id(entries.len(), table)?;
        entries.push(value);
        self.insert(entries, hash, id);
        Ok(id)
    }

    fn reserve<T: Packed>(&mut self, entries: &[T], additional: usize) {
        let hasher = &self.hasher;
        self.handles.reserve(additional, |&h| {
            hasher.hash_one(entries[h as usize].packed())
        });
    }
}

#[inline]
fn next_id(len: usize, table: &'static str) -> Result<u32, ModelError> {
    u32::try_from(len)
        .ok()
        .filter(|&n| n < MAX_ENTRIES)
        .ok_or(ModelError::TooMany {
            table,
            max: MAX_ENTRIES,
        })
}

#[inline]
fn check(index: u32, len: usize, table: &'static str) -> Result<(), ModelError> {
    if (index as usize) < len {
        Ok(())
    } else {
        Err(ModelError::InvalidId {
            table,
            index,
            len: len as u32,
        })
    }
}

/// Builds a [`Profile`]: interns strings, frames, call-tree nodes, value types and contexts, and
/// accumulates values. Adding the same (context, node, value type) twice adds the values, so
/// memory grows with the distinct entries, not with the samples or records fed in; every table
/// is a vector plus an index, so memory and time are linear in the input given.
///
/// The hash indexes use foldhash with a random seed per table, so keys taken from hostile input
/// cannot be made to collide. Node values, the largest table, are stored by column, one
/// [`NodeValueColumn`](crate::NodeValueColumn) per (context, value type), 13 bytes a value (21
/// with an inclusive value): a column whose nodes come in increasing order (a measured tree
/// added node by node in the order of its node ids) takes each value at its end without any
/// lookup; the first node out of order gives the column an index by node id (dense while the
/// column covers its nodes densely, hashed otherwise), so each value added costs a bounded
/// amount of work whatever the order. A converter of a measured tree hands each node's values
/// over at once ([`add_node_values`](Self::add_node_values)). Callers that know their counts can
/// [`reserve_frames`](Self::reserve_frames), [`reserve_nodes`](Self::reserve_nodes) and
/// [`reserve_node_values`](Self::reserve_node_values) to spare the tables' doubling. Frames and
/// nodes are indexed by their handles only (the tables hold them), hashed from a few packed
/// words.
///
/// Handles returned by one builder are checked on use: a foreign handle is an
/// [`ModelError::InvalidId`], never a panic or a corrupt profile.
#[derive(Debug, Default)]
pub struct ProfileBuilder {
    name: Option<StringId>,
    strings: Map<Box<str>, StringId>,
    frames: Vec<Frame>,
    frame_index: HandleIndex,
    nodes: Vec<Node>,
    node_index: HandleIndex,
    /// The root-first path of the last stack interned from the roots, as (frame, node).
    last_stack: Vec<(FrameId, NodeId)>,
    value_types: Vec<ValueType>,
    value_type_index: Map<(StringId, Unit), ValueTypeId>,
    contexts: Vec<Context>,
    context_index: Map<Context, ContextId>,
    node_values: ColumnStore,
    flat_values: Vec<FlatValue>,
    /// Indexed by context: the flat values of that context. One index per context keeps each
    /// small: merging many inputs, each its own context, looks up and grows a table of one
    /// input's values, not one of all the values merged so far.
    flat_value_index: Vec<HandleIndex>,
    call_edges: Vec<CallEdge>,
    call_edge_index: Map<CallEdge, EdgeId>,
    edge_values: Vec<EdgeValue>,
    /// Indexed by context, as `flat_value_index`: that context's edge values.
    edge_value_index: Vec<Map<(EdgeId, ValueTypeId), u32>>,
    spans: Vec<Span>,
    span_unit: Option<Unit>,
    time_resolution: Option<Unit>,
    /// How many profiles [`ProfileBuilder::append`] has added.
    appended: usize,
    default_value_type: Option<ValueTypeId>,
    calls_value_type: Option<ValueTypeId>,
    statements_value_type: Option<ValueTypeId>,
}

/// The index of `context` (a checked handle) among `indexes`, one per context, made if new.
#[inline]
fn context_index<T: Default>(indexes: &mut Vec<T>, context: ContextId) -> &mut T {
    if indexes.len() <= context.index() {
        indexes.resize_with(context.index() + 1, T::default);
    }
    &mut indexes[context.index()]
}

#[inline]
fn add_option(total: &mut Option<f64>, value: f64) {
    *total = Some(total.unwrap_or(0.0) + value);
}

impl ProfileBuilder {
    /// An empty builder.
    pub fn new() -> ProfileBuilder {
        ProfileBuilder::default()
    }

    /// Interns a string.
    pub fn intern_string(&mut self, s: &str) -> Result<StringId, ModelError> {
        if let Some(&id) = self.strings.get(s) {
            return Ok(id);
        }
        let id = StringId(next_id(self.strings.len(), "strings")?);
        self.strings.insert(s.into(), id);
        Ok(id)
    }

    /// Sets the program or profile name.
    pub fn set_name(&mut self, name: &str) -> Result<(), ModelError> {
        self.name = Some(self.intern_string(name)?);
        Ok(())
    }

    /// Interns a frame (equal frames get the same handle).
    pub fn intern_frame(&mut self, frame: Frame) -> Result<FrameId, ModelError> {
        let strings = self.strings.len();
        let id = self
            .frame_index
            .intern(&mut self.frames, frame, "frames", || {
                frame
                    .string_ids()
                    .try_for_each(|s| check(s.0, strings, "strings"))
            })?;
        Ok(FrameId(id))
    }

    /// Interns the node for `frame` called from `parent` (`None`: a root).
    pub fn intern_node(
        &mut self,
        parent: Option<NodeId>,
        frame: FrameId,
    ) -> Result<NodeId, ModelError> {
        let (nodes, frames) = (self.nodes.len(), self.frames.len());
        let node = Node { parent, frame };
        let id = self.node_index.intern(&mut self.nodes, node, "nodes", || {
            if let Some(p) = parent {
                check(p.0, nodes, "nodes")?;
            }
            check(frame.0, frames, "frames")
        })?;
        Ok(NodeId(id))
    }

    /// Interns a call path below `parent`, outermost frame first, and returns its innermost node.
    pub fn intern_stack(
        &mut self,
        parent: Option<NodeId>,
        frames: impl IntoIterator<Item = FrameId>,
    ) -> Result<NodeId, ModelError> {
        let mut node = parent;
        if parent.is_some() {
            let mut empty = true;
            for frame in frames {
                node = Some(self.intern_node(node, frame)?);
                empty = false;
            }
            return match node {
                Some(node) if !empty => Ok(node),
                _ => Err(ModelError::EmptyStack),
            };
        }
        // Successive samples mostly share a prefix with the one before: reusing its nodes skips
        // hashing the shared frames.
        let mut shared = true;
        for (depth, frame) in frames.into_iter().enumerate() {
            let id = match self.last_stack.get(depth) {
                Some(&(last_frame, last_node)) if shared && last_frame == frame => last_node,
                _ => {
                    shared = false;
                    self.last_stack.truncate(depth);
                    let id = self.intern_node(node, frame)?;
                    self.last_stack.push((frame, id));
                    id
                }
            };
            node = Some(id);
        }
        node.ok_or(ModelError::EmptyStack)
    }

    /// Interns a value type by name and unit. Adding it again with another [`Measured`] widens
    /// what it measured.
    pub fn intern_value_type(
        &mut self,
        name: &str,
        unit: Unit,
        measured: Measured,
    ) -> Result<ValueTypeId, ModelError> {
        let name = self.intern_string(name)?;
        if let Unit::Other(s) = unit {
            check(s.0, self.strings.len(), "strings")?;
        }
        match self.value_type_index.entry((name, unit)) {
            Entry::Occupied(e) => {
                let id = *e.get();
                let vt = &mut self.value_types[id.index()];
                vt.measured = vt.measured.union(measured);
                Ok(id)
            }
            Entry::Vacant(e) => {
                let id = ValueTypeId(next_id(self.value_types.len(), "value types")?);
                self.value_types.push(ValueType {
                    name,
                    unit,
                    measured,
                });
                e.insert(id);
                Ok(id)
            }
        }
    }

    /// Names the value type shown when none is asked for.
    pub fn set_default_value_type(&mut self, id: ValueTypeId) -> Result<(), ModelError> {
        check(id.0, self.value_types.len(), "value types")?;
        self.default_value_type = Some(id);
        Ok(())
    }

    /// Names the value type that counts calls (its self value is the number of entries).
    pub fn set_calls_value_type(&mut self, id: ValueTypeId) -> Result<(), ModelError> {
        check(id.0, self.value_types.len(), "value types")?;
        self.calls_value_type = Some(id);
        Ok(())
    }

    /// Names the value type that counts statements (its self value at a line is how many times
    /// the line's statements ran), which `top` grouped by line shows beside each line's value.
    pub fn set_statements_value_type(&mut self, id: ValueTypeId) -> Result<(), ModelError> {
        check(id.0, self.value_types.len(), "value types")?;
        self.statements_value_type = Some(id);
        Ok(())
    }

    /// Interns a context (equal identifier tuples, names and summary flags share a handle).
    pub fn intern_context(&mut self, context: Context) -> Result<ContextId, ModelError> {
        if let Some(&id) = self.context_index.get(&context) {
            return Ok(id);
        }
        for s in context
            .name
            .iter()
            .chain(context.ids.iter().filter_map(|(k, _)| match k {
                IdKind::Other(s) => Some(s),
                _ => None,
            }))
        {
            check(s.0, self.strings.len(), "strings")?;
        }
        let id = ContextId(next_id(self.contexts.len(), "contexts")?);
        self.contexts.push(context.clone());
        self.context_index.insert(context, id);
        Ok(id)
    }

    /// Adds values to the entry of (context, node, value type), made if new.
    #[inline]
    fn add_node_value(
        &mut self,
        context: ContextId,
        node: NodeId,
        value_type: ValueTypeId,
        self_value: Option<f64>,
        inclusive: Option<f64>,
    ) -> Result<(), ModelError> {
        check(context.0, self.contexts.len(), "contexts")?;
        check(node.0, self.nodes.len(), "nodes")?;
        self.add_checked_node_value(context, node, value_type, self_value, inclusive)
    }

    /// [`add_node_value`](Self::add_node_value) once the context and node are checked.
    #[inline]
    fn add_checked_node_value(
        &mut self,
        context: ContextId,
        node: NodeId,
        value_type: ValueTypeId,
        self_value: Option<f64>,
        inclusive: Option<f64>,
    ) -> Result<(), ModelError> {
        check(value_type.0, self.value_types.len(), "value types")?;
        let column = self.node_values.column(context, value_type);
        self.node_values
            .add(column, node, self_value, inclusive)
            .map_err(|ColumnFull| ModelError::TooMany {
                table: "node values",
                max: MAX_ENTRIES,
            })
    }

    /// Adds the values of one node in one context: for each `(value type, self, inclusive)`,
    /// `self` to the node's self value and `inclusive` to its measured inclusive value (`None`
    /// adds nothing; with both `None` the value type gets no entry). As [`add_self`](Self::add_self) and
    /// [`add_inclusive`](Self::add_inclusive) value by value, with the context and node checked
    /// once for them all: what a converter adds at each node of a measured tree.
    pub fn add_node_values(
        &mut self,
        context: ContextId,
        node: NodeId,
        values: impl IntoIterator<Item = (ValueTypeId, Option<f64>, Option<f64>)>,
    ) -> Result<(), ModelError> {
        check(context.0, self.contexts.len(), "contexts")?;
        check(node.0, self.nodes.len(), "nodes")?;
        for (value_type, self_value, inclusive) in values {
            if self_value.is_some() || inclusive.is_some() {
                self.add_checked_node_value(context, node, value_type, self_value, inclusive)?;
            }
        }
        Ok(())
    }

    /// Adds `value` to the self value of `node` in `context`.
    pub fn add_self(
        &mut self,
        context: ContextId,
        node: NodeId,
        value_type: ValueTypeId,
        value: f64,
    ) -> Result<(), ModelError> {
        self.add_node_value(context, node, value_type, Some(value), None)
    }

    /// Adds `value` to the measured inclusive value of `node` in `context`.
    pub fn add_inclusive(
        &mut self,
        context: ContextId,
        node: NodeId,
        value_type: ValueTypeId,
        value: f64,
    ) -> Result<(), ModelError> {
        self.add_node_value(context, node, value_type, None, Some(value))
    }

    /// Makes room for `additional` more distinct frames, for a caller that knows a bound (the
    /// contexts of a measured tree): the table and its index grow once instead of doubling.
    /// Pass a count bounded by the input's size, as for any allocation.
    pub fn reserve_frames(&mut self, additional: usize) {
        self.frames.reserve(additional);
        self.frame_index.reserve(&self.frames, additional);
    }

    /// Makes room for `additional` more call-tree nodes, for a caller that knows how many it
    /// will add (the nodes of a measured tree): the tables then grow once instead of doubling.
    /// Pass a count bounded by the input's size, as for any allocation.
    pub fn reserve_nodes(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.node_index.reserve(&self.nodes, additional);
    }

    /// Makes room for `additional` more distinct (context, node, value type) values, for a
    /// caller that knows how many it will add. Pass a count bounded by the input's size.
    pub fn reserve_node_values(&mut self, additional: usize) {
        self.node_values.reserve(additional, self.value_types.len());
    }

    /// Adds a sample: interns the call path (outermost frame first) and adds `weight` to the
    /// self value of its innermost node. Returns that node.
    pub fn add_sample(
        &mut self,
        context: ContextId,
        stack: impl IntoIterator<Item = FrameId>,
        value_type: ValueTypeId,
        weight: f64,
    ) -> Result<NodeId, ModelError> {
        let node = self.intern_stack(None, stack)?;
        self.add_self(context, node, value_type, weight)?;
        Ok(node)
    }

    fn flat_value(
        &mut self,
        context: ContextId,
        frame: FrameId,
        value_type: ValueTypeId,
    ) -> Result<&mut FlatValue, ModelError> {
        let value = FlatValue {
            context,
            frame,
            value_type,
            self_value: None,
            inclusive: None,
        };
        check(context.0, self.contexts.len(), "contexts")?;
        let (frames, value_types) = (self.frames.len(), self.value_types.len());
        let index = context_index(&mut self.flat_value_index, context).intern(
            &mut self.flat_values,
            value,
            "flat values",
            || {
                check(frame.0, frames, "frames")?;
                check(value_type.0, value_types, "value types")
            },
        )?;
        Ok(&mut self.flat_values[index as usize])
    }

    /// Adds `value` to the measured flat self value of `frame` (a sub's self time, a line's
    /// statement time or count).
    pub fn add_flat_self(
        &mut self,
        context: ContextId,
        frame: FrameId,
        value_type: ValueTypeId,
        value: f64,
    ) -> Result<(), ModelError> {
        add_option(
            &mut self.flat_value(context, frame, value_type)?.self_value,
            value,
        );
        Ok(())
    }

    /// Adds `value` to the measured flat inclusive value of `frame` (as the tool computed it).
    pub fn add_flat_inclusive(
        &mut self,
        context: ContextId,
        frame: FrameId,
        value_type: ValueTypeId,
        value: f64,
    ) -> Result<(), ModelError> {
        add_option(
            &mut self.flat_value(context, frame, value_type)?.inclusive,
            value,
        );
        Ok(())
    }

    /// Interns a call edge.
    pub fn intern_call_edge(&mut self, edge: CallEdge) -> Result<EdgeId, ModelError> {
        if let Some(&id) = self.call_edge_index.get(&edge) {
            return Ok(id);
        }
        for frame in [Some(edge.caller), edge.site, Some(edge.callee)]
            .into_iter()
            .flatten()
        {
            check(frame.0, self.frames.len(), "frames")?;
        }
        let id = EdgeId(next_id(self.call_edges.len(), "call edges")?);
        self.call_edges.push(edge);
        self.call_edge_index.insert(edge, id);
        Ok(id)
    }

    /// Adds `value` to a call edge's value (a call count, the time spent in the callee from that
    /// call site).
    pub fn add_edge_value(
        &mut self,
        context: ContextId,
        edge: EdgeId,
        value_type: ValueTypeId,
        value: f64,
    ) -> Result<(), ModelError> {
        check(context.0, self.contexts.len(), "contexts")?;
        let index =
            match context_index(&mut self.edge_value_index, context).entry((edge, value_type)) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    check(edge.0, self.call_edges.len(), "call edges")?;
                    check(value_type.0, self.value_types.len(), "value types")?;
                    let index = next_id(self.edge_values.len(), "edge values")?;
                    self.edge_values.push(EdgeValue {
                        context,
                        edge,
                        value_type,
                        value: 0.0,
                    });
                    *e.insert(index)
                }
            };
        self.edge_values[index as usize].value += value;
        Ok(())
    }

    /// Sets the time unit of the spans.
    pub fn set_span_unit(&mut self, unit: Unit) -> Result<(), ModelError> {
        if let Unit::Other(s) = unit {
            check(s.0, self.strings.len(), "strings")?;
        }
        self.span_unit = Some(unit);
        Ok(())
    }

    /// Sets the clock the profiler measured times with ([`Profile::time_resolution`]), for
    /// a format whose times the model holds in another unit (NYTProf's ticks, held as seconds).
    pub fn set_time_resolution(&mut self, unit: Unit) -> Result<(), ModelError> {
        if let Unit::Other(s) = unit {
            check(s.0, self.strings.len(), "strings")?;
        }
        self.time_resolution = Some(unit);
        Ok(())
    }

    /// Records one timed execution of `node` (an EasyProfiler block). Spans are kept one by one
    /// (they are the timeline); their durations are not added to any value by this call.
    pub fn add_span(
        &mut self,
        context: ContextId,
        node: NodeId,
        begin: u64,
        end: u64,
    ) -> Result<(), ModelError> {
        check(context.0, self.contexts.len(), "contexts")?;
        check(node.0, self.nodes.len(), "nodes")?;
        next_id(self.spans.len(), "spans")?;
        self.spans.push(Span {
            context,
            node,
            begin,
            end,
        });
        Ok(())
    }

    /// Adds every table of `profile` to this builder: strings, frames, nodes, value types (by
    /// name and unit) and contexts (by identifier tuple) are matched by identity, values on
    /// matched entries are added. This is how per-rank or per-process profiles are merged: keep
    /// a distinct context per input and both the per-rank and the summed views stay available.
    ///
    /// Inputs should measure a value type alike: where one input measured inclusive values and
    /// another did not, the merged value type counts as measured inclusive and the nodes of the
    /// other input have none (zero) rather than computed ones. Time and memory are linear in the
    /// size of `profile`.
    pub fn append(&mut self, profile: &Profile) -> Result<(), ModelError> {
        let strings = profile
            .strings
            .iter()
            .map(|s| self.intern_string(s))
            .collect::<Result<Vec<_>, _>>()?;
        let string = |s: StringId| strings[s.index()];
        if self.name.is_none() {
            self.name = profile.name.map(string);
        }
        let unit = |u: Unit| match u {
            Unit::Other(s) => Unit::Other(string(s)),
            other => other,
        };
        let mut frames = Vec::with_capacity(profile.frames.len());
        for f in &profile.frames {
            frames.push(self.intern_frame(Frame {
                function: f.function.map(string),
                file: f.file.map(string),
                module: f.module.map(string),
                ..*f
            })?);
        }
        let mut nodes: Vec<NodeId> = Vec::with_capacity(profile.nodes.len());
        for n in &profile.nodes {
            // Parents come first, so the parent's new handle is already known.
            let parent = n.parent.map(|p| nodes[p.index()]);
            nodes.push(self.intern_node(parent, frames[n.frame.index()])?);
        }
        let mut value_types = Vec::with_capacity(profile.value_types.len());
        for v in &profile.value_types {
            let name = profile.string(v.name);
            value_types.push(self.intern_value_type(name, unit(v.unit), v.measured)?);
        }
        let mut contexts = Vec::with_capacity(profile.contexts.len());
        for c in &profile.contexts {
            let ids = c
                .ids
                .iter()
                .map(|&(k, v)| match k {
                    IdKind::Other(s) => (IdKind::Other(string(s)), v),
                    other => (other, v),
                })
                .collect::<Vec<_>>();
            contexts.push(self.intern_context(Context {
                ids,
                name: c.name.map(string),
                summary: c.summary,
            })?);
        }
        for column in &profile.node_values {
            let context = contexts[column.context().index()];
            let value_type = value_types[column.value_type().index()];
            for v in column.iter() {
                self.add_node_value(
                    context,
                    nodes[v.node.index()],
                    value_type,
                    v.self_value,
                    v.inclusive,
                )?;
            }
        }
        self.reserve_context_values(profile, &contexts);
        for v in &profile.flat_values {
            let entry = self.flat_value(
                contexts[v.context.index()],
                frames[v.frame.index()],
                value_types[v.value_type.index()],
            )?;
            if let Some(x) = v.self_value {
                add_option(&mut entry.self_value, x);
            }
            if let Some(x) = v.inclusive {
                add_option(&mut entry.inclusive, x);
            }
        }
        let mut edges = Vec::with_capacity(profile.call_edges.len());
        for e in &profile.call_edges {
            edges.push(self.intern_call_edge(CallEdge {
                caller: frames[e.caller.index()],
                site: e.site.map(|s| frames[s.index()]),
                callee: frames[e.callee.index()],
            })?);
        }
        for v in &profile.edge_values {
            self.add_edge_value(
                contexts[v.context.index()],
                edges[v.edge.index()],
                value_types[v.value_type.index()],
                v.value,
            )?;
        }
        for s in &profile.spans {
            self.add_span(
                contexts[s.context.index()],
                nodes[s.node.index()],
                s.begin,
                s.end,
            )?;
        }
        if self.span_unit.is_none() {
            self.span_unit = profile.span_unit.map(unit);
        }
        // Inputs measured with different clocks have no common one.
        let resolution = profile.time_resolution.map(unit);
        self.time_resolution = if self.appended == 0 {
            resolution
        } else if self.time_resolution == resolution {
            self.time_resolution
        } else {
            None
        };
        self.appended += 1;
        if self.default_value_type.is_none() {
            self.default_value_type = profile.default_value_type.map(|v| value_types[v.index()]);
        }
        if self.calls_value_type.is_none() {
            self.calls_value_type = profile.calls_value_type.map(|v| value_types[v.index()]);
        }
        if self.statements_value_type.is_none() {
            self.statements_value_type = profile
                .statements_value_type
                .map(|v| value_types[v.index()]);
        }
        Ok(())
    }

    /// Makes room in the value tables, and in the indexes of the contexts that hold none yet,
    /// for the flat and edge values of `profile` (whose contexts are `contexts` here): appending
    /// an input of its own context then grows no index step by step.
    fn reserve_context_values(&mut self, profile: &Profile, contexts: &[ContextId]) {
        self.flat_values.reserve(profile.flat_values.len());
        self.edge_values.reserve(profile.edge_values.len());
        let mut counts = vec![(0usize, 0usize); contexts.len()];
        for v in &profile.flat_values {
            if let Some(c) = counts.get_mut(v.context.index()) {
                c.0 += 1;
            }
        }
        for v in &profile.edge_values {
            if let Some(c) = counts.get_mut(v.context.index()) {
                c.1 += 1;
            }
        }
        for (&context, &(flat, edge)) in contexts.iter().zip(&counts) {
            let index = context_index(&mut self.flat_value_index, context);
            if index.handles.is_empty() {
                index.reserve(&self.flat_values, flat);
            }
            let index = context_index(&mut self.edge_value_index, context);
            if index.is_empty() {
                index.reserve(edge);
            }
        }
    }

    /// The profile. The indexes are dropped and the tables trimmed to their length: a built
    /// profile is its tables only.
    pub fn build(mut self) -> Profile {
        drop(std::mem::take(&mut self.node_index));
        drop(std::mem::take(&mut self.frame_index));
        self.nodes.shrink_to_fit();
        self.frames.shrink_to_fit();
        self.flat_values.shrink_to_fit();
        self.edge_values.shrink_to_fit();
        self.spans.shrink_to_fit();
        let mut strings: Vec<Box<str>> = vec![Box::from(""); self.strings.len()];
        for (s, id) in self.strings {
            strings[id.index()] = s;
        }
        Profile {
            name: self.name,
            strings,
            frames: self.frames,
            nodes: self.nodes,
            value_types: self.value_types,
            contexts: self.contexts,
            node_values: self.node_values.build(),
            flat_values: self.flat_values,
            call_edges: self.call_edges,
            edge_values: self.edge_values,
            spans: self.spans,
            span_unit: self.span_unit,
            time_resolution: self.time_resolution,
            default_value_type: self.default_value_type,
            calls_value_type: self.calls_value_type,
            statements_value_type: self.statements_value_type,
        }
    }
}

impl Profile {
    /// Merges profiles (see [`ProfileBuilder::append`]).
    pub fn merge<'a>(
        profiles: impl IntoIterator<Item = &'a Profile>,
    ) -> Result<Profile, ModelError> {
        let mut builder = ProfileBuilder::new();
        for profile in profiles {
            builder.append(profile)?;
        }
        Ok(builder.build())
    }

    /// Checks that every handle in every table names an entry and that parents come before their
    /// children: what a [`ProfileBuilder`] guarantees, checked again for deserialized data.
    pub fn check(&self) -> Result<(), ModelError> {
        let strings = self.strings.len();
        let s = |id: StringId| check(id.0, strings, "strings");
        let unit = |u: Unit| match u {
            Unit::Other(id) => s(id),
            _ => Ok(()),
        };
        for table in [
            self.strings.len(),
            self.frames.len(),
            self.nodes.len(),
            self.value_types.len(),
            self.contexts.len(),
            self.flat_values.len(),
            self.call_edges.len(),
            self.edge_values.len(),
            self.spans.len(),
        ] {
            next_id(table.saturating_sub(1), "a table")?;
        }
        if let Some(name) = self.name {
            s(name)?;
        }
        for f in &self.frames {
            f.string_ids().try_for_each(s)?;
        }
        for (i, n) in self.nodes.iter().enumerate() {
            check(n.frame.0, self.frames.len(), "frames")?;
            if let Some(p) = n.parent
                && p.index() >= i
            {
                return Err(ModelError::ParentAfterChild {
                    node: i as u32,
                    parent: p.0,
                });
            }
        }
        for v in &self.value_types {
            s(v.name)?;
            unit(v.unit)?;
        }
        for c in &self.contexts {
            c.name.into_iter().try_for_each(s)?;
            for &(k, _) in &c.ids {
                if let IdKind::Other(id) = k {
                    s(id)?;
                }
            }
        }
        let ctx = |c: ContextId| check(c.0, self.contexts.len(), "contexts");
        let vt = |v: ValueTypeId| check(v.0, self.value_types.len(), "value types");
        let frame = |f: FrameId| check(f.0, self.frames.len(), "frames");
        let node = |n: NodeId| check(n.0, self.nodes.len(), "nodes");
        for column in &self.node_values {
            ctx(column.context())?;
            vt(column.value_type())?;
            next_id(column.len().saturating_sub(1), "node values")?;
            column.nodes().iter().try_for_each(|&n| node(n))?;
        }
        for v in &self.flat_values {
            ctx(v.context)?;
            frame(v.frame)?;
            vt(v.value_type)?;
        }
        for e in &self.call_edges {
            frame(e.caller)?;
            e.site.into_iter().try_for_each(frame)?;
            frame(e.callee)?;
        }
        for v in &self.edge_values {
            ctx(v.context)?;
            check(v.edge.0, self.call_edges.len(), "call edges")?;
            vt(v.value_type)?;
        }
        for sp in &self.spans {
            ctx(sp.context)?;
            node(sp.node)?;
        }
        if let Some(u) = self.span_unit {
            unit(u)?;
        }
        if let Some(u) = self.time_resolution {
            unit(u)?;
        }
        self.default_value_type.into_iter().try_for_each(vt)?;
        self.calls_value_type.into_iter().try_for_each(vt)?;
        self.statements_value_type.into_iter().try_for_each(vt)?;
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl TryFrom<crate::model::Unchecked> for Profile {
    type Error = ModelError;

    fn try_from(u: crate::model::Unchecked) -> Result<Profile, ModelError> {
        let profile = Profile {
            name: u.name,
            strings: u.strings,
            frames: u.frames,
            nodes: u.nodes,
            value_types: u.value_types,
            contexts: u.contexts,
            node_values: Vec::new(),
            flat_values: u.flat_values,
            call_edges: u.call_edges,
            edge_values: u.edge_values,
            spans: u.spans,
            span_unit: u.span_unit,
            time_resolution: u.time_resolution,
            default_value_type: u.default_value_type,
            calls_value_type: u.calls_value_type,
            statements_value_type: u.statements_value_type,
        };
        profile.check()?;
        for v in &u.node_values {
            check(v.context.0, profile.contexts.len(), "contexts")?;
            check(v.node.0, profile.nodes.len(), "nodes")?;
            check(v.value_type.0, profile.value_types.len(), "value types")?;
        }
        let node_values =
            crate::values::columns_from_rows(&u.node_values).map_err(|ColumnFull| {
                ModelError::TooMany {
                    table: "node values",
                    max: MAX_ENTRIES,
                }
            })?;
        Ok(Profile {
            node_values,
            ..profile
        })
    }
}
