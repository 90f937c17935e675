//! `profcodec` CLI operations for EasyProfiler `.prof` captures (profcodec-easyprofiler).
//!
//! The dump's records are documented in the CLI README (section EasyProfiler).

use std::path::Path;

use profcodec_easyprofiler::{self as ep, Name};
use serde::Serialize;

use super::dump::Dump;
use super::{Codec, Finding, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::Opened;

/// The EasyProfiler codec.
pub(super) struct EasyProfiler;

fn invalid(e: ep::Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// The snake_case name of a descriptor type.
fn block_type_name(t: u8) -> &'static str {
    match ep::BlockType::from_u8(t) {
        Some(ep::BlockType::Event) => "event",
        Some(ep::BlockType::Block) => "block",
        Some(ep::BlockType::Value) => "value",
        None => "unknown",
    }
}

/// The snake_case name of a value's data type.
fn data_type_name(t: u8) -> &'static str {
    match ep::DataType::from_u8(t) {
        Some(ep::DataType::Bool) => "bool",
        Some(ep::DataType::Char) => "char",
        Some(ep::DataType::Int8) => "int8",
        Some(ep::DataType::Uint8) => "uint8",
        Some(ep::DataType::Int16) => "int16",
        Some(ep::DataType::Uint16) => "uint16",
        Some(ep::DataType::Int32) => "int32",
        Some(ep::DataType::Uint32) => "uint32",
        Some(ep::DataType::Int64) => "int64",
        Some(ep::DataType::Uint64) => "uint64",
        Some(ep::DataType::Float) => "float",
        Some(ep::DataType::Double) => "double",
        Some(ep::DataType::String) => "string",
        None => "unknown",
    }
}

/// The snake_case name of an oddity.
fn oddity_kind(o: &ep::Oddity) -> &'static str {
    match o {
        ep::Oddity::ZeroCounter { .. } => "zero_counter",
        ep::Oddity::NonZeroPadding { .. } => "non_zero_padding",
        ep::Oddity::BlocksCount { .. } => "blocks_count",
        ep::Oddity::MemorySizeExceeded { .. } => "memory_size_exceeded",
        ep::Oddity::MemorySizeLarger { .. } => "memory_size_larger",
        ep::Oddity::DescriptorMemoryExceeded { .. } => "descriptor_memory_exceeded",
        ep::Oddity::FewerThreads { .. } => "fewer_threads",
        ep::Oddity::DepthLimit { .. } => "depth_limit",
        ep::Oddity::MissingEndMark { .. } => "missing_end_mark",
        ep::Oddity::TrailingBytes { .. } => "trailing_bytes",
        _ => "other",
    }
}

/// The data of a value record: a scalar, an array, or a string (read by size, up to its first
/// NUL).
enum ValueJson<'a> {
    Data(ep::ValueData, bool),
    Unknown(&'a [u8]),
}

impl Serialize for ValueJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ep::ValueData as V;
        /// A one-element scalar as itself, anything else as an array.
        fn one<T: Serialize, S: serde::Serializer>(
            v: &[T],
            array: bool,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match v {
                [x] if !array => x.serialize(s),
                _ => v.serialize(s),
            }
        }
        match self {
            ValueJson::Unknown(bytes) => bytes.serialize(s),
            ValueJson::Data(data, array) => {
                let a = *array;
                match data {
                    V::Bool(v) => one(v, a, s),
                    V::Char(v) | V::Int8(v) => one(v, a, s),
                    V::Uint8(v) => one(v, a, s),
                    V::Int16(v) => one(v, a, s),
                    V::Uint16(v) => one(v, a, s),
                    V::Int32(v) => one(v, a, s),
                    V::Uint32(v) => one(v, a, s),
                    V::Int64(v) => one(v, a, s),
                    V::Uint64(v) => one(v, a, s),
                    V::Float(v) => one(v, a, s),
                    V::Double(v) => one(v, a, s),
                    V::String(v) => s.collect_str(&Name(ep::c_str(v))),
                }
            }
        }
    }
}

/// The dump header.
#[derive(Serialize)]
struct Header {
    format: profcodec::Format,
    version: String,
    time_unit: &'static str,
    pid: u64,
    cpu_frequency: i64,
    /// Capture begin and end, in ns.
    begin_time: u64,
    end_time: u64,
    descriptor_slots: u32,
}

/// One record of the dump.
#[derive(Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
enum Record<'a> {
    /// A descriptor of the file, or the synthetic one the C++ reader makes for a runtime name.
    Descriptor {
        id: u32,
        name: Name<'a>,
        block_type: &'static str,
        file: Name<'a>,
        line: i32,
        color: u32,
        status: u8,
        /// The id stored in the descriptor, when it differs from its slot.
        #[serde(skip_serializing_if = "Option::is_none")]
        stored_id: Option<u32>,
        /// For a runtime name: the file descriptor it was named from.
        #[serde(skip_serializing_if = "Option::is_none")]
        named_from: Option<u32>,
    },
    /// Something the C++ reader may refuse or the writer did unusually.
    Oddity {
        kind: &'static str,
        offset: u64,
        message: String,
    },
    Thread {
        id: u64,
        name: Name<'a>,
        blocks: usize,
        context_switches: usize,
    },
    ContextSwitch {
        thread: u64,
        id: u32,
        begin: u64,
        end: u64,
        target_thread: u64,
        target_name: Name<'a>,
    },
    /// A block or an event (begin == end).
    Block {
        thread: u64,
        id: u32,
        parent: Option<u32>,
        depth: u32,
        descriptor: u32,
        begin: u64,
        end: u64,
    },
    Value {
        thread: u64,
        id: u32,
        parent: Option<u32>,
        depth: u32,
        descriptor: u32,
        time: u64,
        value_id: u64,
        data_type: &'static str,
        is_array: bool,
        data: ValueJson<'a>,
    },
    Bookmark {
        position: u64,
        color: u32,
        text: Name<'a>,
    },
}

fn descriptor_record<'a>(id: u32, d: &ep::TreeDescriptor<'a>) -> Record<'a> {
    let stored = d.descriptor.id;
    Record::Descriptor {
        id,
        name: d.name(),
        block_type: block_type_name(d.descriptor.block_type),
        file: d.descriptor.file,
        line: d.descriptor.line,
        color: d.descriptor.color,
        status: d.descriptor.status,
        stored_id: (d.runtime_name.is_none() && stored != id).then_some(stored),
        named_from: d.runtime_name.map(|_| stored),
    }
}

impl Codec for EasyProfiler {
    /// [`profcodec::info`]: the block tree's summary, oddities included.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Ok(profcodec::info(input)?)
    }

    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        // One pass: the strict tree walks and checks every byte (header, descriptors, every
        // record and context switch, the nesting as the C++ reader limits it, the counters and
        // the tail) and refuses what the C++ reader refuses.
        let view = ep::parse_with(input.bytes(), ep::Mode::Strict).map_err(invalid)?;
        let tree = view.tree().map_err(invalid)?;
        let findings = tree
            .oddities
            .iter()
            .filter_map(|o| match *o {
                ep::Oddity::TrailingBytes { offset, len } => {
                    Some(Finding::TrailingData { offset, size: len })
                }
                _ => None,
            })
            .collect();
        Ok(Validated { findings })
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let view = ep::parse(input.bytes()).map_err(invalid)?;
        let h = view.header();
        let conv = ep::TickConverter::new(h.cpu_frequency);
        dump.header(&Header {
            format: input.format(),
            version: h.version.to_string(),
            time_unit: "ns",
            pid: h.pid,
            cpu_frequency: h.cpu_frequency,
            begin_time: conv.ns(h.begin_time),
            end_time: conv.ns(h.end_time),
            descriptor_slots: view.descriptors().len() as u32,
        })?;
        // The file's descriptors come first, so that a damaged capture still shows them.
        for (id, d) in view.descriptors().iter().enumerate() {
            if let Some(&descriptor) = d {
                let d = ep::TreeDescriptor {
                    descriptor,
                    runtime_name: None,
                };
                dump.record(&descriptor_record(id as u32, &d))?;
            }
        }
        // The tree (24 bytes a record) gives every block its parent and depth; the records are
        // then written one by one, each long name once in its descriptor.
        let tree = view.tree().map_err(invalid)?;
        let first_runtime = tree.file_descriptors_len() as u32;
        for (i, d) in tree.runtime_descriptors().iter().enumerate() {
            dump.record(&descriptor_record(first_runtime + i as u32, d))?;
        }
        for o in &tree.oddities {
            dump.record(&Record::Oddity {
                kind: oddity_kind(o),
                offset: o.offset(),
                message: o.to_string(),
            })?;
        }
        for th in &tree.threads {
            dump.record(&Record::Thread {
                id: th.id,
                name: th.name,
                blocks: th.nodes.len(),
                context_switches: th.context_switches.len(),
            })?;
            for c in &th.context_switches {
                dump.record(&Record::ContextSwitch {
                    thread: th.id,
                    id: c.block_index,
                    begin: c.begin,
                    end: c.end,
                    target_thread: c.target_tid,
                    target_name: c.name,
                })?;
            }
            let records = tree.node_records(&view, th);
            for (flat, raw) in th.flat().zip(records) {
                let ep::FlatNode {
                    id,
                    parent,
                    depth,
                    node: n,
                    ..
                } = flat;
                let record = match view.decode_record(&raw).map_err(invalid)? {
                    ep::RecordRef::Value { head, data } => Record::Value {
                        thread: th.id,
                        id,
                        parent,
                        depth,
                        descriptor: n.descriptor,
                        time: n.end,
                        value_id: head.value_id.get(),
                        data_type: data_type_name(head.data_type),
                        is_array: head.is_array != 0,
                        data: match ep::DataType::from_u8(head.data_type) {
                            Some(t) => {
                                ValueJson::Data(ep::ValueData::decode(t, data), head.is_array != 0)
                            }
                            None => ValueJson::Unknown(data),
                        },
                    },
                    ep::RecordRef::Named { .. } => Record::Block {
                        thread: th.id,
                        id,
                        parent,
                        depth,
                        descriptor: n.descriptor,
                        begin: n.begin,
                        end: n.end,
                    },
                };
                dump.record(&record)?;
            }
        }
        for b in &tree.tail().bookmarks {
            dump.record(&Record::Bookmark {
                position: b.position,
                color: b.color,
                text: b.text,
            })?;
        }
        Ok(())
    }

    /// [`profcodec::to_profile`]: the blocks' call tree per thread, without spans.
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
    }

    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        let view = ep::parse(input.bytes()).map_err(invalid)?;
        let Some(to) = options.to.as_deref() else {
            // The same version: what reads is written back byte for byte (the model keeps every
            // byte), so once the tree has walked it all, the input is the output; no owned model
            // (64 bytes an empty descriptor slot) is built.
            view.tree().map_err(invalid)?;
            std::fs::write(out, input.bytes())?;
            return Ok(RewriteReport::default());
        };
        let model = view.to_model().map_err(invalid)?;
        let mut dropped = Vec::new();
        let model = match to {
            "gui" => model.to_gui_convention(),
            to => {
                let version = parse_version(to).ok_or_else(|| {
                    OpError::Usage(format!(
                        "an EasyProfiler capture is rewritten as `gui` or as a version a.b.c, not {to}"
                    ))
                })?;
                convert(model, version, &mut dropped)
            }
        };
        let bytes = model
            .to_bytes()
            .map_err(|e| OpError::Usage(e.to_string()))?;
        std::fs::write(out, bytes)?;
        Ok(RewriteReport {
            dropped,
            ..RewriteReport::default()
        })
    }
}

fn parse_version(s: &str) -> Option<ep::Version> {
    let mut it = s.trim_start_matches('v').split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map_or(Some(0), |m| m.parse().ok())?;
    let patch = it.next().map_or(Some(0), |p| p.parse().ok())?;
    let v = ep::Version::new(major, minor, patch);
    (v.0 >= ep::Version::new(0, 1, 0).0 && it.next().is_none()).then_some(v)
}

/// The model in another version's layout, dropping what that version cannot carry.
fn convert(mut m: ep::Capture, to: ep::Version, dropped: &mut Vec<String>) -> ep::Capture {
    if to == m.version {
        return m;
    }
    let layout = to.layout();
    if layout < ep::Layout::V2_1 {
        if !m.bookmarks.is_empty() {
            dropped.push(format!("{} bookmarks (from 2.1.0)", m.bookmarks.len()));
        }
        m.bookmarks.clear();
        m.tail = ep::Tail::default();
    }
    if !layout.has_values() {
        let before: usize = m.threads.iter().map(|t| t.records.len()).sum();
        for t in &mut m.threads {
            t.records
                .retain(|r| matches!(r.body, ep::RecordBody::Named(_)));
        }
        let after: usize = m.threads.iter().map(|t| t.records.len()).sum();
        if before != after {
            dropped.push(format!("{} value records (from 2.0.0)", before - after));
        }
    }
    if layout == ep::Layout::V1NoPid && m.pid != 0 {
        dropped.push("the pid (none up to 1.0.0)".into());
        m.pid = 0;
    }
    m.version = to;
    m.update_counters(ep::Convention::Runtime);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::dump::dump_value;

    fn block(begin: u64, end: u64, descriptor: u32) -> ep::Record {
        ep::Record {
            begin,
            end,
            descriptor,
            body: ep::RecordBody::Named(Vec::new()),
        }
    }

    fn capture(name: Vec<u8>, records: Vec<ep::Record>) -> Vec<u8> {
        let end = records.iter().map(|r| r.end).max().unwrap_or(0) + 1;
        let mut c = ep::Capture {
            version: ep::Version::V2_1_0,
            pid: 1,
            end_time: end,
            descriptors: vec![Some(Box::new(ep::Descriptor {
                id: 0,
                block_type: 1,
                status: 1,
                name,
                file: b"f.cpp".to_vec(),
                ..ep::Descriptor::default()
            }))],
            threads: vec![ep::Thread {
                id: 7,
                name: Some(b"Main".to_vec()),
                context_switches: Vec::new(),
                records,
            }],
            ..ep::Capture::default()
        };
        c.update_counters(ep::Convention::Runtime);
        c.to_bytes().expect("writable")
    }

    /// `bytes` written to a temporary file and opened as the CLI opens its inputs.
    fn opened(bytes: &[u8]) -> (tempfile::TempDir, Opened) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.prof");
        std::fs::write(&path, bytes).expect("write");
        let o = profcodec::open(&path).expect("open");
        (dir, o)
    }

    fn dump_bytes(input: &Opened) -> Vec<u8> {
        super::super::dump::dump_text(&EasyProfiler, input, super::super::dump::DumpLayout::Ndjson)
            .into_bytes()
    }

    fn testdata(name: &str) -> Vec<u8> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
        std::fs::read(dir.join(name)).expect("testdata")
    }

    #[test]
    fn profile_ranks_blocks_per_thread() {
        let input = testdata("small_v210.prof");
        let (_dir, input) = opened(&input);
        let profile = EasyProfiler.profile(&input).expect("profile");
        let view = ep::parse(input.bytes()).expect("parse");
        let tree = view.tree().expect("tree");
        assert_eq!(profile.contexts().len(), tree.threads.len());
        let top = profile
            .top(&profcodec_profile::Query::new().limit(3))
            .expect("top");
        assert_eq!(top.unit, "nanoseconds");
        assert_eq!(top.rows.len(), 3);
        // The first row is the block with the most self time, as the reader's totals say.
        let mut totals = tree.totals();
        totals.sort_by_key(|t| std::cmp::Reverse(t.self_time));
        let first = tree.descriptor(totals[0].descriptor).expect("descriptor");
        assert_eq!(top.rows[0].name, first.name().to_string());
        assert_eq!(top.rows[0].self_value, totals[0].self_time as f64);
        assert!(top.rows[0].calls.is_some_and(|c| c > 0.0));
    }

    #[test]
    fn a_long_name_is_dumped_once() {
        // 2,000 tiny blocks under one 65,000-byte name: 111 KB that once dumped 130 MB.
        let name = vec![b'n'; 65_000];
        let records = (0..2_000u64).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
        let bytes = capture(name, records);
        let (_dir, input) = opened(&bytes);
        let out = dump_bytes(&input);
        let long = vec![b'n'; 65_000];
        let times = out.windows(long.len()).filter(|w| *w == &long[..]).count();
        assert_eq!(times, 1);
        assert!(
            out.len() < 4 * bytes.len(),
            "{} bytes dumped from {}",
            out.len(),
            bytes.len()
        );
    }

    #[test]
    fn the_dump_is_flat_snake_case_records() {
        let records = (0..20_000u64).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
        let (_dir, input) = opened(&capture(b"flat".to_vec(), records));
        let out = dump_bytes(&input);
        let lines: Vec<serde_json::Value> = out
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("a JSON line"))
            .collect();
        // Header, descriptor, thread, then the blocks.
        assert_eq!(lines.len(), 3 + 20_000);
        assert_eq!(lines[0]["record"], "header");
        assert_eq!(lines[1]["record"], "descriptor");
        assert_eq!(lines[2]["record"], "thread");
        for (i, l) in lines[3..].iter().enumerate() {
            assert_eq!(l["record"], "block");
            assert_eq!(l["id"], i);
            assert_eq!(l["parent"], serde_json::Value::Null);
            assert_eq!(l["depth"], 0);
        }
        for l in &lines {
            for k in l.as_object().expect("object").keys() {
                assert!(!k.chars().any(|c| c.is_ascii_uppercase()), "{k}");
            }
        }
    }

    #[test]
    fn blocks_name_their_parent_and_depth() {
        let input = opened(&testdata("small_v210_gui_bookmarks.prof"));
        let doc = dump_value(&EasyProfiler, &input.1);
        let records = doc["records"].as_array().expect("records");
        let by_kind = |k: &str| records.iter().filter(|r| r["record"] == k).count();
        assert_eq!(by_kind("bookmark"), 2);
        assert_eq!(by_kind("context_switch"), 2);
        assert_eq!(by_kind("thread"), 2);
        assert_eq!(by_kind("value"), 24);
        let blocks: Vec<_> = records
            .iter()
            .filter(|r| r["record"] == "block" || r["record"] == "value")
            .collect();
        let depth_of = |id: &serde_json::Value| {
            blocks
                .iter()
                .find(|b| b["id"] == *id && b["thread"] == blocks[0]["thread"])
                .map(|b| b["depth"].as_u64().expect("depth"))
        };
        for b in blocks.iter().filter(|b| b["thread"] == blocks[0]["thread"]) {
            match depth_of(&b["parent"]) {
                Some(d) => assert_eq!(b["depth"].as_u64(), Some(d + 1)),
                None => assert_eq!(b["depth"], 0),
            }
        }
        let value = records
            .iter()
            .find(|r| r["record"] == "value")
            .expect("a value");
        assert_eq!(value["data_type"], "uint32");
        assert!(value["data"].is_u64());
    }

    #[test]
    fn validate_refuses_what_the_cpp_reader_refuses_by_depth() {
        let nest = |levels: u64| {
            capture(
                b"b".to_vec(),
                (0..levels)
                    .rev()
                    .map(|k| block(k + 1, 1000 - k, 0))
                    .collect(),
            )
        };
        let (_d1, ok) = opened(&nest(255));
        assert!(
            EasyProfiler
                .validate(&ok)
                .expect("valid")
                .findings
                .is_empty()
        );
        let (_d2, deep) = opened(&nest(256));
        match EasyProfiler.validate(&deep) {
            Err(OpError::Invalid { message, offset }) => {
                assert!(message.contains("expected a depth below 254"), "{message}");
                assert!(offset.is_some());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn trailing_bytes_are_a_finding() {
        let mut bytes = testdata("small_v210.prof");
        let end = bytes.len() as u64;
        bytes.extend_from_slice(&[0; 10]);
        let (_dir, input) = opened(&bytes);
        let v = EasyProfiler.validate(&input).expect("valid");
        assert_eq!(
            v.findings,
            vec![Finding::TrailingData {
                offset: end,
                size: 10
            }]
        );
    }

    #[test]
    fn info_leads_with_the_human_summary() {
        let (_dir, input) = opened(&testdata("small_v210_gui_bookmarks.prof"));
        let info = EasyProfiler.info(&input).expect("info");
        assert_eq!(info.details["time_span"], "559 ns");
        assert_eq!(
            info.details["thread_names"],
            "Main (tid 1481), Worker (tid 1482)"
        );
        assert_eq!(info.details["values"], 24);
        assert!(
            info.details["top_blocks_by_self_time"]
                .as_str()
                .expect("text")
                .starts_with("leaf: ")
        );
        for k in info.details.keys() {
            assert!(
                !k.contains(' ') && !k.chars().any(|c| c.is_ascii_uppercase()),
                "{k}"
            );
        }
    }

    #[test]
    fn rewrite_keeps_the_bytes_or_converts() {
        let bytes = testdata("small_v210_gui_bookmarks.prof");
        let (dir, input) = opened(&bytes);
        let same = dir.path().join("same.prof");
        EasyProfiler
            .rewrite(&input, &same, &RewriteOptions::default())
            .expect("rewrite");
        assert_eq!(std::fs::read(&same).expect("read"), bytes);
        let old = dir.path().join("old.prof");
        let report = EasyProfiler
            .rewrite(&input, &old, &RewriteOptions::to("1.3.0"))
            .expect("rewrite");
        assert_eq!(report.dropped.len(), 2, "{:?}", report.dropped);
    }
}
