//! Walking the calling context tree: children, the path to the root, inclusive sums.

use std::collections::HashMap;

use crate::model::{CctNode, Measurement, MetricValue};

/// Node id -> position: a table when the ids are dense (hpcrun numbers nodes from 1 up; a
/// table costs at most 4 slots a node), a hash map otherwise. The last node of an id wins.
#[derive(Debug, Clone)]
pub(crate) enum Positions {
    Dense { min: i64, slots: Vec<u32> },
    Map(HashMap<i32, usize>),
}

impl Positions {
    const NONE: u32 = u32::MAX;

    pub(crate) fn new(nodes: &[CctNode]) -> Self {
        if nodes.is_empty() {
            // No node: the fold below would leave min above max.
            return Positions::Map(HashMap::new());
        }
        let (min, max) = nodes.iter().fold((i64::MAX, i64::MIN), |(lo, hi), n| {
            (lo.min(i64::from(n.id)), hi.max(i64::from(n.id)))
        });
        let range = (max - min + 1) as u64;
        if nodes.len() < Self::NONE as usize && range <= 4 * nodes.len() as u64 + 64 {
            let mut slots = vec![Self::NONE; range as usize];
            for (i, n) in nodes.iter().enumerate() {
                slots[(i64::from(n.id) - min) as usize] = i as u32;
            }
            Positions::Dense { min, slots }
        } else {
            Positions::Map(nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect())
        }
    }

    pub(crate) fn get(&self, id: i32) -> Option<usize> {
        match self {
            Positions::Dense { min, slots } => {
                let i = usize::try_from(i64::from(id) - min).ok()?;
                slots
                    .get(i)
                    .filter(|&&p| p != Self::NONE)
                    .map(|&p| p as usize)
            }
            Positions::Map(map) => map.get(&id).copied(),
        }
    }
}

/// An index over a CCT's nodes (by position in [`crate::Epoch::cct`]).
///
/// Built in one pass; a node whose parent id names no node counts as a root. Walks are iterative
/// and bounded by the node count, so a cyclic (hostile) parent chain cannot loop forever.
#[derive(Debug, Clone)]
pub struct CctIndex {
    by_id: Positions,
    parent: Vec<Option<usize>>,
    /// Children of node `i`: `child_list[child_start[i]..child_start[i + 1]]`, in file order.
    child_start: Vec<usize>,
    child_list: Vec<usize>,
}

impl CctIndex {
    /// Indexes `nodes` in O(nodes).
    pub fn new(nodes: &[CctNode]) -> Self {
        let by_id = Positions::new(nodes);
        let parent: Vec<Option<usize>> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| by_id.get(n.parent).filter(|&p| p != i))
            .collect();
        // Children as one array grouped by parent: count, prefix sums, fill.
        let mut child_start = vec![0usize; nodes.len() + 1];
        for &p in parent.iter().flatten() {
            child_start[p + 1] += 1;
        }
        for i in 0..nodes.len() {
            child_start[i + 1] += child_start[i];
        }
        let mut next = child_start.clone();
        let mut child_list = vec![0usize; child_start[nodes.len()]];
        for (i, p) in parent.iter().enumerate() {
            if let Some(p) = *p {
                child_list[next[p]] = i;
                next[p] += 1;
            }
        }
        CctIndex {
            by_id,
            parent,
            child_start,
            child_list,
        }
    }

    /// The position of the node with id `id`.
    pub fn position(&self, id: i32) -> Option<usize> {
        self.by_id.get(id)
    }

    /// The positions of node `i`'s children, in file order.
    pub fn children(&self, i: usize) -> &[usize] {
        match (self.child_start.get(i), self.child_start.get(i + 1)) {
            (Some(&s), Some(&e)) => &self.child_list[s..e],
            _ => &[],
        }
    }

    /// The parent of node `i`.
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parent.get(i).copied().flatten()
    }

    /// The positions of root nodes (no parent among the nodes).
    pub fn roots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.parent.len()).filter(|&i| self.parent[i].is_none())
    }

    /// Node `i`, its parent, ..., up to a root.
    pub fn path_to_root(&self, i: usize) -> Vec<usize> {
        let mut path = Vec::new();
        let mut cur = Some(i).filter(|&i| i < self.parent.len());
        while let Some(n) = cur {
            if path.len() > self.parent.len() {
                break; // a cycle
            }
            crate::work::add(1);
            path.push(n);
            cur = self.parent[n];
        }
        path
    }

    /// Every node of the subtree under `i` (including `i`), depth first.
    pub fn subtree(&self, i: usize) -> Vec<usize> {
        let mut seen = vec![false; self.parent.len()];
        let mut out = Vec::new();
        let mut stack = vec![i];
        while let Some(n) = stack.pop() {
            if n >= seen.len() || seen[n] {
                continue;
            }
            seen[n] = true;
            crate::work::add(1);
            out.push(n);
            stack.extend(self.children(n).iter().rev());
        }
        out
    }

    /// Every node reachable from a root, each parent before its children (depth first, children
    /// in file order). A node on a parent cycle is reachable from no root and is left out.
    pub fn preorder(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.parent.len());
        let mut stack: Vec<usize> = self.roots().collect();
        stack.reverse();
        while let Some(n) = stack.pop() {
            crate::work::add(1);
            out.push(n);
            stack.extend(self.children(n).iter().rev());
        }
        out
    }

    /// The sum of `value(node)` over the subtree under `i`.
    ///
    /// One subtree walk per call: to rank many nodes, take [`CctIndex::inclusive_sums`] once.
    pub fn inclusive_sum(&self, i: usize, mut value: impl FnMut(usize) -> f64) -> f64 {
        self.subtree(i).into_iter().map(&mut value).sum()
    }

    /// The inclusive value of every node at once, from each node's own (exclusive) value
    /// `self_values[position]`: one walk of the tree, O(nodes). A node on a parent cycle keeps its
    /// own value (it has no subtree a root reaches).
    pub fn inclusive_sums(&self, self_values: &[f64]) -> Vec<f64> {
        let mut sums: Vec<f64> = (0..self.parent.len())
            .map(|i| self_values.get(i).copied().unwrap_or(0.0))
            .collect();
        // Children come after their parent in preorder, so walking it backwards adds every
        // subtree's total to its parent after that subtree is complete.
        for &n in self.preorder().iter().rev() {
            crate::work::add(1);
            if let Some(p) = self.parent[n] {
                sums[p] += sums[n];
            }
        }
        sums
    }
}

impl Measurement {
    /// The own (exclusive) value of `metric` at every CCT node of epoch `epoch`, by node position
    /// in [`crate::Epoch::cct`]: dense or sparse values alike, in one pass over the values.
    pub fn self_values(&self, epoch: usize, metric: u16) -> Vec<f64> {
        let values = crate::NodeValues::new(self, epoch);
        (0..values.len())
            .map(|n| values.get(n, metric).map_or(0.0, MetricValue::as_f64))
            .collect()
    }

    /// The inclusive value of `metric` at every CCT node of epoch `epoch` (by node position): the
    /// sum of the metric over each node's subtree, computed once for all nodes in O(nodes +
    /// values).
    pub fn inclusive_sums(&self, epoch: usize, metric: u16) -> Vec<f64> {
        let Some(e) = self.epochs.get(epoch) else {
            return Vec::new();
        };
        CctIndex::new(&e.cct).inclusive_sums(&self.self_values(epoch, metric))
    }

    /// The inclusive value of `metric` at the node with id `ctx` of epoch `epoch`: the sum of the
    /// metric's values over the node's subtree (dense or sparse values alike).
    ///
    /// Each call indexes the whole epoch (O(nodes + values)); for more than one node take
    /// [`Measurement::inclusive_sums`] once.
    pub fn inclusive_sum(&self, epoch: usize, ctx: i32, metric: u16) -> f64 {
        let Some(e) = self.epochs.get(epoch) else {
            return 0.0;
        };
        let index = CctIndex::new(&e.cct);
        let Some(root) = index.position(ctx) else {
            return 0.0;
        };
        let per_node = self.self_values(epoch, metric);
        index.inclusive_sum(root, |n| per_node[n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CCT with no node (fuzz regression `empty-cct-with-context`): no position, no panic.
    #[test]
    fn no_nodes_no_positions() {
        let positions = Positions::new(&[]);
        assert_eq!(positions.get(0), None);
        assert_eq!(positions.get(i32::MIN), None);
    }
}
