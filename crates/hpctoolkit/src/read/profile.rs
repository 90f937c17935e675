//! The profile.db view (FORMATS.md, `profile.db` version 4.0).

use crate::Error;
use crate::raw::profile::PROFILE_IS_SUMMARY;
use crate::raw::{
    CtxIndex, FileKind, IdTupleHeader, Identifier, ProfileDbHeader, ProfileInfo,
    ProfileInfosHeader, ProfileValueBlock, Value,
};

use super::bytes::{Bytes, MetricSet, Region, Strided, le_u64};
use super::overlap::Spans;
use super::sparse;

/// The pointer fields [`ProfileDb::check_overlaps`] names.
const SPAN_FIELDS: &[&str] = &["PSVB.pValues", "PSVB.pCtxIndices", "PI.pIdTuple"];

/// A hierarchical identifier tuple (`[HIT]`): the identifications of one profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdTuple<'a> {
    /// File offset of the tuple.
    pub offset: u64,
    /// `ids`, zero-copy.
    pub ids: &'a [Identifier],
}

/// As hpctesttool prints a tuple: `NODE 0 / CORE 0 / THREAD 3` (logical ids), the kinds named
/// as hpcprof names them in meta.db (`DatabaseBuilder::DEFAULT_ID_NAMES`); a kind past that
/// list shows as `KIND<n>`. For meta.db's own names use [`MetaDb::id_name`](super::MetaDb::id_name).
impl std::fmt::Display for IdTuple<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names = crate::model::DatabaseBuilder::DEFAULT_ID_NAMES;
        for (i, id) in self.ids.iter().enumerate() {
            if i > 0 {
                f.write_str(" / ")?;
            }
            match names.get(usize::from(id.kind)) {
                Some(name) => write!(f, "{name} {}", id.logical_id.get())?,
                None => write!(f, "KIND{} {}", id.kind, id.logical_id.get())?,
            }
        }
        Ok(())
    }
}

/// An identifier's `kind` in `Debug` output: hpcprof's name for it (`RANK`), else its number.
struct KindName(u8);

impl std::fmt::Debug for KindName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match crate::model::DatabaseBuilder::DEFAULT_ID_NAMES.get(usize::from(self.0)) {
            Some(name) => f.write_str(name),
            None => write!(f, "{}", self.0),
        }
    }
}

impl std::fmt::Debug for Identifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identifier")
            .field("kind", &KindName(self.kind))
            .field("flags", &self.flags.get())
            .field("logical_id", &self.logical_id.get())
            .field("physical_id", &self.physical_id.get())
            .finish()
    }
}

impl std::fmt::Debug for crate::model::Identifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identifier")
            .field("kind", &KindName(self.kind))
            .field("flags", &self.flags)
            .field("logical_id", &self.logical_id)
            .field("physical_id", &self.physical_id)
            .finish()
    }
}

/// One profile: its {PI} and its Profile-Major Sparse Value Block as zero-copy slices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile<'a> {
    /// Position in `*pProfiles` (the `profIndex` of cct.db and trace.db).
    pub index: u32,
    /// File offset of the {PI}.
    pub offset: u64,
    /// `flags` as stored.
    pub flags: u32,
    /// `*pIdTuple`, `None` when `pIdTuple` is 0 (the canonical summary profile).
    pub id_tuple: Option<IdTuple<'a>>,
    /// `*pValues`: (metricId, value) pairs, grouped by context.
    pub values: &'a [Value],
    /// `*pCtxIndices`: (ctxId, startIndex), sorted by ctxId.
    pub ctx_indices: &'a [CtxIndex],
    /// `pValues` as stored.
    pub p_values: u64,
    /// `pCtxIndices` as stored.
    pub p_ctx_indices: u64,
}

impl<'a> Profile<'a> {
    /// True when flag `isSummary` is set.
    pub fn is_summary(&self) -> bool {
        self.flags & PROFILE_IS_SUMMARY != 0
    }

    /// The values of context `ctx_id`, sorted by metricId (empty when it has none).
    #[inline]
    pub fn metrics_of(&self, ctx_id: u32) -> &'a [Value] {
        sparse::run_of(self.ctx_indices, self.values, ctx_id)
    }

    /// The values of the `i`-th context index; empty when the block is damaged there.
    #[inline]
    fn values_at(&self, i: usize) -> &'a [Value] {
        sparse::run_at(self.ctx_indices, self.values, i)
    }

    /// The value of `metric_id` at `ctx_id`, `None` when it is zero (not stored).
    #[inline]
    pub fn value(&self, ctx_id: u32, metric_id: u16) -> Option<f64> {
        sparse::value_in(self.metrics_of(ctx_id), metric_id)
    }

    /// Every non-empty context: `(ctxId, values)`, ascending by ctxId.
    pub fn contexts(&self) -> impl Iterator<Item = (u32, &'a [Value])> + '_ {
        (0..self.ctx_indices.len()).map(move |i| (self.ctx_indices[i].ctx_id(), self.values_at(i)))
    }
}

/// Parsed section headers of a profile.db (no borrow).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProfileLayout {
    header: ProfileDbHeader,
    infos_header: ProfileInfosHeader,
    profiles: Strided,
    id_tuples_region: Region,
}

/// A view of a profile.db file.
#[derive(Debug, Clone, Copy)]
pub struct ProfileDb<'a> {
    bytes: Bytes<'a>,
    layout: ProfileLayout,
}

impl<'a> ProfileDb<'a> {
    /// Checks the file header, footer and section headers.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        Self::parse_bytes(Bytes::new(data, FileKind::Profile))
    }

    pub(crate) fn parse_bytes(bytes: Bytes<'a>) -> Result<Self, Error> {
        bytes.check_envelope()?;
        let header: ProfileDbHeader = bytes.read(0)?;
        let hs = ProfileDbHeader::SIZE;
        let infos_region = bytes.check_section(
            header.profile_infos,
            ProfileInfosHeader::SIZE,
            hs,
            "pProfileInfos",
            0x10,
        )?;
        let id_tuples_region = bytes.check_section(header.id_tuples, 0, hs, "pIdTuples", 0x20)?;
        let ih: ProfileInfosHeader = bytes.read(infos_region.start)?;
        let s = infos_region.start;
        let stride = bytes.check_stride::<ProfileInfo>(
            ih.sz_profile.into(),
            "ProfileInfos.szProfile",
            s + 0xc,
        )?;
        let profiles = bytes.strided::<ProfileInfo>(
            infos_region,
            ih.p_profiles,
            ih.n_profiles.into(),
            stride,
            "ProfileInfos.pProfiles",
            s,
        )?;
        Ok(ProfileDb {
            bytes,
            layout: ProfileLayout {
                header,
                infos_header: ih,
                profiles,
                id_tuples_region,
            },
        })
    }

    pub(crate) fn from_layout(data: &'a [u8], layout: ProfileLayout) -> Self {
        ProfileDb {
            bytes: Bytes::new(data, FileKind::Profile),
            layout,
        }
    }

    pub(crate) fn layout(&self) -> ProfileLayout {
        self.layout
    }

    /// The file's bytes.
    pub fn data(&self) -> &'a [u8] {
        self.bytes.data
    }

    /// The file header as stored.
    pub fn header(&self) -> &ProfileDbHeader {
        &self.layout.header
    }

    /// The Profile Info section header as stored.
    pub fn profile_infos_header(&self) -> &ProfileInfosHeader {
        &self.layout.infos_header
    }

    /// `(majorVersion, minorVersion)`.
    pub fn version(&self) -> (u8, u8) {
        (
            self.layout.header.file.major_version,
            self.layout.header.file.minor_version,
        )
    }

    /// `nProfiles`.
    pub fn profile_count(&self) -> u32 {
        self.layout.profiles.count as u32
    }

    /// The {PI} of profile `index` as stored.
    pub fn profile_info(&self, index: u32) -> Result<ProfileInfo, Error> {
        let a = self.layout.profiles;
        if u64::from(index) >= a.count {
            return Err(Error::Dangling {
                file: FileKind::Profile,
                field: "profIndex",
                offset: a.base,
                expected: "an index below nProfiles",
                found: index.into(),
            });
        }
        self.bytes.read(a.at(index.into()))
    }

    /// The value arrays of profile `index`'s block, read straight from the {PI}'s fields (the
    /// hot path of point lookups: no identifier tuple, no structure decoding).
    fn block(&self, index: u32) -> Result<(u64, &'a [Value], &'a [CtxIndex]), Error> {
        let a = self.layout.profiles;
        if u64::from(index) >= a.count {
            self.profile_info(index)?;
        }
        let at = a.at(index.into());
        let vb = self
            .bytes
            .slice(at, ProfileValueBlock::SIZE as u64, "PSVB")?;
        let word = |i: usize| le_u64(vb, i);
        let (n_values, p_values) = (word(0), word(8));
        let (n_ctxs, p_ctx_indices) = (word(0x10) & 0xffff_ffff, word(0x18));
        let payload = self.bytes.payload();
        let values =
            self.bytes
                .array::<Value>(payload, p_values, n_values, "PSVB.pValues", at + 8)?;
        let ctx_indices = self.bytes.array::<CtxIndex>(
            payload,
            p_ctx_indices,
            n_ctxs,
            "PSVB.pCtxIndices",
            at + 0x18,
        )?;
        Ok((at, values, ctx_indices))
    }

    /// The value of `metric_id` at `ctx_id` in profile `prof_index` (`Ok(None)` when zero, that
    /// is, not stored): the point lookup, two interpolation searches ([`Profile::value`]).
    #[inline]
    pub fn value(
        &self,
        prof_index: u32,
        ctx_id: u32,
        metric_id: u16,
    ) -> Result<Option<f64>, Error> {
        let (_, values, ctx_indices) = self.block(prof_index)?;
        let p = Profile {
            index: prof_index,
            offset: 0,
            flags: 0,
            id_tuple: None,
            values,
            ctx_indices,
            p_values: 0,
            p_ctx_indices: 0,
        };
        Ok(p.value(ctx_id, metric_id))
    }

    /// The flags and identifier tuple of profile `index` (`None` for the summary profile),
    /// without its value block: what a view of the file's head
    /// ([`ProfileDb::from_head`]) answers.
    pub fn info(&self, index: u32) -> Result<(u32, Option<IdTuple<'a>>), Error> {
        let pi = self.profile_info(index)?;
        let at = self.layout.profiles.at(index.into());
        let id_tuple = match pi.p_id_tuple {
            0 => None,
            p => Some(self.id_tuple_at(p, at + 0x20)?),
        };
        Ok((pi.flags, id_tuple))
    }

    /// Profile `index` (0 is the canonical summary profile), with its value block bounded.
    pub fn profile(&self, index: u32) -> Result<Profile<'a>, Error> {
        let pi = self.profile_info(index)?;
        let (at, values, ctx_indices) = self.block(index)?;
        let vb = pi.value_block;
        let id_tuple = match pi.p_id_tuple {
            0 => None,
            p => Some(self.id_tuple_at(p, at + 0x20)?),
        };
        Ok(Profile {
            index,
            offset: at,
            flags: pi.flags,
            id_tuple,
            values,
            ctx_indices,
            p_values: vb.p_values,
            p_ctx_indices: vb.p_ctx_indices,
        })
    }

    /// Every profile, by index.
    pub fn profiles(&self) -> impl Iterator<Item = Result<Profile<'a>, Error>> + '_ {
        (0..self.profile_count()).map(move |i| self.profile(i))
    }

    /// The identifier tuple at `pointer` (stored in the field at `at`).
    fn id_tuple_at(&self, pointer: u64, at: u64) -> Result<IdTuple<'a>, Error> {
        let r = self.layout.id_tuples_region;
        let h: IdTupleHeader = self.bytes.read_in(r, pointer, "PI.pIdTuple", at)?;
        let ids = self.bytes.array::<Identifier>(
            r,
            pointer + IdTupleHeader::SIZE as u64,
            h.n_ids.into(),
            "HIT.ids",
            pointer,
        )?;
        Ok(IdTuple {
            offset: pointer,
            ids,
        })
    }

    /// Checks that no two profiles share bytes: every non-empty `*pValues`, `*pCtxIndices` and
    /// identifier tuple has bytes of its own ([`Error::Overlap`] names the first pair that does
    /// not). Empty blocks may share an offset, as hpcprof writes them.
    ///
    /// O(n log n) in the number of profiles, 32 bytes of memory per array; afterwards the value
    /// blocks of all profiles together are at most the file, so any pass over them is linear.
    /// [`ProfileDb::validate`] runs it first.
    pub fn check_overlaps(&self) -> Result<(), Error> {
        let mut spans = Spans::with_capacity(3 * self.profile_count() as usize, SPAN_FIELDS);
        for i in 0..self.profile_count() {
            let p = self.profile(i)?;
            spans.add(
                p.p_values,
                (p.values.len() * Value::SIZE) as u64,
                p.offset + 8,
                0,
            );
            spans.add(
                p.p_ctx_indices,
                (p.ctx_indices.len() * CtxIndex::SIZE) as u64,
                p.offset + 0x18,
                1,
            );
            if let Some(t) = p.id_tuple {
                let size = IdTupleHeader::SIZE + t.ids.len() * Identifier::SIZE;
                spans.add(t.offset, size as u64, p.offset + 0x20, 2);
            }
        }
        spans.check(FileKind::Profile)
    }

    /// Checks every profile: no two share bytes ([`ProfileDb::check_overlaps`]), value blocks
    /// inside the file (before the footer), `pValues + nValues*0xa <= pCtxIndices`, context
    /// indices sorted by ctxId with non-decreasing `startIndex <= nValues`, values of each
    /// context sorted by metricId, and identifier tuples inside their section. Linear in the
    /// file after the O(n log n) overlap check.
    pub fn validate(&self) -> Result<(), Error> {
        self.check_overlaps()?;
        for i in 0..self.profile_count() {
            let p = self.profile(i)?;
            self.validate_profile(&p)?;
        }
        Ok(())
    }

    /// Checks one profile's value block (see [`ProfileDb::validate`]).
    pub fn validate_profile(&self, p: &Profile<'a>) -> Result<(), Error> {
        self.check_profile(p, None)
    }

    /// The first error in a run of values that the fast scan found bad.
    fn run_error(
        &self,
        p: &Profile<'a>,
        run: &[Value],
        start: usize,
        known: Option<&MetricSet>,
    ) -> Error {
        let mut prev = -1i32;
        for (k, v) in run.iter().enumerate() {
            let m = v.metric_id();
            let at = p.p_values + ((start + k) * Value::SIZE) as u64;
            if i32::from(m) <= prev {
                return self
                    .bytes
                    .unsorted("Val.metricId", at, prev as u64, m.into());
            }
            if known.is_some_and(|set| !set.contains(m)) {
                return Error::Dangling {
                    file: FileKind::Profile,
                    field: "Val.metricId",
                    offset: at,
                    expected: "a metric id listed in meta.db",
                    found: m.into(),
                };
            }
            prev = m.into();
        }
        self.bytes
            .invalid("Val.metricId", p.p_values, "a valid run of values", 0)
    }

    /// [`ProfileDb::validate_profile`], and every metric id in `known` (one pass over the values).
    pub(crate) fn check_profile(
        &self,
        p: &Profile<'a>,
        known: Option<&MetricSet>,
    ) -> Result<(), Error> {
        let b = &self.bytes;
        let values_end = p.p_values + (p.values.len() * Value::SIZE) as u64;
        if !p.ctx_indices.is_empty() && values_end > p.p_ctx_indices {
            return Err(b.invalid(
                "PSVB.pCtxIndices",
                p.offset + 0x18,
                "pCtxIndices after the end of *pValues",
                p.p_ctx_indices,
            ));
        }
        let n_values = p.values.len() as u64;
        let mut prev: Option<(u32, u64)> = None;
        for (k, idx) in p.ctx_indices.iter().enumerate() {
            let (ctx, start) = (idx.ctx_id(), idx.start_index());
            let at = p.p_ctx_indices + (k * CtxIndex::SIZE) as u64;
            if let Some((pc, ps)) = prev {
                if ctx <= pc {
                    return Err(b.unsorted("Idx.ctxId", at, pc.into(), ctx.into()));
                }
                if start < ps {
                    return Err(b.unsorted("Idx.startIndex", at + 4, ps, start));
                }
            }
            if start > n_values {
                return Err(b.invalid(
                    "Idx.startIndex",
                    at + 4,
                    "a startIndex at most nValues",
                    start,
                ));
            }
            prev = Some((ctx, start));
        }
        // Values sorted by metricId within each context's run (and known to meta.db): the
        // branch-free filter first, the exact check (which names the fault) only when it fails.
        let fast = match known {
            Some(set) => sparse::runs_sorted(p.ctx_indices, p.values, |m| set.contains(m)),
            None => sparse::runs_sorted(p.ctx_indices, p.values, |_| true),
        };
        if fast {
            return Ok(());
        }
        for i in 0..p.ctx_indices.len() {
            let run = p.values_at(i);
            let mut bad = false;
            let mut prev = -1i32;
            for v in run {
                let m = v.metric_id();
                bad |= i32::from(m) <= prev;
                bad |= known.is_some_and(|set| !set.contains(m));
                prev = m.into();
            }
            if bad {
                let start = p.ctx_indices[i].start_index() as usize;
                return Err(self.run_error(p, run, start, known));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod debug_tests {
    use super::*;

    #[test]
    fn identifiers_debug_print_their_kind_by_name() {
        let raw = Identifier::new(2, 0, 3, 0);
        assert_eq!(
            format!("{raw:?}"),
            "Identifier { kind: RANK, flags: 0, logical_id: 3, physical_id: 0 }"
        );
        let model = crate::model::Identifier {
            kind: 1,
            flags: 1,
            logical_id: 0,
            physical_id: 7,
        };
        assert_eq!(
            format!("{model:?}"),
            "Identifier { kind: NODE, flags: 1, logical_id: 0, physical_id: 7 }"
        );
        // A kind past hpcprof's names keeps its number.
        assert!(format!("{:?}", Identifier::new(40, 0, 0, 0)).contains("kind: 40,"));
    }
}
