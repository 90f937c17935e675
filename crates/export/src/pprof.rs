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
//!   (leaf first), its values the node's self values, one per sample type. A value type
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
//! Samples are written thread by thread, each thread's call tree depth first, so consecutive
//! samples share most of their call path (kept from one to the next: a sample costs the nodes
//! that change, plus copying its path) and gzip finds them alike. They are encoded in batches as
//! they are made and compressed as they go (gzip at its fastest level, as the Go runtime writes
//! its profiles); the tables of functions, locations, mappings and strings follow, as
//! protobuf's concatenation of messages allows. Memory: about 16 bytes per node value, 8 per
//! sample and 20 per call-tree node, and the tables; never the encoded profile. Time: linear in
//! the node values and the length of the call paths written, plus sorting the samples.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io::Write;

use flate2::Compression;
use flate2::write::GzEncoder;
use foldhash::fast::RandomState;
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

/// Samples encoded per message of the stream: large enough that the per-message cost vanishes,
/// small enough that the buffer stays small.
const SAMPLES_PER_BATCH: usize = 1024;

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

    let mut gz = GzEncoder::new(out, Compression::fast());
    let mut buf = Vec::new();
    let mut batch = Vec::with_capacity(SAMPLES_PER_BATCH);
    let table = SampleTable::new(profile);
    let mut exact = vec![0.0; scales.len()];
    // The call path of the sample being written, root first, kept from one sample to the next:
    // samples go depth first, so consecutive ones share most of it.
    let mut path = CallPath::new(profile);
    for slot in table.depth_first(profile) {
        let (context, node) = table.slots[slot];
        exact.iter_mut().for_each(|v| *v = 0.0);
        for &(value_type, value) in table.contributions(slot) {
            exact[value_type as usize] += value;
        }
        // A float outside i64 saturates; NaN becomes 0 (`as` never panics).
        let value: Vec<i64> = exact
            .iter()
            .zip(&scales)
            .map(|(v, scale)| (v * scale).round() as i64)
            .collect();
        if value.iter().all(|&v| v == 0) {
            continue;
        }
        path.move_to(node, |n| writer.location(n));
        batch.push(proto::Sample {
            location_id: path.locations.iter().rev().copied().collect(),
            value,
            label: writer.labels(context).to_vec(),
        });
        if batch.len() == SAMPLES_PER_BATCH {
            flush_samples(&mut batch, &mut buf, &mut gz)?;
        }
    }
    flush_samples(&mut batch, &mut buf, &mut gz)?;
    drop(table);

    let default_sample_type = default_type.map_or(0, |vt| sample_types[vt.index()].r#type);
    let tables = proto::Profile {
        sample_type: sample_types,
        mapping: writer.mappings,
        location: writer.locations,
        function: writer.functions,
        string_table: writer.strings.table,
        default_sample_type,
        ..proto::Profile::default()
    };
    buf.clear();
    tables.encode(&mut buf).map_err(std::io::Error::other)?;
    gz.write_all(&buf)?;
    gz.finish()?.flush()?;
    Ok(())
}

/// Encodes `batch` as one `Profile` message holding only samples and writes it: protobuf merges
/// concatenated messages, appending their repeated fields.
fn flush_samples(
    batch: &mut Vec<proto::Sample>,
    buf: &mut Vec<u8>,
    out: &mut impl Write,
) -> Result<(), ExportError> {
    if batch.is_empty() {
        return Ok(());
    }
    let message = proto::Profile {
        sample: std::mem::take(batch),
        ..proto::Profile::default()
    };
    buf.clear();
    message.encode(buf).map_err(std::io::Error::other)?;
    out.write_all(buf)?;
    *batch = message.sample;
    batch.clear();
    Ok(())
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

/// The node values of the exported contexts, grouped by (context, node): each group becomes one
/// sample. Grouped by a counting sort, so the cost is linear in the node values.
struct SampleTable {
    /// The (context, node) of each sample slot, in first-seen order.
    slots: Vec<(ContextId, NodeId)>,
    /// `contributions[starts[s]..starts[s + 1]]` are slot `s`'s (value type, value) pairs.
    starts: Vec<u32>,
    contributions: Vec<(u32, f64)>,
}

impl SampleTable {
    fn new(profile: &Profile) -> SampleTable {
        let exported = crate::select::exported_contexts(profile);
        let mut slot_of: HashMap<(ContextId, NodeId), u32, RandomState> = HashMap::default();
        let mut slots = Vec::new();
        // Formats add a node's values one after the other: the last key spares most lookups.
        let mut last: Option<((ContextId, NodeId), u32)> = None;
        let mut slot = |context: ContextId, node: NodeId| -> u32 {
            if let Some((key, slot)) = last
                && key == (context, node)
            {
                return slot;
            }
            let slot = match slot_of.entry((context, node)) {
                Entry::Occupied(e) => *e.get(),
                Entry::Vacant(e) => {
                    slots.push((context, node));
                    // One slot per node value at most (two for inclusive-only ones): a u32.
                    *e.insert((slots.len() - 1) as u32)
                }
            };
            last = Some(((context, node), slot));
            slot
        };
        let mut pending: Vec<(u32, u32, f64)> = Vec::with_capacity(profile.node_values().len());
        for v in profile.node_values() {
            if !exported[v.context.index()] {
                continue;
            }
            let value_type = v.value_type.index() as u32;
            if profile.value_type(v.value_type).measured.has_self() {
                let value = v.self_value.unwrap_or(0.0);
                pending.push((slot(v.context, v.node), value_type, value));
            } else if let Some(inclusive) = v.inclusive {
                // Self is the inclusive value minus the children's inclusive values.
                pending.push((slot(v.context, v.node), value_type, inclusive));
                if let Some(parent) = profile.node(v.node).parent {
                    pending.push((slot(v.context, parent), value_type, -inclusive));
                }
            }
        }
        drop(slot_of);
        let mut starts = vec![0u32; slots.len() + 1];
        for &(s, ..) in &pending {
            starts[s as usize + 1] += 1;
        }
        for i in 0..slots.len() {
            starts[i + 1] += starts[i];
        }
        let mut fill = starts.clone();
        let mut contributions = vec![(0u32, 0.0); pending.len()];
        for (s, value_type, value) in pending {
            let at = &mut fill[s as usize];
            contributions[*at as usize] = (value_type, value);
            *at += 1;
        }
        SampleTable {
            slots,
            starts,
            contributions,
        }
    }

    /// The slots by context, and in each context depth first, so that consecutive samples share
    /// most of their call paths.
    fn depth_first(&self, profile: &Profile) -> Vec<usize> {
        let rank = crate::select::depth_first_order(profile);
        let mut order: Vec<usize> = (0..self.slots.len()).collect();
        order.sort_unstable_by_key(|&s| {
            let (context, node) = self.slots[s];
            (context.index(), rank[node.index()])
        });
        order
    }

    fn contributions(&self, slot: usize) -> &[(u32, f64)] {
        &self.contributions[self.starts[slot] as usize..self.starts[slot + 1] as usize]
    }
}

/// The string table, interned.
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64, RandomState>,
    /// The table index of each profile string already interned (`-1`: not yet).
    by_id: Vec<i64>,
}

impl Strings {
    fn new(profile: &Profile) -> Strings {
        let mut strings = Strings {
            table: Vec::new(),
            index: HashMap::default(),
            by_id: vec![-1; profile.string_count()],
        };
        // pprof requires the empty string first.
        strings.intern("");
        strings
    }

    fn intern(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }

    fn id_of(&mut self, profile: &Profile, id: StringId) -> i64 {
        let memo = self.by_id[id.index()];
        if memo >= 0 {
            return memo;
        }
        let i = self.intern(profile.string(id));
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
    function_of: HashMap<(i64, i64, i64), u64, RandomState>,
    functions: Vec<proto::Function>,
    mapping_of: HashMap<StringId, u64, RandomState>,
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
            function_of: HashMap::default(),
            functions: Vec::new(),
            mapping_of: HashMap::default(),
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
        let name = match f.function {
            Some(name) => self.strings.id_of(profile, name),
            None => self
                .strings
                .intern(&crate::select::function_name(profile, frame)),
        };
        let filename = f.file.map_or(0, |s| self.strings.id_of(profile, s));
        let start_line = f.line.map_or(0, i64::from);
        let functions = &mut self.functions;
        let id = *self
            .function_of
            .entry((name, filename, start_line))
            .or_insert_with(|| {
                let id = functions.len() as u64 + 1;
                functions.push(proto::Function {
                    id,
                    name,
                    // No system (mangled) name: the name is as the profiler shows it, and pprof
                    // shortens only names that equal their system name.
                    system_name: 0,
                    filename,
                    start_line,
                });
                id
            });
        self.frame_function[frame.index()] = id;
        id
    }

    fn mapping(&mut self, module: StringId) -> u64 {
        if let Some(&id) = self.mapping_of.get(&module) {
            return id;
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
        self.mapping_of.insert(module, id);
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
        let calls = b
            .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
            .unwrap();
        let main = b.intern_string("main").unwrap();
        let main = b.intern_frame(Frame::function(main)).unwrap();
        let work = b.intern_string("work").unwrap();
        let work = b.intern_frame(Frame::function(work)).unwrap();
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
        let cycles = b
            .intern_value_type("cycles", Unit::Count, Measured::SelfOnly)
            .unwrap();
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
        let a = b.intern_string("a").unwrap();
        let a = b.intern_frame(Frame::function(a)).unwrap();
        let c = b.intern_string("c").unwrap();
        let c = b.intern_frame(Frame::function(c)).unwrap();
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
    fn summaries_are_written_only_without_detailed_contexts() {
        let mut b = ProfileBuilder::new();
        let summary = b.intern_context(Context::summary()).unwrap();
        let t0 = b
            .intern_context(Context::new([(IdKind::Thread, 0)]))
            .unwrap();
        let samples = b
            .intern_value_type("samples", Unit::Samples, Measured::SelfOnly)
            .unwrap();
        let f = b.intern_string("f").unwrap();
        let f = b.intern_frame(Frame::function(f)).unwrap();
        let node = b.intern_stack(None, [f]).unwrap();
        b.add_self(summary, node, samples, 9.0).unwrap();
        b.add_self(t0, node, samples, 4.0).unwrap();
        let p = export(&b.build());
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].value, [4]);

        let mut b = ProfileBuilder::new();
        let summary = b.intern_context(Context::summary()).unwrap();
        let samples = b
            .intern_value_type("samples", Unit::Samples, Measured::SelfOnly)
            .unwrap();
        let f = b.intern_string("f").unwrap();
        let f = b.intern_frame(Frame::function(f)).unwrap();
        let node = b.intern_stack(None, [f]).unwrap();
        b.add_self(summary, node, samples, 9.0).unwrap();
        let p = export(&b.build());
        assert_eq!(p.sample.len(), 1);
        assert_eq!(p.sample[0].value, [9]);
    }

    #[test]
    fn an_unknown_metric_is_refused_with_the_known_ones() {
        let mut b = ProfileBuilder::new();
        b.intern_value_type("time", Unit::Seconds, Measured::SelfOnly)
            .unwrap();
        let options = ExportOptions::new().metric("cycles");
        let err = write_pprof(&b.build(), &options, Vec::new()).unwrap_err();
        assert!(err.to_string().contains("time"), "{err}");
    }

    #[test]
    fn many_samples_stream_in_batches() {
        let mut b = ProfileBuilder::new();
        let all = b.intern_context(Context::new([])).unwrap();
        let n = b
            .intern_value_type("n", Unit::Count, Measured::SelfOnly)
            .unwrap();
        let mut frames = Vec::new();
        for i in 0..3000 {
            let name = b.intern_string(&format!("f{i}")).unwrap();
            frames.push(b.intern_frame(Frame::function(name)).unwrap());
        }
        for &f in &frames {
            let node = b.intern_stack(None, [frames[0], f]).unwrap();
            b.add_self(all, node, n, 1.0).unwrap();
        }
        let p = export(&b.build());
        // f0 under f0 and each other frame under f0: 3000 distinct stacks.
        assert_eq!(p.sample.len(), 3000);
        assert_eq!(p.function.len(), 3000);
        assert_eq!(p.sample.iter().map(|s| s.value[0]).sum::<i64>(), 3000);
    }
}
