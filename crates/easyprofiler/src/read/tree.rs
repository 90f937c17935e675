//! The block tree exactly as the C++ reader builds it (crate docs, "The format": "Nesting", "Runtime
//! names", "Time"; R:1040-1259).
//!
//! Records are stored when they end, so each thread's records come in post-order. The tree keeps
//! them in that order: node `i`'s subtree is the contiguous run `subtree_start..=i`, so no child
//! lists are allocated; [`ThreadTree::children`] walks them.

use std::collections::HashMap;

use super::scan::{
    Block, ContextSwitchNode, DEPTH_LIMIT, Descriptors, TickConverter, TreeDescriptor, Visit,
    adopted_from,
};
use super::{CaptureView, ThreadView};
use crate::error::{Error, Oddity};
use crate::name::Name;

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
    /// The file's descriptor slots, then one synthetic descriptor per distinct runtime name.
    descriptors: Descriptors<'a>,
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
        self.descriptors.len()
    }

    /// The descriptor a node's [`Node::descriptor`] names: a file descriptor, or the synthetic
    /// one of a runtime name. `None` for an empty slot or an id out of range.
    #[inline]
    pub fn descriptor(&self, id: u32) -> Option<TreeDescriptor<'a>> {
        self.descriptors.get(id)
    }

    /// The descriptors, for the profile conversion.
    #[cfg(feature = "profile")]
    pub(crate) fn descriptor_table(&self) -> &Descriptors<'a> {
        &self.descriptors
    }

    /// Every descriptor id in order (`None`: an empty slot of the file).
    pub fn descriptors(&self) -> impl ExactSizeIterator<Item = Option<TreeDescriptor<'a>>> + '_ {
        (0..self.descriptors_len() as u32).map(|id| self.descriptor(id))
    }

    /// The synthetic descriptors of runtime names; the first has id
    /// [`file_descriptors_len`](Self::file_descriptors_len).
    pub fn runtime_descriptors(&self) -> &[TreeDescriptor<'a>] {
        self.descriptors.runtime()
    }

    /// The number of the file's descriptor slots (the first synthetic id).
    pub fn file_descriptors_len(&self) -> usize {
        self.descriptors.file_len()
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

impl<'a> CaptureView<'a> {
    /// Builds the block tree (and so touches and checks every byte). In strict mode an oddity the
    /// C++ reader refuses is an [`Error::Refused`].
    pub fn tree(&self) -> Result<BlockTree<'a>, Error> {
        self.tree_with(TreeBuffers::default())
    }

    /// [`tree`](Self::tree), building the nodes in the memory of a previous tree
    /// ([`BlockTree::into_buffers`]): a tool loading capture after capture then touches no fresh
    /// pages (on a VM, the page faults of a 3-million-node tree cost a fifth of its build).
    pub fn tree_with(&self, buffers: TreeBuffers) -> Result<BlockTree<'a>, Error> {
        let mut builder = Builder {
            threads: Vec::new(),
            buffers,
        };
        let s = self.scan(&mut builder)?;
        let mut threads = builder.threads;
        for th in &mut threads {
            th.depths = Vec::new();
        }
        Ok(BlockTree {
            begin_time: s.begin_time,
            end_time: s.end_time,
            descriptors: s.descriptors,
            threads,
            blocks_kept: s.blocks_kept,
            oddities: s.oddities,
            converter: s.converter,
            tail: s.tail,
        })
    }

    /// Checks everything (every record, the tree, the counters, the tail) and returns the
    /// oddities found; in strict mode the ones the C++ reader refuses are errors.
    pub fn validate(&self) -> Result<Vec<Oddity>, Error> {
        Ok(self.tree()?.oddities)
    }
}

/// The visitor of the forward pass that keeps every block as a node of its thread's tree.
struct Builder<'a> {
    threads: Vec<ThreadTree<'a>>,
    buffers: TreeBuffers,
}

impl<'a> Visit<'a> for Builder<'a> {
    fn reserve_threads(&mut self, threads: usize) {
        self.threads.reserve(threads);
    }

    fn new_thread(&mut self, _thread: usize, id: u64) {
        self.threads.push(ThreadTree {
            id,
            nodes: self.buffers.nodes.pop().unwrap_or_default(),
            // Most threads have one section: no room for four.
            sections: Vec::with_capacity(1),
            ..ThreadTree::default()
        });
    }

    fn name(&mut self, thread: usize, name: Name<'a>) {
        self.threads[thread].name = name;
    }

    fn context_switch(&mut self, thread: usize, cs: ContextSwitchNode<'a>) {
        self.threads[thread].context_switches.push(cs);
    }

    fn section(&mut self, thread: usize, view: &ThreadView<'a>, first_block: u64, capacity: usize) {
        let th = &mut self.threads[thread];
        th.nodes.reserve(capacity);
        th.sections.push(Section {
            first_node: th.nodes.len() as u32,
            first_block: first_block as u32,
            records_offset: view.records_offset(),
            records_count: view.records_count,
        });
    }

    #[inline]
    fn block(&mut self, thread: usize, block: Block, _: u32) -> bool {
        let th = &mut self.threads[thread];
        let index = th.nodes.len() as u32;
        let n = th.roots.len();
        let last_end = th.roots.last().map_or(0, |&r| th.nodes[r as usize].end);
        let k = adopted_from(block.begin, n, last_end, |k| {
            th.nodes[th.roots[k] as usize].begin
        });
        let mut subtree_start = index;
        let mut depth = 0;
        let mut limit = false;
        if k < n {
            depth = th.depths[k..].iter().copied().max().unwrap_or(0);
            limit = depth == DEPTH_LIMIT;
            depth += 1;
            subtree_start = th.nodes[th.roots[k] as usize].subtree_start;
            th.roots.truncate(k);
            th.depths.truncate(k);
        }
        th.nodes.push(Node {
            begin: block.begin,
            end: block.end,
            descriptor: block.descriptor,
            subtree_start,
        });
        th.roots.push(index);
        th.depths.push(depth);
        limit
    }
}
