//! The flame graphs: folded stacks made from the call tree, pruned before drawing, and drawn
//! by inferno.

use std::collections::HashMap;

use profcodec_profile::{ContextFilter, NodeTotals, Profile, ValueTypeId};

/// Folded stacks of one value type, with integer counts of `quantum` units each.
#[derive(Debug, Default)]
pub(crate) struct Folded {
    /// (stack, count) with `;` between frames, root first.
    pub(crate) stacks: Vec<(String, u64)>,
    /// The frames (nodes) drawn and the nodes pruned.
    pub(crate) kept: usize,
    pub(crate) pruned: usize,
}

/// The value one integer count stands for: a power of ten that keeps `total` under 10^12
/// counts, 1 for whole values that fit.
pub(crate) fn quantum(total: f64, whole: bool) -> f64 {
    if total <= 0.0 || !total.is_finite() {
        return 1.0;
    }
    if whole && total < 1e12 {
        return 1.0;
    }
    10f64.powi(total.log10().ceil() as i32 - 12)
}

/// A frame's name in a folded stack: its label, with `;` (the separator) as `:` and line
/// breaks as spaces.
fn folded_label(profile: &Profile, frame: profcodec_profile::FrameId) -> String {
    profile
        .frame_label(frame)
        .replace(';', ":")
        .replace(['\n', '\r'], " ")
}

/// The folded stacks of `value_type` over the whole program, without the subtrees narrower
/// than `min_share` of the total: a pruned subtree's value stays in its parent's own count, so
/// the parent keeps its width (the blank beside its children is what was pruned).
pub(crate) fn folded(
    profile: &Profile,
    totals: &NodeTotals,
    min_share: f64,
    quantum_of: Option<f64>,
) -> (Folded, f64) {
    let n = profile.nodes().len();
    let total: f64 = profile
        .nodes()
        .filter(|(_, node)| node.parent.is_none())
        .map(|(id, _)| totals.inclusive[id.index()].max(0.0))
        .sum();
    let whole = totals
        .self_values
        .iter()
        .chain(&totals.inclusive)
        .all(|v| v.fract() == 0.0);
    let q = quantum_of.unwrap_or_else(|| quantum(total, whole));
    let threshold = total * min_share;
    let mut kept = vec![false; n];
    let mut own = vec![0.0f64; n];
    let mut paths: Vec<Option<String>> = vec![None; n];
    let mut out = Folded::default();
    for (id, node) in profile.nodes() {
        let i = id.index();
        let inclusive = totals.inclusive[i];
        let parent_kept = node.parent.is_none_or(|p| kept[p.index()]);
        if !parent_kept {
            continue;
        }
        if inclusive < threshold || inclusive <= 0.0 {
            if let Some(p) = node.parent {
                own[p.index()] += inclusive.max(0.0);
            }
            out.pruned += 1;
            continue;
        }
        kept[i] = true;
        out.kept += 1;
        own[i] += totals.self_values[i].max(0.0);
        let label = folded_label(profile, node.frame);
        paths[i] = Some(
            match node.parent.and_then(|p| paths[p.index()].as_deref()) {
                Some(parent) => format!("{parent};{label}"),
                None => label,
            },
        );
    }
    for i in 0..n {
        if !kept[i] {
            continue;
        }
        let count = (own[i] / q).round();
        if count >= 1.0
            && let Some(path) = paths[i].take()
        {
            out.stacks.push((path, count as u64));
        }
    }
    (out, q)
}

/// The node totals of `value_type` over the whole program.
pub(crate) fn totals(profile: &Profile, value_type: ValueTypeId) -> Option<NodeTotals> {
    profile
        .node_totals(value_type, &ContextFilter::Whole)
        .ok()
        .filter(|t| t.measured.iter().any(|&m| m))
}

/// The inferno options shared by both graphs.
fn options(
    title: &str,
    count_name: &str,
    factor: f64,
    min_width: f64,
) -> inferno::flamegraph::Options<'static> {
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = title.to_owned();
    opt.count_name = count_name.to_owned();
    opt.factor = factor;
    opt.min_width = min_width;
    opt.deterministic = true;
    opt.hash = true;
    opt
}

/// Draws `folded` as an interactive SVG (zoom on click, search with Ctrl-F).
pub(crate) fn svg(
    folded: &Folded,
    title: &str,
    count_name: &str,
    factor: f64,
    min_width: f64,
) -> std::io::Result<Vec<u8>> {
    let lines: Vec<String> = folded
        .stacks
        .iter()
        .map(|(stack, count)| format!("{stack} {count}"))
        .collect();
    let mut opt = options(title, count_name, factor, min_width);
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)?;
    Ok(out)
}

/// Draws the differential flame graph of `base` and `new` (inferno's diff-folded input: each
/// stack with both counts): the shape of `new`, red where a frame grew, blue where it shrank.
pub(crate) fn diff_svg(
    base: &Folded,
    new: &Folded,
    title: &str,
    count_name: &str,
    factor: f64,
    min_width: f64,
) -> std::io::Result<Vec<u8>> {
    let mut both: HashMap<&str, (u64, u64)> = HashMap::new();
    for (stack, count) in &base.stacks {
        both.entry(stack).or_default().0 += count;
    }
    for (stack, count) in &new.stacks {
        both.entry(stack).or_default().1 += count;
    }
    let mut lines: Vec<String> = both
        .into_iter()
        .map(|(stack, (b, n))| format!("{stack} {b} {n}"))
        .collect();
    lines.sort_unstable();
    let mut opt = options(title, count_name, factor, min_width);
    let mut out = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut out)?;
    Ok(out)
}
