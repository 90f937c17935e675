//! cct.db structures (FORMATS.md, `cct.db` version 4.0).

use binrw::binrw;
use zerocopy::little_endian::{F64, U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::raw_struct;

/// Context Info section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextInfosHeader {
    /// `pCtxs`: array of {CI}, indexed by ctxId.
    pub p_ctxs: u64,
    /// `nCtxs`: largest ctxId + 1 (as-implemented).
    pub n_ctxs: u32,
    /// `szCtx`: stride (0x20 known).
    pub sz_ctx: u8,
}

/// {CI} = `[CSVB]`: Context-Major Sparse Value Block header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextValueBlock {
    /// `nValues`.
    pub n_values: u64,
    /// `pValues`: array of [`ProfValue`].
    pub p_values: u64,
    /// `nMetrics`.
    #[brw(pad_after = 6)]
    pub n_metrics: u16,
    /// `pMetricIndices`: array of [`MetricIndex`].
    pub p_metric_indices: u64,
}

/// {Val} of a Context-Major Sparse Value Block: `profIndex` then `value` (0xc bytes, alignment 1).
#[derive(
    Debug, Clone, Copy, PartialEq, Default, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct ProfValue {
    /// `profIndex`: index of a profile in profile.db (never 0, the summary; as-implemented).
    pub prof_index: U32,
    /// `value`.
    pub value: F64,
}

impl ProfValue {
    /// A value record.
    pub fn new(prof_index: u32, value: f64) -> Self {
        ProfValue {
            prof_index: U32::new(prof_index),
            value: F64::new(value),
        }
    }

    /// `profIndex`.
    #[inline]
    pub fn prof_index(&self) -> u32 {
        self.prof_index.get()
    }

    /// `value`.
    #[inline]
    pub fn value(&self) -> f64 {
        self.value.get()
    }
}

/// {Idx} of a Context-Major Sparse Value Block: `metricId` then `startIndex` (0xa bytes).
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
pub struct MetricIndex {
    /// `metricId`.
    pub metric_id: U16,
    /// `startIndex` into the block's values.
    pub start_index: U64,
}

impl MetricIndex {
    /// An index record.
    pub fn new(metric_id: u16, start_index: u64) -> Self {
        MetricIndex {
            metric_id: U16::new(metric_id),
            start_index: U64::new(start_index),
        }
    }

    /// `metricId`.
    #[inline]
    pub fn metric_id(&self) -> u16 {
        self.metric_id.get()
    }

    /// `startIndex`.
    #[inline]
    pub fn start_index(&self) -> u64 {
        self.start_index.get()
    }
}

raw_struct! {
    ContextInfosHeader => 0x0d, "CtxInfos";
    ContextValueBlock => 0x20, "CI";
    ProfValue => 0x0c, "Val";
    MetricIndex => 0x0a, "Idx";
}
