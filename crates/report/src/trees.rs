//! The top-down and bottom-up call trees of the main value type, as hpcviewer shows them: a
//! node per function along each call path (top-down: callees below their caller; bottom-up:
//! each function with its callers below it), with its self and inclusive values, opened along
//! the hot path.
//!
//! Every loop is flat: the trees are built in one sweep of the call tree (parents before
//! children) and written with an explicit stack, whatever the depth. A tree keeps at most
//! [`MAX_NODES`] nodes and [`MAX_BYTES`] of page: nodes narrower than the flame graph's
//! minimum width are pruned first, then the widest nodes are kept, each with its parent.

use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;

use profcodec_profile::{NodeTotals, Profile};

use crate::calls;
use crate::flame::xml;
use crate::names::Names;
use crate::text::Style;

/// The most nodes one tree shows.
pub(crate) const MAX_NODES: usize = 2000;
/// The most bytes one tree's HTML takes, about.
const MAX_BYTES: usize = 1 << 20;
/// The bytes of one node besides its names, at most.
const NODE_BYTES: usize = 400;
/// The most callers a bottom-up path follows from its function.
pub(crate) const MAX_CALLER_DEPTH: usize = 32;
/// The most nodes below the roots a bottom-up tree is built with before it is pruned: paths
/// that would add more are left out below the nodes already built (each function's root is
/// always built), so that memory stays bounded whatever the depth.
const MAX_BUILT: usize = 32 * MAX_NODES;
/// No parent: a root of the tree.
const ROOT: u32 = u32::MAX;

/// One tree: merged nodes by (parent, function name), with what is shown of it.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    parent: Vec<u32>,
    name: Vec<u32>,
    self_value: Vec<f64>,
    inclusive: Vec<f64>,
    children: HashMap<(u32, u32), u32>,
    /// The nodes kept, in the order they were chosen (each after its parent).
    kept: Vec<u32>,
    /// The merged nodes left out by the budget and the minimum width.
    pub(crate) pruned: usize,
    /// Whether nodes are as wide as their self value (bottom-up: where the time is spent),
    /// else as their inclusive value.
    by_self: bool,
}

impl Tree {
    fn node(&mut self, parent: u32, name: u32) -> usize {
        let next = u32::try_from(self.parent.len()).unwrap_or(ROOT - 1);
        let m = *self.children.entry((parent, name)).or_insert(next);
        if m == next && self.parent.len() == next as usize {
            self.parent.push(parent);
            self.name.push(name);
            self.self_value.push(0.0);
            self.inclusive.push(0.0);
        }
        m as usize
    }

    /// Chooses the nodes shown: at least `min_share` of the total, widest first, each after
    /// its parent, within the budgets. `names` gives each name's length for the byte budget.
    fn choose(&mut self, min_share: f64, names: &[String]) {
        let by_self = self.by_self;
        let width = |m: usize| {
            if by_self {
                self.self_value[m]
            } else {
                self.inclusive[m].max(self.self_value[m])
            }
        };
        let total: f64 = (0..self.parent.len())
            .filter(|&m| self.parent[m] == ROOT)
            .map(width)
            .filter(|v| v.is_finite())
            .sum();
        let threshold = total
            * if min_share.is_finite() {
                min_share.max(0.0)
            } else {
                0.0
            };
        // Each node's children, in one array by parent (the roots last), without an
        // allocation per node.
        let n = self.parent.len();
        let slot = |p: u32| if p == ROOT { n } else { p as usize };
        let mut start = vec![0usize; n + 2];
        for &p in &self.parent {
            start[slot(p) + 1] += 1;
        }
        for i in 1..start.len() {
            start[i] += start[i - 1];
        }
        let mut fill = start.clone();
        let mut below = vec![0u32; n];
        for (m, &p) in self.parent.iter().enumerate() {
            below[fill[slot(p)]] = m as u32;
            fill[slot(p)] += 1;
        }
        // Widest first: (width as ordered bits, node); widths are finite and not negative.
        let key = |m: u32| {
            let w = width(m as usize);
            (
                if w.is_finite() && w > 0.0 {
                    w.to_bits()
                } else {
                    0
                },
                m,
            )
        };
        let mut heap: BinaryHeap<(u64, u32)> = BinaryHeap::new();
        let push = |heap: &mut BinaryHeap<(u64, u32)>, of: u32| {
            for &m in &below[start[slot(of)]..start[slot(of) + 1]] {
                let w = width(m as usize);
                if w > 0.0 && w >= threshold {
                    heap.push(key(m));
                }
            }
        };
        push(&mut heap, ROOT);
        let mut bytes = 0;
        while let Some((_, m)) = heap.pop() {
            let name = names
                .get(self.name[m as usize] as usize)
                .map_or(0, String::len);
            bytes += NODE_BYTES + 3 * name;
            if self.kept.len() >= MAX_NODES || bytes > MAX_BYTES {
                break;
            }
            self.kept.push(m);
            push(&mut heap, m);
        }
        self.pruned = self.parent.len() - self.kept.len();
    }
}

/// Both trees of one value type, and the function names they use.
#[derive(Debug, Default)]
pub(crate) struct Trees {
    names: Vec<String>,
    pub(crate) top_down: Tree,
    pub(crate) bottom_up: Tree,
}

/// The trees of `totals` over `profile`, pruned to `min_share` of the total and the budgets.
/// Values and events (and what lies below them) are left out, as the flame graph leaves them.
pub(crate) fn build(profile: &Profile, totals: &NodeTotals, min_share: f64) -> Trees {
    let n = profile.nodes().len();
    let mut trees = Trees::default();
    trees.bottom_up.by_self = true;
    let mut name_ids: HashMap<String, u32> = HashMap::new();
    let mut frame_name: HashMap<profcodec_profile::FrameId, u32> = HashMap::new();
    // Per node: the node of the function it lies in (itself for a function), its caller's
    // function node, its function's name, and its merged top-down node.
    let mut function_of = vec![ROOT; n];
    let mut caller_of = vec![ROOT; n];
    let mut name_of = vec![ROOT; n];
    let mut merged_of = vec![ROOT; n];
    let mut marker = vec![false; n];
    let value = |v: &[f64], i: usize| v.get(i).copied().filter(|x| x.is_finite()).unwrap_or(0.0);
    for (id, node) in profile.nodes() {
        let i = id.index();
        let parent = node.parent.map(|p| p.index());
        let kind = profile.frame(node.frame).kind;
        marker[i] = kind.is_marker() || parent.is_some_and(|p| marker[p]);
        if marker[i] {
            continue;
        }
        let self_value = value(&totals.self_values, i);
        let parent_function = parent.map_or(ROOT, |p| function_of[p]);
        if kind.is_function_like() || parent_function == ROOT {
            let name = *frame_name.entry(node.frame).or_insert_with(|| {
                let text = calls::name(profile, node.frame).into_owned();
                let next = trees.names.len() as u32;
                *name_ids.entry(text).or_insert_with_key(|text| {
                    trees.names.push(text.clone());
                    next
                })
            });
            function_of[i] = i as u32;
            caller_of[i] = parent_function;
            name_of[i] = name;
            let parent_merged = if parent_function == ROOT {
                ROOT
            } else {
                merged_of[parent_function as usize]
            };
            let m = trees.top_down.node(parent_merged, name);
            merged_of[i] = m as u32;
            trees.top_down.inclusive[m] += value(&totals.inclusive, i);
            trees.top_down.self_value[m] += self_value;
        } else {
            let f = parent_function as usize;
            function_of[i] = parent_function;
            merged_of[i] = merged_of[f];
            trees.top_down.self_value[merged_of[f] as usize] += self_value;
        }
        // Bottom-up: the function with its callers below it, as far as MAX_CALLER_DEPTH.
        let inclusive = if function_of[i] == i as u32 {
            value(&totals.inclusive, i)
        } else {
            0.0
        };
        if self_value == 0.0 && inclusive == 0.0 {
            continue;
        }
        let mut f = function_of[i];
        let mut parent = ROOT;
        for _ in 0..MAX_CALLER_DEPTH {
            let name = name_of.get(f as usize).copied().unwrap_or(ROOT);
            if f == ROOT
                || (parent != ROOT
                    && trees.bottom_up.parent.len() >= MAX_BUILT
                    && !trees.bottom_up.children.contains_key(&(parent, name)))
            {
                break;
            }
            let m = trees.bottom_up.node(parent, name);
            trees.bottom_up.self_value[m] += self_value;
            trees.bottom_up.inclusive[m] += inclusive;
            parent = m as u32;
            f = caller_of[f as usize];
        }
    }
    trees.top_down.choose(min_share, &trees.names);
    trees.bottom_up.choose(min_share, &trees.names);
    trees
}

impl Trees {
    /// Adds the names of the nodes shown to `names`, whose shown names the trees use.
    pub(crate) fn add_names(&self, names: &mut Names) {
        for tree in [&self.top_down, &self.bottom_up] {
            for &m in &tree.kept {
                names.add_name(&self.names[tree.name[m as usize] as usize]);
            }
        }
    }

    /// The HTML of `tree`: nested `<details>` elements, each a node with its full name in
    /// `data-name`, its values in `data-col="self"` and `data-col="inclusive"` elements, opened
    /// along the hot path (the widest root, then each open node's widest child).
    pub(crate) fn html(&self, tree: &Tree, view: &str, names: &Names, style: Style) -> String {
        let mut kids: HashMap<u32, Vec<u32>> = HashMap::new();
        for &m in &tree.kept {
            kids.entry(tree.parent[m as usize]).or_default().push(m);
        }
        let width = |m: u32| {
            let m = m as usize;
            if tree.by_self {
                tree.self_value[m]
            } else {
                tree.inclusive[m].max(tree.self_value[m])
            }
        };
        for list in kids.values_mut() {
            list.sort_by(|&a, &b| width(b).total_cmp(&width(a)).then(a.cmp(&b)));
        }
        enum Step {
            Open(u32, bool),
            Close,
        }
        let mut out = format!(r#"<div class="tree" data-view="{view}">"#);
        let mut stack: Vec<Step> = Vec::new();
        let push_children = |stack: &mut Vec<Step>, of: u32, hot: bool| {
            if let Some(list) = kids.get(&of) {
                for (i, &m) in list.iter().enumerate().rev() {
                    stack.push(Step::Open(m, hot && i == 0));
                }
            }
        };
        push_children(&mut stack, ROOT, true);
        while let Some(step) = stack.pop() {
            match step {
                Step::Close => out.push_str("</details>"),
                Step::Open(m, hot) => {
                    let i = m as usize;
                    let full = &self.names[tree.name[i] as usize];
                    let shown = names.shown(full, None, None);
                    let cell = |col: &str, v: f64| {
                        format!(
                            r#"<span class="num" data-col="{col}" data-value="{}">{}</span>"#,
                            crate::text::raw(v),
                            style.show(v)
                        )
                    };
                    let leaf = !kids.contains_key(&m);
                    let _ = write!(
                        out,
                        r#"<details class="node{}" data-name="{}"{}><summary>{} {} <span class="name" title="{}">{}</span></summary>"#,
                        if leaf { " leaf" } else { "" },
                        xml(full),
                        if hot && !leaf { " open" } else { "" },
                        cell("inclusive", tree.inclusive[i]),
                        cell("self", tree.self_value[i]),
                        xml(full),
                        xml(&shown),
                    );
                    stack.push(Step::Close);
                    push_children(&mut stack, m, hot);
                }
            }
        }
        out.push_str("</div>");
        out
    }
}
