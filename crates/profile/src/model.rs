//! The tables of a built [`Profile`] and their read accessors.

use crate::ids::{ContextId, EdgeId, FrameId, NodeId, StringId, ValueTypeId};
#[cfg(feature = "serde")]
use crate::values::NodeValue;
use crate::values::{NodeValueColumn, NodeValues};

/// What a frame stands for. HPCToolkit's context tree mixes functions with the loops, source
/// lines and instructions inside them; the other formats have functions (subs, blocks) only, or
/// statement lines in NYTProf's per-line table, and EasyProfiler values and events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum FrameKind {
    /// A function, sub or procedure (an entry that was called).
    Function,
    /// A function inlined into its caller (HPCToolkit's inlined call contexts).
    Inlined,
    /// A named, timed code region (EasyProfiler's blocks).
    Block,
    /// A loop inside a function.
    Loop,
    /// A source line (a statement, or a call site inside a function).
    Line,
    /// A machine instruction (an address inside a function).
    Instruction,
    /// A frame whose nature the source format does not say.
    Unknown,
    /// A value the program recorded at a moment (EasyProfiler's `EASY_VALUE`): a counter's
    /// sample, not code that ran ([`FrameKind::is_marker`]).
    Value,
    /// A moment the program marked (EasyProfiler's `EASY_EVENT`): an instant, not code that
    /// ran ([`FrameKind::is_marker`]).
    Event,
}

impl FrameKind {
    /// Whether this frame owns the loops, lines and instructions below it when values are grouped
    /// by function: functions, inlined functions, blocks, and frames of unknown nature; and
    /// markers, whose counts are their own, never their enclosing block's.
    pub fn is_function_like(self) -> bool {
        matches!(
            self,
            FrameKind::Function
                | FrameKind::Inlined
                | FrameKind::Block
                | FrameKind::Unknown
                | FrameKind::Value
                | FrameKind::Event
        )
    }

    /// Whether this frame marks a moment of the program rather than code that ran: a
    /// [`FrameKind::Value`] (a counter) or a [`FrameKind::Event`] (an instant). Their nodes hold
    /// a count of records and no time. [`Profile::top`](crate::Profile::top) and
    /// [`diff`](crate::diff) leave them (and anything below them) out of their rows and totals,
    /// and count them in [`Table::left_out`](crate::Table::left_out); a timeline shows them as
    /// counters and instants.
    ///
    /// ```
    /// use profcodec_profile::FrameKind;
    /// assert!(FrameKind::Event.is_marker() && FrameKind::Value.is_marker());
    /// assert!(!FrameKind::Block.is_marker());
    /// ```
    pub fn is_marker(self) -> bool {
        matches!(self, FrameKind::Value | FrameKind::Event)
    }

    /// The snake_case name of the kind (`"function"`, `"loop"` ...).
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Function => "function",
            FrameKind::Inlined => "inlined",
            FrameKind::Block => "block",
            FrameKind::Loop => "loop",
            FrameKind::Line => "line",
            FrameKind::Instruction => "instruction",
            FrameKind::Unknown => "unknown",
            FrameKind::Value => "value",
            FrameKind::Event => "event",
        }
    }
}

/// One frame: a place in the program, with whatever the source format knows of it. Two frames
/// are the same frame exactly when every field is equal; this is the identity by which
/// profiles are merged and diffed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Frame {
    /// What the frame stands for.
    pub kind: FrameKind,
    /// The function (sub, block) name as the source tool spells it, for a loop or line the
    /// function it lies in when the format says so.
    pub function: Option<StringId>,
    /// The source file.
    pub file: Option<StringId>,
    /// The source line (1-based), for a function its first line where known.
    pub line: Option<u32>,
    /// The load module (executable or shared library), or for interpreted languages the package.
    pub module: Option<StringId>,
    /// The address (or offset in the load module) where known.
    pub address: Option<u64>,
}

impl Frame {
    /// A frame of `kind` with no fields set.
    pub fn new(kind: FrameKind) -> Frame {
        Frame {
            kind,
            function: None,
            file: None,
            line: None,
            module: None,
            address: None,
        }
    }

    /// A [`FrameKind::Function`] frame named `function`.
    pub fn function(function: StringId) -> Frame {
        Frame::new(FrameKind::Function).with_function(function)
    }

    /// This frame with its function name set.
    pub fn with_function(mut self, function: StringId) -> Frame {
        self.function = Some(function);
        self
    }

    /// This frame with its source file set.
    pub fn with_file(mut self, file: StringId) -> Frame {
        self.file = Some(file);
        self
    }

    /// This frame with its source line set.
    pub fn with_line(mut self, line: u32) -> Frame {
        self.line = Some(line);
        self
    }

    /// This frame with its load module set.
    pub fn with_module(mut self, module: StringId) -> Frame {
        self.module = Some(module);
        self
    }

    /// This frame with its address set.
    pub fn with_address(mut self, address: u64) -> Frame {
        self.address = Some(address);
        self
    }

    pub(crate) fn string_ids(&self) -> impl Iterator<Item = StringId> {
        [self.function, self.file, self.module]
            .into_iter()
            .flatten()
    }
}

/// A call-tree node: a frame called from its parent node. The builder keeps one node per
/// distinct (parent, frame), so a stack seen a million times costs its depth in nodes once.
/// A node's parent always has a smaller id than the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Node {
    /// The calling node, `None` for a root.
    pub parent: Option<NodeId>,
    /// The frame of this node.
    pub frame: FrameId,
}

/// The unit of a value type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Unit {
    /// Nanoseconds.
    Nanoseconds,
    /// Microseconds.
    Microseconds,
    /// Seconds.
    Seconds,
    /// Clock ticks, with the tick rate where the file records it (NYTProf's `ticks_per_sec`,
    /// EasyProfiler's CPU frequency).
    Ticks {
        /// Ticks per second.
        per_second: Option<u64>,
    },
    /// Samples taken.
    Samples,
    /// A count of events (calls, statements, cache misses).
    Count,
    /// Bytes.
    Bytes,
    /// Any other unit, named as the source tool names it.
    Other(StringId),
}

/// What a unit measures: lets a consumer tell time from counts without knowing every unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Quantity {
    /// Elapsed or CPU time.
    Time,
    /// A number of events or samples.
    Count,
    /// An amount of memory.
    Bytes,
    /// Anything else.
    Other,
}

impl Quantity {
    /// What the unit called `name` measures, as [`Profile::unit_name`] names units (the `unit`
    /// of a [`Table`](crate::Table)): time for `"seconds"` or `"ticks"`, a count for `"samples"`
    /// or `"count"`, bytes for `"bytes"`, and [`Quantity::Other`] for any other name.
    ///
    /// ```
    /// use profcodec_profile::Quantity;
    /// assert_eq!(Quantity::of_unit_name("samples"), Quantity::Count);
    /// assert_eq!(Quantity::of_unit_name("microseconds"), Quantity::Time);
    /// assert_eq!(Quantity::of_unit_name("GPU operations"), Quantity::Other);
    /// ```
    pub fn of_unit_name(name: &str) -> Quantity {
        [
            Unit::Nanoseconds,
            Unit::Microseconds,
            Unit::Seconds,
            Unit::Ticks { per_second: None },
            Unit::Samples,
            Unit::Count,
            Unit::Bytes,
        ]
        .into_iter()
        .find(|unit| unit.known_name() == Some(name))
        .map_or(Quantity::Other, Unit::quantity)
    }
}

impl Unit {
    /// What this unit measures.
    pub fn quantity(self) -> Quantity {
        match self {
            Unit::Nanoseconds | Unit::Microseconds | Unit::Seconds | Unit::Ticks { .. } => {
                Quantity::Time
            }
            Unit::Samples | Unit::Count => Quantity::Count,
            Unit::Bytes => Quantity::Bytes,
            Unit::Other(_) => Quantity::Other,
        }
    }

    /// The name of a unit this model defines (`"nanoseconds"`, `"ticks"`, `"count"`...);
    /// `None` for [`Unit::Other`], whose name is a string of its profile
    /// ([`Profile::unit_name`]).
    fn known_name(self) -> Option<&'static str> {
        Some(match self {
            Unit::Nanoseconds => "nanoseconds",
            Unit::Microseconds => "microseconds",
            Unit::Seconds => "seconds",
            Unit::Ticks { .. } => "ticks",
            Unit::Samples => "samples",
            Unit::Count => "count",
            Unit::Bytes => "bytes",
            Unit::Other(_) => return None,
        })
    }

    /// How many seconds one unit is, for time units whose length is known (ticks with their
    /// rate).
    pub fn seconds(self) -> Option<f64> {
        match self {
            Unit::Nanoseconds => Some(1e-9),
            Unit::Microseconds => Some(1e-6),
            Unit::Seconds => Some(1.0),
            Unit::Ticks {
                per_second: Some(rate),
            } if rate > 0 => Some(1.0 / rate as f64),
            _ => None,
        }
    }
}

/// Which values of a value type the source format measured. What was not measured is computed by
/// the queries from the call tree: inclusive as self plus the children's inclusive, self as
/// inclusive minus the children's inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Measured {
    /// Self (exclusive) values only: samples, timed blocks.
    SelfOnly,
    /// Inclusive values only.
    InclusiveOnly,
    /// Both, measured separately (HPCToolkit's exclusive and inclusive metric scopes, NYTProf's
    /// per-sub self and inclusive time); inclusive is never recomputed.
    SelfAndInclusive,
}

impl Measured {
    /// Whether self values were measured.
    pub fn has_self(self) -> bool {
        !matches!(self, Measured::InclusiveOnly)
    }

    /// Whether inclusive values were measured.
    pub fn has_inclusive(self) -> bool {
        !matches!(self, Measured::SelfOnly)
    }

    pub(crate) fn union(self, other: Measured) -> Measured {
        let has_self = self.has_self() || other.has_self();
        let has_inclusive = self.has_inclusive() || other.has_inclusive();
        match (has_self, has_inclusive) {
            (true, true) => Measured::SelfAndInclusive,
            (false, true) => Measured::InclusiveOnly,
            _ => Measured::SelfOnly,
        }
    }
}

/// A value type (a metric): what a value counts and in which unit. Identified by name and unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ValueType {
    /// The name as the source tool shows it (`"time"`, `"CPUTIME (sec)"`, `"samples"`).
    pub name: StringId,
    /// The unit.
    pub unit: Unit,
    /// Which values were measured.
    pub measured: Measured,
}

/// One component of a context's identifier tuple (HPCToolkit's identifier-tuple kinds, and the
/// threads and processes of the other formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum IdKind {
    /// A compute node (host).
    Node,
    /// An MPI rank.
    Rank,
    /// A thread.
    Thread,
    /// An operating-system process (a pid).
    Process,
    /// A CPU core.
    Core,
    /// A GPU device.
    GpuDevice,
    /// A GPU context.
    GpuContext,
    /// A GPU stream.
    GpuStream,
    /// A kind the model does not name, as the source format names it.
    Other(StringId),
}

impl IdKind {
    /// The snake_case name of the kind; `None` for [`IdKind::Other`] (see its string).
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            IdKind::Node => "node",
            IdKind::Rank => "rank",
            IdKind::Thread => "thread",
            IdKind::Process => "process",
            IdKind::Core => "core",
            IdKind::GpuDevice => "gpu_device",
            IdKind::GpuContext => "gpu_context",
            IdKind::GpuStream => "gpu_stream",
            IdKind::Other(_) => return None,
        })
    }
}

/// Where values were measured: an ordered identifier tuple such as `[(Node, 3), (Rank, 12),
/// (Thread, 0)]`, an optional name (a thread's name), and whether it is a summary over the other
/// contexts (HPCToolkit's summary profile). The empty tuple is the whole program of a format
/// without threads.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Context {
    /// The identifier tuple, outermost first.
    pub ids: Vec<(IdKind, u64)>,
    /// A display name.
    pub name: Option<StringId>,
    /// Whether the values of this context summarise the other contexts of the profile (and so
    /// must not be added to them).
    pub summary: bool,
}

impl Context {
    /// A context with this identifier tuple.
    pub fn new(ids: impl Into<Vec<(IdKind, u64)>>) -> Context {
        Context {
            ids: ids.into(),
            name: None,
            summary: false,
        }
    }

    /// The summary context (values over every other context).
    pub fn summary() -> Context {
        Context {
            ids: Vec::new(),
            name: None,
            summary: true,
        }
    }

    /// This context with a display name.
    pub fn with_name(mut self, name: StringId) -> Context {
        self.name = Some(name);
        self
    }

    /// The value of the first component of `kind`, if any.
    pub fn id(&self, kind: IdKind) -> Option<u64> {
        self.ids.iter().find(|(k, _)| *k == kind).map(|&(_, v)| v)
    }
}

/// The measured values of one value type for one frame in one context, outside the call tree:
/// NYTProf's per-sub and per-line tables, or any per-function summary a tool reports.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FlatValue {
    /// Where it was measured.
    pub context: ContextId,
    /// The function (or line) frame.
    pub frame: FrameId,
    /// The value type.
    pub value_type: ValueTypeId,
    /// The self value.
    pub self_value: Option<f64>,
    /// The inclusive value as the tool computed it (for recursion, the tool's own rule).
    pub inclusive: Option<f64>,
}

/// A call from one frame to another, at a call site where known (NYTProf's sub-caller table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CallEdge {
    /// The calling function.
    pub caller: FrameId,
    /// The call site (usually a [`FrameKind::Line`] frame).
    pub site: Option<FrameId>,
    /// The called function.
    pub callee: FrameId,
}

/// A value of one value type on one call edge in one context.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EdgeValue {
    /// Where it was measured.
    pub context: ContextId,
    /// The call edge.
    pub edge: EdgeId,
    /// The value type.
    pub value_type: ValueTypeId,
    /// The value (summed over every time the edge was added).
    pub value: f64,
}

/// A timed execution of a call-tree node (an EasyProfiler block), in the profile's
/// [`Profile::span_unit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Span {
    /// The thread it ran on.
    pub context: ContextId,
    /// The call path it ran under (its own frame is the node's frame).
    pub node: NodeId,
    /// The start time.
    pub begin: u64,
    /// The end time.
    pub end: u64,
}

/// A format-neutral profile, made by a [`ProfileBuilder`](crate::ProfileBuilder). Its tables are
/// read through the accessors below; questions about it are asked with
/// [`top`](Profile::top) and [`diff`](crate::diff).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "Unchecked"))]
pub struct Profile {
    pub(crate) name: Option<StringId>,
    pub(crate) strings: Vec<Box<str>>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) value_types: Vec<ValueType>,
    pub(crate) contexts: Vec<Context>,
    /// One column per (context, value type), in the order they were first given a value;
    /// serialized as the list of [`NodeValue`]s.
    #[cfg_attr(
        feature = "serde",
        serde(serialize_with = "crate::values::serialize_rows")
    )]
    pub(crate) node_values: Vec<NodeValueColumn>,
    pub(crate) flat_values: Vec<FlatValue>,
    pub(crate) call_edges: Vec<CallEdge>,
    pub(crate) edge_values: Vec<EdgeValue>,
    pub(crate) spans: Vec<Span>,
    pub(crate) span_unit: Option<Unit>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) time_resolution: Option<Unit>,
    pub(crate) default_value_type: Option<ValueTypeId>,
    pub(crate) calls_value_type: Option<ValueTypeId>,
    #[cfg_attr(feature = "serde", serde(default))]
    pub(crate) statements_value_type: Option<ValueTypeId>,
}

impl Profile {
    /// The program or profile name, if the format records one.
    pub fn name(&self) -> Option<&str> {
        self.name.map(|s| self.string(s))
    }

    /// An interned string.
    pub fn string(&self, id: StringId) -> &str {
        &self.strings[id.index()]
    }

    /// The number of interned strings.
    pub fn string_count(&self) -> usize {
        self.strings.len()
    }

    /// A frame.
    pub fn frame(&self, id: FrameId) -> &Frame {
        &self.frames[id.index()]
    }

    /// Every frame with its id, in creation order.
    pub fn frames(&self) -> impl ExactSizeIterator<Item = (FrameId, &Frame)> + '_ {
        self.frames
            .iter()
            .enumerate()
            .map(|(i, f)| (FrameId(i as u32), f))
    }

    /// A call-tree node.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// Every node with its id; parents come before their children.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = (NodeId, &Node)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (NodeId(i as u32), n))
    }

    /// The frames of a node's call path, from the node up to its root.
    pub fn stack(&self, node: NodeId) -> impl Iterator<Item = FrameId> + '_ {
        std::iter::successors(Some(node), |&n| self.node(n).parent).map(|n| self.node(n).frame)
    }

    /// A value type.
    pub fn value_type(&self, id: ValueTypeId) -> &ValueType {
        &self.value_types[id.index()]
    }

    /// Every value type with its id.
    pub fn value_types(&self) -> impl ExactSizeIterator<Item = (ValueTypeId, &ValueType)> + '_ {
        self.value_types
            .iter()
            .enumerate()
            .map(|(i, v)| (ValueTypeId(i as u32), v))
    }

    /// The first value type called `name`; or, for a name with its unit in parentheses as a
    /// format writes it and the format's tables show it (HPCToolkit's `CPUTIME (sec)`), the
    /// value type of the name before them (`CPUTIME`, whose unit the model keeps apart), so
    /// that a metric is named alike in `top --metric` and in SQL.
    pub fn value_type_by_name(&self, name: &str) -> Option<ValueTypeId> {
        let find = |name: &str| {
            self.value_types()
                .find(|(_, v)| self.string(v.name) == name)
                .map(|(id, _)| id)
        };
        find(name).or_else(|| {
            let (bare, unit) = name.strip_suffix(')')?.rsplit_once(" (")?;
            (!unit.is_empty() && !unit.contains('(')).then(|| find(bare))?
        })
    }

    /// A value type's name.
    pub fn value_type_name(&self, id: ValueTypeId) -> &str {
        self.string(self.value_type(id).name)
    }

    /// The value type shown when none is asked for (the format's main time metric).
    pub fn default_value_type(&self) -> Option<ValueTypeId> {
        self.default_value_type
            .or_else(|| self.value_types().next().map(|(id, _)| id))
    }

    /// The value type counting calls (its self value at a node or function is the number of
    /// times it was entered), if the format counts calls.
    pub fn calls_value_type(&self) -> Option<ValueTypeId> {
        self.calls_value_type
    }

    /// The value type counting statements (its self value at a line is how many times the
    /// line's statements ran), if the format counts them: what `top` grouped by line shows
    /// beside each line's value ([`Row::statements`](crate::Row::statements)).
    pub fn statements_value_type(&self) -> Option<ValueTypeId> {
        self.statements_value_type
    }

    /// A unit's name: `"nanoseconds"`, `"ticks"`, or an [`Unit::Other`] unit's own string.
    pub fn unit_name(&self, unit: Unit) -> &str {
        match unit {
            Unit::Other(s) => self.string(s),
            known => known.known_name().unwrap_or_default(),
        }
    }

    /// A context.
    pub fn context(&self, id: ContextId) -> &Context {
        &self.contexts[id.index()]
    }

    /// Every context with its id.
    pub fn contexts(&self) -> impl ExactSizeIterator<Item = (ContextId, &Context)> + '_ {
        self.contexts
            .iter()
            .enumerate()
            .map(|(i, c)| (ContextId(i as u32), c))
    }

    /// A context spelled out: `"rank 3 thread 0"`, `"summary"`, `"all"` for the empty tuple.
    pub fn context_label(&self, id: ContextId) -> String {
        let context = self.context(id);
        let mut label = String::new();
        if context.summary {
            label.push_str("summary");
        }
        for &(kind, value) in &context.ids {
            if !label.is_empty() {
                label.push(' ');
            }
            match kind {
                IdKind::Other(s) => label.push_str(self.string(s)),
                other => label.push_str(other.name().unwrap_or("id")),
            }
            label.push(' ');
            label.push_str(&value.to_string());
        }
        if let Some(name) = context.name {
            if !label.is_empty() {
                label.push(' ');
            }
            label.push('(');
            label.push_str(self.string(name));
            label.push(')');
        }
        if label.is_empty() {
            label.push_str("all");
        }
        label
    }

    /// The values measured on call-tree nodes, one per (context, node, value type): column by
    /// column as [`node_value_columns`](Profile::node_value_columns) holds them.
    pub fn node_values(&self) -> NodeValues<'_> {
        NodeValues::new(&self.node_values)
    }

    /// The node values by column, one column per (context, value type) with values, in the
    /// order the columns were first given a value: what a consumer of one value type reads.
    pub fn node_value_columns(&self) -> &[NodeValueColumn] {
        &self.node_values
    }

    /// The column of one value type in one context, if it has values.
    pub fn node_value_column(
        &self,
        context: ContextId,
        value_type: ValueTypeId,
    ) -> Option<&NodeValueColumn> {
        self.node_values
            .iter()
            .find(|c| c.context() == context && c.value_type() == value_type)
    }

    /// The values measured per frame outside the call tree, one entry per (context, frame,
    /// value type).
    pub fn flat_values(&self) -> &[FlatValue] {
        &self.flat_values
    }

    /// A call edge.
    pub fn call_edge(&self, id: EdgeId) -> &CallEdge {
        &self.call_edges[id.index()]
    }

    /// Every call edge with its id.
    pub fn call_edges(&self) -> impl ExactSizeIterator<Item = (EdgeId, &CallEdge)> + '_ {
        self.call_edges
            .iter()
            .enumerate()
            .map(|(i, e)| (EdgeId(i as u32), e))
    }

    /// The values on call edges, one entry per (context, edge, value type).
    pub fn edge_values(&self) -> &[EdgeValue] {
        &self.edge_values
    }

    /// The timed spans (EasyProfiler blocks), in the order they were added.
    pub fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// The time unit of [`spans`](Profile::spans).
    pub fn span_unit(&self) -> Option<Unit> {
        self.span_unit
    }

    /// The clock the profiler measured times with, where the model holds them in another unit:
    /// NYTProf counts ticks of `1 / ticks_per_sec` seconds and the model holds seconds. Outputs
    /// made of integers (folded stacks) write times in this unit, as the profiler's own tools
    /// do (`nytprofcalls` prints ticks). `None` when the times are in the unit they were
    /// measured in.
    pub fn time_resolution(&self) -> Option<Unit> {
        self.time_resolution
    }

    /// A frame's display name: its function, else `"<kind> at file:line"`, else its module or
    /// address.
    pub fn frame_label(&self, id: FrameId) -> String {
        let frame = self.frame(id);
        if let Some(function) = frame.function
            && frame.kind.is_function_like()
        {
            return self.string(function).to_owned();
        }
        let mut label = frame.kind.name().to_owned();
        if let Some(file) = frame.file {
            label.push_str(" at ");
            label.push_str(self.string(file));
            if let Some(line) = frame.line {
                label.push(':');
                label.push_str(&line.to_string());
            }
        } else if let Some(address) = frame.address {
            label.push_str(&format!(" at 0x{address:x}"));
        }
        if let Some(function) = frame.function {
            label.push_str(" in ");
            label.push_str(self.string(function));
        } else if let Some(module) = frame.module {
            label.push_str(" in ");
            label.push_str(self.string(module));
        }
        label
    }
}

/// The serde form of a [`Profile`] before [`Profile::check`] accepts it (the check is the
/// builder's `TryFrom`): plain data here, so that the model names no builder.
#[cfg(feature = "serde")]
#[derive(serde::Deserialize)]
pub(crate) struct Unchecked {
    pub(crate) name: Option<StringId>,
    pub(crate) strings: Vec<Box<str>>,
    pub(crate) frames: Vec<Frame>,
    pub(crate) nodes: Vec<Node>,
    pub(crate) value_types: Vec<ValueType>,
    pub(crate) contexts: Vec<Context>,
    pub(crate) node_values: Vec<NodeValue>,
    pub(crate) flat_values: Vec<FlatValue>,
    pub(crate) call_edges: Vec<CallEdge>,
    pub(crate) edge_values: Vec<EdgeValue>,
    pub(crate) spans: Vec<Span>,
    pub(crate) span_unit: Option<Unit>,
    #[serde(default)]
    pub(crate) time_resolution: Option<Unit>,
    pub(crate) default_value_type: Option<ValueTypeId>,
    pub(crate) calls_value_type: Option<ValueTypeId>,
    #[serde(default)]
    pub(crate) statements_value_type: Option<ValueTypeId>,
}
