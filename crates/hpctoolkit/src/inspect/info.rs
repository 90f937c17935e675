//! `info` of an HPCToolkit database directory or one of its files.

use std::collections::BTreeSet;

use profcodec_common::inspect::{Error, Info};
use serde_json::{Map, json};

use super::{invalid, kind_names, version};
use crate::files::DatabaseFiles;

pub(super) fn info(files: &DatabaseFiles<'_>) -> Result<Info, Error> {
    let meta = files.meta().map_err(invalid)?;
    let profile = files.profile().map_err(invalid)?;
    let cct = files.cct().map_err(invalid)?;
    let trace = files.trace().map_err(invalid)?;
    let mut d = Map::new();
    let mut versions = Vec::new();
    // The summary first: title, time span, who was measured, what was measured.
    if let Some(m) = &meta {
        m.check_overlaps().map_err(invalid)?;
        versions.push(version(m.version()));
        d.insert("title".into(), json!(m.title().map_err(invalid)?));
    }
    if let Some(t) = &trace {
        t.check_overlaps().map_err(invalid)?;
        let (min, max) = (t.min_timestamp(), t.max_timestamp());
        d.insert(
            "time_span_s".into(),
            json!(max.saturating_sub(min) as f64 / 1e9),
        );
    }
    if let Some(p) = &profile {
        p.check_overlaps().map_err(invalid)?;
        let kinds = kind_names(meta.as_ref())?;
        let kind = |name: &str| kinds.iter().position(|k| k == name);
        let (rank, thread, stream) = (kind("rank"), kind("thread"), kind("gpustream"));
        let mut profiles = 0u64;
        let mut threads = 0u64;
        let mut streams = 0u64;
        let mut ranks = BTreeSet::new();
        let mut values = 0u64;
        for prof in p.profiles() {
            let prof = prof.map_err(invalid)?;
            values += prof.values.len() as u64;
            let Some(tuple) = prof.id_tuple else { continue };
            profiles += 1;
            let has = |k: Option<usize>| {
                k.and_then(|k| tuple.ids.iter().find(|id| usize::from(id.kind) == k))
            };
            if let Some(r) = has(rank) {
                ranks.insert(r.logical_id.get());
            }
            threads += u64::from(has(thread).is_some());
            streams += u64::from(has(stream).is_some());
        }
        d.insert("profiles".into(), json!(profiles));
        d.insert("ranks".into(), json!(ranks.len()));
        d.insert("threads".into(), json!(threads));
        d.insert("gpu_streams".into(), json!(streams));
        d.insert("profile_values".into(), json!(values));
        versions.push(version(p.version()));
    }
    if let Some(m) = &meta {
        // hpcprof's metric names carry their unit: "CPUTIME (sec)".
        let metrics = m
            .metrics()
            .map(|x| x.map(|x| x.name))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        d.insert("metrics".into(), json!(metrics));
        // One count of contexts for `info`, `dump` and the `contexts` table: the global
        // context, meta.db's entry points and contexts, and the elided contexts (values in
        // profile.db or cct.db at ctxIds meta.db leaves out). profile.db's aliasing check ran
        // above, so each profile's context index is read once.
        let index = m.context_index().map_err(invalid)?;
        let elided = index
            .elided(profile.as_ref(), cct.as_ref())
            .map_err(invalid)?
            .len();
        d.insert(
            "contexts".into(),
            json!(super::context_count(&index, elided)),
        );
        d.insert("elided_contexts".into(), json!(elided));
        d.insert("functions".into(), json!(m.function_count()));
        d.insert("load_modules".into(), json!(m.module_count()));
        d.insert("source_files".into(), json!(m.file_count()));
        d.insert("entry_points".into(), json!(m.entry_point_count()));
        d.insert("propagation_scopes".into(), json!(m.scope_count()));
    }
    if let Some(c) = &cct {
        c.check_overlaps().map_err(invalid)?;
        versions.push(version(c.version()));
        // nCtxs: the largest ctxId + 1, unused ids included; not a count of contexts.
        d.insert("cct_n_ctxs".into(), json!(c.context_count()));
        let mut values = 0u64;
        for ctx in c.contexts() {
            values += ctx.map_err(invalid)?.values.len() as u64;
        }
        d.insert("cct_values".into(), json!(values));
    }
    if let Some(t) = &trace {
        versions.push(version(t.version()));
        d.insert("trace_lines".into(), json!(t.trace_count()));
        let mut elems = 0u64;
        for tr in t.traces() {
            elems += tr.map_err(invalid)?.elems.len() as u64;
        }
        d.insert("trace_samples".into(), json!(elems));
        d.insert("min_timestamp_ns".into(), json!(t.min_timestamp()));
        d.insert("max_timestamp_ns".into(), json!(t.max_timestamp()));
    }
    d.insert("files".into(), json!(files.names()));
    versions.dedup();
    Ok(Info::new(versions.join(","), d))
}
