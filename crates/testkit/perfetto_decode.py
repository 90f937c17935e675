"""Decodes a Perfetto trace with Perfetto's own generated classes (PyPI `perfetto`,
`perfetto_trace_pb2`) and prints what it holds as JSON, resolving what a trace processor
resolves: incremental timestamps (sequence-scoped clocks of ClockSnapshot packets, packet
defaults), interned names, source locations and callstacks (per packet sequence), and slice
nesting per track.

Usage: python perfetto_decode.py TRACE > summary.json
Output: {"root": {thread_ordering, process_ordering} or null, "tracks": [{uuid, parent, name,
kind, pid, tid, order}] (in the order of their descriptors; the root track, uuid 0, is "root"),
"slices": [{track, name, begin, end, depth, file, line, callstack}], "instants": [{track, name,
ts, args}], "counters": [{track, ts, value}]}; debug annotations as `args` ({name: value}, an
array annotation as a list); any inconsistency (an end without a begin, a slice left open, a timestamp going
back on a track, an unknown interning id, a callstack that is not the slice's stack) exits 1
with the reason.
"""

import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

INCREMENTAL_CLEARED = 1


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


class Sequence:
    def __init__(self):
        self.reset()

    def reset(self):
        self.defaults = None
        self.clocks = {}  # clock id -> [last value, is incremental]
        self.names = {}
        self.locations = {}
        self.function_names = {}
        self.frames = {}
        self.callstacks = {}
        self.arg_names = {}


def annotation_value(a):
    """A debug annotation's value: an array annotation's items as a list."""
    which = a.WhichOneof("value")
    if which is None:
        return [annotation_value(item) for item in a.array_values]
    return getattr(a, which)


def main(path):
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    sequences = {}
    tracks = {}
    open_slices = {}  # track uuid -> stack of slice dicts
    last_ts = {}
    slices, instants, counters = [], [], []
    root = None
    for packet in trace.packet:
        seq_id = packet.trusted_packet_sequence_id
        seq = sequences.setdefault(seq_id, Sequence())
        if packet.sequence_flags & INCREMENTAL_CLEARED:
            seq.reset()
        if packet.HasField("trace_packet_defaults"):
            seq.defaults = packet.trace_packet_defaults
        data = packet.interned_data
        for n in data.event_names:
            seq.names[n.iid] = n.name
        for l in data.source_locations:
            seq.locations[l.iid] = (l.file_name, l.line_number, l.function_name)
        for s in data.function_names:
            seq.function_names[s.iid] = s.str.decode("utf-8")
        for fr in data.frames:
            seq.frames[fr.iid] = fr.function_name_id
        for c in data.callstacks:
            seq.callstacks[c.iid] = list(c.frame_ids)
        for n in data.debug_annotation_names:
            seq.arg_names[n.iid] = n.name

        if packet.HasField("clock_snapshot"):
            for c in packet.clock_snapshot.clocks:
                if c.clock_id >= 64:
                    if c.unit_multiplier_ns not in (0, 1):
                        fail("a clock with a unit other than ns")
                    seq.clocks[c.clock_id] = [c.timestamp, c.is_incremental]
            continue
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            if d.uuid == 0:
                if root is not None:
                    fail("the root track declared twice")
                root = {"thread_ordering": d.thread_ordering,
                        "process_ordering": d.process_ordering}
                continue
            kind = "process" if d.HasField("process") else "thread" if d.HasField(
                "thread") else "counter" if d.HasField("counter") else "track"
            if d.uuid in tracks:
                fail(f"track {d.uuid} declared twice")
            if d.HasField("parent_uuid") and d.parent_uuid not in tracks:
                fail(f"track {d.uuid}: parent {d.parent_uuid} declared after it")
            tracks[d.uuid] = {
                "uuid": d.uuid,
                "parent": d.parent_uuid if d.HasField("parent_uuid") else None,
                "name": d.name,
                "kind": kind,
                "pid": d.process.pid if kind == "process" else d.thread.pid if kind == "thread" else None,
                "tid": d.thread.tid if kind == "thread" else None,
                "order": d.sibling_order_rank if d.HasField("sibling_order_rank") else None,
            }
            continue
        if not packet.HasField("track_event"):
            fail(f"an unexpected packet: {packet}")

        # The timestamp, on the packet's clock.
        clock = packet.timestamp_clock_id
        if not packet.HasField("timestamp_clock_id") and seq.defaults is not None:
            clock = seq.defaults.timestamp_clock_id
        if clock >= 64:
            if clock not in seq.clocks:
                fail(f"sequence {seq_id}: clock {clock} used before its snapshot")
            state = seq.clocks[clock]
            if state[1]:
                state[0] += packet.timestamp
            ts = state[0] if state[1] else packet.timestamp
        else:
            ts = packet.timestamp

        ev = packet.track_event
        uuid = ev.track_uuid if ev.HasField("track_uuid") else (
            seq.defaults.track_event_defaults.track_uuid if seq.defaults is not None else 0)
        if uuid not in tracks:
            fail(f"an event on undeclared track {uuid}")
        if ts < last_ts.get(uuid, 0):
            fail(f"track {uuid}: time goes back to {ts}")
        last_ts[uuid] = ts

        def name_of():
            if ev.HasField("name_iid"):
                if ev.name_iid not in seq.names:
                    fail(f"sequence {seq_id}: unknown name iid {ev.name_iid}")
                return seq.names[ev.name_iid]
            return ev.name

        stack = open_slices.setdefault(uuid, [])
        if ev.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            s = {"track": uuid, "name": name_of(), "begin": ts, "end": None,
                 "depth": len(stack), "file": None, "line": None, "callstack": None}
            if ev.HasField("source_location_iid"):
                if ev.source_location_iid not in seq.locations:
                    fail("unknown source location iid")
                s["file"], s["line"], _ = seq.locations[ev.source_location_iid]
            if ev.HasField("callstack_iid"):
                if ev.callstack_iid not in seq.callstacks:
                    fail("unknown callstack iid")
                frames = [seq.function_names[seq.frames[f]] for f in seq.callstacks[ev.callstack_iid]]
                expected = [x["name"] for x in stack] + [s["name"]]
                if frames != expected:
                    fail(f"a callstack {frames} that is not the slice stack {expected}")
                s["callstack"] = frames
            stack.append(s)
        elif ev.type == pb.TrackEvent.TYPE_SLICE_END:
            if not stack:
                fail(f"track {uuid}: an end without a begin at {ts}")
            s = stack.pop()
            s["end"] = ts
            slices.append(s)
        elif ev.type == pb.TrackEvent.TYPE_INSTANT:
            args = {}
            for a in ev.debug_annotations:
                if a.HasField("name_iid"):
                    if a.name_iid not in seq.arg_names:
                        fail(f"sequence {seq_id}: unknown annotation name iid {a.name_iid}")
                    key = seq.arg_names[a.name_iid]
                else:
                    key = a.name
                args[key] = annotation_value(a)
            instants.append({"track": uuid, "name": name_of(), "ts": ts, "args": args})
        elif ev.type == pb.TrackEvent.TYPE_COUNTER:
            if tracks[uuid]["kind"] != "counter":
                fail("a counter value on a track without a counter descriptor")
            counters.append({"track": uuid, "ts": ts, "value": ev.double_counter_value})
        else:
            fail(f"an event of type {ev.type}")
    for uuid, stack in open_slices.items():
        if stack:
            fail(f"track {uuid}: {len(stack)} slices left open")
    json.dump({"root": root, "tracks": list(tracks.values()), "slices": slices, "instants": instants,
               "counters": counters}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
