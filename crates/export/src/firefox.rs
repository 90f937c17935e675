//! The Firefox Profiler's processed profile format (feature `firefox`), through the
//! fxprof-processed-profile crate: a JSON file that profiler.firefox.com opens ("Load a profile
//! from file").
//!
//! # What the output holds
//!
//! - **Processes and threads**: one thread per context (thread, rank, process, GPU stream),
//!   named as `profcodec top` spells the context (`rank 3 thread 0`, `thread 7 (Main)`), its
//!   thread id the context's thread id where it has one; threads are grouped into processes by
//!   their process id, else their rank. As for pprof, the summary contexts (HPCToolkit's summary
//!   profile) are written only when the profile has no other context with values.
//! - **Frames**: one per call-tree frame, named as `profcodec top` names it (a loop or line of
//!   HPCToolkit as `loop at file:line in function`), its category the frame's kind (function,
//!   inlined, block, loop, line, instruction).
//! - **Samples**: the Firefox Profiler reads one weight per sample, so one metric is written:
//!   [`ExportOptions::metric`], else the profile's default value type. Each (thread, call-tree
//!   node) with a self value (a value type measured inclusive only: its inclusive value minus its
//!   children's) is one sample of that stack, weighted by the value in whole units of a scale
//!   chosen for the profile: for time, the finest of nanoseconds, microseconds, milliseconds or
//!   seconds (a power of 1000 beyond) whose largest sample fits the format's 32-bit weights,
//!   which is also the profile's sampling interval; for counts and bytes a power of ten, 1 where
//!   they fit. Samples follow the call tree depth first, each taking as much time as its weight
//!   says, so the stack chart draws the tree as an icicle graph and the call tree's figures
//!   are the profile's self and running totals.
//! - **Timed spans** (EasyProfiler's blocks, when the profile was built with spans): one
//!   interval marker per block on its thread, named by its frame, in the `Block` category, at
//!   its real begin and end: the marker chart is the capture's timeline, as EasyProfiler's own
//!   viewer draws it, while the samples stay the call tree of the chosen metric.
//!
//! Marker times are relative to the profile's first span; the profile's reference time is the
//! Unix epoch, as the formats do not all record a wall-clock start.

use fxprof_processed_profile::{
    CategoryColor, CategoryHandle, CategoryPairHandle, CpuDelta, Frame as FxFrame, FrameFlags,
    FrameHandle, FrameInfo, Marker, MarkerTiming, MarkerTypeHandle, ProcessHandle,
    Profile as FxProfile, ReferenceTimestamp, SamplingInterval, StackHandle, StaticSchemaMarker,
    StaticSchemaMarkerField, StringHandle, ThreadHandle, Timestamp, WeightType,
};
use profcodec_profile::{
    ContextId, FrameId, FrameKind, IdKind, NodeId, Profile, Quantity, Span, Unit, ValueTypeId,
};
use std::io::Write;

use crate::{ExportError, ExportOptions};

/// Writes `profile` to `out` as the Firefox Profiler's processed format (see the
/// [module docs](self) for what it holds).
///
/// # Errors
///
/// [`ExportError::UnknownMetric`] when [`ExportOptions::metric`] names no value type of the
/// profile; [`ExportError::Io`] when writing fails.
pub fn write_firefox(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let metric = crate::select::metric(profile, options)?;
    let exported = crate::select::exported_contexts(profile);
    let spans = SpansByContext::new(profile, &exported);
    let samples = SamplesByContext::new(profile, metric, &exported);
    // One scale for the whole profile: the Firefox Profiler has one sampling interval.
    let scale = Scale::for_metric(profile, metric, samples.largest());
    let mut fx = FxProfile::new(
        profile.name().unwrap_or("profcodec"),
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_nanos(scale.interval_nanos.max(1)),
    );
    let categories = Categories::new(&mut fx);
    let threads = add_threads(profile, &exported, &mut fx);
    let mut stacks = Stacks::new(profile, categories, &mut fx);
    let block_schema = fx.static_schema_marker_type::<BlockSchema>();
    for (context, thread) in threads {
        fx.set_thread_samples_weight_type(thread, scale.weight_type.clone());
        stacks.start_thread();
        let mut at = 0u64;
        for &(node, value) in samples.of(context) {
            let weight = scale.weight(value);
            if weight == 0 {
                continue;
            }
            let stack = stacks.stack(&mut fx, thread, node);
            let duration = scale.duration(weight);
            fx.add_sample(
                thread,
                Timestamp::from_nanos_since_reference(at),
                Some(stack),
                CpuDelta::from_nanos(duration),
                weight,
            );
            at = at.saturating_add(duration);
        }
        for span in spans.of(context) {
            let name = stacks.name(span.node);
            fx.add_marker(
                thread,
                MarkerTiming::Interval(
                    Timestamp::from_nanos_since_reference(spans.nanos(span.begin)),
                    Timestamp::from_nanos_since_reference(spans.nanos(span.end)),
                ),
                BlockMarker {
                    schema: block_schema,
                    name,
                    category: categories.block_category,
                },
            );
        }
    }
    serde_json::to_writer(out, &fx).map_err(std::io::Error::from)?;
    Ok(())
}

/// The marker schema of timed blocks.
struct BlockSchema;

impl StaticSchemaMarker for BlockSchema {
    const UNIQUE_MARKER_TYPE_NAME: &'static str = "Block";
    const DESCRIPTION: Option<&'static str> = Some("A timed block of the profiled program");
    const CHART_LABEL: Option<&'static str> = Some("{marker.name}");
    const TOOLTIP_LABEL: Option<&'static str> = Some("{marker.name}");
    const TABLE_LABEL: Option<&'static str> = Some("{marker.name}");
    const FIELDS: &'static [StaticSchemaMarkerField] = &[];

    fn name(&self, profile: &mut FxProfile) -> StringHandle {
        profile.intern_string("Block")
    }

    fn category(&self, _profile: &mut FxProfile) -> CategoryHandle {
        CategoryHandle::OTHER
    }

    fn string_field_value(&self, _field_index: u32) -> StringHandle {
        unreachable!("the schema has no fields")
    }

    fn number_field_value(&self, _field_index: u32) -> f64 {
        unreachable!("the schema has no fields")
    }
}

/// An interval marker for one timed block, of [`BlockSchema`], whose type handle is looked up
/// once for all the markers rather than by name for each.
struct BlockMarker {
    schema: MarkerTypeHandle,
    name: StringHandle,
    category: CategoryHandle,
}

impl Marker for BlockMarker {
    fn marker_type(&self, _profile: &mut FxProfile) -> MarkerTypeHandle {
        self.schema
    }

    fn name(&self, _profile: &mut FxProfile) -> StringHandle {
        self.name
    }

    fn category(&self, _profile: &mut FxProfile) -> CategoryHandle {
        self.category
    }

    fn string_field_value(&self, _field_index: u32) -> StringHandle {
        unreachable!("the schema has no fields")
    }

    fn number_field_value(&self, _field_index: u32) -> f64 {
        unreachable!("the schema has no fields")
    }
}

/// How model values become the format's 32-bit sample weights: a weight of 1 stands for
/// `per_weight` model units, and takes `interval_nanos` of synthetic time.
#[derive(Debug, Clone)]
struct Scale {
    per_weight: f64,
    interval_nanos: u64,
    weight_type: WeightType,
}

impl Scale {
    /// A power of `step` (times `base`) large enough that `largest / scale` fits a weight.
    fn fitting(largest: f64, base: f64, step: f64) -> f64 {
        let mut scale = base;
        // At most a few hundred steps: f64 ends at 1e308.
        while largest.is_finite() && largest / scale > f64::from(i32::MAX) && scale.is_finite() {
            scale *= step;
        }
        scale
    }

    /// Time in `unit` (seconds per unit known), the largest sample `largest` units.
    fn for_time(unit: Unit, largest: f64) -> Scale {
        let unit_nanos = unit.seconds().map_or(1.0, |s| s * 1e9);
        let per_weight_nanos = Scale::fitting(largest * unit_nanos, 1.0, 1000.0);
        Scale {
            per_weight: per_weight_nanos / unit_nanos,
            interval_nanos: per_weight_nanos.min(u64::MAX as f64) as u64,
            weight_type: WeightType::Samples,
        }
    }

    fn for_metric(profile: &Profile, metric: Option<ValueTypeId>, largest: f64) -> Scale {
        let unit = metric.map(|vt| profile.value_type(vt).unit);
        match unit {
            Some(unit) if unit.quantity() == Quantity::Time && unit.seconds().is_some() => {
                Scale::for_time(unit, largest)
            }
            _ => Scale {
                per_weight: Scale::fitting(largest, 1.0, 10.0),
                // A nominal millisecond per unit of weight, to lay the samples out in time.
                interval_nanos: 1_000_000,
                weight_type: match unit {
                    Some(Unit::Bytes) => WeightType::Bytes,
                    _ => WeightType::Samples,
                },
            },
        }
    }

    fn weight(&self, value: f64) -> i32 {
        // Saturating; NaN is 0.
        (value / self.per_weight).round() as i32
    }

    fn duration(&self, weight: i32) -> u64 {
        u64::from(weight.unsigned_abs()).saturating_mul(self.interval_nanos)
    }
}

/// The category of each frame kind, so the call tree and stack chart color them apart.
#[derive(Debug, Clone, Copy)]
struct Categories {
    /// The category of blocks, for their markers too.
    block_category: CategoryHandle,
    function: CategoryPairHandle,
    inlined: CategoryPairHandle,
    block: CategoryPairHandle,
    lexical: CategoryPairHandle,
    instruction: CategoryPairHandle,
    /// EasyProfiler's values and events ([`FrameKind::is_marker`]): counters and instants, not
    /// code that ran, told apart from blocks (`top` leaves them out of its rows).
    value: CategoryPairHandle,
    event: CategoryPairHandle,
    other: CategoryPairHandle,
}

impl Categories {
    fn new(fx: &mut FxProfile) -> Categories {
        let block_category = fx.add_category("Block", CategoryColor::Orange);
        let mut add = |name: &str, color| fx.add_category(name, color).into();
        Categories {
            block_category,
            function: add("Function", CategoryColor::Blue),
            inlined: add("Inlined", CategoryColor::LightBlue),
            block: block_category.into(),
            lexical: add("Loop or line", CategoryColor::Green),
            instruction: add("Instruction", CategoryColor::Purple),
            value: add("Value", CategoryColor::Magenta),
            event: add("Event", CategoryColor::Yellow),
            other: CategoryHandle::OTHER.into(),
        }
    }

    fn of(&self, kind: FrameKind) -> CategoryPairHandle {
        match kind {
            FrameKind::Function => self.function,
            FrameKind::Inlined => self.inlined,
            FrameKind::Block => self.block,
            FrameKind::Loop | FrameKind::Line => self.lexical,
            FrameKind::Instruction => self.instruction,
            FrameKind::Value => self.value,
            FrameKind::Event => self.event,
            _ => self.other,
        }
    }
}

/// Interns each node's stack in the current thread, once, and each model frame's frame once
/// per thread. Model frames that share a name and category (a function at several addresses or
/// lines) become one frame of the output: the crate's frame table interns frames by their
/// contents.
struct Stacks<'p> {
    profile: &'p Profile,
    /// Each model frame's name and category, by frame index.
    labels: Vec<(StringHandle, CategoryPairHandle)>,
    /// The current thread's stack of each node, and the nodes set, to reset them.
    memo: Vec<Option<StackHandle>>,
    touched: Vec<NodeId>,
    /// The current thread's frame of each model frame, and the frames set.
    frames: Vec<Option<FrameHandle>>,
    touched_frames: Vec<FrameId>,
    /// The nodes whose stacks are being made, reused.
    path: Vec<NodeId>,
}

impl<'p> Stacks<'p> {
    /// Names every frame: a function as `profcodec top` names it, a loop, line or instruction
    /// as `loop at file:line in function`.
    fn new(profile: &'p Profile, categories: Categories, fx: &mut FxProfile) -> Stacks<'p> {
        let mut scratch = String::new();
        let labels: Vec<_> = profile
            .frames()
            .map(|(id, frame)| {
                let name = if frame.kind.is_function_like() {
                    fx.intern_string(profile.function_name_in(id, &mut scratch))
                } else {
                    fx.intern_string(&profile.frame_label(id))
                };
                (name, categories.of(frame.kind))
            })
            .collect();
        Stacks {
            profile,
            frames: vec![None; labels.len()],
            labels,
            memo: vec![None; profile.nodes().len()],
            touched: Vec::new(),
            touched_frames: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Forgets the stacks and frames of the previous thread: they belong to one thread.
    fn start_thread(&mut self) {
        for node in self.touched.drain(..) {
            self.memo[node.index()] = None;
        }
        for frame in self.touched_frames.drain(..) {
            self.frames[frame.index()] = None;
        }
    }

    /// The name of a node's frame.
    fn name(&self, node: NodeId) -> StringHandle {
        self.labels[self.profile.node(node).frame.index()].0
    }

    fn stack(&mut self, fx: &mut FxProfile, thread: ThreadHandle, node: NodeId) -> StackHandle {
        // The path up to the nearest node with a stack, then its stacks back down.
        let mut path = std::mem::take(&mut self.path);
        path.clear();
        let mut at = Some(node);
        let mut stack = None;
        while let Some(n) = at {
            if let Some(known) = self.memo[n.index()] {
                stack = Some(known);
                break;
            }
            path.push(n);
            at = self.profile.node(n).parent;
        }
        for &n in path.iter().rev() {
            let model_frame = self.profile.node(n).frame;
            let frame = match self.frames[model_frame.index()] {
                Some(frame) => frame,
                None => {
                    let (name, category_pair) = self.labels[model_frame.index()];
                    let frame = fx.intern_frame(
                        thread,
                        FrameInfo {
                            frame: FxFrame::Label(name),
                            category_pair,
                            flags: FrameFlags::empty(),
                        },
                    );
                    self.frames[model_frame.index()] = Some(frame);
                    self.touched_frames.push(model_frame);
                    frame
                }
            };
            let interned = fx.intern_stack(thread, stack, frame);
            self.memo[n.index()] = Some(interned);
            self.touched.push(n);
            stack = Some(interned);
        }
        self.path = path;
        // The walk starts at the node, so its stack is made or known.
        stack.unwrap_or_else(|| unreachable!("the walk starts at the node"))
    }
}

/// One thread per exported context, in processes by process id, else rank.
fn add_threads(
    profile: &Profile,
    exported: &[bool],
    fx: &mut FxProfile,
) -> Vec<(ContextId, ThreadHandle)> {
    let mut processes: Vec<(Option<(IdKind, u64)>, ProcessHandle)> = Vec::new();
    let mut threads = Vec::new();
    for (id, context) in profile.contexts() {
        if !exported[id.index()] {
            continue;
        }
        let key = [IdKind::Process, IdKind::Rank]
            .into_iter()
            .find_map(|kind| context.id(kind).map(|v| (kind, v)));
        let process = match processes.iter().find(|(k, _)| *k == key) {
            Some(&(_, handle)) => handle,
            None => {
                let name = match key {
                    Some((IdKind::Process, pid)) => format!("process {pid}"),
                    Some((_, rank)) => format!("rank {rank}"),
                    None => profile.name().unwrap_or("profile").to_owned(),
                };
                // Ids beyond 32 bits are cut: the format's ids are 32-bit, and only shown.
                let pid = key.map_or(0, |(_, v)| v as u32);
                let handle = fx.add_process(&name, pid, Timestamp::from_nanos_since_reference(0));
                processes.push((key, handle));
                handle
            }
        };
        let tid = context.id(IdKind::Thread).unwrap_or(id.index() as u64) as u32;
        // No thread is its process's main thread: the format names a main thread after its
        // process, and each context's own name is kept.
        let thread = fx.add_thread(
            process,
            tid,
            Timestamp::from_nanos_since_reference(0),
            false,
        );
        fx.set_thread_name(thread, &profile.context_label(id));
        threads.push((id, thread));
    }
    threads
}

/// The self values of one metric per exported context, as (node, value) in depth-first order.
#[derive(Default)]
struct SamplesByContext {
    starts: Vec<usize>,
    samples: Vec<(NodeId, f64)>,
}

impl SamplesByContext {
    fn new(profile: &Profile, metric: Option<ValueTypeId>, exported: &[bool]) -> SamplesByContext {
        let order = crate::select::depth_first_order(profile);
        let contexts = profile.contexts().len();
        let mut by_context: Vec<Vec<(NodeId, f64)>> = vec![Vec::new(); contexts];
        if let Some(metric) = metric {
            let has_self = profile.value_type(metric).measured.has_self();
            // Only the columns of the metric: a profile may hold many value types.
            let columns = profile.node_value_columns().iter().filter(|column| {
                column.value_type() == metric && exported[column.context().index()]
            });
            for column in columns {
                let list = &mut by_context[column.context().index()];
                if has_self {
                    // 0 where an entry has no self value.
                    let values = column.self_values().iter().copied();
                    list.extend(column.nodes().iter().copied().zip(values));
                    continue;
                }
                for v in column.iter() {
                    if let Some(inclusive) = v.inclusive {
                        // Self is the inclusive value minus the children's inclusive values.
                        list.push((v.node, inclusive));
                        if let Some(parent) = profile.node(v.node).parent {
                            list.push((parent, -inclusive));
                        }
                    }
                }
            }
        }
        let mut starts = Vec::with_capacity(contexts + 1);
        let mut samples = Vec::new();
        for mut list in by_context {
            let start = samples.len();
            starts.push(start);
            list.sort_by_key(|&(node, _)| order[node.index()]);
            for (node, value) in list {
                // An inclusive-only value type gives a node its own value and its children's.
                match samples[start..].last_mut() {
                    Some((last, sum)) if *last == node => *sum += value,
                    _ => samples.push((node, value)),
                }
            }
        }
        starts.push(samples.len());
        SamplesByContext { starts, samples }
    }

    fn of(&self, context: ContextId) -> &[(NodeId, f64)] {
        match self.starts.get(context.index()..context.index() + 2) {
            Some(&[from, to]) => &self.samples[from..to],
            _ => &[],
        }
    }

    fn largest(&self) -> f64 {
        self.samples
            .iter()
            .map(|&(_, v)| v.abs())
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
    }
}

/// The spans of each exported context, as indices into the profile's spans (ordered by a
/// counting sort: no copy of the spans, no growth).
struct SpansByContext<'p> {
    spans: &'p [Span],
    /// `order[starts[c]..starts[c + 1]]` are context `c`'s spans.
    starts: Vec<u32>,
    order: Vec<u32>,
    /// Nanoseconds per span time unit.
    unit_nanos: f64,
    /// The earliest begin: time 0 of the markers.
    start: u64,
}

impl<'p> SpansByContext<'p> {
    fn new(profile: &'p Profile, exported: &[bool]) -> SpansByContext<'p> {
        let spans = profile.spans();
        let kept = |s: &Span| exported[s.context.index()] && s.end >= s.begin;
        let mut starts = vec![0u32; profile.contexts().len() + 1];
        for s in spans.iter().filter(|s| kept(s)) {
            starts[s.context.index() + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut fill = starts.clone();
        let mut order = vec![0u32; starts[starts.len() - 1] as usize];
        for (i, s) in spans.iter().enumerate().filter(|(_, s)| kept(s)) {
            let at = &mut fill[s.context.index()];
            // Spans are counted in u32 by the model.
            order[*at as usize] = i as u32;
            *at += 1;
        }
        let start = spans.iter().map(|s| s.begin).min().unwrap_or(0);
        let unit_nanos = profile
            .span_unit()
            .and_then(Unit::seconds)
            .map_or(1.0, |s| s * 1e9);
        SpansByContext {
            spans,
            starts,
            order,
            unit_nanos,
            start,
        }
    }

    fn of(&self, context: ContextId) -> impl Iterator<Item = &Span> + '_ {
        let (from, to) = (
            self.starts[context.index()] as usize,
            self.starts[context.index() + 1] as usize,
        );
        self.order[from..to]
            .iter()
            .map(|&i| &self.spans[i as usize])
    }

    /// A span time in nanoseconds since the first span.
    fn nanos(&self, t: u64) -> u64 {
        (t.saturating_sub(self.start) as f64 * self.unit_nanos) as u64
    }
}
