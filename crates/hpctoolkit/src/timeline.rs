//! An HPCToolkit database's trace.db as a timeline (the format-neutral model of
//! `profcodec_profile::timeline`, which `profcodec-timeline` writes as Perfetto or Chrome
//! traces).
//!
//! - One track per trace line, named by its profile's identifier tuple as HPCToolkit's
//!   `hpctesttool` spells it (`NODE 0 / RANK 3 / THREAD 1`; `profile N` without one), grouped
//!   by rank (`rank N` tracks; a profile without a RANK identifier is rank 0), in thread id
//!   order within a rank (lines without a THREAD identifier, GPU streams, after the threads).
//! - The sampled call paths become nested slices the way hpcviewer's trace view shows depth
//!   ([`SampledTrack`]): each sample lasts until the next one (the last until the database's
//!   `maxTimestamp`); its levels are the procedure frames of the sample's calling context
//!   (called and inlined functions, named from meta.db; loops, lines and instructions belong
//!   to their function); consecutive samples that share a call-path prefix extend the same
//!   slices. Samples of ctxId 0 (the thread was not running) are gaps. The innermost slice
//!   begun at a sample carries the sample's call path (an interned callstack in Perfetto).
//!
//! Filters: a line is kept by the logical id of its profile's THREAD identifier (GPU streams
//! have none) and RANK identifier. Times are nanoseconds since the epoch, as `profcodec dump`
//! prints them.
//!
//! Memory is bounded by the lines and distinct frames, not by the trace: trace.db lines are
//! decoded in chunks ([`TraceReader`]), meta.db is read whole and profile.db only up to its
//! identifier tuples ([`FileHead`]).

use std::collections::BTreeMap;
use std::io::Cursor;

use profcodec_common::Source;
use profcodec_profile::timeline::{CallPaths, Error, SampledTrack, Summary, Timeline};

use crate::profile::ProfileOptions;
use crate::read::{FileHead, TraceReader};
use crate::{Database, FileKind, ProfileDb};

/// hpcprof's identifier kinds (meta.db's `DEFAULT_ID_NAMES` order).
const RANK: u8 = 2;
const THREAD: u8 = 3;

/// The longest track label (bytes) spelled from an identifier tuple.
const LABEL_CAP: usize = 256;

/// Writes the trace of the database folder `input` (its `meta.db`, `trace.db` and, for the
/// identifier tuples, `profile.db`, each opened through `input.members`) to `timeline`.
pub fn write_timeline(input: &Source<'_>, timeline: &mut Timeline<'_>) -> Result<Summary, Error> {
    let dir = input.path;
    let hpc = |source: crate::Error| Error::input(dir, source);
    let open = |kind: FileKind| {
        input
            .members
            .open(&dir.join(kind.file_name()))
            .map_err(|e| Error::Read(e.into()))
    };
    let meta = open(FileKind::Meta)?;
    if !dir.join(FileKind::Trace.file_name()).is_file() {
        return Err(Error::NotATimeline {
            path: dir.to_owned(),
            reason: "the database has no trace.db (hpcrun measured without -t)",
        });
    }
    // The trace is mapped (or read) by the caller and decoded line by line, chunk by chunk.
    let trace = open(FileKind::Trace)?;
    let mut traces = TraceReader::new(Cursor::new((*trace).as_ref())).map_err(hpc)?;
    // The context tree as model nodes, without reading any value.
    let db = Database::from_parts((*meta).as_ref(), None, None, None).map_err(hpc)?;
    let (profile, nodes) = db
        .to_profile_with_nodes(&ProfileOptions::new())
        .map_err(hpc)?;
    let mut paths = CallPaths::new(&profile);
    // ctxId -> procedure frame, sorted by ctxId for the samples' lookups.
    let levels: Vec<(u32, u32)> = nodes
        .iter()
        .filter_map(|(ctx, node)| Some((ctx, paths.level(node)?)))
        .collect();
    // hpcprof numbers contexts densely: then a table indexed by ctxId answers without the
    // searches' cache misses (a context change happens every few samples). Sparse ids (a
    // hand-made meta.db) keep the search, so that the table never outgrows meta.db.
    let max_ctx = levels.last().map_or(0, |e| e.0 as usize);
    let dense: Option<Vec<u32>> = (max_ctx <= 4 * levels.len() + 4096).then(|| {
        let mut table = vec![u32::MAX; max_ctx + 1];
        for &(ctx, level) in &levels {
            table[ctx as usize] = level;
        }
        table
    });
    let level_of = |ctx: u32| -> Option<u32> {
        match &dense {
            Some(table) => table.get(ctx as usize).copied().filter(|&l| l != u32::MAX),
            None => levels
                .binary_search_by_key(&ctx, |e| e.0)
                .ok()
                .map(|i| levels[i].1),
        }
    };

    let profile_head = match open(FileKind::Profile) {
        Ok(bytes) => {
            let mut bytes = Cursor::new((*bytes).as_ref());
            Some(FileHead::read(FileKind::Profile, &mut bytes).map_err(hpc)?)
        }
        Err(_) => None,
    };
    let profiles = profile_head
        .as_ref()
        .map(ProfileDb::from_head)
        .transpose()
        .map_err(hpc)?;

    let view = traces.view();
    let (count, end) = (view.trace_count(), view.max_timestamp());
    let mut summary = Summary::default();
    let mut groups: BTreeMap<u64, u64> = BTreeMap::new();
    // The lines kept, in the order they are shown: by rank, then thread id (lines without one,
    // GPU streams, after the threads), then as trace.db has them.
    let mut lines = Vec::new();
    for index in 0..count {
        let prof_index = traces.view().trace_header(index).map_err(hpc)?.prof_index;
        let tuple = match &profiles {
            Some(p) => p.info(prof_index).map_err(hpc)?.1,
            None => None,
        };
        let find = |kind: u8| {
            tuple.and_then(|t| {
                t.ids
                    .iter()
                    .find(|id| id.kind == kind)
                    .map(|id| u64::from(id.logical_id.get()))
            })
        };
        let (rank, thread) = (find(RANK), find(THREAD));
        if timeline.keeps(rank, thread, None) {
            lines.push((rank.unwrap_or(0), thread.is_none(), thread, index));
        }
    }
    lines.sort_unstable();
    for (order, &(rank, _, _, index)) in lines.iter().enumerate() {
        let prof_index = traces.view().trace_header(index).map_err(hpc)?.prof_index;
        let tuple = match &profiles {
            Some(p) => p.info(prof_index).map_err(hpc)?.1,
            None => None,
        };
        let mut label = match tuple {
            Some(t) if !t.ids.is_empty() => t.to_string(),
            _ => format!("profile {prof_index}"),
        };
        // Lines may share a profile (nothing forbids it): a tuple of up to 65,535 identifiers
        // named for each of them would make the output quadratic, so a label is capped.
        if label.len() > LABEL_CAP {
            let cut = (0..=LABEL_CAP)
                .rev()
                .find(|&i| label.is_char_boundary(i))
                .unwrap_or(0);
            label.truncate(cut);
            label.push('…');
        }
        let track = timeline.open_rank_track(
            &mut groups,
            &mut summary,
            rank,
            &label,
            i32::try_from(order).unwrap_or(i32::MAX),
        )?;
        let mut state = SampledTrack::new(track, timeline.filter);
        let mut line = traces.line(index).map_err(hpc)?;
        let mut last = (u32::MAX, None);
        while let Some(chunk) = line.next_chunk().map_err(hpc)? {
            for e in chunk {
                let ctx = e.ctx_id();
                if ctx != last.0 {
                    last = (ctx, if ctx == 0 { None } else { level_of(ctx) });
                }
                state
                    .sample(
                        &mut *timeline.sink,
                        &mut paths,
                        &profile,
                        e.timestamp(),
                        last.1,
                    )
                    .map_err(Error::Write)?;
            }
        }
        state
            .finish(&mut *timeline.sink, &mut paths, &profile, end)
            .map_err(Error::Write)?;
        timeline.close(track)?;
        summary += state.summary();
    }
    for (_, group) in groups {
        timeline.close(group)?;
    }
    Ok(summary)
}
