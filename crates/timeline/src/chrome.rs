//! The Chrome trace-event JSON writer: `{"traceEvents":[...]}` with one event per line, `B`/`E`
//! slice pairs, `i` instants, `C` counters and `M` metadata naming processes and threads;
//! timestamps in microseconds with three decimals (exact nanoseconds).
//!
//! **Long names.** The format has no string table: every event spells its name. So that the
//! output stays linear in the input (a 65 kB block name under 16,000 blocks was 1 GB of JSON), a
//! name, source file, counter name or string argument longer than [`NAME_CAP`] bytes is written
//! once whole, in an `M` event of its own before its first use,
//! `{"ph":"M","pid":..,"tid":..,"name":"long_name","args":{"id":N,"name":"<the full text>"}}`,
//! and every event spells it as its first [`NAME_CAP`] bytes (cut at a character boundary)
//! followed by `… [long name N]`, a text that differs for every distinct long text (viewers that
//! group slices by name keep them apart). Each event is then at most a few hundred bytes plus its
//! own arguments' text, and each long text is written whole once per trace: the output is at
//! most a constant times the input (about 20 bytes of JSON per byte of the smallest input record,
//! a 23-byte EasyProfiler block) plus a constant.

use std::collections::HashMap;
use std::io::{self, Write};

use foldhash::fast::FixedState;

use profcodec_profile::timeline::{
    Arg, ArgValue, CallPath, Location, Name, Sink, Track, TrackId, TrackKind,
};

/// Where a track's events go: Chrome's (pid, tid), and a counter's name.
#[derive(Debug, Clone)]
struct Lane {
    /// The pid and tid, for child tracks.
    pid: i64,
    tid: i64,
    /// `,"pid":..,"tid":..` as every event of the lane spells it.
    ids: Box<[u8]>,
    /// A counter's `,"name":..,"id":".."` (its name, and its thread's tid as the id, so that
    /// same-named counters of different threads stay apart: Chrome's counters belong to the
    /// process, told apart by name and id).
    counter: Option<Box<[u8]>>,
}

impl Lane {
    fn new(pid: i64, tid: i64, counter: Option<Box<[u8]>>) -> Lane {
        Lane {
            pid,
            tid,
            ids: format!(",\"pid\":{pid},\"tid\":{tid}").into_bytes().into(),
            counter,
        }
    }
}

/// The buffered bytes at which they go to the output: large writes, few system calls.
const FLUSH_AT: usize = 1 << 20;

/// The longest text an event spells whole (bytes); longer ones are written once, in a
/// `long_name` metadata event (see the module documentation).
pub(crate) const NAME_CAP: usize = 256;

/// Which of an event's texts a key names (a slice's name and its source file share a key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Role {
    Name,
    File,
}

/// A caller's key for a text: stable for that text on that track.
type Key = (TrackId, Role, u64);

/// The long texts written so far: each one's id, found by the caller's key on a track (no
/// hashing of the text per event) or, the first time a key is seen, by the text itself.
#[derive(Default)]
struct LongNames {
    /// `(track, role, key)` -> id.
    by_key: HashMap<Key, u32, FixedState>,
    /// Text -> id.
    by_text: HashMap<Box<str>, u32, FixedState>,
    /// By id: the text events spell (prefix and marker).
    capped: Vec<Box<str>>,
}

impl LongNames {
    /// Makes `text` known if it is longer than [`NAME_CAP`]: the first time, writes its
    /// `long_name` event (on the lane `ids`) into `buffer`. Call before the event's head.
    fn register(
        &mut self,
        buffer: &mut Vec<u8>,
        first: &mut bool,
        ids: &[u8],
        key: Option<Key>,
        text: &str,
    ) -> io::Result<()> {
        if text.len() <= NAME_CAP || key.is_some_and(|k| self.by_key.contains_key(&k)) {
            return Ok(());
        }
        let id = match self.by_text.get(text) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.capped.len()).map_err(io::Error::other)?;
                let mut cut = NAME_CAP;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                self.capped
                    .push(format!("{}… [long name {id}]", &text[..cut]).into());
                self.by_text.insert(text.into(), id);
                head(buffer, first, "M", ids, None);
                write!(
                    buffer,
                    ",\"name\":\"long_name\",\"args\":{{\"id\":{id},\"name\":"
                )?;
                string(buffer, text)?;
                buffer.extend_from_slice(b"}}");
                id
            }
        };
        if let Some(k) = key {
            self.by_key.insert(k, id);
        }
        Ok(())
    }

    /// How events spell `text` (registered before, if long).
    fn spell<'s>(&'s self, key: Option<Key>, text: &'s str) -> &'s str {
        if text.len() <= NAME_CAP {
            return text;
        }
        let id = match key {
            Some(k) => self.by_key.get(&k),
            None => self.by_text.get(text),
        };
        id.map_or(text, |&id| &self.capped[id as usize])
    }
}

/// Writes Chrome's JSON trace-event format.
pub(crate) struct ChromeSink<W> {
    out: W,
    /// Events not yet written to `out` (formatting into a `Vec` costs less than into a
    /// writer).
    buffer: Vec<u8>,
    lanes: HashMap<TrackId, Lane, FixedState>,
    /// The process ids in use, each with whether the writer gave it (a group's).
    pids: HashMap<i64, Given, FixedState>,
    /// Per process id: the thread ids in use, each with whether the writer gave it (the lane
    /// of a track that is no thread).
    tids: HashMap<(i64, i64), Given, FixedState>,
    first: bool,
    long: LongNames,
}

/// Whether an id is the input's (a real process or thread) or the writer's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Given {
    Input,
    Writer,
}

impl<W: Write> ChromeSink<W> {
    pub(crate) fn new(out: W) -> Self {
        ChromeSink {
            out,
            buffer: Vec::with_capacity(FLUSH_AT + (1 << 16)),
            lanes: HashMap::default(),
            pids: HashMap::default(),
            tids: HashMap::default(),
            first: true,
            long: LongNames::default(),
        }
    }

    /// The output (after [`Sink::finish`]).
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    /// Writes the buffer out once it holds [`FLUSH_AT`] bytes.
    fn flush_full(&mut self) -> io::Result<()> {
        if self.buffer.len() >= FLUSH_AT {
            self.out.write_all(&self.buffer)?;
            self.buffer.clear();
        }
        Ok(())
    }
}

/// The error of a process or thread opened with an id the writer has already given to a
/// lane of its own (the [`Sink::open`] order was not kept).
fn taken(what: &str, id: i64, name: &str) -> io::Error {
    let (other, why) = match what {
        "thread" => (
            "a track that is no thread",
            "a process's threads are opened before its other tracks",
        ),
        _ => (
            "a group of tracks",
            "the trace numbers groups down from 2^31 - 1, clear of real process ids",
        ),
    };
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} {id} ({name:?}) is opened after the trace gave its id to {other} ({why})"),
    )
}

/// The `thread_sort_index` metadata event of `lane`: its place among the process's lanes.
fn sort_index(buffer: &mut Vec<u8>, first: &mut bool, lane: &Lane, order: i32) -> io::Result<()> {
    head(buffer, first, "M", &lane.ids, None);
    write!(
        buffer,
        ",\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{order}}}}}"
    )
}

/// `track`'s lane.
fn lane(lanes: &HashMap<TrackId, Lane, FixedState>, track: TrackId) -> io::Result<&Lane> {
    lanes.get(&track).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("an event on track {track}, which is not open"),
        )
    })
}

/// Starts an event: the separator, then `{"ph":"<ph>","pid":..,"tid":..,"ts":..` (`ids`: the
/// lane's pid and tid).
fn head(buffer: &mut Vec<u8>, first: &mut bool, ph: &str, ids: &[u8], ts: Option<u64>) {
    if *first {
        buffer.extend_from_slice(b"{\"traceEvents\":[\n");
        *first = false;
    } else {
        buffer.extend_from_slice(b",\n");
    }
    buffer.extend_from_slice(b"{\"ph\":\"");
    buffer.extend_from_slice(ph.as_bytes());
    buffer.push(b'"');
    buffer.extend_from_slice(ids);
    if let Some(ts) = ts {
        // Writing into a Vec cannot fail.
        let _ = write!(buffer, ",\"ts\":{}.{:03}", ts / 1000, ts % 1000);
    }
}

/// `s` as a JSON string.
fn string(buffer: &mut Vec<u8>, s: &str) -> io::Result<()> {
    serde_json::to_writer(buffer, s).map_err(io::Error::other)
}

/// Registers the long texts of an event's arguments and source file (before its head).
fn register_args(
    sink: (&mut Vec<u8>, &mut bool, &mut LongNames),
    ids: &[u8],
    track: TrackId,
    args: &[Arg<'_>],
    location: Option<Location<'_>>,
) -> io::Result<()> {
    let (buffer, first, long) = sink;
    if let Some(l) = location {
        long.register(buffer, first, ids, Some((track, Role::File, l.key)), l.file)?;
    }
    for arg in args {
        register_value(buffer, first, long, ids, arg.value)?;
    }
    Ok(())
}

/// Registers the long strings of an argument's value (in arrays too).
fn register_value(
    buffer: &mut Vec<u8>,
    first: &mut bool,
    long: &mut LongNames,
    ids: &[u8],
    value: ArgValue<'_>,
) -> io::Result<()> {
    match value {
        ArgValue::Str(v) => long.register(buffer, first, ids, None, v),
        ArgValue::Array(items) => items
            .iter()
            .try_for_each(|&item| register_value(buffer, first, long, ids, item)),
        _ => Ok(()),
    }
}

fn args(
    buffer: &mut Vec<u8>,
    long: &LongNames,
    track: TrackId,
    args: &[Arg<'_>],
    location: Option<Location<'_>>,
) -> io::Result<()> {
    if args.is_empty() && location.is_none() {
        return Ok(());
    }
    buffer.extend_from_slice(b",\"args\":{");
    let mut first = true;
    if let Some(l) = location {
        buffer.extend_from_slice(b"\"file\":");
        string(buffer, long.spell(Some((track, Role::File, l.key)), l.file))?;
        write!(buffer, ",\"line\":{}", l.line)?;
        first = false;
    }
    for arg in args {
        if !first {
            buffer.extend_from_slice(b",");
        }
        first = false;
        string(buffer, arg.name)?;
        buffer.extend_from_slice(b":");
        value(buffer, long, arg.value)?;
    }
    buffer.extend_from_slice(b"}");
    Ok(())
}

/// An argument's value as JSON: numbers, strings (spelled as registered), arrays as arrays.
fn value(buffer: &mut Vec<u8>, long: &LongNames, value: ArgValue<'_>) -> io::Result<()> {
    match value {
        ArgValue::Uint(v) => write!(buffer, "{v}")?,
        ArgValue::Int(v) => write!(buffer, "{v}")?,
        ArgValue::Float(v) if v.is_finite() => serde_json::to_writer(&mut *buffer, &v)?,
        ArgValue::Float(_) => buffer.extend_from_slice(b"null"),
        ArgValue::Bool(v) => write!(buffer, "{v}")?,
        ArgValue::Str(v) => string(buffer, long.spell(None, v))?,
        ArgValue::Array(items) => {
            buffer.push(b'[');
            for (i, &item) in items.iter().enumerate() {
                if i > 0 {
                    buffer.push(b',');
                }
                self::value(buffer, long, item)?;
            }
            buffer.push(b']');
        }
    }
    Ok(())
}

impl<W: Write> ChromeSink<W> {
    fn metadata(&mut self, what: &str, pid: i64, tid: i64, name: &str) -> io::Result<()> {
        let ids = Lane::new(pid, tid, None).ids;
        head(&mut self.buffer, &mut self.first, "M", &ids, None);
        write!(self.buffer, ",\"name\":\"{what}\",\"args\":{{\"name\":")?;
        string(&mut self.buffer, name)?;
        self.buffer.extend_from_slice(b"}}");
        Ok(())
    }
}

impl<W: Write> Sink for ChromeSink<W> {
    fn open(&mut self, track: &Track<'_>) -> io::Result<()> {
        let parent_lane = track.parent.and_then(|p| self.lanes.get(&p));
        let parent = parent_lane.map(|l| l.pid);
        let parent_tid = parent_lane.map_or(0, |l| l.tid);
        let lane = match track.kind {
            TrackKind::Process { pid } => {
                if self.pids.insert(pid, Given::Input) == Some(Given::Writer) {
                    return Err(taken("process", pid, track.name));
                }
                self.metadata("process_name", pid, 0, track.name)?;
                Lane::new(pid, 0, None)
            }
            TrackKind::Group { pid } => {
                // The group's own pid, or the next one below that is free.
                let mut pid = pid;
                while self.pids.contains_key(&pid) {
                    pid = pid.wrapping_sub(1);
                }
                self.pids.insert(pid, Given::Writer);
                self.metadata("process_name", pid, 0, track.name)?;
                Lane::new(pid, 0, None)
            }
            TrackKind::Thread { pid, tid } => {
                if self.tids.insert((pid, tid), Given::Input) == Some(Given::Writer) {
                    return Err(taken("thread", tid, track.name));
                }
                self.metadata("thread_name", pid, tid, track.name)?;
                let lane = Lane::new(pid, tid, None);
                sort_index(&mut self.buffer, &mut self.first, &lane, track.order)?;
                lane
            }
            TrackKind::Slices => {
                // A lane of its own: a thread id that no thread of the process has (its
                // threads are opened before it), nor any other lane.
                let pid = parent.unwrap_or(0);
                let mut tid = track.id as i64;
                while self.tids.contains_key(&(pid, tid)) {
                    tid = tid.wrapping_add(1);
                }
                self.tids.insert((pid, tid), Given::Writer);
                self.metadata("thread_name", pid, tid, track.name)?;
                let lane = Lane::new(pid, tid, None);
                sort_index(&mut self.buffer, &mut self.first, &lane, track.order)?;
                lane
            }
            TrackKind::Counter { .. } => {
                // On its thread's lane (a counter of the process: tid 0).
                let lane = Lane::new(parent.unwrap_or(0), parent_tid, None);
                self.long.register(
                    &mut self.buffer,
                    &mut self.first,
                    &lane.ids,
                    None,
                    track.name,
                )?;
                let mut counter = b",\"name\":".to_vec();
                string(&mut counter, self.long.spell(None, track.name))?;
                write!(counter, ",\"id\":\"{parent_tid}\"")?;
                Lane {
                    counter: Some(counter.into()),
                    ..lane
                }
            }
        };
        self.lanes.insert(track.id, lane);
        self.flush_full()
    }

    fn close(&mut self, track: TrackId) -> io::Result<()> {
        self.lanes.remove(&track);
        Ok(())
    }

    fn begin(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        location: Option<Location<'_>>,
        _call_path: Option<CallPath<'_>>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        let lane = lane(&self.lanes, track)?;
        let key = Some((track, Role::Name, name.key));
        let (buffer, first, long) = (&mut self.buffer, &mut self.first, &mut self.long);
        long.register(buffer, first, &lane.ids, key, name.text)?;
        register_args((buffer, first, long), &lane.ids, track, args, location)?;
        head(buffer, first, "B", &lane.ids, Some(ts));
        buffer.extend_from_slice(b",\"name\":");
        string(buffer, long.spell(key, name.text))?;
        self::args(buffer, long, track, args, location)?;
        self.buffer.push(b'}');
        self.flush_full()
    }

    fn end(&mut self, track: TrackId, ts: u64) -> io::Result<()> {
        let lane = lane(&self.lanes, track)?;
        head(&mut self.buffer, &mut self.first, "E", &lane.ids, Some(ts));
        self.buffer.push(b'}');
        self.flush_full()
    }

    fn instant(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        let lane = lane(&self.lanes, track)?;
        let key = Some((track, Role::Name, name.key));
        let (buffer, first, long) = (&mut self.buffer, &mut self.first, &mut self.long);
        long.register(buffer, first, &lane.ids, key, name.text)?;
        register_args((buffer, first, long), &lane.ids, track, args, None)?;
        head(buffer, first, "i", &lane.ids, Some(ts));
        buffer.extend_from_slice(b",\"s\":\"t\",\"name\":");
        string(buffer, long.spell(key, name.text))?;
        self::args(buffer, long, track, args, None)?;
        self.buffer.push(b'}');
        self.flush_full()
    }

    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()> {
        let lane = lane(&self.lanes, track)?;
        head(&mut self.buffer, &mut self.first, "C", &lane.ids, Some(ts));
        self.buffer
            .extend_from_slice(lane.counter.as_deref().unwrap_or(b",\"name\":\"\""));
        if value.is_finite() {
            write!(self.buffer, ",\"args\":{{\"value\":{value}}}}}")?;
        } else {
            write!(self.buffer, ",\"args\":{{\"value\":null}}}}")?;
        }
        self.flush_full()
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.first {
            self.buffer.extend_from_slice(b"{\"traceEvents\":[");
            self.first = false;
        }
        self.buffer
            .extend_from_slice(b"\n],\"displayTimeUnit\":\"ns\"}\n");
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        self.out.flush()
    }
}
