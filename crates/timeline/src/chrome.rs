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
    pid: i64,
    tid: i64,
    counter: Option<String>,
}

/// Writes Chrome's JSON trace-event format.
pub(crate) struct ChromeSink<W> {
    out: W,
    lanes: HashMap<TrackId, Lane, FixedState>,
    first: bool,
}

impl<W: Write> ChromeSink<W> {
    pub(crate) fn new(out: W) -> Self {
        ChromeSink {
            out,
            lanes: HashMap::default(),
            first: true,
        }
    }

    /// The output (after [`Sink::finish`]).
    pub(crate) fn into_inner(self) -> W {
        self.out
    }

    fn lane(&self, track: TrackId) -> io::Result<&Lane> {
        self.lanes.get(&track).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("an event on track {track}, which is not open"),
            )
        })
    }

    /// Starts an event: the separator, then `{"ph":"<ph>","pid":..,"tid":..,"ts":..`.
    fn head(&mut self, ph: &str, pid: i64, tid: i64, ts: Option<u64>) -> io::Result<()> {
        if self.first {
            self.out.write_all(b"{\"traceEvents\":[\n")?;
            self.first = false;
        } else {
            self.out.write_all(b",\n")?;
        }
        write!(self.out, "{{\"ph\":\"{ph}\",\"pid\":{pid},\"tid\":{tid}")?;
        if let Some(ts) = ts {
            write!(self.out, ",\"ts\":{}.{:03}", ts / 1000, ts % 1000)?;
        }
        Ok(())
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, s).map_err(io::Error::other)
    }

    fn args(&mut self, args: &[Arg<'_>], location: Option<Location<'_>>) -> io::Result<()> {
        if args.is_empty() && location.is_none() {
            return Ok(());
        }
        self.out.write_all(b",\"args\":{")?;
        let mut first = true;
        if let Some(l) = location {
            self.out.write_all(b"\"file\":")?;
            self.string(l.file)?;
            write!(self.out, ",\"line\":{}", l.line)?;
            first = false;
        }
        for arg in args {
            if !first {
                self.out.write_all(b",")?;
            }
            first = false;
            self.string(arg.name)?;
            self.out.write_all(b":")?;
            match arg.value {
                ArgValue::Uint(v) => write!(self.out, "{v}")?,
                ArgValue::Str(v) => self.string(v)?,
            }
        }
        self.out.write_all(b"}")
    }

    fn metadata(&mut self, what: &str, pid: i64, tid: i64, name: &str) -> io::Result<()> {
        self.head("M", pid, tid, None)?;
        write!(self.out, ",\"name\":\"{what}\",\"args\":{{\"name\":")?;
        self.string(name)?;
        self.out.write_all(b"}}")
    }
}

impl<W: Write> Sink for ChromeSink<W> {
    fn open(&mut self, track: &Track<'_>) -> io::Result<()> {
        let parent = track.parent.and_then(|p| self.lanes.get(&p)).map(|l| l.pid);
        let lane = match track.kind {
            TrackKind::Process { pid } | TrackKind::Group { pid } => {
                self.metadata("process_name", pid, 0, track.name)?;
                Lane {
                    pid,
                    tid: 0,
                    counter: None,
                }
            }
            TrackKind::Thread { pid, tid } => {
                self.metadata("thread_name", pid, tid, track.name)?;
                self.head("M", pid, tid, None)?;
                write!(
                    self.out,
                    ",\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{}}}}}",
                    track.order
                )?;
                Lane {
                    pid,
                    tid,
                    counter: None,
                }
            }
            TrackKind::Slices => {
                // A lane of its own: a thread id no real thread has.
                let pid = parent.unwrap_or(0);
                let tid = track.id as i64;
                self.metadata("thread_name", pid, tid, track.name)?;
                Lane {
                    pid,
                    tid,
                    counter: None,
                }
            }
            TrackKind::Counter { .. } => Lane {
                pid: parent.unwrap_or(0),
                tid: 0,
                counter: Some(track.name.to_owned()),
            },
        };
        self.lanes.insert(track.id, lane);
        Ok(())
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
        let (pid, tid) = {
            let l = self.lane(track)?;
            (l.pid, l.tid)
        };
        self.head("B", pid, tid, Some(ts))?;
        self.out.write_all(b",\"name\":")?;
        self.string(name.text)?;
        self.args(args, location)?;
        self.out.write_all(b"}")
    }

    fn end(&mut self, track: TrackId, ts: u64) -> io::Result<()> {
        let (pid, tid) = {
            let l = self.lane(track)?;
            (l.pid, l.tid)
        };
        self.head("E", pid, tid, Some(ts))?;
        self.out.write_all(b"}")
    }

    fn instant(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        let (pid, tid) = {
            let l = self.lane(track)?;
            (l.pid, l.tid)
        };
        self.head("i", pid, tid, Some(ts))?;
        self.out.write_all(b",\"s\":\"t\",\"name\":")?;
        self.string(name.text)?;
        self.args(args, None)?;
        self.out.write_all(b"}")
    }

    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()> {
        let (pid, tid, name) = {
            let l = self.lane(track)?;
            (l.pid, l.tid, l.counter.clone().unwrap_or_default())
        };
        self.head("C", pid, tid, Some(ts))?;
        self.out.write_all(b",\"name\":")?;
        self.string(&name)?;
        if value.is_finite() {
            write!(self.out, ",\"args\":{{\"value\":{value}}}}}")
        } else {
            write!(self.out, ",\"args\":{{\"value\":null}}}}")
        }
    }

    fn finish(&mut self) -> io::Result<()> {
        if self.first {
            self.out.write_all(b"{\"traceEvents\":[")?;
            self.first = false;
        }
        self.out.write_all(b"\n],\"displayTimeUnit\":\"ns\"}\n")?;
        self.out.flush()
    }
}
