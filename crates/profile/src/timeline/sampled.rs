//! Sampled call paths as nested slices, the way hpcviewer's trace view shows depth: each sample
//! lasts until the next one; its call path's procedure frames are the levels; consecutive samples
//! that share a prefix of frames extend the same slices. For every converter of sampled traces
//! whose frames are named through the profile model.

use std::io;

use crate::{FrameId, NodeId, Profile};

use super::sink::{CallPath, Name, Sink, TrackId};
use super::{Filter, Summary};

const NONE: u32 = u32::MAX;

/// The procedure frames of a profile's call tree: for every node, the innermost function-like
/// node at or above it; for those, their function-like parent, depth and name.
#[derive(Debug)]
pub struct CallPaths {
    /// Per model node: the innermost function-like node at or above it (`NONE`: none).
    level_of: Vec<u32>,
    /// Per model node (meaningful for function-like ones): the function-like parent.
    parent: Vec<u32>,
    /// Per model node (meaningful for function-like ones): the number of function-like nodes
    /// above it.
    depth: Vec<u32>,
    /// Per model node: the frame's display name, made on first use.
    names: Vec<Option<Box<str>>>,
    /// Per model node: its frame (whose id is the name's interning key).
    frame: Vec<FrameId>,
}

impl CallPaths {
    /// The call paths of `profile`'s tree (parents come before children in it).
    pub fn new(profile: &Profile) -> CallPaths {
        let n = profile.nodes().len();
        let mut level_of = vec![NONE; n];
        let mut parent = vec![NONE; n];
        let mut depth = vec![0; n];
        let mut frame = Vec::with_capacity(n);
        for (id, node) in profile.nodes() {
            let i = id.index();
            let above = node.parent.map_or(NONE, |p| level_of[p.index()]);
            frame.push(node.frame);
            if profile.frame(node.frame).kind.is_function_like() {
                level_of[i] = i as u32;
                parent[i] = above;
                depth[i] = if above == NONE {
                    0
                } else {
                    depth[above as usize] + 1
                };
            } else {
                level_of[i] = above;
            }
        }
        CallPaths {
            level_of,
            parent,
            depth,
            names: vec![None; n],
            frame,
        }
    }

    /// The procedure frame a sample at `node` is in (`None` above every function).
    pub fn level(&self, node: NodeId) -> Option<u32> {
        let l = *self.level_of.get(node.index())?;
        (l != NONE).then_some(l)
    }

    /// Makes the names of `levels` (once per level).
    fn name_all(&mut self, profile: &Profile, levels: &[u32]) {
        for &l in levels {
            let i = l as usize;
            if self.names[i].is_none() {
                self.names[i] = Some(profile.frame_label(self.frame[i]).into_boxed_str());
            }
        }
    }

    /// The name of `level` (made by [`name_all`](Self::name_all)).
    fn name(&self, level: u32) -> Name<'_> {
        let i = level as usize;
        Name {
            key: self.frame[i].index() as u64,
            text: self.names[i].as_deref().unwrap_or_default(),
        }
    }
}

/// One track's samples as nested slices: its open slices and what it has written.
#[derive(Debug)]
pub struct SampledTrack {
    track: TrackId,
    /// The open levels, outermost first (a prefix of the current sample's path).
    open: Vec<u32>,
    /// The levels a switch begins, innermost first (scratch).
    path: Vec<u32>,
    /// The level of the last sample seen (`NONE`: idle).
    current: u32,
    /// Whether a sample has been seen (the window's start may open slices before the first
    /// sample inside it).
    pending: bool,
    window: (u64, u64),
    max_depth: usize,
    summary: Summary,
}

impl SampledTrack {
    /// The samples of `track`, keeping what `filter` keeps (its window and depth).
    pub fn new(track: TrackId, filter: &Filter) -> SampledTrack {
        SampledTrack {
            track,
            open: Vec::new(),
            path: Vec::new(),
            current: NONE,
            pending: false,
            window: filter.window(),
            max_depth: filter.max_depth(),
            summary: Summary::default(),
        }
    }

    /// A sample at `ts` in procedure frame `level` (`None`: idle). Samples come in
    /// non-decreasing time order.
    #[inline]
    pub fn sample<S: Sink + ?Sized>(
        &mut self,
        sink: &mut S,
        paths: &mut CallPaths,
        profile: &Profile,
        ts: u64,
        level: Option<u32>,
    ) -> io::Result<()> {
        let level = level.unwrap_or(NONE);
        if ts < self.window.0 {
            // Before the window: only the state at its start matters.
            self.current = level;
            self.pending = true;
            return Ok(());
        }
        if ts > self.window.1 {
            return Ok(());
        }
        if self.pending {
            self.pending = false;
            let (start, held) = (self.window.0, self.current);
            self.current = NONE;
            self.switch(sink, paths, profile, start, held)?;
        }
        if level == self.current {
            return Ok(());
        }
        self.switch(sink, paths, profile, ts, level)
    }

    /// Moves the open slices to `level`'s path at `ts`.
    fn switch<S: Sink + ?Sized>(
        &mut self,
        sink: &mut S,
        paths: &mut CallPaths,
        profile: &Profile,
        ts: u64,
        level: u32,
    ) -> io::Result<()> {
        self.current = level;
        // Up from `level` to its deepest ancestor that is open (the open levels are a path
        // from the root, so the ancestors above it are open too): what is below it in the
        // open path ends, what was walked (within the depth limit) begins.
        self.path.clear();
        let mut common = 0;
        let mut l = level;
        while l != NONE {
            let depth = paths.depth[l as usize] as usize;
            if self.open.get(depth) == Some(&l) {
                common = depth + 1;
                break;
            }
            if depth < self.max_depth {
                self.path.push(l);
            }
            l = paths.parent[l as usize];
        }
        if self.open.len() > common {
            sink.end_several(self.track, ts, self.open.len() - common)?;
            self.open.truncate(common);
        }
        let Some((&leaf, above)) = self.path.split_first() else {
            return Ok(());
        };
        paths.name_all(profile, &self.path);
        let paths = &*paths;
        for &l in above.iter().rev() {
            self.open.push(l);
            sink.begin(self.track, ts, paths.name(l), None, None, &[])?;
        }
        // The innermost slice carries the call path (interned by its innermost frame): the
        // open levels, once it is pushed.
        self.open.push(leaf);
        let open = &self.open;
        let frames = || open.iter().map(|&l| paths.name(l)).collect();
        let path = CallPath {
            key: u64::from(leaf),
            frames: &frames,
        };
        sink.begin(self.track, ts, paths.name(leaf), None, Some(path), &[])?;
        self.summary.slices += self.path.len() as u64;
        Ok(())
    }

    /// Closes every open slice at `end` (the trace's end, cut to the window).
    pub fn finish<S: Sink + ?Sized>(
        &mut self,
        sink: &mut S,
        paths: &mut CallPaths,
        profile: &Profile,
        end: u64,
    ) -> io::Result<()> {
        let end = end.min(self.window.1);
        if self.pending && end >= self.window.0 {
            self.pending = false;
            let held = self.current;
            self.current = NONE;
            self.switch(sink, paths, profile, self.window.0, held)?;
        }
        sink.end_several(self.track, end, self.open.len())?;
        self.open.clear();
        Ok(())
    }

    /// What the track has written: its slices.
    pub fn summary(&self) -> Summary {
        self.summary
    }
}
