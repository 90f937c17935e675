//! `profcodec` CLI operations for HPCToolkit databases (profcodec-hpctoolkit).
//!
//! `info`, `validate` and `dump` (the reading half) live here; `rewrite` (the writing half) lives
//! in `rewrite.rs`. Each accepts a database directory or a single `.db` file; the files are
//! memory-mapped through [`profcodec::open`]. The JSON dump schema is documented in the
//! profcodec-hpctoolkit README ("JSON dump").

use std::path::Path;

use profcodec_hpctoolkit::read::{
    Combine, Context, ContextChildren, EntryPointKind, LexicalType, Relation, ScopeType,
};
use profcodec_hpctoolkit::{CctDb, Database, Error, FileKind, MetaDb, ProfileDb, TraceDb};
use serde_json::{Map, Value, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated, write_json};
use profcodec::{Format, Opened};

mod rewrite;

/// The HPCToolkit codec.
pub(super) struct Hpctoolkit;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// The files of the input: a directory's (mapped one by one) or the single file given.
struct Files {
    meta: Option<Opened>,
    profile: Option<Opened>,
    cct: Option<Opened>,
    trace: Option<Opened>,
}

impl Files {
    fn load(input: &Opened) -> Result<Files, OpError> {
        let mut files = Files {
            meta: None,
            profile: None,
            cct: None,
            trace: None,
        };
        if input.format() == Format::HpctoolkitDatabase {
            for kind in FileKind::ALL {
                let path = input.path().join(kind.file_name());
                if path.is_file() {
                    let opened = profcodec::open(&path).map_err(|e| OpError::invalid(e, None))?;
                    *files.slot(kind) = Some(opened);
                }
            }
        } else {
            let kind = match input.format() {
                Format::HpctoolkitMeta => FileKind::Meta,
                Format::HpctoolkitProfile => FileKind::Profile,
                Format::HpctoolkitCct => FileKind::Cct,
                _ => FileKind::Trace,
            };
            *files.slot(kind) =
                Some(profcodec::open(input.path()).map_err(|e| OpError::invalid(e, None))?);
        }
        Ok(files)
    }

    fn slot(&mut self, kind: FileKind) -> &mut Option<Opened> {
        match kind {
            FileKind::Meta => &mut self.meta,
            FileKind::Profile => &mut self.profile,
            FileKind::Cct => &mut self.cct,
            FileKind::Trace => &mut self.trace,
        }
    }

    fn bytes(slot: &Option<Opened>) -> Option<&[u8]> {
        slot.as_ref().map(Opened::bytes)
    }

    fn meta(&self) -> Result<Option<MetaDb<'_>>, OpError> {
        Files::bytes(&self.meta)
            .map(MetaDb::parse)
            .transpose()
            .map_err(invalid)
    }

    fn profile(&self) -> Result<Option<ProfileDb<'_>>, OpError> {
        Files::bytes(&self.profile)
            .map(ProfileDb::parse)
            .transpose()
            .map_err(invalid)
    }

    fn cct(&self) -> Result<Option<CctDb<'_>>, OpError> {
        Files::bytes(&self.cct)
            .map(CctDb::parse)
            .transpose()
            .map_err(invalid)
    }

    fn trace(&self) -> Result<Option<TraceDb<'_>>, OpError> {
        Files::bytes(&self.trace)
            .map(TraceDb::parse)
            .transpose()
            .map_err(invalid)
    }
}

fn version((major, minor): (u8, u8)) -> String {
    format!("{major}.{minor}")
}

impl Codec for Hpctoolkit {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let files = Files::load(input)?;
        let mut details = Map::new();
        let mut versions = Vec::new();
        if let Some(m) = files.meta()? {
            versions.push(version(m.version()));
            details.insert("title".into(), json!(m.title().map_err(invalid)?));
            details.insert("metrics".into(), json!(m.metric_count()));
            details.insert("propagation scopes".into(), json!(m.scope_count()));
            details.insert("load modules".into(), json!(m.module_count()));
            details.insert("source files".into(), json!(m.file_count()));
            details.insert("functions".into(), json!(m.function_count()));
            details.insert("entry points".into(), json!(m.entry_point_count()));
            let contexts = m.context_index().map_err(invalid)?.len();
            details.insert("contexts".into(), json!(contexts));
        }
        if let Some(p) = files.profile()? {
            versions.push(version(p.version()));
            details.insert("profiles".into(), json!(p.profile_count()));
            let mut values = 0u64;
            for prof in p.profiles() {
                values += prof.map_err(invalid)?.values.len() as u64;
            }
            details.insert("profile values".into(), json!(values));
        }
        if let Some(c) = files.cct()? {
            versions.push(version(c.version()));
            details.insert("cct contexts".into(), json!(c.context_count()));
            let mut values = 0u64;
            for ctx in c.contexts() {
                values += ctx.map_err(invalid)?.values.len() as u64;
            }
            details.insert("cct values".into(), json!(values));
        }
        if let Some(t) = files.trace()? {
            versions.push(version(t.version()));
            details.insert("traces".into(), json!(t.trace_count()));
            let mut elems = 0u64;
            for tr in t.traces() {
                elems += tr.map_err(invalid)?.elems.len() as u64;
            }
            details.insert("trace elements".into(), json!(elems));
            details.insert("min timestamp".into(), json!(t.min_timestamp()));
            details.insert("max timestamp".into(), json!(t.max_timestamp()));
        }
        versions.dedup();
        Ok(Info {
            format: input.format(),
            version: versions.join(","),
            details,
        })
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // Findings (trailing data) are not reported yet by this format.
        let checked = || -> Result<(), OpError> {
            let files = Files::load(input)?;
            if input.format() == Format::HpctoolkitDatabase {
                let meta = Files::bytes(&files.meta).unwrap_or_default();
                let db = Database::from_parts(
                    meta,
                    Files::bytes(&files.profile),
                    Files::bytes(&files.cct),
                    Files::bytes(&files.trace),
                )
                .map_err(invalid)?;
                return db.validate().map_err(invalid);
            }
            if let Some(m) = files.meta()? {
                m.validate().map_err(invalid)?;
            }
            if let Some(p) = files.profile()? {
                p.validate().map_err(invalid)?;
            }
            if let Some(c) = files.cct()? {
                c.validate().map_err(invalid)?;
            }
            if let Some(t) = files.trace()? {
                t.validate().map_err(invalid)?;
            }
            Ok(())
        };
        checked().map(|()| Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        // The whole document as one record until this format streams its records.
        let mut buf = Vec::new();
        let out: &mut dyn std::io::Write = &mut buf;
        let mut whole = || -> Result<(), OpError> {
            let files = Files::load(input)?;
            let mut doc = Map::new();
            if let Some(m) = files.meta()? {
                doc.insert("meta".into(), dump_meta(&m).map_err(invalid)?);
            }
            if let Some(p) = files.profile()? {
                doc.insert("profile".into(), dump_profile(&p).map_err(invalid)?);
            }
            if let Some(c) = files.cct()? {
                doc.insert("cct".into(), dump_cct(&c).map_err(invalid)?);
            }
            if let Some(t) = files.trace()? {
                doc.insert("trace".into(), dump_trace(&t).map_err(invalid)?);
            }
            write_json(out, &Value::Object(doc))
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
        rewrite::rewrite(input, out, options)
    }
}

/// A known enumeration value as its name, an unknown one as its number.
fn name_or_raw(name: Option<&str>, raw: u64) -> Value {
    name.map_or_else(|| json!(raw), |n| json!(n))
}

fn scope_type(t: ScopeType) -> Value {
    name_or_raw(t.name(), t.0.into())
}

fn combine(c: Combine) -> Value {
    name_or_raw(c.name(), c.0.into())
}

fn entry_kind(k: EntryPointKind) -> Value {
    name_or_raw(k.name(), k.0.into())
}

fn relation(r: Relation) -> Value {
    name_or_raw(r.name(), r.0.into())
}

fn lexical_type(t: LexicalType) -> Value {
    name_or_raw(t.name(), t.0.into())
}

fn dump_meta(m: &MetaDb<'_>) -> Result<Value, Error> {
    let id_names = m.id_names().collect::<Result<Vec<_>, _>>()?;
    let mut scopes = Vec::new();
    for s in m.scopes() {
        let s = s?;
        scopes.push(json!({
            "name": s.name, "type": scope_type(s.kind), "propagation_index": s.propagation_index,
        }));
    }
    let mut metrics = Vec::new();
    for metric in m.metrics() {
        let metric = metric?;
        let mut insts = Vec::new();
        for i in m.scope_instances(&metric) {
            let i = i?;
            insts.push(json!({"scope": i.scope.0, "prop_metric_id": i.prop_metric_id}));
        }
        let mut sums = Vec::new();
        for s in m.summaries(&metric) {
            let s = s?;
            sums.push(json!({
                "scope": s.scope.0, "formula": s.formula, "combine": combine(s.combine),
                "stat_metric_id": s.stat_metric_id,
            }));
        }
        metrics.push(json!({"name": metric.name, "scope_insts": insts, "summaries": sums}));
    }
    let mut modules = Vec::new();
    for x in m.modules() {
        let x = x?;
        modules.push(json!({"flags": x.flags, "path": x.path}));
    }
    let mut files = Vec::new();
    for x in m.files() {
        let x = x?;
        files.push(json!({"flags": x.flags, "path": x.path}));
    }
    let mut functions = Vec::new();
    for x in m.functions() {
        let x = x?;
        functions.push(json!({
            "name": x.name, "module": x.module.map(|i| i.0), "offset": x.offset,
            "file": x.file.map(|i| i.0), "line": x.line, "flags": x.flags,
        }));
    }
    let mut entry_points = Vec::new();
    // The dump nests contexts, and building, printing and dropping nested JSON recurses: walk the
    // tree first (bounded, cycle-proof) and refuse depths that could overflow the stack.
    for node in m.walk() {
        let node = node?;
        if node.depth > MAX_DUMP_DEPTH {
            return Err(Error::Invalid {
                file: FileKind::Meta,
                field: "Ctx",
                offset: node.node.offset(),
                expected: "a context tree at most 1024 levels deep (the JSON dump's limit)",
                found: node.depth.into(),
            });
        }
    }
    for e in m.entry_points() {
        let e = e?;
        entry_points.push(json!({
            "ctx_id": e.ctx_id, "entry_point": entry_kind(e.kind), "pretty_name": e.pretty_name,
            "children": dump_children(m, e.children)?,
        }));
    }
    Ok(json!({
        "version": version(m.version()),
        "title": m.title()?,
        "description": m.description()?,
        "id_names": id_names,
        "scopes": scopes,
        "metrics": metrics,
        "modules": modules,
        "files": files,
        "functions": functions,
        "entry_points": entry_points,
    }))
}

/// Deepest context tree `dump --json` prints (real trees are far shallower).
const MAX_DUMP_DEPTH: u32 = 1024;

fn dump_children(m: &MetaDb<'_>, children: ContextChildren) -> Result<Vec<Value>, Error> {
    let mut out = Vec::new();
    for c in m.children(children) {
        out.push(dump_context(m, &c?)?);
    }
    Ok(out)
}

fn dump_context(m: &MetaDb<'_>, c: &Context<'_>) -> Result<Value, Error> {
    Ok(json!({
        "ctx_id": c.ctx_id,
        "flags": c.flags,
        "relation": relation(c.relation),
        "lexical_type": lexical_type(c.lexical_type),
        "propagation": c.propagation,
        "function": c.function.map(|i| i.0),
        "file": c.file.map(|i| i.0),
        "line": c.line,
        "module": c.module.map(|i| i.0),
        "offset": c.module_offset,
        "children": dump_children(m, c.children)?,
    }))
}

fn dump_profile(p: &ProfileDb<'_>) -> Result<Value, Error> {
    let mut profiles = Vec::new();
    for prof in p.profiles() {
        let prof = prof?;
        let id_tuple = prof.id_tuple.map(|t| {
            t.ids
                .iter()
                .map(|id| {
                    json!({
                        "kind": id.kind, "flags": id.flags.get(),
                        "logical_id": id.logical_id.get(), "physical_id": id.physical_id.get(),
                    })
                })
                .collect::<Vec<_>>()
        });
        let mut values = Map::new();
        for (ctx, vals) in prof.contexts() {
            let row: Map<String, Value> = vals
                .iter()
                .map(|v| (v.metric_id().to_string(), json!(v.value())))
                .collect();
            values.insert(ctx.to_string(), Value::Object(row));
        }
        profiles.push(json!({
            "index": prof.index, "flags": prof.flags, "is_summary": prof.is_summary(),
            "id_tuple": id_tuple, "values": values,
        }));
    }
    Ok(json!({"version": version(p.version()), "profiles": profiles}))
}

fn dump_cct(c: &CctDb<'_>) -> Result<Value, Error> {
    let mut contexts = Map::new();
    for ctx in c.contexts() {
        let ctx = ctx?;
        if ctx.metric_indices.is_empty() {
            continue;
        }
        let mut metrics = Map::new();
        for (metric, vals) in ctx.metrics() {
            let row: Map<String, Value> = vals
                .iter()
                .map(|v| (v.prof_index().to_string(), json!(v.value())))
                .collect();
            metrics.insert(metric.to_string(), Value::Object(row));
        }
        contexts.insert(ctx.ctx_id.to_string(), Value::Object(metrics));
    }
    Ok(json!({
        "version": version(c.version()),
        "n_ctxs": c.context_count(),
        "contexts": contexts,
    }))
}

fn dump_trace(t: &TraceDb<'_>) -> Result<Value, Error> {
    let mut traces = Vec::new();
    for tr in t.traces() {
        let tr = tr?;
        let elems: Vec<Value> = tr
            .elems
            .iter()
            .map(|e| json!([e.timestamp(), e.ctx_id()]))
            .collect();
        traces.push(json!({"prof_index": tr.prof_index, "elems": elems}));
    }
    Ok(json!({
        "version": version(t.version()),
        "min_timestamp": t.min_timestamp(),
        "max_timestamp": t.max_timestamp(),
        "traces": traces,
    }))
}
