//! `profcodec` CLI operations for the statprofiler format (profcodec-statprofiler).
//!
//! One file, or a whole session: a folder of `=statprofiler` files (or a `-template` prefix,
//! whose files are `<prefix>.<48 hex id>.<8 hex ordinal>`) is read process by process, file by
//! file in ordinal order. Every verb reads each file once:
//! - `info` and `validate` run one counting pass ([`profcodec_statprofiler::check`]), which never
//!   holds a sample's frames and stops at the end of the stream; data after it is a
//!   [`Finding::TrailingData`], measured without being decoded. A session is summarised once.
//! - `dump` streams flat records as they are decoded: strings and frames are written once, when
//!   first seen, and a sample is one record whose `frames` are frame ids (schema in the CLI
//!   README). Memory: the reader's window, the interned strings and frames, and the open sample's
//!   frame ids (4 bytes a frame).
//! - `rewrite` copies record by record from the reader into the writer (`--to statprofiler`,
//!   `snappy` or `plain`); only `--to text` builds the owned model of a file.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::Path;

use profcodec_statprofiler::session::Process;
use profcodec_statprofiler::{
    Container, Error, Frame, Header, PerlStr, PerlString, Reader, Record, Summary, Warning, Writer,
    check, text,
};
use serde::Serialize;

use super::dump::Dump;
use super::{Codec, Finding, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::Opened;

/// The statprofiler codec.
pub(super) struct StatProfiler;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

fn container_name(c: Container) -> &'static str {
    match c {
        Container::Snappy => "snappy",
        Container::Plain => "plain",
    }
}

/// The input as a session: a folder of `=statprofiler` files, or a template prefix (a path that
/// is not a file but names `<prefix>.<id>.<ordinal>` files); `None` for a single file.
fn session(input: &Opened) -> Result<Option<Vec<Process>>, OpError> {
    Ok(profcodec::statprofiler_session(input)?)
}

/// Runs `each` on every file of the input (one file, or a session in process then ordinal
/// order), with the file's path and bytes; an error in a session names the file.
fn each_file(
    input: &Opened,
    mut each: impl FnMut(Option<(&Process, &Path)>, &[u8]) -> Result<(), OpError>,
) -> Result<(), OpError> {
    let Some(procs) = session(input)? else {
        return each(None, input.bytes());
    };
    for process in &procs {
        for file in &process.files {
            // Mapped like a file named on the command line (no copy of a session that may be
            // hundreds of megabytes); one that does not open as a StatProfiler file is read, so
            // that its damage is reported by the reader, with its offset.
            let (mapped, read);
            let bytes: &[u8] = match input.open_member(&file.path) {
                Ok(opened) if opened.format() == profcodec::Format::StatProfiler => {
                    mapped = opened;
                    mapped.bytes()
                }
                _ => {
                    read = std::fs::read(&file.path)?;
                    &read
                }
            };
            each(Some((process, &file.path)), bytes).map_err(|e| match e {
                OpError::Invalid { message, offset } => OpError::Invalid {
                    message: format!("{}: {message}", file.path.display()),
                    offset,
                },
                other => other,
            })?;
        }
    }
    Ok(())
}

/// A file's warnings as findings; the caller fails on trailing data unless told otherwise.
fn findings(summary: &Summary, out: &mut Vec<Finding>) {
    for w in &summary.warnings {
        if let Warning::TrailingData(t) = w {
            out.push(Finding::TrailingData {
                offset: t.offset,
                size: t.size,
            });
        }
    }
}

/// One counting pass over a file: its header, container and summary.
fn scan(bytes: &[u8]) -> Result<(Header, Container, Summary), OpError> {
    let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
    let mut summary = Summary::default();
    check(&mut reader, &mut summary).map_err(invalid)?;
    Ok((reader.header().clone(), reader.container(), summary))
}

/// A Perl string as JSON text, without copying it first (its `Display`: UTF-8, or Latin-1).
struct Text<'a>(PerlStr<'a>);

impl Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&self.0)
    }
}

fn is_zero(flags: &u8) -> bool {
    *flags == 0
}

/// A frame's kind.
#[derive(Serialize, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum FrameKind {
    Sub,
    Xsub,
    Eval,
    Main,
}

/// One record of the dump (schema in the CLI README).
#[derive(Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum DumpRecord<'a> {
    /// A file starts: where it is and its header.
    File {
        file: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        container: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        perl_version: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tick_duration_us: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        stack_depth: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        process_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        ordinal: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_ordinal: Option<u32>,
    },
    /// A string used by frames and samples, written once.
    String {
        id: u32,
        text: Text<'a>,
        #[serde(skip_serializing_if = "is_zero")]
        flags: u8,
    },
    /// A frame, written once; its strings are string ids.
    Frame {
        id: u32,
        kind: FrameKind,
        #[serde(skip_serializing_if = "Option::is_none")]
        package: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<u32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        line: Option<i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        first_line: Option<i32>,
    },
    /// A whole sample: its frames' ids, innermost first.
    Sample {
        weight: u32,
        op: u32,
        frames: &'a [u32],
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<String>,
    },
    EvalSource {
        seq: u32,
        source: Text<'a>,
        #[serde(skip_serializing_if = "is_zero")]
        flags: u8,
    },
    SectionStart {
        name: Text<'a>,
        #[serde(skip_serializing_if = "is_zero")]
        flags: u8,
    },
    SectionEnd {
        name: Text<'a>,
        #[serde(skip_serializing_if = "is_zero")]
        flags: u8,
    },
    Metadata {
        key: Text<'a>,
        value: Text<'a>,
        in_header: bool,
    },
    FileEnd,
    StreamEnd,
    Unknown {
        tag: u8,
        payload: String,
    },
    TrailingData {
        offset: u64,
        size: u64,
    },
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The strings and frames written so far, by content.
#[derive(Default)]
struct Interner {
    /// By flag byte, then bytes (nearly every string has flag 0).
    strings: HashMap<u8, HashMap<Vec<u8>, u32>>,
    string_count: u32,
    frames: HashMap<Frame<u32>, u32>,
    files: u64,
    /// The open sample's frame ids.
    sample: Vec<u32>,
}

impl Interner {
    fn string(&mut self, s: PerlStr<'_>, dump: &mut Dump<'_>) -> Result<u32, OpError> {
        let by_flags = self.strings.entry(s.flags).or_default();
        if let Some(&id) = by_flags.get(s.bytes) {
            return Ok(id);
        }
        let id = self.string_count;
        self.string_count += 1;
        by_flags.insert(s.bytes.to_vec(), id);
        dump.record(&DumpRecord::String {
            id,
            text: Text(s),
            flags: s.flags,
        })?;
        Ok(id)
    }

    fn frame(&mut self, f: &Frame<PerlStr<'_>>, dump: &mut Dump<'_>) -> Result<u32, OpError> {
        let key = match *f {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => Frame::Sub {
                package: self.string(package, dump)?,
                name: self.string(name, dump)?,
                file: self.string(file, dump)?,
                line,
                first_line,
            },
            Frame::Xsub { package, name } => Frame::Xsub {
                package: self.string(package, dump)?,
                name: self.string(name, dump)?,
            },
            Frame::Eval { file, line } => Frame::Eval {
                file: self.string(file, dump)?,
                line,
            },
            Frame::Main { file, line } => Frame::Main {
                file: self.string(file, dump)?,
                line,
            },
        };
        if let Some(&id) = self.frames.get(&key) {
            return Ok(id);
        }
        let id = u32::try_from(self.frames.len()).unwrap_or(u32::MAX);
        self.frames.insert(key, id);
        let record = match key {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => DumpRecord::Frame {
                id,
                kind: FrameKind::Sub,
                package: Some(package),
                name: Some(name),
                file: Some(file),
                line: Some(line),
                first_line: Some(first_line),
            },
            Frame::Xsub { package, name } => DumpRecord::Frame {
                id,
                kind: FrameKind::Xsub,
                package: Some(package),
                name: Some(name),
                file: None,
                line: None,
                first_line: None,
            },
            Frame::Eval { file, line } | Frame::Main { file, line } => DumpRecord::Frame {
                id,
                kind: if matches!(key, Frame::Eval { .. }) {
                    FrameKind::Eval
                } else {
                    FrameKind::Main
                },
                package: None,
                name: None,
                file: Some(file),
                line: Some(line),
                first_line: None,
            },
        };
        dump.record(&record)?;
        Ok(id)
    }

    /// Streams one file's records.
    fn dump_file(
        &mut self,
        place: Option<(&Process, &Path)>,
        bytes: &[u8],
        dump: &mut Dump<'_>,
    ) -> Result<(), OpError> {
        let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
        let header = reader.header().clone();
        let g = header.genealogy;
        let file = self.files;
        self.files += 1;
        dump.record(&DumpRecord::File {
            file,
            path: place.map(|(_, p)| p.display().to_string()),
            container: container_name(reader.container()),
            perl_version: header.perl_version.map(|v| v.to_string()),
            tick_duration_us: header.tick_duration_us,
            stack_depth: header.stack_depth,
            process_id: g.map(|g| g.id.to_string()),
            ordinal: g.map(|g| g.ordinal),
            parent_id: g
                .filter(|g| !g.parent_id.is_zero())
                .map(|g| g.parent_id.to_string()),
            parent_ordinal: g
                .filter(|g| !g.parent_id.is_zero())
                .map(|g| g.parent_ordinal),
        })?;
        for (key, value) in &header.metadata {
            dump.record(&DumpRecord::Metadata {
                key: Text(key.as_str()),
                value: Text(value.as_str()),
                in_header: true,
            })?;
        }
        // The open sample: weight and op name id.
        let mut sample: Option<(u32, u32)> = None;
        loop {
            let Some(event) = reader.next_event().map_err(invalid)? else {
                return Ok(());
            };
            let end = matches!(event, Record::FileEnd | Record::StreamEnd);
            let mut stray = None;
            match event {
                Record::SampleStart { weight, op_name } => {
                    sample = Some((weight, self.string(op_name, dump)?));
                    self.sample.clear();
                }
                Record::Frame(frame) => {
                    if sample.is_some() {
                        let id = self.frame(&frame, dump)?;
                        self.sample.push(id);
                    } else {
                        stray = Some("frame record");
                    }
                }
                Record::SampleEnd { skipped } => match sample.take() {
                    Some((weight, op)) => dump.record(&DumpRecord::Sample {
                        weight,
                        op,
                        frames: &self.sample,
                        skipped: (!skipped.is_empty()).then(|| hex(skipped)),
                    })?,
                    None => stray = Some("sample end record"),
                },
                Record::EvalSource { source, seq } => dump.record(&DumpRecord::EvalSource {
                    seq,
                    source: Text(source),
                    flags: source.flags,
                })?,
                // The real reader returns a trace at a section record: an open sample is lost.
                Record::SectionStart { name } => {
                    sample = None;
                    dump.record(&DumpRecord::SectionStart {
                        name: Text(name),
                        flags: name.flags,
                    })?
                }
                Record::SectionEnd { name } => {
                    sample = None;
                    dump.record(&DumpRecord::SectionEnd {
                        name: Text(name),
                        flags: name.flags,
                    })?
                }
                Record::Metadata { key, value } => dump.record(&DumpRecord::Metadata {
                    key: Text(key),
                    value: Text(value),
                    in_header: false,
                })?,
                Record::FileEnd => dump.record(&DumpRecord::FileEnd)?,
                Record::StreamEnd => dump.record(&DumpRecord::StreamEnd)?,
                Record::Unknown { tag, payload } => dump.record(&DumpRecord::Unknown {
                    tag,
                    payload: hex(payload),
                })?,
            }
            if let Some(what) = stray {
                let pos = reader.position_of(reader.record_offset());
                return Err(invalid(Error::StrayRecord { what, pos }));
            }
            if end {
                if let Some(t) = reader.trailing_data().map_err(invalid)? {
                    dump.record(&DumpRecord::TrailingData {
                        offset: t.offset,
                        size: t.size,
                    })?;
                }
                return Ok(());
            }
        }
    }
}

/// The dump's header.
#[derive(Serialize)]
struct DumpHeader {
    format: &'static str,
    version: u32,
    /// True for a session (a folder or a template prefix).
    session: bool,
}

/// Rewrites one file into `out`, record by record.
fn rewrite_file(
    bytes: &[u8],
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, OpError> {
    let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
    let container = match options.to.as_deref() {
        None | Some("statprofiler") | Some("1") => reader.container(),
        Some("snappy") => Container::Snappy,
        Some("plain") => Container::Plain,
        Some("text") => return rewrite_text(bytes, out),
        Some(other) => {
            return Err(OpError::Usage(format!(
                "statprofiler files can be rewritten --to statprofiler, snappy, plain or text, not {other}"
            )));
        }
    };
    let file = BufWriter::new(std::fs::File::create(out)?);
    let mut writer = Writer::new(file, &reader.header().clone(), container)?;
    while let Some(event) = reader.next_event().map_err(invalid)? {
        writer.write(&event)?;
    }
    writer.finish()?.flush()?;
    Ok(RewriteReport::default())
}

/// `--to text`: the early note's one-line-per-sample format, written sample by sample as the
/// records are read (the line of the open sample is the only thing held).
fn rewrite_text(bytes: &[u8], out: &Path) -> Result<RewriteReport, OpError> {
    let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
    let mut file = BufWriter::new(std::fs::File::create(out)?);
    let mut line = Vec::new();
    let mut op_name: Option<PerlString> = None;
    let mut other = 0u64;
    while let Some(event) = reader.next_event().map_err(invalid)? {
        match event {
            Record::SampleStart {
                weight,
                op_name: op,
            } => {
                line.clear();
                line.extend_from_slice(weight.to_string().as_bytes());
                op_name = Some(op.to_owned());
            }
            Record::Frame(frame) => {
                if op_name.is_some() {
                    text::write_frame(&mut line, &frame);
                }
            }
            Record::SampleEnd { .. } => {
                if let Some(op) = op_name.take() {
                    text::end_line(&mut line, &op);
                    file.write_all(&line)?;
                }
            }
            _ => other += 1,
        }
    }
    file.flush()?;
    Ok(RewriteReport {
        dropped: vec![format!(
            "the text format keeps samples only: the header, {other} other records, \
             sub first lines and string flags are dropped"
        )],
        ..RewriteReport::default()
    })
}

impl Codec for StatProfiler {
    /// [`profcodec::info`]: one counting pass per file; a session is summarised once.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Ok(profcodec::info(input)?)
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        let mut out = Validated::default();
        each_file(input, |_, bytes| {
            let (_, _, summary) = scan(bytes)?;
            findings(&summary, &mut out.findings);
            Ok(())
        })?;
        Ok(out)
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let session = session(input)?;
        dump.header(&DumpHeader {
            format: "statprofiler",
            version: 1,
            session: session.is_some(),
        })?;
        let mut interner = Interner::default();
        match session {
            None => interner.dump_file(None, input.bytes(), dump),
            Some(procs) => {
                for process in &procs {
                    for file in &process.files {
                        let bytes = std::fs::read(&file.path)?;
                        interner.dump_file(Some((process, &file.path)), &bytes, dump)?;
                    }
                }
                Ok(())
            }
        }
    }

    /// [`profcodec::to_profile`]: every file of the input (one file, or a session process by
    /// process) in one model, one context per process. Memory: the model, the reader's window
    /// and one session file's bytes at a time.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
    }

    /// A single file is rewritten into the file `out`; a session into the folder `out`, each
    /// file under its own name.
    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        if !input.path().is_file() {
            std::fs::create_dir(out)?;
        }
        let mut report = RewriteReport::default();
        each_file(input, |place, bytes| {
            let target = match place {
                None => out.to_path_buf(),
                Some((_, path)) => out.join(path.file_name().unwrap_or_default()),
            };
            let r = rewrite_file(bytes, &target, options)?;
            for d in r.dropped {
                if !report.dropped.contains(&d) {
                    report.dropped.push(d);
                }
            }
            Ok(())
        })?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::HashSet;
    use std::path::PathBuf;

    use super::*;
    use crate::ops::dump::dump_value;

    fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/statprofiler")
            .join(name)
    }

    /// Every string and frame is defined once, before the first record that uses it, and every
    /// sample is one record holding its whole stack.
    #[test]
    fn dump_defines_strings_and_frames_before_samples_use_them() {
        let opened = profcodec::open(testdata("features.statprof")).unwrap();
        let dump = dump_value(&StatProfiler, &opened);
        assert_eq!(dump["header"]["format"], "statprofiler");
        let (mut strings, mut frames, mut samples) = (HashSet::new(), HashSet::new(), 0);
        for r in dump["records"].as_array().unwrap() {
            match r["record"].as_str().unwrap() {
                "string" => assert!(strings.insert(r["id"].as_u64().unwrap())),
                "frame" => {
                    for key in ["package", "name", "file"] {
                        if let Some(id) = r[key].as_u64() {
                            assert!(strings.contains(&id), "{r}");
                        }
                    }
                    assert!(frames.insert(r["id"].as_u64().unwrap()));
                }
                "sample" => {
                    samples += 1;
                    assert!(strings.contains(&r["op"].as_u64().unwrap()));
                    for id in r["frames"].as_array().unwrap() {
                        assert!(frames.contains(&id.as_u64().unwrap()), "{r}");
                    }
                }
                _ => {}
            }
        }
        let summary = profcodec_statprofiler::validate(opened.bytes()).unwrap();
        assert_eq!(samples, summary.samples);
    }

    /// Packets after the stream-end record are a finding with their offset and size.
    #[test]
    fn validate_reports_packets_after_the_stream_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut bytes = std::fs::read(testdata("features.statprof")).unwrap();
        let end = bytes.len() as u64;
        assert!(
            Codec::validate(
                &StatProfiler,
                &profcodec::open(testdata("features.statprof")).unwrap()
            )
            .unwrap()
            .findings
            .is_empty()
        );
        // Packets of a one-byte Snappy block (an empty piece of stream), 1,000 of them.
        for _ in 0..1000 {
            bytes.extend_from_slice(&[0, 1, 0]);
        }
        let path = dir.path().join("trailing.statprof");
        std::fs::write(&path, &bytes).unwrap();
        let found = StatProfiler
            .validate(&profcodec::open(&path).unwrap())
            .unwrap();
        assert_eq!(
            found.findings,
            [Finding::TrailingData {
                offset: end,
                size: 3000
            }]
        );
    }

    /// The text written sample by sample equals the text of the owned model's samples.
    #[test]
    fn text_rewrite_streams_what_the_model_gives() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["features.statprof", "features.plain.statprof"] {
            let bytes = std::fs::read(testdata(name)).unwrap();
            let out = dir.path().join(format!("{name}.txt"));
            rewrite_text(&bytes, &out).unwrap();
            let profile = profcodec_statprofiler::Profile::parse(&bytes).unwrap();
            let expected = text::write_text(&text::samples(&profile), Vec::new()).unwrap();
            assert_eq!(std::fs::read(&out).unwrap(), expected, "{name}");
        }
    }

    /// A session is summarised once: counts, no list of every file's path.
    #[test]
    fn session_info_is_a_summary() {
        let opened = profcodec::open(testdata("session")).unwrap();
        let info = StatProfiler.info(&opened).unwrap();
        let d = &info.details;
        assert_eq!(d["processes"], 3);
        assert_eq!(d["files"], 8);
        assert_eq!(d["open_files"], 1);
        assert!(d.values().all(|v| !v.is_array() && !v.is_object()), "{d:?}");
        // First in display order once serde_json keeps insertion order (`preserve_order`).
        assert!(d.contains_key("program") && d.contains_key("sampled_time_s"));
    }
}
