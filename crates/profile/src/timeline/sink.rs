//! What the converters emit and the trace writers implement: tracks opened and closed, slices,
//! instants and counter values on them, in time order per track.

use std::io;

/// A track's identity in the output (a Perfetto track uuid; Chrome's pid/tid come with it).
pub type TrackId = u64;

/// A name with a key the caller keeps stable for that text within a track, so that a writer
/// interns it once per track without hashing the text for every event.
#[derive(Debug, Clone, Copy)]
pub struct Name<'a> {
    /// The caller's key of `text` (the same text, the same key, on a track).
    pub key: u64,
    /// The name.
    pub text: &'a str,
}

/// The value of an argument of a slice or instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgValue<'a> {
    /// An unsigned integer.
    Uint(u64),
    /// A string.
    Str(&'a str),
    /// A signed integer.
    Int(i64),
    /// A floating-point number (written as `null` in JSON when not finite).
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// An array of values (a JSON array; Perfetto's array debug annotation).
    Array(&'a [ArgValue<'a>]),
}

/// A named argument of a slice or instant.
#[derive(Debug, Clone, Copy)]
pub struct Arg<'a> {
    /// The argument's name.
    pub name: &'static str,
    /// Its value.
    pub value: ArgValue<'a>,
}

/// A source location (interned per track by `key`).
#[derive(Debug, Clone, Copy)]
pub struct Location<'a> {
    /// The caller's key of this location (stable for it on a track).
    pub key: u64,
    /// The source file.
    pub file: &'a str,
    /// The line in it.
    pub line: u32,
    /// The function at that place.
    pub function: &'a str,
}

/// A call path: its key (interned per track) and its frames, outermost first, made only when a
/// writer needs them (the first time it sees the key on a track), not for every event.
#[derive(Clone, Copy)]
pub struct CallPath<'a> {
    /// The caller's key of this call path (stable for it on a track).
    pub key: u64,
    /// Makes the frames, outermost first, each with its own key.
    pub frames: &'a dyn Fn() -> Vec<Name<'a>>,
}

impl std::fmt::Debug for CallPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallPath")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// What a track is.
#[derive(Debug, Clone, Copy)]
pub enum TrackKind {
    /// A process (a group of threads): Perfetto's process track.
    Process {
        /// The process id.
        pid: i64,
    },
    /// A thread of a process: slices, instants.
    Thread {
        /// The process id.
        pid: i64,
        /// The thread id.
        tid: i64,
    },
    /// A named group of tracks without events of its own (a rank of an HPC run): Chrome's
    /// process `pid`.
    Group {
        /// The process id the group stands for in Chrome's JSON (from
        /// [`Tracks::group_pid`](super::Tracks::group_pid); a writer takes the next one below
        /// when a process of the trace has it).
        pid: i64,
    },
    /// A track of slices that is not a thread (a trace line, context switches, bookmarks).
    Slices,
    /// A counter track.
    Counter {
        /// The unit of its values.
        unit: CounterUnit,
    },
}

/// A counter's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CounterUnit {
    /// No unit said.
    Unspecified,
}

/// A track to open.
#[derive(Debug, Clone, Copy)]
pub struct Track<'a> {
    /// Its id (from [`Tracks::track_id`](super::Tracks::track_id)).
    pub id: TrackId,
    /// The track it is shown below.
    pub parent: Option<TrackId>,
    /// Its name.
    pub name: &'a str,
    /// What it is.
    pub kind: TrackKind,
    /// The position among its siblings (tracks are shown in this order).
    pub order: i32,
}

/// A trace writer (Perfetto's protobuf or Chrome's JSON, in `profcodec-timeline`).
///
/// Per track, event timestamps never decrease and slices nest (an `end` closes the last slice
/// begun and not ended on that track). Tracks may interleave.
pub trait Sink {
    /// Declares a track. A parent is opened before its children, and a process's thread tracks
    /// before the tracks below it that are no thread: a writer that must give those a thread
    /// id of its own (Chrome's JSON has no other kind of lane) picks one that none of the
    /// process's threads has, and refuses a thread whose id it has already given.
    fn open(&mut self, track: &Track<'_>) -> io::Result<()>;
    /// Declares that no event follows on `track` (its per-track state can go).
    fn close(&mut self, track: TrackId) -> io::Result<()>;
    /// Begins a slice.
    fn begin(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        location: Option<Location<'_>>,
        call_path: Option<CallPath<'_>>,
        args: &[Arg<'_>],
    ) -> io::Result<()>;
    /// Ends the innermost open slice.
    fn end(&mut self, track: TrackId, ts: u64) -> io::Result<()>;
    /// Ends the `count` innermost open slices (a sampled call path leaving several frames at
    /// once), as `count` calls of [`end`](Sink::end) would.
    fn end_several(&mut self, track: TrackId, ts: u64, count: usize) -> io::Result<()> {
        for _ in 0..count {
            self.end(track, ts)?;
        }
        Ok(())
    }
    /// An instant event.
    fn instant(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        args: &[Arg<'_>],
    ) -> io::Result<()>;
    /// A counter value.
    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()>;
    /// Writes what is left (Chrome's closing bracket) and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// A sink that takes every event and writes nothing: the end of a chain of sinks that only
/// look at the events on their way (as the report's activity counter does), or a walk of an
/// input's timeline that checks it converts without writing a trace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Discard;

impl Sink for Discard {
    fn open(&mut self, _: &Track<'_>) -> io::Result<()> {
        Ok(())
    }
    fn close(&mut self, _: TrackId) -> io::Result<()> {
        Ok(())
    }
    fn begin(
        &mut self,
        _: TrackId,
        _: u64,
        _: Name<'_>,
        _: Option<Location<'_>>,
        _: Option<CallPath<'_>>,
        _: &[Arg<'_>],
    ) -> io::Result<()> {
        Ok(())
    }
    fn end(&mut self, _: TrackId, _: u64) -> io::Result<()> {
        Ok(())
    }
    fn instant(&mut self, _: TrackId, _: u64, _: Name<'_>, _: &[Arg<'_>]) -> io::Result<()> {
        Ok(())
    }
    fn counter(&mut self, _: TrackId, _: u64, _: f64) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
