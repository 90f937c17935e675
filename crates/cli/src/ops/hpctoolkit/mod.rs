//! `profcodec` CLI operations for HPCToolkit databases (profcodec-hpctoolkit).
//!
//! `info`, `validate` and `dump` (the reading half) live here, the dump's records in
//! `records.rs`; `rewrite` (the writing half) lives in `rewrite.rs`; `profile` (the database
//! in the format-neutral model, for `top` and `diff`) is
//! [`profcodec_hpctoolkit::Database::to_profile`] with the choice of profiles below
//! ([`profile_options`]). Each accepts a database
//! directory or a single `.db` file; the files are memory-mapped through [`profcodec::open`].
//! The dump's record schema is documented in the CLI README (section "HPCToolkit").

use std::collections::BTreeSet;
use std::path::Path;

use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_hpctoolkit::{CctDb, Database, Error, FileKind, MetaDb, ProfileDb, TraceDb};
use serde_json::{Map, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::{Format, Opened};

mod records;
mod rewrite;
#[cfg(test)]
mod tests;

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

    /// The names of the files present, in FileKind order.
    fn names(&self) -> Vec<&'static str> {
        FileKind::ALL
            .into_iter()
            .filter(|k| {
                match k {
                    FileKind::Meta => &self.meta,
                    FileKind::Profile => &self.profile,
                    FileKind::Cct => &self.cct,
                    FileKind::Trace => &self.trace,
                }
                .is_some()
            })
            .map(FileKind::file_name)
            .collect()
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

/// The identifier kind names: meta.db's when there is one (hpcprof's list, lower case), else
/// the kinds hpcprof writes (SUMMARY, NODE, RANK, THREAD, GPUDEVICE, GPUCONTEXT, GPUSTREAM,
/// CORE).
fn kind_names(meta: Option<&MetaDb<'_>>) -> Result<Vec<String>, OpError> {
    const DEFAULT: [&str; 8] = [
        "summary",
        "node",
        "rank",
        "thread",
        "gpudevice",
        "gpucontext",
        "gpustream",
        "core",
    ];
    match meta {
        Some(m) => m
            .id_names()
            .map(|n| n.map(|n| n.to_ascii_lowercase()).map_err(invalid))
            .collect(),
        None => Ok(DEFAULT.iter().map(|&s| s.to_owned()).collect()),
    }
}

/// The most values of non-summary profiles the CLI reads into the model: below it `profile`
/// holds every profile (so `top --thread`/`--rank` and per-rank diffs work), above it the
/// summary profile only (what `top` shows by default), which keeps a database of tens of
/// thousands of profiles at the cost of its context tree. 2^20 stored values make about
/// 25 MB of model.
pub(crate) const ALL_PROFILES_MAX_VALUES: u64 = 1 << 20;

/// The profiles `profile` reads: all of them when their values number at most `max_values`
/// ([`ALL_PROFILES_MAX_VALUES`]), else the summary only. Counting reads the profile infos only.
fn profile_options(
    profiles: Option<&ProfileDb<'_>>,
    max_values: u64,
) -> Result<ProfileOptions, OpError> {
    let mut values = 0u64;
    if let Some(p) = profiles {
        for prof in p.profiles() {
            let prof = prof.map_err(invalid)?;
            if !prof.is_summary() {
                values += prof.values.len() as u64;
            }
        }
    }
    let which = if values <= max_values {
        Profiles::All
    } else {
        Profiles::SummaryOnly
    };
    Ok(ProfileOptions::new().profiles(which))
}

impl Codec for Hpctoolkit {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let files = Files::load(input)?;
        let meta = files.meta()?;
        let profile = files.profile()?;
        let cct = files.cct()?;
        let trace = files.trace()?;
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
            let contexts = m.context_index().map_err(invalid)?.len();
            d.insert("contexts".into(), json!(contexts));
            d.insert("functions".into(), json!(m.function_count()));
            d.insert("load_modules".into(), json!(m.module_count()));
            d.insert("source_files".into(), json!(m.file_count()));
            d.insert("entry_points".into(), json!(m.entry_point_count()));
            d.insert("propagation_scopes".into(), json!(m.scope_count()));
        }
        if let Some(c) = &cct {
            c.check_overlaps().map_err(invalid)?;
            versions.push(version(c.version()));
            d.insert("cct_contexts".into(), json!(c.context_count()));
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
        Ok(Info {
            format: input.format(),
            version: versions.join(","),
            details: d,
        })
    }

    /// The whole database through [`Database::validate`] (every file once, cross-links in the
    /// same passes: metric ids, profile indexes, trace ctxIds), or the single file's `validate`.
    /// Every file of the format ends with its footer, so no bytes can trail it: the findings
    /// are always empty.
    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
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
            db.validate().map_err(invalid)?;
            return Ok(Validated::default());
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
        Ok(Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let files = Files::load(input)?;
        records::dump(&files, input.format(), dump)
    }

    /// A database directory (meta.db and profile.db; cct.db and trace.db are not read) or a
    /// lone meta.db (the tree without values) in the profile model; see [`profile_options`]
    /// for which profiles.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        let files = Files::load(input)?;
        let Some(meta) = Files::bytes(&files.meta) else {
            return Err(OpError::Usage(
                "the profile model needs meta.db: give the database directory".to_owned(),
            ));
        };
        let db = Database::from_parts(meta, Files::bytes(&files.profile), None, None)
            .map_err(invalid)?;
        let options = profile_options(db.profile().as_ref(), ALL_PROFILES_MAX_VALUES)?;
        db.to_profile(&options).map_err(invalid)
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
