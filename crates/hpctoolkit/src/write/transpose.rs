//! Context-major transposition: cct.db from profile.db, as hpcprof does, with memory bounded by
//! a budget rather than by the database (FORMATS.md, Profile-Major and Context-Major Sparse
//! Value Blocks).
//!
//! The profile.db is read through `Read + Seek` (a file, or a cursor over bytes), never whole:
//!
//! 1. One pass over every profile's context index counts the values of each context.
//! 2. Contexts are cut into consecutive ranges whose values fit the budget.
//! 3. For each range, every profile's slice for that range is read (each profile's context index
//!    is walked once in total over all ranges, its values once), the values are sorted by
//!    (metric, profile) per context, and the range's blocks are written to cct.db in `ctxId`
//!    order.
//!
//! Besides the budget, memory is about 48 bytes per context (counts and the cct.db table) and
//! 8 bytes per profile. A single context whose values exceed the budget is still done in one
//! piece. Damaged input gives [`io::ErrorKind::InvalidData`], never a panic; when `nCtxs` comes
//! from the file, it may not exceed the file's size in bytes (pass [`TransposeOptions::n_ctxs`]
//! for anything larger).

use std::io::{self, Read, Seek, SeekFrom, Write};

use super::CctDbWriter;
use crate::model::{MetricStart, ProfileValue};

/// Options of [`transpose`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransposeOptions {
    /// Bytes of values held in memory at once (16 bytes per value).
    pub memory_budget: usize,
    /// `nCtxs` of cct.db; by default one more than the largest `ctxId` of profile.db. hpcprof
    /// uses the largest `ctxId` of the whole database, which meta.db knows.
    pub n_ctxs: Option<u32>,
}

impl Default for TransposeOptions {
    fn default() -> Self {
        TransposeOptions {
            memory_budget: 256 << 20,
            n_ctxs: None,
        }
    }
}

/// What [`transpose`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransposeStats {
    /// `nCtxs` written.
    pub n_ctxs: u32,
    /// Values transposed.
    pub n_values: u64,
    /// Context ranges (passes over the profiles).
    pub passes: u32,
    /// The largest number of values held at once.
    pub max_values_held: u64,
}

/// Size of a {Val} and an {Idx} in profile.db.
const VALUE_SIZE: u64 = 10;
const INDEX_SIZE: u64 = 12;
/// Most entries read per I/O call (fewer for small budgets, at least 16).
const MAX_CHUNK: usize = 1 << 14;

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("profile.db: {what}"))
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}
fn le_u32(b: &[u8], at: usize) -> u32 {
    let mut a = [0; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

/// The value block of one non-summary profile.
#[derive(Debug, Clone, Copy)]
struct Block {
    prof_index: u32,
    n_values: u64,
    p_values: u64,
    n_ctxs: u64,
    p_ctx_indices: u64,
    /// The next context index entry to read (advances over the ranges).
    cursor: u64,
}

struct Input<R> {
    r: R,
    len: u64,
    buf: Vec<u8>,
}

impl<R: Read + Seek> Input<R> {
    /// Reads `n` bytes at `at` into the internal buffer.
    fn read(&mut self, at: u64, n: usize) -> io::Result<&[u8]> {
        if at.checked_add(n as u64).is_none_or(|end| end > self.len) {
            return Err(bad("a pointer or count runs past the end of the file"));
        }
        self.buf.resize(n, 0);
        self.r.seek(SeekFrom::Start(at))?;
        self.r.read_exact(&mut self.buf)?;
        Ok(&self.buf)
    }

    /// Context index entries `from..to` of `block` as `(ctxId, startIndex)`.
    fn indices(
        &mut self,
        block: &Block,
        from: u64,
        to: u64,
        out: &mut Vec<(u32, u64)>,
    ) -> io::Result<()> {
        out.clear();
        let bytes = self.read(
            block.p_ctx_indices + from * INDEX_SIZE,
            ((to - from) * INDEX_SIZE) as usize,
        )?;
        out.extend(
            bytes
                .chunks_exact(INDEX_SIZE as usize)
                .map(|c| (le_u32(c, 0), le_u64(c, 4))),
        );
        Ok(())
    }
}

/// Writes cct.db to `cct` from the profile.db read from `profile_db`, holding at most about
/// `options.memory_budget` bytes of values at once. Returns the output and what was done.
pub fn transpose<R: Read + Seek, W: Write + Seek>(
    profile_db: R,
    cct: W,
    options: &TransposeOptions,
) -> io::Result<(W, TransposeStats)> {
    let mut input = Input {
        len: 0,
        r: profile_db,
        buf: Vec::new(),
    };
    input.len = input.r.seek(SeekFrom::End(0))?;
    let head = input.read(0, 0x30)?;
    if &head[..10] != b"HPCTOOLKIT" || &head[10..14] != b"prof" || head[14] != 4 {
        return Err(bad("not a profile.db of major version 4"));
    }
    let p_infos = le_u64(head, 0x18);
    let section = input.read(p_infos, 0x0d)?;
    let (p_profiles, n_profiles, sz_profile) = (
        le_u64(section, 0),
        le_u32(section, 8),
        u64::from(section[12]),
    );
    if sz_profile < 0x2c {
        return Err(bad("szProfile is smaller than a profile info"));
    }
    // Reading the table through the bounds-checked `read` keeps a hostile count from
    // allocating more than the file holds.
    let table = input
        .read(p_profiles, (u64::from(n_profiles) * sz_profile) as usize)?
        .to_vec();
    let mut blocks = Vec::new();
    for (i, info) in table.chunks_exact(sz_profile as usize).enumerate() {
        let flags = le_u32(info, 0x28);
        if flags & 1 != 0 {
            continue; // cct.db never contains summary profiles (hpctoolkit-db-v4.md).
        }
        let b = Block {
            prof_index: i as u32,
            n_values: le_u64(info, 0),
            p_values: le_u64(info, 8),
            n_ctxs: u64::from(le_u32(info, 0x10)),
            p_ctx_indices: le_u64(info, 0x18),
            cursor: 0,
        };
        let fits = |p: u64, n: u64, size: u64| {
            n.checked_mul(size)
                .and_then(|s| s.checked_add(p))
                .is_some_and(|e| e <= input.len)
        };
        if !fits(b.p_values, b.n_values, VALUE_SIZE) || !fits(b.p_ctx_indices, b.n_ctxs, INDEX_SIZE)
        {
            return Err(bad("a value block runs past the end of the file"));
        }
        blocks.push(b);
    }

    // Small budgets read in small pieces too (which also lets tests cross piece boundaries).
    let chunk = (options.memory_budget / 64).clamp(16, MAX_CHUNK);

    // 1. Count the values of each context.
    let mut n_ctxs = options.n_ctxs.map_or(0, u64::from);
    let mut entries = Vec::new();
    if options.n_ctxs.is_none() {
        for b in &blocks {
            if b.n_ctxs > 0 {
                input.indices(b, b.n_ctxs - 1, b.n_ctxs, &mut entries)?;
                n_ctxs = n_ctxs.max(u64::from(entries[0].0) + 1);
            }
        }
    }
    // cct.db holds 32 bytes per ctxId below nCtxs, and this function 48 bytes of memory each: a
    // ctxId read from the file (not given by the caller) may not claim more contexts than the
    // file has bytes, so a hostile ctxId cannot make it allocate gigabytes.
    if options.n_ctxs.is_none() && n_ctxs > input.len.max(1 << 16) {
        return Err(bad("a ctxId far larger than the file could describe"));
    }
    let n_ctxs = u32::try_from(n_ctxs).map_err(|_| bad("a ctxId of u32::MAX"))?;
    let mut counts = vec![0u64; n_ctxs as usize];
    for b in &blocks {
        let mut prev: Option<(u32, u64)> = None;
        let mut from = 0;
        while from < b.n_ctxs {
            let to = (from + chunk as u64).min(b.n_ctxs);
            input.indices(b, from, to, &mut entries)?;
            for &(ctx, start) in &entries {
                if let Some((pc, ps)) = prev {
                    if ctx <= pc || start < ps {
                        return Err(bad("a context index is not sorted"));
                    }
                    counts[pc as usize] += start - ps;
                }
                if ctx >= n_ctxs {
                    return Err(bad("a ctxId beyond nCtxs"));
                }
                prev = Some((ctx, start));
            }
            from = to;
        }
        if let Some((pc, ps)) = prev {
            if ps > b.n_values {
                return Err(bad("a start index beyond nValues"));
            }
            counts[pc as usize] += b.n_values - ps;
        }
    }

    // 2 and 3. Ranges of contexts within the budget, each transposed in turn.
    let cap = (options.memory_budget / std::mem::size_of::<Cell>()).max(1) as u64;
    let mut out = CctDbWriter::new(cct, n_ctxs)?;
    let mut stats = TransposeStats {
        n_ctxs,
        ..TransposeStats::default()
    };
    let mut pass = Pass {
        lo: 0,
        hi: 0,
        chunk,
        entries,
        ranges: Vec::new(),
        fill: Vec::new(),
        cells: Vec::new(),
    };
    let mut metrics: Vec<MetricStart> = Vec::new();
    let mut values: Vec<ProfileValue> = Vec::new();
    let mut lo = 0u32;
    while lo < n_ctxs {
        let mut hi = lo;
        let mut held = 0u64;
        while hi < n_ctxs && (hi == lo || held + counts[hi as usize] <= cap) {
            held += counts[hi as usize];
            hi += 1;
        }
        stats.passes += 1;
        stats.max_values_held = stats.max_values_held.max(held);
        (pass.lo, pass.hi) = (lo, hi);
        // fill[c - lo]: where the next value of context c goes in `cells`.
        pass.fill.clear();
        let mut at = 0;
        for c in lo..hi {
            pass.fill.push(at);
            at += counts[c as usize];
        }
        pass.cells.clear();
        pass.cells.resize(held as usize, Cell::default());
        for b in &mut blocks {
            pass.gather(&mut input, b)?;
        }
        let mut start = 0usize;
        for c in lo..hi {
            let n = counts[c as usize] as usize;
            let cell = &mut pass.cells[start..start + n];
            start += n;
            by_metric(cell, &mut metrics, &mut values);
            out.write_context(c, &metrics, &values).map_err(|e| {
                if e.kind() == io::ErrorKind::InvalidInput {
                    bad("a context holds the same metric twice")
                } else {
                    e
                }
            })?;
            stats.n_values += n as u64;
        }
        lo = hi;
    }
    Ok((out.finish()?, stats))
}

/// Distinct metrics of a context beyond which [`by_metric`] sorts instead of counting.
const FEW_METRICS: usize = 64;

/// A context's values, gathered profile by profile (so by increasing `profIndex` within each
/// metric), regrouped by metric as cct.db orders them: the metric index and the values.
fn by_metric(cell: &mut [Cell], metrics: &mut Vec<MetricStart>, values: &mut Vec<ProfileValue>) {
    metrics.clear();
    values.clear();
    for v in cell.iter() {
        if !metrics.iter().any(|m| m.metric_id == v.metric_id) {
            if metrics.len() == FEW_METRICS {
                // Many metrics: sort; (metric, profile) pairs are unique within a context.
                metrics.clear();
                cell.sort_unstable_by_key(|v| (v.metric_id, v.prof_index));
                for (i, v) in cell.iter().enumerate() {
                    if metrics.last().is_none_or(|m| m.metric_id != v.metric_id) {
                        metrics.push(MetricStart {
                            metric_id: v.metric_id,
                            start: i as u64,
                        });
                    }
                    values.push(ProfileValue {
                        prof_index: v.prof_index,
                        value: v.value,
                    });
                }
                return;
            }
            metrics.push(MetricStart {
                metric_id: v.metric_id,
                start: 0,
            });
        }
    }
    // Few metrics: a counting sort, stable, so profiles stay in increasing order.
    metrics.sort_unstable_by_key(|m| m.metric_id);
    for v in cell.iter() {
        if let Some(m) = metrics.iter_mut().find(|m| m.metric_id == v.metric_id) {
            m.start += 1;
        }
    }
    let mut next = 0;
    for m in metrics.iter_mut() {
        let count = m.start;
        m.start = next;
        next += count;
    }
    values.resize(cell.len(), ProfileValue::default());
    let mut fill: [u64; FEW_METRICS] = [0; FEW_METRICS];
    for (f, m) in fill.iter_mut().zip(metrics.iter()) {
        *f = m.start;
    }
    for v in cell.iter() {
        if let Some(k) = metrics.iter().position(|m| m.metric_id == v.metric_id) {
            values[fill[k] as usize] = ProfileValue {
                prof_index: v.prof_index,
                value: v.value,
            };
            fill[k] += 1;
        }
    }
}

/// One value on its way to cct.db.
#[derive(Debug, Clone, Copy, Default)]
struct Cell {
    value: f64,
    prof_index: u32,
    metric_id: u16,
}

/// The state of one pass over the profiles: contexts `lo..hi` and the buffers that hold them.
struct Pass {
    lo: u32,
    hi: u32,
    /// Entries per read.
    chunk: usize,
    /// Context index entries just read.
    entries: Vec<(u32, u64)>,
    /// (ctxId, first value, end of values) of each context of this range in one profile.
    ranges: Vec<(u32, u64, u64)>,
    /// Where the next value of context `lo + i` goes in `cells`.
    fill: Vec<u64>,
    /// The range's values, grouped by context.
    cells: Vec<Cell>,
}

impl Pass {
    /// Copies the values of contexts `lo..hi` of one profile into `cells`.
    fn gather<R: Read + Seek>(&mut self, input: &mut Input<R>, b: &mut Block) -> io::Result<()> {
        let Pass {
            lo,
            hi,
            chunk,
            entries,
            ranges,
            fill,
            cells,
        } = self;
        let (lo, hi, chunk) = (*lo, *hi, *chunk);
        // (ctxId, first value, end of values) of each context of this range.
        ranges.clear();
        'chunks: while b.cursor < b.n_ctxs {
            let base = b.cursor;
            let to = (base + chunk as u64).min(b.n_ctxs);
            input.indices(b, base, to, entries)?;
            for (k, &(ctx, start)) in entries.iter().enumerate() {
                if ctx >= hi {
                    break 'chunks;
                }
                let next = base + k as u64 + 1;
                let end = match entries.get(k + 1) {
                    Some(&(_, next_start)) => next_start,
                    None if next < b.n_ctxs => {
                        le_u64(input.read(b.p_ctx_indices + next * INDEX_SIZE + 4, 8)?, 0)
                    }
                    None => b.n_values,
                };
                if ctx >= lo && end > start {
                    ranges.push((ctx, start, end));
                }
                b.cursor = next;
            }
        }
        let (Some(first), Some(last)) = (ranges.first(), ranges.last()) else {
            return Ok(());
        };
        let (from, to) = (first.1, last.2);
        if to > b.n_values {
            return Err(bad("a start index beyond nValues"));
        }
        let mut r = 0;
        let mut index = from;
        while index < to {
            let n = (to - index).min(chunk as u64);
            let bytes = input.read(b.p_values + index * VALUE_SIZE, (n * VALUE_SIZE) as usize)?;
            for (k, v) in bytes.chunks_exact(VALUE_SIZE as usize).enumerate() {
                let i = index + k as u64;
                while ranges[r].2 <= i {
                    r += 1;
                }
                let ctx = ranges[r].0;
                let slot = &mut fill[(ctx - lo) as usize];
                let cell = cells
                    .get_mut(*slot as usize)
                    .ok_or_else(|| bad("value counts changed between passes"))?;
                let mut f = [0; 8];
                f.copy_from_slice(&v[2..10]);
                *cell = Cell {
                    value: f64::from_le_bytes(f),
                    prof_index: b.prof_index,
                    metric_id: u16::from_le_bytes([v[0], v[1]]),
                };
                *slot += 1;
            }
            index += n;
        }
        Ok(())
    }
}
