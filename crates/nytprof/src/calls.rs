//! The call paths `nytprofcalls` prints, built from a profile's `<` (SUB_RETURN) records.
//!
//! The profiler writes a `<` record each time a sub returns (`calls=1`, the default, or more):
//! the profiler's call depth of the returning sub, its inclusive and exclusive ticks and its
//! name. `nytprofcalls` (Devel::NYTProf 6.12) builds a call tree from them: a stack of pending
//! levels, where a return at depth `d` first pads the stack with unnamed levels until it holds
//! `d + 1` entries (the root included), then pops the top level, names it after the returning
//! sub, adds the exclusive ticks to it and merges it (with the callees that returned inside it)
//! into the calling level under that name. Each path of the finished tree is one line
//! `sub;sub;sub value` of its output, the value being the summed exclusive ticks (`--calls`: the
//! number of returns). [`CallPaths`] does the same, and also sums the inclusive ticks.
//!
//! Differences from `nytprofcalls`, all on input the profiler does not write:
//! - `nytprofcalls` rewrites `(eval N)[file:line]` to `(eval 0)` in names before building the
//!   tree, merging every eval of a line; [`CallPaths`] keeps the names as written (the profile
//!   model maps them as Data.pm collapses evals). [`nytprofcalls_name`] is the rewrite.
//! - A return at depth 0 would pop the root (`nytprofcalls` dies with `panic`): it counts as
//!   depth 1.
//! - Levels never returned from at the end of the stream make `nytprofcalls` die with `panic`;
//!   here the callees that returned inside them join the nearest level below (the stack is
//!   unwound as if the unnamed levels were not there).
//!
//! Memory is one node per distinct call path plus the pending levels that hold something (a
//! depth of millions in a hostile record costs nothing until a level is filled); each return
//! costs O(1) plus its share of merging, which always moves the smaller set of callees into the
//! larger, so that the total work is O(r log r) for r returns.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};

/// A multiply-rotate hasher (as rustc's FxHasher) for the small integer keys of the tree: a
/// return costs a few lookups, and SipHash would dominate them.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Whole words read as such, and the tail folded byte by byte (the same little-endian
        // word as a copy into a zeroed one): a copy of a variable length is a call to memcpy,
        // and names are hashed once per `<` record.
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(w));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            self.write_u64(tail.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b)));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(u64::from(v));
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
}

pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// No name: a pending level's node.
const UNNAMED: u32 = u32::MAX;

/// No node: the end of a list of callees.
const NO_NODE: u32 = u32::MAX;

/// One node: a named call path (or a pending, unnamed level).
#[derive(Debug, Clone, Copy)]
struct Node {
    name: u32,
    excl: f64,
    incl: f64,
    returns: u64,
    /// Its list of callees ([`CallPaths::lists`]).
    callees: u32,
    /// The next callee of the list it is on, [`NO_NODE`] at its end.
    next: u32,
}

/// A list of callees: the first and how many. A merge moves the shorter of two lists.
#[derive(Debug, Clone, Copy)]
struct Callees {
    first: u32,
    len: u32,
}

impl Callees {
    const EMPTY: Callees = Callees {
        first: NO_NODE,
        len: 0,
    };
}

/// What was summed for one call path.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct PathValues {
    /// Exclusive ticks of the returns at this path (the value `nytprofcalls` prints).
    pub excl_ticks: f64,
    /// Inclusive ticks of the returns at this path.
    pub incl_ticks: f64,
    /// Number of returns at this path (`nytprofcalls --calls`).
    pub returns: u64,
}

/// The call tree of a profile's `<` records, as `nytprofcalls` builds it (see the
/// [module docs](self)).
#[derive(Debug)]
pub struct CallPaths {
    names: Vec<Box<str>>,
    /// Names by their bytes as the records hold them: `'` strings, then `"` (UTF-8) strings.
    name_index: [FastMap<Box<[u8]>, u32>; 2],
    /// The last name looked up, with its bytes and tag: a sub often returns many times in a
    /// row.
    last_name: Option<(u32, bool)>,
    last_bytes: Vec<u8>,
    /// Node 0 is the root.
    nodes: Vec<Node>,
    free: Vec<u32>,
    /// Lists of callees, one per node; a list outlives its node when a merge gives it to the
    /// node merged into.
    lists: Vec<Callees>,
    free_lists: Vec<u32>,
    /// The callee of each name on each list: (list, name) -> node. One table for the whole tree
    /// rather than one per node: most nodes have one callee or none.
    callee_index: FastMap<(u32, u32), u32>,
    /// Pending levels holding a node: (stack index, node), ascending; the root is index 0 and is
    /// not listed.
    levels: Vec<(u64, u32)>,
    /// Stack entries, the root included.
    len: u64,
    returns: u64,
    merge_steps: u64,
    /// The work list of [`CallPaths::adopt`], empty between calls.
    work: Vec<(u32, u32)>,
}

impl Default for CallPaths {
    fn default() -> Self {
        CallPaths::new()
    }
}

impl CallPaths {
    /// An empty tree.
    pub fn new() -> CallPaths {
        CallPaths {
            names: Vec::new(),
            name_index: [FastMap::default(), FastMap::default()],
            last_name: None,
            last_bytes: Vec::new(),
            nodes: vec![Node {
                name: UNNAMED,
                excl: 0.0,
                incl: 0.0,
                returns: 0,
                callees: 0,
                next: NO_NODE,
            }],
            free: Vec::new(),
            lists: vec![Callees::EMPTY],
            free_lists: Vec::new(),
            callee_index: FastMap::default(),
            levels: Vec::new(),
            len: 1,
            returns: 0,
            merge_steps: 0,
            work: Vec::new(),
        }
    }

    /// Interns a name given as the record's bytes (`utf8`: a `"` string), decoded once.
    fn intern(&mut self, bytes: &[u8], utf8: bool) -> u32 {
        if let Some((id, last_utf8)) = self.last_name
            && last_utf8 == utf8
            && self.last_bytes == bytes
        {
            return id;
        }
        let index = &mut self.name_index[usize::from(utf8)];
        let id = match index.get(bytes) {
            Some(&id) => id,
            None => {
                // Names are at most one per record read, far below u32::MAX.
                let id = self.names.len() as u32;
                self.names
                    .push(crate::read::decode_text(bytes, utf8).into_boxed_str());
                index.insert(bytes.into(), id);
                id
            }
        };
        self.last_name = Some((id, utf8));
        self.last_bytes.clear();
        self.last_bytes.extend_from_slice(bytes);
        id
    }

    fn alloc(&mut self, name: u32) -> u32 {
        let callees = match self.free_lists.pop() {
            Some(list) => {
                self.lists[list as usize] = Callees::EMPTY;
                list
            }
            None => {
                self.lists.push(Callees::EMPTY);
                (self.lists.len() - 1) as u32
            }
        };
        let node = Node {
            name,
            excl: 0.0,
            incl: 0.0,
            returns: 0,
            callees,
            next: NO_NODE,
        };
        match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        }
    }

    /// The node of the pending level at stack index `index` (which is the top), made if it
    /// holds nothing yet.
    fn level_node(&mut self, index: u64) -> u32 {
        if index == 0 {
            return 0;
        }
        if let Some(&(i, node)) = self.levels.last()
            && i == index
        {
            return node;
        }
        let node = self.alloc(UNNAMED);
        self.levels.push((index, node));
        node
    }

    /// Adds one `<` record: the sub `name` returned from profiler depth `depth` after
    /// `incl_ticks` inclusive and `excl_ticks` exclusive ticks.
    pub fn add_return(&mut self, depth: u32, incl_ticks: f64, excl_ticks: f64, name: &str) {
        // A `"` string: the text is its UTF-8 bytes.
        self.add_return_raw(depth, incl_ticks, excl_ticks, name.as_bytes(), true);
    }

    /// [`CallPaths::add_return`] with the name as the record holds it: its bytes, and whether
    /// its string tag said UTF-8 (else each byte is a Latin-1 character, as Perl reads it).
    pub fn add_return_raw(
        &mut self,
        depth: u32,
        incl_ticks: f64,
        excl_ticks: f64,
        name: &[u8],
        utf8: bool,
    ) {
        self.returns += 1;
        let name = self.intern(name, utf8);
        let depth = u64::from(depth.max(1));
        if self.len <= depth {
            self.len = depth + 1;
        }
        let top = self.len - 1;
        let content = match self.levels.last() {
            Some(&(i, node)) if i == top => {
                self.levels.pop();
                Some(node)
            }
            _ => None,
        };
        self.len -= 1;
        let caller = self.level_node(self.len - 1);
        let node = match content {
            Some(node) => {
                self.nodes[node as usize].name = name;
                node
            }
            None => {
                // The usual return: a call with no callees, to a path seen before.
                if let Some(&existing) = self.callee(caller, name) {
                    self.merge_steps += 1;
                    let n = &mut self.nodes[existing as usize];
                    n.excl += excl_ticks;
                    n.incl += incl_ticks;
                    n.returns += 1;
                    return;
                }
                self.alloc(name)
            }
        };
        let n = &mut self.nodes[node as usize];
        n.excl += excl_ticks;
        n.incl += incl_ticks;
        n.returns += 1;
        self.adopt(caller, node);
    }

    /// The callee of `node` named `name`.
    fn callee(&self, node: u32, name: u32) -> Option<&u32> {
        self.callee_index
            .get(&(self.nodes[node as usize].callees, name))
    }

    /// Puts the detached `node` on `list`, which has no callee of its name.
    fn link(&mut self, list: u32, node: u32) {
        let l = &mut self.lists[list as usize];
        self.nodes[node as usize].next = l.first;
        l.first = node;
        l.len += 1;
        self.callee_index
            .insert((list, self.nodes[node as usize].name), node);
    }

    /// Empties `list` (freed), returning its nodes, now detached.
    fn unlink_all(&mut self, list: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.lists[list as usize].len as usize);
        self.unlink_all_into(list, |node| out.push(node));
        out
    }

    /// Empties `list` (freed), giving its nodes, now detached, to `out` in list order.
    #[inline]
    fn unlink_all_into(&mut self, list: u32, mut out: impl FnMut(u32)) {
        let mut at = std::mem::replace(&mut self.lists[list as usize], Callees::EMPTY).first;
        while at != NO_NODE {
            out(at);
            let n = &self.nodes[at as usize];
            self.callee_index.remove(&(list, n.name));
            at = n.next;
        }
        self.free_lists.push(list);
    }

    /// Makes the named, detached `node` a callee of `parent`, merging it into a callee of the
    /// same name.
    fn adopt(&mut self, parent: u32, node: u32) {
        // The usual case, a callee new to its caller, needs no work list.
        if self
            .callee(parent, self.nodes[node as usize].name)
            .is_none()
        {
            self.merge_steps += 1;
            self.link(self.nodes[parent as usize].callees, node);
            return;
        }
        // A work list kept between calls: many returns merge, and each would allocate one.
        let mut work = std::mem::take(&mut self.work);
        work.push((parent, node));
        while let Some((parent, node)) = work.pop() {
            self.merge_steps += 1;
            let name = self.nodes[node as usize].name;
            let Some(&existing) = self.callee(parent, name) else {
                self.link(self.nodes[parent as usize].callees, node);
                continue;
            };
            let src = self.nodes[node as usize];
            self.free.push(node);
            let dst = &mut self.nodes[existing as usize];
            dst.excl += src.excl;
            dst.incl += src.incl;
            dst.returns += src.returns;
            // The shorter list of callees moves into the longer one, which `existing` keeps.
            let mut moving = src.callees;
            if self.lists[moving as usize].len > self.lists[dst.callees as usize].len {
                std::mem::swap(&mut moving, &mut dst.callees);
            }
            self.unlink_all_into(moving, |child| work.push((existing, child)));
        }
        self.work = work;
    }

    /// Unwinds the levels never returned from: their callees join the level below. Called by
    /// the readers at the end of the stream; calling it again changes nothing.
    pub fn finish(&mut self) {
        while let Some((_, node)) = self.levels.pop() {
            let below = self.levels.last().map_or(0, |&(_, n)| n);
            let children = self.unlink_all(self.nodes[node as usize].callees);
            self.free.push(node);
            for child in children {
                self.adopt(below, child);
            }
        }
        self.len = 1;
    }

    /// The number of `<` records added.
    pub fn returns(&self) -> u64 {
        self.returns
    }

    /// The work done placing returned calls and their callees so far: one step per node placed
    /// under or merged into a caller. At most O(r log r) for r returns, since a merge moves the
    /// smaller set of callees into the larger.
    pub fn merge_steps(&self) -> u64 {
        self.merge_steps
    }

    /// The number of distinct call paths.
    pub fn len(&self) -> usize {
        self.nodes.len() - self.free.len() - 1 - self.levels.len()
    }

    /// True when no sub returned.
    pub fn is_empty(&self) -> bool {
        self.lists[self.nodes[0].callees as usize].len == 0
    }

    /// Calls `f` with every call path of the tree (outermost sub first) and its values, parents
    /// before their callees. Pending levels are left out: call [`CallPaths::finish`] first.
    pub fn for_each_path(&self, mut f: impl FnMut(&[&str], PathValues)) {
        let mut path: Vec<&str> = Vec::new();
        self.for_each_node(|depth, name, values| {
            path.truncate(depth);
            path.push(self.name(name));
            f(&path, values);
        });
    }

    /// Calls `f` with every node of the tree, depth first (parents before their callees): its
    /// depth (0 for an outermost sub), its name's index ([`CallPaths::name`]) and its values.
    /// [`CallPaths::for_each_path`] without making the paths.
    pub(crate) fn for_each_node(&self, mut f: impl FnMut(usize, u32, PathValues)) {
        // (node, depth)
        let mut stack: Vec<(u32, usize)> = Vec::new();
        let push_callees = |stack: &mut Vec<(u32, usize)>, node: u32, depth: usize| {
            let mut at = self.lists[self.nodes[node as usize].callees as usize].first;
            while at != NO_NODE {
                stack.push((at, depth));
                at = self.nodes[at as usize].next;
            }
        };
        push_callees(&mut stack, 0, 0);
        while let Some((node, depth)) = stack.pop() {
            let n = &self.nodes[node as usize];
            f(
                depth,
                n.name,
                PathValues {
                    excl_ticks: n.excl,
                    incl_ticks: n.incl,
                    returns: n.returns,
                },
            );
            push_callees(&mut stack, node, depth + 1);
        }
    }

    /// The name of index `id` (of [`CallPaths::for_each_node`]).
    pub(crate) fn name(&self, id: u32) -> &str {
        &self.names[id as usize]
    }

    /// The number of distinct names.
    pub(crate) fn name_count(&self) -> usize {
        self.names.len()
    }
}

/// A sub name as `nytprofcalls` prints it: every `(eval N)` (or `(re_eval N)`...) followed by a
/// `[file:line]` becomes `(eval 0)`, so that all the evals of one line share a name.
pub fn nytprofcalls_name(name: &str) -> std::borrow::Cow<'_, str> {
    // s/\( (\w*eval)\s\d+ \) (?= \[ .+? :\d+ \] )/($1 0)/gx
    let bytes = name.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'('
            && let Some((word_end, end)) = eval_number_at(bytes, i + 1)
            && followed_by_place(&bytes[end..])
        {
            out.push_str(&name[copied..word_end]);
            out.push_str(" 0)");
            copied = end;
            i = end;
            continue;
        }
        i += 1;
    }
    if copied == 0 {
        return std::borrow::Cow::Borrowed(name);
    }
    out.push_str(&name[copied..]);
    std::borrow::Cow::Owned(out)
}

/// At `from`: `\w*eval\s\d+\)`; returns where the word ends and where the `)` ends.
fn eval_number_at(b: &[u8], from: usize) -> Option<(usize, usize)> {
    let word = b[from..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    let word_end = from + word;
    if !b[from..word_end].ends_with(b"eval") {
        return None;
    }
    // Perl's `\s` on a byte string: ASCII whitespace, the vertical tab included.
    if !b
        .get(word_end)
        .is_some_and(|&c| c.is_ascii_whitespace() || c == 0x0B)
    {
        return None;
    }
    let digits = b[word_end + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    let close = word_end + 1 + digits;
    (digits > 0 && b.get(close) == Some(&b')')).then_some((word_end, close + 1))
}

/// `\[.+?:\d+\]` at the start of `b` (`.` excludes a newline).
fn followed_by_place(b: &[u8]) -> bool {
    if b.first() != Some(&b'[') {
        return false;
    }
    let body = &b[1..];
    let line_end = body.iter().position(|&c| c == b'\n').unwrap_or(body.len());
    // The first `]` after `:digits` with at least one character before the `:`.
    (1..line_end).any(|colon| {
        body[colon] == b':' && {
            let digits = body[colon + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            digits > 0 && body.get(colon + 1 + digits) == Some(&b']')
        }
    })
}

/// One `<` record's fields, its name borrowed from the input.
type Return<'a> = (u32, f64, f64, &'a [u8], bool);

/// The fields of the `<` record at offset `at` of `data`, which the reading thread decoded:
/// the fast decoder's, or the general decoder's where the fast one leaves the record to it
/// (near the end of the input).
fn return_at(data: &[u8], at: u64) -> Option<Return<'_>> {
    let rest = data.get(usize::try_from(at).ok()?..)?;
    if let Some((fields, _)) = crate::read::sub_return_at(rest, false) {
        return Some(fields);
    }
    match crate::read::decode(&mut profcodec_common::Cursor::new(rest, at)) {
        Ok(crate::read::Record::SubReturn {
            depth,
            incl_ticks,
            excl_ticks,
            name,
        }) => Some((depth, incl_ticks, excl_ticks, name.bytes, name.utf8)),
        _ => None,
    }
}

/// The `<` records of an input in memory, added to [`CallPaths`] on a second thread while the
/// reading thread decodes the rest: the call paths cost about as much as the rest of the
/// decode, and the records reach them in batches, in the order read, so the paths are the
/// ones one thread makes. The reading thread hands over the records' offsets only, which
/// costs it less than their fields; the second thread reads each record again.
pub(crate) struct CallPathsThread<'scope> {
    batch: Vec<u64>,
    /// `None` once the thread has been asked to finish.
    batches: Option<SyncSender<Vec<u64>>>,
    /// Emptied batches coming back, so that the two threads reuse a few vectors.
    returned: Receiver<Vec<u64>>,
    thread: ScopedJoinHandle<'scope, CallPaths>,
}

/// Records per batch: large enough that handing a batch over costs little next to adding it.
const RETURNS_PER_BATCH: usize = 4096;

/// Batches queued at most: the memory of the records waiting stays bounded.
const BATCHES_QUEUED: usize = 4;

impl<'scope> CallPathsThread<'scope> {
    /// Starts the thread adding to `paths` the returns of `data` (the whole input, whose
    /// offsets [`CallPathsThread::add_return_at`] takes).
    pub(crate) fn spawn<'env, 'a: 'scope>(
        scope: &'scope Scope<'scope, 'env>,
        mut paths: CallPaths,
        data: &'a [u8],
    ) -> CallPathsThread<'scope> {
        let (batches, incoming) = sync_channel::<Vec<u64>>(BATCHES_QUEUED);
        let (give_back, returned) = sync_channel(BATCHES_QUEUED + 1);
        let thread = scope.spawn(move || {
            for mut batch in incoming {
                for at in batch.drain(..) {
                    if let Some((depth, incl, excl, name, utf8)) = return_at(data, at) {
                        paths.add_return_raw(depth, incl, excl, name, utf8);
                    }
                }
                // The reader may have finished: a batch it will not reuse is dropped.
                let _ = give_back.try_send(batch);
            }
            paths
        });
        CallPathsThread {
            batch: Vec::with_capacity(RETURNS_PER_BATCH),
            batches: Some(batches),
            returned,
            thread,
        }
    }

    /// Queues the `<` record at offset `at` of the input, which the reading thread decoded
    /// ([`CallPaths::add_return_raw`]).
    #[inline]
    pub(crate) fn add_return_at(&mut self, at: u64) {
        self.batch.push(at);
        if self.batch.len() == RETURNS_PER_BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let next = self
            .returned
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(RETURNS_PER_BATCH));
        let batch = std::mem::replace(&mut self.batch, next);
        if let Some(batches) = &self.batches
            && batches.send(batch).is_err()
        {
            // The thread ended early: only a panic ends it, which `finish` passes on.
            self.batches = None;
        }
    }

    /// Hands over the last records and returns the call paths once every record is added.
    pub(crate) fn finish(mut self) -> CallPaths {
        if !self.batch.is_empty() {
            self.send();
        }
        self.batches = None;
        match self.thread.join() {
            Ok(paths) => paths,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(c: &CallPaths) -> Vec<String> {
        let mut out = Vec::new();
        c.for_each_path(|p, v| out.push(format!("{} {}", p.join(";"), v.excl_ticks)));
        out.sort();
        out
    }

    #[test]
    fn builds_the_tree_nytprofcalls_builds() {
        let mut c = CallPaths::new();
        // main::a calls b (which calls c) twice, then returns; a again with one b.
        for _ in 0..2 {
            c.add_return(3, 1.0, 1.0, "c");
            c.add_return(2, 3.0, 2.0, "b");
        }
        c.add_return(1, 10.0, 4.0, "a");
        c.add_return(3, 1.0, 1.0, "c");
        c.add_return(2, 2.0, 1.0, "b");
        c.add_return(1, 3.0, 1.0, "a");
        c.finish();
        assert_eq!(lines(&c), ["a 5", "a;b 5", "a;b;c 3"]);
        assert_eq!(c.returns(), 8);
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn unreturned_levels_unwind_and_huge_depths_cost_nothing() {
        let mut c = CallPaths::new();
        c.add_return(u32::MAX, 1.0, 1.0, "deep");
        c.add_return(5, 1.0, 1.0, "x");
        c.finish();
        // The return at depth 5 pops the top level (as nytprofcalls pops its stack's top),
        // which holds the deep one.
        assert_eq!(lines(&c), ["x 1", "x;deep 1"]);
    }

    #[test]
    fn eval_numbers_as_nytprofcalls_rewrites_them() {
        assert_eq!(
            nytprofcalls_name("main::__ANON__[(eval 12)[t.pl:3]:1]"),
            "main::__ANON__[(eval 0)[t.pl:3]:1]"
        );
        assert_eq!(
            nytprofcalls_name("main::__ANON__[(re_eval 7)[(eval 3)[t.pl:3]:1]:2]"),
            "main::__ANON__[(re_eval 0)[(eval 0)[t.pl:3]:1]:2]"
        );
        assert_eq!(nytprofcalls_name("main::(eval 3)"), "main::(eval 3)");
        // `\s` is any ASCII whitespace, the vertical tab too, and becomes a space; `.` in the
        // place stops at a line break (as Perl's does: checked with perl 5.36).
        assert_eq!(
            nytprofcalls_name("f[(eval\x0b12)[t.pl:3]:1]"),
            "f[(eval 0)[t.pl:3]:1]"
        );
        assert_eq!(
            nytprofcalls_name("f[(eval\t12)[t.pl:3]:1]"),
            "f[(eval 0)[t.pl:3]:1]"
        );
        assert_eq!(nytprofcalls_name("x(eval 3)[a\nb:1]"), "x(eval 3)[a\nb:1]");
        assert_eq!(nytprofcalls_name("main::fib"), "main::fib");
    }
}
