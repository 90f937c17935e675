//! `info`: one counting pass per file, summed over a session.

use std::path::{Path, PathBuf};

use profcodec_common::inspect::{Error, Info, Source};
use serde_json::{Map, Value, json};

use super::{container_name, each_named_file, invalid};
use crate::session::{template_files, template_of};
use crate::{Container, Header, PerlString, ProcessId, Reader, Summary, check};

/// What `info` adds up over the files of an input.
#[derive(Default)]
struct Totals {
    files: u64,
    processes: Vec<ProcessId>,
    summary: Summary,
    program: Option<String>,
    header: Header,
    container: Option<Container>,
    open_files: u64,
}

impl Totals {
    fn add(&mut self, summary: Summary) {
        let s = &mut self.summary;
        s.traces += summary.traces;
        s.samples += summary.samples;
        s.frames += summary.frames;
        s.total_weight += summary.total_weight;
        s.eval_sources += summary.eval_sources;
        s.metadata_records += summary.metadata_records;
        s.file_ended = summary.file_ended;
        s.stream_ended = summary.stream_ended;
        s.warnings.extend(summary.warnings);
    }
}

/// The main program of a file: the file of the outermost frame of its first sample that ends in
/// a main frame.
fn program_of(summary: &Summary) -> Option<String> {
    summary.program.as_ref().map(PerlString::to_string)
}

fn info_details(totals: &Totals, session: bool) -> Map<String, Value> {
    let mut d = Map::new();
    let s = &totals.summary;
    let h = &totals.header;
    if let Some(program) = &totals.program {
        d.insert("program".into(), json!(program));
    }
    if session {
        d.insert("processes".into(), json!(totals.processes.len()));
        d.insert("files".into(), json!(totals.files));
    }
    d.insert("samples".into(), json!(s.samples));
    if let Some(tick) = h.tick_duration_us {
        // Each sample's weight is the timer ticks since the previous one.
        let seconds = s.total_weight as f64 * f64::from(tick) / 1e6;
        d.insert("sampled_time_s".into(), json!(seconds));
        d.insert("tick_duration_us".into(), json!(tick));
    }
    d.insert("total_weight_ticks".into(), json!(s.total_weight));
    d.insert("frames".into(), json!(s.frames));
    d.insert("traces".into(), json!(s.traces));
    d.insert("eval_sources".into(), json!(s.eval_sources));
    if let Some(v) = h.perl_version {
        d.insert("perl_version".into(), json!(v.to_string()));
    }
    if let Some(depth) = h.stack_depth {
        d.insert("stack_depth".into(), json!(depth));
    }
    if let Some(c) = totals.container {
        d.insert("container".into(), json!(container_name(c)));
    }
    if !session && let Some(g) = h.genealogy {
        d.insert("process_id".into(), json!(g.id.to_string()));
        d.insert("ordinal".into(), json!(g.ordinal));
        if !g.parent_id.is_zero() {
            d.insert("parent_id".into(), json!(g.parent_id.to_string()));
            d.insert("parent_ordinal".into(), json!(g.parent_ordinal));
        }
    }
    if session {
        d.insert("open_files".into(), json!(totals.open_files));
    } else {
        d.insert("file_ended".into(), json!(s.file_ended));
        d.insert("stream_ended".into(), json!(s.stream_ended));
    }
    if !h.metadata.is_empty() {
        d.insert("header_metadata".into(), json!(h.metadata.len()));
    }
    if !s.warnings.is_empty() {
        d.insert(
            "warnings".into(),
            json!(
                s.warnings
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
            ),
        );
    }
    d
}

/// The session a single file belongs to, from the names of its siblings alone (no file opened):
/// `(template, files, processes)`.
fn siblings(path: &Path) -> Option<(PathBuf, usize, usize)> {
    let template = template_of(path)?;
    let files = template_files(&template).ok()?;
    let mut ids: Vec<&str> = files
        .iter()
        .filter_map(|f| {
            let name = f.file_name()?.to_str()?;
            let name = name.strip_suffix('_').unwrap_or(name);
            name.get(name.len().checked_sub(8 + 1 + 48)?..name.len() - 9)
        })
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Some((template, files.len(), ids.len()))
}

pub(super) fn info(input: &Source<'_>) -> Result<Info, Error> {
    let mut totals = Totals::default();
    let mut is_session = false;
    each_named_file(input, |place, bytes| {
        // One counting pass: the header, the container and the summary.
        let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
        let mut summary = Summary::default();
        check(&mut reader, &mut summary).map_err(invalid)?;
        let (header, container) = (reader.header().clone(), reader.container());
        if let Some((process, path)) = place {
            is_session = true;
            if totals.processes.last() != Some(&process.id) {
                totals.processes.push(process.id);
            }
            if path.to_string_lossy().ends_with('_') {
                totals.open_files += 1;
            }
        }
        if totals.files == 0 {
            totals.header = header;
            totals.container = Some(container);
        } else if totals.container != Some(container) {
            totals.container = None;
        }
        if totals.program.is_none() {
            totals.program = program_of(&summary);
        }
        totals.files += 1;
        totals.add(summary);
        Ok(())
    })?;
    let mut details = info_details(&totals, is_session);
    if !is_session && let Some((template, files, procs)) = siblings(input.path) {
        details.insert(
            "session_template".into(),
            json!(template.display().to_string()),
        );
        details.insert("session_files".into(), json!(files));
        details.insert("session_processes".into(), json!(procs));
    }
    Ok(Info::new("1", details))
}
