//! speedscope's JSON file format (`https://www.speedscope.app/file-format-schema.json`), which
//! the speedscope app opens as it is.
//!
//! - **One profile per context** (thread, rank or process; HPCToolkit's summary profile only
//!   when the profile has no other), named by its label (`thread 3 (Main)`, `rank 1 thread
//!   0`), in context order; contexts without values are left out.
//! - **Evented profiles** for timed spans (EasyProfiler's blocks, when the profile was made with
//!   spans and no [`ExportOptions::metric`] is asked for): every span opens and closes its frame
//!   at its begin and end, in the profile's span unit. Spans are nested by time, a span that
//!   outlasts the span it starts in being cut at that span's end, as speedscope requires.
//! - **Sampled profiles** otherwise: one sample per call-tree node with a positive self value of
//!   the value type in the context (for a value type measured inclusive only, the inclusive
//!   value less the children's), its stack from the root, its weight the value. speedscope's
//!   units are nanoseconds, microseconds, milliseconds, seconds and bytes; ticks with a known
//!   rate are written as nanoseconds, other units as `none`.
//! - **Evented call trees** when sampled stacks would be too large: a sample holds its whole
//!   stack, so a call chain `d` deep writes `d²/2` frame indices. The size of each form is
//!   projected from the call tree before writing (sampled: the stacks and weights, an upper
//!   bound; evented: two events per node with a value below it). When the sampled form would be
//!   over [`ExportOptions::max_output`], or over 64 MiB and 16 times the evented form, every
//!   context's call tree is written evented instead: depth first, each node opened, its self
//!   value spent, its children written, then closed, which speedscope shows as the same flame
//!   graph (its weights are the same). An output still over the budget is refused with
//!   [`ExportError::OutputTooLarge`]. (The shared frame table, one entry per frame, is not
//!   counted.)
//! - A profile without a call tree (flat per-function values only) gives one sample per
//!   function, its stack that function alone.
//! - **Frames** (`shared.frames`): one per frame of the profile that a profile uses, named by
//!   its label with its file and line where known. They are written after the profiles, so
//!   that the output streams.

use std::io::Write;

use profcodec_profile::{ContextFilter, ContextId, FrameId, Profile, Unit, ValueTypeId};

use crate::text::TextOut;
use crate::values::{self, NO_PARENT};
use crate::{ExportError, ExportOptions};

/// The schema URL every file names.
const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

/// Writes `profile` in speedscope's file format to `out` (see the [module docs](self)).
pub fn write_speedscope(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let value_type = values::value_type(profile, options)?;
    let evented = options.metric.is_none() && !profile.spans().is_empty();
    let mut w = Writer {
        profile,
        out: TextOut::new(out),
        parents: values::parents(profile),
        node_frames: profile.nodes().map(|(_, n)| n.frame).collect(),
        frame_ids: profile.frames().map(|(id, _)| id).collect(),
        frame_index: vec![u32::MAX; profile.frames().len()],
        frames: Vec::new(),
        profiles: 0,
    };
    w.out.str("{\"$schema\":\"");
    w.out.str(SCHEMA);
    w.out.str("\",\"exporter\":\"profcodec-export ");
    w.out.str(env!("CARGO_PKG_VERSION"));
    w.out.str("\",\"name\":");
    w.out.json_str(profile.name().unwrap_or("profcodec export"));
    w.out.str(",\"activeProfileIndex\":0,\"profiles\":[");

    let contexts = chosen_contexts(profile);
    let mut spans_of: Vec<Vec<u32>> = vec![Vec::new(); profile.contexts().len()];
    if evented {
        for (i, s) in profile.spans().iter().enumerate() {
            spans_of[s.context.index()].push(i as u32);
        }
    }
    let mut samples = Samples::new(profile, value_type);
    let flat = samples.flat;
    let depths = depths(&w.parents);
    // What each context writes, gathered first so that the output's size is known before it.
    let parts: Vec<(ContextId, Part)> = contexts
        .into_iter()
        .filter_map(|context| {
            let spans = std::mem::take(&mut spans_of[context.index()]);
            let part = if spans.is_empty() {
                Part::Samples(samples.take(profile, context))
            } else {
                Part::Spans(spans)
            };
            let empty = matches!(&part, Part::Samples(taken) if taken.is_empty());
            (!empty).then_some((context, part))
        })
        .collect();
    let size = Size::new(profile.frames().len());
    let sampled_size = size.sampled(&parts, &depths, flat);
    let budget = options.max_output;
    let mut tree_evented = false;
    let mut projected = sampled_size;
    if !flat && (budget.is_some_and(|b| sampled_size > b) || sampled_size > QUADRATIC_FROM) {
        let evented_size = size.evented(&parts, &w.parents);
        if evented_size < sampled_size
            && (budget.is_some_and(|b| sampled_size > b)
                || sampled_size / EVENTED_RATIO > evented_size)
        {
            tree_evented = true;
            projected = evented_size;
        }
    }
    crate::budget::check("speedscope", projected, budget)?;
    let unit = profile.value_type(value_type).unit;
    let mut tree = if tree_evented {
        Some(TreeWalk::new(&w.parents))
    } else {
        None
    };
    for (context, part) in parts {
        match part {
            Part::Spans(spans) => w.evented(context, spans, &depths)?,
            Part::Samples(taken) => match &mut tree {
                Some(tree) => w.tree_evented(context, &taken, unit, tree)?,
                None => w.sampled(context, &taken, flat, unit)?,
            },
        }
    }
    w.out.str("],\"shared\":{\"frames\":[");
    for (i, &frame) in w.frames.iter().enumerate() {
        if i > 0 {
            w.out.byte(b',');
        }
        let f = profile.frame(frame);
        w.out.str("{\"name\":");
        w.out.json_str(&profile.frame_label(frame));
        if let Some(file) = f.file {
            w.out.str(",\"file\":");
            w.out.json_str(profile.string(file));
        }
        if let Some(line) = f.line {
            w.out.str(",\"line\":");
            w.out.uint(u64::from(line));
        }
        w.out.byte(b'}');
        w.out.maybe_flush()?;
    }
    w.out.str("]}}\n");
    Ok(w.out.finish()?)
}

/// Sampled stacks are written evented when they would be over this size and over
/// [`EVENTED_RATIO`] times the evented form.
const QUADRATIC_FROM: u64 = 64 << 20;

/// See [`QUADRATIC_FROM`].
const EVENTED_RATIO: u64 = 16;

/// What a context writes: its spans (evented), or its samples: (node, self value) pairs, or
/// (frame, value) pairs for a profile without a call tree.
enum Part {
    Spans(Vec<u32>),
    Samples(Vec<(u32, f64)>),
}

/// The bytes the parts of the output take, projected: upper bounds of each event and sample.
struct Size {
    /// The digits of a frame index at most, plus its comma.
    frame: u64,
}

/// An event, `{"type":"O","frame":,"at":},` without its frame index and time.
const EVENT_BYTES: u64 = 28;

/// A number as [`TextOut::float`] writes it, at most.
const NUMBER_BYTES: u64 = 24;

impl Size {
    fn new(frames: usize) -> Size {
        Size {
            frame: crate::budget::decimal_len(frames.saturating_sub(1) as u64) + 1,
        }
    }

    fn event(&self) -> u64 {
        EVENT_BYTES + self.frame + NUMBER_BYTES
    }

    /// The output with samples written as stacks (a sample: `[`, its frames, `],` and its
    /// weight).
    fn sampled(&self, parts: &[(ContextId, Part)], depths: &[u32], flat: bool) -> u64 {
        let mut total: u64 = 0;
        for (_, part) in parts {
            let bytes = match part {
                Part::Spans(spans) => 2 * spans.len() as u64 * self.event(),
                Part::Samples(samples) => samples
                    .iter()
                    .map(|&(node, _)| {
                        let depth = if flat {
                            1
                        } else {
                            u64::from(depths[node as usize]) + 1
                        };
                        3 + depth * self.frame + NUMBER_BYTES + 1
                    })
                    .fold(0u64, u64::saturating_add),
            };
            total = total.saturating_add(bytes);
        }
        total
    }

    /// The output with call trees written evented: two events per node with a sample in its
    /// subtree.
    fn evented(&self, parts: &[(ContextId, Part)], parents: &[u32]) -> u64 {
        let mut marked = vec![false; parents.len()];
        let mut on: Vec<u32> = Vec::new();
        let mut total: u64 = 0;
        for (_, part) in parts {
            let events = match part {
                Part::Spans(spans) => 2 * spans.len() as u64,
                Part::Samples(samples) => {
                    for &(node, _) in samples {
                        mark_path(node, parents, &mut marked, &mut on);
                    }
                    let nodes = on.len() as u64;
                    for n in on.drain(..) {
                        marked[n as usize] = false;
                    }
                    2 * nodes
                }
            };
            total = total.saturating_add(events.saturating_mul(self.event()));
        }
        total
    }
}

/// Marks `node` and its ancestors up to the first one marked already, listing them in `on`.
fn mark_path(node: u32, parents: &[u32], marked: &mut [bool], on: &mut Vec<u32>) {
    let mut n = node;
    while n != NO_PARENT && !marked[n as usize] {
        marked[n as usize] = true;
        on.push(n);
        n = parents[n as usize];
    }
}

/// What writing a call tree evented needs, reused from context to context: the tree's
/// children, the nodes with a sample below them, and each node's self value.
struct TreeWalk {
    children: values::Children,
    marked: Vec<bool>,
    on: Vec<u32>,
    self_values: Vec<f64>,
    /// The depth-first walk's stack: a node, and whether it is to be closed (else opened).
    stack: Vec<(u32, bool)>,
}

impl TreeWalk {
    fn new(parents: &[u32]) -> TreeWalk {
        TreeWalk {
            children: values::Children::new(parents),
            marked: vec![false; parents.len()],
            on: Vec::new(),
            self_values: vec![0.0; parents.len()],
            stack: Vec::new(),
        }
    }

    /// Calls `event(open, node, at)` for each event of the depth-first walk of the marked
    /// nodes: a node opens at the time reached, spends its self value, has its children
    /// written, and closes. Returns the time at the end.
    fn walk<E>(
        &mut self,
        mut event: impl FnMut(bool, u32, f64) -> Result<(), E>,
    ) -> Result<f64, E> {
        let mut at = 0.0;
        let roots = self.children.of(self.children.roots_slot());
        self.stack.clear();
        let marked = &self.marked;
        self.stack.extend(
            roots
                .iter()
                .rev()
                .filter(|&&r| marked[r as usize])
                .map(|&r| (r, false)),
        );
        while let Some((node, close)) = self.stack.pop() {
            if close {
                event(false, node, at)?;
                continue;
            }
            event(true, node, at)?;
            at += self.self_values[node as usize];
            self.stack.push((node, true));
            let children = self.children.of(node as usize);
            self.stack.extend(
                children
                    .iter()
                    .rev()
                    .filter(|&&c| marked[c as usize])
                    .map(|&c| (c, false)),
            );
        }
        Ok(at)
    }

    /// Forgets the marks and values of the last context.
    fn clear(&mut self) {
        for n in self.on.drain(..) {
            self.marked[n as usize] = false;
            self.self_values[n as usize] = 0.0;
        }
    }
}

/// The contexts written: every one that is not a summary, else the summaries.
fn chosen_contexts(profile: &Profile) -> Vec<ContextId> {
    let plain: Vec<ContextId> = profile
        .contexts()
        .filter(|(_, c)| !c.summary)
        .map(|(id, _)| id)
        .collect();
    if !plain.is_empty() {
        return plain;
    }
    profile.contexts().map(|(id, _)| id).collect()
}

/// Per context, its (node, self value) pairs of one value type, positive values only, in node
/// order. Values measured self are read as they are (one pass over the values); a value type
/// measured inclusive only has its self values computed per context from the tree.
struct Samples {
    value_type: ValueTypeId,
    has_self: bool,
    /// Whether the samples are flat: (frame, value) pairs of a profile without a call tree.
    flat: bool,
    by_context: Vec<Vec<(u32, f64)>>,
}

impl Samples {
    fn new(profile: &Profile, value_type: ValueTypeId) -> Samples {
        let has_self = profile.value_type(value_type).measured.has_self();
        let mut by_context: Vec<Vec<(u32, f64)>> = vec![Vec::new(); profile.contexts().len()];
        let flat = profile.nodes().len() == 0;
        if flat {
            for v in profile.flat_values() {
                if v.value_type == value_type
                    && profile.frame(v.frame).kind.is_function_like()
                    && let Some(x) = v.self_value
                    && x > 0.0
                {
                    by_context[v.context.index()].push((v.frame.index() as u32, x));
                }
            }
        } else if has_self {
            // Only the value type's columns: a profile may hold many value types.
            let columns = profile
                .node_value_columns()
                .iter()
                .filter(|column| column.value_type() == value_type);
            for column in columns {
                // An entry without a self value reads 0, which is not a sample.
                let values = column.nodes().iter().zip(column.self_values());
                by_context[column.context().index()].extend(
                    values
                        .filter(|&(_, &x)| x > 0.0)
                        .map(|(node, &x)| (node.index() as u32, x)),
                );
            }
            for samples in &mut by_context {
                samples.sort_unstable_by_key(|&(node, _)| node);
            }
        }
        Samples {
            value_type,
            has_self: has_self || flat,
            flat,
            by_context,
        }
    }

    fn take(&mut self, profile: &Profile, context: ContextId) -> Vec<(u32, f64)> {
        if self.has_self {
            return std::mem::take(&mut self.by_context[context.index()]);
        }
        let Ok(totals) = profile.node_totals(self.value_type, &ContextFilter::Ids(vec![context]))
        else {
            return Vec::new();
        };
        totals
            .self_values
            .iter()
            .enumerate()
            .filter(|&(i, &x)| totals.measured[i] && x > 0.0)
            .map(|(i, &x)| (i as u32, x))
            .collect()
    }
}

/// Each node's depth (a root is at 0).
fn depths(parents: &[u32]) -> Vec<u32> {
    let mut depths: Vec<u32> = Vec::with_capacity(parents.len());
    for &p in parents {
        let d = if p == NO_PARENT {
            0
        } else {
            depths[p as usize] + 1
        };
        depths.push(d);
    }
    depths
}

/// speedscope's name of `unit`, and the factor its values are multiplied by.
fn speedscope_unit(unit: Option<Unit>) -> (&'static str, f64) {
    match unit {
        Some(Unit::Nanoseconds) => ("nanoseconds", 1.0),
        Some(Unit::Microseconds) => ("microseconds", 1.0),
        Some(Unit::Seconds) => ("seconds", 1.0),
        Some(Unit::Bytes) => ("bytes", 1.0),
        Some(Unit::Ticks {
            per_second: Some(rate),
        }) if rate > 0 => ("nanoseconds", 1e9 / rate as f64),
        _ => ("none", 1.0),
    }
}

struct Writer<'p, W: Write> {
    profile: &'p Profile,
    out: TextOut<W>,
    parents: Vec<u32>,
    /// Each node's frame.
    node_frames: Vec<FrameId>,
    /// Every frame's id, by index.
    frame_ids: Vec<FrameId>,
    /// Per frame of the profile, its index in `shared.frames`, `u32::MAX` until used.
    frame_index: Vec<u32>,
    /// The frames of `shared.frames`, in order.
    frames: Vec<FrameId>,
    /// The profiles written so far.
    profiles: usize,
}

impl<W: Write> Writer<'_, W> {
    fn frame(&mut self, node: u32) -> u32 {
        self.frame_of(self.node_frames[node as usize])
    }

    fn frame_of(&mut self, frame: FrameId) -> u32 {
        let index = &mut self.frame_index[frame.index()];
        if *index == u32::MAX {
            *index = self.frames.len() as u32;
            self.frames.push(frame);
        }
        *index
    }

    fn begin_profile(&mut self, kind: &str, context: ContextId, unit: &str) {
        if self.profiles > 0 {
            self.out.byte(b',');
        }
        self.profiles += 1;
        self.out.str("{\"type\":\"");
        self.out.str(kind);
        self.out.str("\",\"name\":");
        self.out.json_str(&self.profile.context_label(context));
        self.out.str(",\"unit\":\"");
        self.out.str(unit);
        self.out.str("\"");
    }

    fn sampled(
        &mut self,
        context: ContextId,
        samples: &[(u32, f64)],
        flat: bool,
        unit: Unit,
    ) -> Result<(), ExportError> {
        let (unit, factor) = speedscope_unit(Some(unit));
        self.begin_profile("sampled", context, unit);
        let total: f64 = samples.iter().map(|&(_, w)| w * factor).sum();
        self.out.str(",\"startValue\":0,\"endValue\":");
        self.out.float(total);
        self.out.str(",\"samples\":[");
        let mut stack: Vec<u32> = Vec::new();
        for (i, &(node, _)) in samples.iter().enumerate() {
            if i > 0 {
                self.out.byte(b',');
            }
            if flat {
                let frame = self.frame_ids[node as usize];
                let f = self.frame_of(frame);
                self.out.byte(b'[');
                self.out.uint(u64::from(f));
                self.out.byte(b']');
                continue;
            }
            stack.clear();
            let mut n = node;
            while n != NO_PARENT {
                stack.push(n);
                n = self.parents[n as usize];
            }
            self.out.byte(b'[');
            for (j, &n) in stack.iter().rev().enumerate() {
                if j > 0 {
                    self.out.byte(b',');
                }
                let f = self.frame(n);
                self.out.uint(u64::from(f));
            }
            self.out.byte(b']');
            self.out.maybe_flush()?;
        }
        self.out.str("],\"weights\":[");
        for (i, &(_, w)) in samples.iter().enumerate() {
            if i > 0 {
                self.out.byte(b',');
            }
            self.out.float(w * factor);
            self.out.maybe_flush()?;
        }
        self.out.str("]}");
        Ok(())
    }

    /// A context's call tree as an evented profile (see the module docs).
    fn tree_evented(
        &mut self,
        context: ContextId,
        samples: &[(u32, f64)],
        unit: Unit,
        tree: &mut TreeWalk,
    ) -> Result<(), ExportError> {
        let (unit, factor) = speedscope_unit(Some(unit));
        for &(node, w) in samples {
            mark_path(node, &self.parents, &mut tree.marked, &mut tree.on);
            tree.self_values[node as usize] = w * factor;
        }
        // The end is the time the walk reaches, summed in its order, so that it is the last
        // close's time exactly.
        let end = tree.walk(|_, _, _| Ok::<(), ExportError>(()))?;
        self.begin_profile("evented", context, unit);
        self.out.str(",\"startValue\":0,\"endValue\":");
        self.out.float(end);
        self.out.str(",\"events\":[");
        let mut first = true;
        tree.walk(|open, node, at| {
            if !first {
                self.out.byte(b',');
            }
            first = false;
            self.out.str("{\"type\":\"");
            self.out.byte(if open { b'O' } else { b'C' });
            self.out.str("\",\"frame\":");
            let frame = self.frame(node);
            self.out.uint(u64::from(frame));
            self.out.str(",\"at\":");
            self.out.float(at);
            self.out.byte(b'}');
            self.out.maybe_flush()
        })?;
        tree.clear();
        self.out.str("]}");
        Ok(())
    }

    fn evented(
        &mut self,
        context: ContextId,
        mut spans: Vec<u32>,
        depths: &[u32],
    ) -> Result<(), ExportError> {
        let all = self.profile.spans();
        let (unit, factor) = speedscope_unit(self.profile.span_unit());
        // Among spans starting together: those lasting no time first (an instant where one span
        // ends and the next begins stays in the span that ends there), then outer spans first.
        let mut keyed: Vec<(u64, bool, std::cmp::Reverse<u64>, u32, u32)> = spans
            .iter()
            .map(|&i| {
                let s = &all[i as usize];
                (
                    s.begin,
                    s.end > s.begin,
                    std::cmp::Reverse(s.end),
                    depths[s.node.index()],
                    i,
                )
            })
            .collect();
        keyed.sort_unstable();
        for (slot, key) in spans.iter_mut().zip(&keyed) {
            *slot = key.4;
        }
        drop(keyed);
        let start = all[spans[0] as usize].begin;
        let end = spans
            .iter()
            .map(|&i| all[i as usize].end)
            .max()
            .unwrap_or(start);
        self.begin_profile("evented", context, unit);
        // Times are written from the first begin, so that nanosecond clocks keep every digit.
        self.out.str(",\"startValue\":0,\"endValue\":");
        self.out.float(end.saturating_sub(start) as f64 * factor);
        self.out.str(",\"events\":[");
        // The open spans: frame index and end time.
        let mut open: Vec<(u32, u64)> = Vec::new();
        let mut first = true;
        let mut event = |out: &mut TextOut<W>, kind: u8, frame: u32, at: u64| {
            if !first {
                out.byte(b',');
            }
            first = false;
            out.str("{\"type\":\"");
            out.byte(kind);
            out.str("\",\"frame\":");
            out.uint(u64::from(frame));
            out.str(",\"at\":");
            out.float(at.saturating_sub(start) as f64 * factor);
            out.byte(b'}');
        };
        for &i in &spans {
            let s = all[i as usize];
            // Spans that ended before this one begins close; one that ends where this one
            // begins closes too, unless this one lasts no time (it then lies at its end).
            while let Some(&(frame, top_end)) = open.last()
                && (top_end < s.begin || (top_end == s.begin && s.end > s.begin))
            {
                event(&mut self.out, b'C', frame, top_end);
                open.pop();
            }
            let end = open
                .last()
                .map_or(s.end, |&(_, top_end)| s.end.min(top_end))
                .max(s.begin);
            let frame = self.frame(s.node.index() as u32);
            event(&mut self.out, b'O', frame, s.begin);
            open.push((frame, end));
            self.out.maybe_flush()?;
        }
        while let Some((frame, top_end)) = open.pop() {
            event(&mut self.out, b'C', frame, top_end);
        }
        self.out.str("]}");
        Ok(())
    }
}
