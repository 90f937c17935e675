//! The trace.db view (FORMATS.md, `trace.db` version 4.0).

use crate::Error;
use crate::raw::{
    ContextTraceHeader, ContextTraceHeadersHeader, FileKind, TraceDbHeader, TraceElem,
};

use super::bytes::{Bytes, Strided};
use super::meta::CtxIdSet;
use super::overlap::Spans;

/// One trace line: its header and its elements as a zero-copy slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace<'a> {
    /// Position in `*pTraces`.
    pub index: u32,
    /// File offset of the {CTH}.
    pub offset: u64,
    /// `profIndex` in profile.db (header i has profIndex i + 1 in hpcprof's files).
    pub prof_index: u32,
    /// `pStart` as stored.
    pub p_start: u64,
    /// The elements from `pStart` to `pEnd`, sorted by timestamp.
    pub elems: &'a [TraceElem],
}

impl<'a> Trace<'a> {
    /// Position of the last sample at or before `timestamp` (`None` when all are later).
    #[inline]
    pub fn index_at(&self, timestamp: u64) -> Option<usize> {
        self.elems
            .partition_point(|e| e.timestamp() <= timestamp)
            .checked_sub(1)
    }

    /// The last sample at or before `timestamp` (`None` when all are later).
    #[inline]
    pub fn at_or_before(&self, timestamp: u64) -> Option<&'a TraceElem> {
        self.index_at(timestamp).map(|i| &self.elems[i])
    }
}

/// Parsed section headers of a trace.db (no borrow).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TraceLayout {
    header: TraceDbHeader,
    traces_header: ContextTraceHeadersHeader,
    traces: Strided,
}

/// A view of a trace.db file.
#[derive(Debug, Clone, Copy)]
pub struct TraceDb<'a> {
    bytes: Bytes<'a>,
    layout: TraceLayout,
}

impl<'a> TraceDb<'a> {
    /// Checks the file header, footer and section headers.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        Self::parse_bytes(Bytes::new(data, FileKind::Trace))
    }

    pub(crate) fn parse_bytes(bytes: Bytes<'a>) -> Result<Self, Error> {
        bytes.check_envelope()?;
        let header: TraceDbHeader = bytes.read(0)?;
        let region = bytes.check_section(
            header.ctx_traces,
            ContextTraceHeadersHeader::SIZE,
            TraceDbHeader::SIZE,
            "pCtxTraces",
            0x10,
        )?;
        let th: ContextTraceHeadersHeader = bytes.read(region.start)?;
        let s = region.start;
        let stride = bytes.check_stride::<ContextTraceHeader>(
            th.sz_trace.into(),
            "CtxTraces.szTrace",
            s + 0xc,
        )?;
        let traces = bytes.strided::<ContextTraceHeader>(
            region,
            th.p_traces,
            th.n_traces.into(),
            stride,
            "CtxTraces.pTraces",
            s,
        )?;
        Ok(TraceDb {
            bytes,
            layout: TraceLayout {
                header,
                traces_header: th,
                traces,
            },
        })
    }

    pub(crate) fn from_layout(data: &'a [u8], layout: TraceLayout) -> Self {
        TraceDb {
            bytes: Bytes::new(data, FileKind::Trace),
            layout,
        }
    }

    pub(crate) fn layout(&self) -> TraceLayout {
        self.layout
    }

    /// The file's bytes.
    pub fn data(&self) -> &'a [u8] {
        self.bytes.data
    }

    /// The file header as stored.
    pub fn header(&self) -> &TraceDbHeader {
        &self.layout.header
    }

    /// The Context Trace Headers section header as stored.
    pub fn traces_header(&self) -> &ContextTraceHeadersHeader {
        &self.layout.traces_header
    }

    /// `(majorVersion, minorVersion)`.
    pub fn version(&self) -> (u8, u8) {
        (
            self.layout.header.file.major_version,
            self.layout.header.file.minor_version,
        )
    }

    /// `minTimestamp`.
    pub fn min_timestamp(&self) -> u64 {
        self.layout.traces_header.min_timestamp
    }

    /// `maxTimestamp`.
    pub fn max_timestamp(&self) -> u64 {
        self.layout.traces_header.max_timestamp
    }

    /// `nTraces`.
    pub fn trace_count(&self) -> u32 {
        self.layout.traces.count as u32
    }

    /// The {CTH} of trace `index` as stored.
    pub fn trace_header(&self, index: u32) -> Result<ContextTraceHeader, Error> {
        let a = self.layout.traces;
        if u64::from(index) >= a.count {
            return Err(Error::Dangling {
                file: FileKind::Trace,
                field: "trace index",
                offset: a.base,
                expected: "an index below nTraces",
                found: index.into(),
            });
        }
        self.bytes.read(a.at(index.into()))
    }

    /// Trace `index`'s header, the header's offset and its line's element count, checked to be
    /// whole elements (not yet checked to lie inside the file).
    fn header_and_count(&self, index: u32) -> Result<(ContextTraceHeader, u64, u64), Error> {
        let h = self.trace_header(index)?;
        let at = self.layout.traces.at(index.into());
        let b = &self.bytes;
        let len = h
            .p_end
            .checked_sub(h.p_start)
            .ok_or_else(|| b.invalid("CTH.pEnd", at + 0x10, "pEnd at or after pStart", h.p_end))?;
        if len % TraceElem::SIZE as u64 != 0 {
            return Err(b.invalid(
                "CTH.pEnd",
                at + 0x10,
                "pEnd - pStart a multiple of 0xc",
                len,
            ));
        }
        Ok((h, at, len / TraceElem::SIZE as u64))
    }

    /// Where trace `index`'s elements lie: `(pStart, element count)`, checked to be whole
    /// elements inside the file.
    pub fn line_extent(&self, index: u32) -> Result<(u64, u64), Error> {
        let (h, at, count) = self.header_and_count(index)?;
        if count > 0 {
            let b = &self.bytes;
            b.check_within(
                b.payload(),
                h.p_start,
                count * TraceElem::SIZE as u64,
                "CTH.pStart",
                at + 8,
            )?;
        }
        Ok((h.p_start, count))
    }

    /// Trace `index`, with its line bounded.
    pub fn trace(&self, index: u32) -> Result<Trace<'a>, Error> {
        let (h, at, count) = self.header_and_count(index)?;
        let b = &self.bytes;
        let elems = b.array::<TraceElem>(b.payload(), h.p_start, count, "CTH.pStart", at + 8)?;
        Ok(Trace {
            index,
            offset: at,
            prof_index: h.prof_index,
            p_start: h.p_start,
            elems,
        })
    }

    /// Every trace.
    pub fn traces(&self) -> impl Iterator<Item = Result<Trace<'a>, Error>> + '_ {
        (0..self.trace_count()).map(move |i| self.trace(i))
    }

    /// Checks that no two trace lines share bytes: every non-empty line (`pStart..pEnd`) has
    /// bytes of its own ([`Error::Overlap`] names the first pair that does not); empty lines
    /// may share an offset, as hpcprof writes them.
    ///
    /// O(n log n) in `nTraces`, 32 bytes of memory per line; afterwards any pass over all
    /// lines is linear in the file. [`TraceDb::validate`] runs it first, and so does
    /// [`TraceReader::new`](crate::read::TraceReader::new): it reads the trace headers only
    /// ([`TraceDb::line_extent`]), so it also answers on a view of the file's head
    /// ([`TraceDb::from_head`]).
    pub fn check_overlaps(&self) -> Result<(), Error> {
        let mut spans = Spans::with_capacity(self.trace_count() as usize, &["CTH.pStart"]);
        for index in 0..self.trace_count() {
            let (p_start, count) = self.line_extent(index)?;
            let at = self.layout.traces.at(index.into());
            spans.add(p_start, count * TraceElem::SIZE as u64, at + 8, 0);
        }
        spans.check(FileKind::Trace)
    }

    /// Checks every trace line: no two share bytes ([`TraceDb::check_overlaps`]), inside the
    /// file, a whole number of elements, timestamps non-decreasing and within
    /// `minTimestamp..=maxTimestamp`. Linear in the file after the O(n log n) overlap check.
    pub fn validate(&self) -> Result<(), Error> {
        self.check_overlaps()?;
        for t in self.traces() {
            self.validate_trace(&t?)?;
        }
        Ok(())
    }

    /// Checks one trace line (see [`TraceDb::validate`]).
    pub fn validate_trace(&self, t: &Trace<'a>) -> Result<(), Error> {
        self.check_trace(t, None)
    }

    /// [`TraceDb::validate_trace`], and in the same pass every element's ctxId: 0 (the global
    /// context, for idle samples) or a context of meta.db's tree.
    pub(crate) fn check_trace(
        &self,
        t: &Trace<'a>,
        contexts: Option<&CtxIdSet>,
    ) -> Result<(), Error> {
        let (min, max) = (self.min_timestamp(), self.max_timestamp());
        // The fast pass: no branch per element (the flags only collect); the exact pass below
        // runs only on a bad line, to name its first fault.
        let mut prev = min;
        let mut ok = true;
        match contexts {
            Some(set) => {
                for e in t.elems {
                    let (ts, ctx) = (e.timestamp(), e.ctx_id());
                    ok &= ts >= prev;
                    ok &= ctx == 0 || set.contains(ctx);
                    prev = ts;
                }
            }
            None => {
                for e in t.elems {
                    let ts = e.timestamp();
                    ok &= ts >= prev;
                    prev = ts;
                }
            }
        }
        if ok && prev <= max {
            return Ok(());
        }
        let mut prev = min;
        for (k, e) in t.elems.iter().enumerate() {
            let ts = e.timestamp();
            if let Some(index) = contexts {
                let ctx = e.ctx_id();
                if ctx != 0 && !index.contains(ctx) {
                    return Err(Error::Dangling {
                        file: FileKind::Trace,
                        field: "Elem.ctxId",
                        offset: t.p_start + (k * TraceElem::SIZE) as u64 + 8,
                        expected: "0 or a ctxId of meta.db's context tree",
                        found: ctx.into(),
                    });
                }
            }
            if ts < prev {
                let at = t.p_start + (k * TraceElem::SIZE) as u64;
                return Err(if k == 0 {
                    self.bytes.invalid(
                        "Elem.timestamp",
                        at,
                        "a timestamp at or after minTimestamp",
                        ts,
                    )
                } else {
                    self.bytes.unsorted("Elem.timestamp", at, prev, ts)
                });
            }
            prev = ts;
        }
        if prev > max && !t.elems.is_empty() {
            let at = t.p_start + ((t.elems.len() - 1) * TraceElem::SIZE) as u64;
            return Err(self.bytes.invalid(
                "Elem.timestamp",
                at,
                "a timestamp at or before maxTimestamp",
                prev,
            ));
        }
        Ok(())
    }
}
