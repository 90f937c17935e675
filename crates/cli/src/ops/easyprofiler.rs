//! `profcodec` CLI operations for EasyProfiler `.prof` captures (profcodec-easyprofiler).
//!
//! The JSON dump schema is documented in `crates/easyprofiler/README.md`.

use std::path::Path;

use profcodec_easyprofiler as ep;
use serde_json::{Map, Value, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated, write_json};
use profcodec::Opened;

/// The EasyProfiler codec.
pub(super) struct EasyProfiler;

fn invalid(e: ep::Error) -> OpError {
    OpError::invalid(e, e.offset())
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn view(input: &Opened) -> Result<ep::CaptureView<'_>, OpError> {
    ep::parse(input.bytes()).map_err(invalid)
}

fn value_json(v: &ep::Value) -> Value {
    let data = match v.decode() {
        None => json!(v.data),
        Some(ep::ValueData::Bool(x)) => json!(x),
        Some(ep::ValueData::Char(x) | ep::ValueData::Int8(x)) => json!(x),
        Some(ep::ValueData::Uint8(x)) => json!(x),
        Some(ep::ValueData::Int16(x)) => json!(x),
        Some(ep::ValueData::Uint16(x)) => json!(x),
        Some(ep::ValueData::Int32(x)) => json!(x),
        Some(ep::ValueData::Uint32(x)) => json!(x),
        Some(ep::ValueData::Int64(x)) => json!(x),
        Some(ep::ValueData::Uint64(x)) => json!(x),
        Some(ep::ValueData::Float(x)) => json!(x),
        Some(ep::ValueData::Double(x)) => json!(x),
        Some(ep::ValueData::String(x)) => json!(text(ep::c_str(&x))),
    };
    json!({
        "type": v.kind().map_or_else(|| v.data_type.to_string(), |k| format!("{k:?}")),
        "isArray": v.is_array(),
        "valueId": v.value_id,
        "data": data,
    })
}

fn thread_json(
    view: &ep::CaptureView<'_>,
    tree: &ep::BlockTree<'_>,
    th: &ep::ThreadTree<'_>,
) -> Result<Value, OpError> {
    // Flat, in file (post-)order, with each block's parent: no recursion however deep the tree.
    let mut parent = vec![None; th.nodes.len()];
    for i in 0..th.nodes.len() as u32 {
        for c in th.children_rev(i) {
            parent[c as usize] = Some(th.block_index(i));
        }
    }
    let mut blocks = Vec::with_capacity(th.nodes.len());
    let records = tree.node_records(view, th);
    for (i, (n, rec)) in th.nodes.iter().zip(records).enumerate() {
        let name =
            tree.descriptors[n.descriptor as usize].map_or_else(Vec::new, |d| d.name().to_vec());
        let mut b = json!({
            "id": th.block_index(i as u32),
            "parent": parent[i],
            "descriptor": n.descriptor,
            "name": text(&name),
            "start": n.begin,
            "stop": n.end,
        });
        // Re-read the record for its value, when it is one.
        if let Some(v) = view.decode_record(&rec).map_err(invalid)?.to_value() {
            b["value"] = value_json(&v);
        }
        blocks.push(b);
    }
    let cs: Vec<Value> = th
        .context_switches
        .iter()
        .map(|c| {
            json!({
                "id": c.block_index,
                "start": c.begin,
                "stop": c.end,
                "targetThreadId": c.target_tid,
                "targetName": text(c.name),
            })
        })
        .collect();
    Ok(json!({
        "threadId": th.id,
        "threadName": text(th.name),
        "contextSwitches": cs,
        "blocks": blocks,
    }))
}

impl Codec for EasyProfiler {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let view = view(input)?;
        let tree = view.tree().map_err(invalid)?;
        let h = view.header();
        let mut d = Map::new();
        d.insert("pid".into(), json!(h.pid));
        d.insert("cpu frequency".into(), json!(h.cpu_frequency));
        d.insert("begin (ns)".into(), json!(tree.begin_time));
        d.insert("end (ns)".into(), json!(tree.end_time));
        d.insert("descriptors".into(), json!(view.descriptors().len()));
        d.insert("threads".into(), json!(tree.threads.len()));
        let records: usize = tree.threads.iter().map(|t| t.nodes.len()).sum();
        let cs: usize = tree.threads.iter().map(|t| t.context_switches.len()).sum();
        d.insert("records kept".into(), json!(records));
        d.insert("context switches kept".into(), json!(cs));
        d.insert("bookmarks".into(), json!(h.counters.bookmarks_count));
        let odd: Vec<String> = tree.oddities.iter().map(ToString::to_string).collect();
        d.insert("oddities".into(), json!(odd));
        Ok(Info {
            format: input.format(),
            version: h.version.to_string(),
            details: d,
        })
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // Findings (trailing data) are not reported yet by this format.
        let checked = || -> Result<(), OpError> {
            let view = view(input)?;
            view.validate().map_err(invalid)?;
            view.to_model().map(drop).map_err(invalid)
        };
        checked().map(|()| Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        // The whole document as one record until this format streams its records.
        let mut buf = Vec::new();
        let out: &mut dyn std::io::Write = &mut buf;
        let mut whole = || -> Result<(), OpError> {
            let view = view(input)?;
            let tree = view.tree().map_err(invalid)?;
            let model = view.to_model().map_err(invalid)?;
            let h = view.header();
            let descriptors: Vec<Value> = tree
                .descriptors
                .iter()
                .enumerate()
                .map(|(i, d)| match d {
                    None => json!({ "id": i, "empty": true }),
                    Some(d) => {
                        let mut v = json!({
                            "id": i,
                            "name": text(d.name()),
                            "type": d.descriptor.block_type,
                            "status": d.descriptor.status,
                            "color": format!("0x{:x}", d.descriptor.color),
                            "sourceFile": text(d.descriptor.file),
                            "sourceLine": d.descriptor.line,
                        });
                        if d.descriptor.id as usize != i {
                            v["parentId"] = json!(d.descriptor.id);
                        }
                        v
                    }
                })
                .collect();
            let threads = tree
                .threads
                .iter()
                .map(|th| thread_json(&view, &tree, th))
                .collect::<Result<Vec<_>, _>>()?;
            let bookmarks: Vec<Value> = model
                .bookmarks
                .iter()
                .map(|b| {
                    json!({
                        "timestamp": b.position,
                        "color": format!("0x{:x}", b.color),
                        "text": text(&b.text),
                    })
                })
                .collect();
            let odd: Vec<String> = tree.oddities.iter().map(ToString::to_string).collect();
            let doc = json!({
                "version": h.version.to_string(),
                "timeUnits": "ns",
                "pid": h.pid,
                "cpuFrequency": h.cpu_frequency,
                "beginTime": tree.begin_time,
                "endTime": tree.end_time,
                "oddities": odd,
                "blockDescriptors": descriptors,
                "threads": threads,
                "bookmarks": bookmarks,
            });
            write_json(out, &doc)
        };
        whole()?;
        let value: serde_json::Value =
            serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
        dump.record(&value)
    }

    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        let model = view(input)?.to_model().map_err(invalid)?;
        let mut dropped = Vec::new();
        let model = match options.to.as_deref() {
            None => model,
            Some("gui") => model.to_gui_convention(),
            Some(to) => {
                let version = parse_version(to).ok_or_else(|| {
                    OpError::Usage(format!(
                        "an EasyProfiler capture is rewritten as `gui` or as a version a.b.c, not {to}"
                    ))
                })?;
                convert(model, version, &mut dropped)
            }
        };
        let bytes = model
            .to_bytes()
            .map_err(|e| OpError::Usage(e.to_string()))?;
        std::fs::write(out, bytes)?;
        Ok(RewriteReport {
            dropped,
            ..RewriteReport::default()
        })
    }
}

fn parse_version(s: &str) -> Option<ep::Version> {
    let mut it = s.trim_start_matches('v').split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map_or(Some(0), |m| m.parse().ok())?;
    let patch = it.next().map_or(Some(0), |p| p.parse().ok())?;
    let v = ep::Version::new(major, minor, patch);
    (v.0 >= ep::Version::new(0, 1, 0).0 && it.next().is_none()).then_some(v)
}

/// The model in another version's layout, dropping what that version cannot carry.
fn convert(mut m: ep::Capture, to: ep::Version, dropped: &mut Vec<String>) -> ep::Capture {
    if to == m.version {
        return m;
    }
    let layout = to.layout();
    if layout < ep::Layout::V2_1 {
        if !m.bookmarks.is_empty() {
            dropped.push(format!("{} bookmarks (from 2.1.0)", m.bookmarks.len()));
        }
        m.bookmarks.clear();
        m.tail = ep::Tail::default();
    }
    if !layout.has_values() {
        let before: usize = m.threads.iter().map(|t| t.records.len()).sum();
        for t in &mut m.threads {
            t.records
                .retain(|r| matches!(r.body, ep::RecordBody::Named(_)));
        }
        let after: usize = m.threads.iter().map(|t| t.records.len()).sum();
        if before != after {
            dropped.push(format!("{} value records (from 2.0.0)", before - after));
        }
    }
    if layout == ep::Layout::V1NoPid && m.pid != 0 {
        dropped.push("the pid (none up to 1.0.0)".into());
        m.pid = 0;
    }
    m.version = to;
    m.update_counters(ep::Convention::Runtime);
    m
}
