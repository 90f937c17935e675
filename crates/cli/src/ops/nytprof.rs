//! `profcodec` CLI operations for the nytprof format (profcodec-nytprof).
//!
//! Both layouts are handled: the real v5.0 stream and the old Pynytprof chunk layout (detected
//! by its blank line after the banner), which `rewrite --to nytprof` converts.
//!
//! Every verb reads the file once: `info` and `validate` load the model in one pass
//! ([`Profile::from_bytes_report`], which inflates a window at a time), `dump` streams the records
//! as the reader decodes them, `rewrite` streams them into the output.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

use profcodec_nytprof::raw::fid_flags;
use profcodec_nytprof::{Error, LoadReport, ModelOptions, Profile, Record, Str, parse, pynytprof};
use serde::Serialize;
use serde_json::json;

use super::dump::Dump;
use super::{Codec, Finding, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::Opened;

/// The nytprof codec.
pub(super) struct Nytprof;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// An error of a load that read into the zlib stream, with the file position reached
/// ([`profcodec::ReadError::nytprof_load`]).
fn invalid_in(e: Error, report: &LoadReport) -> OpError {
    profcodec::ReadError::nytprof_load(e, report).into()
}

/// The zlib level a rewrite uses: the one the file states, else the profiler's default 6.
fn level_of(value: &[u8]) -> u32 {
    std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|l| *l > 0)
        .unwrap_or(6)
}

impl Codec for Nytprof {
    /// [`profcodec::info`]: the summary of the model, loaded in one pass.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Ok(profcodec::info(input)?)
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        let bytes = input.bytes();
        if pynytprof::detect(bytes) {
            pynytprof::parse(bytes).map_err(invalid)?;
            return Ok(Validated::default());
        }
        // The fullest decode, once: every record into the model, evals collapsed as
        // Devel::NYTProf::Data->new does.
        let (_, report, error) = Profile::from_bytes_report(bytes, ModelOptions::default());
        if let Some(e) = error {
            return Err(invalid_in(e, &report));
        }
        let findings = report
            .trailing
            .map(|t| Finding::TrailingData {
                offset: t.offset,
                size: t.size,
            })
            .into_iter()
            .collect();
        Ok(Validated { findings })
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let bytes = input.bytes();
        if pynytprof::detect(bytes) {
            return dump_pynytprof(input, dump);
        }
        let file = parse(bytes).map_err(invalid)?;
        let h = file.header();
        dump.header(&json!({
            "format": input.format().to_string(),
            "version": format!("{}.{}", h.major, h.minor),
            "layout": "nytprof",
        }))?;
        let mut names = Names::default();
        let mut reader = file.reader();
        loop {
            let offset = reader.offset();
            let record = match reader.next_record() {
                None => break,
                Some(Ok(record)) => record,
                Some(Err(e)) => {
                    let mut report = LoadReport::default();
                    report.compressed = reader.is_compressed();
                    report.input_offset = reader.input_offset();
                    return Err(invalid_in(e, &report));
                }
            };
            write_record(dump, &mut names, offset, &record)?;
        }
        if let Some(t) = reader.trailing() {
            dump.record(&DumpRecord::TrailingData {
                offset: t.offset,
                size: t.size,
            })?;
        }
        Ok(())
    }

    /// [`profcodec::to_profile`]: subs, lines, call edges and the call paths, in one pass.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
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
        // A failure leaves `out` half-written; `rewrite_atomically`, which chose it, removes it.
        rewrite_into(input.bytes(), out)
    }
}

/// The rewrite of `bytes` into the fresh file `out`, streamed.
fn rewrite_into(bytes: &[u8], out: &Path) -> Result<RewriteReport, OpError> {
    let mut report = RewriteReport::default();
    let mut sink = std::io::BufWriter::new(std::fs::File::create(out)?);
    if pynytprof::detect(bytes) {
        let py = pynytprof::parse(bytes).map_err(invalid)?;
        // Refused before anything is built when the counts would make an output far
        // larger than the input (one record per counted statement).
        pynytprof::convert(&py, bytes.len() as u64, &mut sink).map_err(invalid)?;
        report.dropped.push(
            "Pynytprof has no sub locations or call sites: subs are placed at the script's \
                 lines 0-0 and calls at its line 1"
                .into(),
        );
    } else {
        let file = parse(bytes).map_err(invalid)?;
        // The level the file states (`!compress=N`, among the text lines that open it).
        let mut level = 6;
        for r in file.plain_records() {
            match r {
                Ok(Record::Option(l)) => {
                    if let Some((b"compress", v)) = l.key_value() {
                        level = level_of(v);
                    }
                }
                Ok(Record::Attribute(_) | Record::Comment(_)) => {}
                _ => break,
            }
        }
        let (_, summary) =
            profcodec_nytprof::write::rewrite_to(&file, level, &mut sink).map_err(invalid)?;
        if let Some(t) = summary.trailing {
            report.dropped.push(format!(
                    "{} bytes after the zlib stream (at byte {:#x}) that are not the profiler's trailer",
                    t.size, t.offset
                ));
        }
    }
    sink.flush()?;
    Ok(report)
}

/// Sub names, each written once in a `name` record and referred to by id.
#[derive(Default)]
struct Names {
    ids: HashMap<(Vec<u8>, bool), u32>,
}

impl Names {
    /// The id of `name`, writing its `name` record the first time.
    fn id(&mut self, dump: &mut Dump<'_>, name: &Str<'_>) -> Result<u32, OpError> {
        if let Some(&id) = self.ids.get(&(name.bytes.to_vec(), name.utf8)) {
            return Ok(id);
        }
        let id = self.ids.len() as u32;
        self.ids.insert((name.bytes.to_vec(), name.utf8), id);
        dump.record(&DumpRecord::Name {
            id,
            name: name.to_text(),
            utf8: name.utf8,
        })?;
        Ok(id)
    }
}

/// One record of `profcodec dump` for the v5.0 layout (schema in the CLI README).
#[derive(Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum DumpRecord {
    Name {
        id: u32,
        name: String,
        utf8: bool,
    },
    Attribute {
        offset: u64,
        key: String,
        value: Option<String>,
    },
    Option {
        offset: u64,
        key: String,
        value: Option<String>,
    },
    Comment {
        offset: u64,
        text: String,
    },
    StartDeflate {
        offset: u64,
    },
    PidStart {
        offset: u64,
        pid: u32,
        ppid: u32,
        time: f64,
    },
    PidEnd {
        offset: u64,
        pid: u32,
        time: f64,
    },
    NewFid {
        offset: u64,
        fid: u32,
        eval_fid: u32,
        eval_line: u32,
        flags: Vec<&'static str>,
        flag_bits: u32,
        size: u32,
        mtime: u32,
        name: String,
        name_utf8: bool,
    },
    TimeLine {
        offset: u64,
        ticks: i32,
        fid: u32,
        line: u32,
    },
    TimeBlock {
        offset: u64,
        ticks: i32,
        fid: u32,
        line: u32,
        block_line: u32,
        sub_line: u32,
    },
    Discount {
        offset: u64,
    },
    SrcLine {
        offset: u64,
        fid: u32,
        line: u32,
        text: String,
        utf8: bool,
    },
    SubInfo {
        offset: u64,
        fid: u32,
        sub: u32,
        first_line: u32,
        last_line: u32,
    },
    SubCallers {
        offset: u64,
        fid: u32,
        line: u32,
        caller: u32,
        called: u32,
        count: u32,
        incl_seconds: f64,
        excl_seconds: f64,
        reci_seconds: f64,
        rec_depth: u32,
    },
    SubEntry {
        offset: u64,
        fid: u32,
        line: u32,
    },
    SubReturn {
        offset: u64,
        depth: u32,
        incl_ticks: f64,
        excl_ticks: f64,
        sub: u32,
    },
    TrailingData {
        offset: u64,
        size: u64,
    },
}

/// The names of the NEW_FID flag bits that are set.
fn flag_names(flags: u32) -> Vec<&'static str> {
    [
        (fid_flags::IS_PMC, "is_pmc"),
        (fid_flags::VIA_STMT, "via_stmt"),
        (fid_flags::VIA_SUB, "via_sub"),
        (fid_flags::IS_AUTOSPLIT, "is_autosplit"),
        (fid_flags::HAS_SRC, "has_src"),
        (fid_flags::SAVE_SRC, "save_src"),
        (fid_flags::IS_ALIAS, "is_alias"),
        (fid_flags::IS_FAKE, "is_fake"),
        (fid_flags::IS_EVAL, "is_eval"),
    ]
    .into_iter()
    .filter(|(bit, _)| flags & bit != 0)
    .map(|(_, name)| name)
    .collect()
}

/// A `:`/`!` line as key and value (the value is absent when the line has no `=`).
fn key_value(line: profcodec_nytprof::Line<'_>) -> (String, Option<String>) {
    let text = |b: &[u8]| profcodec_nytprof::read::decode_text(b, false);
    match line.key_value() {
        Some((k, v)) => (text(k), Some(text(v))),
        None => (text(line.text), None),
    }
}

fn write_record(
    dump: &mut Dump<'_>,
    names: &mut Names,
    offset: u64,
    record: &Record<'_>,
) -> Result<(), OpError> {
    let out = match *record {
        Record::Attribute(l) => {
            let (key, value) = key_value(l);
            DumpRecord::Attribute { offset, key, value }
        }
        Record::Option(l) => {
            let (key, value) = key_value(l);
            DumpRecord::Option { offset, key, value }
        }
        Record::Comment(l) => DumpRecord::Comment {
            offset,
            text: profcodec_nytprof::read::decode_text(l.text, false),
        },
        Record::StartDeflate => DumpRecord::StartDeflate { offset },
        Record::PidStart { pid, ppid, time } => DumpRecord::PidStart {
            offset,
            pid,
            ppid,
            time,
        },
        Record::PidEnd { pid, time } => DumpRecord::PidEnd { offset, pid, time },
        Record::NewFid {
            fid,
            eval_fid,
            eval_line,
            flags,
            size,
            mtime,
            name,
        } => DumpRecord::NewFid {
            offset,
            fid,
            eval_fid,
            eval_line,
            flags: flag_names(flags),
            flag_bits: flags,
            size,
            mtime,
            name: name.to_text(),
            name_utf8: name.utf8,
        },
        Record::TimeLine { ticks, fid, line } => DumpRecord::TimeLine {
            offset,
            ticks,
            fid,
            line,
        },
        Record::TimeBlock {
            ticks,
            fid,
            line,
            block_line,
            sub_line,
        } => DumpRecord::TimeBlock {
            offset,
            ticks,
            fid,
            line,
            block_line,
            sub_line,
        },
        Record::Discount => DumpRecord::Discount { offset },
        Record::SrcLine { fid, line, text } => DumpRecord::SrcLine {
            offset,
            fid,
            line,
            text: text.to_text(),
            utf8: text.utf8,
        },
        Record::SubInfo {
            fid,
            name,
            first_line,
            last_line,
        } => DumpRecord::SubInfo {
            offset,
            fid,
            sub: names.id(dump, &name)?,
            first_line,
            last_line,
        },
        Record::SubCallers {
            fid,
            line,
            caller,
            count,
            incl,
            excl,
            reci,
            rec_depth,
            called,
        } => DumpRecord::SubCallers {
            offset,
            fid,
            line,
            caller: names.id(dump, &caller)?,
            called: names.id(dump, &called)?,
            count,
            incl_seconds: incl,
            excl_seconds: excl,
            reci_seconds: reci,
            rec_depth,
        },
        Record::SubEntry { fid, line } => DumpRecord::SubEntry { offset, fid, line },
        Record::SubReturn {
            depth,
            incl_ticks,
            excl_ticks,
            name,
        } => DumpRecord::SubReturn {
            offset,
            depth,
            incl_ticks,
            excl_ticks,
            sub: names.id(dump, &name)?,
        },
        _ => return Ok(()),
    };
    dump.record(&out)
}

/// One record of `profcodec dump` for the Pynytprof layout: each chunk entry as it is.
#[derive(Serialize)]
struct PyRecord<'a, T: Serialize> {
    record: &'static str,
    #[serde(flatten)]
    entry: &'a T,
}

fn dump_pynytprof(input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
    let py = pynytprof::parse(input.bytes()).map_err(invalid)?;
    dump.header(&json!({
        "format": input.format().to_string(),
        "version": "5.0",
        "layout": "pynytprof",
        "comments": py.comments,
        "attributes": py.attributes,
        "options": py.options,
        "ended": py.ended,
    }))?;
    for entry in &py.files {
        dump.record(&PyRecord {
            record: "file",
            entry,
        })?;
    }
    for entry in &py.lines {
        dump.record(&PyRecord {
            record: "line",
            entry,
        })?;
    }
    for entry in &py.subs {
        dump.record(&PyRecord {
            record: "sub",
            entry,
        })?;
    }
    for entry in &py.calls {
        dump.record(&PyRecord {
            record: "call",
            entry,
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(name: &str) -> Opened {
        profcodec::open(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../testdata/nytprof")
                .join(name),
        )
        .expect("open testdata")
    }

    #[test]
    fn dump_streams_flat_records_with_names_once() {
        let opened = testdata("hello.nytprof.out");
        let value = crate::ops::dump::dump_value(&Nytprof, &opened);
        let records = value["records"].as_array().expect("records");
        assert!(records.iter().all(|r| r["record"].is_string()));
        // No record nests an object or an array of objects.
        for r in records {
            for (_, v) in r.as_object().expect("object") {
                assert!(!v.is_object(), "{r}");
            }
        }
        let names: Vec<&str> = records
            .iter()
            .filter(|r| r["record"] == "name")
            .filter_map(|r| r["name"].as_str())
            .collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "each name is written once");
        assert!(records.iter().any(|r| r["record"] == "time_line"));
    }

    fn write_temp(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> Opened {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        profcodec::open(&path).expect("open")
    }

    #[test]
    fn validate_reports_bytes_after_the_trailer_once() {
        let mut w = profcodec_nytprof::Writer::new(Vec::new());
        w.header(5, 0).expect("header");
        w.record(&Record::Attribute(profcodec_nytprof::Line {
            text: b"ticks_per_sec=10000000",
        }))
        .expect("record");
        w.record(&Record::StartDeflate).expect("z");
        w.record(&Record::Discount).expect("record");
        let mut bytes = w.finish().expect("finish");
        let dir = tempfile::tempdir().expect("tempdir");
        let clean = write_temp(&dir, "clean.nytprof.out", &bytes);
        assert!(Nytprof.validate(&clean).expect("valid").findings.is_empty());
        let end = bytes.len() as u64;
        bytes.extend_from_slice(b"junk");
        let junk = write_temp(&dir, "junk.nytprof.out", &bytes);
        assert_eq!(
            Nytprof.validate(&junk).expect("valid").findings,
            [Finding::TrailingData {
                offset: end,
                size: 4
            }]
        );
    }

    #[test]
    fn a_pynytprof_conversion_that_would_explode_is_refused() {
        let mut data = b"NYTProf 5 0\n:ticks_per_sec=10000000\n\n".to_vec();
        let mut entry = Vec::new();
        for v in [0u32, 1, 1 << 24] {
            entry.extend_from_slice(&v.to_le_bytes());
        }
        entry.extend_from_slice(&[0; 16]);
        data.push(b'S');
        data.extend_from_slice(&(entry.len() as u32).to_le_bytes());
        data.extend_from_slice(&entry);
        data.extend_from_slice(b"E\0\0\0\0");
        let dir = tempfile::tempdir().expect("tempdir");
        let input = write_temp(&dir, "py.out", &data);
        let out = dir.path().join("out.nytprof");
        let options = RewriteOptions::to("nytprof");
        let checked = profcodec::output::OutputPath::file(&out)
            .check()
            .expect("a new output");
        let err = crate::ops::rewrite_atomically(&Nytprof, &input, checked, &options)
            .expect_err("refused");
        assert!(
            err.to_string()
                .starts_with("the converted file would be far larger")
        );
        assert!(!out.exists(), "nothing half-written is left");
    }

    #[test]
    fn profile_has_subs_lines_edges_and_stacks() {
        let profile = Nytprof
            .profile(&testdata("hello.nytprof.out"))
            .expect("profile");
        let top = profile
            .top(&profcodec_profile::Query::new().limit(3))
            .expect("top");
        assert_eq!(top.value_type, "time");
        assert_eq!(top.unit, "seconds");
        let fib = profile
            .top(&profcodec_profile::Query::new())
            .expect("top")
            .rows
            .into_iter()
            .find(|r| r.name == "main::fib")
            .expect("main::fib");
        assert!(fib.calls.is_some_and(|c| c > 1.0));
        assert!(fib.inclusive.is_some_and(|i| i >= fib.self_value));
        let lines = profile
            .top(&profcodec_profile::Query::new().group(profcodec_profile::GroupBy::Line))
            .expect("lines");
        assert!(lines.rows[0].name.contains("hello.pl:"));
        assert!(profile.call_edges().len() > 0);
        assert!(profile.nodes().len() > 0);
        let (_, context) = profile.contexts().next().expect("a context");
        assert_eq!(context.ids[0].0, profcodec_profile::IdKind::Process);
        // The old layout converts too (no stacks there).
        let py = Nytprof
            .profile(&testdata("pynytprof.out"))
            .expect("pynytprof");
        assert_eq!(py.nodes().len(), 0);
        assert!(!py.flat_values().is_empty());
    }

    #[test]
    fn info_leads_with_the_summary() {
        let info = Nytprof.info(&testdata("hello.nytprof.out")).expect("info");
        let keys: Vec<&String> = info.details.keys().collect();
        assert_eq!(keys.first().map(|k| k.as_str()), Some("application"));
        assert!(
            keys.iter()
                .all(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
    }
}
