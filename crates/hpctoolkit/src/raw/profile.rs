//! profile.db structures (FORMATS.md, `profile.db` version 4.0).

use binrw::binrw;
use zerocopy::little_endian::{F64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::raw_struct;

/// Profile Info section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfileInfosHeader {
    /// `pProfiles`: array of {PI}.
    pub p_profiles: u64,
    /// `nProfiles`.
    pub n_profiles: u32,
    /// `szProfile`: stride (0x30 in real files, as-implemented; FORMATS.md's "40" is wrong).
    pub sz_profile: u8,
}

/// `[PSVB]`: Profile-Major Sparse Value Block header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfileValueBlock {
    /// `nValues`.
    pub n_values: u64,
    /// `pValues`: array of [`Value`].
    pub p_values: u64,
    /// `nCtxs`.
    #[brw(pad_after = 4)]
    pub n_ctxs: u32,
    /// `pCtxIndices`: array of [`CtxIndex`].
    pub p_ctx_indices: u64,
}

/// {PI}: one profile.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProfileInfo {
    /// `valueBlock`.
    pub value_block: ProfileValueBlock,
    /// `pIdTuple`: pointer into the Identifier Tuple section, 0 for the summary profile.
    pub p_id_tuple: u64,
    /// `flags`: bit 0 [`PROFILE_IS_SUMMARY`].
    #[brw(pad_after = 4)]
    pub flags: u32,
}

/// {PI} flags bit 0: a summary profile.
pub const PROFILE_IS_SUMMARY: u32 = 1;

/// `[HIT]` header: `nIds`, then 6 bytes of padding, then the identifiers.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdTupleHeader {
    /// `nIds`.
    #[brw(pad_after = 6)]
    pub n_ids: u16,
}

/// {Id}: one identification of a hierarchical identifier tuple (0x10 bytes).
///
/// `Debug` names the kind as hpcprof names it (`kind: RANK`; a kind past hpcprof's names
/// prints its number).
#[derive(
    Clone, Copy, PartialEq, Eq, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Identifier {
    /// `kind`: an index into meta.db's identifier names.
    pub kind: u8,
    /// Padding byte.
    pub reserved: u8,
    /// `flags`: bit 0 `isPhysical`.
    pub flags: U16,
    /// `logicalId`.
    pub logical_id: U32,
    /// `physicalId`.
    pub physical_id: U64,
}

/// {Id} flags bit 0: `kind` names a physical construct identified by `physicalId`.
pub const IDENTIFIER_IS_PHYSICAL: u16 = 1;

impl Identifier {
    /// An identifier (padding zero).
    pub fn new(kind: u8, flags: u16, logical_id: u32, physical_id: u64) -> Self {
        Identifier {
            kind,
            reserved: 0,
            flags: U16::new(flags),
            logical_id: U32::new(logical_id),
            physical_id: U64::new(physical_id),
        }
    }

    /// True when `isPhysical` is set.
    pub fn is_physical(&self) -> bool {
        self.flags.get() & IDENTIFIER_IS_PHYSICAL != 0
    }
}

/// {Val} of a Profile-Major Sparse Value Block: `metricId` then `value` (0xa bytes, alignment 1).
#[derive(
    Debug, Clone, Copy, PartialEq, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct Value {
    /// `metricId`.
    pub metric_id: U16,
    /// `value`.
    pub value: F64,
}

impl Value {
    /// A value record.
    pub fn new(metric_id: u16, value: f64) -> Self {
        Value {
            metric_id: U16::new(metric_id),
            value: F64::new(value),
        }
    }

    /// `metricId`.
    #[inline]
    pub fn metric_id(&self) -> u16 {
        self.metric_id.get()
    }

    /// `value`.
    #[inline]
    pub fn value(&self) -> f64 {
        self.value.get()
    }
}

/// {Idx} of a Profile-Major Sparse Value Block: `ctxId` then `startIndex` (0xc bytes, alignment 1).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    FromBytes,
    IntoBytes,
    KnownLayout,
    Immutable,
    Unaligned,
)]
#[repr(C)]
pub struct CtxIndex {
    /// `ctxId`.
    pub ctx_id: U32,
    /// `startIndex` into the block's values.
    pub start_index: U64,
}

impl CtxIndex {
    /// An index record.
    pub fn new(ctx_id: u32, start_index: u64) -> Self {
        CtxIndex {
            ctx_id: U32::new(ctx_id),
            start_index: U64::new(start_index),
        }
    }

    /// `ctxId`.
    #[inline]
    pub fn ctx_id(&self) -> u32 {
        self.ctx_id.get()
    }

    /// `startIndex`.
    #[inline]
    pub fn start_index(&self) -> u64 {
        self.start_index.get()
    }
}

raw_struct! {
    ProfileInfosHeader => 0x0d, "ProfileInfos";
    ProfileValueBlock => 0x20, "PSVB";
    ProfileInfo => 0x30, "PI";
    IdTupleHeader => 0x08, "HIT";
    Identifier => 0x10, "Id";
    Value => 0x0a, "Val";
    CtxIndex => 0x0c, "Idx";
}
