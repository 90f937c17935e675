//! Shared by the hostile-input tests (`hostile.rs`, `allocation.rs`): decode everything a file
//! offers, and find its count fields.
#![allow(dead_code)]

use std::path::PathBuf;

use profcodec_hpctoolkit::read::ContextNode;
use profcodec_hpctoolkit::{CctDb, Database, Error, FileKind, MetaDb, ProfileDb, TraceDb};

/// Every `.db` file of the corpus with its kind (empty without a corpus).
pub(crate) fn corpus_files() -> Vec<(FileKind, PathBuf)> {
    let Some(root) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    else {
        return Vec::new();
    };
    profcodec_testkit::corpus::files_below(&root)
        .into_iter()
        .filter_map(|p| {
            let kind = FileKind::ALL
                .into_iter()
                .find(|k| p.file_name().is_some_and(|n| n == k.file_name()))?;
            Some((kind, p))
        })
        .collect()
}

/// Decodes everything in `data` as a `kind` file, through validate and through every accessor
/// (also after validate fails), and returns the first error.
pub(crate) fn touch(kind: FileKind, data: &[u8]) -> Result<(), Error> {
    match kind {
        FileKind::Meta => touch_meta(data),
        FileKind::Profile => touch_profile(data),
        FileKind::Cct => touch_cct(data),
        FileKind::Trace => touch_trace(data),
    }
}

/// Keeps the first error of many results, without allocating (the allocation test measures
/// the reader, not this harness).
#[derive(Default)]
struct First(Option<Error>);

impl First {
    fn keep<T>(&mut self, r: Result<T, Error>) {
        if let (None, Err(e)) = (&self.0, r) {
            self.0 = Some(e);
        }
    }

    fn all<T>(&mut self, it: impl IntoIterator<Item = Result<T, Error>>) {
        for r in it {
            self.keep(r);
        }
    }

    fn result(self) -> Result<(), Error> {
        self.0.map_or(Ok(()), Err)
    }
}

pub(crate) fn touch_meta(data: &[u8]) -> Result<(), Error> {
    let m = MetaDb::parse(data)?;
    let mut f = First::default();
    f.keep(m.validate());
    f.keep(m.title());
    f.keep(m.description());
    f.all(m.id_names());
    f.all(m.scopes());
    for metric in m.metrics() {
        match metric {
            Ok(metric) => {
                f.all(m.scope_instances(&metric));
                f.all(m.summaries(&metric));
            }
            Err(e) => f.keep::<()>(Err(e)),
        }
    }
    f.all(m.modules());
    f.all(m.files());
    f.all(m.functions());
    for node in m.walk() {
        match node {
            Ok(n) => {
                if let ContextNode::Context(c) = n.node {
                    f.all(m.children(c.children));
                }
            }
            Err(e) => f.keep::<()>(Err(e)),
        }
    }
    match m.context_index() {
        Ok(index) => {
            for id in index.ctx_ids() {
                if let Some(r) = m.context(&index, id) {
                    f.keep(r);
                }
            }
        }
        Err(e) => f.keep::<()>(Err(e)),
    }
    f.result()
}

pub(crate) fn touch_profile(data: &[u8]) -> Result<(), Error> {
    let p = ProfileDb::parse(data)?;
    let mut f = First::default();
    f.keep(p.validate());
    for prof in p.profiles() {
        match prof {
            Ok(prof) => {
                for (ctx, vals) in prof.contexts() {
                    for v in vals {
                        let _ = prof.value(ctx, v.metric_id());
                    }
                }
                let _ = prof.value(0, 0);
            }
            Err(e) => f.keep::<()>(Err(e)),
        }
    }
    f.result()
}

pub(crate) fn touch_cct(data: &[u8]) -> Result<(), Error> {
    let c = CctDb::parse(data)?;
    let _ = c.header_gap();
    let mut f = First::default();
    f.keep(c.validate());
    for ctx in c.contexts() {
        match ctx {
            Ok(ctx) => {
                for (m, vals) in ctx.metrics() {
                    for v in vals {
                        let _ = ctx.value(v.prof_index(), m);
                    }
                }
            }
            Err(e) => f.keep::<()>(Err(e)),
        }
    }
    f.result()
}

pub(crate) fn touch_trace(data: &[u8]) -> Result<(), Error> {
    let t = TraceDb::parse(data)?;
    let mut f = First::default();
    f.keep(t.validate());
    for tr in t.traces() {
        match tr {
            Ok(tr) => {
                let _ = tr.at_or_before(t.min_timestamp());
                let _ = tr.at_or_before(u64::MAX);
            }
            Err(e) => f.keep::<()>(Err(e)),
        }
    }
    f.result()
}

/// Opens the four parts as a database and validates it, cross-links included.
pub(crate) fn touch_database(
    meta: &[u8],
    profile: Option<&[u8]>,
    cct: Option<&[u8]>,
    trace: Option<&[u8]>,
) -> Result<(), Error> {
    let db = Database::from_parts(meta, profile, cct, trace)?;
    let r = db.validate();
    for id in db.context_index().ctx_ids() {
        let _ = db.context(id);
    }
    let _ = db.id_tuple(1);
    let _ = db.value(0, 0, 0);
    r
}

/// Offsets and widths (bytes) of every count and size field of a valid file: what a hostile
/// writer would inflate.
pub(crate) fn count_fields(kind: FileKind, data: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    match kind {
        FileKind::Meta => {
            let m = MetaDb::parse(data).expect("valid meta.db");
            let h = *m.header();
            out.push((h.id_names.offset as usize + 8, 1));
            out.push((h.metrics.offset as usize + 8, 4));
            out.push((h.metrics.offset as usize + 0x18, 2));
            out.push((h.modules.offset as usize + 8, 4));
            out.push((h.files.offset as usize + 8, 4));
            out.push((h.functions.offset as usize + 8, 4));
            out.push((h.context.offset as usize + 8, 2));
            for metric in m.metrics() {
                let metric = metric.expect("metric");
                out.push((metric.offset as usize + 0x18, 2));
                out.push((metric.offset as usize + 0x1a, 2));
            }
            for node in m.walk() {
                // szChildren of every entry point and context.
                out.push((node.expect("node").node.offset() as usize, 8));
            }
            for (i, s) in [
                h.general,
                h.id_names,
                h.metrics,
                h.context,
                h.strings,
                h.modules,
                h.files,
                h.functions,
            ]
            .iter()
            .enumerate()
            {
                let _ = s;
                out.push((0x10 + 0x10 * i, 8));
            }
        }
        FileKind::Profile => {
            let p = ProfileDb::parse(data).expect("valid profile.db");
            let h = *p.header();
            out.push((h.profile_infos.offset as usize + 8, 4));
            out.push((0x10, 8));
            out.push((0x20, 8));
            for prof in p.profiles() {
                let prof = prof.expect("profile");
                out.push((prof.offset as usize, 8));
                out.push((prof.offset as usize + 0x10, 4));
                if let Some(t) = prof.id_tuple {
                    out.push((t.offset as usize, 2));
                }
            }
        }
        FileKind::Cct => {
            let c = CctDb::parse(data).expect("valid cct.db");
            let h = *c.header();
            out.push((h.ctx_infos.offset as usize + 8, 4));
            out.push((0x10, 8));
            for ctx in c.contexts() {
                let ctx = ctx.expect("context");
                out.push((ctx.offset as usize, 8));
                out.push((ctx.offset as usize + 0x10, 2));
            }
        }
        FileKind::Trace => {
            let t = TraceDb::parse(data).expect("valid trace.db");
            let h = *t.header();
            out.push((h.ctx_traces.offset as usize + 8, 4));
            out.push((0x10, 8));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `data` with the field at `at` (`width` bytes) set to its largest value.
pub(crate) fn patched_max(data: &[u8], at: usize, width: usize) -> Vec<u8> {
    let mut out = data.to_vec();
    for b in &mut out[at..at + width] {
        *b = 0xff;
    }
    out
}
