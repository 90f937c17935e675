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
use std::collections::HashMap;

use super::tree::BlockTotals;
use super::{CaptureView, RawRecord, RecordIter, TailRef, ThreadView};
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
/// same order, the same descriptors (runtime names included), the same times, the same
/// oddities (the depth limit included: the forward pass nests each thread's top-level entries
/// as the C++ reader does, keeping only those that can still change a later nesting's height,
/// at most the nesting's height of them; in strict mode it is refused as the tree refuses it).
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
    /// Everything odd about the file (header, counters, depth limit, tail), as the tree's.
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
    /// The top-level entries that can still change a nesting's height ([`Roots`]), for the
    /// depth limit.
    roots: Roots,
}

/// One file section of a thread.
#[derive(Debug, Clone, Copy)]
struct Section<'a> {
    view: ThreadView<'a>,
    /// The C++ block index of its first kept context switch.
    first_switch: u64,
    /// The C++ block index of its first kept record, and that record's index among the
    /// thread's blocks.
    first_block: u64,
    first_node: u64,
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

    /// The number of chunks its blocks are read in.
    fn chunks(&self) -> usize {
        self.marks.len()
    }

    /// The C++ reader's block index of its `index`-th block (its position among all kept
    /// context switches and records of the capture: the tree's and the converter's `id`).
    pub fn block_index(&self, index: u64) -> u32 {
        let s = self.sections.partition_point(|s| s.first_node <= index);
        match s.checked_sub(1).and_then(|s| self.sections.get(s)) {
            Some(s) => (s.first_block + (index - s.first_node)) as u32,
            None => index as u32,
        }
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
            switches: 0,
            chunk,
            grow,
        };
        let s = self.scan(&mut marker)?;
        let mut threads = marker.threads;
        for th in &mut threads {
            th.roots = Roots::default();
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
            roots: Roots::default(),
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
        let th = &mut self.threads[thread];
        th.sections.push(Section {
            view: *view,
            first_switch: first_block - self.switches,
            first_block,
            first_node: th.blocks,
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
        th.roots.nest(&block)
    }
}

/// The C++ reader's top-level entries of a thread as it reads, reduced to what can still change
/// the height of a later block's nesting, for the depth limit ([`adopted_from`]): a record
/// adopts the last entry, then every earlier one while it begins at or before them, and its
/// height is one more than the highest adopted. Two rules drop entries without changing any
/// later height: an entry (not the last) that begins at or after the next one is adopted
/// whenever that one is, so the two merge (the later begin, the larger height); an entry no
/// higher than the next one, and beginning after the one before it, is adopted only with the
/// next one and stops no walk back that the one before would not stop, so it goes. What stays
/// has heights that fall from the first entry to the last: at most the nesting's height, not
/// one entry per top-level block (a thread of a million frames keeps a few entries).
#[derive(Debug, Clone, Default)]
pub(crate) struct Roots {
    /// (begin, height) of the entries, in file order.
    entries: Vec<(u64, u32)>,
    /// The last entry's end.
    last_end: u64,
}

impl Roots {
    /// Nests `block` as the reader does; true when the adopted entries' height is the depth limit.
    #[inline]
    pub(crate) fn nest(&mut self, block: &Block) -> bool {
        let e = &mut self.entries;
        let n = e.len();
        let k = adopted_from(block.begin, n, self.last_end, |k| e[k].0);
        let mut height = 0;
        let mut limit = false;
        if k < n {
            height = e[k..].iter().map(|r| r.1).max().unwrap_or(0);
            limit = height == DEPTH_LIMIT;
            height += 1;
            e.truncate(k);
        }
        e.push((block.begin, height));
        self.last_end = block.end;
        self.settle();
        limit
    }

    /// Applies the two rules before the new last entry, walking back while an entry changes.
    fn settle(&mut self) {
        let e = &mut self.entries;
        let Some(mut p) = e.len().checked_sub(2) else {
            return;
        };
        loop {
            // The merge rule, among entries that are not last.
            let mut grew = false;
            while p > 0 && e[p - 1].0 >= e[p].0 {
                e[p].1 = e[p].1.max(e[p - 1].1);
                e.remove(p - 1);
                p -= 1;
                grew = true;
            }
            if e[p].1 <= e[p + 1].1 {
                // Begins rise before `p` (the merge rule held there): the dropping rule.
                e.remove(p);
            } else if !grew {
                return;
            }
            // Either `p` went, or it grew higher: the entry before it may be dominated now.
            let Some(q) = p.checked_sub(1) else {
                return;
            };
            p = q;
        }
    }

    /// How many entries it keeps.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
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

    /// Thread number `thread`'s blocks in file order (the order of [`ThreadTree::flat`](crate::ThreadTree::flat)),
    /// each with its block index, its parent's and its depth, as the tree gives them. A parent
    /// comes after its children, so one walk back over the thread first keeps, per chunk, the
    /// blocks open at its end (its blocks' ancestors outside it); each chunk is then read
    /// forwards and nested back from them. Memory: two chunks, and the open blocks per chunk
    /// (at most the nesting depth each). Panics if there is no thread `thread`.
    pub fn flat(&self, thread: usize) -> Flat<'_, 'a> {
        Flat {
            walk: self,
            state: FlatState::new(self, thread),
        }
    }

    /// Count, total and self time per descriptor over every thread, in descriptor id order
    /// (descriptors no block uses are left out), as [`BlockTree::totals`](crate::BlockTree::totals)
    /// gives them: each thread walked back once, with the open blocks' children's time.
    pub fn totals(&self) -> Vec<BlockTotals> {
        /// An open block: (begin, has children, descriptor, duration, children's duration).
        type Open = (u64, bool, u32, u64, u64);
        let mut by_id: HashMap<u32, BlockTotals> = HashMap::new();
        let mut close = |o: Open| {
            let t = by_id.entry(o.2).or_insert(BlockTotals {
                descriptor: o.2,
                ..BlockTotals::default()
            });
            t.count += 1;
            t.total = t.total.saturating_add(o.3);
            t.self_time = t.self_time.saturating_add(o.3.saturating_sub(o.4));
        };
        let mut open: Vec<Open> = Vec::new();
        for th in &self.threads {
            for b in self.blocks_rev(th) {
                while let Some(&o) = open.last()
                    && !holds(o.0, o.1, &b)
                {
                    open.pop();
                    close(o);
                }
                let duration = b.end.saturating_sub(b.begin);
                if let Some(parent) = open.last_mut() {
                    parent.1 = true;
                    parent.4 = parent.4.saturating_add(duration);
                }
                open.push((b.begin, false, b.descriptor, duration, 0));
            }
            while let Some(o) = open.pop() {
                close(o);
            }
        }
        let mut totals: Vec<BlockTotals> = by_id.into_values().collect();
        totals.sort_unstable_by_key(|t| t.descriptor);
        totals
    }

    /// The synthetic descriptors, one per distinct runtime name, whose ids follow the file's
    /// ([`file_descriptors_len`](Self::file_descriptors_len)).
    pub fn runtime_descriptors(&self) -> &[TreeDescriptor<'a>] {
        self.descriptors.runtime()
    }

    /// The number of the file's descriptor slots (the first synthetic id).
    pub fn file_descriptors_len(&self) -> usize {
        self.descriptors.file_len()
    }

    /// `thread`'s kept context switches, in file order.
    pub fn context_switches<'w>(
        &'w self,
        thread: &'w ThreadWalk<'a>,
    ) -> impl Iterator<Item = ContextSwitchNode<'a>> + 'w {
        self.context_switches_owned(thread)
    }

    /// [`context_switches`](Self::context_switches), borrowing the input only (the thread's
    /// few sections copied), for an owner of the walk.
    pub(crate) fn context_switches_owned(
        &self,
        thread: &ThreadWalk<'a>,
    ) -> impl Iterator<Item = ContextSwitchNode<'a>> + use<'a> {
        let begin_time = self.begin_time;
        let conv = self.converter;
        thread.sections.clone().into_iter().flat_map(move |s| {
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

/// One block of a thread with its place in the thread's tree, as [`Walk::flat`] gives them in
/// file order (the tree's node order: a parent after its children).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatBlock {
    /// Its index among the thread's blocks.
    pub index: u64,
    /// Its block index (the C++ reader's, see [`ThreadWalk::block_index`]).
    pub id: u32,
    /// The block index of its parent (`None` for a top-level block).
    pub parent: Option<u32>,
    /// Its depth (0 for a top-level block).
    pub depth: u32,
    /// The block.
    pub block: Block,
}

/// A block still open in a walk back: one of the ancestors of the next block met.
#[derive(Debug, Clone, Copy)]
struct Open {
    index: u64,
    begin: u64,
    kids: bool,
}

/// Nests the block `b` of index `i`, met walking back, under the `open` ones; gives its parent's
/// index and its depth.
#[inline]
fn nest_back(open: &mut Vec<Open>, i: u64, b: &Block) -> (Option<u64>, u32) {
    while open.last().is_some_and(|o| !holds(o.begin, o.kids, b)) {
        open.pop();
    }
    let depth = open.len() as u32;
    let parent = open.last_mut().map(|o| {
        o.kids = true;
        o.index
    });
    open.push(Open {
        index: i,
        begin: b.begin,
        kids: false,
    });
    (parent, depth)
}

/// The state of a walk in file order over one thread ([`Walk::flat`]), apart from the walk, so
/// that an owner of the walk can hold it.
#[derive(Debug, Clone)]
pub(crate) struct FlatState {
    thread: usize,
    /// Per chunk, the blocks open when a walk back enters it (its blocks' outside ancestors).
    entries: Vec<Vec<Open>>,
    chunk: usize,
    buf: Vec<Block>,
    out: Vec<FlatBlock>,
    at: usize,
}

impl FlatState {
    /// Walks thread `thread` back once, keeping per chunk the ancestors open at its end.
    pub(crate) fn new(walk: &Walk<'_>, thread: usize) -> FlatState {
        let th = &walk.threads[thread];
        let mut entries = vec![Vec::new(); th.chunks()];
        let mut open = Vec::new();
        let mut current = usize::MAX;
        let mut rev = walk.blocks_rev(th);
        while let Some((i, b)) = rev.next_indexed() {
            let c = (i / th.chunk) as usize;
            if c != current {
                current = c;
                if let Some(e) = entries.get_mut(c) {
                    e.clone_from(&open);
                }
            }
            nest_back(&mut open, i, &b);
        }
        FlatState {
            thread,
            entries,
            chunk: 0,
            buf: Vec::new(),
            out: Vec::new(),
            at: 0,
        }
    }

    /// The next block in file order.
    pub(crate) fn next(&mut self, walk: &Walk<'_>) -> Option<FlatBlock> {
        if self.at == self.out.len() {
            self.load(walk)?;
        }
        let b = self.out.get(self.at).copied();
        self.at += 1;
        b
    }

    /// Reads the next chunk and nests its blocks walking back from the ancestors open at its end.
    fn load(&mut self, walk: &Walk<'_>) -> Option<()> {
        let th = &walk.threads[self.thread];
        if self.chunk >= th.chunks() {
            return None;
        }
        walk.read_chunk(th, self.chunk, &mut self.buf);
        let start = self.chunk as u64 * th.chunk;
        let mut open = std::mem::take(&mut self.entries[self.chunk]);
        self.chunk += 1;
        self.out.clear();
        self.at = 0;
        for (k, b) in self.buf.iter().enumerate().rev() {
            let i = start + k as u64;
            let (parent, depth) = nest_back(&mut open, i, b);
            self.out.push(FlatBlock {
                index: i,
                id: th.block_index(i),
                parent: parent.map(|p| th.block_index(p)),
                depth,
                block: *b,
            });
        }
        self.out.reverse();
        (!self.out.is_empty()).then_some(())
    }
}

/// A thread's blocks in file order with their parents and depths ([`Walk::flat`]).
#[derive(Debug)]
pub struct Flat<'w, 'a> {
    walk: &'w Walk<'a>,
    state: FlatState,
}

impl Iterator for Flat<'_, '_> {
    type Item = FlatBlock;

    fn next(&mut self) -> Option<FlatBlock> {
        self.state.next(self.walk)
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

    use super::{Roots, Step};
    use crate::Block;
    use crate::read::scan::{adopted_from, holds};
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
            check_flat(data, chunk, grow);
        }
    }

    /// (block index, parent, depth, begin, end, descriptor, record offset) of a thread's blocks.
    type FlatRows = Vec<(u32, Option<u32>, u32, u64, u64, u32, u64)>;

    /// The walk's blocks in file order, totals and oddities are the tree's.
    fn check_flat(data: &[u8], chunk: u64, grow: bool) {
        let view = crate::parse(data).expect("parse");
        let tree = view.tree().expect("tree");
        let walk = view.walk_with(chunk, grow).expect("walk");
        let expected: Vec<FlatRows> = tree
            .threads
            .iter()
            .map(|th| {
                th.flat()
                    .zip(tree.node_records(&view, th))
                    .map(|(f, r)| {
                        let n = f.node;
                        (
                            f.id,
                            f.parent,
                            f.depth,
                            n.begin,
                            n.end,
                            n.descriptor,
                            r.offset,
                        )
                    })
                    .collect()
            })
            .collect();
        let got: Vec<FlatRows> = (0..walk.threads.len())
            .map(|t| {
                walk.flat(t)
                    .map(|f| {
                        let b = f.block;
                        (
                            f.id,
                            f.parent,
                            f.depth,
                            b.begin,
                            b.end,
                            b.descriptor,
                            b.offset,
                        )
                    })
                    .collect()
            })
            .collect();
        assert_eq!(got, expected, "flat, chunk {chunk}");
        assert_eq!(walk.totals(), tree.totals(), "totals, chunk {chunk}");
        assert_eq!(walk.oddities, tree.oddities, "oddities, chunk {chunk}");
        assert_eq!(walk.runtime_descriptors(), tree.runtime_descriptors());
    }

    /// The heights of `blocks`' nestings, as a plain list of every top-level entry gives them.
    fn plain_heights(blocks: &[(u64, u64)]) -> Vec<u32> {
        let mut roots: Vec<(u64, u64, u32)> = Vec::new();
        blocks
            .iter()
            .map(|&(begin, end)| {
                let n = roots.len();
                let last_end = roots.last().map_or(0, |r| r.1);
                let k = adopted_from(begin, n, last_end, |k| roots[k].0);
                let mut h = 0;
                if k < n {
                    h = roots[k..].iter().map(|r| r.2).max().unwrap_or(0) + 1;
                    roots.truncate(k);
                }
                roots.push((begin, end, h));
                h
            })
            .collect()
    }

    #[test]
    fn a_million_frames_keep_a_few_roots() {
        let mut roots = Roots::default();
        let mut most = 0;
        for f in 0..1_000_000u64 {
            let t = f * 10;
            for (b, e) in [(t + 1, t + 2), (t + 3, t + 4), (t, t + 5)] {
                roots.nest(&Block {
                    begin: b,
                    end: e,
                    descriptor: 0,
                    offset: 0,
                });
                most = most.max(roots.len());
            }
        }
        assert!(most <= 3, "{most}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The reduced top-level entries give every nesting the height the full list gives,
        /// and keep no more entries than the heights allow.
        #[test]
        fn reduced_roots_nest_as_the_full_list(
            blocks in prop::collection::vec((0u64..30, 0u64..10), 0..60),
        ) {
            let blocks: Vec<(u64, u64)> = blocks.into_iter().map(|(b, d)| (b, b + d)).collect();
            let heights = plain_heights(&blocks);
            let mut roots = Roots::default();
            for (&(begin, end), &h) in blocks.iter().zip(&heights) {
                let block = Block { begin, end, descriptor: 0, offset: 0 };
                roots.nest(&block);
                prop_assert_eq!(roots.entries.last().map(|e| e.1), Some(h));
                // Heights fall from the first entry to the last.
                prop_assert!(roots.entries.windows(2).all(|w| w[0].1 > w[1].1), "{:?}", roots.entries);
            }
        }
    }

    #[test]
    fn tolerant_walks_report_the_depth_limit_as_the_tree() {
        for depth in [254u64, 255, 256, 400] {
            let chain: Vec<_> = (0..depth).rev().map(|d| (d, 1000 - d, 0)).collect();
            let mut wide: Vec<_> = (0..300u64).map(|i| (2 * i + 1, 2 * i + 2, 1)).collect();
            wide.push((0, 700, 0));
            check(&capture(0, &[(1, chain), (2, wide)]));
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
