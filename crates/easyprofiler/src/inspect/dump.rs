//! `dump`: the header, the descriptors, the oddities, then per thread its context switches and
//! its records in the tree's order (file order), each naming its parent and depth; the
//! bookmarks last. Streamed: the records are read again from the input as they are written
//! ([`Walk::flat`](crate::Walk::flat)), no node per block in memory.
//!
//! The records are documented in the CLI README (section EasyProfiler).

use profcodec_common::inspect::{Dump, Error};
use serde::Serialize;

use super::invalid;
use crate::{
    BlockType, DataType, FlatBlock, Name, Oddity, RecordRef, TickConverter, TreeDescriptor,
    ValueData, c_str, parse,
};

/// The snake_case name of a descriptor type.
fn block_type_name(t: u8) -> &'static str {
    match BlockType::from_u8(t) {
        Some(BlockType::Event) => "event",
        Some(BlockType::Block) => "block",
        Some(BlockType::Value) => "value",
        None => "unknown",
    }
}

/// The snake_case name of a value's data type.
fn data_type_name(t: u8) -> &'static str {
    match DataType::from_u8(t) {
        Some(DataType::Bool) => "bool",
        Some(DataType::Char) => "char",
        Some(DataType::Int8) => "int8",
        Some(DataType::Uint8) => "uint8",
        Some(DataType::Int16) => "int16",
        Some(DataType::Uint16) => "uint16",
        Some(DataType::Int32) => "int32",
        Some(DataType::Uint32) => "uint32",
        Some(DataType::Int64) => "int64",
        Some(DataType::Uint64) => "uint64",
        Some(DataType::Float) => "float",
        Some(DataType::Double) => "double",
        Some(DataType::String) => "string",
        None => "unknown",
    }
}

/// The snake_case name of an oddity.
fn oddity_kind(o: &Oddity) -> &'static str {
    match o {
        Oddity::ZeroCounter { .. } => "zero_counter",
        Oddity::NonZeroPadding { .. } => "non_zero_padding",
        Oddity::BlocksCount { .. } => "blocks_count",
        Oddity::MemorySizeExceeded { .. } => "memory_size_exceeded",
        Oddity::MemorySizeLarger { .. } => "memory_size_larger",
        Oddity::DescriptorMemoryExceeded { .. } => "descriptor_memory_exceeded",
        Oddity::FewerThreads { .. } => "fewer_threads",
        Oddity::DepthLimit { .. } => "depth_limit",
        Oddity::MissingEndMark { .. } => "missing_end_mark",
        Oddity::TrailingBytes { .. } => "trailing_bytes",
    }
}

/// The data of a value record: a scalar, an array, or a string (read by size, up to its first
/// NUL).
enum ValueJson<'a> {
    Data(ValueData, bool),
    Unknown(&'a [u8]),
}

impl Serialize for ValueJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use ValueData as V;
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
                    V::String(v) => s.collect_str(&Name(c_str(v))),
                }
            }
        }
    }
}

/// The dump header.
#[derive(Serialize)]
struct Header {
    /// [`crate::FORMAT_NAME`].
    format: &'static str,
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

fn descriptor_record<'a>(id: u32, d: &TreeDescriptor<'a>) -> Record<'a> {
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

pub(super) fn dump(bytes: &[u8], dump: &mut Dump<'_>) -> Result<(), Error> {
    let view = parse(bytes).map_err(invalid)?;
    let h = view.header();
    let conv = TickConverter::new(h.cpu_frequency);
    dump.header(&Header {
        format: crate::FORMAT_NAME,
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
            let d = TreeDescriptor {
                descriptor,
                runtime_name: None,
            };
            dump.record(&descriptor_record(id as u32, &d))?;
        }
    }
    // The walk checks everything first (so a damaged capture shows the same records as
    // before); then every block comes in file order with its parent and depth, read again
    // from the input chunk by chunk (`Walk::flat`), with no node per block in memory.
    let walk = view.walk().map_err(invalid)?;
    let first_runtime = walk.file_descriptors_len() as u32;
    for (i, d) in walk.runtime_descriptors().iter().enumerate() {
        dump.record(&descriptor_record(first_runtime + i as u32, d))?;
    }
    for o in &walk.oddities {
        dump.record(&Record::Oddity {
            kind: oddity_kind(o),
            offset: o.offset(),
            message: o.to_string(),
        })?;
    }
    for (t, th) in walk.threads.iter().enumerate() {
        dump.record(&Record::Thread {
            id: th.id,
            name: th.name,
            blocks: th.blocks as usize,
            context_switches: th.context_switches as usize,
        })?;
        for c in walk.context_switches(th) {
            dump.record(&Record::ContextSwitch {
                thread: th.id,
                id: c.block_index,
                begin: c.begin,
                end: c.end,
                target_thread: c.target_tid,
                target_name: c.name,
            })?;
        }
        for flat in walk.flat(t) {
            let FlatBlock {
                id,
                parent,
                depth,
                block: n,
                ..
            } = flat;
            // Only a record of a value descriptor can be a value (the walk read every record
            // whole, so the others decode as blocks): only those are read again.
            let value = walk.descriptor(n.descriptor).is_some_and(|d| {
                matches!(
                    BlockType::from_u8(d.descriptor.block_type),
                    Some(BlockType::Value)
                )
            });
            let decoded = if value {
                Some(view.record_at(n.offset).map_err(invalid)?)
            } else {
                None
            };
            let record = match decoded {
                Some(RecordRef::Value { head, data }) => Record::Value {
                    thread: th.id,
                    id,
                    parent,
                    depth,
                    descriptor: n.descriptor,
                    time: n.end,
                    value_id: head.value_id.get(),
                    data_type: data_type_name(head.data_type),
                    is_array: head.is_array != 0,
                    data: match DataType::from_u8(head.data_type) {
                        Some(t) => ValueJson::Data(ValueData::decode(t, data), head.is_array != 0),
                        None => ValueJson::Unknown(data),
                    },
                },
                _ => Record::Block {
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
    for b in &walk.tail().bookmarks {
        dump.record(&Record::Bookmark {
            position: b.position,
            color: b.color,
            text: b.text,
        })?;
    }
    Ok(())
}
