//! An HPCToolkit database's trace.db: one track per trace line, grouped by rank, its samples as
//! nested slices ([`crate::sampled`]), frames named from meta.db through the profile model.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::Path;

use profcodec_hpctoolkit::profile::ProfileOptions;
use profcodec_hpctoolkit::read::{FileHead, TraceReader};
use profcodec_hpctoolkit::{Database, FileKind, ProfileDb};

use crate::sampled::{CallPaths, SampledTrack};
use crate::sink::Sink;
use crate::{Error, Summary, TimelineWriter};

/// hpcprof's identifier kinds (meta.db's `DEFAULT_ID_NAMES` order).
const RANK: u8 = 2;
const THREAD: u8 = 3;

/// The longest track label (bytes) spelled from an identifier tuple.
const LABEL_CAP: usize = 256;

pub(crate) fn convert<W: Write>(w: &mut TimelineWriter<W>, dir: &Path) -> Result<Summary, Error> {
    let hpc = |source| Error::Hpctoolkit {
        path: dir.to_owned(),
        source,
    };
    let open = |kind: FileKind| {
        let path = dir.join(kind.file_name());
        File::open(&path).map_err(|source| Error::Read { path, source })
    };
    let meta =
        std::fs::read(dir.join(FileKind::Meta.file_name())).map_err(|source| Error::Read {
            path: dir.join(FileKind::Meta.file_name()),
            source,
        })?;
    if !dir.join(FileKind::Trace.file_name()).is_file() {
        return Err(Error::NotATimeline {
            path: dir.to_owned(),
            reason: "the database has no trace.db (hpcrun measured without -t)",
        });
    }
    let mut traces = TraceReader::new(open(FileKind::Trace)?).map_err(hpc)?;
    // The context tree as model nodes, without reading any value.
    let db = Database::from_parts(meta, None, None, None).map_err(hpc)?;
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
        Ok(mut f) => Some(FileHead::read(FileKind::Profile, &mut f).map_err(hpc)?),
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
        if !w.filter.keeps_rank(rank) || !w.filter.keeps_thread(thread, None) {
            continue;
        }
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
        let track = w.open_rank_track(
            &mut groups,
            &mut summary,
            rank.unwrap_or(0),
            &label,
            index.min(i32::MAX as u32) as i32,
        )?;
        let mut state = SampledTrack::new(track, &w.filter);
        let mut line = traces.line(index).map_err(hpc)?;
        let mut last = (u32::MAX, None);
        while let Some(chunk) = line.next_chunk().map_err(hpc)? {
            for e in chunk {
                let ctx = e.ctx_id();
                if ctx != last.0 {
                    last = (ctx, if ctx == 0 { None } else { level_of(ctx) });
                }
                state
                    .sample(&mut w.sink, &mut paths, &profile, e.timestamp(), last.1)
                    .map_err(Error::Write)?;
            }
        }
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
