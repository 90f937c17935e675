//! 04.00b: sections found through the footer (`crate::format`, "04.00b (current)"; write_data.c).

use binrw::BinRead;
use profcodec_common::{Cursor, checked_capacity};
use zerocopy::FromBytes;

use super::Rd;
use crate::model::*;
use crate::raw::{
    self, CctRecord, FOOTER_SIZE, Footer, IdRecord, SparseContextRecord, SparseValueRecord,
};
use crate::{Error, Text};

/// A 04.00 measurement file, borrowed: small tables decoded, the CCT and the sparse arrays kept as
/// zerocopy views over the input.
#[derive(Debug, Clone)]
pub struct V4View<'a> {
    data: &'a [u8],
    /// The footer as read.
    pub footer: Footer,
    /// Header name/value pairs.
    pub header: Vec<NvPair>,
    /// Load map.
    pub loadmap: Vec<LoadModule>,
    /// CCT nodes, as on disk.
    pub cct: &'a [CctRecord],
    /// Metric descriptors.
    pub metrics: Vec<MetricDesc>,
    /// Id-tuple dictionary.
    pub dictionary: Vec<DictionaryEntry>,
    /// The profile's id tuple, as on disk.
    pub id_tuple: &'a [IdRecord],
    /// Sparse values, as on disk.
    pub values: &'a [SparseValueRecord],
    /// Context index including its final entry, as on disk.
    pub contexts: &'a [SparseContextRecord],
}

/// The bytes of section `[start, end)`, or the error naming it.
fn section<'a>(
    data: &'a [u8],
    start: u64,
    end: u64,
    what: &'static str,
) -> Result<Cursor<'a>, Error> {
    if start > end || end > data.len() as u64 {
        return Err(Error::bad(
            data.len().saturating_sub(FOOTER_SIZE) as u64,
            what,
            "a section inside the file",
            start,
        ));
    }
    Ok(Cursor::new(&data[start as usize..end as usize], start))
}

/// Decodes section `(start, end, name)` with `f`, which must consume it exactly.
fn in_section<'a, T>(
    data: &'a [u8],
    (start, end, what): (u64, u64, &'static str),
    f: impl FnOnce(&mut Rd<'a>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut rd = Rd {
        c: section(data, start, end, what)?,
        le: false,
    };
    let out = f(&mut rd)?;
    if !rd.c.is_empty() {
        return Err(Error::SectionEnd {
            offset: start,
            what,
            expected: end,
            found: rd.c.offset(),
        });
    }
    Ok(out)
}

fn slice<'a, T: FromBytes + zerocopy::KnownLayout + zerocopy::Immutable>(
    c: &mut Cursor<'a>,
    count: u64,
    what: &'static str,
) -> Result<&'a [T], Error> {
    let size = size_of::<T>();
    let at = c.offset();
    let n = checked_capacity(count, size, c.remaining(), at, what)?;
    let bytes = c.bytes(n * size, what)?;
    <[T]>::ref_from_bytes(bytes).map_err(|_| Error::bad(at, what, "whole records", count))
}

/// Where the measurement in `data` ends: after the footer at the end of the file when the file
/// ends with the footer magic (as every file hpcrun writes does), else after the first footer
/// found earlier whose `footer_start` field names its own offset (trailing data follows it). One
/// pass over the bytes, O(1) per occurrence of the magic. `data.len()` when none is found (the
/// footer check then reports the damage).
fn footer_end(data: &[u8]) -> usize {
    let magic = raw::FOOTER_MAGIC.to_be_bytes();
    if data.ends_with(&magic) || data.len() < 24 + FOOTER_SIZE {
        return data.len();
    }
    // The magic is the footer's last 8 bytes and footer_start the 8 before them.
    let first_magic = 24 + FOOTER_SIZE - 8;
    for (i, window) in data[first_magic..].windows(8).enumerate() {
        if window != magic {
            continue;
        }
        crate::work::add(1);
        let magic_at = first_magic + i;
        let start = magic_at + 8 - FOOTER_SIZE;
        let mut field = [0u8; 8];
        field.copy_from_slice(&data[magic_at - 8..magic_at]);
        if u64::from_be_bytes(field) == start as u64 {
            return magic_at + 8;
        }
    }
    data.len()
}

impl<'a> V4View<'a> {
    /// Reads the footer and every section's structure (the CCT and sparse arrays are not copied).
    ///
    /// The file must end with the footer ([`Error::TrailingData`] otherwise; see
    /// [`V4View::parse_prefix`]). Time is O(1) beyond the small tables (header, load map,
    /// metric table, dictionary), whose decoding is linear in their bytes; nothing is allocated
    /// for the CCT or the sparse arrays.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        let view = Self::parse_prefix(data)?;
        super::no_trailing(data, view.end())?;
        Ok(view)
    }

    /// As [`V4View::parse`], for a file that may carry bytes after its footer: the footer is the
    /// one at the end of the file, or else the first one whose `footer_start` field names its
    /// own offset (found in one linear pass). [`V4View::end`] says where the measurement ends.
    pub fn parse_prefix(data: &'a [u8]) -> Result<Self, Error> {
        if super::detect_version(data)? != Version::V0400B {
            return Err(super::unsupported(18, data.get(18..24).unwrap_or(&[])));
        }
        Self::parse_exact(&data[..footer_end(data)])
    }

    /// The length of the measurement: the end of its footer.
    pub fn end(&self) -> u64 {
        self.data.len() as u64
    }

    fn parse_exact(data: &'a [u8]) -> Result<Self, Error> {
        if super::detect_version(data)? != Version::V0400B {
            return Err(super::unsupported(18, data.get(18..24).unwrap_or(&[])));
        }
        if data.len() < 24 + FOOTER_SIZE {
            return Err(Cursor::new(data, 0)
                .truncated("04.00 header and footer", (24 + FOOTER_SIZE) as u64)
                .into());
        }
        let foot_at = data.len() - FOOTER_SIZE;
        let footer = Footer::read(&mut std::io::Cursor::new(&data[foot_at..]))
            .map_err(|_| Cursor::new(data, 0).truncated("footer", FOOTER_SIZE as u64))?;
        if footer.magic != raw::FOOTER_MAGIC {
            return Err(Error::bad(
                (foot_at + FOOTER_SIZE - 8) as u64,
                "footer magic",
                "0x48504352554e736d (\"HPCRUNsm\")",
                footer.magic,
            ));
        }

        // Each section is decoded from its own bytes and must end where the footer says.
        let hdr = (footer.hdr_start, footer.hdr_end, "header section");
        let header = in_section(data, hdr, |rd| {
            rd.c.skip(24, "magic")?;
            rd.nvpairs("header nvpair count")
        })?;
        let lm = (footer.loadmap_start, footer.loadmap_end, "load map section");
        let loadmap = in_section(data, lm, |rd| rd.loadmap(Version::V0400B))?;
        let cct_section = (footer.cct_start, footer.cct_end, "cct section");
        let cct = in_section(data, cct_section, |rd| {
            let n = rd.c.u64_be("cct node count")?;
            slice::<CctRecord>(&mut rd.c, n, "cct node count")
        })?;
        let tbl = (
            footer.metric_tbl_start,
            footer.metric_tbl_end,
            "metric table section",
        );
        let metrics = in_section(data, tbl, |rd| rd.metric_table(Version::V0400B))?;
        let dict = (
            footer.dictionary_start,
            footer.dictionary_end,
            "id-tuple dictionary section",
        );
        let dictionary = in_section(data, dict, |rd| {
            let at = rd.c.offset();
            let n = rd.u16("dictionary count")?;
            let cap = checked_capacity(u64::from(n), 6, rd.c.remaining(), at, "dictionary count")?;
            let mut dictionary = Vec::with_capacity(cap);
            for _ in 0..n {
                let kind = rd.u16("dictionary kind")?;
                let name = rd.text("dictionary name")?;
                dictionary.push(DictionaryEntry { kind, name });
            }
            Ok(dictionary)
        })?;
        let sm = (
            footer.sparse_start,
            footer.sparse_end,
            "sparse metrics section",
        );
        let (id_tuple, values, contexts) = in_section(data, sm, |rd| {
            let c = &mut rd.c;
            let len = c.u16_be("id tuple length")?;
            let id_tuple = slice::<IdRecord>(c, u64::from(len), "id tuple length")?;
            let nvals = c.u64_be("value count")?;
            let nnz = c.u32_be("context count")?;
            let values = slice::<SparseValueRecord>(c, nvals, "value count")?;
            let contexts = slice::<SparseContextRecord>(c, u64::from(nnz) + 1, "context count")?;
            Ok((id_tuple, values, contexts))
        })?;

        Ok(V4View {
            data,
            footer,
            header,
            loadmap,
            cct,
            metrics,
            dictionary,
            id_tuple,
            values,
            contexts,
        })
    }

    /// Offset of the first context-index entry (for error offsets).
    fn contexts_offset(&self) -> u64 {
        self.footer.sparse_end - (self.contexts.len() * 12) as u64
    }

    /// Checks the cross-references: every value's metric id names a metric, context starts rise
    /// and stay within the values, the index ends with "end!" and the number of values, every
    /// context with values is a CCT node, every node's parent is a node (or 0) and its load-module
    /// id a load module (or 0).
    pub fn validate(&self) -> Result<(), Error> {
        let nmetrics = self.metrics.len() as u64;
        let values_at = self.contexts_offset() - (self.values.len() * 10) as u64;
        if let Some(i) = self
            .values
            .iter()
            .position(|v| u64::from(v.metric.get()) >= nmetrics)
        {
            return Err(Error::bad(
                values_at + i as u64 * 10 + 8,
                "sparse value metric id",
                "the id of a metric in the metric table",
                u64::from(self.values[i].metric.get()),
            ));
        }
        let ctx_at = self.contexts_offset();
        let nvals = self.values.len() as u64;
        let mut prev = 0u64;
        for (i, c) in self.contexts.iter().enumerate() {
            let start = c.start.get();
            if start < prev || start > nvals {
                return Err(Error::bad(
                    ctx_at + i as u64 * 12 + 4,
                    "context value index",
                    "a rising index within the values",
                    start,
                ));
            }
            prev = start;
        }
        if let Some(last) = self.contexts.last() {
            let at = ctx_at + (self.contexts.len() as u64 - 1) * 12;
            if last.ctx.get() != raw::CONTEXT_END {
                return Err(Error::bad(
                    at,
                    "final context id",
                    "0x656e6421 (\"end!\")",
                    u64::from(last.ctx.get()),
                ));
            }
            if last.start.get() != nvals {
                return Err(Error::bad(
                    at + 4,
                    "final context value index",
                    "the number of values",
                    last.start.get(),
                ));
            }
        }
        let ids = NodeIds::new(self.cct);
        // `crate::format`, 04.00b CCT: parents precede nothing in particular, but each is a node (or 0
        // for a root); load-module id 0 marks a node outside every module (placeholders).
        let nodes_at = self.footer.cct_start + 8;
        let mut is_lm = vec![false; 1 << 16];
        for m in &self.loadmap {
            is_lm[usize::from(m.id)] = true;
        }
        for (i, n) in self.cct.iter().enumerate() {
            let parent = n.parent.get();
            if parent != 0 && !ids.contains(parent) {
                return Err(Error::bad(
                    nodes_at + i as u64 * 19 + 4,
                    "cct node parent",
                    "0 or the id of a CCT node",
                    u64::from(parent as u32),
                ));
            }
            let lm = n.lm_id.get();
            if lm != 0 && !is_lm[usize::from(lm)] {
                return Err(Error::bad(
                    nodes_at + i as u64 * 19 + 8,
                    "cct node load-module id",
                    "0 or the id of a load module",
                    u64::from(lm),
                ));
            }
        }
        let ncontexts = self.contexts.len().saturating_sub(1);
        for (i, c) in self.contexts[..ncontexts].iter().enumerate() {
            if !ids.contains(c.ctx.get() as i32) {
                return Err(Error::bad(
                    ctx_at + i as u64 * 12,
                    "context id",
                    "the id of a CCT node",
                    u64::from(c.ctx.get()),
                ));
            }
        }
        Ok(())
    }

    /// True when the file is laid out exactly as hpcrun lays it out (each section at the next
    /// multiple of 1024, gaps zero, footer at the end): then [`crate::write`] reproduces it
    /// byte for byte.
    pub fn is_canonical(&self) -> bool {
        let f = &self.footer;
        let align = |v: u64| v.div_ceil(raw::SECTION_ALIGN) * raw::SECTION_ALIGN;
        let pairs = [
            (f.hdr_end, f.loadmap_start),
            (f.loadmap_end, f.cct_start),
            (f.cct_end, f.metric_tbl_start),
            (f.metric_tbl_end, f.dictionary_start),
            (f.dictionary_end, f.sparse_start),
            (f.sparse_end, f.footer_start),
        ];
        f.hdr_start == 0
            && f.footer_start.checked_add(FOOTER_SIZE as u64) == Some(self.data.len() as u64)
            && pairs.iter().all(|&(end, next)| {
                align(end) == next
                    && self.data[end as usize..next as usize]
                        .iter()
                        .all(|&b| b == 0)
            })
    }

    /// The owned model.
    pub fn to_model(&self) -> Result<Measurement, Error> {
        let cct = self
            .cct
            .iter()
            .map(|n| CctNode {
                id: n.id.get(),
                parent: n.parent.get(),
                lm_id: n.lm_id.get(),
                ip: n.lm_ip.get(),
                lush: None,
                flags: n.flags,
            })
            .collect();
        let (end, contexts) = match self.contexts.split_last() {
            Some((end, rest)) => (
                SparseContext {
                    ctx: end.ctx.get(),
                    start: end.start.get(),
                },
                rest,
            ),
            None => (SparseContext::default(), &[][..]),
        };
        let sparse = SparseMetrics {
            id_tuple: self
                .id_tuple
                .iter()
                .map(|r| IdTupleEntry {
                    kind: r.kind.get(),
                    physical: r.physical.get(),
                    logical: r.logical.get(),
                })
                .collect(),
            values: self
                .values
                .iter()
                .map(|v| SparseValue {
                    value: v.value.get(),
                    metric: v.metric.get(),
                })
                .collect(),
            contexts: contexts
                .iter()
                .map(|c| SparseContext {
                    ctx: c.ctx.get(),
                    start: c.start.get(),
                })
                .collect(),
            end,
        };
        Ok(Measurement {
            version: Version::V0400B,
            header: self.header.clone(),
            epochs: vec![Epoch {
                header: None,
                metrics: self.metrics.clone(),
                loadmap: self.loadmap.clone(),
                cct,
                values: Vec::new(),
            }],
            dictionary: self.dictionary.clone(),
            sparse: Some(sparse),
        })
    }

    /// The values of context index entry `i` (not the final entry), typed by their metrics.
    pub fn context_values(&self, i: usize) -> impl Iterator<Item = (u16, MetricValue)> + '_ {
        let range = match (self.contexts.get(i), self.contexts.get(i + 1)) {
            (Some(a), Some(b)) => {
                let (s, e) = (a.start.get() as usize, b.start.get() as usize);
                if s <= e && e <= self.values.len() {
                    s..e
                } else {
                    0..0
                }
            }
            _ => 0..0,
        };
        self.values[range].iter().map(move |v| {
            let m = v.metric.get();
            let f = self
                .metrics
                .get(m as usize)
                .map_or(ValueFormat::Unknown, MetricDesc::value_format);
            (m, MetricValue::from_bits(v.value.get(), f))
        })
    }

    /// The header value of `name`.
    pub fn header_value(&self, name: &str) -> Option<&Text> {
        self.header
            .iter()
            .find(|p| p.name == *name)
            .map(|p| &p.value)
    }
}

/// The set of CCT node ids, for checking context ids: a bitmap when the ids are dense (hpcrun
/// numbers nodes from 1 up), a sorted list otherwise.
enum NodeIds {
    Bitmap { min: i64, bits: Vec<u64> },
    Sorted(Vec<i32>),
}

impl NodeIds {
    fn new(cct: &[CctRecord]) -> Self {
        if cct.is_empty() {
            return NodeIds::Sorted(Vec::new());
        }
        let (min, max) = cct.iter().fold((i64::MAX, i64::MIN), |(lo, hi), n| {
            let id = i64::from(n.id.get());
            (lo.min(id), hi.max(id))
        });
        let range = (max - min + 1).max(0) as u64;
        // A bitmap costs range/8 bytes: take it while that stays within 8 bytes per node.
        if range <= 64 * cct.len() as u64 {
            let mut bits = vec![0u64; range.div_ceil(64) as usize];
            for n in cct {
                let i = (i64::from(n.id.get()) - min) as usize;
                bits[i / 64] |= 1 << (i % 64);
            }
            NodeIds::Bitmap { min, bits }
        } else {
            let mut ids: Vec<i32> = cct.iter().map(|n| n.id.get()).collect();
            ids.sort_unstable();
            NodeIds::Sorted(ids)
        }
    }

    fn contains(&self, id: i32) -> bool {
        match self {
            NodeIds::Bitmap { min, bits } => {
                let i = i64::from(id) - min;
                i >= 0
                    && bits
                        .get(i as usize / 64)
                        .is_some_and(|w| w & (1 << (i as usize % 64)) != 0)
            }
            NodeIds::Sorted(ids) => ids.binary_search(&id).is_ok(),
        }
    }
}
