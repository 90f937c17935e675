//! `dump`: every record of a profile as the reader decodes it (schema in the CLI README).

use std::collections::HashMap;

use profcodec_common::inspect::{Dump, Error, Source};
use serde::Serialize;
use serde_json::json;

use super::{invalid, load_error};
use crate::raw::fid_flags;
use crate::read::decode_text;
use crate::{Line, LoadReport, Record, Str, parse, pynytprof};

/// The format's name in a dump's header.
const FORMAT: &str = crate::FORMAT_NAME;

/// Streams the header, then each record as the reader decodes it: sub names once each, as
/// `name` records that the records naming a sub refer to by id; then the bytes after the zlib
/// stream that are not the profiler's trailer, if any. A Pynytprof file is dumped as its chunk
/// entries are.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    let bytes = input.bytes;
    if pynytprof::detect(bytes) {
        return dump_pynytprof(bytes, dump);
    }
    let file = parse(bytes).map_err(invalid)?;
    let h = file.header();
    dump.header(&json!({
        "format": FORMAT,
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
                let report = LoadReport {
                    compressed: reader.is_compressed(),
                    input_offset: reader.input_offset(),
                    ..LoadReport::default()
                };
                return Err(load_error(e, &report));
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

/// Sub names, each written once in a `name` record and referred to by id.
#[derive(Default)]
struct Names {
    ids: HashMap<(Vec<u8>, bool), u32>,
}

impl Names {
    /// The id of `name`, writing its `name` record the first time.
    fn id(&mut self, dump: &mut Dump<'_>, name: &Str<'_>) -> Result<u32, Error> {
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
fn key_value(line: Line<'_>) -> (String, Option<String>) {
    let text = |b: &[u8]| decode_text(b, false);
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
) -> Result<(), Error> {
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
            text: decode_text(l.text, false),
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

fn dump_pynytprof(bytes: &[u8], dump: &mut Dump<'_>) -> Result<(), Error> {
    let py = pynytprof::parse(bytes).map_err(invalid)?;
    dump.header(&json!({
        "format": FORMAT,
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
