//! The timelines' activity: per track, when its top-level slices ran, gathered from the
//! timeline's events as they stream to a trace writer ([`ActivitySink`] sits in front of it).
//! Memory is bounded by the tracks kept and their buckets, never by the events.

use std::collections::HashMap;
use std::io;

use profcodec_profile::timeline::{Arg, CallPath, Location, Name, Sink, Track, TrackId};

/// The most buckets of a track being written: a track's buckets double in width whenever its
/// slices reach past them.
const OPEN_BUCKETS: usize = 512;
/// The most buckets kept of a finished track (the page draws 100 columns).
const KEPT_BUCKETS: usize = 128;
/// The most tracks kept by default: the busiest.
const DEFAULT_TRACKS: usize = 64;

/// Busy time in buckets of equal width from an origin, coarsened as the track grows.
#[derive(Debug, Clone)]
struct Buckets {
    origin: u64,
    width: u64,
    busy: Vec<u64>,
}

impl Buckets {
    fn new(origin: u64) -> Buckets {
        Buckets {
            origin,
            width: 1,
            busy: Vec::new(),
        }
    }

    /// Halves the resolution until `end` falls within `max` buckets.
    fn fit(&mut self, end: u64, max: usize) {
        while end.saturating_sub(self.origin) > self.width.saturating_mul(max as u64) {
            self.busy = self.busy.chunks(2).map(|pair| pair.iter().sum()).collect();
            self.width = self.width.saturating_mul(2);
        }
    }

    /// Counts `[start, end)` as busy.
    fn add(&mut self, start: u64, end: u64) {
        // Per track, timestamps never decrease, so nothing starts before the origin; a
        // converter that breaks that rule is clamped rather than trusted.
        let start = start.max(self.origin);
        if end <= start {
            return;
        }
        self.fit(end, OPEN_BUCKETS);
        let (s, e, w) = (start - self.origin, end - self.origin, self.width);
        let (first, last) = ((s / w) as usize, ((e - 1) / w) as usize);
        if self.busy.len() <= last {
            self.busy.resize(last + 1, 0);
        }
        if first == last {
            self.busy[first] += e - s;
            return;
        }
        self.busy[first] += (first as u64 + 1) * w - s;
        for b in &mut self.busy[first + 1..last] {
            *b += w;
        }
        self.busy[last] += e - last as u64 * w;
    }
}

/// One track as it is written.
#[derive(Debug, Clone)]
struct Open {
    /// Open slices, and the start of the outermost one.
    depth: u32,
    begun: u64,
    stats: TrackActivity,
}

impl Open {
    /// Ends `count` open slices at `ts`; the end of the outermost counts its time as busy.
    fn end(&mut self, ts: u64, count: usize) {
        if self.depth == 0 {
            return;
        }
        let ended = u32::try_from(count).unwrap_or(u32::MAX).min(self.depth);
        self.depth -= ended;
        if self.depth == 0 {
            self.stats.busy += ts.saturating_sub(self.begun);
            if let Some(b) = &mut self.stats.buckets {
                b.add(self.begun, ts);
            }
        }
    }
}

/// What the page shows of one track.
#[derive(Debug, Clone)]
pub(crate) struct TrackActivity {
    /// The track's id: tracks are shown in the order the trace declares them.
    pub(crate) id: TrackId,
    /// Its name, below its parents' (`rank 0 / thread 3`).
    pub(crate) label: String,
    /// Its own name (`thread 3`).
    pub(crate) name: String,
    pub(crate) slices: u64,
    pub(crate) instants: u64,
    /// The time covered by its top-level slices (ns).
    pub(crate) busy: u64,
    pub(crate) max_depth: u32,
    /// Its first and last event (ns, on the trace's clock).
    pub(crate) first: Option<u64>,
    pub(crate) last: u64,
    buckets: Option<Buckets>,
}

impl TrackActivity {
    /// The busy time of this track in each of `columns` equal columns over `[start, end)`, as
    /// a share of the column (0 to 1).
    pub(crate) fn shares(&self, start: u64, end: u64, columns: usize) -> Vec<f64> {
        let mut out = vec![0.0f64; columns];
        let Some(b) = &self.buckets else {
            return out;
        };
        let span = end.saturating_sub(start).max(1) as f64;
        let column = span / columns as f64;
        for (i, &busy) in b.busy.iter().enumerate() {
            if busy == 0 {
                continue;
            }
            // The bucket's place in columns, and its busy time spread evenly over it.
            let from = (b.origin + i as u64 * b.width).saturating_sub(start) as f64 / column;
            let to = from + b.width as f64 / column;
            let density = busy as f64 / (to - from);
            let mut c = from.floor().max(0.0) as usize;
            while c < columns && (c as f64) < to {
                let overlap = to.min(c as f64 + 1.0) - from.max(c as f64);
                if overlap > 0.0 {
                    out[c] += overlap * density / column;
                }
                c += 1;
            }
        }
        out
    }
}

/// The activity of a timeline's tracks: per track its slices, its busy time and when it was
/// busy, in buckets. Fill it through [`ActivitySink`] while a converter writes the timeline,
/// then hand it to [`Input::timelines`](crate::Input::timelines).
///
/// Only the busiest tracks are kept (64 by default, [`Activity::with_tracks`]); the others are
/// counted.
#[derive(Debug, Clone)]
pub struct Activity {
    open: HashMap<TrackId, Open>,
    pub(crate) kept: Vec<TrackActivity>,
    limit: usize,
    /// Tracks with events that were not kept, and their slices.
    pub(crate) more_tracks: u64,
    pub(crate) more_slices: u64,
    /// All tracks with events, and all slices.
    pub(crate) tracks: u64,
    pub(crate) slices: u64,
    /// The first and last event of the whole timeline (ns).
    pub(crate) start: Option<u64>,
    pub(crate) end: u64,
}

impl Default for Activity {
    fn default() -> Activity {
        Activity::with_tracks(DEFAULT_TRACKS)
    }
}

impl Activity {
    /// An empty activity keeping the 64 busiest tracks.
    pub fn new() -> Activity {
        Activity::default()
    }

    /// An empty activity keeping the `tracks` busiest tracks.
    pub fn with_tracks(tracks: usize) -> Activity {
        Activity {
            open: HashMap::new(),
            kept: Vec::new(),
            limit: tracks.max(1),
            more_tracks: 0,
            more_slices: 0,
            tracks: 0,
            slices: 0,
            start: None,
            end: 0,
        }
    }

    /// Whether no track had any event.
    pub fn is_empty(&self) -> bool {
        self.tracks == 0 && self.open.values().all(|t| t.stats.first.is_none())
    }

    /// A sink in front of `next` (a trace writer) that gathers this activity from every event
    /// on its way there.
    pub fn tee<'a>(&'a mut self, next: &'a mut dyn Sink) -> ActivitySink<'a> {
        ActivitySink {
            activity: self,
            next,
        }
    }

    /// The open track `track` with an event at `ts` noted.
    fn seen(&mut self, track: TrackId, ts: u64) -> Option<&mut Open> {
        let open = self.open.get_mut(&track)?;
        self.start = Some(self.start.map_or(ts, |s| s.min(ts)));
        self.end = self.end.max(ts);
        let stats = &mut open.stats;
        if stats.first.is_none() {
            stats.first = Some(ts);
            stats.buckets = Some(Buckets::new(ts));
        }
        stats.last = stats.last.max(ts);
        Some(open)
    }

    fn begin(&mut self, track: TrackId, ts: u64) {
        if let Some(open) = self.seen(track, ts) {
            if open.depth == 0 {
                open.begun = ts;
            }
            open.depth += 1;
            open.stats.max_depth = open.stats.max_depth.max(open.depth);
            open.stats.slices += 1;
        }
    }

    fn end(&mut self, track: TrackId, ts: u64, count: usize) {
        if let Some(open) = self.seen(track, ts) {
            open.end(ts, count);
        }
    }

    /// Ends what is still open: tracks a converter left open, as at the end of a trace.
    pub(crate) fn close_all(&mut self) {
        let mut ids: Vec<TrackId> = self.open.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            self.close(id);
        }
        self.kept.sort_by_key(|t| t.id);
    }

    fn close(&mut self, track: TrackId) {
        let Some(mut open) = self.open.remove(&track) else {
            return;
        };
        // Slices never ended last until the track's last event.
        open.end(open.stats.last, usize::MAX);
        let mut stats = open.stats;
        if stats.first.is_none() {
            return;
        }
        if let Some(b) = &mut stats.buckets {
            let end = b.origin + b.busy.len() as u64 * b.width;
            b.fit(end, KEPT_BUCKETS);
        }
        self.tracks += 1;
        self.slices += stats.slices;
        self.kept.push(stats);
        if self.kept.len() > self.limit {
            // The least busy goes (of equal ones, the later).
            let least = self
                .kept
                .iter()
                .enumerate()
                .min_by(|(_, a), (_, b)| a.busy.cmp(&b.busy).then(b.id.cmp(&a.id)))
                .map(|(i, _)| i);
            if let Some(i) = least {
                let dropped = self.kept.swap_remove(i);
                self.more_tracks += 1;
                self.more_slices += dropped.slices;
            }
        }
    }
}

/// A [`Sink`] that gathers the [`Activity`] of every event and passes it on to the next sink
/// (a trace writer): made by [`Activity::tee`].
pub struct ActivitySink<'a> {
    activity: &'a mut Activity,
    next: &'a mut dyn Sink,
}

impl std::fmt::Debug for ActivitySink<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ActivitySink")
            .field("activity", &self.activity)
            .finish_non_exhaustive()
    }
}

impl Sink for ActivitySink<'_> {
    fn open(&mut self, track: &Track<'_>) -> io::Result<()> {
        let activity = &mut *self.activity;
        let label = match track.parent.and_then(|p| activity.open.get(&p)) {
            Some(parent) => format!("{} / {}", parent.stats.label, track.name),
            None => track.name.to_owned(),
        };
        activity.open.insert(
            track.id,
            Open {
                depth: 0,
                begun: 0,
                stats: TrackActivity {
                    id: track.id,
                    label,
                    name: track.name.to_owned(),
                    slices: 0,
                    instants: 0,
                    busy: 0,
                    max_depth: 0,
                    first: None,
                    last: 0,
                    buckets: None,
                },
            },
        );
        self.next.open(track)
    }

    fn close(&mut self, track: TrackId) -> io::Result<()> {
        // A parent (a rank, a process) stays open while its children are written: its label is
        // theirs too. It is closed after them.
        self.activity.close(track);
        self.next.close(track)
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
        self.activity.begin(track, ts);
        self.next.begin(track, ts, name, location, call_path, args)
    }

    fn end(&mut self, track: TrackId, ts: u64) -> io::Result<()> {
        self.activity.end(track, ts, 1);
        self.next.end(track, ts)
    }

    fn end_several(&mut self, track: TrackId, ts: u64, count: usize) -> io::Result<()> {
        self.activity.end(track, ts, count);
        self.next.end_several(track, ts, count)
    }

    fn instant(
        &mut self,
        track: TrackId,
        ts: u64,
        name: Name<'_>,
        args: &[Arg<'_>],
    ) -> io::Result<()> {
        if let Some(open) = self.activity.seen(track, ts) {
            open.stats.instants += 1;
        }
        self.next.instant(track, ts, name, args)
    }

    fn counter(&mut self, track: TrackId, ts: u64, value: f64) -> io::Result<()> {
        self.next.counter(track, ts, value)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.next.finish()
    }
}

#[cfg(test)]
mod tests {
    use profcodec_profile::timeline::{Discard, TrackKind};

    use super::*;

    fn track(id: TrackId, parent: Option<TrackId>, name: &str) -> Track<'_> {
        Track {
            id,
            parent,
            name,
            kind: TrackKind::Slices,
            order: 0,
        }
    }

    const NAME: Name<'static> = Name { key: 0, text: "f" };

    #[test]
    fn top_level_slices_make_the_busy_time() -> io::Result<()> {
        let mut activity = Activity::new();
        let mut next = Discard;
        let mut sink = activity.tee(&mut next);
        sink.open(&track(1, None, "rank 0"))?;
        sink.open(&track(2, Some(1), "thread 3"))?;
        // [100, 200) with a child, then [300, 1100) ended with its child at once.
        sink.begin(2, 100, NAME, None, None, &[])?;
        sink.begin(2, 120, NAME, None, None, &[])?;
        sink.end(2, 150)?;
        sink.end(2, 200)?;
        sink.begin(2, 300, NAME, None, None, &[])?;
        sink.begin(2, 400, NAME, None, None, &[])?;
        sink.end_several(2, 1100, 2)?;
        sink.close(2)?;
        sink.close(1)?;
        activity.close_all();
        assert_eq!(activity.tracks, 1, "the group has no events of its own");
        let t = &activity.kept[0];
        assert_eq!(t.label, "rank 0 / thread 3");
        assert_eq!((t.slices, t.busy, t.max_depth), (4, 900, 2));
        assert_eq!((t.first, t.last), (Some(100), 1100));
        let shares = t.shares(100, 1100, 10);
        // Column 0 ([100, 200)) is busy, column 1 idle, columns 2 to 9 busy, give or take the
        // width of a kept bucket.
        assert!(shares[0] > 0.95, "{shares:?}");
        assert!(shares[1] < 0.05, "{shares:?}");
        assert!(
            shares[2..].iter().all(|s| (s - 1.0).abs() < 0.05),
            "{shares:?}"
        );
        let sum: f64 = shares.iter().sum::<f64>() * 100.0;
        assert!(
            (sum - 900.0).abs() < 1e-6,
            "every busy nanosecond is drawn: {sum}"
        );
        Ok(())
    }

    #[test]
    fn the_busiest_tracks_are_kept_in_their_order() -> io::Result<()> {
        let mut activity = Activity::with_tracks(2);
        let mut next = Discard;
        let mut sink = activity.tee(&mut next);
        for (id, busy) in [(1u64, 50u64), (2, 10), (3, 30)] {
            sink.open(&track(id, None, "t"))?;
            sink.begin(id, 1_000, NAME, None, None, &[])?;
            sink.end(id, 1_000 + busy)?;
            sink.close(id)?;
        }
        activity.close_all();
        let kept: Vec<TrackId> = activity.kept.iter().map(|t| t.id).collect();
        assert_eq!(kept, [1, 3]);
        assert_eq!((activity.more_tracks, activity.more_slices), (1, 1));
        Ok(())
    }

    #[test]
    fn buckets_stay_few_over_a_long_track() {
        let mut b = Buckets::new(0);
        let mut total = 0;
        for i in 0..10_000u64 {
            b.add(i * 1_000_000, i * 1_000_000 + 500_000);
            total += 500_000;
        }
        assert!(b.busy.len() <= OPEN_BUCKETS);
        assert_eq!(b.busy.iter().sum::<u64>(), total);
    }
}
