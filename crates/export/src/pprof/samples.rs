//! The samples of the pprof export, gathered from the profile's node value columns: one per
//! (context, call-tree node) with a value, holding the node's value of every value type.
//!
//! The model stores a context's values column by column (one column per value type), and the
//! formats' converters mostly give a column its nodes in increasing order, so a merge of a
//! context's columns by node gives each node its values together, without sorting or looking
//! anything up. A column not in node order (HPCToolkit's, whose profile.db lists its contexts
//! in an order of its own: a few increasing runs) is copied and sorted first; a value type
//! measured inclusive only is turned into self values first (see `Samples::source`).

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;

use profcodec_profile::{ContextId, NodeId, NodeValueColumn, Profile};

/// Contexts of at most this many columns are merged by comparing every column's next node,
/// which is the fastest for the few value types of most profiles; contexts of more columns
/// through a heap, so that no profile costs more than a logarithm of its value types per value.
const SCANNED_COLUMNS: usize = 16;

/// The node value columns of the exported contexts, grouped by context.
pub(super) struct Samples<'p> {
    profile: &'p Profile,
    /// The columns of each exported context with values, in context order.
    contexts: Vec<Vec<&'p NodeValueColumn>>,
    /// Whether each value type is measured self (else inclusive only).
    has_self: Vec<bool>,
    len: usize,
    /// The nodes of values and events and below them, never written
    /// ([`crate::select::marker_subtrees`]).
    left_out: Option<Vec<bool>>,
}

/// One column as the merge reads it: its nodes in increasing order, each with its part of the
/// node's value of the column's value type.
struct Source<'p> {
    value_type: usize,
    nodes: Cow<'p, [NodeId]>,
    values: Cow<'p, [f64]>,
}

/// A [`Source`]'s slices, as the merge reads them (no check of ownership per value).
#[derive(Clone, Copy)]
struct View<'s> {
    value_type: usize,
    nodes: &'s [NodeId],
    values: &'s [f64],
}

impl<'p> Samples<'p> {
    pub(super) fn new(profile: &'p Profile) -> Samples<'p> {
        let exported = crate::select::exported_contexts(profile);
        let mut by_context: Vec<Vec<&NodeValueColumn>> = vec![Vec::new(); profile.contexts().len()];
        let mut len = 0;
        for column in profile.node_value_columns() {
            if exported[column.context().index()] && !column.is_empty() {
                len += column.len();
                by_context[column.context().index()].push(column);
            }
        }
        by_context.retain(|columns| !columns.is_empty());
        Samples {
            profile,
            contexts: by_context,
            left_out: crate::select::marker_subtrees(profile),
            has_self: profile
                .value_types()
                .map(|(_, vt)| vt.measured.has_self())
                .collect(),
            len,
        }
    }

    /// The number of node values written: about the number of samples.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Each exported column's context and nodes, and whether its value type is measured
    /// inclusive only (each of its nodes then also gives its parent a part of a sample): what
    /// bounds the samples from above without merging the columns.
    pub(super) fn columns(&self) -> impl Iterator<Item = (ContextId, &'p [NodeId], bool)> + '_ {
        self.contexts.iter().flatten().map(|column| {
            (
                column.context(),
                column.nodes(),
                !self.has_self[column.value_type().index()],
            )
        })
    }

    /// Calls `f` with each sample's context, node and values (the sum of its parts, one per
    /// value type, in the profile's order of value types): context by context, and in each
    /// context by node id (parents before their children, as the formats number their trees,
    /// so consecutive samples share most of their call paths).
    pub(super) fn for_each<E>(
        &self,
        mut f: impl FnMut(ContextId, NodeId, &[f64]) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut values = vec![0.0; self.has_self.len()];
        let mut sources: Vec<Source<'p>> = Vec::new();
        for columns in &self.contexts {
            let context = columns[0].context();
            sources.clear();
            sources.extend(columns.iter().filter_map(|column| self.source(column)));
            let views: Vec<View<'_>> = sources
                .iter()
                .map(|s| View {
                    value_type: s.value_type,
                    nodes: &s.nodes,
                    values: &s.values,
                })
                .collect();
            let left_out = self.left_out.as_deref();
            let mut sample = |node: NodeId, values: &[f64]| {
                if left_out.is_some_and(|left| left[node.index()]) {
                    return Ok(());
                }
                f(context, node, values)
            };
            if views.len() <= SCANNED_COLUMNS {
                merge_scanning(&views, &mut values, &mut sample)?;
            } else {
                merge_by_heap(&views, &mut values, &mut sample)?;
            }
        }
        Ok(())
    }

    /// `column` as a source of the merge, `None` when it gives nothing (a value type measured
    /// inclusive only, without inclusive values).
    ///
    /// A value type measured self gives each node its self value. One measured inclusive only
    /// gives each node its inclusive value, and its parent the opposite (self is the inclusive
    /// value minus the children's), each node's parts summed in the column's order. Only the
    /// columns not in node order, and those of inclusive-only value types, are copied: sorted
    /// by node, which costs little for a column made of a few increasing runs.
    fn source(&self, column: &'p NodeValueColumn) -> Option<Source<'p>> {
        let value_type = column.value_type().index();
        let nodes = column.nodes();
        if self.has_self[value_type] {
            let values = column.self_values();
            // A column holds no node twice: sorted means increasing.
            if nodes.is_sorted() {
                return Some(Source {
                    value_type,
                    nodes: Cow::Borrowed(nodes),
                    values: Cow::Borrowed(values),
                });
            }
            let mut pairs: Vec<(NodeId, f64)> =
                nodes.iter().copied().zip(values.iter().copied()).collect();
            pairs.sort_by_key(|&(node, _)| node);
            let (nodes, values) = pairs.into_iter().unzip();
            return Some(Source {
                value_type,
                nodes: Cow::Owned(nodes),
                values: Cow::Owned(values),
            });
        }
        // An absent inclusive value is 0 here: a part of 0 changes no sum.
        let inclusive = column.inclusive_values()?;
        let mut parts: Vec<(NodeId, f64)> = Vec::with_capacity(2 * nodes.len());
        for (&node, &value) in nodes.iter().zip(inclusive) {
            parts.push((node, value));
            if let Some(parent) = self.profile.node(node).parent {
                parts.push((parent, -value));
            }
        }
        // Stable: each node's parts stay in the column's order, and are summed in it.
        parts.sort_by_key(|&(node, _)| node);
        let mut nodes: Vec<NodeId> = Vec::new();
        let mut values: Vec<f64> = Vec::new();
        for (node, value) in parts {
            match values.last_mut() {
                Some(sum) if nodes.last() == Some(&node) => *sum += value,
                _ => {
                    nodes.push(node);
                    values.push(value);
                }
            }
        }
        Some(Source {
            value_type,
            nodes: Cow::Owned(nodes),
            values: Cow::Owned(values),
        })
    }
}

/// Merges `sources` by node, finding the next node by comparing every source's: calls `f`
/// with each node and its values (`values`, filled anew for each node).
fn merge_scanning<E, F: FnMut(NodeId, &[f64]) -> Result<(), E> + ?Sized>(
    sources: &[View<'_>],
    values: &mut [f64],
    f: &mut F,
) -> Result<(), E> {
    let mut at = vec![0usize; sources.len()];
    loop {
        let mut next: Option<NodeId> = None;
        for (source, &i) in sources.iter().zip(&at) {
            if let Some(&node) = source.nodes.get(i) {
                next = Some(next.map_or(node, |n| n.min(node)));
            }
        }
        let Some(node) = next else {
            return Ok(());
        };
        values.fill(0.0);
        for (source, i) in sources.iter().zip(&mut at) {
            if source.nodes.get(*i) == Some(&node) {
                values[source.value_type] += source.values[*i];
                *i += 1;
            }
        }
        f(node, values)?;
    }
}

/// [`merge_scanning`], finding the next node through a heap of the sources' next nodes.
fn merge_by_heap<E, F: FnMut(NodeId, &[f64]) -> Result<(), E> + ?Sized>(
    sources: &[View<'_>],
    values: &mut [f64],
    f: &mut F,
) -> Result<(), E> {
    let mut at = vec![0usize; sources.len()];
    let mut heap: BinaryHeap<Reverse<(NodeId, usize)>> = sources
        .iter()
        .enumerate()
        .filter_map(|(s, source)| Some(Reverse((*source.nodes.first()?, s))))
        .collect();
    while let Some(&Reverse((node, _))) = heap.peek() {
        values.fill(0.0);
        while let Some(mut top) = heap.peek_mut() {
            let Reverse((at_node, s)) = *top;
            if at_node != node {
                break;
            }
            let source = &sources[s];
            values[source.value_type] += source.values[at[s]];
            at[s] += 1;
            match source.nodes.get(at[s]) {
                Some(&next) => *top = Reverse((next, s)),
                None => {
                    PeekMut::pop(top);
                }
            }
        }
        f(node, values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A merge of the sources, as the test calls it.
    type Merge = fn(
        &[View<'_>],
        &mut [f64],
        &mut dyn FnMut(NodeId, &[f64]) -> Result<(), ()>,
    ) -> Result<(), ()>;

    /// Every (node, values) a merge gives, in its order.
    fn merged(sources: &[View<'_>], types: usize, merge: Merge) -> Vec<(NodeId, Vec<f64>)> {
        let mut out = Vec::new();
        let mut values = vec![0.0; types];
        merge(sources, &mut values, &mut |node, v| {
            out.push((node, v.to_vec()));
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn both_merges_give_each_node_its_values_in_node_order() {
        // More sources than are scanned, each holding every (value type + 1)th node.
        let types = SCANNED_COLUMNS + 4;
        let mut b = profcodec_profile::ProfileBuilder::new();
        for i in 0..200 {
            let name = b.intern_string(&format!("f{i}")).unwrap();
            let frame = b
                .intern_frame(profcodec_profile::Frame::function(name))
                .unwrap();
            b.intern_stack(None, [frame]).unwrap();
        }
        let profile = b.build();
        let ids: Vec<NodeId> = profile.nodes().map(|(id, _)| id).collect();
        let columns: Vec<(Vec<NodeId>, Vec<f64>)> = (0..types)
            .map(|t| {
                let nodes: Vec<NodeId> = (0..200u32)
                    .filter(|n| n % (t as u32 + 1) == 0)
                    .map(|n| ids[n as usize])
                    .collect();
                let values = nodes.iter().map(|n| (n.index() * 100 + t) as f64).collect();
                (nodes, values)
            })
            .collect();
        let views: Vec<View<'_>> = columns
            .iter()
            .enumerate()
            .map(|(value_type, (nodes, values))| View {
                value_type,
                nodes,
                values,
            })
            .collect();
        let scanned = merged(&views, types, |s, v, f| merge_scanning(s, v, f));
        let heaped = merged(&views, types, |s, v, f| merge_by_heap(s, v, f));
        assert_eq!(scanned, heaped);
        assert_eq!(scanned.len(), 200);
        for (i, (node, values)) in scanned.iter().enumerate() {
            assert_eq!(node.index(), i);
            for (t, &v) in values.iter().enumerate() {
                let expected = if i % (t + 1) == 0 {
                    (i * 100 + t) as f64
                } else {
                    0.0
                };
                assert_eq!(v, expected, "node {i}, value type {t}");
            }
        }
    }
}
