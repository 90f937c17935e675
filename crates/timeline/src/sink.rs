//! What the converters emit and the two writers implement: tracks opened and closed, slices,
//! instants and counter values on them, in time order per track.

use std::io;

/// A track's identity in the output (a Perfetto track uuid; Chrome's pid/tid come with it).
pub(crate) type TrackId = u64;

/// A name with a key the caller keeps stable for that text within a track, so that a writer
/// interns it once per track without hashing the text for every event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Name<'a> {
    pub(crate) key: u64,
    pub(crate) text: &'a str,
}

/// An argument of a slice or instant.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ArgValue<'a> {
    Uint(u64),
    Str(&'a str),
}

/// A named argument.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arg<'a> {
    pub(crate) name: &'static str,
    pub(crate) value: ArgValue<'a>,
}

/// A source location (interned per track by `key`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Location<'a> {
    pub(crate) key: u64,
    pub(crate) file: &'a str,
    pub(crate) line: u32,
    pub(crate) function: &'a str,
}

/// A call path: its key (interned per track) and its frames, outermost first, made only when a
/// writer needs them (the first time it sees the key on a track), not for every event.
#[derive(Clone, Copy)]
pub(crate) struct CallPath<'a> {
    pub(crate) key: u64,
    pub(crate) frames: &'a dyn Fn() -> Vec<Name<'a>>,
}

/// What a track is.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TrackKind {
    /// A process (a group of threads): Perfetto's process track.
    Process { pid: i64 },
    /// A thread of a process: slices, instants.
    Thread { pid: i64, tid: i64 },
    /// A named group of tracks without events of its own (a rank of an HPC run): Chrome's
    /// process `pid`.
    Group { pid: i64 },
    /// A track of slices that is not a thread (a trace line, context switches, bookmarks).
    Slices,
    /// A counter track.
    Counter { unit: CounterUnit },
}

/// A counter's unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CounterUnit {
    Unspecified,
}

/// A track to open.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Track<'a> {
    pub(crate) id: TrackId,
    pub(crate) parent: Option<TrackId>,
    pub(crate) name: &'a str,
    pub(crate) kind: TrackKind,
    /// The position among its siblings (tracks are shown in this order).
    pub(crate) order: i32,
}

/// A trace writer: Perfetto's protobuf or Chrome's JSON.
///
/// Per track, event timestamps never decrease and slices nest (an `end` closes the last slice
/// begun and not ended on that track). Tracks may interleave.
pub(crate) trait Sink {
    /// Declares a track. A parent is opened before its children.
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
