//! The bytes on disk: magics, constants, the fixed-size headers (binrw) and the records of the
//! large arrays (zerocopy views with alignment-1 big-endian fields). No logic lives here.
//!
//! Citations are to the grammar of `crate::format` and HPCToolkit's
//! `src/common/lean/hpcrun-fmt.{h,c}`.

use binrw::binrw;
use zerocopy::byteorder::{BigEndian, I32, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The 16-byte magic of the little-endian trunk version (`crate::format`, 02.00l).
pub const MAGIC_0200L: &[u8; 16] = b"HPCRUN____02.00l";
/// The 18-byte prefix of every later profile magic, followed by `NN.NN` and `b`.
pub const PROFILE_PREFIX: &[u8; 18] = b"HPCRUN-profile____";
/// The 18-byte prefix of a trace magic, followed by `NN.NN` and `b`.
pub const TRACE_PREFIX: &[u8; 18] = b"HPCRUN-trace______";
/// The epoch tag of versions before 04.00 (hpcrun-fmt.h, `HPCRUN_FMT_EpochTag`).
pub const EPOCH_TAG: &[u8; 8] = b"EPOCH___";
/// The last word of a 04.00 footer: "HPCRUNsm" (hpcrun-fmt.h, `HPCRUNsm`).
pub const FOOTER_MAGIC: u64 = 0x4850_4352_554E_736D;
/// The context id of the entry that ends a 04.00 context index: "end!" (`LastNodeEnd`).
pub const CONTEXT_END: u32 = 0x656E_6421;
/// 04.00 sections start at multiples of this (write_data.c, `MULTIPLE_1024`).
pub const SECTION_ALIGN: u64 = 1024;
/// Size of the 04.00 footer: 14 x u64 (`SF_footer_SIZE`).
pub const FOOTER_SIZE: usize = 112;
/// Epoch flag bit 0: the epoch was measured with logical unwinding (LUSH); CCT nodes carry the
/// association and the logical IP (hpcrun-fmt.h, `epoch_flags_bitfield.isLogicalUnwind`).
pub const EPOCH_FLAG_LOGICAL_UNWIND: u64 = 1;
/// 04.00 CCT node flag bit 0: the node comes from a stack unwind (`HPCFMT_CCT_FLAG_UNWOUND`).
pub const CCT_FLAG_UNWOUND: u8 = 1;
/// Trace header flag bit 0: records carry a metric id (`HPCTRACE_HDR_FLAGS_DATA_CENTRIC_BIT_POS`).
pub const TRACE_FLAG_DATA_CENTRIC: u64 = 1;
/// Legacy (02.00l, 01.98b) metric flag: values are doubles (`HPCRUN_MetricFlag_Real`, 1 << 2).
pub const LEGACY_METRIC_FLAG_REAL: u64 = 1 << 2;

/// The 04.00 footer: start and end of each section, the footer's start, the magic.
#[binrw]
#[brw(big)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footer {
    /// Header section.
    pub hdr_start: u64,
    /// End of the header section.
    pub hdr_end: u64,
    /// Load map section.
    pub loadmap_start: u64,
    /// End of the load map.
    pub loadmap_end: u64,
    /// CCT section.
    pub cct_start: u64,
    /// End of the CCT.
    pub cct_end: u64,
    /// Metric table section.
    pub metric_tbl_start: u64,
    /// End of the metric table.
    pub metric_tbl_end: u64,
    /// Id-tuple dictionary section.
    pub dictionary_start: u64,
    /// End of the dictionary.
    pub dictionary_end: u64,
    /// Sparse metrics section.
    pub sparse_start: u64,
    /// End of the sparse metrics.
    pub sparse_end: u64,
    /// Offset of this footer.
    pub footer_start: u64,
    /// [`FOOTER_MAGIC`].
    pub magic: u64,
}

/// The 16 flag bytes of a metric descriptor (02.00b and later).
///
/// hpcrun writes `hpcrun_metricFlags_t` as raw host-order bytes (`hpcfmt_intX_fwrite`), so the
/// two-byte `partner` and the eight unused bytes are little-endian on the x86 and ARM hosts
/// hpcrun runs on, while the rest of the file is big-endian.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetricFlagsRaw {
    /// `MetricFlags_Ty_t`.
    pub ty: u8,
    /// `MetricFlags_ValTy_t`.
    pub val_ty: u8,
    /// `MetricFlags_ValFmt_t`.
    pub val_fmt: u8,
    /// `move2proc` (a pad byte in older releases).
    pub move2proc: u8,
    /// Partner metric id (host order).
    #[brw(little)]
    pub partner: u16,
    /// Show flag.
    pub show: u8,
    /// Show-percent flag.
    pub show_percent: u8,
    /// `unused1` (host order).
    #[brw(little)]
    pub unused: u64,
}

/// The four fields after a metric descriptor's format string (02.00b from release 2018.09, 03.00b,
/// 04.00b): `is_frequency_metric`, `aux_info` (hpcrun-fmt.c, `hpcrun_fmt_metricDesc_fwrite`).
#[binrw]
#[brw(big)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MetricAuxRaw {
    /// `is_frequency_metric` as u16.
    pub is_frequency: u16,
    /// `aux_info.is_multiplexed` as u16.
    pub is_multiplexed: u16,
    /// `aux_info.threshold_mean`.
    pub threshold_mean: f64,
    /// `aux_info.num_samples`.
    pub num_samples: u64,
}

/// The fixed part of an epoch header in 02.00l and 01.98b: flags, return-address distance,
/// granularity (the given spec; hpcrun-fmt.c at 3e304bf29).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EpochFixedOld {
    /// Epoch flags.
    pub flags: u64,
    /// Characteristic return-address distance.
    pub ra_distance: u32,
    /// Measurement granularity.
    pub granularity: u64,
}

/// The fixed part of an epoch header in 02.00b and 03.00b: flags, granularity, then the u32 that
/// used to be the return-address distance (`dummy`, written 0).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EpochFixedNew {
    /// Epoch flags.
    pub flags: u64,
    /// Measurement granularity.
    pub granularity: u64,
    /// The former return-address distance.
    pub ra_distance: u32,
}

/// A 04.00 CCT node (19 bytes: `SF_cct_node_SIZE`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct CctRecord {
    /// Node id.
    pub id: I32<BigEndian>,
    /// Parent id (0 for a root).
    pub parent: I32<BigEndian>,
    /// Load-module id.
    pub lm_id: U16<BigEndian>,
    /// Offset in the load module.
    pub lm_ip: U64<BigEndian>,
    /// Bit 0: unwound.
    pub flags: u8,
}

/// One 04.00 sparse value: the value's 8 bytes and its metric id (10 bytes).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SparseValueRecord {
    /// The value bits (integer or double by the metric's value format).
    pub value: U64<BigEndian>,
    /// Metric id (index into the metric table).
    pub metric: U16<BigEndian>,
}

/// One 04.00 context-index entry: a context id and the index of its first value (12 bytes).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SparseContextRecord {
    /// CCT node id ([`CONTEXT_END`] in the final entry).
    pub ctx: U32<BigEndian>,
    /// Index of the first value of this context.
    pub start: U64<BigEndian>,
}

/// One element of a 04.00 identifier tuple (18 bytes: `PMS_id_SIZE`).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct IdRecord {
    /// Kind (low 14 bits) and interpretation (top 2 bits).
    pub kind: U16<BigEndian>,
    /// Physical index.
    pub physical: U64<BigEndian>,
    /// Logical index.
    pub logical: U64<BigEndian>,
}

/// A trace record without a metric id (12 bytes).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TraceRecordRaw {
    /// Time in nanoseconds.
    pub time: U64<BigEndian>,
    /// CCT node id.
    pub ctx: U32<BigEndian>,
}

/// A trace record of a data-centric trace (16 bytes).
#[derive(Debug, Clone, Copy, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct TraceRecordDcRaw {
    /// Time in nanoseconds.
    pub time: U64<BigEndian>,
    /// CCT node id.
    pub ctx: U32<BigEndian>,
    /// Metric id.
    pub metric: U32<BigEndian>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sizes_match_the_format() {
        assert_eq!(size_of::<CctRecord>(), 19);
        assert_eq!(size_of::<SparseValueRecord>(), 10);
        assert_eq!(size_of::<SparseContextRecord>(), 12);
        assert_eq!(size_of::<IdRecord>(), 18);
        assert_eq!(size_of::<TraceRecordRaw>(), 12);
        assert_eq!(size_of::<TraceRecordDcRaw>(), 16);
        assert_eq!(&FOOTER_MAGIC.to_be_bytes(), b"HPCRUNsm");
        assert_eq!(&CONTEXT_END.to_be_bytes(), b"end!");
    }
}
