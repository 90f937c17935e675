//! The Chrome trace-event JSON writer: `{"traceEvents":[...]}` with one event per line, `B`/`E`
//! slice pairs, `i` instants, `C` counters and `M` metadata naming processes and threads;
//! timestamps in microseconds with three decimals (exact nanoseconds).

use std::collections::HashMap;
use std::io::{self, Write};

use foldhash::fast::FixedState;

use crate::sink::{Arg, ArgValue, CallPath, Location, Name, Sink, Track, TrackId, TrackKind};

/// Where a track's events go: Chrome's (pid, tid), and a counter's name.
#[derive(Debug, Clone)]
struct Lane {
    /// The pid, for child tracks.
    pid: i64,
    /// `,"pid":..,"tid":..` as every event of the lane spells it.
    ids: Box<[u8]>,
    counter: Option<String>,
}

impl Lane {
    fn new(pid: i64, tid: i64, counter: Option<String>) -> Lane {
        Lane {
            pid,
            ids: format!(",\"pid\":{pid},\"tid\":{tid}").into_bytes().into(),
            counter,
        }
    }
}

/// The buffered bytes at which they go to the output: large writes, few system calls.
const FLUSH_AT: usize = 1 << 20;

/// Writes Chrome's JSON trace-event format.
pub(crate) struct ChromeSink<W> {
    out: W,
    /// Events not yet written to `out` (formatting into a `Vec` costs less than into a
    /// writer).
    buffer: Vec<u8>,
    lanes: HashMap<TrackId, Lane, FixedState>,
    first: bool,
}

impl<W: Write> ChromeSink<W> {
    pub(crate) fn new(out: W) -> Self {
        ChromeSink {
            out,
            buffer: Vec::with_capacity(FLUSH_AT + (1 << 16)),
            lanes: HashMap::default(),
            first: true,
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

fn args(buffer: &mut Vec<u8>, args: &[Arg<'_>], location: Option<Location<'_>>) -> io::Result<()> {
    if args.is_empty() && location.is_none() {
        return Ok(());
    }
    buffer.extend_from_slice(b",\"args\":{");
    let mut first = true;
    if let Some(l) = location {
        buffer.extend_from_slice(b"\"file\":");
        string(buffer, l.file)?;
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
        match arg.value {
            ArgValue::Uint(v) => write!(buffer, "{v}")?,
            ArgValue::Str(v) => string(buffer, v)?,
        }
    }
    buffer.extend_from_slice(b"}");
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
        let parent = track.parent.and_then(|p| self.lanes.get(&p)).map(|l| l.pid);
        let lane = match track.kind {
            TrackKind::Process { pid } | TrackKind::Group { pid } => {
                self.metadata("process_name", pid, 0, track.name)?;
                Lane::new(pid, 0, None)
            }
            TrackKind::Thread { pid, tid } => {
                self.metadata("thread_name", pid, tid, track.name)?;
                let lane = Lane::new(pid, tid, None);
                head(&mut self.buffer, &mut self.first, "M", &lane.ids, None);
                write!(
                    self.buffer,
                    ",\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                    track.order
                )?;
                lane
            }
            TrackKind::Slices => {
                // A lane of its own: a thread id no real thread has.
                let pid = parent.unwrap_or(0);
                let tid = track.id as i64;
                self.metadata("thread_name", pid, tid, track.name)?;
                Lane::new(pid, tid, None)
            }
            TrackKind::Counter { .. } => {
                Lane::new(parent.unwrap_or(0), 0, Some(track.name.to_owned()))
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
        head(&mut self.buffer, &mut self.first, "B", &lane.ids, Some(ts));
        self.buffer.extend_from_slice(b",\"name\":");
        string(&mut self.buffer, name.text)?;
        self::args(&mut self.buffer, args, location)?;
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
        head(&mut self.buffer, &mut self.first, "i", &lane.ids, Some(ts));
        self.buffer.extend_from_slice(b",\"s\":\"t\",\"name\":");
        string(&mut self.buffer, name.text)?;
        self::args(&mut self.buffer, args, None)?;
        self.buffer.push(b'}');
        self.flush_full()
    }

    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()> {
        let lane = lane(&self.lanes, track)?;
        head(&mut self.buffer, &mut self.first, "C", &lane.ids, Some(ts));
        self.buffer.extend_from_slice(b",\"name\":");
        string(
            &mut self.buffer,
            lane.counter.as_deref().unwrap_or_default(),
        )?;
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
