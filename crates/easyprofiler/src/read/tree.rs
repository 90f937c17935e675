//! The block tree exactly as the C++ reader builds it (crate docs, "The format": "Nesting", "Runtime
//! names", "Time"; R:1040-1259).
//!
//! Records are stored when they end, so each thread's records come in post-order. The tree keeps
//! them in that order: node `i`'s subtree is the contiguous run `subtree_start..=i`, so no child
//! lists are allocated; [`ThreadTree::children`] walks them.

use std::collections::HashMap;
use std::sync::Arc;

use super::{CaptureView, DescriptorRef, DescriptorTable, Mode, c_str};
use crate::error::{Error, Oddity};
use crate::name::Name;

/// The C++ reader fails when a block would get this depth (R:1215).
const DEPTH_LIMIT: u32 = 254;

/// One block, event or value in a thread's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    /// Begin (ns, clamped to the capture's begin).
    pub begin: u64,
    /// End (ns).
    pub end: u64,
    /// Descriptor id after runtime naming (see [`BlockTree::descriptor`]).
    pub descriptor: u32,
    /// The first node of this node's subtree (this node itself when it has no children).
    pub subtree_start: u32,
}

/// A kept context switch (converted to ns, clamped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextSwitchNode<'a> {
    /// Begin (ns).
    pub begin: u64,
    /// End (ns).
    pub end: u64,
    /// Target thread id.
    pub target_tid: u64,
    /// Target name.
    pub name: Name<'a>,
    /// Index among all kept context switches and records of the capture (the C++ block index).
    pub block_index: u32,
}

/// One thread's tree. Sections of the file with the same thread id are merged, as the C++ reader
/// merges them (R:1002).
#[derive(Debug, Clone, Default)]
pub struct ThreadTree<'a> {
    /// Thread id.
    pub id: u64,
    /// Thread name (up to its first NUL).
    pub name: Name<'a>,
    /// Nodes in file (post-)order.
    pub nodes: Vec<Node>,
    /// Top-level nodes, in order.
    pub roots: Vec<u32>,
    /// Kept context switches.
    pub context_switches: Vec<ContextSwitchNode<'a>>,
    /// The file sections of this thread.
    sections: Vec<Section>,
    /// Depth of each root while building.
    depths: Vec<u32>,
}

/// One file section of a thread: where its nodes and records start.
#[derive(Debug, Clone, Copy, Default)]
struct Section {
    /// Its first node.
    first_node: u32,
    /// The C++ block index of that node.
    first_block: u32,
    /// Offset of its first record's size prefix.
    records_offset: usize,
    /// Its record count.
    records_count: u32,
}

/// Iterator over a node's children, last first.
#[derive(Debug, Clone)]
pub struct ChildrenRev<'t> {
    nodes: &'t [Node],
    start: u32,
    cur: u32,
}

impl Iterator for ChildrenRev<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.cur <= self.start {
            return None;
        }
        let child = self.cur - 1;
        self.cur = self.nodes[child as usize].subtree_start;
        Some(child)
    }
}

impl<'a> ThreadTree<'a> {
    /// The children of node `i`, last first.
    pub fn children_rev(&self, i: u32) -> ChildrenRev<'_> {
        ChildrenRev {
            nodes: &self.nodes,
            start: self.nodes[i as usize].subtree_start,
            cur: i,
        }
    }
    /// The children of node `i`, in order.
    pub fn children(&self, i: u32) -> Vec<u32> {
        let mut v: Vec<u32> = self.children_rev(i).collect();
        v.reverse();
        v
    }
    /// The nodes in file (post-)order, each with its block index, its parent's and its depth:
    /// the flat form of the tree (a parent comes after its children). Takes 8 bytes a node,
    /// computed in two passes before the first item.
    pub fn flat(&self) -> FlatNodes<'_, 'a> {
        let n = self.nodes.len();
        let mut parents = vec![NO_PARENT; n];
        for i in 0..n as u32 {
            for c in self.children_rev(i) {
                parents[c as usize] = i;
            }
        }
        // A parent comes after its children, so walking backwards meets it first.
        let mut depths = vec![0u32; n];
        for i in (0..n).rev() {
            if let Some(&d) = depths.get(parents[i] as usize) {
                depths[i] = d + 1;
            }
        }
        FlatNodes {
            tree: self,
            parents,
            depths,
            next: 0,
        }
    }

    /// The C++ reader's block index of node `i` (its position among all kept context switches
    /// and records of the capture; the converter's `id`).
    pub fn block_index(&self, i: u32) -> u32 {
        let s = self.sections.partition_point(|s| s.first_node <= i);
        match s.checked_sub(1).and_then(|s| self.sections.get(s)) {
            Some(s) => s.first_block + (i - s.first_node),
            None => i,
        }
    }
}

/// A node with its place in the tree ([`ThreadTree::flat`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatNode {
    /// The node's index in [`ThreadTree::nodes`].
    pub index: u32,
    /// Its block index (the C++ reader's, see [`ThreadTree::block_index`]).
    pub id: u32,
    /// The block index of its parent (`None` for a top-level node).
    pub parent: Option<u32>,
    /// Its depth (0 for a top-level node).
    pub depth: u32,
    /// The node.
    pub node: Node,
}

/// Iterator over a thread's nodes in file order with their parents and depths
/// ([`ThreadTree::flat`]).
#[derive(Debug, Clone)]
pub struct FlatNodes<'t, 'a> {
    tree: &'t ThreadTree<'a>,
    /// Per node, the parent's node index (`NO_PARENT` for a root) and the depth.
    parents: Vec<u32>,
    depths: Vec<u32>,
    next: u32,
}

const NO_PARENT: u32 = u32::MAX;

impl Iterator for FlatNodes<'_, '_> {
    type Item = FlatNode;

    fn next(&mut self) -> Option<FlatNode> {
        let i = self.next;
        let node = *self.tree.nodes.get(i as usize)?;
        self.next += 1;
        let parent = self.parents[i as usize];
        Some(FlatNode {
            index: i,
            id: self.tree.block_index(i),
            parent: (parent != NO_PARENT).then(|| self.tree.block_index(parent)),
            depth: self.depths[i as usize],
            node,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.tree.nodes.len() - self.next as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for FlatNodes<'_, '_> {}

/// A descriptor of the tree: a file descriptor, or a synthetic one for a runtime name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeDescriptor<'a> {
    /// The file descriptor (for a synthetic one, the descriptor it copies).
    pub descriptor: DescriptorRef<'a>,
    /// The runtime name of a synthetic descriptor.
    pub runtime_name: Option<Name<'a>>,
}

impl<'a> TreeDescriptor<'a> {
    /// The name the C++ reader shows: the runtime name, else the descriptor's name (up to its
    /// first NUL).
    pub fn name(&self) -> Name<'a> {
        self.runtime_name
            .unwrap_or_else(|| Name(c_str(self.descriptor.name.as_bytes())))
    }
}

/// The records of a thread's nodes, in node order (see [`BlockTree::node_records`]).
#[derive(Debug, Clone)]
pub struct NodeRecords<'a, 't> {
    data: &'a [u8],
    sections: std::slice::Iter<'t, Section>,
    current: Option<super::RecordIter<'a>>,
    conv: TickConverter,
    begin_time: u64,
}

impl<'a> Iterator for NodeRecords<'a, '_> {
    type Item = super::RawRecord<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(it) = &mut self.current {
                // The tree was built from these records, so they decode; skip the ones it
                // dropped (ending before the capture's begin).
                for r in it.by_ref().flatten() {
                    if self.conv.ns(r.end()) >= self.begin_time {
                        return Some(r);
                    }
                }
            }
            let s = self.sections.next()?;
            self.current = Some(super::RecordIter {
                data: self.data,
                pos: s.records_offset,
                left: s.records_count,
                failed: false,
            });
        }
    }
}

/// Every thread's block tree, the descriptors (runtime names appended) and the times in ns.
#[derive(Debug, Clone)]
pub struct BlockTree<'a> {
    /// Capture begin (ns).
    pub begin_time: u64,
    /// Capture end (ns).
    pub end_time: u64,
    /// The file's descriptor slots (shared with the view).
    file_descriptors: Arc<DescriptorTable<'a>>,
    /// One synthetic descriptor per distinct runtime name, after the file's slots.
    runtime_descriptors: Vec<TreeDescriptor<'a>>,
    /// Threads in order of first appearance.
    pub threads: Vec<ThreadTree<'a>>,
    /// Context switches and records kept.
    pub blocks_kept: u64,
    /// Everything odd about the file (header, counters, depth, tail).
    pub oddities: Vec<Oddity>,
    /// The tick converter of the capture.
    pub converter: TickConverter,
    /// What follows the threads (bookmarks, end marks, trailing bytes).
    tail: super::TailRef<'a>,
}

/// Per-descriptor totals of a capture's nodes ([`BlockTree::totals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockTotals {
    /// The descriptor id (as [`Node::descriptor`]: runtime names have their own).
    pub descriptor: u32,
    /// Nodes with this descriptor.
    pub count: u64,
    /// The sum of their durations (ns). A block nested in a block of the same descriptor counts
    /// in both, as in the C++ reader's statistics.
    pub total: u64,
    /// The sum of their durations minus the durations of their children (ns).
    pub self_time: u64,
}

/// The node memory of a tree, kept for the next build ([`CaptureView::tree_with`]).
#[derive(Debug, Default)]
pub struct TreeBuffers {
    nodes: Vec<Vec<Node>>,
}

impl<'a> BlockTree<'a> {
    /// The number of descriptor ids: the file's slots, then one per distinct runtime name.
    pub fn descriptors_len(&self) -> usize {
        self.file_descriptors.len() + self.runtime_descriptors.len()
    }

    /// The descriptor a node's [`Node::descriptor`] names: a file descriptor, or the synthetic
    /// one of a runtime name. `None` for an empty slot or an id out of range.
    #[inline]
    pub fn descriptor(&self, id: u32) -> Option<TreeDescriptor<'a>> {
        let file = self.file_descriptors.len();
        match (id as usize).checked_sub(file) {
            None => self
                .file_descriptors
                .get(id)
                .map(|&descriptor| TreeDescriptor {
                    descriptor,
                    runtime_name: None,
                }),
            Some(i) => self.runtime_descriptors.get(i).copied(),
        }
    }

    /// Every descriptor id in order (`None`: an empty slot of the file).
    pub fn descriptors(&self) -> impl ExactSizeIterator<Item = Option<TreeDescriptor<'a>>> + '_ {
        (0..self.descriptors_len() as u32).map(|id| self.descriptor(id))
    }

    /// The synthetic descriptors of runtime names; the first has id
    /// [`file_descriptors_len`](Self::file_descriptors_len).
    pub fn runtime_descriptors(&self) -> &[TreeDescriptor<'a>] {
        &self.runtime_descriptors
    }

    /// The number of the file's descriptor slots (the first synthetic id).
    pub fn file_descriptors_len(&self) -> usize {
        self.file_descriptors.len()
    }

    /// What follows the threads: bookmarks, end marks, trailing bytes.
    pub fn tail(&self) -> &super::TailRef<'a> {
        &self.tail
    }

    /// Count, total and self time per descriptor over every thread, in descriptor id order
    /// (descriptors no node uses are left out). One pass over the nodes: each node is visited
    /// once as itself and once as a child.
    pub fn totals(&self) -> Vec<BlockTotals> {
        let mut by_id: HashMap<u32, BlockTotals> = HashMap::new();
        for th in &self.threads {
            for (i, n) in th.nodes.iter().enumerate() {
                let duration = n.end.saturating_sub(n.begin);
                let children: u64 = th
                    .children_rev(i as u32)
                    .map(|c| {
                        let c = th.nodes[c as usize];
                        c.end.saturating_sub(c.begin)
                    })
                    .sum();
                let t = by_id.entry(n.descriptor).or_insert(BlockTotals {
                    descriptor: n.descriptor,
                    ..BlockTotals::default()
                });
                t.count += 1;
                t.total = t.total.saturating_add(duration);
                t.self_time = t
                    .self_time
                    .saturating_add(duration.saturating_sub(children));
            }
        }
        let mut totals: Vec<BlockTotals> = by_id.into_values().collect();
        totals.sort_unstable_by_key(|t| t.descriptor);
        totals
    }

    /// Gives up the tree, keeping its node memory for the next build.
    pub fn into_buffers(self) -> TreeBuffers {
        TreeBuffers {
            nodes: self
                .threads
                .into_iter()
                .map(|t| {
                    let mut nodes = t.nodes;
                    nodes.clear();
                    nodes
                })
                .collect(),
        }
    }

    /// The records behind `thread`'s nodes, in node order (node `i` is the `i`-th item), read
    /// again from `view` (the view the tree was built from): for values and runtime names.
    pub fn node_records<'t>(
        &self,
        view: &CaptureView<'a>,
        thread: &'t ThreadTree<'a>,
    ) -> NodeRecords<'a, 't> {
        NodeRecords {
            data: view.data(),
            sections: thread.sections.iter(),
            current: None,
            conv: self.converter,
            begin_time: self.begin_time,
        }
    }
}

/// Converts ticks to ns as the C++ reader does (R:920, `t *= 1e9 / cpu_freq` in double).
#[derive(Debug, Clone, Copy)]
pub struct TickConverter {
    factor: Option<f64>,
}

impl TickConverter {
    /// The converter for a header's `cpu_frequency` (0 means ns already).
    pub fn new(cpu_frequency: i64) -> Self {
        TickConverter {
            factor: (cpu_frequency != 0).then(|| 1e9 / (cpu_frequency as u64) as f64),
        }
    }
    /// `t` in ns.
    #[inline]
    pub fn ns(&self, t: u64) -> u64 {
        const TWO_63: f64 = 9_223_372_036_854_775_808.0;
        match self.factor {
            Some(f) => {
                // Below 2^63 the signed conversions round and truncate exactly as the unsigned
                // ones, in one instruction each instead of a branchy sequence.
                let x = if t < 1 << 63 {
                    t as i64 as f64
                } else {
                    t as f64
                };
                let y = x * f;
                if (0.0..TWO_63).contains(&y) {
                    y as i64 as u64
                } else {
                    y as u64
                }
            }
            None => t,
        }
    }
}

impl<'a> CaptureView<'a> {
    /// Builds the block tree (and so touches and checks every byte). In strict mode an oddity the
    /// C++ reader refuses is an [`Error::Refused`].
    pub fn tree(&self) -> Result<BlockTree<'a>, Error> {
        self.tree_with(TreeBuffers::default())
    }

    /// [`tree`](Self::tree), building the nodes in the memory of a previous tree
    /// ([`BlockTree::into_buffers`]): a tool loading capture after capture then touches no fresh
    /// pages (on a VM, the page faults of a 3-million-node tree cost a fifth of its build).
    pub fn tree_with(&self, mut buffers: TreeBuffers) -> Result<BlockTree<'a>, Error> {
        let h = self.header();
        let conv = TickConverter::new(h.cpu_frequency);
        let begin_time = conv.ns(h.begin_time);
        let mut tree = BlockTree {
            begin_time,
            end_time: conv.ns(h.end_time),
            file_descriptors: self.descriptors_shared(),
            runtime_descriptors: Vec::new(),
            threads: Vec::new(),
            blocks_kept: 0,
            oddities: self.header_oddities().to_vec(),
            converter: conv,
            tail: super::TailRef::default(),
        };
        let mut runtime_ids: HashMap<Name<'a>, u32> = HashMap::new();
        let mut by_id: HashMap<u64, usize> = HashMap::new();
        let mut memory = 0u64;
        let mut kept: u64 = 0;
        let mut depth_reported = false;

        let mut iter = self.threads();
        if h.version.layout() == crate::model::Layout::V2_1 {
            // The stated thread count, bounded by what the smallest thread sections (18 bytes)
            // could hold, so that many threads cost no growth of the list and the map (growth
            // would double what they hold); a count that lies costs no more than honest threads.
            let rest = self.data().len() - self.threads_offset();
            let threads = (h.counters.threads_count as usize).min(rest / 18);
            tree.threads.reserve(threads);
            by_id.reserve(threads);
        }
        while let Some(t) = iter.next() {
            let t = t?;
            let ti = *by_id.entry(t.id).or_insert_with(|| {
                tree.threads.push(ThreadTree {
                    id: t.id,
                    nodes: buffers.nodes.pop().unwrap_or_default(),
                    // Most threads have one section: no room for four.
                    sections: Vec::with_capacity(1),
                    ..ThreadTree::default()
                });
                tree.threads.len() - 1
            });
            let th = &mut tree.threads[ti];
            if let Some(name) = t.name {
                th.name = Name(c_str(name.as_bytes()));
            }
            for cs in t.context_switches() {
                let cs = cs?;
                memory += cs.size(h.version.layout().wide_ids()) as u64;
                let b = conv.ns(cs.begin);
                let e = conv.ns(cs.end);
                // Context switches need end > begin of the capture (R:1057).
                if e > begin_time {
                    th.context_switches.push(ContextSwitchNode {
                        begin: b.max(begin_time),
                        end: e,
                        target_tid: cs.target_tid,
                        name: Name(c_str(cs.name.as_bytes())),
                        block_index: kept as u32,
                    });
                    kept += 1;
                }
            }
            let cap = t.records_capacity()?;
            th.nodes.reserve(cap);
            th.sections.push(Section {
                first_node: th.nodes.len() as u32,
                first_block: kept as u32,
                records_offset: t.records_offset(),
                records_count: t.records_count,
            });
            let mut records = t.records();
            for r in records.by_ref() {
                let r = r?;
                // Checks the descriptor id and the record's shape (R:1122-1132).
                self.decode_record(&r)?;
                memory += r.payload.len() as u64;
                let end = conv.ns(r.end());
                if end < begin_time {
                    continue;
                }
                let begin = conv.ns(r.begin()).max(begin_time);
                let mut descriptor = r.descriptor();
                let name = r.runtime_name();
                if !name.is_empty() {
                    // Runtime-named blocks get one synthetic descriptor per distinct name,
                    // across all threads (R:1150-1172).
                    descriptor = match runtime_ids.get(&name) {
                        Some(&id) => id,
                        None => {
                            let id = (tree.file_descriptors.len() + tree.runtime_descriptors.len())
                                as u32;
                            // `decode_record` found the file descriptor present.
                            if let Some(&d) = self.descriptors().get(descriptor) {
                                tree.runtime_descriptors.push(TreeDescriptor {
                                    descriptor: d,
                                    runtime_name: Some(name),
                                });
                            }
                            runtime_ids.insert(name, id);
                            id
                        }
                    };
                }
                let index = th.nodes.len() as u32;
                let mut subtree_start = index;
                let mut depth = 0;
                let n = th.roots.len();
                if let Some(&last) = th.roots.last()
                    && begin < th.nodes[last as usize].end
                {
                    // Adopt the last root always, earlier ones while begin <= theirs.
                    let mut k = n - 1;
                    while k > 0 && begin <= th.nodes[th.roots[k - 1] as usize].begin {
                        k -= 1;
                    }
                    depth = th.depths[k..].iter().copied().max().unwrap_or(0);
                    if depth == DEPTH_LIMIT && !depth_reported {
                        depth_reported = true;
                        tree.oddities.push(Oddity::DepthLimit { offset: r.offset });
                        if self.mode() == Mode::Strict {
                            return Err(Error::Refused(Oddity::DepthLimit { offset: r.offset }));
                        }
                    }
                    depth += 1;
                    subtree_start = th.nodes[th.roots[k] as usize].subtree_start;
                    th.roots.truncate(k);
                    th.depths.truncate(k);
                }
                th.nodes.push(Node {
                    begin,
                    end,
                    descriptor,
                    subtree_start,
                });
                th.roots.push(index);
                th.depths.push(depth);
                kept += 1;
            }
            // Every record was walked: the thread iterator need not skip them again.
            iter.records_walked(&records);
        }
        for th in &mut tree.threads {
            th.depths = Vec::new();
        }
        tree.blocks_kept = kept;
        let offsets = self.offsets();
        let c = h.counters;
        if kept != u64::from(c.blocks_count) {
            tree.oddities.push(Oddity::BlocksCount {
                offset: offsets.blocks_count,
                header: c.blocks_count.into(),
                found: kept,
            });
        }
        if memory > c.memory_size {
            tree.oddities.push(Oddity::MemorySizeExceeded {
                offset: offsets.memory_size,
                header: c.memory_size,
                found: memory,
            });
        } else if memory < c.memory_size {
            tree.oddities.push(Oddity::MemorySizeLarger {
                offset: offsets.memory_size,
                header: c.memory_size,
                found: memory,
            });
        }
        if let Some(end) = iter.end() {
            tree.tail = self.tail(end)?;
            tree.oddities.extend_from_slice(&tree.tail.oddities);
        }
        self.refuse(&tree.oddities)?;
        Ok(tree)
    }

    /// Checks everything (every record, the tree, the counters, the tail) and returns the
    /// oddities found; in strict mode the ones the C++ reader refuses are errors.
    pub fn validate(&self) -> Result<Vec<Oddity>, Error> {
        Ok(self.tree()?.oddities)
    }
}

#[cfg(test)]
mod tests {
    use super::TickConverter;

    #[test]
    fn fast_conversion_equals_the_plain_double_arithmetic() {
        for freq in [1i64, 3, 1_000_000_000, 2_596_007_000, -5, i64::MAX] {
            let c = TickConverter::new(freq);
            let f = 1e9 / (freq as u64) as f64;
            let mut t = 1u64;
            while t != 0 {
                for v in [t - 1, t, t | 1, t.wrapping_mul(3)] {
                    assert_eq!(c.ns(v), (v as f64 * f) as u64, "{freq} {v}");
                }
                t <<= 1;
            }
            assert_eq!(c.ns(u64::MAX), (u64::MAX as f64 * f) as u64);
        }
    }
}
