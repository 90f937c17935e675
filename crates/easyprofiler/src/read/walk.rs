//! The blocks of a capture walked from the file, without a tree in memory ([`CaptureView::walk`]).
//!
//! A thread's records come in the order they ended, children before their parent, and a
//! record's nesting is known only once the blocks around it are read: a block that spans the
//! whole thread comes last and adopts everything. So the walk never keeps the blocks. The
//! forward pass checks every byte and keeps, per thread, the place of every `chunk`-th block;
//! walking back from the end, chunk by chunk, meets every parent before its children and nests
//! each block with a stack of the open ones ([`holds`]); a walk in time order reads the chunks
//! forwards and takes from the backward walk only the blocks whose subtree crosses the start of
//! their chunk (at most the nesting depth per chunk). Memory: the threads and their file
//! sections, the distinct runtime names, the chunk marks (16 bytes each) and two chunks of
//! blocks, with the chunk about twice the square root of the thread's blocks, and for the walk
//! in time order the crossing blocks; never a node per block.

use super::scan::{Block, ContextSwitchNode, Descriptors, TickConverter, TreeDescriptor, Visit};
use super::scan::{DEPTH_LIMIT, adopted_from, holds};
use super::{CaptureView, Mode, RawRecord, RecordIter, TailRef, ThreadView};
use crate::error::{Error, Oddity};
use crate::name::Name;

/// The smallest chunk, in blocks.
const MIN_CHUNK: u64 = 4096;

/// The blocks of a capture, checked by one forward pass and walked again from the file on
/// demand: per thread backwards (every parent before its children, as the C++ reader's tree
/// gives them walked from the end) or in time order ([`Walk::pre_order`]), with the nesting the
/// C++ reader builds and in memory that does not grow with the blocks (see the module docs).
///
/// It holds what [`BlockTree`](crate::BlockTree) holds except the nodes: the same threads in the
/// same order, the same descriptors (runtime names included), the same times. Its oddities are
/// the tree's, except that in tolerant mode the depth limit is not checked (the forward pass
/// would have to keep the top-level blocks' times for it); in strict mode it is, and refused as
/// the tree refuses it.
#[derive(Debug, Clone)]
pub struct Walk<'a> {
    /// Capture begin (ns).
    pub begin_time: u64,
    /// Capture end (ns).
    pub end_time: u64,
    /// Threads in order of first appearance (sections with the same id merged).
    pub threads: Vec<ThreadWalk<'a>>,
    /// Context switches and records kept.
    pub blocks_kept: u64,
    /// Everything odd about the file (header, counters, tail; the depth limit in strict mode).
    pub oddities: Vec<Oddity>,
    /// The tick converter of the capture.
    pub converter: TickConverter,
    descriptors: Descriptors<'a>,
    tail: TailRef<'a>,
}

/// One thread of a [`Walk`]: where its blocks are in the file.
#[derive(Debug, Clone)]
pub struct ThreadWalk<'a> {
    /// Thread id.
    pub id: u64,
    /// Thread name (up to its first NUL).
    pub name: Name<'a>,
    /// Blocks, events and values kept.
    pub blocks: u64,
    /// Context switches kept.
    pub context_switches: u64,
    sections: Vec<Section<'a>>,
    /// The place of every `chunk`-th block.
    marks: Vec<Mark>,
    chunk: u64,
    /// Whether the kept context switches come in order of (begin, end), and the last one's.
    switches_sorted: bool,
    last_switch: (u64, u64),
    /// The top-level blocks' (begin, end, depth), for the depth limit in strict mode only.
    roots: Vec<(u64, u64, u32)>,
}

/// One file section of a thread.
#[derive(Debug, Clone, Copy)]
struct Section<'a> {
    view: ThreadView<'a>,
    /// The C++ block index of its first kept context switch.
    first_switch: u64,
}

/// Where a block's record is: its section, its offset, the records of the section from it on.
#[derive(Debug, Clone, Copy)]
struct Mark {
    section: u32,
    left: u32,
    offset: usize,
}

impl<'a> ThreadWalk<'a> {
    /// Whether the kept context switches are in order of (begin, end) in the file (then
    /// [`Walk::context_switches`] gives them in time order without sorting).
    pub fn context_switches_sorted(&self) -> bool {
        self.switches_sorted
    }

    /// The first index of the chunk that block `index` is in.
    fn chunk_start(&self, index: u64) -> u64 {
        index / self.chunk * self.chunk
    }
}

impl<'a> CaptureView<'a> {
    /// Checks every byte as [`tree`](Self::tree) does (same errors; in strict mode the same
    /// refusals) and gives the [`Walk`] over the blocks, which holds no node per block.
    pub fn walk(&self) -> Result<Walk<'a>, Error> {
        self.walk_with(MIN_CHUNK, true)
    }

    /// [`walk`](Self::walk) with chunks of `chunk` blocks at first, doubled as the marks grow
    /// when `grow` (tests walk tiny chunks, to cross many chunk starts in small captures).
    pub(crate) fn walk_with(&self, chunk: u64, grow: bool) -> Result<Walk<'a>, Error> {
        let mut marker = Marker {
            threads: Vec::new(),
            strict: self.mode() == Mode::Strict,
            switches: 0,
            chunk,
            grow,
        };
        let s = self.scan(&mut marker)?;
        let mut threads = marker.threads;
        for th in &mut threads {
            th.roots = Vec::new();
        }
        Ok(Walk {
            begin_time: s.begin_time,
            end_time: s.end_time,
            threads,
            blocks_kept: s.blocks_kept,
            oddities: s.oddities,
            converter: s.converter,
            descriptors: s.descriptors,
            tail: s.tail,
        })
    }
}

/// The visitor of the forward pass that keeps the chunk marks.
struct Marker<'a> {
    threads: Vec<ThreadWalk<'a>>,
    strict: bool,
    /// Context switches kept in the current section so far.
    switches: u64,
    /// The first chunk size, and whether it grows.
    chunk: u64,
    grow: bool,
}

impl<'a> Visit<'a> for Marker<'a> {
    fn reserve_threads(&mut self, threads: usize) {
        self.threads.reserve(threads);
    }

    fn new_thread(&mut self, _thread: usize, id: u64) {
        self.threads.push(ThreadWalk {
            id,
            name: Name::default(),
            blocks: 0,
            context_switches: 0,
            sections: Vec::with_capacity(1),
            marks: Vec::new(),
            chunk: self.chunk,
            switches_sorted: true,
            last_switch: (0, 0),
            roots: Vec::new(),
        });
    }

    fn name(&mut self, thread: usize, name: Name<'a>) {
        self.threads[thread].name = name;
    }

    fn context_switch(&mut self, thread: usize, cs: ContextSwitchNode<'a>) {
        let th = &mut self.threads[thread];
        let key = (cs.begin, cs.end);
        if th.context_switches > 0 && key < th.last_switch {
            th.switches_sorted = false;
        }
        th.last_switch = key;
        th.context_switches += 1;
        self.switches += 1;
    }

    fn section(&mut self, thread: usize, view: &ThreadView<'a>, first_block: u64, _: usize) {
        self.threads[thread].sections.push(Section {
            view: *view,
            first_switch: first_block - self.switches,
        });
        self.switches = 0;
    }

    #[inline]
    fn block(&mut self, thread: usize, block: Block, record: u32) -> bool {
        let th = &mut self.threads[thread];
        if th.blocks.is_multiple_of(th.chunk) {
            let section = th.sections.len() - 1;
            th.marks.push(Mark {
                section: section as u32,
                left: th.sections[section].view.records_count - record,
                offset: block.offset as usize,
            });
            // Marks and chunks grow together: a chunk stays at least four times the marks.
            if self.grow && th.marks.len() as u64 * 4 > th.chunk {
                th.chunk *= 2;
                let mut k = 0;
                th.marks.retain(|_| {
                    k += 1;
                    k % 2 == 1
                });
            }
        }
        th.blocks += 1;
        if !self.strict {
            return false;
        }
        let roots = &mut th.roots;
        let n = roots.len();
        let last_end = roots.last().map_or(0, |r| r.1);
        let k = adopted_from(block.begin, n, last_end, |k| roots[k].0);
        let mut depth = 0;
        let mut limit = false;
        if k < n {
            depth = roots[k..].iter().map(|r| r.2).max().unwrap_or(0);
            limit = depth == DEPTH_LIMIT;
            depth += 1;
            roots.truncate(k);
        }
        roots.push((block.begin, block.end, depth));
        limit
    }
}

impl<'a> Walk<'a> {
    /// The number of descriptor ids: the file's slots, then one per distinct runtime name.
    pub fn descriptors_len(&self) -> usize {
        self.descriptors.len()
    }

    /// The descriptor a [`Block::descriptor`] names, as [`BlockTree::descriptor`](crate::BlockTree::descriptor).
    #[inline]
    pub fn descriptor(&self, id: u32) -> Option<TreeDescriptor<'a>> {
        self.descriptors.get(id)
    }

    /// The descriptors, for the profile conversion.
    #[cfg(feature = "profile")]
    pub(crate) fn descriptor_table(&self) -> &Descriptors<'a> {
        &self.descriptors
    }

    /// What follows the threads: bookmarks, end marks, trailing bytes.
    pub fn tail(&self) -> &TailRef<'a> {
        &self.tail
    }

    /// The block of record `r`, unless the reader drops it (it ends before the capture begins).
    #[inline]
    fn block(&self, r: &RawRecord<'a>) -> Option<Block> {
        let end = self.converter.ns(r.end());
        (end >= self.begin_time).then(|| Block {
            begin: self.converter.ns(r.begin()).max(self.begin_time),
            end,
            descriptor: self.descriptors.id(r),
            offset: r.offset,
        })
    }

    /// Reads chunk `m` of `thread` into `buf` (emptied first).
    fn read_chunk(&self, thread: &ThreadWalk<'a>, m: usize, buf: &mut Vec<Block>) {
        buf.clear();
        let Some(mark) = thread.marks.get(m) else {
            return;
        };
        let want = (thread.blocks - m as u64 * thread.chunk).min(thread.chunk) as usize;
        let mut section = mark.section as usize;
        let mut records = RecordIter {
            data: thread.sections[section].view.data,
            pos: mark.offset,
            left: mark.left,
            failed: false,
        };
        while buf.len() < want {
            // The forward pass read these records whole: they decode.
            match records.next() {
                Some(Ok(r)) => buf.extend(self.block(&r)),
                Some(Err(_)) => return,
                None => {
                    section += 1;
                    let Some(s) = thread.sections.get(section) else {
                        return;
                    };
                    records = s.view.records();
                }
            }
        }
    }

    /// `thread`'s blocks in reverse file order, each with its index among them: every parent
    /// before its children, and a block's parent the innermost open block that [`holds`] it.
    pub(crate) fn blocks_rev<'w>(&'w self, thread: &'w ThreadWalk<'a>) -> BlocksRev<'w, 'a> {
        BlocksRev {
            walk: self,
            thread,
            next_chunk: thread.marks.len(),
            buf: Vec::new(),
        }
    }

    /// `thread`'s blocks in time order: each block entered before its descendants and left
    /// after them, as the C++ reader nests them, siblings in file order (a pre-order walk of the
    /// thread's tree). Memory: two chunks of blocks and the blocks whose subtree crosses the
    /// start of their chunk, found first by one walk back over the thread.
    pub fn pre_order<'w>(&'w self, thread: &'w ThreadWalk<'a>) -> PreOrder<'w, 'a> {
        PreOrder {
            walk: self,
            thread,
            far: self.crossing(thread),
            far_at: 0,
            chunk: 0,
            chunk_start: 0,
            buf: Vec::new(),
            local: Vec::new(),
            local_at: 0,
            next: 0,
        }
    }

    /// The blocks of `thread` whose subtree begins before their chunk, with the index where it
    /// begins; in order of that index, outermost first where it is the same.
    fn crossing(&self, thread: &ThreadWalk<'a>) -> Vec<(u64, Block)> {
        let mut far = Vec::new();
        let mut open: Vec<(u64, Block, bool)> = Vec::new();
        let mut close = |open: &mut Vec<(u64, Block, bool)>, start: u64| {
            if let Some((x, b, _)) = open.pop()
                && start < thread.chunk_start(x)
            {
                far.push((start, b));
            }
        };
        let mut rev = self.blocks_rev(thread);
        while let Some((i, b)) = rev.next_indexed() {
            while open.last().is_some_and(|o| !holds(o.1.begin, o.2, &b)) {
                close(&mut open, i + 1);
            }
            if let Some(parent) = open.last_mut() {
                parent.2 = true;
            }
            open.push((i, b, false));
        }
        while !open.is_empty() {
            close(&mut open, 0);
        }
        // Found walking back, innermost first: reversed, in order and outermost first.
        far.reverse();
        far
    }

    /// `thread`'s kept context switches, in file order.
    pub fn context_switches<'w>(
        &'w self,
        thread: &'w ThreadWalk<'a>,
    ) -> impl Iterator<Item = ContextSwitchNode<'a>> + 'w {
        let begin_time = self.begin_time;
        let conv = self.converter;
        thread.sections.iter().flat_map(move |s| {
            let mut index = s.first_switch;
            // The forward pass read these whole: they decode.
            s.view.context_switches().flatten().filter_map(move |cs| {
                let e = conv.ns(cs.end);
                (e > begin_time).then(|| {
                    index += 1;
                    ContextSwitchNode {
                        begin: conv.ns(cs.begin).max(begin_time),
                        end: e,
                        target_tid: cs.target_tid,
                        name: Name(super::c_str(cs.name.as_bytes())),
                        block_index: (index - 1) as u32,
                    }
                })
            })
        })
    }
}

/// A thread's blocks in reverse file order ([`Walk::blocks_rev`]).
pub(crate) struct BlocksRev<'w, 'a> {
    walk: &'w Walk<'a>,
    thread: &'w ThreadWalk<'a>,
    /// The chunk before the one in `buf`.
    next_chunk: usize,
    buf: Vec<Block>,
}

impl BlocksRev<'_, '_> {
    /// The next block and its index among the thread's blocks.
    #[inline]
    pub(crate) fn next_indexed(&mut self) -> Option<(u64, Block)> {
        loop {
            if let Some(b) = self.buf.pop() {
                let index = self.next_chunk as u64 * self.thread.chunk + self.buf.len() as u64;
                return Some((index, b));
            }
            self.next_chunk = self.next_chunk.checked_sub(1)?;
            self.walk
                .read_chunk(self.thread, self.next_chunk, &mut self.buf);
            if self.buf.is_empty() {
                return None;
            }
        }
    }
}

impl Iterator for BlocksRev<'_, '_> {
    type Item = Block;

    #[inline]
    fn next(&mut self) -> Option<Block> {
        self.next_indexed().map(|(_, b)| b)
    }
}

/// One step of a walk in time order ([`Walk::pre_order`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// A block begins: its descendants follow, then its [`Step::Exit`].
    Enter(Block),
    /// A block ends.
    Exit(Block),
}

/// A thread's blocks in time order ([`Walk::pre_order`]).
#[derive(Debug)]
pub struct PreOrder<'w, 'a> {
    walk: &'w Walk<'a>,
    thread: &'w ThreadWalk<'a>,
    /// The crossing blocks ([`Walk::crossing`]) and the next one to enter.
    far: Vec<(u64, Block)>,
    far_at: usize,
    /// The chunk in `buf` and its first index.
    chunk: usize,
    chunk_start: u64,
    buf: Vec<Block>,
    /// The blocks of the chunk whose subtree begins in it: (that index, the block's place in
    /// `buf`), in order of the index, outermost first; and the next one to enter.
    local: Vec<(u64, u32)>,
    local_at: usize,
    /// The index of the next block to leave.
    next: u64,
}

impl PreOrder<'_, '_> {
    /// Reads the next chunk and nests its blocks: walking back over it as [`Walk::blocks_rev`]
    /// does, a block closes where its subtree begins; one that is still open at the chunk's
    /// start is closed there unless it holds the block before the chunk (then its subtree
    /// crosses the start, and the backward walk over the thread found it).
    fn load(&mut self) {
        let before = self.buf.last().copied();
        self.chunk_start = self.next;
        self.walk.read_chunk(self.thread, self.chunk, &mut self.buf);
        self.chunk += 1;
        self.local.clear();
        self.local_at = 0;
        let start = self.chunk_start;
        let mut open: Vec<(u32, bool)> = Vec::new();
        for (li, b) in self.buf.iter().enumerate().rev() {
            while let Some(&(x, kids)) = open.last()
                && !holds(self.buf[x as usize].begin, kids, b)
            {
                open.pop();
                self.local.push((start + li as u64 + 1, x));
            }
            if let Some(parent) = open.last_mut() {
                parent.1 = true;
            }
            open.push((li as u32, false));
        }
        while let Some(&(x, kids)) = open.last() {
            if before.is_some_and(|p| holds(self.buf[x as usize].begin, kids, &p)) {
                break;
            }
            open.pop();
            self.local.push((start, x));
        }
        self.local.reverse();
    }
}

impl Iterator for PreOrder<'_, '_> {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        if self.next >= self.chunk_start + self.buf.len() as u64 {
            if self.next >= self.thread.blocks {
                return None;
            }
            self.load();
            if self.buf.is_empty() {
                return None;
            }
        }
        let j = self.next;
        if let Some(&(s, b)) = self.far.get(self.far_at)
            && s == j
        {
            self.far_at += 1;
            return Some(Step::Enter(b));
        }
        if let Some(&(s, x)) = self.local.get(self.local_at)
            && s == j
        {
            self.local_at += 1;
            return Some(Step::Enter(self.buf[x as usize]));
        }
        self.next += 1;
        Some(Step::Exit(self.buf[(j - self.chunk_start) as usize]))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::Step;
    use crate::read::scan::holds;
    use crate::{Capture, Convention, Descriptor, Mode, Record, RecordBody, Thread, Version};

    /// A thread section: its thread id and its records as (begin, end, descriptor).
    type Section = (u64, Vec<(u64, u64, u32)>);

    /// A capture of `threads` sections whose capture begins at `begin_time`.
    fn capture(begin_time: u64, threads: &[Section]) -> Vec<u8> {
        let mut c = Capture {
            version: Version::V2_1_0,
            begin_time,
            end_time: 1000,
            ..Capture::default()
        };
        for (id, name) in [(0u32, "a"), (1, "b")] {
            c.descriptors.push(Some(Box::new(Descriptor {
                id,
                block_type: 1,
                name: name.as_bytes().to_vec(),
                ..Descriptor::default()
            })));
        }
        for (id, records) in threads {
            c.threads.push(Thread {
                id: *id,
                name: None,
                context_switches: vec![],
                records: records
                    .iter()
                    .map(|&(begin, end, descriptor)| Record {
                        begin,
                        end,
                        descriptor,
                        body: RecordBody::Named(vec![]),
                    })
                    .collect(),
            });
        }
        c.update_counters(Convention::Runtime);
        c.to_bytes().expect("writable")
    }

    /// (entering, record offset, begin, end, descriptor) of every step.
    type Steps = Vec<(bool, u64, u64, u64, u32)>;

    /// The tree's pre-order, each node entered, then its children, then left.
    fn tree_steps(data: &[u8]) -> Vec<Steps> {
        let view = crate::parse(data).expect("parse");
        let tree = view.tree().expect("tree");
        let mut all = Vec::new();
        for th in &tree.threads {
            let offsets: Vec<u64> = tree.node_records(&view, th).map(|r| r.offset).collect();
            let step = |enter, i: u32| {
                let n = th.nodes[i as usize];
                (enter, offsets[i as usize], n.begin, n.end, n.descriptor)
            };
            let mut out = Vec::new();
            // (node, entered): an explicit stack, for deep chains.
            let mut todo: Vec<(u32, bool)> = th.roots.iter().rev().map(|&r| (r, false)).collect();
            while let Some((i, entered)) = todo.pop() {
                if entered {
                    out.push(step(false, i));
                    continue;
                }
                out.push(step(true, i));
                todo.push((i, true));
                todo.extend(th.children_rev(i).map(|c| (c, false)));
            }
            all.push(out);
        }
        all
    }

    /// The walk's pre-order, and the subtree starts its backward walk finds, per thread.
    fn walk_steps(data: &[u8], chunk: u64, grow: bool) -> (Vec<Steps>, Vec<Vec<u64>>) {
        let view = crate::parse(data).expect("parse");
        let walk = view.walk_with(chunk, grow).expect("walk");
        let mut steps = Vec::new();
        let mut starts = Vec::new();
        for th in &walk.threads {
            steps.push(
                walk.pre_order(th)
                    .map(|s| match s {
                        Step::Enter(b) => (true, b.offset, b.begin, b.end, b.descriptor),
                        Step::Exit(b) => (false, b.offset, b.begin, b.end, b.descriptor),
                    })
                    .collect(),
            );
            let mut start = vec![u64::MAX; th.blocks as usize];
            let mut open: Vec<(u64, u64, bool)> = Vec::new();
            let mut rev = walk.blocks_rev(th);
            while let Some((i, b)) = rev.next_indexed() {
                while let Some(&(x, begin, kids)) = open.last()
                    && !holds(begin, kids, &b)
                {
                    open.pop();
                    start[x as usize] = i + 1;
                }
                if let Some(o) = open.last_mut() {
                    o.2 = true;
                }
                open.push((i, b.begin, false));
            }
            for (x, _, _) in open {
                start[x as usize] = 0;
            }
            starts.push(start);
        }
        (steps, starts)
    }

    fn tree_starts(data: &[u8]) -> Vec<Vec<u64>> {
        let view = crate::parse(data).expect("parse");
        let tree = view.tree().expect("tree");
        tree.threads
            .iter()
            .map(|th| {
                th.nodes
                    .iter()
                    .map(|n| u64::from(n.subtree_start))
                    .collect()
            })
            .collect()
    }

    fn check(data: &[u8]) {
        let expected = tree_steps(data);
        let starts = tree_starts(data);
        for (chunk, grow) in [
            (1, false),
            (2, false),
            (3, false),
            (5, false),
            (1, true),
            (4096, true),
        ] {
            let (steps, got) = walk_steps(data, chunk, grow);
            assert_eq!(got, starts, "subtree starts, chunk {chunk}");
            assert_eq!(steps, expected, "pre-order, chunk {chunk}");
        }
    }

    #[test]
    fn nesting_of_hand_picked_shapes() {
        // Frames in a block that spans the thread; adoption of the last root only (overlap);
        // equal times; a record before the capture's begin (dropped); two sections of a thread.
        check(&capture(
            10,
            &[
                (
                    1,
                    vec![
                        (11, 12, 0),
                        (13, 14, 0),
                        (10, 15, 1),
                        (16, 17, 0),
                        (10, 20, 1),
                    ],
                ),
                (
                    2,
                    vec![(5, 30, 0), (20, 40, 1), (40, 40, 0), (40, 40, 0), (1, 9, 0)],
                ),
                (1, vec![(30, 31, 0), (19, 35, 1), (0, 50, 0)]),
                (3, vec![]),
            ],
        ));
    }

    #[test]
    fn a_deep_chain_and_a_wide_block() {
        let chain: Vec<_> = (0..300u64).rev().map(|d| (d, 1000 - d, 0)).collect();
        let mut wide: Vec<_> = (0..300u64).map(|i| (2 * i + 1, 2 * i + 2, 1)).collect();
        wide.push((0, 700, 0));
        check(&capture(0, &[(1, chain), (2, wide)]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Whatever the records' times (overlaps, ties, any order), the walk nests them as the
        /// tree does, whatever the chunk size.
        #[test]
        fn the_walk_nests_as_the_tree(
            begin_time in 0u64..6,
            threads in prop::collection::vec(
                (0u64..3, prop::collection::vec((0u64..40, 0u64..12, 0u32..2), 0..40)),
                0..4,
            ),
        ) {
            let threads: Vec<Section> = threads
                .into_iter()
                .map(|(id, r)| (id, r.into_iter().map(|(b, d, k)| (b, b + d, k)).collect()))
                .collect();
            check(&capture(begin_time, &threads));
        }
    }

    #[test]
    fn strict_walks_refuse_the_depth_limit_as_the_tree() {
        for depth in [255u64, 256] {
            let chain: Vec<_> = (0..depth).rev().map(|d| (d, 1000 - d, 0)).collect();
            let data = capture(0, &[(1, chain)]);
            let view = crate::parse_with(&data, Mode::Strict).expect("parse");
            assert_eq!(
                view.walk().map(|w| w.oddities),
                view.tree().map(|t| t.oddities),
                "{depth}"
            );
        }
    }
}
