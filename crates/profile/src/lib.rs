//! A format-neutral profile model for the five profcodec formats, and the questions users ask of
//! it: the top functions, lines or modules by self or inclusive cost, merged inputs, and diffs.
//!
//! # The model
//!
//! A [`Profile`] is a set of tables addressed by typed `u32` handles ([`StringId`], [`FrameId`],
//! [`NodeId`], [`ValueTypeId`], [`ContextId`], [`EdgeId`]), in the manner of pprof's
//! `profile.proto` (string table, functions and locations, sample value types) and the Firefox
//! Profiler's processed format (interned frames and a stack table of (prefix, frame) pairs):
//!
//! - **strings**, interned once;
//! - **frames** ([`Frame`]): function, file, line, module and address where known, and a
//!   [`FrameKind`]: function, inlined function, block, loop, line or instruction, so that
//!   HPCToolkit's contexts keep their loops and lines;
//! - a **call tree** of [`Node`]s, one per distinct (parent, frame): adding a stack costs memory
//!   by the distinct nodes it creates, not by the samples;
//! - **value types** ([`ValueType`]): a name, a [`Unit`] (nanoseconds, seconds, ticks, samples,
//!   count, bytes, other) whose [`Quantity`] tells time from counts, and which values were
//!   measured ([`Measured`]): self only (samples, blocks), or self and inclusive separately
//!   (HPCToolkit's exclusive and inclusive metrics, NYTProf's per-sub times), in which case
//!   inclusive is never recomputed;
//! - **contexts** ([`Context`]): where a value was measured, an ordered identifier tuple of
//!   ([`IdKind`], value) pairs such as (rank 3, thread 0) or (process 4711), an optional name,
//!   and a summary flag for HPCToolkit's summary profile; per-rank and aggregated views both
//!   come from the same values;
//! - **node values** ([`NodeValue`]): a self and a measured inclusive value per (context, node,
//!   value type), stored as one [`NodeValueColumn`] per (context, value type);
//! - **flat values** ([`FlatValue`]): measured per-frame values outside the tree, for tables a
//!   tool reports as it computed them (NYTProf's per-sub calls, self and inclusive time with its
//!   own recursion rule; its per-line statement time and count);
//! - **call edges** ([`CallEdge`]) by call site with values ([`EdgeValue`]): NYTProf's
//!   sub-caller table, callgrind's `calls=` lines;
//! - **spans** ([`Span`]): timed executions of a node (EasyProfiler's blocks, with begin and
//!   end).
//!
//! # Converting a format into the model
//!
//! Each format crate converts its own data with a [`ProfileBuilder`]: intern strings and
//! frames, make one context per thread, rank or process, then feed stacks or tree nodes with
//! their values. Every builder call returns a `Result`: a handle from another builder or a table
//! over `u32::MAX` entries is a [`ModelError`], never a panic.
//!
//! - HPCToolkit: one node per context of the context tree (loops, lines and instructions as
//!   [`FrameKind::Loop`], [`FrameKind::Line`], [`FrameKind::Instruction`] frames below their
//!   function; inlined calls as [`FrameKind::Inlined`]); each metric one value type with
//!   [`Measured::SelfAndInclusive`]. The self value is the metric's `point` scope, the cost at
//!   exactly that context, so that self values over all nodes add up to the total; grouped by
//!   function (a loop's or line's cost goes to its enclosing function) they give the `function`
//!   scope, hpcviewer's exclusive value. Where a metric lacks the point scope, a node's point
//!   value is its function-scope value minus that of its loop and line children. The inclusive
//!   value is the `execution` scope. Instruction contexts that meta.db elides fold into their
//!   parent context. One context per identifier tuple, plus [`Context::summary`] for the
//!   summary profile.
//! - hpcrun: the CCT as nodes with load-module-resolved frames, every metric per node, one
//!   context per thread, identified by the file's identifier tuple (node, rank, thread, core,
//!   GPU kinds) where it has one, else by its rank and thread.
//! - NYTProf: subs as [`FrameKind::Function`] frames with flat values (calls via
//!   [`ProfileBuilder::set_calls_value_type`], self and inclusive time), statement lines as
//!   [`FrameKind::Line`] frames with flat time and count (the statements value type,
//!   [`ProfileBuilder::set_statements_value_type`]), calls as [`CallEdge`]s by call site,
//!   and the call stacks `nytprofcalls` prints as samples.
//! - EasyProfiler: blocks as [`FrameKind::Block`] frames; each block's stack gets its duration
//!   as self (minus its children's) or as inclusive and a `calls` count of 1; on request a
//!   [`Span`] with begin and end per block (spans grow with the blocks, so they are opt-in);
//!   one context per thread. Values and events are [`FrameKind::Value`] and
//!   [`FrameKind::Event`] frames with their count only ([`FrameKind::is_marker`]).
//! - StatProfiler: each sample's stack through [`ProfileBuilder::add_sample`] with its weight;
//!   one context per process ([`IdKind::Process`]).
//!
//! ```
//! use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Unit};
//!
//! # fn main() -> Result<(), profcodec_profile::ModelError> {
//! let mut b = ProfileBuilder::new();
//! let thread = b.intern_context(Context::new([(IdKind::Thread, 0)]))?;
//! let time = b.intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)?;
//! let main = b.intern_string("main")?;
//! let main = b.intern_frame(Frame::function(main))?;
//! let work = b.intern_string("work")?;
//! let work = b.intern_frame(Frame::function(work))?;
//! b.add_sample(thread, [main, work], time, 30.0)?;
//! b.add_sample(thread, [main], time, 10.0)?;
//! let profile = b.build();
//! assert_eq!(profile.nodes().len(), 2);
//! # Ok(())
//! # }
//! ```
//!
//! # Asking questions
//!
//! [`Profile::top`] answers a [`Query`] (value type by name, [`Order`], [`GroupBy`],
//! [`ContextFilter`], [`Combine`], [`Source`], limit) with a [`Table`] of [`Row`]s and totals;
//! [`diff`] matches two profiles' rows by identity; [`Profile::merge`] (or
//! [`ProfileBuilder::append`]) merges per-rank or per-process profiles by frame identity. How
//! values are aggregated, and how recursion is counted, is told in the [`query`] module.
//! A [`Selection`] (threads by id or name, ranks, processes) chooses contexts the same way for
//! a query ([`ContextFilter::Select`]), a whole profile ([`Profile::keep_selected`], what the
//! exporters then write) and a timeline's filter; one that keeps nothing is a [`NoMatch`]
//! that names what the profile has.
//!
//! # Timelines
//!
//! The [`timeline`] module is the format-neutral model of timelines: the tracks, slices,
//! instants and counter values a format's converter emits and a trace writer
//! (`profcodec-timeline`) writes, with the filter of what to keep and the sampled call paths as
//! nested slices.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod amount;
mod builder;
mod ids;
mod model;
mod names;
pub mod query;
pub mod select;
pub mod timeline;
mod values;

pub use amount::{Amount, AmountError};
pub use builder::{ModelError, ProfileBuilder};
pub use ids::{ContextId, EdgeId, FrameId, NodeId, StringId, ValueTypeId};
pub use model::{
    CallEdge, Context, EdgeValue, FlatValue, Frame, FrameKind, IdKind, Measured, Node, Profile,
    Quantity, Span, Unit, ValueType,
};
pub use names::{ShownName, distinct_short_names, short_name};
pub use query::{
    Combine, ContextFilter, Diff, DiffOptions, DiffRow, GroupBy, LeftOut, NodeTotals, Order,
    PATH_HEAD, PATH_SEPARATOR, PATH_SHOWN, Query, QueryError, Row, Source, Table, Total, Values,
    diff, diff_with,
};
pub use select::{NoMatch, Seen, Selection};
pub use values::NodeValue;
pub use values::{NodeValueColumn, NodeValueIter, NodeValues};

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
