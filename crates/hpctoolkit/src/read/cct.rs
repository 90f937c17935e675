//! The cct.db view (FORMATS.md, `cct.db` version 4.0; as-implemented: 0x30-byte header).

use crate::Error;
use crate::raw::{
    CCT_HEADER_SPAN, CctDbHeader, ContextInfosHeader, ContextValueBlock, FileKind, MetricIndex,
    ProfValue, RawStruct,
};

use super::bytes::{Bytes, MetricSet, Strided, le_u64};
use super::overlap::Spans;
use super::sparse;

/// The pointer fields [`CctDb::check_overlaps`] names.
const SPAN_FIELDS: &[&str] = &["CSVB.pValues", "CSVB.pMetricIndices"];

/// The Context-Major Sparse Value Block of one context, as zero-copy slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContextValues<'a> {
    /// The ctxId (the block's position in `*pCtxs`).
    pub ctx_id: u32,
    /// File offset of the {CI}.
    pub offset: u64,
    /// `*pValues`: (profIndex, value) pairs, grouped by metric.
    pub values: &'a [ProfValue],
    /// `*pMetricIndices`: (metricId, startIndex), sorted by metricId.
    pub metric_indices: &'a [MetricIndex],
    /// `pValues` as stored.
    pub p_values: u64,
    /// `pMetricIndices` as stored.
    pub p_metric_indices: u64,
}

impl<'a> ContextValues<'a> {
    /// The values of `metric_id`, sorted by profIndex (empty when it has none).
    #[inline]
    pub fn profiles_of(&self, metric_id: u16) -> &'a [ProfValue] {
        sparse::run_of(self.metric_indices, self.values, metric_id)
    }

    #[inline]
    fn values_at(&self, i: usize) -> &'a [ProfValue] {
        sparse::run_at(self.metric_indices, self.values, i)
    }

    /// The value of `metric_id` for profile `prof_index`, `None` when zero (not stored).
    #[inline]
    pub fn value(&self, prof_index: u32, metric_id: u16) -> Option<f64> {
        sparse::value_in(self.profiles_of(metric_id), prof_index)
    }

    /// Every non-empty metric: `(metricId, values)`, ascending by metricId.
    pub fn metrics(&self) -> impl Iterator<Item = (u16, &'a [ProfValue])> + '_ {
        (0..self.metric_indices.len())
            .map(move |i| (self.metric_indices[i].metric_id(), self.values_at(i)))
    }

    /// True when the context has no values.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Parsed section headers of a cct.db (no borrow).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CctLayout {
    header: CctDbHeader,
    infos_header: ContextInfosHeader,
    ctxs: Strided,
}

/// A view of a cct.db file.
#[derive(Debug, Clone, Copy)]
pub struct CctDb<'a> {
    bytes: Bytes<'a>,
    layout: CctLayout,
}

impl<'a> CctDb<'a> {
    /// Checks the file header, footer and section headers.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        let bytes = Bytes::new(data, FileKind::Cct);
        bytes.check_envelope()?;
        let header: CctDbHeader = bytes.read(0)?;
        let region = bytes.check_section(
            header.ctx_infos,
            ContextInfosHeader::SIZE,
            CctDbHeader::SIZE,
            "pCtxInfos",
            0x10,
        )?;
        let ih: ContextInfosHeader = bytes.read(region.start)?;
        let s = region.start;
        let stride =
            bytes.check_stride::<ContextValueBlock>(ih.sz_ctx.into(), "CtxInfos.szCtx", s + 0xc)?;
        let ctxs = bytes.strided::<ContextValueBlock>(
            region,
            ih.p_ctxs,
            ih.n_ctxs.into(),
            stride,
            "CtxInfos.pCtxs",
            s,
        )?;
        Ok(CctDb {
            bytes,
            layout: CctLayout {
                header,
                infos_header: ih,
                ctxs,
            },
        })
    }

    pub(crate) fn from_layout(data: &'a [u8], layout: CctLayout) -> Self {
        CctDb {
            bytes: Bytes::new(data, FileKind::Cct),
            layout,
        }
    }

    pub(crate) fn layout(&self) -> CctLayout {
        self.layout
    }

    /// The file's bytes.
    pub fn data(&self) -> &'a [u8] {
        self.bytes.data
    }

    /// The file header as stored.
    pub fn header(&self) -> &CctDbHeader {
        &self.layout.header
    }

    /// The Context Info section header as stored.
    pub fn ctx_infos_header(&self) -> &ContextInfosHeader {
        &self.layout.infos_header
    }

    /// Bytes 0x20..0x30, between the header FORMATS.md lists and the first section where hpcprof
    /// leaves uninitialised bytes (as-implemented); empty when a section starts earlier.
    pub fn header_gap(&self) -> &'a [u8] {
        let end = (self.layout.header.ctx_infos.offset as usize)
            .min(CCT_HEADER_SPAN)
            .min(self.bytes.data.len());
        self.bytes
            .data
            .get(CctDbHeader::SIZE..end)
            .unwrap_or_default()
    }

    /// `(majorVersion, minorVersion)`.
    pub fn version(&self) -> (u8, u8) {
        (
            self.layout.header.file.major_version,
            self.layout.header.file.minor_version,
        )
    }

    /// `nCtxs`: largest ctxId + 1.
    pub fn context_count(&self) -> u32 {
        self.layout.ctxs.count as u32
    }

    /// The {CI} of `ctx_id` as stored.
    pub fn context_info(&self, ctx_id: u32) -> Result<ContextValueBlock, Error> {
        let a = self.layout.ctxs;
        if u64::from(ctx_id) >= a.count {
            return Err(Error::Dangling {
                file: FileKind::Cct,
                field: "ctxId",
                offset: a.base,
                expected: "a ctxId below nCtxs",
                found: ctx_id.into(),
            });
        }
        // Hot path (every context of a validation pass): decoded straight from its bytes, the
        // same result as `ContextValueBlock`'s binrw read.
        let at = a.at(ctx_id.into());
        let b = self.bytes.slice(
            at,
            ContextValueBlock::SIZE as u64,
            <ContextValueBlock as RawStruct>::NAME,
        )?;
        Ok(ContextValueBlock {
            n_values: le_u64(b, 0),
            p_values: le_u64(b, 8),
            n_metrics: le_u64(b, 0x10) as u16,
            p_metric_indices: le_u64(b, 0x18),
        })
    }

    /// The values of context `ctx_id` (0 is the global context).
    pub fn context(&self, ctx_id: u32) -> Result<ContextValues<'a>, Error> {
        let vb = self.context_info(ctx_id)?;
        let at = self.layout.ctxs.at(ctx_id.into());
        let payload = self.bytes.payload();
        let values = self.bytes.array::<ProfValue>(
            payload,
            vb.p_values,
            vb.n_values,
            "CSVB.pValues",
            at + 8,
        )?;
        let metric_indices = self.bytes.array::<MetricIndex>(
            payload,
            vb.p_metric_indices,
            vb.n_metrics.into(),
            "CSVB.pMetricIndices",
            at + 0x18,
        )?;
        Ok(ContextValues {
            ctx_id,
            offset: at,
            values,
            metric_indices,
            p_values: vb.p_values,
            p_metric_indices: vb.p_metric_indices,
        })
    }

    /// Every context's values, by ctxId.
    pub fn contexts(&self) -> impl Iterator<Item = Result<ContextValues<'a>, Error>> + '_ {
        (0..self.context_count()).map(move |i| self.context(i))
    }

    /// Checks that no two contexts share bytes: every non-empty `*pValues` and
    /// `*pMetricIndices` has bytes of its own ([`Error::Overlap`] names the first pair that does
    /// not); empty blocks may share an offset.
    ///
    /// O(n log n) in `nCtxs`, 32 bytes of memory per array; afterwards any pass over all
    /// blocks is linear in the file. [`CctDb::validate`] runs it first.
    pub fn check_overlaps(&self) -> Result<(), Error> {
        let mut spans = Spans::with_capacity(2 * self.context_count() as usize, SPAN_FIELDS);
        for c in self.contexts() {
            let c = c?;
            spans.add(
                c.p_values,
                (c.values.len() * ProfValue::SIZE) as u64,
                c.offset + 8,
                0,
            );
            spans.add(
                c.p_metric_indices,
                (c.metric_indices.len() * MetricIndex::SIZE) as u64,
                c.offset + 0x18,
                1,
            );
        }
        spans.check(FileKind::Cct)
    }

    /// Checks every block: no two share bytes ([`CctDb::check_overlaps`]), inside the file,
    /// `pValues + nValues*0xc <= pMetricIndices`, metric indices sorted by metricId with
    /// non-decreasing `startIndex <= nValues`, and each metric's values sorted by profIndex.
    /// Linear in the file after the O(n log n) overlap check.
    pub fn validate(&self) -> Result<(), Error> {
        self.check_overlaps()?;
        for c in self.contexts() {
            self.validate_context(&c?)?;
        }
        Ok(())
    }

    /// Checks one context's block (see [`CctDb::validate`]).
    pub fn validate_context(&self, c: &ContextValues<'a>) -> Result<(), Error> {
        self.check_context(c, None, None)
    }

    /// [`CctDb::validate_context`], and (one pass over the values) every metric id in `known`
    /// and every profIndex below `n_profiles`.
    pub(crate) fn check_context(
        &self,
        c: &ContextValues<'a>,
        known: Option<&MetricSet>,
        n_profiles: Option<u32>,
    ) -> Result<(), Error> {
        let b = &self.bytes;
        let values_end = c.p_values + (c.values.len() * ProfValue::SIZE) as u64;
        if !c.metric_indices.is_empty() && values_end > c.p_metric_indices {
            return Err(b.invalid(
                "CSVB.pMetricIndices",
                c.offset + 0x18,
                "pMetricIndices after the end of *pValues",
                c.p_metric_indices,
            ));
        }
        let n_values = c.values.len() as u64;
        let mut prev_start = 0u64;
        let mut prev_metric = -1i32;
        for (k, idx) in c.metric_indices.iter().enumerate() {
            let (m, start) = (idx.metric_id(), idx.start_index());
            let at = c.p_metric_indices + (k * MetricIndex::SIZE) as u64;
            if i32::from(m) <= prev_metric {
                return Err(b.unsorted("Idx.metricId", at, prev_metric as u64, m.into()));
            }
            if known.is_some_and(|set| !set.contains(m)) {
                return Err(Error::Dangling {
                    file: FileKind::Cct,
                    field: "Idx.metricId",
                    offset: at,
                    expected: "a propMetricId listed in meta.db",
                    found: m.into(),
                });
            }
            if start < prev_start {
                return Err(b.unsorted("Idx.startIndex", at + 2, prev_start, start));
            }
            if start > n_values {
                return Err(b.invalid(
                    "Idx.startIndex",
                    at + 2,
                    "a startIndex at most nValues",
                    start,
                ));
            }
            prev_metric = m.into();
            prev_start = start;
        }
        let limit = n_profiles.map_or(u64::MAX, u64::from);
        // The branch-free filter first, the exact check (which names the fault) when it fails.
        if sparse::runs_sorted(c.metric_indices, c.values, |p| u64::from(p) < limit) {
            return Ok(());
        }
        for i in 0..c.metric_indices.len() {
            let start = c.metric_indices[i].start_index() as usize;
            let mut prev = -1i64;
            for (k, v) in c.values_at(i).iter().enumerate() {
                let p = v.prof_index();
                let at = c.p_values + ((start + k) * ProfValue::SIZE) as u64;
                if i64::from(p) <= prev {
                    return Err(b.unsorted("Val.profIndex", at, prev as u64, p.into()));
                }
                if u64::from(p) >= limit {
                    return Err(Error::Dangling {
                        file: FileKind::Cct,
                        field: "Val.profIndex",
                        offset: at,
                        expected: "a profIndex below profile.db's nProfiles",
                        found: p.into(),
                    });
                }
                prev = p.into();
            }
        }
        Ok(())
    }
}
