//! hpcrun `.hpctrace` files: one track per thread, grouped by rank, samples as nested slices
//! ([`crate::sampled`]), frames named from the thread's `.hpcrun` through the profile model.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Write};
use std::path::Path;

use profcodec_hpcrun::{MeasurementFolder, ProfileConverter, ThreadFiles, TraceStream};
use profcodec_profile::{IdKind, NodeId};

use crate::sampled::{CallPaths, SampledTrack};
use crate::sink::Sink;
use crate::{Error, Summary, TimelineWriter};

pub(crate) fn convert<W: Write>(w: &mut TimelineWriter<W>, path: &Path) -> Result<Summary, Error> {
    let threads: Vec<ThreadFiles> = if path.is_dir() {
        MeasurementFolder::open(path)?.threads().to_vec()
    } else {
        // One trace: its thread's files, found by listing the folder it is in.
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let file = path.file_name();
        MeasurementFolder::open(dir)?
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
    let mut summary = Summary::default();
    let mut groups: BTreeMap<u64, u64> = BTreeMap::new();
    for (order, thread) in threads.iter().enumerate() {
        let Some(trace_path) = &thread.trace else {
            continue;
        };
        let hpcrun = |source| Error::Hpcrun {
            path: trace_path.clone(),
            source,
        };
        // The frames: the thread's .hpcrun, when there is one (without it every sample is a
        // frame of its own node id).
        let mut converter = ProfileConverter::new();
        let (context, nodes, cct_ids) = match thread.read_profile() {
            Some(m) => {
                let m = m?;
                let (context, nodes) =
                    converter
                        .add_with_nodes(&m, Some(thread))
                        .map_err(|source| Error::Model {
                            path: trace_path.clone(),
                            source,
                        })?;
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
        let profile = converter.finish();
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
        if !w.filter.keeps_rank(rank) || !w.filter.keeps_thread(tid, None) {
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

        let track = w.open_rank_track(
            &mut groups,
            &mut summary,
            rank.unwrap_or(0),
            &label,
            order.min(i32::MAX as usize) as i32,
        )?;

        let file = File::open(trace_path).map_err(|source| Error::Read {
            path: trace_path.clone(),
            source,
        })?;
        let mut stream = TraceStream::new(BufReader::new(file)).map_err(hpcrun)?;
        let mut state = SampledTrack::new(track, &w.filter);
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
                    .sample(&mut w.sink, &mut paths, &profile, last_time, last.1)
                    .map_err(Error::Write)?;
            }
        }
        let end = context
            .and_then(|(_, end)| end)
            .unwrap_or(last_time)
            .max(last_time);
        state
            .finish(&mut w.sink, &mut paths, &profile, end)
            .map_err(Error::Write)?;
        w.sink.close(track).map_err(Error::Write)?;
        summary += state.summary;
    }
    for (_, group) in groups {
        w.sink.close(group).map_err(Error::Write)?;
    }
    Ok(summary)
}
