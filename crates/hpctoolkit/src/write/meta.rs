//! meta.db writer (FORMATS.md, `meta.db` version 4.0; hpctoolkit-db-v4.md).
//!
//! meta.db is small next to the value files, so it is laid out in memory and written at once.
//! Section order in the file is hpcprof's (General, IdNames, Metrics, Strings, Modules, Files,
//! Functions, Context), not the header's; every section starts 8-byte-aligned; strings of a
//! section come right after its header; child context arrays are written before their
//! parents', the entry points last; the footer `_meta.db` follows.

use std::collections::HashMap;
use std::io::{self, Write};

use super::bytes::{Buf, check_cstr, file_header};
use super::invalid;
use crate::model::{Context, Meta, Parent};

/// The footer of meta.db.
const FOOTER: &[u8; 8] = b"_meta.db";
/// Size of the file header: eight sections.
const HEADER_SIZE: usize = 0x90;
/// {MD}, {PSI}, {SS}, {PS} sizes.
const METRIC_SIZE: u64 = 0x20;
const SCOPE_INST_SIZE: u64 = 0x10;
const SUMMARY_SIZE: u64 = 0x18;
const SCOPE_SIZE: u64 = 0x10;
// [LMS], [SFS], [FS] sizes.
const MODULE_SIZE: u64 = 0x10;
const FILE_SIZE: u64 = 0x10;
const FUNCTION_SIZE: u64 = 0x28;
/// {Entry} size.
const ENTRY_POINT_SIZE: u64 = 0x20;

/// Context flags (FORMATS.md, Context Tree section, {Flags}).
const HAS_FUNCTION: u8 = 1;
const HAS_SRC_LOC: u8 = 2;
const HAS_POINT: u8 = 4;

/// Writes meta.db.
pub fn write_meta<W: Write>(meta: &Meta, mut out: W) -> io::Result<()> {
    out.write_all(&meta_bytes(meta)?)
}

/// Section `(size, pointer)` pairs, in header order.
#[derive(Default)]
struct Sections {
    general: (u64, u64),
    id_names: (u64, u64),
    metrics: (u64, u64),
    context: (u64, u64),
    strings: (u64, u64),
    modules: (u64, u64),
    files: (u64, u64),
    functions: (u64, u64),
}

fn begin(buf: &mut Buf) -> u64 {
    buf.align(8);
    buf.pos()
}

fn meta_bytes(meta: &Meta) -> io::Result<Vec<u8>> {
    check_handles(meta)?;
    let mut buf = Buf::default();
    buf.zeros(HEADER_SIZE);
    let mut s = Sections::default();

    // General Properties: the strings live inside the section.
    let start = begin(&mut buf);
    check_cstr(&meta.title, "title")?;
    check_cstr(&meta.description, "description")?;
    buf.zeros(0x10);
    let title = buf.cstr(&meta.title);
    let description = buf.cstr(&meta.description);
    buf.put_u64(start, title);
    buf.put_u64(start + 8, description);
    s.general = (buf.pos() - start, start);

    // Identifier Names: header, strings (with hpcprof's unused "" first), pointer array.
    let start = begin(&mut buf);
    let n_kinds =
        u8::try_from(meta.id_names.len()).map_err(|_| invalid("more than 255 identifier names"))?;
    buf.zeros(8);
    buf.u8(n_kinds);
    buf.cstr("");
    let mut ptrs = Vec::with_capacity(meta.id_names.len());
    for name in &meta.id_names {
        check_cstr(name, "identifier name")?;
        ptrs.push(buf.cstr(name));
    }
    buf.align(8);
    buf.put_u64(start, buf.pos());
    for p in ptrs {
        buf.u64(p);
    }
    s.id_names = (buf.pos() - start, start);

    s.metrics = write_metrics(&mut buf, meta)?;

    // Common String Table: every string of modules, files, functions and entry points, once.
    let start = begin(&mut buf);
    let mut strings: HashMap<&str, u64> = HashMap::new();
    let all = meta
        .entry_points
        .iter()
        .map(|e| e.pretty_name.as_str())
        .chain(meta.functions.iter().filter_map(|f| f.name.as_deref()))
        .chain(meta.modules.iter().map(|m| m.path.as_str()))
        .chain(meta.files.iter().map(|f| f.path.as_str()));
    for text in all {
        check_cstr(text, "string")?;
        if !strings.contains_key(text) {
            let at = buf.cstr(text);
            strings.insert(text, at);
        }
    }
    let string = |s: &str| strings.get(s).copied().unwrap_or(0);
    s.strings = (buf.pos() - start, start);

    // Load Modules and Source Files: a 0x0e-byte header, then the array at +0x10.
    let table = |buf: &mut Buf, n: usize, size: u64| -> io::Result<(u64, u64)> {
        let start = begin(buf);
        let n = u32::try_from(n).map_err(|_| invalid("more than u32::MAX table entries"))?;
        buf.u64(start + 0x10);
        buf.u32(n);
        buf.u16(size as u16);
        buf.align(8);
        Ok((start, start + 0x10))
    };
    let (start, modules_at) = table(&mut buf, meta.modules.len(), MODULE_SIZE)?;
    for m in &meta.modules {
        buf.u32(m.flags);
        buf.u32(0);
        buf.u64(string(&m.path));
    }
    s.modules = (buf.pos() - start, start);
    let (start, files_at) = table(&mut buf, meta.files.len(), FILE_SIZE)?;
    for f in &meta.files {
        buf.u32(f.flags);
        buf.u32(0);
        buf.u64(string(&f.path));
    }
    s.files = (buf.pos() - start, start);
    let module_ptr = |h: crate::model::ModuleHandle| modules_at + MODULE_SIZE * u64::from(h.0);
    let file_ptr = |h: crate::model::FileHandle| files_at + FILE_SIZE * u64::from(h.0);
    let (start, functions_at) = table(&mut buf, meta.functions.len(), FUNCTION_SIZE)?;
    for f in &meta.functions {
        buf.u64(f.name.as_deref().map_or(0, string));
        buf.u64(f.module.map_or(0, module_ptr));
        buf.u64(f.offset);
        buf.u64(f.file.map_or(0, file_ptr));
        buf.u32(f.line);
        buf.u32(f.flags);
    }
    s.functions = (buf.pos() - start, start);
    let function_ptr =
        |h: crate::model::FunctionHandle| functions_at + FUNCTION_SIZE * u64::from(h.0);

    // Context Tree: header, child arrays bottom-up (each before its parent's), then the entry
    // points (hpctoolkit-db-v4.md).
    let start = begin(&mut buf);
    let n_entries = u16::try_from(meta.entry_points.len())
        .map_err(|_| invalid("more than u16::MAX entry points"))?;
    buf.zeros(8);
    buf.u16(n_entries);
    buf.u8(ENTRY_POINT_SIZE as u8);
    let (of_entry, of_context) = meta.children();
    let mut children_of = vec![(0u64, 0u64); meta.contexts.len()];
    let write_children =
        |buf: &mut Buf, kids: &[crate::model::ContextHandle], children_of: &[(u64, u64)]| {
            if kids.is_empty() {
                return (0, 0);
            }
            buf.align(8);
            let at = buf.pos();
            for k in kids {
                let c: &Context = &meta.contexts[k.index()];
                let (sz, ptr) = children_of[k.index()];
                let mut flags = 0;
                let mut flex: Vec<u64> = Vec::with_capacity(5);
                if let Some(f) = c.function {
                    flags |= HAS_FUNCTION;
                    flex.push(function_ptr(f));
                }
                if let Some(src) = c.source {
                    flags |= HAS_SRC_LOC;
                    flex.push(file_ptr(src.file));
                    flex.push(u64::from(src.line));
                }
                if let Some(p) = c.point {
                    flags |= HAS_POINT;
                    flex.push(module_ptr(p.module));
                    flex.push(p.offset);
                }
                buf.u64(sz);
                buf.u64(ptr);
                buf.u32(c.ctx_id);
                buf.u8(flags);
                buf.u8(c.relation.0);
                buf.u8(c.lexical_type.0);
                buf.u8(flex.len() as u8);
                buf.u16(c.propagation);
                buf.zeros(6);
                for w in flex {
                    buf.u64(w);
                }
            }
            (buf.pos() - at, at)
        };
    // Reverse pre-order puts every context after all its descendants, and depends on the tree
    // only (not on the order of `meta.contexts`), so equal trees give equal bytes.
    for h in meta.tree_order().into_iter().rev() {
        children_of[h.index()] = write_children(&mut buf, &of_context[h.index()], &children_of);
    }
    let entry_children: Vec<(u64, u64)> = of_entry
        .iter()
        .map(|kids| write_children(&mut buf, kids, &children_of))
        .collect();
    buf.align(8);
    let entries_at = if meta.entry_points.is_empty() {
        0
    } else {
        buf.pos()
    };
    buf.put_u64(start, entries_at);
    for (e, (sz, ptr)) in meta.entry_points.iter().zip(entry_children) {
        buf.u64(sz);
        buf.u64(ptr);
        buf.u32(e.ctx_id);
        buf.u16(e.kind.0);
        buf.u16(0);
        buf.u64(string(&e.pretty_name));
    }
    s.context = (buf.pos() - start, start);

    buf.align(8);
    buf.bytes.extend_from_slice(FOOTER);
    let mut head = Buf::default();
    file_header(
        &mut head,
        b"meta",
        &[
            s.general,
            s.id_names,
            s.metrics,
            s.context,
            s.strings,
            s.modules,
            s.files,
            s.functions,
        ],
    );
    buf.bytes[..HEADER_SIZE].copy_from_slice(&head.bytes);
    // Shared strings are written once; the reader bounds what they expand to
    // (`MetaDb::check_overlaps`), so a model beyond that bound would give a file it refuses.
    let limit = crate::read::STRING_AMPLIFICATION
        .saturating_mul(buf.bytes.len() as u64)
        .saturating_add(crate::read::STRING_SLACK);
    if referenced_string_bytes(meta) > limit {
        return Err(invalid(
            "strings referred to more than 64 times the size of the meta.db they make",
        ));
    }
    Ok(buf.bytes)
}

/// The bytes of every string `meta` refers to, NUL included, a shared one once per reference.
fn referenced_string_bytes(meta: &Meta) -> u64 {
    let len = |s: &str| s.len() as u64 + 1;
    let metrics = meta
        .metrics
        .iter()
        .map(|m| len(&m.name) + m.summaries.iter().map(|s| len(&s.formula)).sum::<u64>());
    len(&meta.title)
        + len(&meta.description)
        + meta.id_names.iter().map(|n| len(n)).sum::<u64>()
        + meta.scopes.iter().map(|s| len(&s.name)).sum::<u64>()
        + metrics.sum::<u64>()
        + meta.modules.iter().map(|m| len(&m.path)).sum::<u64>()
        + meta.files.iter().map(|f| len(&f.path)).sum::<u64>()
        + meta
            .functions
            .iter()
            .filter_map(|f| f.name.as_deref().map(len))
            .sum::<u64>()
        + meta
            .entry_points
            .iter()
            .map(|e| len(&e.pretty_name))
            .sum::<u64>()
}

/// Performance Metrics: header, strings (scope names, formulas, metric names), then the scope,
/// scope-instance, summary and metric arrays.
fn write_metrics(buf: &mut Buf, meta: &Meta) -> io::Result<(u64, u64)> {
    let start = begin(buf);
    let n_metrics =
        u32::try_from(meta.metrics.len()).map_err(|_| invalid("more than u32::MAX metrics"))?;
    let n_scopes =
        u16::try_from(meta.scopes.len()).map_err(|_| invalid("more than u16::MAX scopes"))?;
    buf.zeros(8);
    buf.u32(n_metrics);
    buf.u8(METRIC_SIZE as u8);
    buf.u8(SCOPE_INST_SIZE as u8);
    buf.u8(SUMMARY_SIZE as u8);
    buf.u8(0);
    buf.zeros(8);
    buf.u16(n_scopes);
    buf.u8(SCOPE_SIZE as u8);
    let mut scope_names = Vec::with_capacity(meta.scopes.len());
    for sc in &meta.scopes {
        check_cstr(&sc.name, "scope name")?;
        scope_names.push(buf.cstr(&sc.name));
    }
    let mut formulas = Vec::new();
    let mut names = Vec::with_capacity(meta.metrics.len());
    for m in &meta.metrics {
        check_cstr(&m.name, "metric name")?;
        names.push(buf.cstr(&m.name));
        u16::try_from(m.scope_insts.len())
            .map_err(|_| invalid("more than u16::MAX scope instances"))?;
        u16::try_from(m.summaries.len()).map_err(|_| invalid("more than u16::MAX summaries"))?;
        for sm in &m.summaries {
            check_cstr(&sm.formula, "formula")?;
            formulas.push(buf.cstr(&sm.formula));
        }
    }
    buf.align(8);
    let scopes_at = buf.pos();
    buf.put_u64(start + 0x10, scopes_at);
    for (sc, name) in meta.scopes.iter().zip(&scope_names) {
        buf.u64(*name);
        buf.u8(sc.scope_type.0);
        buf.u8(sc.propagation_index);
        buf.zeros(6);
    }
    let scope_ptr = |h: crate::model::ScopeHandle| scopes_at + SCOPE_SIZE * u64::from(h.0);
    let mut insts_at = Vec::with_capacity(meta.metrics.len());
    for m in &meta.metrics {
        insts_at.push(buf.pos());
        for i in &m.scope_insts {
            buf.u64(scope_ptr(i.scope));
            buf.u16(i.prop_metric_id);
            buf.zeros(6);
        }
    }
    let mut formulas = formulas.into_iter();
    let mut summaries_at = Vec::with_capacity(meta.metrics.len());
    for m in &meta.metrics {
        summaries_at.push(buf.pos());
        for sm in &m.summaries {
            buf.u64(scope_ptr(sm.scope));
            buf.u64(formulas.next().unwrap_or(0));
            buf.u8(sm.combine.0);
            buf.u8(0);
            buf.u16(sm.stat_metric_id);
            buf.zeros(4);
        }
    }
    buf.put_u64(start, buf.pos());
    for (i, m) in meta.metrics.iter().enumerate() {
        buf.u64(names[i]);
        buf.u64(insts_at[i]);
        buf.u64(summaries_at[i]);
        buf.u16(m.scope_insts.len() as u16);
        buf.u16(m.summaries.len() as u16);
        buf.zeros(4);
    }
    Ok((buf.pos() - start, start))
}

/// Every handle names an existing item, and every context's parent comes before it.
fn check_handles(meta: &Meta) -> io::Result<()> {
    let scope_ok = |h: crate::model::ScopeHandle| h.index() < meta.scopes.len();
    for m in &meta.metrics {
        if !m.scope_insts.iter().all(|i| scope_ok(i.scope))
            || !m.summaries.iter().all(|s| scope_ok(s.scope))
        {
            return Err(invalid("a metric names a scope that does not exist"));
        }
    }
    let module_ok = |h: crate::model::ModuleHandle| h.index() < meta.modules.len();
    let file_ok = |h: crate::model::FileHandle| h.index() < meta.files.len();
    for f in &meta.functions {
        if !f.module.is_none_or(module_ok) || !f.file.is_none_or(file_ok) {
            return Err(invalid(
                "a function names a module or file that does not exist",
            ));
        }
    }
    for (i, c) in meta.contexts.iter().enumerate() {
        let parent_ok = match c.parent {
            Parent::EntryPoint(e) => e.index() < meta.entry_points.len(),
            Parent::Context(p) => p.index() < i,
        };
        if !parent_ok {
            return Err(invalid(
                "a context's parent does not exist or does not come before it",
            ));
        }
        let function_ok = c.function.is_none_or(|f| f.index() < meta.functions.len());
        let source_ok = c.source.is_none_or(|s| file_ok(s.file));
        let point_ok = c.point.is_none_or(|p| module_ok(p.module));
        if !(function_ok && source_ok && point_ok) {
            return Err(invalid(
                "a context names a function, file or module that does not exist",
            ));
        }
    }
    check_ctx_ids(meta)
}

/// ctxIds above 0 (0 is the global context) and unique across entry points and contexts, as
/// readers require (FORMATS.md, Context Tree section).
fn check_ctx_ids(meta: &Meta) -> io::Result<()> {
    let mut ids: Vec<u32> = meta
        .entry_points
        .iter()
        .map(|e| e.ctx_id)
        .chain(meta.contexts.iter().map(|c| c.ctx_id))
        .collect();
    ids.sort_unstable();
    if ids.first() == Some(&0) {
        return Err(invalid("a ctxId of 0 (the global context) in the tree"));
    }
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return Err(invalid("a ctxId used twice in the context tree"));
    }
    Ok(())
}
