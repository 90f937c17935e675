//! Questions a profiler user asks: the top functions, lines, modules or call paths by self or
//! inclusive cost ([`Profile::top`]), and what changed between two profiles ([`diff`]).
//!
//! # How values are aggregated
//!
//! A query picks one value type by name, a set of contexts and a grouping, then takes its values
//! from one of two sources ([`Source`]):
//!
//! - **Tree**: the call tree. A node's self value is its measured self value (or, for a value
//!   type with inclusive values only, its inclusive minus its children's inclusive); its
//!   inclusive value is the measured one (or self plus the children's inclusive, computed once
//!   bottom-up). A group's self is the sum of the self values of its nodes. A group's inclusive
//!   is the sum of the inclusive values of its nodes that have no ancestor in the same group, so
//!   a recursive function is counted once per stack, as flat profilers and hpcviewer's flat view
//!   count it. With non-negative values, a group's inclusive is never below its self.
//!   Loops, lines and instructions belong to the nearest enclosing function-like frame when
//!   grouping by function, module or call path. A call path's self is its function's own cost
//!   on that path, its inclusive the cost below the path.
//! - **Flat**: the per-frame values measured outside the tree (NYTProf's per-sub and per-line
//!   tables), taken as the tool reports them. Grouped by line, their total can differ from
//!   the total by function where the format times lines and functions apart
//!   ([`Total::functions`]).
//!
//! [`Source::Auto`] takes the flat values when the value type has some for the frames of the
//! grouping in the chosen contexts, and the tree otherwise. The whole query is linear in the
//! size of the profile.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;

use foldhash::fast::RandomState;

use crate::amount::Amount;
use crate::ids::{ContextId, FrameId, StringId, ValueTypeId};
use crate::model::{Frame, FrameKind, IdKind, Profile};
use crate::select::{NoMatch, Selection};
use crate::values::NodeValueColumn;

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum GroupBy {
    /// One row per function (name, file and module; its loops and lines included).
    #[default]
    Function,
    /// One row per source position (file and line).
    Line,
    /// One row per load module (or package).
    Module,
    /// One row per call path: the functions from a root of the call tree to the row's
    /// function, leaf last (its loops and lines included). Call sites of one caller that
    /// reach the same function make one row. Read from the call tree only: a profile without
    /// one has no call paths ([`QueryError::NoCallTree`]).
    Path,
}

/// Which value orders the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Order {
    /// The self (exclusive) value.
    #[default]
    SelfValue,
    /// The inclusive value (a row without one is ordered by its self value).
    Inclusive,
}

/// How the values of several contexts are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Combine {
    /// The sum over the chosen contexts.
    #[default]
    Sum,
    /// The sum divided by the number of chosen contexts.
    Mean,
}

/// Where a query takes its values from (see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Source {
    /// Flat values where the profile has them for the grouping, else the tree.
    #[default]
    Auto,
    /// The call tree.
    Tree,
    /// The flat per-frame values.
    Flat,
}

/// Which contexts a query reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ContextFilter {
    /// The whole program: the summary contexts if the profile has any, else every context.
    #[default]
    Whole,
    /// Every context that is not a summary.
    All,
    /// The non-summary contexts whose identifier tuple holds every given (kind, value), for
    /// example `[(IdKind::Rank, 3)]` for all threads of rank 3.
    Matching(Vec<(IdKind, u64)>),
    /// These contexts.
    Ids(Vec<ContextId>),
    /// The contexts a [`Selection`] keeps (threads by id or name, ranks, processes); a
    /// selection that keeps none is [`QueryError::NoMatch`].
    Select(Selection),
}

/// A query: which value type, which contexts, how grouped and ordered, how many rows.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Query {
    /// The value type's name (the first value type of that name, if units differ); `None` for
    /// the profile's default value type.
    pub value_type: Option<String>,
    /// The ordering value.
    pub order: Order,
    /// The grouping.
    pub group: GroupBy,
    /// The contexts read.
    pub contexts: ContextFilter,
    /// How contexts are combined.
    pub combine: Combine,
    /// Where values come from.
    pub source: Source,
    /// The most rows returned; `None` for all.
    pub limit: Option<usize>,
}

impl Query {
    /// The default query: every function of the whole program by self value of the default
    /// value type.
    pub fn new() -> Query {
        Query::default()
    }

    /// Where this query reads its values in `profile`: [`Source::Flat`] or [`Source::Tree`],
    /// what [`Source::Auto`] comes to there (the flat values when the profile has some of the
    /// value type for the grouping's frames in the contexts read). A reader that can convert
    /// an input without its call tree asks it, to know whether the tree is needed. Errors as
    /// [`Profile::top`] does for a value type or a selection the profile does not have.
    pub fn source_in(&self, profile: &Profile) -> Result<Source, QueryError> {
        let value_type = resolve_value_type(profile, self.value_type.as_deref())?;
        let selected = select_contexts(profile, &self.contexts)?;
        Ok(resolved_source(profile, self, value_type, &selected))
    }

    /// This query on the value type called `name`.
    pub fn value_type(mut self, name: impl Into<String>) -> Query {
        self.value_type = Some(name.into());
        self
    }

    /// This query ordered by `order`.
    pub fn by(mut self, order: Order) -> Query {
        self.order = order;
        self
    }

    /// This query grouped by `group`.
    pub fn group(mut self, group: GroupBy) -> Query {
        self.group = group;
        self
    }

    /// This query over `contexts`.
    pub fn contexts(mut self, contexts: ContextFilter) -> Query {
        self.contexts = contexts;
        self
    }

    /// This query combining contexts with `combine`.
    pub fn combine(mut self, combine: Combine) -> Query {
        self.combine = combine;
        self
    }

    /// This query reading `source`.
    pub fn source(mut self, source: Source) -> Query {
        self.source = source;
        self
    }

    /// This query returning at most `n` rows.
    pub fn limit(mut self, n: usize) -> Query {
        self.limit = Some(n);
        self
    }
}

/// Why a query could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// No value type has the name asked for.
    #[error("no such metric: value type: {name:?} is not one of {known}")]
    UnknownValueType {
        /// The name asked for.
        name: String,
        /// The names the profile has, comma-separated.
        known: String,
    },
    /// The profile has no value type at all.
    #[error("the profile holds no values: value types: none")]
    NoValueTypes,
    /// A context handle names no context of the profile.
    #[error("no such context: context filter: index {index} but the profile has {len}")]
    UnknownContext {
        /// The handle's index.
        index: usize,
        /// The number of contexts.
        len: usize,
    },
    /// The two profiles of a diff measure the value type in different units.
    #[error("units differ: value type {value_type:?}: base in {base} but new in {new}")]
    UnitMismatch {
        /// The value type.
        value_type: String,
        /// The base profile's unit.
        base: String,
        /// The new profile's unit.
        new: String,
    },
    /// A minimum change given as a time ([`Amount::Time`]) for a value type that is no time of
    /// known length.
    #[error(
        "a minimum change in time for a metric that is not a time: value type {value_type:?} is in {unit}; give a plain number"
    )]
    NotATime {
        /// The value type.
        value_type: String,
        /// Its unit.
        unit: String,
    },
    /// Rows by call path asked of a profile without a call tree (flat values only).
    #[error(
        "no call paths: the profile has no call tree (its values are per function and line only)"
    )]
    NoCallTree,
    /// A [`Selection`] keeps no context: the message names what the profile has.
    #[error(transparent)]
    NoMatch(#[from] NoMatch),
}

/// One row of a [`Table`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Row {
    /// The display name: a function, `file:line`, or a module.
    pub name: String,
    /// The function, for function rows.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub function: Option<String>,
    /// The source file.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub file: Option<String>,
    /// The source line, for line rows.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub line: Option<u32>,
    /// The load module or package.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub module: Option<String>,
    /// The address, for a frame known by its address only.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub address: Option<u64>,
    /// The call path, for call-path rows ([`GroupBy::Path`]): each function's name as
    /// [`Profile::function_name`] gives it, root first, the row's function last (a path of
    /// more than [`PATH_SHOWN`] functions has its middle left out, said by one `[N more]`
    /// element). The row's `name` is these joined with [`PATH_SEPARATOR`].
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub path: Option<Vec<String>>,
    /// The self value.
    #[cfg_attr(feature = "serde", serde(rename = "self"))]
    pub self_value: f64,
    /// The inclusive value, where known.
    pub inclusive: Option<f64>,
    /// The number of calls, where the profile counts them.
    pub calls: Option<f64>,
    /// How many times the statements of a line ran, for line rows where the profile counts
    /// statements ([`Profile::statements_value_type`]).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub statements: Option<f64>,
    /// The value type's name.
    pub value_type: String,
    /// The value type's unit.
    pub unit: String,
}

/// The totals of a query over all groups.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Total {
    /// The sum of every group's self value: the program's total.
    #[cfg_attr(feature = "serde", serde(rename = "self"))]
    pub self_value: f64,
    /// The sum of the roots' inclusive values (tree source only).
    pub inclusive: Option<f64>,
    /// For rows by line read from flat values: the self total of the same query by function.
    /// Formats that time lines and functions apart give two totals: NYTProf's line times
    /// count the statements outside any sub (a script's top-level code), its subs' exclusive
    /// times do not. `None` otherwise (the call tree gives one total whatever the grouping).
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub functions: Option<f64>,
}

/// The frames a query leaves out of its rows and totals because they are not code that ran
/// ([`FrameKind::is_marker`]: EasyProfiler's values and events): the distinct frames of each
/// kind with a value in the contexts read. A face says how many, and that a timeline shows
/// them (as counters and instants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct LeftOut {
    /// Values ([`FrameKind::Value`]): counters.
    pub values: usize,
    /// Events ([`FrameKind::Event`]): instants.
    pub events: usize,
}

impl LeftOut {
    /// Whether nothing was left out.
    pub fn is_empty(&self) -> bool {
        self.values == 0 && self.events == 0
    }

    /// Counts the frames of `kinds` (each once).
    fn of(kinds: impl IntoIterator<Item = FrameKind>) -> LeftOut {
        let mut left_out = LeftOut::default();
        for kind in kinds {
            match kind {
                FrameKind::Value => left_out.values += 1,
                _ => left_out.events += 1,
            }
        }
        left_out
    }
}

/// The values and events left out, in words, as every face says them: `2 values and 1 event`
/// (nothing when none was).
impl std::fmt::Display for LeftOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use profcodec_common::words::count_of;
        let values = (self.values > 0).then(|| count_of(self.values, "value", "values"));
        let events = (self.events > 0).then(|| count_of(self.events, "event", "events"));
        match (values, events) {
            (Some(v), Some(e)) => write!(f, "{v} and {e}"),
            (Some(one), None) | (None, Some(one)) => f.write_str(&one),
            (None, None) => Ok(()),
        }
    }
}

/// What joins the function names of a call-path row's name (`main > solve > kernel`).
pub const PATH_SEPARATOR: &str = " > ";

/// The most elements a call-path row's [`Row::path`] holds: a deeper path keeps its first
/// [`PATH_HEAD`] functions and its last ones, with one element `[N more]` between them for
/// the N functions left out.
pub const PATH_SHOWN: usize = 64;

/// The functions a call path deeper than [`PATH_SHOWN`] keeps from its root.
pub const PATH_HEAD: usize = 8;

/// The answer to [`Profile::top`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Table {
    /// The value type's name.
    pub value_type: String,
    /// Its unit.
    pub unit: String,
    /// The source the values came from ([`Source::Tree`] or [`Source::Flat`]).
    pub source: Source,
    /// The number of contexts read.
    pub contexts: usize,
    /// Totals over all groups, not only the rows returned.
    pub total: Total,
    /// The rows, largest first.
    pub rows: Vec<Row>,
    /// The values and events left out of the rows and totals.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "LeftOut::is_empty"))]
    pub left_out: LeftOut,
}

/// The identity of a group inside one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct GroupKey {
    function: Option<StringId>,
    file: Option<StringId>,
    line: Option<u32>,
    module: Option<StringId>,
    address: Option<u64>,
}

impl GroupKey {
    fn function(frame: &Frame) -> GroupKey {
        GroupKey {
            function: frame.function,
            file: frame.file,
            line: None,
            module: frame.module,
            // A function known by its address only is told apart by that address.
            address: frame.address.filter(|_| frame.function.is_none()),
        }
    }

    fn line(frame: &Frame) -> GroupKey {
        match frame.line {
            Some(line) => GroupKey {
                function: None,
                file: frame.file,
                line: Some(line),
                module: None,
                address: None,
            },
            None => GroupKey::function(frame),
        }
    }

    fn module(module: Option<StringId>) -> GroupKey {
        GroupKey {
            function: None,
            file: None,
            line: None,
            module,
            address: None,
        }
    }
}

/// The per-group sums of one query, before rows are made.
struct Groups {
    value_type: ValueTypeId,
    source: Source,
    contexts: usize,
    keys: Vec<GroupKey>,
    self_values: Vec<f64>,
    inclusive: Vec<Option<f64>>,
    calls: Option<Vec<f64>>,
    /// Per group, the statements run (line groups, where the profile counts them).
    statements: Option<Vec<f64>>,
    /// Per call-path group, the group of its caller's path (`u32::MAX` for a root).
    path_parents: Option<Vec<u32>>,
    total: Total,
    left_out: LeftOut,
}

fn resolve_value_type(profile: &Profile, name: Option<&str>) -> Result<ValueTypeId, QueryError> {
    match name {
        None => profile.default_value_type().ok_or(QueryError::NoValueTypes),
        Some(name) => {
            profile
                .value_type_by_name(name)
                .ok_or_else(|| QueryError::UnknownValueType {
                    name: name.to_owned(),
                    known: profile
                        .value_types()
                        .map(|(id, _)| profile.value_type_name(id))
                        .collect::<Vec<_>>()
                        .join(", "),
                })
        }
    }
}

fn select_contexts(profile: &Profile, filter: &ContextFilter) -> Result<Vec<bool>, QueryError> {
    let len = profile.contexts.len();
    let mut selected = vec![false; len];
    match filter {
        ContextFilter::Whole => {
            let has_summary = profile.contexts.iter().any(|c| c.summary);
            for (s, c) in selected.iter_mut().zip(&profile.contexts) {
                *s = c.summary == has_summary;
            }
        }
        ContextFilter::All => {
            for (s, c) in selected.iter_mut().zip(&profile.contexts) {
                *s = !c.summary;
            }
        }
        ContextFilter::Matching(wanted) => {
            for (s, c) in selected.iter_mut().zip(&profile.contexts) {
                *s = !c.summary && wanted.iter().all(|w| c.ids.contains(w));
            }
        }
        ContextFilter::Select(selection) => return Ok(selection.select(profile)?),
        ContextFilter::Ids(ids) => {
            for id in ids {
                *selected
                    .get_mut(id.index())
                    .ok_or(QueryError::UnknownContext {
                        index: id.index(),
                        len,
                    })? = true;
            }
        }
    }
    Ok(selected)
}

/// Interns group keys into dense indexes. The index holds the keys' positions only (the keys
/// are in `keys`), hashed from a few packed words with a random seed (the keys come from the
/// input).
#[derive(Default)]
struct KeyTable {
    index: hashbrown::HashTable<u32>,
    hasher: RandomState,
    keys: Vec<GroupKey>,
}

impl GroupKey {
    /// The key's fields in three words, for hashing: equal keys give equal words.
    fn packed(&self) -> (u64, u64, u64) {
        let id = |s: Option<StringId>| s.map_or(u64::MAX, |s| u64::from(s.index() as u32));
        let line = self.line.map_or(0, |l| u64::from(l) + 1);
        (
            id(self.function) ^ id(self.file) << 32,
            id(self.module) ^ line << 32,
            self.address.map_or(0, |a| a.rotate_left(8) ^ 1),
        )
    }
}

impl KeyTable {
    /// A table for at most `keys` distinct keys (those of the frames of a profile).
    fn with_capacity(keys: usize) -> KeyTable {
        KeyTable {
            index: hashbrown::HashTable::with_capacity(keys),
            ..KeyTable::default()
        }
    }

    fn get(&mut self, key: GroupKey) -> u32 {
        let hash = self.hasher.hash_one(key.packed());
        let keys = &self.keys;
        if let Some(&g) = self.index.find(hash, |&g| keys[g as usize] == key) {
            return g;
        }
        // Keys are at most one per frame or node, whose counts fit in u32.
        let g = self.keys.len() as u32;
        self.keys.push(key);
        let (keys, hasher) = (&self.keys, &self.hasher);
        self.index
            .insert_unique(hash, g, |&g| hasher.hash_one(keys[g as usize].packed()));
        g
    }
}

fn flat_frame_matches(group: GroupBy, kind: FrameKind) -> bool {
    match group {
        GroupBy::Function | GroupBy::Module => kind.is_function_like(),
        GroupBy::Line => kind == FrameKind::Line,
        GroupBy::Path => false,
    }
}

/// Where `query` reads `value_type` of the `selected` contexts of `profile`: [`Source::Flat`]
/// or [`Source::Tree`], [`Source::Auto`] resolved.
fn resolved_source(
    profile: &Profile,
    query: &Query,
    value_type: ValueTypeId,
    selected: &[bool],
) -> Source {
    match query.source {
        // Call paths are the call tree's.
        _ if query.group == GroupBy::Path => Source::Tree,
        Source::Auto => {
            let has_flat = profile.flat_values.iter().any(|v| {
                v.value_type == value_type
                    && selected[v.context.index()]
                    && flat_frame_matches(query.group, profile.frame(v.frame).kind)
            });
            if has_flat { Source::Flat } else { Source::Tree }
        }
        other => other,
    }
}

fn group(profile: &Profile, query: &Query) -> Result<Groups, QueryError> {
    let value_type = resolve_value_type(profile, query.value_type.as_deref())?;
    let selected = select_contexts(profile, &query.contexts)?;
    let contexts = selected.iter().filter(|&&s| s).count();
    let calls_type = profile.calls_value_type.filter(|&c| c != value_type);
    let statements_type = profile
        .statements_value_type
        .filter(|&c| c != value_type && query.group == GroupBy::Line);
    let types = CountTypes {
        calls: calls_type,
        statements: statements_type,
    };
    if query.group == GroupBy::Path && profile.nodes.is_empty() {
        return Err(QueryError::NoCallTree);
    }
    let source = resolved_source(profile, query, value_type, &selected);
    let mut groups = match source {
        Source::Flat => group_flat(profile, query.group, value_type, types, &selected),
        _ => group_tree(profile, query.group, value_type, types, &selected),
    };
    groups.contexts = contexts;
    if query.group == GroupBy::Line && source == Source::Flat {
        let functions = group(
            profile,
            &Query {
                group: GroupBy::Function,
                limit: Some(0),
                ..query.clone()
            },
        )?;
        groups.total.functions = Some(functions.total.self_value);
    }
    if query.combine == Combine::Mean && contexts > 1 {
        let n = contexts as f64;
        for v in &mut groups.self_values {
            *v /= n;
        }
        for v in groups.inclusive.iter_mut().flatten() {
            *v /= n;
        }
        for v in groups.calls.iter_mut().flatten() {
            *v /= n;
        }
        for v in groups.statements.iter_mut().flatten() {
            *v /= n;
        }
        groups.total.self_value /= n;
        if let Some(v) = &mut groups.total.inclusive {
            *v /= n;
        }
    }
    Ok(groups)
}

/// The count value types a query adds to its rows: calls, and statements for line rows.
#[derive(Debug, Clone, Copy)]
struct CountTypes {
    calls: Option<ValueTypeId>,
    statements: Option<ValueTypeId>,
}

fn group_flat(
    profile: &Profile,
    group: GroupBy,
    value_type: ValueTypeId,
    types: CountTypes,
    selected: &[bool],
) -> Groups {
    let CountTypes {
        calls: calls_type,
        statements: statements_type,
    } = types;
    let mut keys = KeyTable::default();
    let mut self_values = Vec::new();
    let mut inclusive: Vec<Option<f64>> = Vec::new();
    let mut calls = calls_type.map(|_| Vec::new());
    let mut statements = statements_type.map(|_| Vec::new());
    // Whether any value of the calls or statements type was read: a grouping whose frames
    // have none (NYTProf's lines are not called) has no such column, rather than zeros.
    let (mut any_calls, mut any_statements) = (false, false);
    let mut total = 0.0;
    let mut markers = std::collections::BTreeSet::new();
    for v in &profile.flat_values {
        let is_value = v.value_type == value_type;
        let is_calls = Some(v.value_type) == calls_type;
        let is_statements = Some(v.value_type) == statements_type;
        if !(is_value || is_calls || is_statements) || !selected[v.context.index()] {
            continue;
        }
        let frame = profile.frame(v.frame);
        if frame.kind.is_marker() {
            markers.insert(v.frame);
            continue;
        }
        if !flat_frame_matches(group, frame.kind) {
            continue;
        }
        let key = match group {
            // Call paths never read flat values.
            GroupBy::Function | GroupBy::Path => GroupKey::function(frame),
            GroupBy::Line => GroupKey::line(frame),
            GroupBy::Module => GroupKey::module(frame.module),
        };
        let g = keys.get(key) as usize;
        if g == self_values.len() {
            self_values.push(0.0);
            inclusive.push(None);
            for c in calls.iter_mut().chain(&mut statements) {
                c.push(0.0);
            }
        }
        if is_value {
            let s = v.self_value.unwrap_or(0.0);
            self_values[g] += s;
            total += s;
            // A module's functions may call each other: their inclusive values do not add up.
            if let (Some(x), false) = (v.inclusive, group == GroupBy::Module) {
                *inclusive[g].get_or_insert(0.0) += x;
            }
        } else if let (true, Some(c)) = (is_calls, &mut calls) {
            c[g] += v.self_value.unwrap_or(0.0);
            any_calls = true;
        } else if let (true, Some(c)) = (is_statements, &mut statements) {
            c[g] += v.self_value.unwrap_or(0.0);
            any_statements = true;
        }
    }
    let calls = calls.filter(|_| any_calls);
    let statements = statements.filter(|_| any_statements);
    Groups {
        value_type,
        source: Source::Flat,
        contexts: 0,
        keys: keys.keys,
        self_values,
        inclusive,
        calls,
        statements,
        path_parents: None,
        total: Total {
            self_value: total,
            inclusive: None,
            functions: None,
        },
        left_out: LeftOut::of(markers.into_iter().map(|f| profile.frame(f).kind)),
    }
}

const NO_PARENT: u32 = u32::MAX;

/// The values of one value type at every call-tree node, summed over a set of contexts
/// ([`Profile::node_totals`]): what the tree source of [`Profile::top`] reads, for consumers
/// that walk the tree themselves (exporters).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeTotals {
    /// Per node (indexed by [`NodeId::index`](crate::NodeId::index)), the self value: measured,
    /// or for a value type measured inclusive only, the inclusive value minus the children's.
    pub self_values: Vec<f64>,
    /// Per node, the inclusive value: measured, or for a value type measured self only, the
    /// self value plus the children's inclusive values.
    pub inclusive: Vec<f64>,
    /// Per node, whether any chosen context has a value of the value type there (a measured
    /// zero included).
    pub measured: Vec<bool>,
}

/// [`NodeTotals`] over the contexts marked in `selected`; `parents` holds each node's parent
/// index or [`NO_PARENT`].
fn node_totals(
    profile: &Profile,
    value_type: ValueTypeId,
    selected: &[bool],
    parents: &[u32],
) -> NodeTotals {
    let n = profile.nodes.len();
    let kind = profile.value_type(value_type).measured;
    let mut self_values = vec![0.0; n];
    let mut measured_inclusive = vec![0.0; n];
    let mut measured = vec![false; n];
    for column in selected_columns(profile, value_type, selected) {
        for (&node, &x) in column.nodes().iter().zip(column.self_values()) {
            self_values[node.index()] += x;
            measured[node.index()] = true;
        }
        if let Some(inclusive) = column.inclusive_values() {
            for (&node, &x) in column.nodes().iter().zip(inclusive) {
                measured_inclusive[node.index()] += x;
            }
        }
    }
    // Children have larger ids than their parents, so one sweep from the last node to the first
    // sees every child of a node before the node itself.
    if !kind.has_self() {
        let mut children_inclusive = vec![0.0; n];
        for i in (0..n).rev() {
            self_values[i] = measured_inclusive[i] - children_inclusive[i];
            if parents[i] != NO_PARENT {
                children_inclusive[parents[i] as usize] += measured_inclusive[i];
            }
        }
    }
    let inclusive = if kind.has_inclusive() {
        measured_inclusive
    } else {
        drop(measured_inclusive);
        let mut inclusive = self_values.clone();
        for i in (0..n).rev() {
            if parents[i] != NO_PARENT {
                inclusive[parents[i] as usize] += inclusive[i];
            }
        }
        inclusive
    };
    NodeTotals {
        self_values,
        inclusive,
        measured,
    }
}

/// The node value columns of `value_type` in the contexts marked in `selected`.
fn selected_columns<'a>(
    profile: &'a Profile,
    value_type: ValueTypeId,
    selected: &'a [bool],
) -> impl Iterator<Item = &'a NodeValueColumn> + 'a {
    profile
        .node_values
        .iter()
        .filter(move |c| c.value_type() == value_type && selected[c.context().index()])
}

fn group_tree(
    profile: &Profile,
    group: GroupBy,
    value_type: ValueTypeId,
    types: CountTypes,
    selected: &[bool],
) -> Groups {
    let CountTypes {
        calls: calls_type,
        statements: statements_type,
    } = types;
    let n = profile.nodes.len();
    let parents: Vec<u32> = profile
        .nodes
        .iter()
        .map(|node| node.parent.map_or(NO_PARENT, |p| p.0))
        .collect();
    let mut totals = node_totals(profile, value_type, selected, &parents);
    // The counts at each node: calls, and statements.
    let counts_of = |count_type: Option<ValueTypeId>| {
        count_type.map(|count_type| {
            let mut c = vec![0.0; n];
            for column in selected_columns(profile, count_type, selected) {
                for (&node, &x) in column.nodes().iter().zip(column.self_values()) {
                    c[node.index()] += x;
                }
            }
            c
        })
    };
    let mut node_calls = counts_of(calls_type);
    let mut node_statements = counts_of(statements_type);
    let derived = !profile.value_type(value_type).measured.has_inclusive();
    let left_out = leave_out_markers(
        profile,
        &parents,
        (&mut totals, derived),
        [&mut node_calls, &mut node_statements],
    );
    let NodeTotals {
        self_values,
        inclusive,
        ..
    } = totals;

    // The function-like frame owning each node, in one sweep from the roots.
    let mut owner: Vec<FrameId> = Vec::with_capacity(n);
    for (i, node) in profile.nodes.iter().enumerate() {
        let own = if profile.frame(node.frame).kind.is_function_like() || parents[i] == NO_PARENT {
            node.frame
        } else {
            owner[parents[i] as usize]
        };
        owner.push(own);
    }
    let mut keys = KeyTable::with_capacity(profile.frames.len().min(n));
    let mut path_parents = None;
    let node_group: Vec<u32> = if group == GroupBy::Path {
        let (node_group, path_keys, parents_of_paths) = path_groups(profile, &parents);
        keys.keys = path_keys;
        path_parents = Some(parents_of_paths);
        node_group
    } else {
        // A node's group depends on its own frame or its owner's only: each frame's key is
        // hashed once, not once per node, so there are at most as many groups as frames.
        let mut frame_group = vec![u32::MAX; profile.frames.len()];
        profile
            .nodes
            .iter()
            .zip(&owner)
            .map(|(node, &owner)| {
                let by = match group {
                    GroupBy::Function | GroupBy::Path => owner,
                    GroupBy::Line => node.frame,
                    GroupBy::Module if profile.frame(node.frame).module.is_some() => node.frame,
                    GroupBy::Module => owner,
                };
                let memo = &mut frame_group[by.index()];
                if *memo == u32::MAX {
                    let frame = profile.frame(by);
                    *memo = keys.get(match group {
                        GroupBy::Function | GroupBy::Path => GroupKey::function(frame),
                        GroupBy::Line => GroupKey::line(frame),
                        GroupBy::Module => GroupKey::module(frame.module),
                    });
                }
                *memo
            })
            .collect()
    };
    drop(owner);
    let groups = keys.keys.len();

    // A node's inclusive value counts for its group only when no ancestor is in the same
    // group: `open[g]` is the number of nodes of group g on the current path.
    let mut open = vec![0u32; groups];
    let mut group_inclusive = vec![0.0; groups];
    let mut root_inclusive = 0.0;
    if !walk_in_id_order(
        &parents,
        &node_group,
        &inclusive,
        &mut open,
        &mut group_inclusive,
        &mut root_inclusive,
    ) {
        open.fill(0);
        group_inclusive.fill(0.0);
        root_inclusive = 0.0;
        walk_children(
            &parents,
            &node_group,
            &inclusive,
            &mut open,
            &mut group_inclusive,
            &mut root_inclusive,
        );
    }

    let mut group_self = vec![0.0; groups];
    let mut group_calls = calls_type.map(|_| vec![0.0; groups]);
    let mut group_statements = statements_type.map(|_| vec![0.0; groups]);
    let mut total = 0.0;
    for i in 0..n {
        let g = node_group[i] as usize;
        group_self[g] += self_values[i];
        total += self_values[i];
        if let (Some(gc), Some(nc)) = (&mut group_calls, &node_calls) {
            gc[g] += nc[i];
        }
        if let (Some(gs), Some(ns)) = (&mut group_statements, &node_statements) {
            gs[g] += ns[i];
        }
    }
    Groups {
        value_type,
        source: Source::Tree,
        contexts: 0,
        keys: keys.keys,
        self_values: group_self,
        inclusive: group_inclusive.into_iter().map(Some).collect(),
        calls: group_calls,
        statements: group_statements,
        path_parents,
        total: Total {
            self_value: total,
            inclusive: Some(root_inclusive),
            functions: None,
        },
        left_out,
    }
}

/// Zeroes the values and counts of the nodes of marker frames ([`FrameKind::is_marker`]) and
/// of the nodes below them, so that they fall into no row and no total, and takes them out of
/// their ancestors' inclusive values where those are sums of the tree (`derived`: a value type
/// measured self only, whose inclusive calls of a block would count its events). A measured
/// inclusive value is the block's own and stays. Returns the distinct marker frames with a
/// value or count.
fn leave_out_markers(
    profile: &Profile,
    parents: &[u32],
    totals: (&mut NodeTotals, bool),
    counts: [&mut Option<Vec<f64>>; 2],
) -> LeftOut {
    if !profile.frames.iter().any(|f| f.kind.is_marker()) {
        return LeftOut::default();
    }
    let (totals, derived) = totals;
    let n = parents.len();
    // Parents have smaller ids than their children: one sweep marks every subtree.
    let mut left = vec![false; n];
    for i in 0..n {
        left[i] = profile.frame(profile.nodes[i].frame).kind.is_marker()
            || (parents[i] != NO_PARENT && left[parents[i] as usize]);
    }
    let mut frames = std::collections::BTreeSet::new();
    for (i, node) in profile.nodes.iter().enumerate() {
        let counted = counts
            .iter()
            .any(|c| c.as_ref().is_some_and(|c| c[i] != 0.0));
        if (totals.measured[i] || counted) && profile.frame(node.frame).kind.is_marker() {
            frames.insert(node.frame);
        }
    }
    for c in counts.into_iter().flatten() {
        for (x, _) in c.iter_mut().zip(&left).filter(|(_, l)| **l) {
            *x = 0.0;
        }
    }
    if derived {
        // What the marker subtrees below each node add to its inclusive value, leaves first.
        let mut below = vec![0.0; n];
        for i in (0..n).rev() {
            let parent = parents[i];
            if left[i] {
                if parent != NO_PARENT && left[parent as usize] {
                    continue;
                }
                below[i] = totals.inclusive[i];
            } else {
                totals.inclusive[i] -= below[i];
            }
            if parent != NO_PARENT {
                below[parent as usize] += below[i];
            }
        }
    }
    for (i, _) in left.iter().enumerate().filter(|(_, l)| **l) {
        totals.self_values[i] = 0.0;
        totals.inclusive[i] = 0.0;
    }
    LeftOut::of(frames.into_iter().map(|f| profile.frame(f).kind))
}

/// The call-path group of every node ([`GroupBy::Path`]): a node of a function-like frame (or
/// a root) starts the path of its caller's path and its function, a node of any other frame
/// (a loop, a line) is in its function's path. Returns the nodes' groups, each group's key
/// (its function) and each group's caller group (`u32::MAX` for a root). Children have larger
/// ids than their parents, so one sweep in id order sees each caller's path first.
fn path_groups(profile: &Profile, parents: &[u32]) -> (Vec<u32>, Vec<GroupKey>, Vec<u32>) {
    let mut index: HashMap<(u32, GroupKey), u32, RandomState> = HashMap::default();
    let mut keys = Vec::new();
    let mut path_parents = Vec::new();
    let mut node_group: Vec<u32> = Vec::with_capacity(parents.len());
    for (node, &parent) in profile.nodes.iter().zip(parents) {
        let caller = match parent {
            NO_PARENT => NO_PARENT,
            p => node_group[p as usize],
        };
        let frame = profile.frame(node.frame);
        let g = if caller == NO_PARENT || frame.kind.is_function_like() {
            let key = GroupKey::function(frame);
            *index.entry((caller, key)).or_insert_with(|| {
                keys.push(key);
                path_parents.push(caller);
                // Paths are at most one per node, whose count fits in u32.
                (keys.len() - 1) as u32
            })
        } else {
            caller
        };
        node_group.push(g);
    }
    (node_group, keys, path_parents)
}

/// The depth-first walk of [`group_tree`] when the nodes are numbered depth first (each
/// node's parent is on the path to the node before it, as in a tree read in preorder): the
/// nodes in id order, the path as a stack, every table read in sequence. Returns false, having
/// added only part of the values, when the numbering is not depth first.
fn walk_in_id_order(
    parents: &[u32],
    node_group: &[u32],
    inclusive: &[f64],
    open: &mut [u32],
    group_inclusive: &mut [f64],
    root_inclusive: &mut f64,
) -> bool {
    let mut path: Vec<u32> = Vec::new();
    for (i, &parent) in parents.iter().enumerate() {
        while let Some(&top) = path.last() {
            if top == parent {
                break;
            }
            path.pop();
            open[node_group[top as usize] as usize] -= 1;
        }
        if parent == NO_PARENT {
            *root_inclusive += inclusive[i];
        } else if path.is_empty() {
            return false;
        }
        let g = node_group[i] as usize;
        if open[g] == 0 {
            group_inclusive[g] += inclusive[i];
        }
        open[g] += 1;
        path.push(i as u32);
    }
    true
}

/// The depth-first walk of [`group_tree`] through each node's children, in any numbering.
fn walk_children(
    parents: &[u32],
    node_group: &[u32],
    inclusive: &[f64],
    open: &mut [u32],
    group_inclusive: &mut [f64],
    root_inclusive: &mut f64,
) {
    let n = parents.len();
    // Children lists in one flat array (compressed rows).
    let mut first_child = vec![0u32; n + 1];
    for &p in parents {
        if p != NO_PARENT {
            first_child[p as usize + 1] += 1;
        }
    }
    for i in 0..n {
        first_child[i + 1] += first_child[i];
    }
    let mut fill = first_child.clone();
    let mut children = vec![0u32; first_child[n] as usize];
    for (i, &p) in parents.iter().enumerate() {
        if p != NO_PARENT {
            children[fill[p as usize] as usize] = i as u32;
            fill[p as usize] += 1;
        }
    }
    drop(fill);
    let mut stack: Vec<(u32, bool)> = Vec::new();
    for root in (0..n).filter(|&i| parents[i] == NO_PARENT) {
        *root_inclusive += inclusive[root];
        stack.push((root as u32, false));
        while let Some((node, leaving)) = stack.pop() {
            let i = node as usize;
            let g = node_group[i] as usize;
            if leaving {
                open[g] -= 1;
                continue;
            }
            if open[g] == 0 {
                group_inclusive[g] += inclusive[i];
            }
            open[g] += 1;
            stack.push((node, true));
            let (from, to) = (first_child[i] as usize, first_child[i + 1] as usize);
            stack.extend(children[from..to].iter().rev().map(|&c| (c, false)));
        }
    }
}

impl Groups {
    fn order_value(&self, order: Order, g: usize) -> f64 {
        match order {
            Order::SelfValue => self.self_values[g],
            Order::Inclusive => self.inclusive[g].unwrap_or(self.self_values[g]),
        }
    }

    fn is_empty_group(&self, g: usize) -> bool {
        self.self_values[g] == 0.0
            && self.inclusive[g].unwrap_or(0.0) == 0.0
            && self.calls.as_ref().is_none_or(|c| c[g] == 0.0)
            && self.statements.as_ref().is_none_or(|c| c[g] == 0.0)
    }

    /// The function names of call-path group `g`, root first; a path deeper than
    /// [`PATH_SHOWN`] functions keeps its first [`PATH_HEAD`] and its last ones, with one
    /// element saying how many were left out between them.
    fn path(&self, profile: &Profile, g: usize) -> Option<Vec<String>> {
        let parents = self.path_parents.as_ref()?;
        let mut groups = Vec::new();
        let mut at = g as u32;
        // Each group's caller was made before it: the walk ends at a root.
        while at != NO_PARENT {
            groups.push(at);
            at = parents[at as usize];
        }
        groups.reverse();
        let name = |g: u32| {
            let key = self.keys[g as usize];
            function_row_name(profile, key.function, key.address, key.file, key.module).into_owned()
        };
        if groups.len() <= PATH_SHOWN {
            return Some(groups.into_iter().map(name).collect());
        }
        // Deep recursion makes paths as deep as the tree: every row naming its whole path
        // would take memory of the rows times the depth.
        let tail = PATH_SHOWN - PATH_HEAD - 1;
        let left_out = groups.len() - PATH_HEAD - tail;
        let mut path: Vec<String> = groups[..PATH_HEAD].iter().copied().map(name).collect();
        path.push(format!("[{left_out} more]"));
        path.extend(groups[groups.len() - tail..].iter().copied().map(name));
        Some(path)
    }

    /// The non-empty groups, largest first (ties in first-seen order), at most `limit`.
    fn ranked(&self, order: Order, limit: Option<usize>) -> Vec<usize> {
        let mut ranked: Vec<usize> = (0..self.keys.len())
            .filter(|&g| !self.is_empty_group(g))
            .collect();
        let cmp = |a: &usize, b: &usize| {
            self.order_value(order, *b)
                .total_cmp(&self.order_value(order, *a))
                .then(a.cmp(b))
        };
        if let Some(limit) = limit {
            if limit == 0 {
                return Vec::new();
            }
            if limit < ranked.len() {
                ranked.select_nth_unstable_by(limit - 1, cmp);
                ranked.truncate(limit);
            }
        }
        ranked.sort_unstable_by(cmp);
        ranked
    }

    fn row(&self, profile: &Profile, group: GroupBy, g: usize) -> Row {
        let key = self.keys[g];
        let s = |id: Option<StringId>| id.map(|id| profile.string(id).to_owned());
        let value_type = profile.value_type(self.value_type);
        let path = self.path(profile, g);
        let name = match (group, key.line) {
            (GroupBy::Path, _) => path.as_deref().unwrap_or_default().join(PATH_SEPARATOR),
            (GroupBy::Module, _) => key
                .module
                .map_or("[unknown module]", |m| profile.string(m))
                .to_owned(),
            (GroupBy::Line, Some(line)) => format!(
                "{}:{line}",
                key.file.map_or("[unknown file]", |f| profile.string(f))
            ),
            _ => function_row_name(profile, key.function, key.address, key.file, key.module)
                .into_owned(),
        };
        Row {
            name,
            function: s(key.function),
            file: s(key.file),
            line: key.line,
            module: s(key.module),
            address: key.address,
            path,
            self_value: self.self_values[g],
            inclusive: self.inclusive[g],
            calls: self.calls.as_ref().map(|c| c[g]),
            statements: self.statements.as_ref().map(|c| c[g]),
            value_type: profile.string(value_type.name).to_owned(),
            unit: profile.unit_name(value_type.unit).to_owned(),
        }
    }
}

/// A function's row name: its name, else its address, file or module in brackets.
fn function_row_name(
    profile: &Profile,
    function: Option<StringId>,
    address: Option<u64>,
    file: Option<StringId>,
    module: Option<StringId>,
) -> Cow<'_, str> {
    let mut name = String::new();
    match write_function_row_name(profile, function, address, file, module, &mut name) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(name),
    }
}

/// [`function_row_name`] without an allocation: a name the profile holds (or `[unknown]`) is
/// returned, any other is written after `out`'s contents.
fn write_function_row_name<'p>(
    profile: &'p Profile,
    function: Option<StringId>,
    address: Option<u64>,
    file: Option<StringId>,
    module: Option<StringId>,
    out: &mut String,
) -> Option<&'p str> {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = match (function, address, file, module) {
        (Some(f), ..) => return Some(profile.string(f)),
        (None, Some(a), ..) => write!(out, "[0x{a:x}]"),
        (None, None, Some(f), _) => write!(out, "[{}]", profile.string(f)),
        (None, None, None, Some(m)) => write!(out, "[{}]", profile.string(m)),
        _ => return Some("[unknown]"),
    };
    None
}

impl Profile {
    /// The name [`top`](Profile::top) gives the row of a function-like frame when grouping by
    /// function: the function's name, else `[0x…]` for its address, `[file]` or `[module]`,
    /// else `[unknown]`. Exporters name their functions so, so that a viewer's rows and `top`'s
    /// match.
    pub fn function_name(&self, frame: FrameId) -> Cow<'_, str> {
        let f = self.frame(frame);
        function_row_name(self, f.function, f.address, f.file, f.module)
    }

    /// [`function_name`](Profile::function_name) for naming many frames without an allocation
    /// each: the name is borrowed from the profile, or written into `scratch` (cleared first)
    /// when it is made from an address, file or module.
    pub fn function_name_in<'a>(&'a self, frame: FrameId, scratch: &'a mut String) -> &'a str {
        scratch.clear();
        let f = self.frame(frame);
        match write_function_row_name(self, f.function, f.address, f.file, f.module, scratch) {
            Some(known) => known,
            None => scratch,
        }
    }

    /// The total self value of one value type in every context, in one pass over the values:
    /// the per-thread or per-rank balance of a run. A value type measured inclusive only has
    /// its total in the roots' inclusive values.
    pub fn context_totals(&self, value_type: ValueTypeId) -> Vec<(ContextId, f64)> {
        let measured = self.value_type(value_type).measured;
        let mut totals = vec![0.0; self.contexts.len()];
        for column in &self.node_values {
            if column.value_type() != value_type {
                continue;
            }
            let total = &mut totals[column.context().index()];
            if measured.has_self() {
                *total += column.self_values().iter().sum::<f64>();
            } else if let Some(inclusive) = column.inclusive_values() {
                for (&node, &x) in column.nodes().iter().zip(inclusive) {
                    if self.node(node).parent.is_none() {
                        *total += x;
                    }
                }
            }
        }
        self.contexts().map(|(id, _)| id).zip(totals).collect()
    }

    /// The self and inclusive values of `value_type` at every call-tree node, summed over the
    /// contexts `contexts` chooses, completed as the tree source of [`Profile::top`] completes
    /// them (see the [module docs](self)). Linear in the size of the profile. `value_type` must
    /// come from this profile (see [`ids`](crate::ValueTypeId)).
    pub fn node_totals(
        &self,
        value_type: ValueTypeId,
        contexts: &ContextFilter,
    ) -> Result<NodeTotals, QueryError> {
        let selected = select_contexts(self, contexts)?;
        let parents: Vec<u32> = self
            .nodes
            .iter()
            .map(|node| node.parent.map_or(NO_PARENT, |p| p.0))
            .collect();
        Ok(node_totals(self, value_type, &selected, &parents))
    }

    /// The contexts a [`ContextFilter`] chooses, as one flag per context (indexed by
    /// [`ContextId::index`]).
    pub fn selected_contexts(&self, contexts: &ContextFilter) -> Result<Vec<bool>, QueryError> {
        select_contexts(self, contexts)
    }

    /// The top rows of `query`: groups ordered by self or inclusive value, largest first, with
    /// the totals over all groups. Linear in the size of the profile (plus sorting the groups
    /// returned).
    pub fn top(&self, query: &Query) -> Result<Table, QueryError> {
        let groups = group(self, query)?;
        let rows = groups
            .ranked(query.order, query.limit)
            .into_iter()
            .map(|g| groups.row(self, query.group, g))
            .collect();
        let value_type = self.value_type(groups.value_type);
        Ok(Table {
            value_type: self.string(value_type.name).to_owned(),
            unit: self.unit_name(value_type.unit).to_owned(),
            source: groups.source,
            contexts: groups.contexts,
            total: groups.total,
            rows,
            left_out: groups.left_out,
        })
    }
}

/// A row's values on one side of a [`diff`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Values {
    /// The self value.
    #[cfg_attr(feature = "serde", serde(rename = "self"))]
    pub self_value: f64,
    /// The inclusive value, where known.
    pub inclusive: Option<f64>,
    /// The calls, where counted.
    pub calls: Option<f64>,
}

/// One row of a [`Diff`]: a group matched by identity (function, file, line, module) in both
/// profiles, or present in one only.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct DiffRow {
    /// The display name.
    pub name: String,
    /// The function, for function rows.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub function: Option<String>,
    /// The source file.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub file: Option<String>,
    /// The source line.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub line: Option<u32>,
    /// The module.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub module: Option<String>,
    /// The address.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub address: Option<u64>,
    /// The call path, root first, for call-path rows.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub path: Option<Vec<String>>,
    /// The values in the base profile (`None`: absent there).
    pub base: Option<Values>,
    /// The values in the new profile (`None`: absent there).
    pub new: Option<Values>,
    /// New self minus base self (an absent side counts as zero).
    pub self_change: f64,
    /// New inclusive minus base inclusive, where both sides know it (or one side is absent).
    pub inclusive_change: Option<f64>,
    /// `self_change` relative to the base self value; `None` when the base is zero.
    pub self_relative: Option<f64>,
    /// `inclusive_change` relative to the base inclusive value; `None` when unknown or zero.
    pub inclusive_relative: Option<f64>,
}

/// The answer to [`diff`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Diff {
    /// The value type's name.
    pub value_type: String,
    /// Its unit.
    pub unit: String,
    /// The base profile's totals. Their inclusive value is the whole program's: the roots'
    /// inclusive values of the call tree, or for flat values (NYTProf's per-sub times, which
    /// overlap and do not add up) the per-line total, code outside functions included, where
    /// the profile has one.
    pub base_total: Total,
    /// The new profile's totals, as the base's.
    pub new_total: Total,
    /// The values and events left out of the base profile's rows and totals.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "LeftOut::is_empty"))]
    pub base_left_out: LeftOut,
    /// The values and events left out of the new profile's rows and totals.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "LeftOut::is_empty"))]
    pub new_left_out: LeftOut,
    /// The rows, largest absolute change (of the query's order) first.
    pub rows: Vec<DiffRow>,
}

/// The whole program's inclusive total of `table`, `profile`'s answer to `query`: the table's
/// own (the call tree's roots) where it has one; for flat values, whose per-function inclusive
/// values overlap, the per-line total (every statement, code outside functions included) where
/// the profile has flat line values; else unknown.
fn whole_inclusive(
    profile: &Profile,
    query: &Query,
    table: &Table,
) -> Result<Option<f64>, QueryError> {
    if table.total.inclusive.is_some() || table.source != Source::Flat {
        return Ok(table.total.inclusive);
    }
    let lines = profile.top(&Query {
        group: GroupBy::Line,
        order: Order::SelfValue,
        limit: Some(0),
        ..query.clone()
    })?;
    Ok((lines.source == Source::Flat).then_some(lines.total.self_value))
}

type RowIdentity = (
    Option<String>,
    Option<String>,
    Option<u32>,
    Option<String>,
    Option<u64>,
    Option<Vec<String>>,
);

fn identity(row: &Row) -> RowIdentity {
    (
        row.function.clone(),
        row.file.clone(),
        row.line,
        row.module.clone(),
        row.address,
        row.path.clone(),
    )
}

fn relative(change: f64, base: f64) -> Option<f64> {
    (base != 0.0).then(|| change / base)
}

/// Which rows a [`diff`] lists: those whose change of the query's ordering value (self or
/// inclusive) reaches both minimums. A row new in one profile has an unbounded relative change.
///
/// ```
/// use profcodec_profile::DiffOptions;
/// let options = DiffOptions::new()
///     .min_change("1ms".parse().unwrap())
///     .min_relative(0.05);
/// assert_eq!(options.min_relative, Some(0.05));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct DiffOptions {
    /// The least absolute change listed (`--min-change`); `None`: any.
    pub min_change: Option<Amount>,
    /// The least relative change listed, as a fraction of the base value (`0.05` for 5%,
    /// `--min-relative 5`); `None`: any.
    pub min_relative: Option<f64>,
}

impl DiffOptions {
    /// Every row listed.
    pub fn new() -> DiffOptions {
        DiffOptions::default()
    }

    /// These options listing rows that change by at least `amount`.
    pub fn min_change(mut self, amount: Amount) -> DiffOptions {
        self.min_change = Some(amount);
        self
    }

    /// These options listing rows that change by at least `fraction` of their base value.
    pub fn min_relative(mut self, fraction: f64) -> DiffOptions {
        self.min_relative = Some(fraction);
        self
    }

    /// Whether `row` changes enough, by the ordering value of `order`, given the minimum
    /// absolute change in the metric's unit.
    fn lists(&self, row: &DiffRow, order: Order, min_change: Option<f64>) -> bool {
        let (change, relative) = match (order, row.inclusive_change) {
            (Order::Inclusive, Some(change)) => (change, row.inclusive_relative),
            _ => (row.self_change, row.self_relative),
        };
        // No relative change: the base is zero, so any change is an unbounded one.
        let relative = relative.unwrap_or(if change == 0.0 { 0.0 } else { f64::INFINITY });
        min_change.is_none_or(|m| change.abs() >= m)
            && self.min_relative.is_none_or(|m| relative.abs() >= m)
    }
}

/// Compares two profiles under the same query: every group of either profile, matched by its
/// identity (function, file, line, module as strings, so the profiles need not share tables),
/// with both sides' values and the absolute and relative change. `query.limit` bounds the rows
/// after ordering by the largest absolute change. The value type (by default the base
/// profile's default) must have the same unit in both. [`diff_with`] lists only the rows that
/// change enough.
pub fn diff(base: &Profile, new: &Profile, query: &Query) -> Result<Diff, QueryError> {
    diff_with(base, new, query, &DiffOptions::new())
}

/// [`diff`] listing only the rows whose change reaches the minimums of `options`, before
/// `query.limit` bounds them. A minimum change given as a time needs a value type of time
/// ([`QueryError::NotATime`]).
pub fn diff_with(
    base: &Profile,
    new: &Profile,
    query: &Query,
    options: &DiffOptions,
) -> Result<Diff, QueryError> {
    let mut query = query.clone();
    if query.value_type.is_none() {
        let id = resolve_value_type(base, None)?;
        query.value_type = Some(base.value_type_name(id).to_owned());
    }
    let full = Query {
        limit: None,
        ..query.clone()
    };
    let mut base_table = base.top(&full)?;
    let mut new_table = new.top(&full)?;
    base_table.total.inclusive = whole_inclusive(base, &full, &base_table)?;
    new_table.total.inclusive = whole_inclusive(new, &full, &new_table)?;
    if base_table.unit != new_table.unit {
        return Err(QueryError::UnitMismatch {
            value_type: base_table.value_type,
            base: base_table.unit,
            new: new_table.unit,
        });
    }
    let values = |r: &Row| Values {
        self_value: r.self_value,
        inclusive: r.inclusive,
        calls: r.calls,
    };
    let mut base_rows: HashMap<RowIdentity, usize, RandomState> = base_table
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| (identity(r), i))
        .collect();
    let mut pairs: Vec<(Option<&Row>, Option<&Row>)> = Vec::new();
    for row in &new_table.rows {
        let matched = base_rows
            .remove(&identity(row))
            .map(|i| &base_table.rows[i]);
        pairs.push((matched, Some(row)));
    }
    let mut base_only: Vec<usize> = base_rows.into_values().collect();
    base_only.sort_unstable();
    pairs.extend(
        base_only
            .into_iter()
            .map(|i| (Some(&base_table.rows[i]), None)),
    );

    let mut rows: Vec<DiffRow> = pairs
        .into_iter()
        .filter_map(|(b, n)| {
            let any = n.or(b)?;
            let b_values = b.map(values);
            let n_values = n.map(values);
            let base_self = b_values.map_or(0.0, |v| v.self_value);
            let self_change = n_values.map_or(0.0, |v| v.self_value) - base_self;
            let base_inclusive = match b_values {
                Some(v) => v.inclusive,
                None => Some(0.0),
            };
            let new_inclusive = match n_values {
                Some(v) => v.inclusive,
                None => Some(0.0),
            };
            let inclusive_change = match (base_inclusive, new_inclusive) {
                (Some(b), Some(n)) => Some(n - b),
                _ => None,
            };
            Some(DiffRow {
                name: any.name.clone(),
                function: any.function.clone(),
                file: any.file.clone(),
                line: any.line,
                module: any.module.clone(),
                address: any.address,
                path: any.path.clone(),
                base: b_values,
                new: n_values,
                self_change,
                inclusive_change,
                self_relative: relative(self_change, base_self),
                inclusive_relative: inclusive_change
                    .zip(base_inclusive)
                    .and_then(|(c, b)| relative(c, b)),
            })
        })
        .collect();
    let min_change = match options.min_change {
        None => None,
        Some(amount) => {
            let unit = base
                .value_type(resolve_value_type(base, query.value_type.as_deref())?)
                .unit;
            let min = amount.in_unit(unit).ok_or_else(|| QueryError::NotATime {
                value_type: base_table.value_type.clone(),
                unit: base_table.unit.clone(),
            })?;
            Some(min)
        }
    };
    rows.retain(|r| options.lists(r, query.order, min_change));
    let magnitude = |r: &DiffRow| match query.order {
        Order::SelfValue => r.self_change.abs(),
        Order::Inclusive => r.inclusive_change.unwrap_or(r.self_change).abs(),
    };
    // A stable sort keeps ties in first-seen order.
    rows.sort_by(|a, b| magnitude(b).total_cmp(&magnitude(a)));
    if let Some(limit) = query.limit {
        rows.truncate(limit);
    }
    Ok(Diff {
        value_type: base_table.value_type,
        unit: base_table.unit,
        base_total: base_table.total,
        new_total: new_table.total,
        base_left_out: base_table.left_out,
        new_left_out: new_table.left_out,
        rows,
    })
}
