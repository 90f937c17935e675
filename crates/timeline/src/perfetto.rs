//! The Perfetto writer: a stream of `TracePacket`s (each one field 1 of the `Trace` message, so
//! that the concatenation is a `Trace`), one packet sequence per track.
//!
//! Per sequence: the first packet clears the incremental state, declares the track and sets the
//! packet defaults (the track of its events, and timestamps on clock 64); before the first
//! event a `ClockSnapshot` makes clock 64 an incremental nanosecond clock equal to `BOOTTIME`
//! at that event, so every event's timestamp is the delta from the previous one (a few bytes
//! instead of nine). Names, source locations and call paths are interned per sequence: the
//! first event that uses one carries it in its packet's `InternedData`.
//!
//! Event packets are not built as `TracePacket` messages (a large struct, encoded with two
//! length passes per nested message): their fields are encoded by prost's helpers in prost's
//! order, and the fields that repeat (a slice begin's `track_event` for a name or call path,
//! the sequence id and flags) are encoded once per sequence and copied, so that the output is
//! the bytes prost would write for the message.

use std::collections::HashMap;
use std::io::{self, Write};

use foldhash::fast::FixedState;

use profcodec_profile::timeline::{
    Arg, ArgValue, CallPath, CounterUnit, Location, Name, Sink, Track, TrackId, TrackKind,
};

use crate::proto::{self, trace_packet, track_event};

/// Perfetto's first sequence-scoped clock id: incremental timestamps use it.
const INCREMENTAL_CLOCK: u32 = 64;
/// `ClockSnapshot.Clock.BuiltinClocks.BOOTTIME`, the trace's default clock.
const BOOTTIME: u32 = 6;

type Map<K, V> = HashMap<K, V, FixedState>;

/// The state of one track's packet sequence.
#[derive(Default)]
struct Sequence {
    id: u32,
    /// The timestamp of the last packet (`None` before the clock snapshot).
    last: Option<u64>,
    /// The encoded last fields of every event packet of the sequence: its
    /// `trusted_packet_sequence_id`, then `sequence_flags` (`SEQ_NEEDS_INCREMENTAL_STATE`)
    /// from byte `flags_at` (interned data goes between them).
    tail: Vec<u8>,
    flags_at: usize,
    names: Map<u64, InternedName>,
    arg_names: Map<&'static str, u64>,
    locations: Map<u64, u64>,
    frames: Map<u64, u64>,
    callstacks: Map<u64, InternedCallstack>,
    /// The last interning id given (iids start at 1 and are unique per sequence and type; one
    /// counter serves them all).
    next_iid: u64,
}

impl Sequence {
    fn iid(&mut self) -> u64 {
        self.next_iid += 1;
        self.next_iid
    }
}

/// An event name interned on a sequence.
struct InternedName {
    iid: u64,
    /// The encoded `track_event` field of a slice begin with this name and nothing else (with
    /// the timestamp's key), made the first time one is written: most slices repeat a few names, so their events are
    /// copied rather than encoded again.
    plain_begin: Option<Box<[u8]>>,
}

/// A call path interned on a sequence.
struct InternedCallstack {
    iid: u64,
    /// The key of the name of the first slice begin that carried this call path (without
    /// location or args), and that event's encoded `track_event` field (with the timestamp's
    /// key): a call path's slices have one name (its innermost frame's), so their events are
    /// copied too.
    begin: Option<(u64, Box<[u8]>)>,
}

/// Writes Perfetto's protobuf trace format.
pub(crate) struct PerfettoSink<W> {
    out: W,
    sequences: Sequences,
    next_sequence: u32,
    /// Encoded packets not yet written to `out`.
    buffer: Vec<u8>,
    /// One event's encoded `track_event` field and the key of the `timestamp` field that
    /// follows it (reused).
    event: Vec<u8>,
    /// The same for every slice end.
    end_event: Vec<u8>,
}

/// The buffered bytes at which they go to the output: large writes, few system calls.
const FLUSH_AT: usize = 1 << 20;

impl<W: Write> PerfettoSink<W> {
    pub(crate) fn new(out: W) -> Self {
        let mut end_event = Vec::new();
        prost::encoding::message::encode(
            11,
            &proto::TrackEvent {
                r#type: Some(track_event::Type::SliceEnd as i32),
                ..Default::default()
            },
            &mut end_event,
        );
        timestamp_key(&mut end_event);
        PerfettoSink {
            out,
            sequences: Sequences::default(),
            next_sequence: 0,
            buffer: Vec::with_capacity(FLUSH_AT + (1 << 16)),
            event: Vec::with_capacity(256),
            end_event,
        }
    }

    /// The output (after [`Sink::finish`]).
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    fn write(&mut self, packet: &proto::TracePacket) -> io::Result<()> {
        prost::encoding::message::encode(1, packet, &mut self.buffer);
        self.flush_full()
    }

    /// Writes the buffer out once it holds [`FLUSH_AT`] bytes.
    #[inline]
    fn flush_full(&mut self) -> io::Result<()> {
        if self.buffer.len() >= FLUSH_AT {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }

    /// Appends a packet of `track` at `ts` with the track event `event` and what it interns
    /// first (`interned`).
    fn event(
        &mut self,
        track: TrackId,
        ts: u64,
        interned: Option<&proto::InternedData>,
        event: &proto::TrackEvent,
    ) -> io::Result<()> {
        self.event.clear();
        prost::encoding::message::encode(11, event, &mut self.event);
        timestamp_key(&mut self.event);
        let seq = self.sequences.get(track)?;
        let delta = advance(seq, &mut self.buffer, track, ts)?;
        put_event(&mut self.buffer, &self.event, delta, seq, interned);
        self.flush_full()
    }
}

/// The open tracks' sequences, found by track: the one found last is kept at hand, as events
/// come in runs on one track.
#[derive(Default)]
struct Sequences {
    slots: Vec<Sequence>,
    /// Slots of closed tracks, for the next opened.
    free: Vec<usize>,
    slot_of: Map<TrackId, usize>,
    last: Option<(TrackId, usize)>,
}

impl Sequences {
    /// Opens `track`'s sequence (replacing the one it had).
    fn insert(&mut self, track: TrackId, seq: Sequence) {
        if let Some(&slot) = self.slot_of.get(&track) {
            self.slots[slot] = seq;
            return;
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = seq;
                slot
            }
            None => {
                self.slots.push(seq);
                self.slots.len() - 1
            }
        };
        self.slot_of.insert(track, slot);
    }

    /// Closes `track`'s sequence, dropping its interning tables.
    fn remove(&mut self, track: TrackId) {
        if let Some(slot) = self.slot_of.remove(&track) {
            self.slots[slot] = Sequence::default();
            self.free.push(slot);
            if self.last.is_some_and(|(t, _)| t == track) {
                self.last = None;
            }
        }
    }

    /// `track`'s sequence.
    #[inline]
    fn get(&mut self, track: TrackId) -> io::Result<&mut Sequence> {
        let slot = match self.last {
            Some((t, slot)) if t == track => slot,
            _ => {
                let slot = *self.slot_of.get(&track).ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("an event on track {track}, which is not open"),
                    )
                })?;
                self.last = Some((track, slot));
                slot
            }
        };
        Ok(&mut self.slots[slot])
    }
}

/// Moves `track`'s sequence `seq` to `ts` and returns the delta from its previous timed packet;
/// before its first timed packet, appends the clock snapshot that starts the sequence's
/// incremental clock at `ts`.
#[inline]
fn advance(seq: &mut Sequence, buffer: &mut Vec<u8>, track: TrackId, ts: u64) -> io::Result<u64> {
    advance_clock(&mut seq.last, seq.id, buffer, track, ts)
}

/// [`advance`] on the fields it needs (so that the sequence's other fields can stay borrowed).
#[inline]
fn advance_clock(
    last: &mut Option<u64>,
    id: u32,
    buffer: &mut Vec<u8>,
    track: TrackId,
    ts: u64,
) -> io::Result<u64> {
    let delta = match *last {
        Some(last) => ts.checked_sub(last).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("track {track}: time goes back from {last} to {ts}"),
            )
        })?,
        None => {
            let snapshot = proto::TracePacket {
                data: Some(trace_packet::Data::ClockSnapshot(proto::ClockSnapshot {
                    clocks: vec![
                        proto::clock_snapshot::Clock {
                            clock_id: Some(BOOTTIME),
                            timestamp: Some(ts),
                            ..Default::default()
                        },
                        proto::clock_snapshot::Clock {
                            clock_id: Some(INCREMENTAL_CLOCK),
                            timestamp: Some(ts),
                            is_incremental: Some(true),
                            unit_multiplier_ns: None,
                        },
                    ],
                })),
                ..sequenced(id)
            };
            prost::encoding::message::encode(1, &snapshot, buffer);
            0
        }
    };
    *last = Some(ts);
    Ok(delta)
}

/// Appends the key of `TracePacket.timestamp` to an encoded `track_event` field (the field that
/// follows it in prost's order), so that cached events carry it.
fn timestamp_key(event: &mut Vec<u8>) {
    prost::encoding::encode_key(8, prost::encoding::WireType::Varint, event);
}

/// Appends the packet (field 1 of `Trace`) that prost encodes for
/// `TracePacket { data: TrackEvent(..), timestamp: delta, trusted_packet_sequence_id: ..,
/// interned_data, sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE }` from its fields, encoded by
/// prost beforehand (`event`: the `track_event` field and the timestamp's key; the sequence's
/// tail), in prost's order (by tag, a oneof at its lowest tag: `data` is 6): the same bytes,
/// without building that large message for every event.
#[inline]
fn put_event(
    buffer: &mut Vec<u8>,
    event: &[u8],
    delta: u64,
    seq: &Sequence,
    interned: Option<&proto::InternedData>,
) {
    use prost::encoding::{WireType, encode_key, encode_varint, encoded_len_varint, message};
    let len = event.len()
        + encoded_len_varint(delta)
        + interned.map_or(0, |i| message::encoded_len(12, i))
        + seq.tail.len();
    encode_key(1, WireType::LengthDelimited, buffer);
    encode_varint(len as u64, buffer);
    buffer.extend_from_slice(event);
    encode_varint(delta, buffer);
    match interned {
        None => buffer.extend_from_slice(&seq.tail),
        Some(interned) => {
            let (id, flags) = seq.tail.split_at(seq.flags_at);
            buffer.extend_from_slice(id);
            message::encode(12, interned, buffer);
            buffer.extend_from_slice(flags);
        }
    }
}

/// An empty packet of sequence `id`.
fn sequenced(id: u32) -> proto::TracePacket {
    proto::TracePacket {
        optional_trusted_packet_sequence_id: Some(
            trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(id),
        ),
        ..Default::default()
    }
}

/// The interned name `name` on `seq`, adding it to `interned` the first time.
fn name_iid(seq: &mut Sequence, interned: &mut Option<proto::InternedData>, name: Name<'_>) -> u64 {
    if let Some(entry) = seq.names.get(&name.key) {
        return entry.iid;
    }
    let iid = seq.iid();
    seq.names.insert(
        name.key,
        InternedName {
            iid,
            plain_begin: None,
        },
    );
    interned
        .get_or_insert_with(Default::default)
        .event_names
        .push(proto::EventName {
            iid: Some(iid),
            name: Some(name.text.to_owned()),
        });
    iid
}

fn annotations(
    seq: &mut Sequence,
    interned: &mut Option<proto::InternedData>,
    args: &[Arg<'_>],
) -> Vec<proto::DebugAnnotation> {
    use proto::debug_annotation::NameField;
    args.iter()
        .map(|arg| {
            let iid = match seq.arg_names.get(arg.name) {
                Some(&iid) => iid,
                None => {
                    let iid = seq.iid();
                    seq.arg_names.insert(arg.name, iid);
                    interned
                        .get_or_insert_with(Default::default)
                        .debug_annotation_names
                        .push(proto::DebugAnnotationName {
                            iid: Some(iid),
                            name: Some(arg.name.to_owned()),
                        });
                    iid
                }
            };
            proto::DebugAnnotation {
                name_field: Some(NameField::NameIid(iid)),
                ..annotation(arg.value)
            }
        })
        .collect()
}

/// A debug annotation's value (without its name): an array's items as `array_values`.
fn annotation(value: ArgValue<'_>) -> proto::DebugAnnotation {
    use proto::debug_annotation::Value;
    let (value, array_values) = match value {
        ArgValue::Uint(v) => (Some(Value::UintValue(v)), Vec::new()),
        ArgValue::Int(v) => (Some(Value::IntValue(v)), Vec::new()),
        ArgValue::Float(v) => (Some(Value::DoubleValue(v)), Vec::new()),
        ArgValue::Bool(v) => (Some(Value::BoolValue(v)), Vec::new()),
        ArgValue::Str(v) => (Some(Value::StringValue(v.to_owned())), Vec::new()),
        ArgValue::Array(items) => (None, items.iter().map(|&i| annotation(i)).collect()),
    };
    proto::DebugAnnotation {
        name_field: None,
        value,
        array_values,
    }
}

impl<W: Write> Sink for PerfettoSink<W> {
    fn open(&mut self, track: &Track<'_>) -> io::Result<()> {
        if self.next_sequence == 0 {
            // Before the first track, the root track's descriptor (uuid 0) asks for threads in
            // the order of their `sibling_order_rank` (which every track carries), not the
            // viewer's own.
            self.next_sequence = 1;
            let root = proto::TracePacket {
                data: Some(trace_packet::Data::TrackDescriptor(
                    proto::TrackDescriptor {
                        uuid: Some(0),
                        thread_ordering: Some(
                            proto::track_descriptor::ThreadOrdering::ThreadOrderingExplicit as i32,
                        ),
                        ..Default::default()
                    },
                )),
                ..sequenced(1)
            };
            self.write(&root)?;
        }
        self.next_sequence = self
            .next_sequence
            .checked_add(1)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "more than 2^32 tracks"))?;
        let id = self.next_sequence;
        let mut tail = Vec::new();
        prost::encoding::uint32::encode(10, &id, &mut tail);
        let flags_at = tail.len();
        prost::encoding::uint32::encode(
            13,
            &(trace_packet::SequenceFlags::SeqNeedsIncrementalState as u32),
            &mut tail,
        );
        self.sequences.insert(
            track.id,
            Sequence {
                id,
                tail,
                flags_at,
                ..Sequence::default()
            },
        );
        let mut descriptor = proto::TrackDescriptor {
            uuid: Some(track.id),
            parent_uuid: track.parent,
            static_or_dynamic_name: Some(proto::track_descriptor::StaticOrDynamicName::Name(
                track.name.to_owned(),
            )),
            sibling_order_rank: Some(track.order),
            ..Default::default()
        };
        match track.kind {
            TrackKind::Process { pid } => {
                descriptor.process = Some(proto::ProcessDescriptor {
                    pid: Some(pid as i32),
                    process_name: Some(track.name.to_owned()),
                });
                descriptor.child_ordering =
                    Some(proto::track_descriptor::ChildTracksOrdering::Explicit as i32);
            }
            TrackKind::Thread { pid, tid } => {
                descriptor.thread = Some(proto::ThreadDescriptor {
                    pid: Some(pid as i32),
                    tid: Some(tid),
                    thread_name: Some(track.name.to_owned()),
                });
            }
            TrackKind::Group { .. } => {
                descriptor.child_ordering =
                    Some(proto::track_descriptor::ChildTracksOrdering::Explicit as i32);
            }
            TrackKind::Slices => {}
            TrackKind::Counter { unit } => {
                descriptor.counter = Some(proto::CounterDescriptor {
                    unit: Some(match unit {
                        CounterUnit::Unspecified => {
                            proto::counter_descriptor::Unit::Unspecified as i32
                        }
                    }),
                    unit_name: None,
                });
            }
        }
        let packet = proto::TracePacket {
            data: Some(trace_packet::Data::TrackDescriptor(descriptor)),
            sequence_flags: Some(trace_packet::SequenceFlags::SeqIncrementalStateCleared as u32),
            first_packet_on_sequence: Some(true),
            trace_packet_defaults: Some(proto::TracePacketDefaults {
                timestamp_clock_id: Some(INCREMENTAL_CLOCK),
                track_event_defaults: Some(proto::TrackEventDefaults {
                    track_uuid: Some(track.id),
                }),
            }),
            ..sequenced(id)
        };
        self.write(&packet)
    }

    fn close(&mut self, track: TrackId) -> io::Result<()> {
        self.sequences.remove(track);
        Ok(())
    }

    fn begin(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        location: Option<Location<'_>>,
        call_path: Option<CallPath<'_>>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        let seq = self.sequences.get(track)?;
        // The common case: a name (and call path) seen before, nothing else: the event's
        // encoding is a copy.
        if location.is_none() && args.is_empty() {
            let cached = match call_path {
                None => seq
                    .names
                    .get(&name.key)
                    .and_then(|n| n.plain_begin.as_deref()),
                Some(path) => seq
                    .callstacks
                    .get(&path.key)
                    .and_then(|c| c.begin.as_ref())
                    .filter(|(key, _)| *key == name.key)
                    .map(|(_, event)| &**event),
            };
            if let Some(event) = cached {
                let delta = advance_clock(&mut seq.last, seq.id, &mut self.buffer, track, ts)?;
                put_event(&mut self.buffer, event, delta, seq, None);
                return self.flush_full();
            }
        }
        let mut interned = None;
        let name_iid = name_iid(seq, &mut interned, name);
        let source_location_field = location.map(|l| {
            let iid = match seq.locations.get(&l.key) {
                Some(&iid) => iid,
                None => {
                    let iid = seq.iid();
                    seq.locations.insert(l.key, iid);
                    interned
                        .get_or_insert_with(Default::default)
                        .source_locations
                        .push(proto::SourceLocation {
                            iid: Some(iid),
                            file_name: Some(l.file.to_owned()),
                            function_name: Some(l.function.to_owned()),
                            line_number: Some(l.line),
                        });
                    iid
                }
            };
            track_event::SourceLocationField::SourceLocationIid(iid)
        });
        let callstack_field = match call_path {
            None => None,
            Some(path) => Some(track_event::CallstackField::CallstackIid(
                match seq.callstacks.get(&path.key) {
                    Some(entry) => entry.iid,
                    None => {
                        let frames = (path.frames)();
                        let mut frame_ids = Vec::with_capacity(frames.len());
                        for frame in frames {
                            let id = match seq.frames.get(&frame.key) {
                                Some(&id) => id,
                                None => {
                                    let function = seq.iid();
                                    let id = seq.iid();
                                    seq.frames.insert(frame.key, id);
                                    let data = interned.get_or_insert_with(Default::default);
                                    data.function_names.push(proto::InternedString {
                                        iid: Some(function),
                                        str: Some(frame.text.as_bytes().to_vec()),
                                    });
                                    data.frames.push(proto::Frame {
                                        iid: Some(id),
                                        function_name_id: Some(function),
                                    });
                                    id
                                }
                            };
                            frame_ids.push(id);
                        }
                        let iid = seq.iid();
                        seq.callstacks
                            .insert(path.key, InternedCallstack { iid, begin: None });
                        interned
                            .get_or_insert_with(Default::default)
                            .callstacks
                            .push(proto::Callstack {
                                iid: Some(iid),
                                frame_ids,
                            });
                        iid
                    }
                },
            )),
        };
        let debug_annotations = annotations(seq, &mut interned, args);
        let plain = location.is_none() && args.is_empty();
        self.event.clear();
        prost::encoding::message::encode(
            11,
            &proto::TrackEvent {
                r#type: Some(track_event::Type::SliceBegin as i32),
                name_field: Some(track_event::NameField::NameIid(name_iid)),
                source_location_field,
                callstack_field,
                debug_annotations,
                ..Default::default()
            },
            &mut self.event,
        );
        timestamp_key(&mut self.event);
        if plain {
            let event = Some(self.event.as_slice().into());
            match call_path {
                None => {
                    if let Some(entry) = seq.names.get_mut(&name.key) {
                        entry.plain_begin = event;
                    }
                }
                Some(path) => {
                    if let Some(entry) = seq.callstacks.get_mut(&path.key)
                        && entry.begin.is_none()
                    {
                        entry.begin = event.map(|e| (name.key, e));
                    }
                }
            }
        }
        let delta = advance(seq, &mut self.buffer, track, ts)?;
        put_event(&mut self.buffer, &self.event, delta, seq, interned.as_ref());
        self.flush_full()
    }

    fn end(&mut self, track: TrackId, ts: u64) -> io::Result<()> {
        let seq = self.sequences.get(track)?;
        let delta = advance(seq, &mut self.buffer, track, ts)?;
        put_event(&mut self.buffer, &self.end_event, delta, seq, None);
        self.flush_full()
    }

    fn end_several(&mut self, track: TrackId, ts: u64, count: usize) -> io::Result<()> {
        if count == 0 {
            return Ok(());
        }
        let seq = self.sequences.get(track)?;
        let mut delta = advance(seq, &mut self.buffer, track, ts)?;
        for _ in 0..count {
            put_event(&mut self.buffer, &self.end_event, delta, seq, None);
            delta = 0;
        }
        self.flush_full()
    }

    fn instant(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        let seq = self.sequences.get(track)?;
        let mut interned = None;
        let name_iid = name_iid(seq, &mut interned, name);
        let debug_annotations = annotations(seq, &mut interned, args);
        let event = proto::TrackEvent {
            r#type: Some(track_event::Type::Instant as i32),
            name_field: Some(track_event::NameField::NameIid(name_iid)),
            debug_annotations,
            ..Default::default()
        };
        self.event(track, ts, interned.as_ref(), &event)
    }

    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()> {
        let event = proto::TrackEvent {
            r#type: Some(track_event::Type::Counter as i32),
            counter_value_field: Some(track_event::CounterValueField::DoubleCounterValue(value)),
            ..Default::default()
        };
        self.event(track, ts, None, &event)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        self.out.flush()
    }
}
