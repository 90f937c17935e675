//! The bytes on disk (the crate docs, "The format"): constants, the binrw header structs of every version and
//! the zerocopy views of the fixed parts of records. No logic lives here.

use binrw::binrw;
use zerocopy::byteorder::{I32, LittleEndian, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The file signature, `ysaE` on disk (crate docs, "The format": Header).
pub const SIGNATURE: u32 = 0x4561_7379;

/// Packs a version as the library does: `major << 24 | minor << 16 | patch`.
pub const fn version(major: u8, minor: u8, patch: u16) -> u32 {
    ((major as u32) << 24) | ((minor as u32) << 16) | patch as u32
}

/// The lowest version the C++ reader accepts (0.1.0).
pub const V_MIN: u32 = version(0, 1, 0);
/// Up to and including 1.0.0 the header has no pid.
pub const V_100: u32 = version(1, 0, 0);
/// From 1.3.0 pid, thread ids and context-switch targets are u64.
pub const V_130: u32 = version(1, 3, 0);
/// From 2.0.0 the header is rearranged and value records exist.
pub const V_200: u32 = version(2, 0, 0);
/// From 2.1.0 the header counts threads and bookmarks, and end signatures follow the threads.
pub const V_210: u32 = version(2, 1, 0);

/// The signature and version every file starts with.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prelude {
    /// [`SIGNATURE`].
    pub signature: u32,
    /// Packed version.
    pub version: u32,
}

/// The 1.x header after the prelude and the pid (R:703-754): shared by every version below 2.0.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV1Body {
    /// Ticks per second; 0 means the times are already ns.
    pub cpu_frequency: i64,
    /// Capture begin (ticks).
    pub begin_time: u64,
    /// Capture end (ticks).
    pub end_time: u64,
    /// Context switches + records.
    pub blocks_count: u32,
    /// Sum of record sizes, prefixes excluded.
    pub memory_size: u64,
    /// Descriptor slots.
    pub descriptors_count: u32,
    /// Descriptor bytes (a capacity hint).
    pub descriptors_memory_size: u64,
}

/// Header of versions up to 1.0.0: no pid.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV100 {
    /// The fields.
    pub body: HeaderV1Body,
}

/// Header of versions after 1.0.0 and before 1.3.0: u32 pid.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV120 {
    /// Process id.
    pub pid: u32,
    /// The fields.
    pub body: HeaderV1Body,
}

/// Header of 1.3.x: u64 pid.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV130 {
    /// Process id.
    pub pid: u64,
    /// The fields.
    pub body: HeaderV1Body,
}

/// Header of 2.0.x (R:756-794).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV200 {
    /// Process id.
    pub pid: u64,
    /// Ticks per second; 0 means ns.
    pub cpu_frequency: i64,
    /// Capture begin.
    pub begin_time: u64,
    /// Capture end.
    pub end_time: u64,
    /// Sum of record sizes, prefixes excluded.
    pub memory_size: u64,
    /// Descriptor bytes (a capacity hint).
    pub descriptors_memory_size: u64,
    /// Context switches + records.
    pub blocks_count: u32,
    /// Descriptor slots.
    pub descriptors_count: u32,
}

/// Header of 2.1.x and later (R:796-818).
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderV210 {
    /// The 2.0 fields.
    pub v200: HeaderV200,
    /// Thread sections.
    pub threads_count: u32,
    /// Bookmarks after the threads.
    pub bookmarks_count: u16,
    /// Must be 0.
    pub padding: u16,
}

type Le16 = U16<LittleEndian>;
type Le32 = U32<LittleEndian>;
type Le64 = U64<LittleEndian>;

/// The fixed part of a descriptor after its size prefix (SB:129-163): 16 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct DescriptorBase {
    /// Descriptor id (equals its slot index).
    pub id: Le32,
    /// Source line.
    pub line: I32<LittleEndian>,
    /// ARGB colour.
    pub color: Le32,
    /// 0 Event, 1 Block, 2 Value.
    pub block_type: u8,
    /// Status flags.
    pub status: u8,
    /// Name length including its NUL.
    pub name_len: Le16,
}

/// The fixed part of a block, event or value record: 20 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BlockBase {
    /// Begin (ticks).
    pub begin: Le64,
    /// End (ticks).
    pub end: Le64,
    /// Descriptor id.
    pub id: Le32,
}

/// The fixed part of a value record (SB:168-245): 34 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct ValueBase {
    /// Timestamp twice and the descriptor id.
    pub block: BlockBase,
    /// 0, so that the C++ reader sees an empty runtime name.
    pub name_stub: u8,
    /// 0.
    pub padding: u8,
    /// Bytes of data after this header.
    pub data_size: Le16,
    /// `DataType`.
    pub data_type: u8,
    /// 1 for arrays and strings.
    pub is_array: u8,
    /// Opaque value id.
    pub value_id: Le64,
}

/// The fixed part of a context switch from 1.3.0: 24 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CSwitchBase {
    /// Begin (ticks).
    pub begin: Le64,
    /// End (ticks).
    pub end: Le64,
    /// Target thread id.
    pub target_tid: Le64,
}

/// The fixed part of a context switch before 1.3.0 (the block layout reused): 20 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CSwitchBaseV1 {
    /// Begin (ticks).
    pub begin: Le64,
    /// End (ticks).
    pub end: Le64,
    /// Target thread id.
    pub target_tid: Le32,
}

/// The fixed part of a bookmark after its size prefix (R:1285-1334): 12 bytes.
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct BookmarkBase {
    /// Position (ns, never converted).
    pub position: Le64,
    /// ARGB colour.
    pub color: Le32,
}

/// Size of [`DescriptorBase`].
pub const DESCRIPTOR_BASE: usize = 16;
/// Size of [`BlockBase`].
pub const BLOCK_BASE: usize = 20;
/// Size of [`ValueBase`].
pub const VALUE_BASE: usize = 34;
/// Size of [`BookmarkBase`].
pub const BOOKMARK_BASE: usize = 12;
