//! Walking the calling context tree: children, the path to the root, inclusive sums.

use std::collections::HashMap;

use crate::model::{CctNode, Measurement, MetricValue};

/// An index over a CCT's nodes (by position in [`crate::Epoch::cct`]).
///
/// Built in one pass; a node whose parent id names no node counts as a root. Walks are iterative
/// and bounded by the node count, so a cyclic (hostile) parent chain cannot loop forever.
#[derive(Debug, Clone)]
pub struct CctIndex {
    by_id: HashMap<i32, usize>,
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
}

impl CctIndex {
    /// Indexes `nodes`.
    pub fn new(nodes: &[CctNode]) -> Self {
        let by_id: HashMap<i32, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        let mut children = vec![Vec::new(); nodes.len()];
        let parent: Vec<Option<usize>> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let p = by_id.get(&n.parent).copied().filter(|&p| p != i);
                if let Some(p) = p {
                    children[p].push(i);
                }
                p
            })
            .collect();
        CctIndex {
            by_id,
            parent,
            children,
        }
    }

    /// The position of the node with id `id`.
    pub fn position(&self, id: i32) -> Option<usize> {
        self.by_id.get(&id).copied()
    }

    /// The positions of node `i`'s children.
    pub fn children(&self, i: usize) -> &[usize] {
        self.children.get(i).map_or(&[], Vec::as_slice)
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
            out.push(n);
            stack.extend(self.children[n].iter().rev());
        }
        out
    }

    /// The sum of `value(node)` over the subtree under `i`.
    pub fn inclusive_sum(&self, i: usize, mut value: impl FnMut(usize) -> f64) -> f64 {
        self.subtree(i).into_iter().map(&mut value).sum()
    }
}

impl Measurement {
    /// The inclusive value of `metric` at the node with id `ctx` of epoch `epoch`: the sum of the
    /// metric's values over the node's subtree (dense or sparse values alike).
    pub fn inclusive_sum(&self, epoch: usize, ctx: i32, metric: u16) -> f64 {
        let Some(e) = self.epochs.get(epoch) else {
            return 0.0;
        };
        let index = CctIndex::new(&e.cct);
        let Some(root) = index.position(ctx) else {
            return 0.0;
        };
        let per_node: Vec<f64> = match &self.sparse {
            Some(sparse) => {
                let mut v = vec![0.0; e.cct.len()];
                let format = e
                    .metrics
                    .get(metric as usize)
                    .map_or(crate::ValueFormat::Unknown, crate::MetricDesc::value_format);
                for (ci, c) in sparse.contexts.iter().enumerate() {
                    if let Some(p) = index.position(c.ctx as i32) {
                        v[p] += sparse
                            .values_of(ci)
                            .iter()
                            .filter(|x| x.metric == metric)
                            .map(|x| MetricValue::from_bits(x.value, format).as_f64())
                            .sum::<f64>();
                    }
                }
                v
            }
            None => (0..e.cct.len())
                .map(|n| e.value(n, metric as usize).map_or(0.0, MetricValue::as_f64))
                .collect(),
        };
        index.inclusive_sum(root, |n| per_node[n])
    }
}
