//! The owned model from the reader's views (`to_model`): what `profcodec rewrite` and the round
//! trips go through.

use std::collections::HashMap;

use crate::Error;
use crate::model::{
    CodePoint, Context, ContextHandle, ContextMajor, ContextStart, ContextValues, Database,
    EntryPoint, EntryPointHandle, FileHandle, Function, FunctionHandle, Identifier, LoadModule,
    Meta, Metric, MetricStart, MetricValue, ModuleHandle, Parent, Profile, ProfileValue,
    ProfileValues, PropagationScope, ScopeHandle, ScopeInstance, SourceFile, SourceLocation,
    Summary, Trace, TraceElement, Traces,
};
use crate::read::{self, CctDb, ContextNode, MetaDb, ProfileDb, TraceDb};

impl Database {
    /// Copies a whole database out of the reader's views.
    pub fn from_read<B: AsRef<[u8]>>(db: &read::Database<B>) -> Result<Self, Error> {
        Ok(Database {
            meta: Meta::from_read(&db.meta())?,
            profiles: match db.profile() {
                Some(p) => profiles_from_read(&p)?,
                None => Vec::new(),
            },
            context_major: db.cct().map(|c| ContextMajor::from_read(&c)).transpose()?,
            traces: db.trace().map(|t| Traces::from_read(&t)).transpose()?,
        })
    }
}

impl Meta {
    /// Copies meta.db out of its view; contexts come in the reader's tree order (pre-order).
    ///
    /// Runs [`MetaDb::check_overlaps`] first, so the strings copied (a shared one once per
    /// reference) stay within a fixed multiple of the file.
    pub fn from_read(meta: &MetaDb<'_>) -> Result<Self, Error> {
        meta.check_overlaps()?;
        let mut out = Meta {
            title: meta.title()?.to_owned(),
            description: meta.description()?.to_owned(),
            ..Meta::default()
        };
        for name in meta.id_names() {
            out.id_names.push(name?.to_owned());
        }
        for s in meta.scopes() {
            let s = s?;
            out.scopes.push(PropagationScope {
                name: s.name.to_owned(),
                scope_type: s.kind,
                propagation_index: s.propagation_index,
            });
        }
        for m in meta.metrics() {
            let m = m?;
            let mut metric = Metric {
                name: m.name.to_owned(),
                ..Metric::default()
            };
            for i in meta.scope_instances(&m) {
                let i = i?;
                metric.scope_insts.push(ScopeInstance {
                    scope: ScopeHandle(u32::from(i.scope.0)),
                    prop_metric_id: i.prop_metric_id,
                });
            }
            for s in meta.summaries(&m) {
                let s = s?;
                metric.summaries.push(Summary {
                    scope: ScopeHandle(u32::from(s.scope.0)),
                    formula: s.formula.to_owned(),
                    combine: s.combine,
                    stat_metric_id: s.stat_metric_id,
                });
            }
            out.metrics.push(metric);
        }
        for m in meta.modules() {
            let m = m?;
            out.modules.push(LoadModule {
                flags: m.flags,
                path: m.path.to_owned(),
            });
        }
        for f in meta.files() {
            let f = f?;
            out.files.push(SourceFile {
                flags: f.flags,
                path: f.path.to_owned(),
            });
        }
        for f in meta.functions() {
            let f = f?;
            out.functions.push(Function {
                name: f.name.map(str::to_owned),
                module: f.module.map(|m| ModuleHandle(m.0)),
                offset: f.offset,
                file: f.file.map(|x| FileHandle(x.0)),
                line: f.line,
                flags: f.flags,
            });
        }
        // ctxId -> the model's parent for children of that node.
        let mut parents: HashMap<u32, Parent> = HashMap::new();
        for node in meta.walk() {
            let node = node?;
            let parent = if node.depth == 0 {
                None
            } else {
                parents.get(&node.parent).copied()
            };
            match node.node {
                ContextNode::EntryPoint(e) => {
                    let h = EntryPointHandle(out.entry_points.len() as u32);
                    out.entry_points.push(EntryPoint {
                        ctx_id: e.ctx_id,
                        kind: e.kind,
                        pretty_name: e.pretty_name.to_owned(),
                    });
                    parents.insert(e.ctx_id, Parent::EntryPoint(h));
                }
                ContextNode::Context(c) => {
                    // The walk only yields a context after its parent.
                    let Some(parent) = parent else { continue };
                    let h = ContextHandle(out.contexts.len() as u32);
                    out.contexts.push(Context {
                        parent,
                        ctx_id: c.ctx_id,
                        relation: c.relation,
                        lexical_type: c.lexical_type,
                        propagation: c.propagation,
                        function: c.function.map(|f| FunctionHandle(f.0)),
                        source: c.file.zip(c.line).map(|(f, line)| SourceLocation {
                            file: FileHandle(f.0),
                            line,
                        }),
                        point: c.module.zip(c.module_offset).map(|(m, offset)| CodePoint {
                            module: ModuleHandle(m.0),
                            offset,
                        }),
                    });
                    parents.insert(c.ctx_id, Parent::Context(h));
                }
            }
        }
        Ok(out)
    }
}

/// Copies every profile of profile.db, in `profIndex` order.
///
/// Runs [`ProfileDb::check_overlaps`] first: what is copied is at most the file's arrays once.
pub fn profiles_from_read(profile: &ProfileDb<'_>) -> Result<Vec<Profile>, Error> {
    profile.check_overlaps()?;
    let mut out = Vec::new();
    for p in profile.profiles() {
        let p = p?;
        out.push(Profile {
            flags: p.flags,
            id_tuple: p.id_tuple.map(|t| {
                t.ids
                    .iter()
                    .map(|i| Identifier {
                        kind: i.kind,
                        flags: i.flags.get(),
                        logical_id: i.logical_id.get(),
                        physical_id: i.physical_id.get(),
                    })
                    .collect()
            }),
            values: ProfileValues {
                contexts: p
                    .ctx_indices
                    .iter()
                    .map(|c| ContextStart {
                        ctx_id: c.ctx_id(),
                        start: c.start_index(),
                    })
                    .collect(),
                values: p
                    .values
                    .iter()
                    .map(|v| MetricValue {
                        metric_id: v.metric_id(),
                        value: v.value(),
                    })
                    .collect(),
            },
        });
    }
    Ok(out)
}

impl ContextMajor {
    /// Copies every context block of cct.db.
    ///
    /// Runs [`CctDb::check_overlaps`] first: what is copied is at most the file's arrays once.
    pub fn from_read(cct: &CctDb<'_>) -> Result<Self, Error> {
        cct.check_overlaps()?;
        let mut contexts = Vec::new();
        for c in cct.contexts() {
            let c = c?;
            contexts.push(ContextValues {
                metrics: c
                    .metric_indices
                    .iter()
                    .map(|m| MetricStart {
                        metric_id: m.metric_id(),
                        start: m.start_index(),
                    })
                    .collect(),
                values: c
                    .values
                    .iter()
                    .map(|v| ProfileValue {
                        prof_index: v.prof_index(),
                        value: v.value(),
                    })
                    .collect(),
            });
        }
        Ok(ContextMajor { contexts })
    }
}

impl Traces {
    /// Copies trace.db.
    ///
    /// Runs [`TraceDb::check_overlaps`] first: what is copied is at most the file's lines once.
    pub fn from_read(trace: &TraceDb<'_>) -> Result<Self, Error> {
        trace.check_overlaps()?;
        let mut traces = Vec::new();
        for t in trace.traces() {
            let t = t?;
            traces.push(Trace {
                prof_index: t.prof_index,
                elements: t
                    .elems
                    .iter()
                    .map(|e| TraceElement {
                        timestamp: e.timestamp(),
                        ctx_id: e.ctx_id(),
                    })
                    .collect(),
            });
        }
        Ok(Traces {
            min_timestamp: trace.min_timestamp(),
            max_timestamp: trace.max_timestamp(),
            traces,
        })
    }
}
