//! What the writers make of ids, order and argument values, on crafted EasyProfiler captures and
//! crafted event streams:
//!
//! - an array value is an array: a JSON array in Chrome's JSON, an array debug annotation in
//!   Perfetto (not the Rust text of the decoded value);
//! - threads come in thread id order, whatever the capture's order: Chrome's
//!   `thread_sort_index`, Perfetto's descriptors (in the order they come and by
//!   `sibling_order_rank`, with the root track asking for that order);
//! - a lane the Chrome writer invents (a track that is no thread, a group of tracks) never
//!   takes the id of a real thread or process, even when the capture's thread ids are the
//!   numbers it would have taken; a thread or process that comes after its id was given is an
//!   error, not a merge.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use prost::Message;
use serde_json::{Value, json};

use profcodec_common::Source;
use profcodec_easyprofiler::{
    Capture, ContextSwitch, Convention, Descriptor, Record, RecordBody, Thread, Version,
};
use profcodec_timeline::model::{Arg, ArgValue, Name, Track, TrackKind};
use profcodec_timeline::proto::{self, debug_annotation, trace_packet};
use profcodec_timeline::{Filter, Format, TimelineWriter};

/// `profiler::DataType` values.
const BOOL: u8 = 0;
const INT32: u8 = 6;
const UINT64: u8 = 9;
const FLOAT: u8 = 10;
const DOUBLE: u8 = 11;
const STRING: u8 = 12;

fn descriptor(id: u32, name: &str, block_type: u8) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line: 1,
        color: 0,
        block_type,
        status: 1,
        name: name.as_bytes().to_vec(),
        file: b"f.cpp".to_vec(),
    }))
}

fn value(begin: u64, descriptor: u32, data_type: u8, is_array: bool, data: Vec<u8>) -> Record {
    Record {
        begin,
        end: begin,
        descriptor,
        body: RecordBody::Value(profcodec_easyprofiler::Value {
            data_type,
            is_array: u8::from(is_array),
            value_id: u64::from(descriptor),
            data,
            ..Default::default()
        }),
    }
}

fn block(begin: u64, end: u64) -> Record {
    Record {
        begin,
        end,
        descriptor: 0,
        body: RecordBody::Named(Vec::new()),
    }
}

fn bytes<T: Copy, const N: usize>(items: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    items.iter().flat_map(|&x| f(x)).collect()
}

/// The capture's bytes.
fn encode(mut c: Capture) -> Vec<u8> {
    c.update_counters(Convention::Runtime);
    c.to_bytes().unwrap()
}

/// The capture `data` written by `format`.
fn convert(data: &[u8], format: Format) -> Vec<u8> {
    let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
    let capture = Source::file(Path::new("crafted.prof"), data);
    profcodec_easyprofiler::timeline::write_timeline(&capture, &mut w.timeline()).unwrap();
    w.finish().unwrap()
}

fn chrome_events(bytes: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    v["traceEvents"].as_array().unwrap().clone()
}

/// A Perfetto trace as prost decodes it: its track descriptors in order, the root track's, and
/// each instant's annotations ({name: value}, an array annotation as a JSON array).
struct Decoded {
    root: Option<proto::TrackDescriptor>,
    tracks: Vec<proto::TrackDescriptor>,
    instants: Vec<(String, BTreeMap<String, Value>)>,
}

fn annotation(a: &proto::DebugAnnotation) -> Value {
    use debug_annotation::Value as V;
    match &a.value {
        None => Value::Array(a.array_values.iter().map(annotation).collect()),
        Some(V::BoolValue(v)) => json!(v),
        Some(V::UintValue(v)) => json!(v),
        Some(V::IntValue(v)) => json!(v),
        Some(V::DoubleValue(v)) => json!(v),
        Some(V::StringValue(v)) => json!(v),
    }
}

fn decode_perfetto(bytes: &[u8]) -> Decoded {
    let trace = proto::Trace::decode(bytes).unwrap();
    let mut d = Decoded {
        root: None,
        tracks: Vec::new(),
        instants: Vec::new(),
    };
    // (sequence, iid) -> text, for event names and annotation names.
    let mut names: HashMap<(u32, u64), String> = HashMap::new();
    let mut arg_names: HashMap<(u32, u64), String> = HashMap::new();
    for p in trace.packet {
        let seq = match p.optional_trusted_packet_sequence_id {
            Some(trace_packet::OptionalTrustedPacketSequenceId::TrustedPacketSequenceId(s)) => s,
            None => 0,
        };
        if let Some(i) = &p.interned_data {
            for n in &i.event_names {
                names.insert((seq, n.iid.unwrap()), n.name.clone().unwrap());
            }
            for n in &i.debug_annotation_names {
                arg_names.insert((seq, n.iid.unwrap()), n.name.clone().unwrap());
            }
        }
        match p.data {
            Some(trace_packet::Data::TrackDescriptor(t)) if t.uuid == Some(0) => {
                assert!(d.root.is_none(), "the root track declared twice");
                d.root = Some(t);
            }
            Some(trace_packet::Data::TrackDescriptor(t)) => d.tracks.push(t),
            Some(trace_packet::Data::TrackEvent(e))
                if e.r#type == Some(proto::track_event::Type::Instant as i32) =>
            {
                let Some(proto::track_event::NameField::NameIid(iid)) = e.name_field else {
                    panic!("an instant without an interned name");
                };
                let args = e
                    .debug_annotations
                    .iter()
                    .map(|a| {
                        let Some(debug_annotation::NameField::NameIid(n)) = a.name_field else {
                            panic!("an annotation without an interned name");
                        };
                        (arg_names[&(seq, n)].clone(), annotation(a))
                    })
                    .collect();
                d.instants.push((names[&(seq, iid)].clone(), args));
            }
            _ => {}
        }
    }
    d
}

/// One thread with value records of every kind of array, a string, a scalar and a value of an
/// unknown type.
fn capture_with_arrays() -> Vec<u8> {
    encode(Capture {
        version: Version::V2_1_0,
        pid: 7,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: 100,
        descriptors: vec![
            descriptor(0, "ints", 2),
            descriptor(1, "floats", 2),
            descriptor(2, "flags", 2),
            descriptor(3, "big", 2),
            descriptor(4, "one", 2),
            descriptor(5, "text", 2),
            descriptor(6, "scalar", 2),
            descriptor(7, "none", 2),
            descriptor(8, "doubles", 2),
            descriptor(9, "odd", 2),
        ],
        threads: vec![Thread {
            id: 5,
            name: Some(b"main".to_vec()),
            context_switches: Vec::new(),
            records: vec![
                value(10, 0, INT32, true, bytes(&[0i32, -1, 3], i32::to_le_bytes)),
                value(11, 1, FLOAT, true, bytes(&[0.1f32, 1.5], f32::to_le_bytes)),
                value(12, 2, BOOL, true, vec![1, 0]),
                value(13, 3, UINT64, true, bytes(&[u64::MAX], u64::to_le_bytes)),
                value(14, 4, INT32, true, bytes(&[7i32], i32::to_le_bytes)),
                value(15, 5, STRING, true, b"hello\0".to_vec()),
                value(16, 6, INT32, false, bytes(&[42i32], i32::to_le_bytes)),
                value(17, 7, INT32, true, Vec::new()),
                value(
                    18,
                    8,
                    DOUBLE,
                    true,
                    bytes(&[0.25f64, -2.0], f64::to_le_bytes),
                ),
                // A data type no release of the library writes.
                value(19, 9, 13, false, vec![1, 0xff]),
            ],
        }],
        ..Capture::default()
    })
}

/// The `value` arg of each named instant, as JSON.
fn expected_values() -> BTreeMap<String, Value> {
    [
        ("ints", json!([0, -1, 3])),
        ("floats", json!([0.1, 1.5])),
        ("flags", json!([true, false])),
        ("big", json!([u64::MAX])),
        ("one", json!([7])),
        ("text", json!("hello")),
        ("none", json!([])),
        ("doubles", json!([0.25, -2.0])),
        ("odd", json!("data type 13: 01 ff")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

#[test]
fn array_values_are_arrays_in_both_writers() {
    let data = capture_with_arrays();

    let events = chrome_events(&convert(&data, Format::Chrome));
    let got: BTreeMap<String, Value> = events
        .iter()
        .filter(|e| e["ph"] == "i")
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["args"]["value"].clone(),
            )
        })
        .collect();
    assert_eq!(got, expected_values());
    // The scalar is a counter, not an instant.
    let counters: Vec<&Value> = events.iter().filter(|e| e["ph"] == "C").collect();
    assert_eq!(counters.len(), 1);
    assert_eq!(counters[0]["name"], "scalar");
    assert_eq!(counters[0]["args"]["value"].as_f64(), Some(42.0));

    let d = decode_perfetto(&convert(&data, Format::Perfetto));
    let got: BTreeMap<String, Value> = d
        .instants
        .iter()
        .map(|(name, args)| (name.clone(), args["value"].clone()))
        .collect();
    assert_eq!(got, expected_values());
    // The same, as Perfetto's own classes read it (when the venv is there).
    if let Some(decoded) = profcodec_testkit::timeline::decoded(&convert(&data, Format::Perfetto)) {
        let got: BTreeMap<String, Value> = decoded["instants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["name"].as_str().unwrap().to_owned(),
                    i["args"]["value"].clone(),
                )
            })
            .collect();
        assert_eq!(got, expected_values());
    }
}

/// Threads in the file in the order `tids`, each with a block, a context switch and a value;
/// bookmarks; thread names `t<tid>`.
fn capture_with_threads(pid: u64, tids: &[u64]) -> Vec<u8> {
    encode(Capture {
        version: Version::V2_1_0,
        pid,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: 100,
        descriptors: vec![descriptor(0, "work", 1), descriptor(1, "queue", 2)],
        threads: tids
            .iter()
            .map(|&tid| Thread {
                id: tid,
                name: Some(format!("t{tid}").into_bytes()),
                context_switches: vec![ContextSwitch {
                    begin: 40,
                    end: 45,
                    target_tid: 1,
                    name: b"other".to_vec(),
                }],
                records: vec![
                    value(12, 1, INT32, false, bytes(&[1i32], i32::to_le_bytes)),
                    block(10, 20),
                ],
            })
            .collect(),
        bookmarks: vec![profcodec_easyprofiler::Bookmark {
            position: 50,
            color: 0,
            text: b"mark".to_vec(),
        }],
        ..Capture::default()
    })
}

/// A Chrome lane: (pid, tid).
type Lane = (i64, i64);

/// The Chrome lanes: (pid, tid) -> the name its `thread_name` gives, and the `thread_sort_index`
/// of each.
fn chrome_lanes(events: &[Value]) -> (Vec<(Lane, String)>, HashMap<Lane, i64>) {
    let mut names = Vec::new();
    let mut sort = HashMap::new();
    for e in events.iter().filter(|e| e["ph"] == "M") {
        let lane = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        match e["name"].as_str().unwrap() {
            "thread_name" => names.push((lane, e["args"]["name"].as_str().unwrap().to_owned())),
            "thread_sort_index" => {
                sort.insert(lane, e["args"]["sort_index"].as_i64().unwrap());
            }
            _ => {}
        }
    }
    (names, sort)
}

#[test]
fn threads_come_in_thread_id_order() {
    let tids = [900, 30, 4000, 31];
    let data = capture_with_threads(77, &tids);
    let mut sorted = tids.to_vec();
    sorted.sort_unstable();

    // Chrome: the threads' sort indexes rise with their ids, above the process's other lanes.
    let events = chrome_events(&convert(&data, Format::Chrome));
    let (names, sort) = chrome_lanes(&events);
    let threads: Vec<(i64, i64)> = names
        .iter()
        .filter(|(_, n)| n.starts_with('t'))
        .map(|(lane, _)| (lane.1, sort[lane]))
        .collect();
    let mut by_index = threads.clone();
    by_index.sort_by_key(|t| t.1);
    let order: Vec<i64> = by_index.iter().map(|t| t.0).collect();
    assert_eq!(order, sorted.iter().map(|&t| t as i64).collect::<Vec<_>>());

    // Perfetto: the thread descriptors come in thread id order, ranked so, and the root track
    // asks the viewer to order threads by rank.
    let d = decode_perfetto(&convert(&data, Format::Perfetto));
    let root = d.root.expect("the root track's descriptor");
    assert_eq!(
        root.thread_ordering,
        Some(proto::track_descriptor::ThreadOrdering::ThreadOrderingExplicit as i32)
    );
    let threads: Vec<(i64, i32)> = d
        .tracks
        .iter()
        .filter_map(|t| Some((t.thread.as_ref()?.tid?, t.sibling_order_rank?)))
        .collect();
    assert_eq!(
        threads.iter().map(|t| t.0).collect::<Vec<_>>(),
        sorted.iter().map(|&t| t as i64).collect::<Vec<_>>(),
        "descriptors in thread id order"
    );
    assert!(threads.windows(2).all(|w| w[0].1 < w[1].1), "{threads:?}");
    if let Some(decoded) = profcodec_testkit::timeline::decoded(&convert(&data, Format::Perfetto)) {
        assert_eq!(decoded["root"]["thread_ordering"], 1);
        let tids: Vec<i64> = decoded["tracks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["kind"] == "thread")
            .map(|t| t["tid"].as_i64().unwrap())
            .collect();
        assert_eq!(tids, sorted.iter().map(|&t| t as i64).collect::<Vec<_>>());
    }
}

#[test]
fn invented_tids_never_take_a_real_one() {
    // The capture's thread ids are the numbers the writer's lanes would take (track ids 2..),
    // in the file in descending order.
    let tids: Vec<u64> = (2..=14).rev().collect();
    let data = capture_with_threads(3, &tids);
    let events = chrome_events(&convert(&data, Format::Chrome));
    let (names, _) = chrome_lanes(&events);
    let real: Vec<(i64, i64)> = names
        .iter()
        .filter(|(_, n)| n.starts_with('t'))
        .map(|(lane, _)| *lane)
        .collect();
    let invented: Vec<(i64, i64)> = names
        .iter()
        .filter(|(_, n)| !n.starts_with('t'))
        .map(|(lane, _)| *lane)
        .collect();
    assert_eq!(real.len(), tids.len());
    // capture, bookmarks, and one context-switch lane per thread.
    assert_eq!(invented.len(), 2 + tids.len(), "{names:?}");
    let mut all: Vec<(i64, i64)> = real.iter().chain(&invented).copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(
        all.len(),
        real.len() + invented.len(),
        "a lane shared: {names:?}"
    );
    // Every event is on a declared lane, and the context switches stay on their own lanes.
    let lanes: HashMap<(i64, i64), &str> = names.iter().map(|(l, n)| (*l, n.as_str())).collect();
    for e in events.iter().filter(|e| e["ph"] != "M") {
        let lane = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let name = lanes[&lane];
        match e["name"].as_str() {
            Some("other") => assert_eq!(name, "context switches"),
            Some("work" | "queue") => assert!(name.starts_with('t'), "{e}"),
            _ => {}
        }
    }
}

#[test]
fn group_pids_avoid_real_ones_and_late_ids_are_refused() {
    let top = i64::from(i32::MAX);
    let name = Name { key: 0, text: "s" };
    let open = |w: &mut TimelineWriter<Vec<u8>>, id, parent, kind| {
        w.timeline().sink.open(&Track {
            id,
            parent,
            name: "x",
            kind,
            order: 0,
        })
    };

    // A real process with the id the first group would take: the group takes the next below.
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    open(&mut w, 1, None, TrackKind::Process { pid: top }).unwrap();
    let group = w.timeline().tracks.group_pid();
    assert_eq!(group, top);
    open(&mut w, 2, None, TrackKind::Group { pid: group }).unwrap();
    open(&mut w, 3, Some(2), TrackKind::Slices).unwrap();
    w.timeline().sink.instant(3, 1, name, &[]).unwrap();
    let events = chrome_events(&w.finish().unwrap());
    let processes: Vec<i64> = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .map(|e| e["pid"].as_i64().unwrap())
        .collect();
    assert_eq!(processes, [top, top - 1]);
    let instant = events.iter().find(|e| e["ph"] == "i").unwrap();
    assert_eq!(instant["pid"], top - 1);

    // A thread whose id a lane already took, a process whose id a group took: errors that say
    // so, never a merge.
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    open(&mut w, 1, None, TrackKind::Process { pid: 10 }).unwrap();
    open(&mut w, 2, Some(1), TrackKind::Slices).unwrap();
    let e = open(&mut w, 3, Some(1), TrackKind::Thread { pid: 10, tid: 2 }).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(
        e.to_string()
            .starts_with("thread 2 (\"x\") is opened after the trace gave its id"),
        "{e}"
    );
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    open(&mut w, 1, None, TrackKind::Group { pid: 5 }).unwrap();
    let e = open(&mut w, 2, None, TrackKind::Process { pid: 5 }).unwrap_err();
    assert!(e.to_string().contains("a group of tracks"), "{e}");
}

#[test]
fn array_args_of_any_producer() {
    // Nested arrays and long strings inside arrays, through both writers.
    let long = "x".repeat(300);
    let inner = [ArgValue::Int(-3), ArgValue::Float(f64::NAN)];
    let items = [
        ArgValue::Uint(1),
        ArgValue::Str(&long),
        ArgValue::Array(&inner),
        ArgValue::Bool(true),
    ];
    let args = [Arg {
        name: "v",
        value: ArgValue::Array(&items),
    }];
    let write = |format| {
        let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
        let t = w.timeline();
        t.sink
            .open(&Track {
                id: 1,
                parent: None,
                name: "lane",
                kind: TrackKind::Slices,
                order: 0,
            })
            .unwrap();
        let name = Name { key: 0, text: "e" };
        t.sink.instant(1, 5, name, &args).unwrap();
        t.sink.begin(1, 6, name, None, None, &args).unwrap();
        t.sink.end(1, 7).unwrap();
        w.finish().unwrap()
    };
    let events = chrome_events(&write(Format::Chrome));
    let instant = events.iter().find(|e| e["ph"] == "i").unwrap();
    let v = &instant["args"]["v"];
    assert_eq!(v[0], 1);
    assert!(v[1].as_str().unwrap().contains("[long name 0]"), "{v}");
    assert_eq!(v[2], json!([-3, null]));
    assert_eq!(v[3], true);
    let begin = events.iter().find(|e| e["ph"] == "B").unwrap();
    assert_eq!(begin["args"]["v"], *v);
    // The long string is written whole once.
    let long_names: Vec<&Value> = events.iter().filter(|e| e["name"] == "long_name").collect();
    assert_eq!(long_names.len(), 1);
    assert_eq!(long_names[0]["args"]["name"], long.as_str());

    let d = decode_perfetto(&write(Format::Perfetto));
    let v = &d.instants[0].1["v"];
    assert_eq!(v[0], 1);
    assert_eq!(v[1], long.as_str());
    assert_eq!(v[2][0], -3);
    assert_eq!(v[3], true);
}
