//! `dump`: flat records streamed as they are decoded; strings and frames written once each.

use std::collections::HashMap;
use std::path::Path;

use profcodec_common::inspect::{Dump, Error, Source};
use serde::Serialize;

use super::{container_name, each_file, invalid, session};
use crate::session::Process;
use crate::{Frame, PerlStr, Reader, Record};

pub(super) fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    let session = session(input)?;
    dump.header(&DumpHeader {
        format: crate::FORMAT_NAME,
        version: 1,
        session: session.is_some(),
    })?;
    let mut interner = Interner::default();
    // A session's errors do not name the file: its `file` record, just written, does.
    each_file(input, session, |place, bytes| {
        interner.dump_file(place, bytes, dump)
    })
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
    fn string(&mut self, s: PerlStr<'_>, dump: &mut Dump<'_>) -> Result<u32, Error> {
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

    fn frame(&mut self, f: &Frame<PerlStr<'_>>, dump: &mut Dump<'_>) -> Result<u32, Error> {
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
    ) -> Result<(), Error> {
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
                return Err(invalid(crate::Error::StrayRecord { what, pos }));
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
