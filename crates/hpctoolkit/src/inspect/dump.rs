//! `dump` for HPCToolkit: flat records streamed as each file is read (schema in the CLI
//! README, section "HPCToolkit").
//!
//! Each file's aliasing check (`check_overlaps`) runs before its records, so the output is
//! bounded by the file: no block, line or array is written twice, and every string of meta.db's
//! string table is written once, in a `string` record, and referred to by id. The contexts
//! are a stream of `context` records naming their parent, so the output has the same shape at
//! any depth: one record per context `info` counts (the global context, meta.db's tree in
//! pre-order, then the elided contexts), at the depth the `contexts` table gives.

use std::borrow::Cow;
use std::collections::HashMap;

use profcodec_common::inspect::{Dump, Error};
use serde::{Serialize, Serializer};

use super::{invalid, kind_names, version};
use crate::files::DatabaseFiles;
use crate::raw::{ProfValue, TraceElem, Value};
use crate::read::{ContextNode, FileIndex, FunctionIndex, ModuleIndex};
use crate::{CctDb, MetaDb, ProfileDb};

/// Trace samples per `samples` record: a line of millions of samples becomes many records of
/// bounded size.
const SAMPLES_PER_RECORD: usize = 4096;

/// A column of a zero-copy array, serialised as a JSON array without a copy.
struct Col<'a, T, U>(&'a [T], fn(&T) -> U);

impl<T, U: Serialize> Serialize for Col<'_, T, U> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(self.1))
    }
}

#[derive(Serialize)]
struct Header<'a> {
    format: &'static str,
    version: String,
    files: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    n_ctxs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_timestamp_ns: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_timestamp_ns: Option<u64>,
}

/// One identifier of a profile's identifier tuple.
#[derive(Serialize)]
struct Identifier<'a> {
    kind: Cow<'a, str>,
    logical_id: u32,
    physical_id: u64,
    flags: u16,
}

#[derive(Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Record<'a> {
    String {
        id: u32,
        text: &'a str,
    },
    IdName {
        kind: u8,
        name: &'a str,
    },
    Scope {
        id: u16,
        name: &'a str,
        #[serde(rename = "type")]
        scope_type: String,
        propagation_index: u8,
    },
    Metric {
        id: u32,
        name: &'a str,
    },
    ScopeInstance {
        metric: u32,
        scope: u16,
        prop_metric_id: u16,
    },
    Summary {
        metric: u32,
        scope: u16,
        formula: &'a str,
        combine: String,
        stat_metric_id: u16,
    },
    Module {
        id: u32,
        path: u32,
        flags: u32,
    },
    File {
        id: u32,
        path: u32,
        copied: bool,
        flags: u32,
    },
    Function {
        id: u32,
        name: Option<u32>,
        module: Option<u32>,
        offset: u64,
        file: Option<u32>,
        line: u32,
        flags: u32,
    },
    Context(ContextRecord<'a>),
    Profile {
        prof_index: u32,
        is_summary: bool,
        flags: u32,
        id_tuple: Option<Vec<Identifier<'a>>>,
    },
    ProfileValues {
        prof_index: u32,
        ctx_id: u32,
        metric_ids: Col<'a, Value, u16>,
        values: Col<'a, Value, f64>,
    },
    ContextValues {
        ctx_id: u32,
        metric_id: u16,
        prof_indexes: Col<'a, ProfValue, u32>,
        values: Col<'a, ProfValue, f64>,
    },
    Trace {
        index: u32,
        prof_index: u32,
        samples: u64,
    },
    Samples {
        trace: u32,
        first: u64,
        timestamps: Col<'a, TraceElem, u64>,
        ctx_ids: Col<'a, TraceElem, u32>,
    },
}

/// A `context` record: one per context of the database, as `info` counts them and the
/// `contexts` table lists them. Fields that do not apply to a kind are `null`.
#[derive(Serialize, Default)]
struct ContextRecord<'a> {
    ctx_id: u32,
    /// `global`, `entry_point`, `context` or `elided`.
    kind: &'a str,
    /// The parent's ctxId: 0 for an entry point, null for the global and elided contexts.
    parent: Option<u32>,
    /// The global context 0, entry points 1, a context its parent's depth + 1; null for an
    /// elided context, whose place in the tree meta.db does not say.
    depth: Option<u32>,
    entry_point: Option<String>,
    pretty_name: Option<u32>,
    relation: Option<String>,
    lexical_type: Option<String>,
    propagation: Option<u16>,
    flags: Option<u8>,
    function: Option<u32>,
    file: Option<u32>,
    line: Option<u32>,
    module: Option<u32>,
    offset: Option<u64>,
}

/// The string ids of a dump: each string of meta.db is written once, the first time a record
/// refers to it (strings are told apart by position; `check_overlaps` made shared strings
/// whole).
struct Strings<'a> {
    data: &'a [u8],
    ids: HashMap<usize, u32>,
}

impl<'a> Strings<'a> {
    fn id(&mut self, dump: &mut Dump<'_>, text: &'a str) -> Result<u32, Error> {
        let at = text.as_ptr() as usize - self.data.as_ptr() as usize;
        if let Some(&id) = self.ids.get(&at) {
            return Ok(id);
        }
        let id = self.ids.len() as u32;
        self.ids.insert(at, id);
        dump.record(&Record::String { id, text })?;
        Ok(id)
    }
}

/// Streams the header, then the records of meta.db, profile.db, cct.db and trace.db in turn.
pub(super) fn dump(files: &DatabaseFiles<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    let meta = files.meta().map_err(invalid)?;
    let profile = files.profile().map_err(invalid)?;
    let cct = files.cct().map_err(invalid)?;
    let trace = files.trace().map_err(invalid)?;
    let versions = [
        meta.map(|m| m.version()),
        profile.map(|p| p.version()),
        cct.map(|c| c.version()),
        trace.map(|t| t.version()),
    ];
    let mut version_text: Vec<String> = versions.iter().flatten().map(|&v| version(v)).collect();
    version_text.dedup();
    dump.header(&Header {
        format: crate::FORMAT_NAME,
        version: version_text.join(","),
        files: files.names(),
        title: meta.map(|m| m.title()).transpose().map_err(invalid)?,
        description: meta.map(|m| m.description()).transpose().map_err(invalid)?,
        n_ctxs: cct.map(|c| c.context_count()),
        min_timestamp_ns: trace.map(|t| t.min_timestamp()),
        max_timestamp_ns: trace.map(|t| t.max_timestamp()),
    })?;
    if let Some(p) = &profile {
        // Before meta.db's records too: the elided contexts are read from every profile.
        p.check_overlaps().map_err(invalid)?;
    }
    if let Some(m) = &meta {
        dump_meta(m, profile.as_ref(), cct.as_ref(), dump)?;
    }
    if let Some(p) = &profile {
        let kinds = kind_names(meta.as_ref())?;
        for prof in p.profiles() {
            let prof = prof.map_err(invalid)?;
            let id_tuple = prof.id_tuple.map(|t| {
                t.ids
                    .iter()
                    .map(|id| Identifier {
                        kind: kinds.get(usize::from(id.kind)).map_or_else(
                            || Cow::Owned(format!("unknown_{}", id.kind)),
                            |k| Cow::Borrowed(k.as_str()),
                        ),
                        logical_id: id.logical_id.get(),
                        physical_id: id.physical_id.get(),
                        flags: id.flags.get(),
                    })
                    .collect()
            });
            dump.record(&Record::Profile {
                prof_index: prof.index,
                is_summary: prof.is_summary(),
                flags: prof.flags,
                id_tuple,
            })?;
            for (ctx_id, values) in prof.contexts() {
                dump.record(&Record::ProfileValues {
                    prof_index: prof.index,
                    ctx_id,
                    metric_ids: Col(values, Value::metric_id),
                    values: Col(values, Value::value),
                })?;
            }
        }
    }
    if let Some(c) = &cct {
        c.check_overlaps().map_err(invalid)?;
        for ctx in c.contexts() {
            let ctx = ctx.map_err(invalid)?;
            for (metric_id, values) in ctx.metrics() {
                dump.record(&Record::ContextValues {
                    ctx_id: ctx.ctx_id,
                    metric_id,
                    prof_indexes: Col(values, ProfValue::prof_index),
                    values: Col(values, ProfValue::value),
                })?;
            }
        }
    }
    if let Some(t) = &trace {
        t.check_overlaps().map_err(invalid)?;
        for tr in t.traces() {
            let tr = tr.map_err(invalid)?;
            dump.record(&Record::Trace {
                index: tr.index,
                prof_index: tr.prof_index,
                samples: tr.elems.len() as u64,
            })?;
            for (k, chunk) in tr.elems.chunks(SAMPLES_PER_RECORD).enumerate() {
                dump.record(&Record::Samples {
                    trace: tr.index,
                    first: (k * SAMPLES_PER_RECORD) as u64,
                    timestamps: Col(chunk, TraceElem::timestamp),
                    ctx_ids: Col(chunk, TraceElem::ctx_id),
                })?;
            }
        }
    }
    Ok(())
}

fn dump_meta(
    m: &MetaDb<'_>,
    profile: Option<&ProfileDb<'_>>,
    cct: Option<&CctDb<'_>>,
    dump: &mut Dump<'_>,
) -> Result<(), Error> {
    m.check_overlaps().map_err(invalid)?;
    let mut strings = Strings {
        data: m.data(),
        ids: HashMap::new(),
    };
    for (kind, name) in m.id_names().enumerate() {
        dump.record(&Record::IdName {
            kind: kind as u8,
            name: name.map_err(invalid)?,
        })?;
    }
    for s in m.scopes() {
        let s = s.map_err(invalid)?;
        dump.record(&Record::Scope {
            id: s.index.0,
            name: s.name,
            scope_type: s.kind.to_string(),
            propagation_index: s.propagation_index,
        })?;
    }
    for metric in m.metrics() {
        let metric = metric.map_err(invalid)?;
        dump.record(&Record::Metric {
            id: metric.index,
            name: metric.name,
        })?;
        for i in m.scope_instances(&metric) {
            let i = i.map_err(invalid)?;
            dump.record(&Record::ScopeInstance {
                metric: metric.index,
                scope: i.scope.0,
                prop_metric_id: i.prop_metric_id,
            })?;
        }
        for s in m.summaries(&metric) {
            let s = s.map_err(invalid)?;
            dump.record(&Record::Summary {
                metric: metric.index,
                scope: s.scope.0,
                formula: s.formula,
                combine: s.combine.to_string(),
                stat_metric_id: s.stat_metric_id,
            })?;
        }
    }
    for x in m.modules() {
        let x = x.map_err(invalid)?;
        let path = strings.id(dump, x.path)?;
        dump.record(&Record::Module {
            id: x.index.0,
            path,
            flags: x.flags,
        })?;
    }
    for x in m.files() {
        let x = x.map_err(invalid)?;
        let path = strings.id(dump, x.path)?;
        dump.record(&Record::File {
            id: x.index.0,
            path,
            copied: x.is_copied(),
            flags: x.flags,
        })?;
    }
    for x in m.functions() {
        let x = x.map_err(invalid)?;
        let name = x.name.map(|n| strings.id(dump, n)).transpose()?;
        dump.record(&Record::Function {
            id: x.index.0,
            name,
            module: x.module.map(|ModuleIndex(i)| i),
            offset: x.offset,
            file: x.file.map(|FileIndex(i)| i),
            line: x.line,
            flags: x.flags,
        })?;
    }
    // The contexts: the global one first, then the tree in pre-order, then the elided ones
    // (ascending), so the records count what `info`'s `contexts` counts.
    let index = m.context_index().map_err(invalid)?;
    let elided = index.elided(profile, cct).map_err(invalid)?;
    if !index.contains(0) {
        dump.record(&Record::Context(ContextRecord {
            ctx_id: 0,
            kind: "global",
            depth: Some(0),
            ..ContextRecord::default()
        }))?;
    }
    for node in m.walk() {
        let node = node.map_err(invalid)?;
        // The walk counts from the entry points; the global context above them is depth 0.
        let depth = Some(node.depth + 1);
        let record = match node.node {
            ContextNode::EntryPoint(e) => ContextRecord {
                ctx_id: e.ctx_id,
                kind: "entry_point",
                parent: Some(node.parent),
                depth,
                entry_point: Some(e.kind.to_string()),
                pretty_name: Some(strings.id(dump, e.pretty_name)?),
                ..ContextRecord::default()
            },
            ContextNode::Context(c) => ContextRecord {
                ctx_id: c.ctx_id,
                kind: "context",
                parent: Some(node.parent),
                depth,
                relation: Some(c.relation.to_string()),
                lexical_type: Some(c.lexical_type.to_string()),
                propagation: Some(c.propagation),
                flags: Some(c.flags),
                function: c.function.map(|FunctionIndex(i)| i),
                file: c.file.map(|FileIndex(i)| i),
                line: c.line,
                module: c.module.map(|ModuleIndex(i)| i),
                offset: c.module_offset,
                ..ContextRecord::default()
            },
        };
        dump.record(&Record::Context(record))?;
    }
    for ctx_id in elided {
        dump.record(&Record::Context(ContextRecord {
            ctx_id,
            kind: "elided",
            ..ContextRecord::default()
        }))?;
    }
    Ok(())
}
