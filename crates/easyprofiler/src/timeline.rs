//! An EasyProfiler capture as a timeline (the format-neutral model of
//! `profcodec_profile::timeline`, which `profcodec-timeline` writes as Perfetto or Chrome
//! traces).
//!
//! - One process track (the capture's pid), named `EasyProfiler capture (pid N)`, with one
//!   thread track per thread, in thread id order, named as the capture names the thread
//!   (`thread N` when it has no name).
//! - Every block is one slice, nested as the C++ reader nests it, with its descriptor's name
//!   (runtime names included) and its source file and line as the slice's source location (an
//!   interned source location in Perfetto, `file` and `line` args in Chrome's JSON). A child
//!   never outlasts its parent in the output.
//! - Events are instants; scalar values are counter tracks below their thread (one per
//!   descriptor); strings are instants with a `value` arg, arrays instants whose `value` arg
//!   is an array of numbers (a JSON array in Chrome's JSON, an array debug annotation in
//!   Perfetto).
//! - Context switches are slices of a `context switches` track below their thread, named by
//!   the target, with a `target_tid` arg.
//! - Bookmarks are instants of a `bookmarks` track (with `color` and `text` args), and the
//!   capture's begin and end one `capture` slice of a `capture` track.
//!
//! Filters: a thread is kept by its id or its name; captures have no ranks (their threads are
//! rank 0, as the filter counts a thread without a rank). Times are nanoseconds after the tick
//! conversion, as `profcodec dump` prints them. The blocks are nested as the C++ reader's tree nests them, but
//! walked from the file in time order ([`Walk::pre_order`](crate::Walk::pre_order)), so memory
//! does not grow with the blocks.

use std::collections::HashMap;

use profcodec_common::Source;
use profcodec_profile::timeline::{
    Arg, ArgValue, CounterUnit, Error, Location, Name, Summary, Timeline, Track, TrackId, TrackKind,
};

use crate::{CaptureView, DataType, RecordRef, Step, ThreadWalk, ValueData, Walk};

/// Descriptor block types (`profiler::BlockType`).
const EVENT: u8 = 0;
const VALUE: u8 = 2;

/// Interning keys of the names that are not descriptors' (descriptor ids are below 2^32).
const KEY_CAPTURE: u64 = 1 << 32;
const KEY_BOOKMARK: u64 = (1 << 32) + 1;

/// Writes the capture `input` (its bytes; its path names it in errors) to `timeline`.
pub fn write_timeline(input: &Source<'_>, timeline: &mut Timeline<'_>) -> Result<Summary, Error> {
    let path = input.path;
    let ep = |source: crate::Error| Error::input(path, source);
    let view = crate::parse(input.bytes).map_err(ep)?;
    let walk = view.walk().map_err(ep)?;
    let pid = view.header().pid;
    let mut summary = Summary::default();
    let (from, until) = timeline.filter.window();

    let process = timeline.tracks.track_id();
    let process_name = format!("EasyProfiler capture (pid {pid})");
    timeline
        .sink
        .open(&Track {
            id: process,
            parent: None,
            name: &process_name,
            kind: TrackKind::Process { pid: pid as i64 },
            order: 0,
        })
        .map_err(Error::Write)?;
    summary.tracks += 1;

    // The threads kept, in thread id order, each opened before the process's other tracks (so
    // that a writer that gives those a thread id of its own picks one no thread has).
    let mut threads: Vec<(&ThreadWalk<'_>, String)> = walk
        .threads
        .iter()
        .map(|t| (t, t.name.to_string()))
        .filter(|(t, name)| timeline.keeps(None, Some(t.id), Some(name)))
        .collect();
    threads.sort_by_key(|(t, _)| t.id);
    let mut thread_tracks = Vec::with_capacity(threads.len());
    for (order, (thread, name)) in threads.iter().enumerate() {
        let track = timeline.tracks.track_id();
        let label = if name.is_empty() {
            format!("thread {}", thread.id)
        } else {
            name.clone()
        };
        timeline
            .sink
            .open(&Track {
                id: track,
                parent: Some(process),
                name: &label,
                kind: TrackKind::Thread {
                    pid: pid as i64,
                    tid: thread.id as i64,
                },
                order: i32::try_from(order).unwrap_or(i32::MAX).saturating_add(2),
            })
            .map_err(Error::Write)?;
        summary.tracks += 1;
        thread_tracks.push(track);
    }

    // The capture's span and the bookmarks, on tracks of the process.
    let capture =
        timeline.open_child(Some(process), "capture", TrackKind::Slices, 0, &mut summary)?;
    let (begin, end) = (walk.begin_time.max(from), walk.end_time.min(until));
    if begin <= end {
        let name = Name {
            key: KEY_CAPTURE,
            text: "capture",
        };
        timeline
            .sink
            .begin(capture, begin, name, None, None, &[])
            .and_then(|()| timeline.sink.end(capture, end))
            .map_err(Error::Write)?;
        summary.slices += 1;
    }
    timeline.close(capture)?;
    let mut bookmarks: Vec<_> = walk.tail().bookmarks.iter().collect();
    if !bookmarks.is_empty() {
        bookmarks.sort_by_key(|b| b.position);
        let track = timeline.open_child(
            Some(process),
            "bookmarks",
            TrackKind::Slices,
            1,
            &mut summary,
        )?;
        for b in bookmarks {
            if b.position < from || b.position > until {
                continue;
            }
            let text = b.text.to_string();
            let args = [Arg {
                name: "color",
                value: ArgValue::Str(&format!("#{:08x}", b.color)),
            }];
            let name = Name {
                key: KEY_BOOKMARK,
                text: "bookmark",
            };
            let args_text = [
                args[0],
                Arg {
                    name: "text",
                    value: ArgValue::Str(&text),
                },
            ];
            timeline
                .sink
                .instant(track, b.position, name, &args_text)
                .map_err(Error::Write)?;
            summary.instants += 1;
        }
        timeline.close(track)?;
    }

    let mut texts = Texts::new();
    for ((thread, _), track) in threads.iter().zip(thread_tracks) {
        blocks(
            timeline,
            &view,
            &walk,
            thread,
            track,
            &mut texts,
            &mut summary,
        )?;
        context_switches(timeline, &walk, thread, track, &mut summary)?;
        timeline.close(track)?;
    }
    timeline.close(process)?;
    Ok(summary)
}

/// A value record as the output shows it.
enum Shown {
    /// A number: a counter value.
    Number(f64),
    /// A string (or the bytes of a value of unknown type): an instant's `value` arg.
    Text(String),
    /// An array: an instant's `value` arg, an array.
    Array(Vec<ArgValue<'static>>),
}

/// How a value of type `ty` with `data` is shown: one number that is not declared an array is
/// a counter value; an array (even of one number) or a malformed count an array arg.
fn shown(ty: u8, is_array: bool, data: &[u8]) -> Shown {
    let Some(ty) = DataType::from_u8(ty) else {
        // A type this reader does not know: its bytes, in hexadecimal.
        let hex: Vec<String> = data.iter().map(|b| format!("{b:02x}")).collect();
        return Shown::Text(format!("data type {ty}: {}", hex.join(" ")));
    };
    fn all<T: Copy>(v: &[T], f: impl Fn(T) -> ArgValue<'static>) -> Vec<ArgValue<'static>> {
        v.iter().map(|&x| f(x)).collect()
    }
    // A float as the shortest decimal that reads back as it (0.1f32 is 0.1, not
    // 0.10000000149011612).
    let float = |x: f32| ArgValue::Float(x.to_string().parse().unwrap_or(f64::from(x)));
    let items = match ValueData::decode(ty, data) {
        ValueData::String(s) => {
            return Shown::Text(String::from_utf8_lossy(crate::c_str(&s)).into_owned());
        }
        ValueData::Bool(v) => all(&v, ArgValue::Bool),
        ValueData::Char(v) | ValueData::Int8(v) => all(&v, |x| ArgValue::Int(x.into())),
        ValueData::Uint8(v) => all(&v, |x| ArgValue::Uint(x.into())),
        ValueData::Int16(v) => all(&v, |x| ArgValue::Int(x.into())),
        ValueData::Uint16(v) => all(&v, |x| ArgValue::Uint(x.into())),
        ValueData::Int32(v) => all(&v, |x| ArgValue::Int(x.into())),
        ValueData::Uint32(v) => all(&v, |x| ArgValue::Uint(x.into())),
        ValueData::Int64(v) => all(&v, ArgValue::Int),
        ValueData::Uint64(v) => all(&v, ArgValue::Uint),
        ValueData::Float(v) => all(&v, float),
        ValueData::Double(v) => all(&v, ArgValue::Float),
    };
    match items[..] {
        [ArgValue::Bool(b)] if !is_array => Shown::Number(f64::from(u8::from(b))),
        [ArgValue::Int(x)] if !is_array => Shown::Number(x as f64),
        [ArgValue::Uint(x)] if !is_array => Shown::Number(x as f64),
        [ArgValue::Float(x)] if !is_array => Shown::Number(x),
        _ => Shown::Array(items),
    }
}

/// Each descriptor's name and source file as text, made once per capture (not once per block:
/// a 65 kB name under thousands of blocks would be copied for each).
type Texts = HashMap<u32, (String, String)>;

/// One thread's blocks in time order: blocks as slices, events as instants, values as counters
/// or instants. A block that is not shown (outside the window, deeper than asked, or an event
/// or value, whose children are not shown either) hides its subtree.
fn blocks(
    timeline: &mut Timeline<'_>,
    view: &CaptureView<'_>,
    walk: &Walk<'_>,
    thread: &ThreadWalk<'_>,
    track: TrackId,
    texts: &mut Texts,
    summary: &mut Summary,
) -> Result<(), Error> {
    let (from, until) = timeline.filter.window();
    let max_depth = timeline.filter.max_depth();
    let mut counters: HashMap<u32, TrackId> = HashMap::new();
    let mut counter_order = 0;

    // The open slices (their end and their record), innermost last, and the last timestamp
    // written.
    let mut open: Vec<(u64, u64)> = Vec::new();
    let mut now = 0u64;
    // The steps still inside a hidden subtree: entered minus left.
    let mut hidden = 0usize;
    for step in walk.pre_order(thread) {
        let node = match step {
            Step::Exit(node) => {
                if hidden > 0 {
                    hidden -= 1;
                } else if open.last().is_some_and(|o| o.1 == node.offset)
                    && let Some((end, _)) = open.pop()
                {
                    let end = end.max(now);
                    timeline.sink.end(track, end).map_err(Error::Write)?;
                    now = end;
                }
                continue;
            }
            Step::Enter(node) => node,
        };
        if hidden > 0 {
            hidden += 1;
            continue;
        }
        // A child never outlasts its parent in the output (nor starts before what was written).
        let parent_end = open.last().map_or(u64::MAX, |o| o.0);
        let begin = node.begin.max(now).max(from);
        let end = node.end.min(parent_end).min(until).max(begin);
        if node.end < from || node.begin > until {
            hidden = 1;
            continue;
        }
        let d = walk.descriptor(node.descriptor);
        let block_type = d.map_or(1, |d| d.descriptor.block_type);
        let (text, file) = &*texts.entry(node.descriptor).or_insert_with(|| match d {
            Some(d) => (d.name().to_string(), d.descriptor.file.to_string()),
            None => (format!("descriptor {}", node.descriptor), String::new()),
        });
        let name = Name {
            key: u64::from(node.descriptor),
            text,
        };
        match block_type {
            VALUE => {
                // The record again, for its data (a value's descriptor may be a block's
                // before 2.0: then it shows nothing).
                let shown = match view.record_at(node.offset) {
                    Ok(RecordRef::Value { head, data }) => {
                        Some(shown(head.data_type, head.is_array != 0, data))
                    }
                    _ => None,
                };
                match shown {
                    Some(Shown::Number(x)) => {
                        let counter = match counters.get(&node.descriptor) {
                            Some(&c) => c,
                            None => {
                                counter_order += 1;
                                let c = timeline.open_child(
                                    Some(track),
                                    text,
                                    TrackKind::Counter {
                                        unit: CounterUnit::Unspecified,
                                    },
                                    counter_order,
                                    summary,
                                )?;
                                counters.insert(node.descriptor, c);
                                c
                            }
                        };
                        timeline
                            .sink
                            .counter(counter, begin, x)
                            .map_err(Error::Write)?;
                        summary.counter_values += 1;
                    }
                    Some(Shown::Text(text)) => {
                        value_instant(timeline, track, begin, name, ArgValue::Str(&text))?;
                        summary.instants += 1;
                    }
                    Some(Shown::Array(items)) => {
                        value_instant(timeline, track, begin, name, ArgValue::Array(&items))?;
                        summary.instants += 1;
                    }
                    None => {}
                }
                now = begin;
                hidden = 1;
            }
            EVENT => {
                timeline
                    .sink
                    .instant(track, begin, name, &[])
                    .map_err(Error::Write)?;
                summary.instants += 1;
                now = begin;
                hidden = 1;
            }
            _ => {
                if open.len() >= max_depth {
                    hidden = 1;
                    continue;
                }
                let location = d.map(|d| Location {
                    key: u64::from(node.descriptor),
                    file: "",
                    line: d.descriptor.line.max(0) as u32,
                    function: "",
                });
                let location = location.map(|l| Location {
                    file,
                    function: text,
                    ..l
                });
                timeline
                    .sink
                    .begin(track, begin, name, location, None, &[])
                    .map_err(Error::Write)?;
                summary.slices += 1;
                now = begin;
                open.push((end, node.offset));
            }
        }
    }
    for (_, c) in counters {
        timeline.close(c)?;
    }
    Ok(())
}

/// A value that is no number: an instant with a `value` arg.
fn value_instant(
    timeline: &mut Timeline<'_>,
    track: TrackId,
    ts: u64,
    name: Name<'_>,
    value: ArgValue<'_>,
) -> Result<(), Error> {
    let args = [Arg {
        name: "value",
        value,
    }];
    timeline
        .sink
        .instant(track, ts, name, &args)
        .map_err(Error::Write)
}

/// A thread's context switches: slices of a track below it, named by the target.
fn context_switches(
    timeline: &mut Timeline<'_>,
    walk: &Walk<'_>,
    thread: &ThreadWalk<'_>,
    parent: TrackId,
    summary: &mut Summary,
) -> Result<(), Error> {
    if thread.context_switches == 0 {
        return Ok(());
    }
    let (from, until) = timeline.filter.window();
    // In time order: as the file has them when they are (then nothing is held), else sorted.
    let mut sorted = Vec::new();
    let switches: Box<dyn Iterator<Item = crate::ContextSwitchNode<'_>>> =
        if thread.context_switches_sorted() {
            Box::new(walk.context_switches(thread))
        } else {
            sorted.extend(walk.context_switches(thread));
            sorted.sort_by_key(|c: &crate::ContextSwitchNode<'_>| (c.begin, c.end));
            Box::new(sorted.iter().copied())
        };
    let track = timeline.open_child(
        Some(parent),
        "context switches",
        TrackKind::Slices,
        0,
        summary,
    )?;
    let mut now = 0;
    let mut keys: HashMap<&[u8], u64> = HashMap::new();
    for c in switches {
        if c.end < from || c.begin > until {
            continue;
        }
        let begin = c.begin.max(now).max(from);
        let end = c.end.min(until).max(begin);
        let text = c.name.to_string();
        let next = keys.len() as u64;
        let key = *keys.entry(c.name.as_bytes()).or_insert(next);
        let args = [Arg {
            name: "target_tid",
            value: ArgValue::Uint(c.target_tid),
        }];
        timeline
            .sink
            .begin(track, begin, Name { key, text: &text }, None, None, &args)
            .and_then(|()| timeline.sink.end(track, end))
            .map_err(Error::Write)?;
        summary.slices += 1;
        now = end;
    }
    timeline.close(track)
}
