//! trace.db structures (FORMATS.md, `trace.db` version 4.0).

use binrw::binrw;
use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use super::raw_struct;

/// Context Trace Headers section header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextTraceHeadersHeader {
    /// `pTraces`: array of {CTH}.
    pub p_traces: u64,
    /// `nTraces`.
    pub n_traces: u32,
    /// `szTrace`: stride (0x18 known).
    #[brw(pad_after = 3)]
    pub sz_trace: u8,
    /// `minTimestamp`.
    pub min_timestamp: u64,
    /// `maxTimestamp`.
    pub max_timestamp: u64,
}

/// {CTH}: one trace header.
#[binrw]
#[brw(little)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ContextTraceHeader {
    /// `profIndex`: index of the profile in profile.db (header i has profIndex i + 1 in hpcprof's files).
    #[brw(pad_after = 4)]
    pub prof_index: u32,
    /// `pStart`: first [`TraceElem`].
    pub p_start: u64,
    /// `pEnd`: one past the last [`TraceElem`].
    pub p_end: u64,
}

/// {Elem}: one trace sample, `timestamp` then `ctxId` (0xc bytes, alignment 1).
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
pub struct TraceElem {
    /// `timestamp` in nanoseconds since the epoch.
    pub timestamp: U64,
    /// `ctxId` (0: the thread was not running).
    pub ctx_id: U32,
}

impl TraceElem {
    /// A trace element.
    pub fn new(timestamp: u64, ctx_id: u32) -> Self {
        TraceElem {
            timestamp: U64::new(timestamp),
            ctx_id: U32::new(ctx_id),
        }
    }

    /// `timestamp`.
    #[inline]
    pub fn timestamp(&self) -> u64 {
        self.timestamp.get()
    }

    /// `ctxId`.
    #[inline]
    pub fn ctx_id(&self) -> u32 {
        self.ctx_id.get()
    }
}

raw_struct! {
    ContextTraceHeadersHeader => 0x20, "CtxTraces";
    ContextTraceHeader => 0x18, "CTH";
    TraceElem => 0x0c, "Elem";
}
