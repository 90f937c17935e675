//! pprof's gzipped `profile.proto` (feature `pprof`): what `go tool pprof`, Grafana Pyroscope,
//! Polar Signals and Datadog read.
//!
//! # What the output holds
//!
//! - **Sample types**: every value type of the profile, in the profile's order, named as the
//!   profile names it. pprof values are integers, so each value is rounded once, after summing,
//!   in a unit pprof knows: time of a known length (seconds, microseconds, ticks with their rate)
//!   in `nanoseconds`, samples and counts in `count`, bytes in `bytes`; ticks of unknown rate as
//!   `ticks`, any other unit under its own name. The default sample type is
//!   [`ExportOptions::metric`] when given, else the profile's default value type.
//! - **Samples**: one per (context, call-tree node) with a value, its stack the node's call path
//!   (leaf first), its values the node's self values, one per sample type. EasyProfiler's
//!   values and events (counters and instants, not code that ran) and what is below them are
//!   left out, as `top` leaves them out of its rows; the timelines show them. A value type
//!   measured inclusive only gets a node's inclusive value minus its children's. So pprof's
//!   `flat` of a function is the sum of self values of its nodes, and its `cum` the sum over the
//!   call paths that pass through it, each counted once: for a value type measured self and
//!   inclusive (HPCToolkit, NYTProf, EasyProfiler), the same figures as
//!   [`Profile::top`](profcodec_profile::Profile::top) by function, since their inclusive values
//!   add up from the self values below them.
//! - **Labels**: each sample carries its context's identifier tuple as string labels named by
//!   the kind (`thread`, `rank`, `process`, `node`, `core`, `gpu_device`, `gpu_context`,
//!   `gpu_stream`, or the format's own name), and the context's name as `name`, so
//!   `-tagfocus=rank=3` or `-tags` work. When the profile has contexts other than summaries
//!   (HPCToolkit's per-thread profiles) those are written and the summaries left out; a profile
//!   of summaries only (HPCToolkit's summary profile) is written from them.
//! - **Functions and locations**: one function per function-like frame (function, inlined call,
//!   block, or frame of unknown nature), named as `profcodec top` names its row (the function's
//!   name; else `[0x…]` for an address, `[file]` or `[module]`), with its file and first line.
//!   One location per frame of a call path, with its line and address; a loop, source line or
//!   instruction frame (HPCToolkit) is a location inside the function that encloses it, so its
//!   cost is that function's flat cost, at that line.
//! - **Mappings**: one per load module (for Perl, the package), flagged as symbolized, so pprof
//!   never looks for the binary.
//!
//! Values measured outside the call tree only (NYTProf's per-line statement tables) have no call
//! path and are not written.
//!
//! # Cost
//!
//! Samples are written thread by thread, each thread's call tree by node id (parents before
//! children, as the formats number their trees), so consecutive samples share call paths (kept
//! from one sample to the next: a sample costs the nodes that change, plus copying its path).
//! A thread's values come from the model's columns (one per value type) merged by node: each
//! column is in node order as the formats add their values, so the merge gives each node its
//! values directly; a column in another order (HPCToolkit's) is sorted first, and one of a value
//! type measured inclusive only is turned into self values first. Samples are encoded one by
//! one from a message reused from sample to sample (no allocation per sample), and compressed
//! as they go, in chunks of a quarter megabyte:
//! gzip at its fastest level, as the Go runtime writes its profiles, on a second thread for
//! profiles of more than a few thousand samples. The tables of functions, locations, mappings
//! and strings follow, in batches too, as protobuf's concatenation of messages allows (so gzip
//! compresses the first while the next are encoded); functions and mappings
//! are found through tables indexed by the profile's frames and strings, not by hashing their
//! names. Memory: the tables, a call path, a few chunks of encoded samples, and the sorted
//! copies of one thread's columns not in node order (12 bytes a value, 16 while one is sorted;
//! twice that for a value type measured inclusive only); never the encoded profile. Time: linear in the node values
//! and the length of the call paths written, plus the sorting of columns not in node order
//! (linear for a column made of a few increasing runs).
//!
//! A sample lists every location of its stack, so a call chain `d` deep writes `d²/2` location
//! ids: the samples' encoded size (before gzip, which shrinks repeated stacks but not what a
//! reader decompresses) is projected before anything is written, and a profile over
//! [`ExportOptions::max_output`] is refused with [`ExportError::OutputTooLarge`]. The samples
//! are handed to gzip in chunks of a bounded number of bytes (not of samples), so memory holds
//! one call path and a few chunks, whatever the depth.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::io::Write;

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use flate2::Compression;
use flate2::write::GzEncoder;
use foldhash::fast::RandomState;
use hashbrown::HashTable;
use profcodec_profile::{ContextId, FrameId, IdKind, NodeId, Profile, StringId, Unit};
use prost::Message;

use crate::{ExportError, ExportOptions};

#[rustfmt::skip]
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    reason = "prost-build output, kept as generated"
)]
mod proto;

mod samples;

/// The bytes of encoded samples handed to gzip at once: large enough that the per-chunk cost
/// vanishes, small enough that the buffer stays small whatever the samples' depth (a chunk
/// holds whole samples, so one sample deeper than this makes a chunk of its own).
const BATCH_BYTES: usize = 256 * 1024;

/// Writes `profile` to `out` as gzipped pprof (see the [module docs](self) for what it holds).
///
/// # Errors
///
/// [`ExportError::UnknownMetric`] when [`ExportOptions::metric`] names no value type of the
/// profile; [`ExportError::Io`] when writing fails.
pub fn write_pprof(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let default_type = crate::select::metric(profile, options)?;
    let mut writer = Writer::new(profile);
    let sample_types: Vec<proto::ValueType> = profile
        .value_types()
        .map(|(_, vt)| {
            let (name, unit) = (
                writer.strings.id_of(profile, vt.name),
                pprof_unit(profile, vt.unit).0,
            );
            proto::ValueType {
                r#type: name,
                unit: writer.strings.intern(unit),
            }
        })
        .collect();
    let scales: Vec<f64> = profile
        .value_types()
        .map(|(_, vt)| pprof_unit(profile, vt.unit).1)
        .collect();

    let samples = samples::Samples::new(profile);
    if let Some(budget) = options.max_output {
        let projected = projected_samples(profile, &samples, &scales, budget);
        crate::budget::check("pprof (samples before gzip)", projected, Some(budget))?;
    }
    let mut gz = Compressor::new(out, samples.len());
    let mut batch = SampleBatch::new();
    // The call path of the sample being written, root first, kept from one sample to the next:
    // samples go by node id, parents before children, so consecutive ones share most of it.
    let mut path = CallPath::new(profile);
    samples.for_each(|context, node, values| {
        let sample = batch.next();
        sample.value.clear();
        // A float outside i64 saturates; NaN becomes 0 (`as` never panics).
        sample.value.extend(
            values
                .iter()
                .zip(&scales)
                .map(|(v, scale)| (v * scale).round() as i64),
        );
        if sample.value.iter().all(|&v| v == 0) {
            batch.discard_last();
            return Ok::<(), ExportError>(());
        }
        path.move_to(node, |n| writer.location(n));
        sample.location_id.clear();
        sample.location_id.extend(path.locations.iter().rev());
        sample.label.clear();
        sample.label.extend_from_slice(writer.labels(context));
        batch.encode_last(&mut gz)
    })?;
    batch.flush(&mut gz)?;

    let default_sample_type = default_type.map_or(0, |vt| sample_types[vt.index()].r#type);
    // The tables go in batches too, so that gzip compresses the first while the next are
    // encoded, instead of after the whole of them.
    write_in_batches(&mut gz, writer.mappings, |p| &mut p.mapping)?;
    write_in_batches(&mut gz, writer.locations, |p| &mut p.location)?;
    write_in_batches(&mut gz, writer.functions, |p| &mut p.function)?;
    write_in_batches(&mut gz, writer.strings.table, |p| &mut p.string_table)?;
    let types = proto::Profile {
        sample_type: sample_types,
        default_sample_type,
        ..proto::Profile::default()
    };
    let mut buf = gz.buffer();
    types.encode(&mut buf).map_err(std::io::Error::other)?;
    gz.write(buf)?;
    gz.finish()
}

/// Table entries (mappings, locations, functions, strings) encoded per message: a few hundred
/// kilobytes at most.
const TABLE_ENTRIES_PER_BATCH: usize = 16 * 1024;

/// Encodes `entries` as the `field` of messages of [`TABLE_ENTRIES_PER_BATCH`] entries each,
/// in order (protobuf's concatenation appends them, so indices into the string table hold).
fn write_in_batches<T, W: Write>(
    gz: &mut Compressor<W>,
    entries: Vec<T>,
    field: fn(&mut proto::Profile) -> &mut Vec<T>,
) -> Result<(), ExportError> {
    let mut message = proto::Profile::default();
    let mut entries = entries.into_iter();
    loop {
        let batch = field(&mut message);
        batch.clear();
        batch.extend(entries.by_ref().take(TABLE_ENTRIES_PER_BATCH));
        if batch.is_empty() {
            return Ok(());
        }
        let mut buf = gz.buffer();
        message.encode(&mut buf).map_err(std::io::Error::other)?;
        gz.write(buf)?;
    }
}

/// The key of `Profile.sample` (field 2, length-delimited): each sample is encoded as that
/// field of a `Profile` message. Protobuf merges concatenated messages, appending their repeated
/// fields, so a run of such fields is a message holding only samples.
const SAMPLE_FIELD_KEY: u8 = (2 << 3) | 2;

/// Samples encoded as they come, each as the sample field of a `Profile` message
/// ([`SAMPLE_FIELD_KEY`]; prost would size a message of many samples before encoding it,
/// walking every sample once more), into a chunk handed to gzip when it holds [`BATCH_BYTES`]:
/// memory is bounded by bytes, not by a number of samples of any depth. The sample and the
/// chunk are reused, so that a sample costs no allocation.
struct SampleBatch {
    sample: proto::Sample,
    /// Whether `sample` holds a sample to encode.
    pending: bool,
    chunk: Vec<u8>,
}

impl SampleBatch {
    fn new() -> SampleBatch {
        SampleBatch {
            sample: proto::Sample::default(),
            pending: false,
            chunk: Vec::new(),
        }
    }

    /// The next sample, holding what the last one held.
    fn next(&mut self) -> &mut proto::Sample {
        self.pending = true;
        &mut self.sample
    }

    /// Takes back the sample [`next`](Self::next) gave.
    fn discard_last(&mut self) {
        self.pending = false;
    }

    /// Encodes the sample [`next`](Self::next) gave, handing the chunk to `out` once it holds
    /// [`BATCH_BYTES`].
    fn encode_last<W: Write>(&mut self, out: &mut Compressor<W>) -> Result<(), ExportError> {
        if !std::mem::take(&mut self.pending) {
            return Ok(());
        }
        if self.chunk.capacity() == 0 {
            self.chunk = out.buffer();
        }
        self.chunk.push(SAMPLE_FIELD_KEY);
        self.sample
            .encode_length_delimited(&mut self.chunk)
            .map_err(std::io::Error::other)?;
        if self.chunk.len() >= BATCH_BYTES {
            self.flush(out)?;
        }
        Ok(())
    }

    /// Hands the encoded samples to `out`.
    fn flush<W: Write>(&mut self, out: &mut Compressor<W>) -> Result<(), ExportError> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.chunk);
        out.write(chunk)?;
        self.chunk = out.buffer();
        Ok(())
    }
}

/// The bytes of the samples, encoded (before gzip), projected from above: at most `budget`
/// when they fit in it, else exactly but for the location ids, each counted at the length of
/// the largest possible (ids are given in the order the samples need them) and for the labels
/// (each counted at its largest). From the cheapest bound to
/// the closest: every node value at the deepest stack; every column entry at its own node's
/// depth; a pass over the samples as they are written (only for profiles over the budget by
/// the bounds before).
fn projected_samples(
    profile: &Profile,
    samples: &samples::Samples<'_>,
    scales: &[f64],
    budget: u64,
) -> u64 {
    let nodes = profile.nodes().len();
    if nodes == 0 {
        return 0;
    }
    // A location per function-like frame, and per node of another frame (a loop, line or
    // instruction, located in the function owning it), at most.
    let mut depths: Vec<u32> = Vec::with_capacity(nodes);
    let mut locations = profile.frames().len() as u64;
    for (_, node) in profile.nodes() {
        depths.push(node.parent.map_or(1, |p| depths[p.index()] + 1));
        locations += u64::from(!profile.frame(node.frame).kind.is_function_like());
    }
    let location = varint_len(locations);
    let label_bytes: Vec<u64> = profile
        .contexts()
        .map(|(_, c)| LABEL_BYTES * (c.ids.len() as u64 + u64::from(c.name.is_some())))
        .collect();
    let max_labels = label_bytes.iter().copied().max().unwrap_or(0);
    let values = VALUE_BYTES * scales.len() as u64;
    let max_depth = u64::from(depths.iter().copied().max().unwrap_or(0));
    let at_most = sample_bytes(max_depth * location, values, max_labels);
    let bound = at_most.saturating_mul(samples.len() as u64);
    if bound <= budget {
        return bound;
    }
    let mut bound: u64 = 0;
    for (context, column, inclusive_only) in samples.columns() {
        let labels = label_bytes[context.index()];
        for node in column {
            let depth = u64::from(depths[node.index()]);
            let mut bytes = sample_bytes(depth * location, values, labels);
            if inclusive_only && depth > 1 {
                bytes += sample_bytes((depth - 1) * location, values, labels);
            }
            bound = bound.saturating_add(bytes);
        }
    }
    if bound <= budget {
        return bound;
    }
    let mut total: u64 = 0;
    let _ = samples.for_each(|context, node, values| {
        let mut value_bytes = 0;
        let mut zero = true;
        for (v, scale) in values.iter().zip(scales) {
            let v = (v * scale).round() as i64;
            zero &= v == 0;
            // A negative int64 takes ten bytes.
            value_bytes += varint_len(v as u64);
        }
        if !zero {
            let depth = u64::from(depths[node.index()]);
            let labels = label_bytes[context.index()];
            total = total.saturating_add(sample_bytes(depth * location, value_bytes, labels));
        }
        Ok::<(), std::convert::Infallible>(())
    });
    total
}

/// A label, encoded, at most: its key and length, and two string indices of up to 5 bytes
/// with their keys.
const LABEL_BYTES: u64 = 14;

/// A value, encoded, at most.
const VALUE_BYTES: u64 = 10;

/// The bytes of a sample field holding `locations` bytes of location ids, `values` of values
/// and `labels` of labels.
fn sample_bytes(locations: u64, values: u64, labels: u64) -> u64 {
    let packed = |len: u64| {
        if len == 0 {
            0
        } else {
            1 + varint_len(len) + len
        }
    };
    let inner = packed(locations) + packed(values) + labels;
    1 + varint_len(inner) + inner
}

/// The bytes of `x` as a protobuf varint.
fn varint_len(x: u64) -> u64 {
    u64::from((64 - (x | 1).leading_zeros()).div_ceil(7))
}

/// gzip at its fastest level, as the Go runtime writes its profiles. A large profile is
/// compressed on a second thread while its samples are encoded (gzip costs about as much as
/// the encoding); the writer stays on the calling thread, so it need not be `Send`: the
/// compressed chunks come back to it.
enum Compressor<W: Write> {
    Inline {
        gz: GzEncoder<W>,
        /// The chunk to fill next, reused.
        chunk: Vec<u8>,
    },
    Threaded {
        out: W,
        to_worker: SyncSender<Vec<u8>>,
        /// Each chunk's compressed bytes, and the emptied chunk.
        from_worker: Receiver<(Vec<u8>, Vec<u8>)>,
        worker: JoinHandle<std::io::Result<Vec<u8>>>,
        /// Emptied chunks, to be filled again.
        spare: Vec<Vec<u8>>,
    },
}

/// Samples from which a profile is compressed on a second thread: from about a megabyte of
/// encoded samples, where a thread costs nothing in comparison.
const THREADED_FROM_SAMPLES: usize = 16 * 1024;

/// Chunks queued for the gzip thread: enough to keep both threads busy, in little memory.
const CHUNKS_IN_FLIGHT: usize = 4;

impl<W: Write> Compressor<W> {
    /// A compressor into `out` for a profile of about `samples` samples.
    fn new(out: W, samples: usize) -> Compressor<W> {
        let level = Compression::fast();
        if samples < THREADED_FROM_SAMPLES {
            return Compressor::Inline {
                gz: GzEncoder::new(out, level),
                chunk: Vec::new(),
            };
        }
        let (to_worker, chunks) = sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
        // Room for every chunk that can be out at once (queued, being compressed, being sent),
        // so the gzip thread never waits on the writing one.
        let (done, from_worker) = sync_channel(2 * CHUNKS_IN_FLIGHT + 2);
        let worker = std::thread::spawn(move || -> std::io::Result<Vec<u8>> {
            let mut gz = GzEncoder::new(Vec::new(), level);
            for chunk in chunks {
                gz.write_all(&chunk)?;
                // What gzip wrote so far goes back; the encoder only ever appends to it.
                let compressed = std::mem::take(gz.get_mut());
                if done.send((compressed, chunk)).is_err() {
                    // The writing thread gave up (an error): nothing to finish.
                    return Ok(Vec::new());
                }
            }
            gz.finish()
        });
        Compressor::Threaded {
            out,
            to_worker,
            from_worker,
            worker,
            spare: Vec::new(),
        }
    }

    /// An empty chunk to encode into.
    fn buffer(&mut self) -> Vec<u8> {
        match self {
            Compressor::Inline { chunk, .. } => std::mem::take(chunk),
            Compressor::Threaded { spare, .. } => spare.pop().unwrap_or_default(),
        }
    }

    /// Compresses `chunk` (from [`buffer`](Self::buffer)) into the output.
    fn write(&mut self, mut chunk: Vec<u8>) -> Result<(), ExportError> {
        match self {
            Compressor::Inline { gz, chunk: next } => {
                gz.write_all(&chunk)?;
                chunk.clear();
                *next = chunk;
            }
            Compressor::Threaded {
                out,
                to_worker,
                from_worker,
                spare,
                ..
            } => {
                while let Ok((compressed, mut emptied)) = from_worker.try_recv() {
                    out.write_all(&compressed)?;
                    emptied.clear();
                    spare.push(emptied);
                }
                to_worker.send(chunk).map_err(|_| gzip_thread_failed())?;
            }
        }
        Ok(())
    }

    /// Ends the gzip stream and flushes the output.
    fn finish(self) -> Result<(), ExportError> {
        match self {
            Compressor::Inline { gz, .. } => gz.finish()?.flush()?,
            Compressor::Threaded {
                mut out,
                to_worker,
                from_worker,
                worker,
                ..
            } => {
                drop(to_worker);
                for (compressed, _) in from_worker {
                    out.write_all(&compressed)?;
                }
                let tail = worker.join().map_err(|_| gzip_thread_failed())??;
                out.write_all(&tail)?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

fn gzip_thread_failed() -> std::io::Error {
    std::io::Error::other("the gzip thread of the pprof export stopped")
}

/// pprof's name for `unit`, and the factor from the model's values to it.
fn pprof_unit(profile: &Profile, unit: Unit) -> (&str, f64) {
    match unit {
        Unit::Samples | Unit::Count => ("count", 1.0),
        Unit::Bytes => ("bytes", 1.0),
        Unit::Ticks { per_second: None } => ("ticks", 1.0),
        Unit::Other(_) => (profile.unit_name(unit), 1.0),
        // Every other unit measures time of a known length.
        _ => ("nanoseconds", unit.seconds().map_or(1.0, |s| s * 1e9)),
    }
}

/// A call path, root first, with the location of each of its nodes, moved from node to node by
/// its common prefix: the cost of a move is the nodes that change, not the depth.
struct CallPath {
    nodes: Vec<NodeId>,
    locations: Vec<u64>,
    /// Each node's depth on the path plus one (0: not on it).
    depth: Vec<u32>,
    /// The nodes to add on a move, leaf first.
    pending: Vec<NodeId>,
    parents: Vec<Option<NodeId>>,
}

impl CallPath {
    fn new(profile: &Profile) -> CallPath {
        CallPath {
            nodes: Vec::new(),
            locations: Vec::new(),
            depth: vec![0; profile.nodes().len()],
            pending: Vec::new(),
            parents: profile.nodes().map(|(_, n)| n.parent).collect(),
        }
    }

    /// Makes the path `node`'s call path.
    fn move_to(&mut self, node: NodeId, mut location: impl FnMut(NodeId) -> u64) {
        self.pending.clear();
        let mut at = Some(node);
        // Up to the deepest node already on the path.
        let keep = loop {
            match at {
                Some(n) if self.depth[n.index()] > 0 => break self.depth[n.index()] as usize,
                Some(n) => {
                    self.pending.push(n);
                    at = self.parents[n.index()];
                }
                None => break 0,
            }
        };
        for n in self.nodes.drain(keep..) {
            self.depth[n.index()] = 0;
        }
        self.locations.truncate(keep);
        while let Some(n) = self.pending.pop() {
            self.nodes.push(n);
            self.depth[n.index()] = self.nodes.len() as u32;
            self.locations.push(location(n));
        }
    }
}

/// The string table, interned: each string is stored once, in the table, and found again by
/// its hash through an index of table positions.
struct Strings {
    table: Vec<String>,
    index: HashTable<u32>,
    hasher: RandomState,
    /// The table index of each profile string already interned (`-1`: not yet).
    by_id: Vec<i64>,
}

impl Strings {
    fn new(profile: &Profile) -> Strings {
        let mut strings = Strings {
            table: Vec::new(),
            index: HashTable::new(),
            hasher: RandomState::default(),
            by_id: vec![-1; profile.string_count()],
        };
        // pprof requires the empty string first.
        strings.intern("");
        strings
    }

    fn intern(&mut self, s: &str) -> i64 {
        self.intern_cow(Cow::Borrowed(s))
    }

    /// [`intern`](Self::intern), keeping an owned string as it is.
    fn intern_cow(&mut self, s: Cow<'_, str>) -> i64 {
        let hash = self.hasher.hash_one(&*s);
        let table = &mut self.table;
        let at = match self.index.entry(
            hash,
            |&i| table[i as usize] == *s,
            |&i| self.hasher.hash_one(&table[i as usize]),
        ) {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                // More strings than u32 indices cannot be: each is a function, file or label.
                let at = table.len() as u32;
                table.push(s.into_owned());
                *e.insert(at).get()
            }
        };
        i64::from(at)
    }

    /// Adds `s` to the table without looking it up, nor making it found by
    /// [`intern`](Self::intern): for a string that is rarely written twice.
    fn push(&mut self, s: String) -> i64 {
        self.table.push(s);
        self.table.len() as i64 - 1
    }

    /// The table index of a profile string. The profile's strings are distinct already, so
    /// they are not looked up: one may equal a string of [`intern`](Self::intern) (a unit, a
    /// label value), and pprof reads a string written twice as well as once.
    fn id_of(&mut self, profile: &Profile, id: StringId) -> i64 {
        let memo = self.by_id[id.index()];
        if memo >= 0 {
            return memo;
        }
        let i = self.table.len() as i64;
        self.table.push(profile.string(id).to_owned());
        self.by_id[id.index()] = i;
        i
    }
}

/// Builds the tables the samples point into, as the samples need them.
struct Writer<'p> {
    profile: &'p Profile,
    strings: Strings,
    /// The function-like frame owning each node (itself, or the owner of its parent).
    owner: Vec<FrameId>,
    /// The location id of each node (0: not made yet).
    node_location: Vec<u64>,
    /// The location of each function-like frame (0: not made yet).
    frame_location: Vec<u64>,
    /// The location of each loop, line or instruction frame in its owner.
    location_of: HashMap<(FrameId, FrameId), u64, RandomState>,
    locations: Vec<proto::Location>,
    /// The function id of each owner frame (0: not made yet).
    frame_function: Vec<u64>,
    /// The first function of each name (by string table index; 0: none). Functions are told
    /// apart by name, file and first line; most names have one function, and the others are
    /// found in `other_functions`.
    function_by_name: Vec<u64>,
    other_functions: HashMap<(i64, i64, i64), u64, RandomState>,
    functions: Vec<proto::Function>,
    /// The mapping of each module string (0: not made yet).
    mapping_of: Vec<u64>,
    mappings: Vec<proto::Mapping>,
    /// The labels of each context (made on first use).
    context_labels: Vec<Option<Vec<proto::Label>>>,
}

impl<'p> Writer<'p> {
    fn new(profile: &'p Profile) -> Writer<'p> {
        let mut owner: Vec<FrameId> = Vec::with_capacity(profile.nodes().len());
        for (_, node) in profile.nodes() {
            let own = match node.parent {
                Some(parent) if !profile.frame(node.frame).kind.is_function_like() => {
                    owner[parent.index()]
                }
                _ => node.frame,
            };
            owner.push(own);
        }
        Writer {
            profile,
            strings: Strings::new(profile),
            owner,
            node_location: vec![0; profile.nodes().len()],
            frame_location: vec![0; profile.frames().len()],
            location_of: HashMap::default(),
            locations: Vec::new(),
            frame_function: vec![0; profile.frames().len()],
            function_by_name: Vec::new(),
            other_functions: HashMap::default(),
            functions: Vec::new(),
            mapping_of: vec![0; profile.string_count()],
            mappings: Vec::new(),
            context_labels: vec![None; profile.contexts().len()],
        }
    }

    fn location(&mut self, node: NodeId) -> u64 {
        let memo = self.node_location[node.index()];
        if memo != 0 {
            return memo;
        }
        let frame = self.profile.node(node).frame;
        let owner = self.owner[node.index()];
        // A function-like frame is its own owner, and is looked up by frame alone; only loops,
        // lines and instructions need the (frame, owner) map.
        let known = if frame == owner {
            Some(self.frame_location[frame.index()]).filter(|&id| id != 0)
        } else {
            self.location_of.get(&(frame, owner)).copied()
        };
        let id = match known {
            Some(id) => id,
            None => {
                let function_id = self.function(owner);
                let f = *self.profile.frame(frame);
                let module = f.module.or(self.profile.frame(owner).module);
                let mapping_id = module.map_or(0, |m| self.mapping(m));
                let id = self.locations.len() as u64 + 1;
                self.locations.push(proto::Location {
                    id,
                    mapping_id,
                    address: f.address.unwrap_or(0),
                    line: vec![proto::Line {
                        function_id,
                        line: f.line.map_or(0, i64::from),
                        column: 0,
                    }],
                    is_folded: false,
                });
                if frame == owner {
                    self.frame_location[frame.index()] = id;
                } else {
                    self.location_of.insert((frame, owner), id);
                }
                id
            }
        };
        self.node_location[node.index()] = id;
        id
    }

    fn function(&mut self, frame: FrameId) -> u64 {
        let memo = self.frame_function[frame.index()];
        if memo != 0 {
            return memo;
        }
        let profile = self.profile;
        let f = profile.frame(frame);
        let name = match (f.function, f.address) {
            (Some(name), _) => self.strings.id_of(profile, name),
            // Named by its address, `[0x…]`: a name of its own (two such frames differ in their
            // module), written without looking it up, which for a profile of many addresses
            // (hpcrun's) was a hash table's cache miss per frame. pprof reads a name written
            // twice as well as once, and groups its functions by name.
            (None, Some(_)) => self.strings.push(profile.function_name(frame).into_owned()),
            (None, None) => self.strings.intern_cow(profile.function_name(frame)),
        };
        let filename = f.file.map_or(0, |s| self.strings.id_of(profile, s));
        let start_line = f.line.map_or(0, i64::from);
        let id = self.function_id(name, filename, start_line);
        self.frame_function[frame.index()] = id;
        id
    }

    /// The function of `name`, `filename` and `start_line`, made when new.
    fn function_id(&mut self, name: i64, filename: i64, start_line: i64) -> u64 {
        let slot = name as usize;
        if self.function_by_name.len() <= slot {
            self.function_by_name.resize(slot + 1, 0);
        }
        let first = self.function_by_name[slot];
        let key = (name, filename, start_line);
        if first != 0 {
            let f = &self.functions[first as usize - 1];
            if (f.filename, f.start_line) == (filename, start_line) {
                return first;
            }
            if let Some(&id) = self.other_functions.get(&key) {
                return id;
            }
        }
        let id = self.functions.len() as u64 + 1;
        self.functions.push(proto::Function {
            id,
            name,
            // No system (mangled) name: the name is as the profiler shows it, and pprof
            // shortens only names that equal their system name.
            system_name: 0,
            filename,
            start_line,
        });
        if first == 0 {
            self.function_by_name[slot] = id;
        } else {
            self.other_functions.insert(key, id);
        }
        id
    }

    fn mapping(&mut self, module: StringId) -> u64 {
        let memo = self.mapping_of[module.index()];
        if memo != 0 {
            return memo;
        }
        let id = self.mappings.len() as u64 + 1;
        let filename = self.strings.id_of(self.profile, module);
        self.mappings.push(proto::Mapping {
            id,
            filename,
            // Symbolized already: pprof must not look for the binary and symbolize again.
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            ..proto::Mapping::default()
        });
        self.mapping_of[module.index()] = id;
        id
    }

    fn labels(&mut self, context: ContextId) -> &[proto::Label] {
        let profile = self.profile;
        let strings = &mut self.strings;
        self.context_labels[context.index()].get_or_insert_with(|| {
            let c = profile.context(context);
            let mut labels: Vec<proto::Label> = c
                .ids
                .iter()
                .map(|&(kind, value)| {
                    let key = match kind {
                        IdKind::Other(name) => strings.id_of(profile, name),
                        known => strings.intern(known.name().unwrap_or("id")),
                    };
                    proto::Label {
                        key,
                        str: strings.intern(&value.to_string()),
                        ..proto::Label::default()
                    }
                })
                .collect();
            if let Some(name) = c.name {
                labels.push(proto::Label {
                    key: strings.intern("name"),
                    str: strings.id_of(profile, name),
                    ..proto::Label::default()
                });
            }
            labels
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profcodec_profile::{Context, Frame, FrameKind, Measured, ProfileBuilder};
    use std::io::Read;

    fn decode(bytes: &[u8]) -> proto::Profile {
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(bytes)
            .read_to_end(&mut raw)
            .expect("gzip");
        proto::Profile::decode(raw.as_slice()).expect("profile.proto")
    }

    fn function(b: &mut ProfileBuilder, name: &str) -> FrameId {
        let name = b.intern_string(name).unwrap();
        b.intern_frame(Frame::function(name)).unwrap()
    }

    /// A value type measured self only.
    fn counted(b: &mut ProfileBuilder, name: &str, unit: Unit) -> profcodec_profile::ValueTypeId {
        b.intern_value_type(name, unit, Measured::SelfOnly).unwrap()
    }

    fn export(profile: &Profile) -> proto::Profile {
        let mut out = Vec::new();
        write_pprof(profile, &ExportOptions::default(), &mut out).expect("export");
        decode(&out)
    }

    /// The function names of a sample's stack, leaf first.
    fn names(p: &proto::Profile, sample: &proto::Sample) -> Vec<String> {
        sample
            .location_id
            .iter()
            .map(|&l| {
                let location = &p.location[l as usize - 1];
                let function = &p.function[location.line[0].function_id as usize - 1];
                p.string_table[function.name as usize].clone()
            })
            .collect()
    }

    #[test]
    fn samples_carry_self_values_and_labels() {
        let mut b = ProfileBuilder::new();
        let thread = b
            .intern_context(Context::new([(IdKind::Rank, 3), (IdKind::Thread, 0)]))
            .unwrap();
        let time = b
            .intern_value_type("time", Unit::Seconds, Measured::SelfAndInclusive)
            .unwrap();
        let calls = counted(&mut b, "calls", Unit::Count);
        let main = function(&mut b, "main");
        let work = function(&mut b, "work");
        let root = b.intern_stack(None, [main]).unwrap();
        let leaf = b.intern_stack(None, [main, work]).unwrap();
        b.add_self(thread, root, time, 0.25).unwrap();
        b.add_inclusive(thread, root, time, 1.0).unwrap();
        b.add_self(thread, leaf, time, 0.75).unwrap();
        b.add_inclusive(thread, leaf, time, 0.75).unwrap();
        b.add_self(thread, leaf, calls, 3.0).unwrap();
        let p = export(&b.build());

        assert_eq!(p.string_table[0], "");
        let types: Vec<(&str, &str)> = p
            .sample_type
            .iter()
            .map(|t| {
                (
                    p.string_table[t.r#type as usize].as_str(),
                    p.string_table[t.unit as usize].as_str(),
                )
            })
            .collect();
        assert_eq!(types, [("time", "nanoseconds"), ("calls", "count")]);
        assert_eq!(p.string_table[p.default_sample_type as usize], "time");
        assert_eq!(p.sample.len(), 2);
        let by_leaf: HashMap<String, &proto::Sample> = p
            .sample
            .iter()
            .map(|s| (names(&p, s)[0].clone(), s))
            .collect();
        assert_eq!(by_leaf["main"].value, [250_000_000, 0]);
        assert_eq!(by_leaf["work"].value, [750_000_000, 3]);
        assert_eq!(names(&p, by_leaf["work"]), ["work", "main"]);
        let labels: Vec<(&str, &str)> = by_leaf["work"]
            .label
            .iter()
            .map(|l| {
                (
                    p.string_table[l.key as usize].as_str(),
                    p.string_table[l.str as usize].as_str(),
                )
            })
            .collect();
        assert_eq!(labels, [("rank", "3"), ("thread", "0")]);
    }

    #[test]
    fn loops_and_lines_are_locations_of_their_function() {
        let mut b = ProfileBuilder::new();
        let all = b.intern_context(Context::new([])).unwrap();
        let cycles = counted(&mut b, "cycles", Unit::Count);
        let file = b.intern_string("a.c").unwrap();
        let lib = b.intern_string("liba.so").unwrap();
        let main = b.intern_string("main").unwrap();
        let main = b
            .intern_frame(
                Frame::function(main)
                    .with_file(file)
                    .with_line(10)
                    .with_module(lib),
            )
            .unwrap();
        let body = b
            .intern_frame(Frame::new(FrameKind::Loop).with_file(file).with_line(12))
            .unwrap();
        let unnamed = b
            .intern_frame(Frame::new(FrameKind::Function).with_address(0x40))
            .unwrap();
        let in_loop = b.intern_stack(None, [main, body]).unwrap();
        let called = b.intern_stack(None, [main, body, unnamed]).unwrap();
        b.add_self(all, in_loop, cycles, 5.0).unwrap();
        b.add_self(all, called, cycles, 7.0).unwrap();
        let p = export(&b.build());

        let loop_sample = p.sample.iter().find(|s| s.value == [5]).unwrap();
        assert_eq!(names(&p, loop_sample), ["main", "main"]);
        let loop_location = &p.location[loop_sample.location_id[0] as usize - 1];
        assert_eq!(loop_location.line[0].line, 12);
        let mapping = &p.mapping[loop_location.mapping_id as usize - 1];
        assert_eq!(p.string_table[mapping.filename as usize], "liba.so");
        assert!(mapping.has_functions);
        let called_sample = p.sample.iter().find(|s| s.value == [7]).unwrap();
        assert_eq!(names(&p, called_sample), ["[0x40]", "main", "main"]);
        assert!(p.sample.iter().all(|s| s.label.is_empty()));
    }

    #[test]
    fn inclusive_only_values_become_self_values() {
        let mut b = ProfileBuilder::new();
        let all = b.intern_context(Context::new([])).unwrap();
        let time = b
            .intern_value_type("time", Unit::Microseconds, Measured::InclusiveOnly)
            .unwrap();
        let a = function(&mut b, "a");
        let c = function(&mut b, "c");
        let root = b.intern_stack(None, [a]).unwrap();
        let leaf = b.intern_stack(None, [a, c]).unwrap();
        b.add_inclusive(all, root, time, 10.0).unwrap();
        b.add_inclusive(all, leaf, time, 4.0).unwrap();
        let p = export(&b.build());
        let mut values: Vec<i64> = p.sample.iter().map(|s| s.value[0]).collect();
        values.sort_unstable();
        assert_eq!(values, [4_000, 6_000]);
    }

    #[test]
    fn values_added_out_of_node_order_give_the_same_samples() {
        // Many value types (more than are merged by scanning), one measured inclusive only,
        // their values added leaf first, in two contexts: each (context, node) is one sample
        // with every value type's value.
        let types = 20;
        let mut b = ProfileBuilder::new();
        let threads: Vec<ContextId> = (0..2)
            .map(|t| {
                b.intern_context(Context::new([(IdKind::Thread, t)]))
                    .unwrap()
            })
            .collect();
        let counts: Vec<_> = (0..types)
            .map(|t| counted(&mut b, &format!("c{t}"), Unit::Count))
            .collect();
        let inclusive = b
            .intern_value_type("incl", Unit::Count, Measured::InclusiveOnly)
            .unwrap();
        let frames: Vec<FrameId> = ["a", "b", "c"]
            .iter()
            .map(|name| function(&mut b, name))
            .collect();
        let nodes: Vec<NodeId> = (1..=frames.len())
            .map(|depth| {
                b.intern_stack(None, frames[..depth].iter().copied())
                    .unwrap()
            })
            .collect();
        for (t, &thread) in threads.iter().enumerate() {
            for (depth, &node) in nodes.iter().enumerate().rev() {
                for (c, &count) in counts.iter().enumerate() {
                    let value = (1000 * t + 100 * depth + c + 1) as f64;
                    b.add_self(thread, node, count, value).unwrap();
                }
                // Inclusive: 30, 20, 10 from the root down: self 10 each.
                let total = (10 * (frames.len() - depth)) as f64;
                b.add_inclusive(thread, node, inclusive, total).unwrap();
            }
        }
        let p = export(&b.build());
        assert_eq!(p.sample.len(), threads.len() * nodes.len());
        for sample in &p.sample {
            let thread: usize = p.string_table[sample.label[0].str as usize]
                .parse()
                .unwrap();
            let depth = sample.location_id.len() - 1;
            let expected: Vec<i64> = (0..types)
                .map(|c| (1000 * thread + 100 * depth + c + 1) as i64)
                .chain([10])
                .collect();
            assert_eq!(sample.value, expected, "thread {thread}, depth {depth}");
        }
    }

    #[test]
    fn summaries_are_written_only_without_detailed_contexts() {
        let mut b = ProfileBuilder::new();
        let summary = b.intern_context(Context::summary()).unwrap();
        let t0 = b
            .intern_context(Context::new([(IdKind::Thread, 0)]))
            .unwrap();
        let samples = counted(&mut b, "samples", Unit::Samples);
        let f = function(&mut b, "f");
        let node = b.intern_stack(None, [f]).unwrap();
        b.add_self(summary, node, samples, 9.0).unwrap();
        b.add_self(t0, node, samples, 4.0).unwrap();
        let p = export(&b.build());
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].value, [4]);

        let mut b = ProfileBuilder::new();
        let summary = b.intern_context(Context::summary()).unwrap();
        let samples = counted(&mut b, "samples", Unit::Samples);
        let f = function(&mut b, "f");
        let node = b.intern_stack(None, [f]).unwrap();
        b.add_self(summary, node, samples, 9.0).unwrap();
        let p = export(&b.build());
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].value, [9]);
    }

    #[test]
    fn an_unknown_metric_is_refused_with_the_known_ones() {
        let mut b = ProfileBuilder::new();
        counted(&mut b, "time", Unit::Seconds);
        let options = ExportOptions::new().metric("cycles");
        let err = write_pprof(&b.build(), &options, Vec::new()).unwrap_err();
        assert!(err.to_string().contains("time"), "{err}");
    }

    #[test]
    fn deep_samples_stream_in_chunks_of_bytes_and_project_from_above() {
        let depth = 3_000;
        let mut b = ProfileBuilder::new();
        let all = b.intern_context(Context::new([])).unwrap();
        let n = counted(&mut b, "n", Unit::Count);
        let f = function(&mut b, "f");
        let mut node = None;
        for _ in 0..depth {
            let at = b.intern_stack(node, [f]).unwrap();
            b.add_self(all, at, n, 1.0).unwrap();
            node = Some(at);
        }
        let profile = b.build();
        let p = export(&profile);
        assert_eq!(p.sample.len(), depth);
        let mut lengths: Vec<usize> = p.sample.iter().map(|s| s.location_id.len()).collect();
        lengths.sort_unstable();
        assert!(lengths.iter().enumerate().all(|(i, &l)| l == i + 1));
        // The samples' bytes, encoded: the projection bounds them from above, closely.
        let encoded: u64 = p
            .sample
            .iter()
            .map(|s| {
                let len = s.encoded_len() as u64;
                1 + varint_len(len) + len
            })
            .sum();
        let scales = [1.0];
        let projected = projected_samples(&profile, &samples::Samples::new(&profile), &scales, 0);
        assert!(projected >= encoded, "{projected} < {encoded}");
        assert!(
            projected <= encoded + encoded / 4,
            "{projected} vs {encoded}"
        );
    }

    #[test]
    fn many_samples_stream_in_batches() {
        // Below and above the size from which gzip runs on a second thread.
        for count in [3000, THREADED_FROM_SAMPLES + 100] {
            let mut b = ProfileBuilder::new();
            let all = b.intern_context(Context::new([])).unwrap();
            let n = counted(&mut b, "n", Unit::Count);
            let mut frames = Vec::new();
            for i in 0..count {
                let name = b.intern_string(&format!("f{i}")).unwrap();
                frames.push(b.intern_frame(Frame::function(name)).unwrap());
            }
            for &f in &frames {
                let node = b.intern_stack(None, [frames[0], f]).unwrap();
                b.add_self(all, node, n, 1.0).unwrap();
            }
            let p = export(&b.build());
            // f0 under f0 and each other frame under f0: one distinct stack a frame.
            assert_eq!(p.sample.len(), count);
            assert_eq!(p.function.len(), count);
            let total = p.sample.iter().map(|s| s.value[0]).sum::<i64>();
            assert_eq!(total, count as i64);
        }
    }
}
