//! The format-neutral timeline model: the events a format's converter emits (tracks, slices,
//! instants, counter values) and a trace writer writes (the crate `profcodec-timeline` writes
//! Perfetto's protobuf traces and Chrome's trace-event JSON).
//!
//! A converter receives a [`Timeline`]: the [`Sink`] its events go to, the [`Filter`] of what to
//! keep, and the [`Tracks`] that number the tracks of the whole trace (several inputs may go to
//! one trace). It returns the [`Summary`] of what it wrote, or an [`Error`] that names the input.
//! Per track, timestamps never decrease and slices nest; tracks may interleave.
//!
//! [`CallPaths`] and [`SampledTrack`] turn sampled call paths into nested slices the way
//! hpcviewer's trace view shows depth: each sample lasts until the next one, its call path's
//! procedure frames are the levels, and consecutive samples that share a prefix of frames extend
//! the same slices. A converter of sampled traces names its frames through a [`Profile`]'s call
//! tree and hands each sample's node to a [`SampledTrack`].
//!
//! ```
//! use profcodec_profile::timeline::{Error, Filter, Name, Summary, Timeline, TrackKind, Tracks};
//! # use profcodec_profile::timeline::{Arg, CallPath, Location, Sink, Track, TrackId};
//! # #[derive(Default)]
//! # struct Count(usize);
//! # impl Sink for Count {
//! #     fn open(&mut self, _: &Track<'_>) -> std::io::Result<()> { self.0 += 1; Ok(()) }
//! #     fn close(&mut self, _: TrackId) -> std::io::Result<()> { Ok(()) }
//! #     fn begin(&mut self, _: TrackId, _: u64, _: Name<'_>, _: Option<Location<'_>>,
//! #         _: Option<CallPath<'_>>, _: &[Arg<'_>]) -> std::io::Result<()> { self.0 += 1; Ok(()) }
//! #     fn end(&mut self, _: TrackId, _: u64) -> std::io::Result<()> { self.0 += 1; Ok(()) }
//! #     fn instant(&mut self, _: TrackId, _: u64, _: Name<'_>, _: &[Arg<'_>])
//! #         -> std::io::Result<()> { Ok(()) }
//! #     fn counter(&mut self, _: TrackId, _: u64, _: f64) -> std::io::Result<()> { Ok(()) }
//! #     fn finish(&mut self) -> std::io::Result<()> { Ok(()) }
//! # }
//!
//! /// A converter: one track with one slice.
//! fn convert(timeline: &mut Timeline<'_>) -> Result<Summary, Error> {
//!     let mut summary = Summary::default();
//!     let group = timeline.open_child(None, "run", TrackKind::Slices, 0, &mut summary)?;
//!     let name = Name { key: 0, text: "main" };
//!     timeline.sink.begin(group, 100, name, None, None, &[]).map_err(Error::Write)?;
//!     timeline.sink.end(group, 250).map_err(Error::Write)?;
//!     summary.slices += 1;
//!     timeline.close(group)?;
//!     Ok(summary)
//! }
//!
//! let (mut sink, filter, mut tracks) = (Count::default(), Filter::new(), Tracks::new());
//! let summary = convert(&mut Timeline::new(&mut sink, &filter, &mut tracks))?;
//! assert_eq!((summary.tracks, summary.slices), (1, 1));
//! assert_eq!(sink.0, 3);
//! # Ok::<(), Error>(())
//! ```
//!
//! [`Profile`]: crate::Profile

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;

mod sampled;
mod sink;

pub use sampled::{CallPaths, SampledTrack};
pub use sink::{
    Arg, ArgValue, CallPath, CounterUnit, Discard, Location, Name, Sink, Track, TrackId, TrackKind,
};

/// What to keep of the inputs. The default keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Filter {
    /// Threads to keep (empty: all), each by its id or its name, as the input's converter
    /// identifies its threads ([`Filter::keeps_thread`]).
    pub threads: Vec<String>,
    /// Ranks to keep (empty: all), by rank id; a thread without a rank is rank 0
    /// ([`Filter::keeps_rank`]).
    pub ranks: Vec<u64>,
    /// Drop what ends before this time (ns); what spans it begins at it.
    pub from: Option<u64>,
    /// Drop what begins after this time (ns); what spans it ends at it.
    pub until: Option<u64>,
    /// The deepest nesting kept: 1 keeps top-level slices only.
    pub depth: Option<u32>,
}

impl Filter {
    /// Keeps everything.
    pub fn new() -> Filter {
        Filter::default()
    }

    /// Whether the tracks of `rank` (`None`: no rank, which is rank 0) are kept.
    pub fn keeps_rank(&self, rank: Option<u64>) -> bool {
        crate::select::keeps_rank(&self.ranks, rank)
    }

    /// Whether a thread with this id and name (either may be unknown) is kept: some entry of
    /// [`threads`](Filter::threads) is its id in decimal or its name, as a
    /// [`Selection`](crate::Selection) matches threads.
    pub fn keeps_thread(&self, id: Option<u64>, name: Option<&str>) -> bool {
        crate::select::keeps_thread(&self.threads, id, name)
    }

    /// The threads and ranks kept, as the [`Selection`](crate::Selection) of the profile
    /// model.
    pub fn selection(&self) -> crate::Selection {
        crate::Selection::new()
            .threads(self.threads.iter().cloned())
            .ranks(self.ranks.iter().copied())
    }

    /// The time window, as a closed range (ns).
    pub fn window(&self) -> (u64, u64) {
        (self.from.unwrap_or(0), self.until.unwrap_or(u64::MAX))
    }

    /// The deepest nesting kept, as a count of levels.
    pub fn max_depth(&self) -> usize {
        self.depth.map_or(usize::MAX, |d| d as usize)
    }
}

/// What a conversion wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Tracks declared.
    pub tracks: u64,
    /// Slices (begin and end pairs).
    pub slices: u64,
    /// Instant events.
    pub instants: u64,
    /// Counter values.
    pub counter_values: u64,
}

impl std::ops::AddAssign for Summary {
    fn add_assign(&mut self, o: Summary) {
        self.tracks += o.tracks;
        self.slices += o.slices;
        self.instants += o.instants;
        self.counter_values += o.counter_values;
    }
}

/// Any error a converter's input gives (a format crate's error, an I/O error).
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a timeline could not be converted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The output could not be written.
    #[error("writing the trace: {0}")]
    Write(#[source] io::Error),
    /// An input, or a file of it, could not be read or is damaged.
    #[error("{}: {source}", path.display())]
    Input {
        /// The input or its file.
        path: PathBuf,
        /// What is wrong: the format's error (downcast it to learn its offset), or what the
        /// operating system said.
        source: BoxError,
    },
    /// An input could not be read, with an error that names the file itself (a file that the
    /// caller's `Members` opened, a folder that could not be listed).
    #[error(transparent)]
    Read(BoxError),
    /// The filter kept none of the inputs' threads ([`Tracks::unmatched`]).
    #[error(transparent)]
    NoMatch(#[from] crate::NoMatch),
    /// The input holds no timeline.
    #[error("{}: not a timeline: {reason}", path.display())]
    NotATimeline {
        /// The input.
        path: PathBuf,
        /// Why.
        reason: &'static str,
    },
}

impl Error {
    /// [`Error::Input`]: `source` about `path`.
    pub fn input(path: impl Into<PathBuf>, source: impl Into<BoxError>) -> Error {
        Error::Input {
            path: path.into(),
            source: source.into(),
        }
    }
}

/// The numbering of the tracks of one trace: track ids, and the process ids of groups of
/// tracks that have none of their own. Every input of a trace draws from the same numbering.
#[derive(Debug, Clone, Default)]
pub struct Tracks {
    next_track: TrackId,
    next_pid: i64,
    /// The threads the converters offered to the filter ([`Timeline::keeps`]).
    seen: crate::Seen,
    /// Whether the filter kept one of them.
    kept: bool,
}

impl Tracks {
    /// A numbering from the start.
    pub fn new() -> Tracks {
        Tracks::default()
    }

    /// A new track id.
    pub fn track_id(&mut self) -> TrackId {
        self.next_track += 1;
        self.next_track
    }

    /// A new process id for a group of tracks that has none of its own: counted down from
    /// 2^31 - 1, clear of the process ids that operating systems give (Linux's stay below
    /// 2^22) and within the 32 bits that trace readers keep of an id.
    pub fn group_pid(&mut self) -> i64 {
        self.next_pid += 1;
        i64::from(i32::MAX) + 1 - self.next_pid
    }

    /// The track ids given so far.
    pub fn count(&self) -> u64 {
        self.next_track
    }

    /// The error of a `filter` that kept none of the threads the converters offered it
    /// ([`Timeline::keeps`]), naming those they have; `None` when it kept one, or keeps
    /// everything. A trace whose filter matches nothing is an error, not an empty trace.
    pub fn unmatched(&self, filter: &Filter) -> Option<crate::NoMatch> {
        let selection = filter.selection();
        (!self.kept && !selection.keeps_all()).then(|| self.seen.no_match(&selection))
    }
}

/// What a converter writes to: the sink its events go to, the filter of what it keeps, and the
/// numbering of the trace's tracks.
pub struct Timeline<'a> {
    /// Where the events go.
    pub sink: &'a mut dyn Sink,
    /// What to keep.
    pub filter: &'a Filter,
    /// The numbering of the trace's tracks.
    pub tracks: &'a mut Tracks,
}

impl std::fmt::Debug for Timeline<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline")
            .field("filter", &self.filter)
            .field("tracks", &self.tracks)
            .finish_non_exhaustive()
    }
}

impl<'a> Timeline<'a> {
    /// A converter's view of a trace being written.
    pub fn new(sink: &'a mut dyn Sink, filter: &'a Filter, tracks: &'a mut Tracks) -> Self {
        Timeline {
            sink,
            filter,
            tracks,
        }
    }

    /// Whether the filter keeps the thread of this rank, id and name (any may be unknown),
    /// which is noted, so that a filter that keeps no thread can say which the inputs have
    /// ([`Tracks::unmatched`]). Converters ask this once per thread.
    pub fn keeps(&mut self, rank: Option<u64>, thread: Option<u64>, name: Option<&str>) -> bool {
        let keeps = self.filter.keeps_rank(rank) && self.filter.keeps_thread(thread, name);
        self.tracks.seen.add(rank, None, thread, name);
        self.tracks.kept |= keeps;
        keeps
    }

    /// Opens a new track below `parent` (at the top without one), counting it in `summary`.
    pub fn open_child(
        &mut self,
        parent: Option<TrackId>,
        name: &str,
        kind: TrackKind,
        order: i32,
        summary: &mut Summary,
    ) -> Result<TrackId, Error> {
        let id = self.tracks.track_id();
        self.sink
            .open(&Track {
                id,
                parent,
                name,
                kind,
                order,
            })
            .map_err(Error::Write)?;
        summary.tracks += 1;
        Ok(id)
    }

    /// Declares that no event follows on `track`.
    pub fn close(&mut self, track: TrackId) -> Result<(), Error> {
        self.sink.close(track).map_err(Error::Write)
    }

    /// Opens a slice track named `label` under the group track of `rank` (opened on first use
    /// and kept in `groups`, which the caller closes at the end), counting the tracks opened in
    /// `summary`: the layout of sampled timelines, one track per thread grouped by rank.
    pub fn open_rank_track(
        &mut self,
        groups: &mut BTreeMap<u64, TrackId>,
        summary: &mut Summary,
        rank: u64,
        label: &str,
        order: i32,
    ) -> Result<TrackId, Error> {
        let group = match groups.get(&rank) {
            Some(&g) => g,
            None => {
                let pid = self.tracks.group_pid();
                let name = format!("rank {rank}");
                let kind = TrackKind::Group { pid };
                let order = rank.min(i32::MAX as u64) as i32;
                let id = self.open_child(None, &name, kind, order, summary)?;
                groups.insert(rank, id);
                id
            }
        };
        self.open_child(Some(group), label, TrackKind::Slices, order, summary)
    }
}
