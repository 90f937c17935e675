//! `profcodec` CLI operations for the statprofiler format (profcodec-statprofiler).
//!
//! One file, or a whole session: `profcodec::open` hands over a folder holding `=statprofiler`
//! files as a session, whose files are read process by process. For a single file, `info` also
//! lists the file's session:
//! the other files of the same `-template` (same folder, `<template>.<id>.<ordinal>`), grouped
//! into processes with their fork links. `rewrite --to` takes `statprofiler` (default, same
//! container), `snappy`, `plain` (a build without Snappy) or `text` (the early note's text format).

use std::path::{Path, PathBuf};

use profcodec_statprofiler::session::{Process, SessionError, SessionFile, open_session};
use profcodec_statprofiler::{
    Container, Error, Frame, Header, OwnedRecord, PerlString, PerlText, Profile, Reader, Record,
    TraceReader, text,
};
use serde_json::{Map, Value, json};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated, write_json};
use profcodec::Opened;

/// The statprofiler codec.
pub(super) struct StatProfiler;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// A string as JSON: its text, or `{"text", "flags"}` when the flag byte is not 0.
fn s(v: &PerlString) -> Value {
    if v.flags == 0 {
        json!(v.to_text())
    } else {
        json!({ "text": v.to_text(), "flags": v.flags })
    }
}

fn header_json(h: &Header) -> Value {
    let mut m = Map::new();
    if let Some(v) = h.perl_version {
        m.insert(
            "perl_version".into(),
            json!(format!("{}.{}.{}", v.revision, v.version, v.subversion)),
        );
    }
    if let Some(t) = h.tick_duration_us {
        m.insert("tick_duration_us".into(), json!(t));
    }
    if let Some(d) = h.stack_depth {
        m.insert("stack_depth".into(), json!(d));
    }
    if let Some(g) = h.genealogy {
        m.insert(
            "genealogy".into(),
            json!({
                "id": g.id.hex(),
                "ordinal": g.ordinal,
                "parent_id": g.parent_id.hex(),
                "parent_ordinal": g.parent_ordinal,
            }),
        );
    }
    m.insert(
        "metadata".into(),
        Value::Array(
            h.metadata
                .iter()
                .map(|(k, v)| json!({ "key": s(k), "value": s(v) }))
                .collect(),
        ),
    );
    Value::Object(m)
}

fn frame_json(f: &Frame<PerlString>) -> Value {
    match f {
        Frame::Sub {
            package,
            name,
            file,
            line,
            first_line,
        } => json!({"type": "sub", "package": s(package), "name": s(name), "file": s(file),
                    "line": line, "first_line": first_line}),
        Frame::Xsub { package, name } => {
            json!({"type": "xsub", "package": s(package), "name": s(name)})
        }
        Frame::Eval { file, line } => json!({"type": "eval", "file": s(file), "line": line}),
        Frame::Main { file, line } => json!({"type": "main", "file": s(file), "line": line}),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn record_json(r: &OwnedRecord) -> Value {
    match r {
        Record::SampleStart { weight, op_name } => {
            json!({"type": "sample_start", "weight": weight, "op": s(op_name)})
        }
        Record::Frame(f) => frame_json(f),
        Record::EvalSource { source, seq } => {
            json!({"type": "eval_source", "seq": seq, "source": s(source)})
        }
        Record::SampleEnd { skipped } if skipped.is_empty() => json!({"type": "sample_end"}),
        Record::SampleEnd { skipped } => json!({"type": "sample_end", "skipped": hex(skipped)}),
        Record::SectionStart { name } => json!({"type": "section_start", "name": s(name)}),
        Record::SectionEnd { name } => json!({"type": "section_end", "name": s(name)}),
        Record::Metadata { key, value } => {
            json!({"type": "metadata", "key": s(key), "value": s(value)})
        }
        Record::FileEnd => json!({"type": "file_end"}),
        Record::StreamEnd => json!({"type": "stream_end"}),
        Record::Unknown { tag, payload } => {
            json!({"type": "unknown", "tag": tag, "payload": hex(payload)})
        }
    }
}

fn container_name(c: Container) -> &'static str {
    match c {
        Container::Snappy => "snappy",
        Container::Plain => "plain",
    }
}

/// The `-template` of a file named `<template>.<48 hex>.<8 hex>` (or with a trailing `_`).
fn template_of(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let name = name.strip_suffix('_').unwrap_or(name);
    let cut = name.len().checked_sub(1 + 48 + 1 + 8)?;
    let tail = name.get(cut..)?.as_bytes();
    let ok = tail[0] == b'.'
        && tail[49] == b'.'
        && tail[1..49].iter().all(u8::is_ascii_hexdigit)
        && tail[50..].iter().all(u8::is_ascii_hexdigit);
    ok.then(|| path.with_file_name(&name[..cut]))
}

fn session_json(procs: &[Process]) -> Value {
    Value::Array(
        procs
            .iter()
            .map(|p| {
                json!({
                    "id": p.id.hex(),
                    "parent": p.parent.map(|(id, ord)| json!({"id": id.hex(), "ordinal": ord})),
                    "files": p.files.iter().map(|f| json!({
                        "path": f.path.display().to_string(),
                        "ordinal": f.genealogy().ordinal,
                        "open": f.open,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// The counts and header of one file, as `info` shows them.
fn file_details(bytes: &[u8]) -> Result<Map<String, Value>, OpError> {
    let reader = Reader::from_slice(bytes).map_err(invalid)?;
    let mut details = Map::new();
    details.insert(
        "container".into(),
        json!(container_name(reader.container())),
    );
    if let Value::Object(h) = header_json(reader.header()) {
        details.extend(h);
    }
    let mut traces = TraceReader::new(reader);
    let (mut samples, mut frames, mut weight) = (0u64, 0u64, 0u64);
    while let Some(t) = traces.next_trace().map_err(invalid)? {
        samples += 1;
        frames += t.frame_count() as u64;
        weight += u64::from(t.weight);
    }
    details.insert("traces".into(), json!(samples));
    details.insert("frames".into(), json!(frames));
    details.insert("total_weight".into(), json!(weight));
    details.insert("eval_sources".into(), json!(traces.source_code().len()));
    details.insert("file_ended".into(), json!(traces.file_ended()));
    details.insert("stream_ended".into(), json!(traces.stream_ended()));
    Ok(details)
}

/// The full content of one file, as `dump --json` shows it.
fn file_dump(bytes: &[u8]) -> Result<Value, OpError> {
    let profile = Profile::parse(bytes).map_err(invalid)?;
    Ok(json!({
        "container": container_name(profile.container),
        "header": header_json(&profile.header),
        "records": profile.records.iter().map(record_json).collect::<Vec<_>>(),
    }))
}

/// Rewrites one file into `out`.
fn rewrite_file(
    bytes: &[u8],
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, OpError> {
    let mut profile = Profile::parse(bytes).map_err(invalid)?;
    let mut report = RewriteReport::default();
    match options.to.as_deref() {
        None | Some("statprofiler") | Some("1") => {}
        Some("snappy") => profile.container = Container::Snappy,
        Some("plain") => profile.container = Container::Plain,
        Some("text") => {
            let samples = text::samples(&profile);
            let other = profile
                .records
                .iter()
                .filter(|r| {
                    !matches!(
                        r,
                        Record::SampleStart { .. } | Record::Frame(_) | Record::SampleEnd { .. }
                    )
                })
                .count();
            report.dropped.push(format!(
                "the text format keeps samples only: the header, {other} other records, \
                 sub first lines and string flags are dropped"
            ));
            text::write_text(&samples, std::fs::File::create(out)?)?;
            return Ok(report);
        }
        Some(other) => {
            return Err(OpError::Usage(format!(
                "statprofiler files can be rewritten --to statprofiler, snappy, plain or text, not {other}"
            )));
        }
    }
    std::fs::write(out, profile.to_bytes())?;
    Ok(report)
}

/// A session directory's processes (what `profcodec::open` hands over for a folder of
/// `=statprofiler` files), or `None` for a single file.
fn session(input: &Opened) -> Result<Option<Vec<Process>>, OpError> {
    if !input.path().is_dir() {
        return Ok(None);
    }
    open_session(input.path()).map(Some).map_err(session_error)
}

fn session_error(e: SessionError) -> OpError {
    match &e {
        SessionError::Invalid { source, .. } => OpError::invalid(&e, source.offset()),
        _ => OpError::invalid(&e, None),
    }
}

/// Runs `each` on every file of a session, in process then ordinal order; an error names the file.
fn each_session_file<T>(
    procs: &[Process],
    mut each: impl FnMut(&Process, &SessionFile, &[u8]) -> Result<T, OpError>,
) -> Result<Vec<T>, OpError> {
    let mut out = Vec::new();
    for process in procs {
        for file in &process.files {
            let bytes = std::fs::read(&file.path)?;
            out.push(each(process, file, &bytes).map_err(|e| match e {
                OpError::Invalid { message, offset } => OpError::Invalid {
                    message: format!("{}: {message}", file.path.display()),
                    offset,
                },
                other => other,
            })?);
        }
    }
    Ok(out)
}

impl Codec for StatProfiler {
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        let details = match session(input)? {
            Some(procs) => {
                let mut details = Map::new();
                let mut totals = [0u64; 3];
                each_session_file(&procs, |_, _, bytes| {
                    let d = file_details(bytes)?;
                    for (total, key) in totals.iter_mut().zip(["traces", "frames", "total_weight"])
                    {
                        *total += d.get(key).and_then(Value::as_u64).unwrap_or(0);
                    }
                    Ok(())
                })?;
                details.insert("processes".into(), json!(procs.len()));
                let files: usize = procs.iter().map(|p| p.files.len()).sum();
                details.insert("files".into(), json!(files));
                details.insert("traces".into(), json!(totals[0]));
                details.insert("frames".into(), json!(totals[1]));
                details.insert("total_weight".into(), json!(totals[2]));
                details.insert("session".into(), session_json(&procs));
                details
            }
            None => {
                let mut details = file_details(input.bytes())?;
                if let Some(template) = template_of(input.path())
                    && let Ok(procs) = open_session(&template)
                {
                    details.insert("session".into(), session_json(&procs));
                }
                details
            }
        };
        Ok(Info {
            format: input.format(),
            version: "1".into(),
            details,
        })
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // Findings (trailing data) are not reported yet by this format.
        let checked = || -> Result<(), OpError> {
            match session(input)? {
                Some(procs) => each_session_file(&procs, |_, _, bytes| {
                    profcodec_statprofiler::validate(bytes).map_err(invalid)
                })
                .map(drop),
                None => profcodec_statprofiler::validate(input.bytes()).map_err(invalid),
            }
        };
        checked().map(|()| Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        // The whole document as one record until this format streams its records.
        let mut buf = Vec::new();
        let out: &mut dyn std::io::Write = &mut buf;
        let mut whole = || -> Result<(), OpError> {
            match session(input)? {
                Some(procs) => {
                    let files = each_session_file(&procs, |process, file, bytes| {
                        let mut dump = file_dump(bytes)?;
                        if let Value::Object(m) = &mut dump {
                            m.insert("process".into(), json!(process.id.hex()));
                            m.insert("path".into(), json!(file.path.display().to_string()));
                            m.insert("ordinal".into(), json!(file.genealogy().ordinal));
                            m.insert("open".into(), json!(file.open));
                        }
                        Ok(dump)
                    })?;
                    write_json(
                        out,
                        &json!({"session": session_json(&procs), "files": files}),
                    )
                }
                None => write_json(out, &file_dump(input.bytes())?),
            }
        };
        whole()?;
        let value: serde_json::Value =
            serde_json::from_slice(&buf).map_err(std::io::Error::other)?;
        dump.record(&value)
    }

    /// A single file is rewritten into the file `out`; a session directory into the directory
    /// `out`, each file under its own name.
    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        match session(input)? {
            Some(procs) => {
                std::fs::create_dir_all(out)?;
                let reports = each_session_file(&procs, |_, file, bytes| {
                    let name = file.path.file_name().unwrap_or_default();
                    rewrite_file(bytes, &out.join(name), options)
                })?;
                let mut dropped: Vec<String> =
                    reports.into_iter().flat_map(|r| r.dropped).collect();
                dropped.dedup();
                Ok(RewriteReport {
                    dropped,
                    ..RewriteReport::default()
                })
            }
            None => rewrite_file(input.bytes(), out, options),
        }
    }
}
