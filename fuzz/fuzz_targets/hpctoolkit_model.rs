#![no_main]
//! Structure-aware: an arbitrary owned database (the `arbitrary` feature) goes through the
//! writers; whatever they accept must parse, pass each file's `validate`, convert back to the
//! model with the same meta.db content (values are compared through the bytes, NaNs included),
//! and write again to the same bytes. The whole-database `validate` may refuse the cross-file
//! references of an arbitrary model (metric ids unknown to meta.db), with a typed error.
//!
//! The leading bool chooses whether the model is first repaired into one the writers accept
//! (handles in range, parents first, unique ctxIds, sorted values, no NUL in strings): most raw
//! arbitrary models are refused by the writers, so without it the readers would rarely see a
//! populated database.
use std::io::Cursor;

use profcodec_hpctoolkit::model::{
    ContextHandle, Database, EntryPointHandle, FileHandle, FunctionHandle, MetricValue,
    ModuleHandle, Parent, ProfileValues, Traces,
};
use profcodec_hpctoolkit::read::{self, CctDb, MetaDb, ProfileDb, TraceDb};
use profcodec_hpctoolkit::write::{write_context_major, write_meta, write_profiles, write_traces};

/// meta.db, profile.db, cct.db, trace.db as written; `None` when a writer refuses the model.
type Files = (Vec<u8>, Vec<u8>, Option<Vec<u8>>, Option<Vec<u8>>);

fn write(db: &Database) -> Option<Files> {
    let mut meta = Vec::new();
    write_meta(&db.meta, &mut meta).ok()?;
    let profile = write_profiles(&db.profiles, Cursor::new(Vec::new()))
        .ok()?
        .into_inner();
    let cct = match &db.context_major {
        Some(c) => Some(
            write_context_major(c, Cursor::new(Vec::new()))
                .ok()?
                .into_inner(),
        ),
        None => None,
    };
    let trace = match &db.traces {
        Some(t) => Some(write_traces(t, Cursor::new(Vec::new())).ok()?.into_inner()),
        None => None,
    };
    Some((meta, profile, cct, trace))
}

/// `h` modulo `n`, `None` when there is nothing to point at.
fn wrap(h: u32, n: usize) -> Option<u32> {
    (n > 0).then(|| h % n as u32)
}

fn repair(db: &mut Database) {
    let clean = |s: &mut String| s.retain(|c| c != '\0');
    let m = &mut db.meta;
    clean(&mut m.title);
    clean(&mut m.description);
    m.id_names.truncate(255);
    m.id_names.iter_mut().for_each(clean);
    let (n_scopes, n_modules, n_files) = (m.scopes.len(), m.modules.len(), m.files.len());
    let (n_functions, n_entries) = (m.functions.len(), m.entry_points.len());
    m.scopes.iter_mut().for_each(|s| clean(&mut s.name));
    for metric in &mut m.metrics {
        clean(&mut metric.name);
        if n_scopes == 0 {
            metric.scope_insts.clear();
            metric.summaries.clear();
        }
        for i in &mut metric.scope_insts {
            i.scope.0 %= n_scopes as u32;
        }
        for s in &mut metric.summaries {
            s.scope.0 %= n_scopes as u32;
            clean(&mut s.formula);
        }
    }
    m.modules.iter_mut().for_each(|x| clean(&mut x.path));
    m.files.iter_mut().for_each(|x| clean(&mut x.path));
    for f in &mut m.functions {
        f.name.iter_mut().for_each(clean);
        f.module = f
            .module
            .and_then(|h| wrap(h.0, n_modules))
            .map(ModuleHandle);
        f.file = f.file.and_then(|h| wrap(h.0, n_files)).map(FileHandle);
    }
    if n_entries == 0 {
        m.contexts.clear();
    }
    for (i, e) in m.entry_points.iter_mut().enumerate() {
        clean(&mut e.pretty_name);
        e.ctx_id = i as u32 + 1;
    }
    for (i, c) in m.contexts.iter_mut().enumerate() {
        c.parent = match c.parent {
            Parent::Context(p) if i > 0 => Parent::Context(ContextHandle(p.0 % i as u32)),
            Parent::Context(ContextHandle(h)) | Parent::EntryPoint(EntryPointHandle(h)) => {
                Parent::EntryPoint(EntryPointHandle(h % n_entries as u32))
            }
        };
        c.ctx_id = (n_entries + i) as u32 + 1;
        c.function = c
            .function
            .and_then(|h| wrap(h.0, n_functions))
            .map(FunctionHandle);
        c.source = c.source.and_then(|mut s| {
            s.file = FileHandle(wrap(s.file.0, n_files)?);
            Some(s)
        });
        c.point = c.point.and_then(|mut p| {
            p.module = ModuleHandle(wrap(p.module.0, n_modules)?);
            Some(p)
        });
    }
    // Values on a few ctxIds, sorted by (ctxId, metricId) without repeats.
    for p in &mut db.profiles {
        let ctxs = &p.values.contexts;
        let mut triples: Vec<(u32, u16, f64)> = (p.values.values.iter().enumerate())
            .map(|(i, v)| {
                let ctx = ctxs.get(i % ctxs.len().max(1)).map_or(0, |c| c.ctx_id % 64);
                (ctx, v.metric_id, v.value)
            })
            .collect();
        triples.sort_by_key(|t| (t.0, t.1));
        triples.dedup_by_key(|t| (t.0, t.1));
        let mut values = ProfileValues::default();
        for run in triples.chunk_by(|a, b| a.0 == b.0) {
            let metric = |t: &(u32, u16, f64)| MetricValue {
                metric_id: t.1,
                value: t.2,
            };
            values.push(run[0].0, run.iter().map(metric));
        }
        p.values = values;
    }
    if db.context_major.is_some() {
        db.context_major = Some(db.transpose(None));
    }
    if let Some(t) = db.traces.take() {
        let mut traces = t.traces;
        for t in &mut traces {
            t.elements.sort_by_key(|e| e.timestamp);
        }
        db.traces = Some(Traces::from_traces(traces));
    }
}

libfuzzer_sys::fuzz_target!(|input: (bool, Database)| {
    let (repaired, mut model) = input;
    if repaired {
        repair(&mut model);
    }
    let Some(files) = write(&model) else {
        return;
    };
    let (meta, profile, cct, trace) = &files;
    MetaDb::parse(meta)
        .and_then(|m| m.validate())
        .expect("the writer's meta.db validates");
    ProfileDb::parse(profile)
        .and_then(|p| p.validate())
        .expect("the writer's profile.db validates");
    if let Some(c) = cct {
        CctDb::parse(c)
            .and_then(|c| c.validate())
            .expect("the writer's cct.db validates");
    }
    if let Some(t) = trace {
        TraceDb::parse(t)
            .and_then(|t| t.validate())
            .expect("the writer's trace.db validates");
    }
    let db = read::Database::from_parts(
        meta.as_slice(),
        Some(profile.as_slice()),
        cct.as_deref(),
        trace.as_deref(),
    )
    .expect("the writer's database opens");
    // Cross-file references may be wrong in an arbitrary model; the answer must be typed.
    if let Err(e) = db.validate() {
        let _ = (e.offset(), e.to_string());
    }
    let back = Database::from_read(&db).expect("the writer's database converts to the model");
    assert_eq!(back.meta, model.meta.normalized(), "meta.db content");
    assert_eq!(back.profiles.len(), model.profiles.len(), "profile count");
    assert_eq!(
        write(&back),
        Some(files),
        "a second write is byte-identical"
    );
});
