//! Values per CCT node for every version: dense rows (before 04.00) and sparse context ranges
//! (04.00) behind one lookup.

use std::ops::Range;

use crate::model::{Measurement, MetricDesc, MetricValue, SparseValue, ValueFormat};

/// The metric values of one epoch's CCT nodes, by node position in [`crate::Epoch::cct`].
///
/// Built once in O(nodes + contexts); then [`NodeValues::of`] and [`NodeValues::get`] cost the
/// node's own values, so a pass over every node costs O(nodes + values) in all.
///
/// ```
/// # use profcodec_hpcrun::*;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/hpcrun/demo-04.00b.hpcrun")).unwrap();
/// let m = read_measurement(&bytes).unwrap();
/// let values = NodeValues::new(&m, 0);
/// let total: f64 = (0..values.len()).flat_map(|n| values.of(n)).map(|(_, v)| v.as_f64()).sum();
/// assert!(total > 0.0);
/// ```
#[derive(Debug, Clone)]
pub struct NodeValues<'m> {
    metrics: &'m [MetricDesc],
    /// Each metric's value format, decoded once from its flags rather than for every value.
    formats: Vec<ValueFormat>,
    layout: Layout<'m>,
}

#[derive(Debug, Clone)]
enum Layout<'m> {
    Dense {
        values: &'m [u64],
        nodes: usize,
    },
    Sparse {
        values: &'m [SparseValue],
        ranges: Vec<Range<usize>>,
    },
}

impl<'m> NodeValues<'m> {
    /// Indexes the values of epoch `epoch` of `m` (empty when there is no such epoch).
    pub fn new(m: &'m Measurement, epoch: usize) -> Self {
        let Some(e) = m.epochs.get(epoch) else {
            return NodeValues {
                metrics: &[],
                formats: Vec::new(),
                layout: Layout::Dense {
                    values: &[],
                    nodes: 0,
                },
            };
        };
        let layout = match &m.sparse {
            Some(sparse) => {
                let position = crate::cct::Positions::new(&e.cct);
                let mut ranges = vec![0..0; e.cct.len()];
                // Ranges are taken in rising order only, so that together they cover each value
                // at most once: an unvalidated index whose starts go up and down again would
                // otherwise give many nodes the same long range.
                let mut next_free = 0usize;
                for (i, c) in sparse.contexts.iter().enumerate() {
                    crate::work::add(1);
                    let Some(p) = position.get(c.ctx as i32) else {
                        continue;
                    };
                    let end = sparse.contexts.get(i + 1).unwrap_or(&sparse.end).start;
                    let (s, e) = (c.start as usize, end as usize);
                    // The first entry of a node wins; a range outside the values or behind the
                    // last one taken (damaged input) is no range.
                    if ranges[p].is_empty() && next_free <= s && s <= e && e <= sparse.values.len()
                    {
                        ranges[p] = s..e;
                        next_free = e;
                    }
                }
                Layout::Sparse {
                    values: &sparse.values,
                    ranges,
                }
            }
            None => Layout::Dense {
                values: &e.values,
                nodes: e.cct.len(),
            },
        };
        NodeValues {
            metrics: &e.metrics,
            formats: e.metrics.iter().map(MetricDesc::value_format).collect(),
            layout,
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        match &self.layout {
            Layout::Dense { nodes, .. } => *nodes,
            Layout::Sparse { ranges, .. } => ranges.len(),
        }
    }

    /// True when the epoch has no nodes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn format(&self, metric: u16) -> ValueFormat {
        format_of(self.formats.as_slice(), metric)
    }

    /// The non-zero values of the node at position `node`, as (metric id, typed value), in file
    /// order.
    pub fn of(&self, node: usize) -> impl Iterator<Item = (u16, MetricValue)> + '_ {
        let (dense, sparse): (&[u64], &[SparseValue]) = match &self.layout {
            Layout::Dense { values, .. } => {
                let nm = self.metrics.len();
                let row = node
                    .checked_mul(nm)
                    .and_then(|s| values.get(s..s.checked_add(nm)?))
                    .unwrap_or(&[]);
                (row, &[])
            }
            Layout::Sparse { values, ranges } => (
                &[],
                ranges.get(node).map_or(&[][..], |r| &values[r.clone()]),
            ),
        };
        ValuesOf {
            dense,
            next_metric: 0,
            sparse,
            formats: &self.formats,
        }
    }

    /// The value of `metric` at the node at position `node`: a typed zero when the node stores
    /// none (04.00 files keep only non-zero values), `None` when there is no such node or metric.
    pub fn get(&self, node: usize, metric: u16) -> Option<MetricValue> {
        if node >= self.len() || usize::from(metric) >= self.metrics.len() {
            return None;
        }
        let format = self.format(metric);
        let bits = match &self.layout {
            Layout::Dense { values, .. } => {
                *values.get(node * self.metrics.len() + usize::from(metric))?
            }
            Layout::Sparse { values, ranges } => {
                let r = ranges[node].clone();
                crate::work::add(r.len() as u64);
                values[r]
                    .iter()
                    .filter(|v| v.metric == metric)
                    .fold(0u64, |_, v| v.value)
            }
        };
        Some(MetricValue::from_bits(bits, format))
    }
}

/// The value format of `metric`, unknown for a metric id beyond the table.
fn format_of(formats: &[ValueFormat], metric: u16) -> ValueFormat {
    formats
        .get(usize::from(metric))
        .copied()
        .unwrap_or(ValueFormat::Unknown)
}

/// The values of one node ([`NodeValues::of`]): a dense row or a sparse range, one of them
/// empty. A plain cursor rather than a chain of adapters: converters take every value of every
/// node through it.
struct ValuesOf<'a> {
    /// The rest of a dense row; its first value is metric `next_metric`'s.
    dense: &'a [u64],
    next_metric: u16,
    sparse: &'a [SparseValue],
    formats: &'a [ValueFormat],
}

impl ValuesOf<'_> {
    fn typed(&self, metric: u16, bits: u64) -> (u16, MetricValue) {
        (
            metric,
            MetricValue::from_bits(bits, format_of(self.formats, metric)),
        )
    }
}

impl Iterator for ValuesOf<'_> {
    type Item = (u16, MetricValue);

    fn next(&mut self) -> Option<(u16, MetricValue)> {
        if let Some((v, rest)) = self.sparse.split_first() {
            self.sparse = rest;
            return Some(self.typed(v.metric, v.value));
        }
        // Dense rows keep a slot for every metric; the zeros are values not measured.
        while let Some((&bits, rest)) = self.dense.split_first() {
            self.dense = rest;
            let metric = self.next_metric;
            self.next_metric = self.next_metric.wrapping_add(1);
            if bits != 0 {
                return Some(self.typed(metric, bits));
            }
        }
        None
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (
            self.sparse.len(),
            Some(self.sparse.len() + self.dense.len()),
        )
    }
}
