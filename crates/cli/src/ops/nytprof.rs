//! `profcodec` CLI operations for the nytprof format (profcodec-nytprof).
//!
//! Both layouts are handled: the real v5.0 stream and the old Pynytprof chunk layout (detected
//! by its blank line after the banner), which `rewrite --to nytprof` converts.

use std::path::Path;

use profcodec_nytprof::{Error, ModelOptions, Profile, Record, parse, pynytprof};
use serde_json::{Map, Value, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated, write_json};
use profcodec::Opened;

/// The nytprof codec.
pub(super) struct Nytprof;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// The zlib level a rewrite uses: the one the file states, else the profiler's default 6.
fn level_of(profile_options: &std::collections::BTreeMap<String, String>) -> u32 {
    profile_options
        .get("compress")
        .and_then(|v| v.parse::<u32>().ok())
        .filter(|l| *l > 0)
        .unwrap_or(6)
}

impl Codec for Nytprof {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let bytes = input.bytes();
        let mut details = Map::new();
        if pynytprof::detect(bytes) {
            let py = pynytprof::parse(bytes).map_err(invalid)?;
            details.insert("layout".into(), json!("pynytprof"));
            details.insert("files".into(), json!(py.files.len()));
            details.insert("lines".into(), json!(py.lines.len()));
            details.insert("subs".into(), json!(py.subs.len()));
            details.insert("calls".into(), json!(py.calls.len()));
            details.insert("ended".into(), json!(py.ended));
            return Ok(Info {
                format: input.format(),
                version: "5.0 (Pynytprof layout)".into(),
                details,
            });
        }
        let file = parse(bytes).map_err(invalid)?;
        let h = file.header();
        let mut records = 0u64;
        let mut compressed = false;
        for r in file.records() {
            if matches!(r.map_err(invalid)?, Record::StartDeflate) {
                compressed = true;
            }
            records += 1;
        }
        // The file's own file table; Devel::NYTProf::Data would show the evals collapsed.
        let profile = Profile::from_bytes_with(bytes, ModelOptions::raw()).map_err(invalid)?;
        let mut collapsed = profile.clone();
        collapsed.collapse_evals(ModelOptions::default().max_eval_siblings);
        for key in ["application", "perl_version", "xs_version", "ticks_per_sec"] {
            if let Some(v) = profile.attributes.get(key) {
                details.insert(key.into(), json!(v));
            }
        }
        details.insert("compressed".into(), json!(compressed));
        details.insert("records".into(), json!(records));
        details.insert("files".into(), json!(profile.files.len()));
        details.insert(
            "evals".into(),
            json!(profile.files.values().filter(|f| f.eval.is_some()).count()),
        );
        details.insert(
            "evals_after_collapse".into(),
            json!(
                collapsed
                    .files
                    .values()
                    .filter(|f| f.eval.is_some())
                    .count()
            ),
        );
        details.insert("subs".into(), json!(profile.subs.len()));
        details.insert("sub_calls".into(), json!(profile.totals.sub_calls));
        details.insert("statements".into(), json!(profile.totals.stmts_measured));
        details.insert(
            "statement_seconds".into(),
            json!(profile.totals.stmts_duration),
        );
        details.insert(
            "pids".into(),
            Value::Array(profile.pids.iter().map(|p| json!(p.pid)).collect()),
        );
        details.insert("complete".into(), json!(profile.complete()));
        Ok(Info {
            format: input.format(),
            version: format!("{}.{}", h.major, h.minor),
            details,
        })
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // Findings (trailing data) are not reported yet by this format.
        let checked = || -> Result<(), OpError> {
            let bytes = input.bytes();
            if pynytprof::detect(bytes) {
                return pynytprof::parse(bytes).map(|_| ()).map_err(invalid);
            }
            parse(bytes).and_then(|f| f.validate()).map_err(invalid)?;
            Profile::from_bytes(bytes).map(|_| ()).map_err(invalid)
        };
        checked().map(|()| Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        // The whole document as one record until this format streams its records.
        let mut buf = Vec::new();
        let out: &mut dyn std::io::Write = &mut buf;
        let mut whole = || -> Result<(), OpError> {
            let bytes = input.bytes();
            if pynytprof::detect(bytes) {
                let py = pynytprof::parse(bytes).map_err(invalid)?;
                return write_json(out, &json!({ "layout": "pynytprof", "profile": py }));
            }
            // Evals collapsed, as Devel::NYTProf::Data->new shows them by default.
            let profile = Profile::from_bytes(bytes).map_err(invalid)?;
            write_json(
                out,
                &json!({
                    "layout": "nytprof",
                    "profile": profile,
                    "data_attributes": profile.data_attributes(),
                }),
            )
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
        match options.to.as_deref() {
            None | Some("nytprof") | Some("5.0") => {}
            Some(other) => {
                return Err(OpError::Usage(format!(
                    "nytprof files can be rewritten --to nytprof only, not {other}"
                )));
            }
        }
        let bytes = input.bytes();
        let mut report = RewriteReport::default();
        let data = if pynytprof::detect(bytes) {
            let py = pynytprof::parse(bytes).map_err(invalid)?;
            let profile = pynytprof::to_profile(&py);
            report.dropped.push(
                "Pynytprof has no sub locations or call sites: subs are placed at the script's \
                 lines 0-0 and calls at its line 1"
                    .into(),
            );
            let mut data = Vec::new();
            profile.write(&mut data).map_err(invalid)?;
            data
        } else {
            let file = parse(bytes).map_err(invalid)?;
            let profile_options = Profile::from_bytes_with(bytes, ModelOptions::raw())
                .map_err(invalid)?
                .options;
            profcodec_nytprof::write::rewrite(&file, level_of(&profile_options)).map_err(invalid)?
        };
        std::fs::write(out, data)?;
        Ok(report)
    }
}
