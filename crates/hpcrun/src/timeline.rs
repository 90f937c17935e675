//! hpcrun traces as a timeline (the format-neutral model of `profcodec_profile::timeline`,
//! which `profcodec-timeline` writes as Perfetto or Chrome traces): a measurement folder's
//! `.hpctrace` files, or one `.hpctrace` beside the `.hpcrun` of the same thread.
//!
//! - One track per thread (per `.hpctrace` file), named by its identifier tuple (`RANK 0 /
//!   THREAD 1`; the file's stem without one), grouped by rank (`rank N` tracks; a thread
//!   without a rank is rank 0), in thread id order within a rank (GPU streams, which hpcrun
//!   numbers from 500, after the threads).
//! - The samples become nested slices the way hpcviewer's trace view shows depth
//!   ([`SampledTrack`]): each sample lasts until the next one, the last until the
//!   `trace-max-time` the `.hpcrun` records; its levels are the procedure frames of the
//!   sample's calling context, named from the thread's `.hpcrun` as [`ProfileConverter`]
//!   names them (load module and offset, hpcrun's placeholders by their names; by function,
//!   file and line from the binaries with [`write_timeline_with_symbols`]); consecutive
//!   samples that share a call-path prefix extend the same slices. A sample whose context the
//!   `.hpcrun` does not list (or that the model leaves out: the primary root, "no activity")
//!   is a gap. A record out of time order (a trace written with `trace-disorder`) is shown at
//!   the time reached.
//!
//! Filters: a thread is kept by its THREAD and RANK identifiers. Times are nanoseconds since
//! the epoch, as `profcodec dump` prints them.
//!
//! Memory is bounded by the threads and distinct frames, not by the trace: each `.hpctrace` is
//! decoded in chunks ([`TraceStream`]), each `.hpcrun` is read whole.

use std::collections::BTreeMap;
use std::path::Path;

use profcodec_common::Source;
use profcodec_profile::timeline::{CallPaths, Error, SampledTrack, Summary, Timeline};
use profcodec_profile::{IdKind, NodeId};

use crate::{MeasurementFolder, ProfileConverter, ThreadFiles, TraceStream};

/// Writes the traces of `input` to `timeline`: a measurement folder's (its files opened through
/// `input.members`), or one `.hpctrace` file's (`input.bytes`; its thread's `.hpcrun` opened
/// through `input.members`).
pub fn write_timeline(input: &Source<'_>, timeline: &mut Timeline<'_>) -> Result<Summary, Error> {
    write_with(input, timeline, &mut ProfileConverter::new())
}

/// [`write_timeline`] with the frames named from the binaries, as
/// [`MeasurementFolder::to_profile_with_symbols`] names them (the binaries found through
/// `search`, then in the measurement folder and its `vdso/` and `gpubins/`), and what became of
/// each load module. Each binary is read once, whatever the number of threads.
#[cfg(feature = "symbolize")]
pub fn write_timeline_with_symbols(
    input: &Source<'_>,
    timeline: &mut Timeline<'_>,
    search: crate::symbols::SearchPath,
) -> Result<(Summary, Vec<crate::symbols::ModuleReport>), Error> {
    let mut converter = ProfileConverter::with_symbols(search);
    converter.look_in_folder(measurement_dir(input.path));
    let summary = write_with(input, timeline, &mut converter)?;
    Ok((summary, converter.module_reports()))
}

/// The measurement folder of `path`: itself, or the folder a trace file is in.
fn measurement_dir(path: &Path) -> &Path {
    if path.is_dir() {
        return path;
    }
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The timeline of `input`, each thread's frames named by `converter` (which starts empty, and
/// is left empty).
fn write_with(
    input: &Source<'_>,
    timeline: &mut Timeline<'_>,
    converter: &mut ProfileConverter,
) -> Result<Summary, Error> {
    let path = input.path;
    let folder = path.is_dir();
    let listed = |dir: &Path| MeasurementFolder::open(dir).map_err(|e| Error::Read(e.into()));
    let open = |file: &Path| input.members.open(file).map_err(|e| Error::Read(e.into()));
    let mut threads: Vec<ThreadFiles> = if folder {
        listed(path)?.threads().to_vec()
    } else {
        // One trace: its thread's files, found by listing the folder it is in.
        let file = path.file_name();
        listed(measurement_dir(path))?
            .threads()
            .iter()
            .filter(|t| t.trace.as_deref().and_then(Path::file_name) == file)
            .cloned()
            .collect()
    };
    if !threads.iter().any(|t| t.trace.is_some()) {
        return Err(Error::NotATimeline {
            path: path.to_owned(),
            reason: "no .hpctrace file (hpcrun measured without -t)",
        });
    }
    // In the order they are shown: by rank, then thread id (files without one after), as the
    // file names say.
    threads.sort_by_key(|t| (t.rank.unwrap_or(0), t.thread.is_none(), t.thread));
    let mut summary = Summary::default();
    let mut groups: BTreeMap<u64, u64> = BTreeMap::new();
    for (order, thread) in threads.iter().enumerate() {
        let Some(trace_path) = &thread.trace else {
            continue;
        };
        let hpcrun = |source: crate::Error| Error::input(trace_path, source);
        // The frames: the thread's .hpcrun, when there is one (without it every sample is a
        // frame of its own node id).
        let (context, nodes, cct_ids) = match &thread.profile {
            Some(profile_path) => {
                let bytes = open(profile_path)?;
                let m = crate::read_measurement((*bytes).as_ref())
                    .map_err(|source| Error::input(profile_path, source))?;
                drop(bytes); // decoded: the file can go before its trace is read
                let (context, nodes) = converter
                    .add_with_nodes(&m, Some(thread))
                    .map_err(|source| Error::input(trace_path, source))?;
                let mut ids: Vec<i32> = m
                    .epochs
                    .iter()
                    .flat_map(|e| e.cct.iter().map(|n| n.id))
                    .collect();
                ids.sort_unstable();
                let end = m
                    .header_value("trace-max-time")
                    .and_then(|v| v.to_string_lossy().trim().parse::<u64>().ok());
                (Some((context, end)), nodes, ids)
            }
            None => (None, Vec::new(), Vec::new()),
        };
        let profile = converter.take_profile();
        let ids = context
            .map(|(c, _)| profile.context(c).ids.clone())
            .unwrap_or_else(|| {
                [(IdKind::Rank, thread.rank), (IdKind::Thread, thread.thread)]
                    .into_iter()
                    .filter_map(|(k, v)| Some((k, v?)))
                    .collect()
            });
        let id = |kind: IdKind| ids.iter().find(|(k, _)| *k == kind).map(|&(_, v)| v);
        let (rank, tid) = (id(IdKind::Rank), id(IdKind::Thread));
        if !timeline.keeps(rank, tid, None) {
            continue;
        }
        let label = if ids.is_empty() {
            thread.stem.clone()
        } else {
            ids.iter()
                .map(|&(kind, v)| {
                    let name = match kind {
                        IdKind::Other(s) => profile.string(s).to_owned(),
                        k => k.name().unwrap_or("id").replace('_', ""),
                    };
                    format!("{} {v}", name.to_ascii_uppercase())
                })
                .collect::<Vec<_>>()
                .join(" / ")
        };
        let mut paths = CallPaths::new(&profile);
        // Trace record ids -> procedure frames; ids the .hpcrun lists but the model leaves out
        // (the primary root, "no activity") are idle, like ids it does not list.
        let levels: Vec<(i32, u32)> = nodes
            .iter()
            .filter_map(|&(cct, node): &(i32, NodeId)| Some((cct, paths.level(node)?)))
            .collect();
        let level_of = |ctx: u32| -> Option<u32> {
            // Before 04.00 hpcrun stored leaf ids negated in the profile.
            let find = |id: i32| {
                levels
                    .binary_search_by_key(&id, |e| e.0)
                    .ok()
                    .map(|i| levels[i].1)
            };
            let id = ctx as i32;
            if cct_ids.binary_search(&id).is_ok() {
                find(id)
            } else {
                find(id.wrapping_neg())
            }
        };

        let track = timeline.open_rank_track(
            &mut groups,
            &mut summary,
            rank.unwrap_or(0),
            &label,
            order.min(i32::MAX as usize) as i32,
        )?;

        // One file given: its bytes are the input's; a folder's: opened (mapped or read) by the
        // caller. Either way decoded in chunks.
        let opened = if folder {
            Some(open(trace_path)?)
        } else {
            None
        };
        let bytes: &[u8] = opened.as_deref().map_or(input.bytes, |m| m.as_ref());
        let mut stream = TraceStream::new(bytes).map_err(hpcrun)?;
        let mut state = SampledTrack::new(track, timeline.filter);
        let mut last = (u32::MAX, None);
        let mut last_time = 0;
        while let Some(chunk) = stream.next_chunk().map_err(hpcrun)? {
            for r in chunk.iter() {
                if r.ctx != last.0 {
                    last = (r.ctx, level_of(r.ctx));
                }
                // hpcrun's records are in time order unless the header says "trace-disorder";
                // a record out of order is shown at the time reached.
                last_time = last_time.max(r.time);
                state
                    .sample(&mut *timeline.sink, &mut paths, &profile, last_time, last.1)
                    .map_err(Error::Write)?;
            }
        }
        let end = context
            .and_then(|(_, end)| end)
            .unwrap_or(last_time)
            .max(last_time);
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
