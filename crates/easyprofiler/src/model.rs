//! The owned model of a capture: plain data holding every byte the file holds, so that
//! [`Capture::write`](crate::Capture::write) gives back the same bytes (the crate docs, "The format").
//!
//! Strings are kept as bytes (the C++ library writes whatever `char*` it was given) without
//! their final NUL; the writer adds it back.

use crate::raw;

/// A packed version: `major << 24 | minor << 16 | patch`.
///
/// `Debug` and `Display` print its parts (`Version(2.1.0)`, `2.1.0`), not the packed number.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Version(pub u32);

impl Version {
    /// 1.0.0 (no pid in the header).
    pub const V1_0_0: Version = Version(raw::V_100);
    /// 1.2.0 (u32 ids).
    pub const V1_2_0: Version = Version(raw::version(1, 2, 0));
    /// 1.3.0 (u64 ids).
    pub const V1_3_0: Version = Version(raw::V_130);
    /// 2.0.1.
    pub const V2_0_1: Version = Version(raw::version(2, 0, 1));
    /// 2.1.0.
    pub const V2_1_0: Version = Version(raw::V_210);

    /// A version from its parts.
    pub const fn new(major: u8, minor: u8, patch: u16) -> Self {
        Version(raw::version(major, minor, patch))
    }
    /// The major part.
    pub fn major(self) -> u8 {
        (self.0 >> 24) as u8
    }
    /// The minor part.
    pub fn minor(self) -> u8 {
        (self.0 >> 16) as u8
    }
    /// The patch part.
    pub fn patch(self) -> u16 {
        self.0 as u16
    }
    /// The header layout this version uses.
    pub fn layout(self) -> Layout {
        match self.0 {
            v if v <= raw::V_100 => Layout::V1NoPid,
            v if v < raw::V_130 => Layout::V1Pid32,
            v if v < raw::V_200 => Layout::V1Pid64,
            v if v < raw::V_210 => Layout::V2_0,
            _ => Layout::V2_1,
        }
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major(), self.minor(), self.patch())
    }
}

impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Version({self})")
    }
}

/// The layouts the versions use (crate docs, "The format": Header).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layout {
    /// Up to 1.0.0: 1.x header without pid, u32 thread ids.
    V1NoPid,
    /// After 1.0.0, before 1.3.0: u32 pid, thread ids and context-switch targets.
    V1Pid32,
    /// 1.3.x: u64 ids.
    V1Pid64,
    /// 2.0.x: rearranged header, value records.
    V2_0,
    /// 2.1.0 and later: threads and bookmarks counted, end signatures.
    V2_1,
}

impl Layout {
    /// True when thread ids and context-switch targets are u64.
    pub fn wide_ids(self) -> bool {
        self >= Layout::V1Pid64
    }
    /// True when records of descriptors of type 2 are value records.
    pub fn has_values(self) -> bool {
        self >= Layout::V2_0
    }
    /// Size of the header, prelude included.
    pub fn header_size(self) -> usize {
        match self {
            Layout::V1NoPid => 8 + 48,
            Layout::V1Pid32 => 8 + 52,
            Layout::V1Pid64 => 8 + 56,
            Layout::V2_0 => 8 + 56,
            Layout::V2_1 => 8 + 64,
        }
    }
}

/// The header counters, kept as stored so that a rewrite is byte-identical;
/// [`Capture::update_counters`] recomputes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Counters {
    /// Context switches + records.
    pub blocks_count: u32,
    /// Sum of record sizes, prefixes excluded.
    pub memory_size: u64,
    /// Descriptor bytes: without prefixes (runtime writer) or with them (GUI writer).
    pub descriptors_memory_size: u64,
    /// Threads (written from 2.1.0).
    pub threads_count: u32,
    /// Bookmarks (written from 2.1.0).
    pub bookmarks_count: u16,
    /// Header padding (written from 2.1.0; 0 in real files).
    pub padding: u16,
}

/// Which writer's conventions [`Capture::update_counters`] follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// The profiled program's writer (PM:1051-1141): `descriptors_memory_size` without the u16
    /// prefixes.
    Runtime,
    /// The GUI's save (W:499): `descriptors_memory_size` with the prefixes.
    Gui,
}

/// A block descriptor (crate docs, "The format": Descriptors).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Descriptor {
    /// The id stored in the descriptor (equals its slot in files written by the library).
    pub id: u32,
    /// Source line.
    pub line: i32,
    /// ARGB colour.
    pub color: u32,
    /// 0 Event, 1 Block, 2 Value (see [`BlockType`]).
    pub block_type: u8,
    /// Status flags (OFF 0, ON 1, FORCE_ON 3, OFF_RECURSIVE 4, ...).
    pub status: u8,
    /// Name, without its NUL.
    pub name: Vec<u8>,
    /// Source file, without its NUL.
    pub file: Vec<u8>,
}

/// The descriptor types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockType {
    /// An instant.
    Event,
    /// A scoped block.
    Block,
    /// An arbitrary value (from 2.0).
    Value,
}

impl BlockType {
    /// The type for a stored byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            0 => Some(BlockType::Event),
            1 => Some(BlockType::Block),
            2 => Some(BlockType::Value),
            _ => None,
        }
    }
}

/// A thread section.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Thread {
    /// Thread id (u32 on disk before 1.3.0).
    pub id: u64,
    /// Name without its NUL; `None` when the name size is 0.
    pub name: Option<Vec<u8>>,
    /// Context switches, in file order.
    pub context_switches: Vec<ContextSwitch>,
    /// Records (blocks, events, values), in file order (post-order).
    pub records: Vec<Record>,
}

/// A context switch: the thread was switched out from `begin` to `end`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct ContextSwitch {
    /// Begin (ticks).
    pub begin: u64,
    /// End (ticks).
    pub end: u64,
    /// The thread switched to (u32 on disk before 1.3.0).
    pub target_tid: u64,
    /// The target's name, without its NUL.
    pub name: Vec<u8>,
}

/// A block, event or value record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Record {
    /// Begin (ticks); a value's timestamp.
    pub begin: u64,
    /// End (ticks); equals `begin` for events and values.
    pub end: u64,
    /// Descriptor id.
    pub descriptor: u32,
    /// What follows the fixed part.
    pub body: RecordBody,
}

/// What follows a record's 20-byte fixed part.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub enum RecordBody {
    /// Block or event: the runtime name without its NUL (empty for most blocks).
    Named(Vec<u8>),
    /// A value record (descriptor type 2, from 2.0).
    Value(Value),
}

/// An arbitrary value (SB:168-245).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Value {
    /// The name stub and padding bytes (0, 0 in every file the library writes).
    pub stub: [u8; 2],
    /// The `DataType` byte (see [`DataType`]).
    pub data_type: u8,
    /// The is-array byte (1 for arrays and strings).
    pub is_array: u8,
    /// Opaque id (by default the variable's address).
    pub value_id: u64,
    /// The data, `data_size` bytes.
    pub data: Vec<u8>,
}

/// The value data types (`profiler::DataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum DataType {
    Bool,
    Char,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Uint64,
    Float,
    Double,
    String,
}

impl DataType {
    /// Every type, in the order of their byte values.
    pub const ALL: [DataType; 13] = [
        DataType::Bool,
        DataType::Char,
        DataType::Int8,
        DataType::Uint8,
        DataType::Int16,
        DataType::Uint16,
        DataType::Int32,
        DataType::Uint32,
        DataType::Int64,
        DataType::Uint64,
        DataType::Float,
        DataType::Double,
        DataType::String,
    ];
    /// The type of a stored byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        Self::ALL.get(usize::from(v)).copied()
    }
    /// The stored byte.
    pub fn to_u8(self) -> u8 {
        self as u8
    }
    /// Bytes per element (1 for strings).
    pub fn element_size(self) -> usize {
        match self {
            DataType::Bool | DataType::Char | DataType::Int8 | DataType::Uint8 => 1,
            DataType::String => 1,
            DataType::Int16 | DataType::Uint16 => 2,
            DataType::Int32 | DataType::Uint32 | DataType::Float => 4,
            DataType::Int64 | DataType::Uint64 | DataType::Double => 8,
        }
    }
}

/// A value's data decoded by its type; arrays have `data_size / element size` elements (a
/// scalar has one). Strings are read by size: `EASY_TEXT` includes the NUL, `EASY_STRING` may not.
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)]
pub enum ValueData {
    Bool(Vec<bool>),
    Char(Vec<i8>),
    Int8(Vec<i8>),
    Uint8(Vec<u8>),
    Int16(Vec<i16>),
    Uint16(Vec<u16>),
    Int32(Vec<i32>),
    Uint32(Vec<u32>),
    Int64(Vec<i64>),
    Uint64(Vec<u64>),
    Float(Vec<f32>),
    Double(Vec<f64>),
    String(Vec<u8>),
}

impl ValueData {
    /// Decodes `data` as elements of `ty` (trailing bytes that do not make a whole element are
    /// ignored, as the C++ array view does).
    pub fn decode(ty: DataType, data: &[u8]) -> ValueData {
        fn each<const N: usize, T>(data: &[u8], f: impl Fn([u8; N]) -> T) -> Vec<T> {
            data.chunks_exact(N)
                .map(|c| {
                    let mut a = [0u8; N];
                    a.copy_from_slice(c);
                    f(a)
                })
                .collect()
        }
        match ty {
            DataType::Bool => ValueData::Bool(data.iter().map(|&b| b != 0).collect()),
            DataType::Char => ValueData::Char(data.iter().map(|&b| b as i8).collect()),
            DataType::Int8 => ValueData::Int8(data.iter().map(|&b| b as i8).collect()),
            DataType::Uint8 => ValueData::Uint8(data.to_vec()),
            DataType::Int16 => ValueData::Int16(each(data, i16::from_le_bytes)),
            DataType::Uint16 => ValueData::Uint16(each(data, u16::from_le_bytes)),
            DataType::Int32 => ValueData::Int32(each(data, i32::from_le_bytes)),
            DataType::Uint32 => ValueData::Uint32(each(data, u32::from_le_bytes)),
            DataType::Int64 => ValueData::Int64(each(data, i64::from_le_bytes)),
            DataType::Uint64 => ValueData::Uint64(each(data, u64::from_le_bytes)),
            DataType::Float => ValueData::Float(each(data, f32::from_le_bytes)),
            DataType::Double => ValueData::Double(each(data, f64::from_le_bytes)),
            DataType::String => ValueData::String(data.to_vec()),
        }
    }
}

impl Value {
    /// The data type, when the byte names one.
    pub fn kind(&self) -> Option<DataType> {
        DataType::from_u8(self.data_type)
    }
    /// True for arrays (and strings).
    pub fn is_array(&self) -> bool {
        self.is_array != 0
    }
    /// The decoded data, when the type byte is known.
    pub fn decode(&self) -> Option<ValueData> {
        Some(ValueData::decode(self.kind()?, &self.data))
    }
}

/// A bookmark (2.1.0 and later, written by the GUI).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Bookmark {
    /// Position in ns (never converted).
    pub position: u64,
    /// ARGB colour.
    pub color: u32,
    /// Text, without its NUL.
    pub text: Vec<u8>,
}

/// What follows the threads (2.1.0 and later), kept so that a rewrite is byte-identical.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Tail {
    /// The file ended right after the threads, without the end signature (the C++ reader
    /// accepts it).
    pub missing_threads_end_mark: bool,
    /// The file ended right after the bookmarks, without their end signature.
    pub missing_bookmarks_end_mark: bool,
    /// Bytes after everything read (ignored by the C++ reader).
    pub trailing: Vec<u8>,
}

/// A whole capture, owned.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Capture {
    /// Version; decides the layout.
    pub version: Version,
    /// Process id (absent on disk up to 1.0.0, u32 before 1.3.0).
    pub pid: u64,
    /// Ticks per second; 0 (GUI save) and 1e9 (std::chrono builds) mean ns.
    pub cpu_frequency: i64,
    /// Capture begin (ticks).
    pub begin_time: u64,
    /// Capture end (ticks).
    pub end_time: u64,
    /// Header counters as stored.
    pub counters: Counters,
    /// Descriptor slots; `None` is an empty slot (size 0). Boxed, so that an empty slot (2 bytes
    /// in the file) takes 8 bytes here, not a whole descriptor's 64.
    pub descriptors: Vec<Option<Box<Descriptor>>>,
    /// Thread sections in file order.
    pub threads: Vec<Thread>,
    /// Bookmarks (2.1.0 and later).
    pub bookmarks: Vec<Bookmark>,
    /// What follows the threads.
    pub tail: Tail,
}

impl Record {
    /// Size on disk after the u16 prefix.
    pub fn encoded_size(&self) -> usize {
        match &self.body {
            RecordBody::Named(name) => raw::BLOCK_BASE + name.len() + 1,
            RecordBody::Value(v) => raw::VALUE_BASE + v.data.len(),
        }
    }
}

impl ContextSwitch {
    /// Size on disk after the u16 prefix, for a layout.
    pub fn encoded_size(&self, layout: Layout) -> usize {
        let tid = if layout.wide_ids() { 8 } else { 4 };
        16 + tid + self.name.len() + 1
    }
}

impl Descriptor {
    /// Size on disk after the u16 prefix.
    pub fn encoded_size(&self) -> usize {
        raw::DESCRIPTOR_BASE + self.name.len() + 1 + self.file.len() + 1
    }
}

impl Capture {
    /// Recomputes the header counters from the content, following a writer's conventions.
    pub fn update_counters(&mut self, convention: Convention) {
        let layout = self.version.layout();
        let mut blocks = 0u64;
        let mut memory = 0u64;
        for t in &self.threads {
            blocks += (t.context_switches.len() + t.records.len()) as u64;
            memory += t
                .context_switches
                .iter()
                .map(|c| c.encoded_size(layout) as u64)
                .sum::<u64>();
            memory += t
                .records
                .iter()
                .map(|r| r.encoded_size() as u64)
                .sum::<u64>();
        }
        let prefix = match convention {
            Convention::Runtime => 0,
            Convention::Gui => 2,
        };
        let desc_mem = self
            .descriptors
            .iter()
            .map(|d| d.as_ref().map_or(0, |d| d.encoded_size() as u64) + prefix)
            .sum();
        self.counters = Counters {
            blocks_count: blocks as u32,
            memory_size: memory,
            descriptors_memory_size: desc_mem,
            ..Counters::default()
        };
        // Threads and bookmarks are counted in the header from 2.1.0 only.
        if layout == Layout::V2_1 {
            self.counters.threads_count = self.threads.len() as u32;
            self.counters.bookmarks_count = self.bookmarks.len() as u16;
        }
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn versions_debug_print_their_parts() {
        assert_eq!(format!("{:?}", Version::V2_1_0), "Version(2.1.0)");
        assert_eq!(format!("{:?}", Version::new(1, 3, 7)), "Version(1.3.7)");
        assert_eq!(Version::V1_2_0.to_string(), "1.2.0");
    }
}
