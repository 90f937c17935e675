//! What an exporter writes of a profile: its metric (value type) and its contexts.

use profcodec_profile::{Profile, ValueTypeId};

use crate::{ExportError, ExportOptions};

/// The value type `options` names ([`ExportOptions::metric`]), else the profile's default one;
/// `None` for a profile without value types.
pub(crate) fn metric(
    profile: &Profile,
    options: &ExportOptions,
) -> Result<Option<ValueTypeId>, ExportError> {
    // An unnamed metric on a profile without values is no error here: the exporter writes
    // an empty profile.
    match options.metric {
        None => Ok(profile.default_value_type()),
        Some(_) => crate::values::value_type(profile, options).map(Some),
    }
}

/// The nodes of EasyProfiler's values and events ([`profcodec_profile::FrameKind::is_marker`])
/// and the nodes below them, by node index: counters and instants, not code that ran, which a
/// call-tree export leaves out as `top` leaves them out of its rows (the timelines show them).
/// `None` when the profile has none.
pub(crate) fn marker_subtrees(profile: &Profile) -> Option<Vec<bool>> {
    if !profile.frames().any(|(_, f)| f.kind.is_marker()) {
        return None;
    }
    // Parents have smaller ids than their children: one sweep marks every subtree.
    let mut left = vec![false; profile.nodes().len()];
    for (id, node) in profile.nodes() {
        left[id.index()] = profile.frame(node.frame).kind.is_marker()
            || node.parent.is_some_and(|p| left[p.index()]);
    }
    Some(left)
}

/// Which contexts are written, by context index: every context that is not a summary, unless
/// only summaries have node values (HPCToolkit's summary profile alone), then the summaries.
/// Writing the detailed contexts keeps the thread and rank of each value; the summaries hold
/// their sums.
pub(crate) fn exported_contexts(profile: &Profile) -> Vec<bool> {
    let mut has_values = vec![false; profile.contexts().len()];
    for column in profile.node_value_columns() {
        has_values[column.context().index()] |= !column.is_empty();
    }
    let with_values = |summary: bool| {
        profile
            .contexts()
            .any(|(id, c)| c.summary == summary && has_values[id.index()])
    };
    let detailed = with_values(false) || !with_values(true);
    profile
        .contexts()
        .map(|(_, c)| c.summary != detailed)
        .collect()
}

/// Each node's rank in a depth-first walk of the call tree (children in id order).
#[cfg(feature = "firefox")]
pub(crate) fn depth_first_order(profile: &Profile) -> Vec<u32> {
    let n = profile.nodes().len();
    let mut first_child = vec![0u32; n + 1];
    for (_, node) in profile.nodes() {
        if let Some(p) = node.parent {
            first_child[p.index() + 1] += 1;
        }
    }
    for i in 0..n {
        first_child[i + 1] += first_child[i];
    }
    let mut fill = first_child.clone();
    let mut children = vec![0u32; n];
    for (id, node) in profile.nodes() {
        if let Some(p) = node.parent {
            children[fill[p.index()] as usize] = id.index() as u32;
            fill[p.index()] += 1;
        }
    }
    let mut rank = vec![0u32; n];
    let mut next = 0u32;
    let mut stack: Vec<u32> = Vec::new();
    for (root, _) in profile.nodes().filter(|(_, node)| node.parent.is_none()) {
        stack.push(root.index() as u32);
        while let Some(i) = stack.pop() {
            let i = i as usize;
            rank[i] = next;
            next += 1;
            stack.extend(
                children[first_child[i] as usize..first_child[i + 1] as usize]
                    .iter()
                    .rev(),
            );
        }
    }
    rank
}
