//! `rewrite`: the same bytes, the GUI's convention, or another version's layout.

use std::path::Path;

use profcodec_common::inspect::{Error, RewriteOptions, RewriteReport};

use super::invalid;
use crate::{Capture, Convention, Layout, RecordBody, Tail, Version, parse};

pub(super) fn rewrite(
    bytes: &[u8],
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    let view = parse(bytes).map_err(invalid)?;
    let Some(to) = options.to.as_deref() else {
        // The same version: what reads is written back byte for byte (the model keeps every
        // byte), so once the tree has walked it all, the input is the output; no owned model
        // (64 bytes an empty descriptor slot) is built.
        view.tree().map_err(invalid)?;
        std::fs::write(out, bytes)?;
        return Ok(RewriteReport::default());
    };
    let model = view.to_model().map_err(invalid)?;
    let mut dropped = Vec::new();
    let model = match to {
        "gui" => model.to_gui_convention(),
        to => {
            let version = parse_version(to).ok_or_else(|| {
                Error::Usage(format!(
                    "an EasyProfiler capture is rewritten as `gui` or as a version a.b.c, not {to}"
                ))
            })?;
            convert(model, version, &mut dropped)
        }
    };
    let bytes = model.to_bytes().map_err(|e| Error::Usage(e.to_string()))?;
    std::fs::write(out, bytes)?;
    Ok(RewriteReport {
        dropped,
        ..RewriteReport::default()
    })
}

fn parse_version(s: &str) -> Option<Version> {
    let mut it = s.trim_start_matches('v').split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map_or(Some(0), |m| m.parse().ok())?;
    let patch = it.next().map_or(Some(0), |p| p.parse().ok())?;
    let v = Version::new(major, minor, patch);
    (v.0 >= Version::new(0, 1, 0).0 && it.next().is_none()).then_some(v)
}

/// The model in another version's layout, dropping what that version cannot carry.
fn convert(mut m: Capture, to: Version, dropped: &mut Vec<String>) -> Capture {
    if to == m.version {
        return m;
    }
    let layout = to.layout();
    if layout < Layout::V2_1 {
        if !m.bookmarks.is_empty() {
            dropped.push(format!("{} bookmarks (from 2.1.0)", m.bookmarks.len()));
        }
        m.bookmarks.clear();
        m.tail = Tail::default();
    }
    if !layout.has_values() {
        let before: usize = m.threads.iter().map(|t| t.records.len()).sum();
        for t in &mut m.threads {
            t.records.retain(|r| matches!(r.body, RecordBody::Named(_)));
        }
        let after: usize = m.threads.iter().map(|t| t.records.len()).sum();
        if before != after {
            dropped.push(format!("{} value records (from 2.0.0)", before - after));
        }
    }
    if layout == Layout::V1NoPid && m.pid != 0 {
        dropped.push("the pid (none up to 1.0.0)".into());
        m.pid = 0;
    }
    m.version = to;
    m.update_counters(Convention::Runtime);
    m
}
