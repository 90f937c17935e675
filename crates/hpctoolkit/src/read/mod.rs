//! Views over HPCToolkit database files: borrow `&'a [u8]`, never copy a large array.
//!
//! - [`MetaDb`], [`ProfileDb`], [`CctDb`], [`TraceDb`]: one view per file. `parse` checks the
//!   file header, the footer and the section headers (O(sections)); `validate` touches every
//!   byte that matters (every pointer, size, string and sort order) so that afterwards the view's
//!   accessors cannot fail on that input.
//! - [`Database`]: the four files of a database directory, cross-linked (ctxId to context,
//!   profIndex to identifier tuple, metric id to metric and scope).
//!
//! Accessors before `validate` never panic either: they check what they touch and return
//! [`Error`](crate::Error).

mod bytes;
mod cct;
mod database;
mod meta;
mod overlap;
mod profile;
mod sparse;
mod stream;
mod trace;

pub use cct::{CctDb, ContextValues};
pub use database::{ContextCost, Database, MetricName, MetricRef, MetricRole, hatchet_metric_base};
pub use meta::{
    Context, ContextChildren, ContextIndex, ContextNode, EntryPoint, FileIndex, Function,
    FunctionIndex, LoadModule, MetaDb, Metric, ModuleIndex, PropagationScope,
    PropagationScopeInstance, STRING_AMPLIFICATION, STRING_SLACK, ScopeIndex, SourceFile,
    SummaryStatistic, TreeNode, Walk,
};
// The enumerations of meta.db: one representation shared with the model and the writers.
pub use crate::raw::enums::{Combine, EntryPointKind, LexicalType, Relation, ScopeType};
pub use profile::{IdTuple, Profile, ProfileDb};
pub use stream::{FileHead, TraceLine, TraceReader};
pub use trace::{Trace, TraceDb};
