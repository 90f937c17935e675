//! `info`: the summary of a profile, a trace or a whole measurement folder.

use std::collections::HashSet;

use profcodec_common::inspect::{Error, Info, Source};
use serde_json::{Map, Value, json};

use super::{file_name, folder, invalid, invalid_in, is_trace, open_member};
use crate::{MeasurementFolder, TraceView, V4View, Version};

/// Id-tuple kinds hpcrun uses (id-tuple.h).
const KIND_RANK: u16 = 2;
const KIND_THREAD: u16 = 3;

pub(super) fn info(input: &Source<'_>) -> Result<Info, Error> {
    if let Some(folder) = folder(input) {
        return folder_info(input, &folder?);
    }
    let data = input.bytes;
    if is_trace(data) {
        let view = TraceView::parse(data).map_err(invalid)?;
        return Ok(Info::new(
            view.version.as_str(),
            trace_details(&summarize_trace(&view)),
        ));
    }
    let s = summarize_profile(data).map_err(invalid)?;
    Ok(Info::new(
        s.version.map_or("?", Version::as_str),
        profile_details(&s),
    ))
}

/// What `info` says about one profile.
#[derive(Debug, Default)]
struct ProfileSummary {
    version: Option<Version>,
    program: Option<String>,
    rank: Option<u64>,
    thread: Option<u64>,
    id_tuple: Option<String>,
    metrics: Vec<String>,
    header_pairs: usize,
    epochs: Option<usize>,
    load_modules: usize,
    cct_nodes: usize,
    values: u64,
    contexts_with_values: Option<usize>,
}

fn header_number(header: &[crate::NvPair], name: &str) -> Option<u64> {
    header
        .iter()
        .find(|p| p.name == *name)
        .and_then(|p| p.value.to_string_lossy().trim().parse().ok())
}

fn summarize_profile(data: &[u8]) -> Result<ProfileSummary, crate::Error> {
    let program = |header: &[crate::NvPair]| {
        header
            .iter()
            .find(|p| p.name == "program-name")
            .map(|p| p.value.to_string())
    };
    if crate::detect_version(data)? == Version::V0400B {
        let view = V4View::parse_prefix(data)?;
        let tuple = view.id_tuple.iter().map(|r| crate::IdTupleEntry {
            kind: r.kind.get(),
            physical: r.physical.get(),
            logical: r.logical.get(),
        });
        let named = crate::name_id_tuple(&view.dictionary, tuple);
        let logical_of = |kind: u16| {
            named
                .iter()
                .find(|(id, _)| id.kind_id() == kind)
                .map(|(id, _)| id.logical)
        };
        // A summary line: the first entries, then how many more (a hostile tuple has 65,535).
        const SHOWN: usize = 8;
        let mut id_tuple = named
            .iter()
            .take(SHOWN)
            .map(|(id, name)| match name {
                Some(name) => format!("{name} {}", id.logical),
                None => format!("{} {}", id.kind_id(), id.logical),
            })
            .collect::<Vec<_>>()
            .join(", ");
        if named.len() > SHOWN {
            id_tuple.push_str(&format!(", ... ({} entries)", named.len()));
        }
        return Ok(ProfileSummary {
            version: Some(Version::V0400B),
            program: program(&view.header),
            rank: logical_of(KIND_RANK).or_else(|| header_number(&view.header, "mpi-rank")),
            thread: logical_of(KIND_THREAD).or_else(|| header_number(&view.header, "thread-id")),
            id_tuple: Some(id_tuple),
            metrics: view.metrics.iter().map(|m| m.name.to_string()).collect(),
            header_pairs: view.header.len(),
            epochs: None,
            load_modules: view.loadmap.len(),
            cct_nodes: view.cct.len(),
            values: view.values.len() as u64,
            contexts_with_values: Some(view.contexts.len().saturating_sub(1)),
        });
    }
    let (m, _) = crate::read_measurement_prefix(data)?;
    let sum = |f: fn(&crate::Epoch) -> usize| m.epochs.iter().map(f).sum::<usize>();
    let mut seen = HashSet::new();
    let metrics = m
        .epochs
        .iter()
        .flat_map(|e| &e.metrics)
        .map(|d| d.name.to_string())
        .filter(|n| seen.insert(n.clone()))
        .collect();
    Ok(ProfileSummary {
        version: Some(m.version),
        program: program(&m.header),
        rank: header_number(&m.header, "mpi-rank"),
        thread: header_number(&m.header, "thread-id"),
        id_tuple: None,
        metrics,
        header_pairs: m.header.len(),
        epochs: Some(m.epochs.len()),
        load_modules: sum(|e| e.loadmap.len()),
        cct_nodes: sum(|e| e.cct.len()),
        values: m
            .epochs
            .iter()
            .map(|e| e.values.iter().filter(|&&v| v != 0).count() as u64)
            .sum(),
        contexts_with_values: None,
    })
}

/// What `info` says about one trace.
#[derive(Debug, Default)]
struct TraceSummary {
    records: u64,
    data_centric: bool,
    flags: u64,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
}

fn summarize_trace(view: &TraceView<'_>) -> TraceSummary {
    // hpcrun writes times in order, but a trace with `trace-disorder` need not be: the span is
    // the least and greatest time.
    let (mut start, mut end) = (None::<u64>, None::<u64>);
    for i in 0..view.len() {
        if let Some(r) = view.get(i) {
            start = Some(start.map_or(r.time, |s| s.min(r.time)));
            end = Some(end.map_or(r.time, |e| e.max(r.time)));
        }
    }
    TraceSummary {
        records: view.len() as u64,
        data_centric: matches!(view.records, crate::TraceRecords::DataCentric(_)),
        flags: view.flags,
        start_ns: start,
        end_ns: end,
    }
}

fn insert_span(d: &mut Map<String, Value>, start: Option<u64>, end: Option<u64>) {
    if let (Some(s), Some(e)) = (start, end) {
        d.insert("duration_s".into(), json!(e.saturating_sub(s) as f64 / 1e9));
        d.insert("start_ns".into(), json!(s));
        d.insert("end_ns".into(), json!(e));
    }
}

fn profile_details(s: &ProfileSummary) -> Map<String, Value> {
    let mut d = Map::new();
    if let Some(p) = &s.program {
        d.insert("program".into(), json!(p));
    }
    if let Some(r) = s.rank {
        d.insert("rank".into(), json!(r));
    }
    if let Some(t) = s.thread {
        d.insert("thread".into(), json!(t));
    }
    d.insert("metrics".into(), json!(s.metrics));
    if let Some(t) = &s.id_tuple {
        d.insert("id_tuple".into(), json!(t));
    }
    d.insert("cct_nodes".into(), json!(s.cct_nodes));
    d.insert("values".into(), json!(s.values));
    if let Some(c) = s.contexts_with_values {
        d.insert("contexts_with_values".into(), json!(c));
    }
    d.insert("load_modules".into(), json!(s.load_modules));
    if let Some(e) = s.epochs {
        d.insert("epochs".into(), json!(e));
    }
    d.insert("header_pairs".into(), json!(s.header_pairs));
    d
}

fn trace_details(t: &TraceSummary) -> Map<String, Value> {
    let mut d = Map::new();
    insert_span(&mut d, t.start_ns, t.end_ns);
    d.insert("records".into(), json!(t.records));
    d.insert("data_centric".into(), json!(t.data_centric));
    d.insert("flags".into(), json!(t.flags));
    d
}

/// One summary of a whole folder: the program, the time span over every trace, the threads and
/// ranks, the metrics (each name once, in order of first appearance), totals.
fn folder_info(input: &Source<'_>, folder: &MeasurementFolder) -> Result<Info, Error> {
    let mut version = None;
    let mut program = None;
    let mut metrics = Vec::new();
    let mut seen_metrics = HashSet::new();
    let mut ranks = HashSet::new();
    let (mut profiles, mut traces) = (0u64, 0u64);
    let (mut nodes, mut values, mut records) = (0u64, 0u64, 0u64);
    let (mut start, mut end) = (None::<u64>, None::<u64>);
    for path in folder.files() {
        let member = open_member(input, path)?;
        let data = (*member).as_ref();
        // An error names the file (its name: the folder is the input).
        let name = file_name(path);
        let named = |e: crate::Error| invalid_in(&name, e);
        if is_trace(data) {
            let view = TraceView::parse(data).map_err(named)?;
            let t = summarize_trace(&view);
            traces += 1;
            records += t.records;
            start = t
                .start_ns
                .map(|s| start.map_or(s, |x: u64| x.min(s)))
                .or(start);
            end = t.end_ns.map(|s| end.map_or(s, |x: u64| x.max(s))).or(end);
            continue;
        }
        let s = summarize_profile(data).map_err(named)?;
        profiles += 1;
        version = version.or(s.version);
        program = program.or(s.program);
        if let Some(r) = s.rank {
            ranks.insert(r);
        }
        for m in s.metrics {
            if seen_metrics.insert(m.clone()) {
                metrics.push(m);
            }
        }
        nodes += s.cct_nodes as u64;
        values += s.values;
    }
    let mut d = Map::new();
    if let Some(p) = program {
        d.insert("program".into(), json!(p));
    }
    insert_span(&mut d, start, end);
    d.insert("threads".into(), json!(folder.threads().len()));
    d.insert("ranks".into(), json!(ranks.len()));
    d.insert("metrics".into(), json!(metrics));
    d.insert("profiles".into(), json!(profiles));
    d.insert("traces".into(), json!(traces));
    d.insert("cct_nodes".into(), json!(nodes));
    d.insert("values".into(), json!(values));
    d.insert("trace_records".into(), json!(records));
    Ok(Info::new(version.map_or("?", Version::as_str), d))
}
