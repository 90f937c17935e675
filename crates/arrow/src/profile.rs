//! The tables of the format-neutral profile model ([`profcodec_profile::Profile`]): the same
//! tables for every format, made from a built profile (ids are the model's handles, so the
//! tables join on them).
//!
//! Which functions cost the most, as `profcodec top` counts them over the call tree (each node's
//! self value goes to its nearest function-like node; the summary contexts where the profile
//! has them, else every context; the default value type; over several inputs, join on `input`
//! as well):
//!
//! ```sql
//! WITH whole AS (
//!     SELECT context FROM profile.contexts c
//!     WHERE c.summary OR NOT EXISTS (SELECT 1 FROM profile.contexts s WHERE s.summary))
//! SELECT f.function, f.file, f.module, COALESCE(SUM(v.self_value), 0) AS self
//! FROM profile.node_values v
//! JOIN whole w ON w.context = v.context
//! JOIN profile.value_types t ON t.value_type = v.value_type
//! JOIN profile.nodes n ON n.node = v.node
//! JOIN profile.nodes owner ON owner.node = n.function_node
//! JOIN profile.frames f ON f.frame = owner.frame
//! WHERE t.is_default
//! GROUP BY f.function, f.file, f.module ORDER BY self DESC LIMIT 10
//! ```
//!
//! (NYTProf's `top` reads its per-sub table, `flat_values`, instead of the tree.)

use profcodec_profile::{IdKind, Measured, Profile, Quantity};

use profcodec_tables::{Batches, Error, OnceCell, ScanOptions, TableSet, Tables, batches, table};

table! {
    /// profile `contexts`: where values were measured (a thread, rank, process, or the summary).
    Contexts, ContextRows, "contexts" {
        context: UInt32 => "The context's id, the key of the value tables' `context`.",
        summary: Boolean => "True for a summary of the other contexts (HPCToolkit's summary profile): never add it to them.",
        label: Utf8 => "The context spelled out: `rank 3 thread 0`, `summary`, `all`.",
        name: Utf8 nullable => "Its name (a thread's or program's), if any.",
        node: UInt64 nullable => "The compute node.",
        rank: UInt64 nullable => "The MPI rank.",
        thread: UInt64 nullable => "The thread.",
        process: UInt64 nullable => "The process id.",
        core: UInt64 nullable => "The CPU core.",
        gpu_device: UInt64 nullable => "The GPU device.",
        gpu_context: UInt64 nullable => "The GPU context.",
        gpu_stream: UInt64 nullable => "The GPU stream.",
    }
}

table! {
    /// profile `value_types`: the metrics.
    ValueTypes, ValueTypeRows, "value_types" {
        value_type: UInt32 => "The value type's id, the key of the value tables' `value_type`.",
        name: Utf8 => "Its name (`time`, `samples`, `calls`).",
        unit: Utf8 => "Its unit: `nanoseconds`, `microseconds`, `seconds`, `ticks`, `samples`, `count`, `bytes` or the tool's own.",
        quantity: Utf8 => "What the unit measures: `time`, `count`, `bytes` or `other`.",
        measured: Utf8 => "Which values the format measured: `self`, `inclusive` or `self_and_inclusive`.",
        is_default: Boolean => "Whether it is the profile's main value type (what `profcodec top` shows by default).",
        is_calls: Boolean => "Whether it counts calls.",
    }
}

table! {
    /// profile `frames`: the places of the program: functions, inlined functions, blocks,
    /// loops, lines and instructions.
    Frames, FrameRows, "frames" {
        frame: UInt32 => "The frame's id, the key of `nodes.frame` and the frames of the other tables.",
        kind: Utf8 => "`function`, `inlined`, `block`, `loop`, `line`, `instruction` or `unknown`.",
        function: Utf8 nullable => "The function's name.",
        file: Utf8 nullable => "The source file.",
        line: UInt32 nullable => "The source line.",
        module: Utf8 nullable => "The load module or package.",
        address: UInt64 nullable => "The address or offset in the module.",
        label: Utf8 => "The frame's display name (its function, else `<kind> at file:line`).",
    }
}

table! {
    /// profile `nodes`: the call tree, one node per distinct (parent, frame).
    Nodes, NodeRows, "nodes" {
        node: UInt32 => "The node's id, the key of `node_values.node` and `spans.node`.",
        parent: UInt32 nullable => "The parent node (null for a root).",
        frame: UInt32 => "Its frame (`frames.frame`).",
        depth: UInt32 => "0 for a root, the parent's depth + 1 below.",
        function_node: UInt32 nullable => "The nearest function-like node at or above it (function, inlined function, block or unknown): where its self value goes when grouped by function, as `profcodec top` groups it.",
    }
}

table! {
    /// profile `node_values`: values measured on call-tree nodes, one row per (context, node,
    /// value type).
    NodeValues, NodeValueRows, "node_values" {
        context: UInt32 => "The context (`contexts.context`).",
        node: UInt32 => "The node (`nodes.node`).",
        value_type: UInt32 => "The value type (`value_types.value_type`).",
        self_value: Float64 nullable => "The self (exclusive) value, where measured.",
        inclusive: Float64 nullable => "The inclusive value, where measured.",
    }
}

table! {
    /// profile `flat_values`: values measured per frame outside the call tree (NYTProf's per-sub
    /// and per-line tables), one row per (context, frame, value type).
    FlatValues, FlatValueRows, "flat_values" {
        context: UInt32 => "The context (`contexts.context`).",
        frame: UInt32 => "The frame (`frames.frame`).",
        value_type: UInt32 => "The value type (`value_types.value_type`).",
        self_value: Float64 nullable => "The self value, as the tool reports it.",
        inclusive: Float64 nullable => "The inclusive value, as the tool reports it.",
    }
}

table! {
    /// profile `call_edges`: calls from a frame to a frame, by call site.
    CallEdges, CallEdgeRows, "call_edges" {
        edge: UInt32 => "The edge's id, the key of `edge_values.edge`.",
        caller: UInt32 => "The calling frame (`frames.frame`).",
        site: UInt32 nullable => "The call site's frame (a line).",
        callee: UInt32 => "The called frame.",
    }
}

table! {
    /// profile `edge_values`: values on call edges, one row per (context, edge, value type).
    EdgeValues, EdgeValueRows, "edge_values" {
        context: UInt32 => "The context (`contexts.context`).",
        edge: UInt32 => "The edge (`call_edges.edge`).",
        value_type: UInt32 => "The value type (`value_types.value_type`).",
        value: Float64 => "The value.",
    }
}

table! {
    /// profile `spans`: timed executions of nodes (EasyProfiler's blocks, when the profile was
    /// made with them).
    Spans, SpanRows, "spans" {
        context: UInt32 => "The context (`contexts.context`).",
        node: UInt32 => "The node (`nodes.node`).",
        begin_time: UInt64 => "Begin, in the profile's span unit (ns for EasyProfiler).",
        end_time: UInt64 => "End, in the same unit.",
    }
}

/// The `profile` set: its tables, in order.
pub const SET: TableSet = TableSet::new(
    "profile",
    &[
        Contexts::DEF,
        ValueTypes::DEF,
        Frames::DEF,
        Nodes::DEF,
        NodeValues::DEF,
        FlatValues::DEF,
        CallEdges::DEF,
        EdgeValues::DEF,
        Spans::DEF,
    ],
);

/// Makes an input's profile model when its tables are first read.
type MakeProfile =
    dyn Fn() -> Result<Profile, Box<dyn std::error::Error + Send + Sync>> + Send + Sync;

/// The `profile` tables of one profile: given, or made when first read, once, whatever the
/// number of threads reading its tables at once (the others wait for it and share it).
pub struct ProfileTables {
    profile: OnceCell<Profile>,
    make: Option<Box<MakeProfile>>,
}

impl std::fmt::Debug for ProfileTables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProfileTables")
            .field("made", &self.profile.get().is_some())
            .finish_non_exhaustive()
    }
}

impl ProfileTables {
    /// The tables of `profile`.
    pub fn new(profile: Profile) -> Self {
        ProfileTables {
            profile: OnceCell::with_value(profile),
            make: None,
        }
    }

    /// The tables of the profile `make` returns, called when a table is first read (a query
    /// that reads no `profile` table never converts the input); a failure is returned to that
    /// read, and the next read calls `make` again.
    pub fn lazy(
        make: impl Fn() -> Result<Profile, Box<dyn std::error::Error + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        ProfileTables {
            profile: OnceCell::new(),
            make: Some(Box::new(make)),
        }
    }

    /// The profile, made now if it was not yet; a thread that asks while another makes it
    /// waits for that one, so that the input is converted once.
    pub fn profile(&self) -> Result<&Profile, Error> {
        self.profile.get_or_try_init(|| {
            let make = self
                .make
                .as_ref()
                .ok_or_else(|| Error::Profile("no profile and no way to make one".into()))?;
            make().map_err(Error::Profile)
        })
    }
}

impl Tables for ProfileTables {
    fn set(&self) -> TableSet {
        SET
    }

    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error> {
        SET.table(name)?;
        let p = self.profile()?;
        Ok(match name {
            Contexts::NAME => batches(
                ContextRows::new(),
                p.contexts().map(Ok),
                options,
                move |rows, (id, c): (profcodec_profile::ContextId, &profcodec_profile::Context)| {
                    rows.context.append_value(id.index() as u32);
                    rows.summary.append_value(c.summary);
                    rows.label.append_value(p.context_label(id));
                    rows.name.append_option(c.name.map(|s| p.string(s)));
                    let id_of = |kind: IdKind| c.id(kind);
                    rows.node.append_option(id_of(IdKind::Node));
                    rows.rank.append_option(id_of(IdKind::Rank));
                    rows.thread.append_option(id_of(IdKind::Thread));
                    rows.process.append_option(id_of(IdKind::Process));
                    rows.core.append_option(id_of(IdKind::Core));
                    rows.gpu_device.append_option(id_of(IdKind::GpuDevice));
                    rows.gpu_context.append_option(id_of(IdKind::GpuContext));
                    rows.gpu_stream.append_option(id_of(IdKind::GpuStream));
                },
            ),
            ValueTypes::NAME => {
                let default = p.default_value_type();
                let calls = p.calls_value_type();
                batches(
                    ValueTypeRows::new(),
                    p.value_types().map(Ok),
                    options,
                    move |rows,
                          (id, v): (
                        profcodec_profile::ValueTypeId,
                        &profcodec_profile::ValueType,
                    )| {
                        rows.value_type.append_value(id.index() as u32);
                        rows.name.append_value(p.string(v.name));
                        rows.unit.append_value(p.unit_name(v.unit));
                        rows.quantity.append_value(match v.unit.quantity() {
                            Quantity::Time => "time",
                            Quantity::Count => "count",
                            Quantity::Bytes => "bytes",
                            _ => "other",
                        });
                        rows.measured.append_value(match v.measured {
                            Measured::SelfOnly => "self",
                            Measured::InclusiveOnly => "inclusive",
                            Measured::SelfAndInclusive => "self_and_inclusive",
                        });
                        rows.is_default.append_value(default == Some(id));
                        rows.is_calls.append_value(calls == Some(id));
                    },
                )
            }
            Frames::NAME => batches(
                FrameRows::new(),
                p.frames().map(Ok),
                options,
                move |rows, (id, f): (profcodec_profile::FrameId, &profcodec_profile::Frame)| {
                    rows.frame.append_value(id.index() as u32);
                    rows.kind.append_value(f.kind.name());
                    rows.function.append_option(f.function.map(|s| p.string(s)));
                    rows.file.append_option(f.file.map(|s| p.string(s)));
                    rows.line.append_option(f.line);
                    rows.module.append_option(f.module.map(|s| p.string(s)));
                    rows.address.append_option(f.address);
                    rows.label.append_value(p.frame_label(id));
                },
            ),
            Nodes::NAME => {
                // Parents come before their children: depths and owning functions in one pass.
                let mut depth = Vec::with_capacity(p.nodes().len());
                let mut owner: Vec<Option<u32>> = Vec::with_capacity(p.nodes().len());
                let items = p.nodes().map(move |(id, n)| {
                    let parent = n.parent.map(|q| q.index());
                    let d = parent.and_then(|q| depth.get(q)).map_or(0, |d| d + 1);
                    let o = if p.frame(n.frame).kind.is_function_like() {
                        Some(id.index() as u32)
                    } else {
                        parent.and_then(|q| owner.get(q).copied().flatten())
                    };
                    depth.push(d);
                    owner.push(o);
                    Ok((id.index() as u32, parent.map(|q| q as u32), n.frame, d, o))
                });
                batches(
                    NodeRows::new(),
                    items,
                    options,
                    |rows,
                     (node, parent, frame, depth, owner): (
                        u32,
                        Option<u32>,
                        profcodec_profile::FrameId,
                        u32,
                        Option<u32>,
                    )| {
                        rows.node.append_value(node);
                        rows.parent.append_option(parent);
                        rows.frame.append_value(frame.index() as u32);
                        rows.depth.append_value(depth);
                        rows.function_node.append_option(owner);
                    },
                )
            }
            NodeValues::NAME => batches(
                NodeValueRows::new(),
                p.node_values().iter().map(Ok),
                options,
                |rows, v: profcodec_profile::NodeValue| {
                    rows.context.append_value(v.context.index() as u32);
                    rows.node.append_value(v.node.index() as u32);
                    rows.value_type.append_value(v.value_type.index() as u32);
                    rows.self_value.append_option(v.self_value);
                    rows.inclusive.append_option(v.inclusive);
                },
            ),
            FlatValues::NAME => batches(
                FlatValueRows::new(),
                p.flat_values().iter().map(Ok),
                options,
                |rows, v: &profcodec_profile::FlatValue| {
                    rows.context.append_value(v.context.index() as u32);
                    rows.frame.append_value(v.frame.index() as u32);
                    rows.value_type.append_value(v.value_type.index() as u32);
                    rows.self_value.append_option(v.self_value);
                    rows.inclusive.append_option(v.inclusive);
                },
            ),
            CallEdges::NAME => batches(
                CallEdgeRows::new(),
                p.call_edges().map(Ok),
                options,
                |rows, (id, e): (profcodec_profile::EdgeId, &profcodec_profile::CallEdge)| {
                    rows.edge.append_value(id.index() as u32);
                    rows.caller.append_value(e.caller.index() as u32);
                    rows.site.append_option(e.site.map(|s| s.index() as u32));
                    rows.callee.append_value(e.callee.index() as u32);
                },
            ),
            EdgeValues::NAME => batches(
                EdgeValueRows::new(),
                p.edge_values().iter().map(Ok),
                options,
                |rows, v: &profcodec_profile::EdgeValue| {
                    rows.context.append_value(v.context.index() as u32);
                    rows.edge.append_value(v.edge.index() as u32);
                    rows.value_type.append_value(v.value_type.index() as u32);
                    rows.value.append_value(v.value);
                },
            ),
            _ => batches(
                SpanRows::new(),
                p.spans().iter().map(Ok),
                options,
                |rows, s: &profcodec_profile::Span| {
                    rows.context.append_value(s.context.index() as u32);
                    rows.node.append_value(s.node.index() as u32);
                    rows.begin_time.append_value(s.begin);
                    rows.end_time.append_value(s.end);
                },
            ),
        })
    }
}
