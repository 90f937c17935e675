//! Callers and callees of each function: from the measured call edges where the profile has
//! them (a profiler's table of calls by call site), else from the call tree.

use std::borrow::Cow;
use std::collections::HashMap;

use profcodec_profile::{ContextFilter, FrameId, NodeTotals, Profile, ValueTypeId};

/// Per (caller, callee) function names, the values on the edge, one per column.
#[derive(Debug, Default)]
pub(crate) struct Edges {
    /// The columns: value type ids.
    pub(crate) columns: Vec<ValueTypeId>,
    /// (caller, callee) -> values.
    pub(crate) values: HashMap<(String, String), Vec<f64>>,
    /// Where the values come from, in words.
    pub(crate) source: &'static str,
}

/// The name of a frame's function as `top` names its row (a line frame by its label).
pub(crate) fn name(profile: &Profile, frame: FrameId) -> Cow<'_, str> {
    if profile.frame(frame).kind.is_function_like() {
        profile.function_name(frame)
    } else {
        Cow::Owned(profile.frame_label(frame))
    }
}

/// The edges measured by the format (call edges with values), summed over the whole program.
pub(crate) fn measured(profile: &Profile) -> Option<Edges> {
    if profile.edge_values().is_empty() {
        return None;
    }
    let selected = profile.selected_contexts(&ContextFilter::Whole).ok()?;
    let mut columns: Vec<ValueTypeId> = Vec::new();
    for ev in profile.edge_values() {
        if !columns.contains(&ev.value_type) {
            columns.push(ev.value_type);
        }
    }
    // The calls first, then the others in the profile's order.
    columns.sort_by_key(|&vt| (Some(vt) != profile.calls_value_type(), vt.index()));
    let mut edges = Edges {
        columns,
        values: HashMap::new(),
        source: "the call edges the profiler measured",
    };
    let mut names: HashMap<FrameId, String> = HashMap::new();
    for ev in profile.edge_values() {
        if !selected[ev.context.index()] {
            continue;
        }
        let edge = profile.call_edge(ev.edge);
        if profile.frame(edge.caller).kind.is_marker()
            || profile.frame(edge.callee).kind.is_marker()
        {
            continue;
        }
        let mut named = |f: FrameId| {
            names
                .entry(f)
                .or_insert_with(|| name(profile, f).into_owned())
                .clone()
        };
        let key = (named(edge.caller), named(edge.callee));
        let column = edges.columns.iter().position(|&c| c == ev.value_type);
        let width = edges.columns.len();
        if let Some(column) = column {
            edges.values.entry(key).or_insert_with(|| vec![0.0; width])[column] += ev.value;
        }
    }
    Some(edges)
}

/// The edges of the call tree: each node of a function below a node of another (or the same)
/// function is a call, worth the node's inclusive value (and its calls where counted).
pub(crate) fn from_tree(
    profile: &Profile,
    value_type: ValueTypeId,
    totals: &NodeTotals,
    calls: Option<&NodeTotals>,
) -> Edges {
    let mut columns = vec![value_type];
    if let (Some(c), Some(_)) = (profile.calls_value_type(), calls) {
        columns.insert(0, c);
    }
    let width = columns.len();
    let mut edges = Edges {
        columns,
        values: HashMap::new(),
        source: "the call tree (a recursive call is counted at every depth)",
    };
    // The function-like node each node belongs to.
    let n = profile.nodes().len();
    let mut function_node: Vec<u32> = vec![u32::MAX; n];
    // Names are interned by their text, not by frame: two frames can name one function (a
    // sub seen at several lines, one function in two files' frames), and their edges must add
    // up into one row rather than replace each other in whatever order a hash map yields.
    let mut frame_ids: HashMap<FrameId, u32> = HashMap::new();
    let mut name_ids: HashMap<String, u32> = HashMap::new();
    let mut names: Vec<String> = Vec::new();
    let mut frame_name: Vec<u32> = vec![u32::MAX; n];
    let mut sums: HashMap<(u32, u32), Vec<f64>> = HashMap::new();
    // Values and events, and what lies below them, are not calls (as `top` leaves them out).
    let mut marker: Vec<bool> = vec![false; n];
    for (id, node) in profile.nodes() {
        let i = id.index();
        marker[i] = profile.frame(node.frame).kind.is_marker()
            || node.parent.is_some_and(|p| marker[p.index()]);
        if marker[i] {
            continue;
        }
        let function_like = profile.frame(node.frame).kind.is_function_like();
        let parent_function = node.parent.map(|p| function_node[p.index()]);
        if function_like || parent_function.is_none_or(|p| p == u32::MAX) {
            function_node[i] = i as u32;
            let name_id = *frame_ids.entry(node.frame).or_insert_with(|| {
                let text = name(profile, node.frame).into_owned();
                let next = names.len() as u32;
                *name_ids.entry(text).or_insert_with_key(|text| {
                    names.push(text.clone());
                    next
                })
            });
            frame_name[i] = name_id;
            if let Some(p) = parent_function.filter(|&p| p != u32::MAX) {
                let caller = frame_name[p as usize];
                let values = sums
                    .entry((caller, name_id))
                    .or_insert_with(|| vec![0.0; width]);
                values[width - 1] += totals.inclusive[i];
                if width == 2
                    && let Some(calls) = calls
                {
                    values[0] += calls.self_values[i];
                }
            }
        } else if let Some(p) = parent_function {
            function_node[i] = p;
        }
    }
    for ((caller, callee), values) in sums {
        let key = (
            names[caller as usize].clone(),
            names[callee as usize].clone(),
        );
        edges.values.insert(key, values);
    }
    edges
}

/// The callers and the callees of each function: (function) -> [(other, values)].
pub(crate) struct Index<'a> {
    pub(crate) callers: HashMap<&'a str, Vec<(&'a str, &'a [f64])>>,
    pub(crate) callees: HashMap<&'a str, Vec<(&'a str, &'a [f64])>>,
}

impl Edges {
    pub(crate) fn index(&self) -> Index<'_> {
        let mut index = Index {
            callers: HashMap::new(),
            callees: HashMap::new(),
        };
        for ((caller, callee), values) in &self.values {
            index
                .callers
                .entry(callee.as_str())
                .or_default()
                .push((caller.as_str(), values.as_slice()));
            index
                .callees
                .entry(caller.as_str())
                .or_default()
                .push((callee.as_str(), values.as_slice()));
        }
        let last = self.columns.len().saturating_sub(1);
        for list in index.callers.values_mut().chain(index.callees.values_mut()) {
            list.sort_by(|a, b| b.1[last].total_cmp(&a.1[last]).then(a.0.cmp(b.0)));
        }
        index
    }
}

#[cfg(test)]
mod tests {
    use profcodec_profile::{
        Context, ContextFilter, Frame, IdKind, Measured, ProfileBuilder, Unit,
    };

    use super::*;

    /// Two frames of one function (a sub seen at two lines) are one callee: their edges add
    /// up, the same on every run, whatever order a hash map yields them in.
    #[test]
    fn frames_of_one_function_add_up_into_one_edge() {
        let mut b = ProfileBuilder::new();
        let ctx = b
            .intern_context(Context::new([(IdKind::Thread, 1)]))
            .unwrap();
        let time = b
            .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
            .unwrap();
        let main = b.intern_string("main").unwrap();
        let mid = b.intern_string("mid").unwrap();
        let main = b.intern_frame(Frame::function(main)).unwrap();
        let mut mid_at = |line| {
            let mut frame = Frame::function(mid);
            frame.line = Some(line);
            b.intern_frame(frame).unwrap()
        };
        let (mid_a, mid_b) = (mid_at(10), mid_at(20));
        b.add_sample(ctx, [main, mid_a], time, 3.0).unwrap();
        b.add_sample(ctx, [main, mid_b], time, 5.0).unwrap();
        let profile = b.build();
        let totals = profile.node_totals(time, &ContextFilter::Whole).unwrap();
        for _ in 0..20 {
            let edges = from_tree(&profile, time, &totals, None);
            let key = ("main".to_owned(), "mid".to_owned());
            assert_eq!(edges.values[&key], [8.0]);
            assert_eq!(edges.values.len(), 1);
        }
    }
}
