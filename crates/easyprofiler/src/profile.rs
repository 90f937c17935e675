//! A capture in the format-neutral profile model of `profcodec-profile` (feature `profile`):
//! [`BlockTree::to_profile_with`] tells what goes where.

use std::collections::HashMap;

use profcodec_profile::{
    Context, Frame, FrameId, FrameKind, IdKind, Measured, ModelError, NodeId, Profile,
    ProfileBuilder, Unit, ValueTypeId,
};

use crate::BlockType;
use crate::name::Name;
use crate::read::scan::{Block, Descriptors, holds};
use crate::read::{BlockTree, Walk, c_str};

/// What [`BlockTree::to_profile_with`] puts into the profile beyond the call tree and its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ProfileOptions {
    /// Keep every block as a span with its begin and end (the timeline). Spans cost 24 bytes
    /// per block; without them the profile grows with the distinct call paths and threads
    /// only, which is all that `top` and `diff` need. Off by default.
    pub spans: bool,
}

impl ProfileOptions {
    /// The default options: no spans.
    pub fn new() -> ProfileOptions {
        ProfileOptions::default()
    }

    /// These options with spans kept or not.
    pub fn spans(mut self, spans: bool) -> ProfileOptions {
        self.spans = spans;
        self
    }
}

/// One thread's sums at one call-tree node, kept until the thread is done so that the builder
/// sees each (thread, node) once rather than once per block.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    self_time: u64,
    inclusive: u64,
    calls: u64,
    /// Whether the node is in `touched` already.
    touched: bool,
}

/// An open block on the walk back from the end of a thread.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Its begin (ns).
    begin: u64,
    /// Its call-tree node in the profile.
    node: NodeId,
    /// Its duration (ns).
    duration: u64,
    /// The summed durations of its children so far (ns).
    children: u64,
    /// The descriptor and profile node of its last child seen: siblings mostly repeat. `None`
    /// until it has a child.
    last_child: Option<(u32, NodeId)>,
}

/// The children of each call-tree node by descriptor. A node's first [`Children::LISTED`]
/// children are found in a short list (most blocks have few kinds of children, and a list beats
/// hashing); a node with more has them all in a hash map too, so a wide node costs one hash per
/// lookup, never a long scan.
#[derive(Debug, Default)]
struct Children {
    /// Per parent slot (0: the roots, `n + 1`: node `n`), the first link and the child count.
    heads: Vec<(u32, u32)>,
    /// (descriptor, child, next link) entries, `NO_LINK` ending a list.
    links: Vec<(u32, NodeId, u32)>,
    /// Every (parent slot, descriptor) of a parent with more than `LISTED` children.
    wide: HashMap<(u32, u32), NodeId>,
}

const NO_LINK: u32 = u32::MAX;

impl Children {
    const LISTED: u32 = 8;

    fn slot(parent: Option<NodeId>) -> usize {
        parent.map_or(0, |p| p.index() + 1)
    }

    fn get(&self, parent: Option<NodeId>, descriptor: u32) -> Option<NodeId> {
        let slot = Children::slot(parent);
        let &(mut link, count) = self.heads.get(slot)?;
        while link != NO_LINK {
            let (d, node, next) = self.links[link as usize];
            if d == descriptor {
                return Some(node);
            }
            link = next;
        }
        if count > Children::LISTED {
            return self.wide.get(&(slot as u32, descriptor)).copied();
        }
        None
    }

    fn insert(&mut self, parent: Option<NodeId>, descriptor: u32, node: NodeId) {
        let slot = Children::slot(parent);
        if slot >= self.heads.len() {
            self.heads.resize(slot + 1, (NO_LINK, 0));
        }
        let (head, count) = self.heads[slot];
        if count < Children::LISTED {
            // Node handles are u32, and there is at most one link per node.
            let link = self.links.len() as u32;
            self.links.push((descriptor, node, head));
            self.heads[slot] = (link, count + 1);
            return;
        }
        if count == Children::LISTED {
            let mut link = head;
            while link != NO_LINK {
                let (d, n, next) = self.links[link as usize];
                self.wide.insert((slot as u32, d), n);
                link = next;
            }
        }
        self.wide.insert((slot as u32, descriptor), node);
        self.heads[slot].1 = count + 1;
    }
}

/// The conversion's state: the builder and the maps that keep its calls per distinct node.
struct Converter<'t, 'a> {
    descriptors: &'t Descriptors<'a>,
    builder: ProfileBuilder,
    time: ValueTypeId,
    calls: ValueTypeId,
    spans: bool,
    /// The frame of each descriptor id met so far.
    frames: HashMap<u32, FrameId>,
    /// The children of every node met so far (see [`Children`]).
    children: Children,
    /// The current thread's sums, by profile node index.
    sums: Vec<Sums>,
    /// The nodes the current thread touched, in first-touch order.
    touched: Vec<NodeId>,
    /// The open blocks of the walk (bounded by the tree's depth).
    stack: Vec<Open>,
}

fn lossy(name: Name<'_>) -> String {
    String::from_utf8_lossy(name.as_bytes()).into_owned()
}

impl<'t, 'a> Converter<'t, 'a> {
    fn frame(&mut self, descriptor: u32) -> Result<FrameId, ModelError> {
        if let Some(&frame) = self.frames.get(&descriptor) {
            return Ok(frame);
        }
        let b = &mut self.builder;
        let frame = match self.descriptors.get(descriptor) {
            Some(d) => {
                let name = b.intern_string(&lossy(d.name()))?;
                let kind = match BlockType::from_u8(d.descriptor.block_type) {
                    Some(BlockType::Event) => FrameKind::Event,
                    Some(BlockType::Value) => FrameKind::Value,
                    _ => FrameKind::Block,
                };
                let mut frame = Frame::new(kind).with_function(name);
                let file = c_str(d.descriptor.file.as_bytes());
                if !file.is_empty() {
                    frame = frame.with_file(b.intern_string(&lossy(Name(file)))?);
                }
                if let Ok(line) = u32::try_from(d.descriptor.line)
                    && line > 0
                {
                    frame = frame.with_line(line);
                }
                frame
            }
            // The tree checked every record's descriptor; kept total all the same.
            None => Frame::new(FrameKind::Block)
                .with_function(b.intern_string(&format!("[descriptor {descriptor}]"))?),
        };
        let frame = b.intern_frame(frame)?;
        self.frames.insert(descriptor, frame);
        Ok(frame)
    }

    fn child(&mut self, parent: Option<NodeId>, descriptor: u32) -> Result<NodeId, ModelError> {
        if let Some(node) = self.children.get(parent, descriptor) {
            return Ok(node);
        }
        let frame = self.frame(descriptor)?;
        let node = self.builder.intern_node(parent, frame)?;
        self.children.insert(parent, descriptor, node);
        if node.index() >= self.sums.len() {
            self.sums.resize(node.index() + 1, Sums::default());
        }
        Ok(node)
    }

    fn sums(&mut self, node: NodeId) -> &mut Sums {
        let sums = &mut self.sums[node.index()];
        if !sums.touched {
            sums.touched = true;
            self.touched.push(node);
        }
        sums
    }

    /// Closes the innermost open block: its self time is known once its children are.
    fn close(&mut self) {
        if let Some(open) = self.stack.pop() {
            let sums = self.sums(open.node);
            sums.self_time = sums
                .self_time
                .saturating_add(open.duration.saturating_sub(open.children));
        }
    }

    /// One thread: `blocks` in reverse file order.
    fn thread(
        &mut self,
        id: u64,
        name: Name<'_>,
        blocks: impl Iterator<Item = Block>,
    ) -> Result<(), ModelError> {
        let mut context = Context::new([(IdKind::Thread, id)]);
        if !name.is_empty() {
            context = context.with_name(self.builder.intern_string(&lossy(name))?);
        }
        let context = self.builder.intern_context(context)?;
        let mut last_root: Option<(u32, NodeId)> = None;
        // Blocks are stored in post-order, so walking them backwards meets every parent before
        // its children: a block's parent is the innermost open block that holds it.
        for n in blocks {
            while self
                .stack
                .last()
                .is_some_and(|o| !holds(o.begin, o.last_child.is_some(), &n))
            {
                self.close();
            }
            let duration = n.end.saturating_sub(n.begin);
            let cached = match self.stack.last() {
                Some(o) => o.last_child,
                None => last_root,
            };
            let node = match cached {
                Some((d, node)) if d == n.descriptor => node,
                _ => {
                    let parent = self.stack.last().map(|o| o.node);
                    let node = self.child(parent, n.descriptor)?;
                    match self.stack.last_mut() {
                        Some(o) => o.last_child = Some((n.descriptor, node)),
                        None => last_root = Some((n.descriptor, node)),
                    }
                    node
                }
            };
            if let Some(o) = self.stack.last_mut() {
                o.children = o.children.saturating_add(duration);
            }
            let sums = self.sums(node);
            sums.inclusive = sums.inclusive.saturating_add(duration);
            sums.calls += 1;
            if self.spans {
                self.builder.add_span(context, node, n.begin, n.end)?;
            }
            self.stack.push(Open {
                begin: n.begin,
                node,
                duration,
                children: 0,
                last_child: None,
            });
        }
        while !self.stack.is_empty() {
            self.close();
        }
        for node in std::mem::take(&mut self.touched) {
            let sums = std::mem::take(&mut self.sums[node.index()]);
            // Sums below 2^53 ns (104 days) are exact in f64.
            self.builder.add_node_values(
                context,
                node,
                [
                    (
                        self.time,
                        Some(sums.self_time as f64),
                        Some(sums.inclusive as f64),
                    ),
                    (self.calls, Some(sums.calls as f64), None),
                ],
            )?;
        }
        Ok(())
    }
}

impl<'a> BlockTree<'a> {
    /// The capture in the format-neutral profile model, without spans (see
    /// [`to_profile_with`](Self::to_profile_with)).
    pub fn to_profile(&self) -> Result<Profile, ModelError> {
        self.to_profile_with(ProfileOptions::default())
    }

    /// The capture in the format-neutral profile model.
    ///
    /// - **Contexts**: one per thread, [`IdKind::Thread`] with the thread id, named as the
    ///   capture names the thread (sections of one thread id are one thread, as in the tree).
    /// - **Frames**: every node of the block tree (blocks, events and values alike, as the C++
    ///   reader's `blocks` vector and the converter's JSON hold them) is a frame named by its
    ///   descriptor ([`TreeDescriptor::name`](crate::TreeDescriptor::name): the runtime name of
    ///   a runtime-named block), with the descriptor's file and line, of the kind its
    ///   descriptor's block type says: [`FrameKind::Block`] for a block, [`FrameKind::Event`]
    ///   for an event (`EASY_EVENT`), [`FrameKind::Value`] for a value (`EASY_VALUE`). Events
    ///   and values are not code that ran ([`FrameKind::is_marker`]): `top` and `diff` leave
    ///   them out of their rows, the timeline shows them as instants and counters.
    /// - **Call tree**: each block at the node of its path of frames, under its parent block's
    ///   node, one node per distinct path (so recursion makes one node per level).
    /// - **Values**: `time` in nanoseconds (the tree's times, converted from ticks as the C++
    ///   reader converts them), [`Measured::SelfAndInclusive`]: the inclusive value is the
    ///   measured duration, the self value the duration minus the children's durations, per
    ///   block, as [`BlockTree::totals`] counts it; and `calls`, the number of blocks (the
    ///   profile's calls value type). Events and values last no time: they count calls only.
    ///   `time` is the default value type.
    /// - **Spans**, with [`ProfileOptions::spans`]: every block's begin and end in nanoseconds.
    ///
    /// One walk over the tree's nodes, in reverse file order (which meets every parent before its
    /// children), with no copy of them. Beyond the tree, memory grows with the distinct paths,
    /// the threads and the tree's depth, not with the blocks (spans aside); a node's children
    /// are found in a short list, or in a hash map past eight kinds, so the time is linear in the
    /// blocks. Each thread's sums are exact integers, handed to the builder once per (thread,
    /// node). The only error is a model table outgrowing its `u32` handles.
    ///
    /// [`Walk::to_profile_with`] gives the same profile without the tree in memory.
    pub fn to_profile_with(&self, options: ProfileOptions) -> Result<Profile, ModelError> {
        let threads = self.threads.iter().map(|th| {
            let blocks = th.nodes.iter().rev().map(|n| Block {
                begin: n.begin,
                end: n.end,
                descriptor: n.descriptor,
                offset: 0,
            });
            (th.id, th.name, blocks)
        });
        convert(self.descriptor_table(), threads, options)
    }
}

impl<'a> Walk<'a> {
    /// The capture in the format-neutral profile model, without spans (see
    /// [`to_profile_with`](Self::to_profile_with)).
    pub fn to_profile(&self) -> Result<Profile, ModelError> {
        self.to_profile_with(ProfileOptions::default())
    }

    /// The same profile as [`BlockTree::to_profile_with`], from the file: each thread's blocks
    /// are read back from its end, chunk by chunk ([`Walk`]), so that beyond the profile, memory
    /// holds the open blocks (the nesting depth) and one chunk, not the blocks (spans aside,
    /// which keep every block).
    pub fn to_profile_with(&self, options: ProfileOptions) -> Result<Profile, ModelError> {
        let threads = self
            .threads
            .iter()
            .map(|th| (th.id, th.name, self.blocks_rev(th)));
        convert(self.descriptor_table(), threads, options)
    }
}

/// The profile of `threads`: each one's id, name and blocks in reverse file order.
fn convert<'a, B: Iterator<Item = Block>>(
    descriptors: &Descriptors<'a>,
    threads: impl Iterator<Item = (u64, Name<'a>, B)>,
    options: ProfileOptions,
) -> Result<Profile, ModelError> {
    let mut builder = ProfileBuilder::new();
    let time = builder.intern_value_type("time", Unit::Nanoseconds, Measured::SelfAndInclusive)?;
    let calls = builder.intern_value_type("calls", Unit::Count, Measured::SelfOnly)?;
    builder.set_default_value_type(time)?;
    builder.set_calls_value_type(calls)?;
    if options.spans {
        builder.set_span_unit(Unit::Nanoseconds)?;
    }
    let mut c = Converter {
        descriptors,
        builder,
        time,
        calls,
        spans: options.spans,
        frames: HashMap::new(),
        children: Children::default(),
        sums: Vec::new(),
        touched: Vec::new(),
        stack: Vec::new(),
    };
    for (id, name, blocks) in threads {
        c.thread(id, name, blocks)?;
    }
    Ok(c.builder.build())
}
