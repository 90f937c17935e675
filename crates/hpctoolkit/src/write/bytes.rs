//! Little-endian byte building shared by the writers (FORMATS.md, Formats legend: every integer
//! is little-endian).

use std::io::{self, Seek, SeekFrom, Write};

use crate::model::{ContextStart, MetricStart, MetricValue, ProfileValue, TraceElement};

/// The common file header's magic (FORMATS.md, Common file structure).
pub(crate) const MAGIC: &[u8; 10] = b"HPCTOOLKIT";

/// A growing little-endian buffer whose offsets are file offsets.
#[derive(Debug, Default)]
pub(crate) struct Buf {
    pub(crate) bytes: Vec<u8>,
}

impl Buf {
    pub(crate) fn pos(&self) -> u64 {
        self.bytes.len() as u64
    }
    pub(crate) fn align(&mut self, to: usize) {
        let len = self.bytes.len().next_multiple_of(to);
        self.bytes.resize(len, 0);
    }
    pub(crate) fn zeros(&mut self, n: usize) -> u64 {
        let at = self.pos();
        self.bytes.resize(self.bytes.len() + n, 0);
        at
    }
    pub(crate) fn u8(&mut self, v: u8) {
        self.bytes.push(v);
    }
    pub(crate) fn u16(&mut self, v: u16) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.bytes.extend_from_slice(&v.to_le_bytes());
    }
    /// Appends `s` and a NUL; returns its offset.
    pub(crate) fn cstr(&mut self, s: &str) -> u64 {
        let at = self.pos();
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        at
    }
    pub(crate) fn put_u64(&mut self, at: u64, v: u64) {
        let at = at as usize;
        self.bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// The common header: magic, format, version, then `(size, pointer)` of each section.
pub(crate) fn file_header(buf: &mut Buf, format: &[u8; 4], sections: &[(u64, u64)]) {
    buf.bytes.extend_from_slice(MAGIC);
    buf.bytes.extend_from_slice(format);
    buf.u8(super::VERSION.0);
    buf.u8(super::VERSION.1);
    for &(size, ptr) in sections {
        buf.u64(size);
        buf.u64(ptr);
    }
}

/// Rejects strings a C reader would cut short.
pub(crate) fn check_cstr(s: &str, what: &str) -> io::Result<()> {
    if s.as_bytes().contains(&0) {
        return Err(super::invalid(&format!("{what} contains a NUL byte")));
    }
    Ok(())
}

/// Records encoded per write: small enough for the scratch buffer to stay in cache, large
/// enough for few calls.
const RECORDS_PER_WRITE: usize = 4096;

/// Writes `items` as fixed-size little-endian records at the current end of `out`, encoding
/// through a small reused buffer (never a copy of the whole array).
fn put_records<W: Write + Seek, T, const SIZE: usize>(
    out: &mut Out<W>,
    items: &[T],
    scratch: &mut Vec<u8>,
    f: impl Fn(&T, &mut [u8; SIZE]),
) -> io::Result<()> {
    if scratch.len() < RECORDS_PER_WRITE * SIZE {
        scratch.resize(RECORDS_PER_WRITE * SIZE, 0);
    }
    for chunk in items.chunks(RECORDS_PER_WRITE) {
        let buf = &mut scratch[..chunk.len() * SIZE];
        for (item, record) in chunk.iter().zip(buf.chunks_exact_mut(SIZE)) {
            if let Ok(record) = <&mut [u8; SIZE]>::try_from(record) {
                f(item, record);
            }
        }
        out.append(buf)?;
    }
    Ok(())
}

/// profile.db {Val}: u16 metricId, f64 value (10 bytes).
pub(crate) fn put_metric_values<W: Write + Seek>(
    out: &mut Out<W>,
    v: &[MetricValue],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    put_records::<_, _, 10>(out, v, scratch, |v, c| {
        c[..2].copy_from_slice(&v.metric_id.to_le_bytes());
        c[2..].copy_from_slice(&v.value.to_le_bytes());
    })
}

/// profile.db {Idx}: u32 ctxId, u64 startIndex (12 bytes).
pub(crate) fn put_context_starts<W: Write + Seek>(
    out: &mut Out<W>,
    v: &[ContextStart],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    put_records::<_, _, 12>(out, v, scratch, |v, c| {
        c[..4].copy_from_slice(&v.ctx_id.to_le_bytes());
        c[4..].copy_from_slice(&v.start.to_le_bytes());
    })
}

/// cct.db {Val}: u32 profIndex, f64 value (12 bytes).
pub(crate) fn put_profile_values<W: Write + Seek>(
    out: &mut Out<W>,
    v: &[ProfileValue],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    put_records::<_, _, 12>(out, v, scratch, |v, c| {
        c[..4].copy_from_slice(&v.prof_index.to_le_bytes());
        c[4..].copy_from_slice(&v.value.to_le_bytes());
    })
}

/// cct.db {Idx}: u16 metricId, u64 startIndex (10 bytes).
pub(crate) fn put_metric_starts<W: Write + Seek>(
    out: &mut Out<W>,
    v: &[MetricStart],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    put_records::<_, _, 10>(out, v, scratch, |v, c| {
        c[..2].copy_from_slice(&v.metric_id.to_le_bytes());
        c[2..].copy_from_slice(&v.start.to_le_bytes());
    })
}

/// trace.db {Elem}: u64 timestamp, u32 ctxId (12 bytes).
pub(crate) fn put_trace_elements<W: Write + Seek>(
    out: &mut Out<W>,
    v: &[TraceElement],
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    put_records::<_, _, 12>(out, v, scratch, |v, c| {
        c[..8].copy_from_slice(&v.timestamp.to_le_bytes());
        c[8..].copy_from_slice(&v.ctx_id.to_le_bytes());
    })
}

/// A `Write + Seek` output whose file offsets count from where the writer started, with the
/// current offset tracked so that sequential writes never seek.
#[derive(Debug)]
pub(crate) struct Out<W> {
    pub(crate) inner: W,
    base: u64,
    pos: u64,
}

impl<W: Write + Seek> Out<W> {
    pub(crate) fn new(mut inner: W) -> io::Result<Self> {
        let base = inner.stream_position()?;
        Ok(Out {
            inner,
            base,
            pos: 0,
        })
    }
    pub(crate) fn pos(&self) -> u64 {
        self.pos
    }
    /// Writes `bytes` at file offset `at`.
    pub(crate) fn write_at(&mut self, at: u64, bytes: &[u8]) -> io::Result<()> {
        if at != self.pos {
            self.inner.seek(SeekFrom::Start(self.base + at))?;
        }
        self.inner.write_all(bytes)?;
        self.pos = at + bytes.len() as u64;
        Ok(())
    }
    /// Writes `bytes` at the current offset.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }
    /// Pads with zeros up to a multiple of `to`.
    pub(crate) fn pad_to(&mut self, to: u64) -> io::Result<()> {
        let n = self.pos.next_multiple_of(to) - self.pos;
        self.append(&[0; 8][..n as usize])
    }
    /// Leaves the stream at file offset `at` (later writes go there).
    pub(crate) fn seek_to(&mut self, at: u64) -> io::Result<()> {
        if at != self.pos {
            self.inner.seek(SeekFrom::Start(self.base + at))?;
            self.pos = at;
        }
        Ok(())
    }
}

/// Sorted and non-empty ranges of a sparse value block: starts strictly increasing from 0 and
/// below the number of values, keys strictly increasing, and each range's values strictly
/// increasing by `inner_key`.
pub(crate) fn check_block<K: Ord + Copy, T, I: Ord>(
    what: &str,
    outer: impl Iterator<Item = (K, u64)>,
    inner: &[T],
    inner_key: impl Fn(&T) -> I,
) -> io::Result<()> {
    let n = inner.len() as u64;
    let sorted = |from: u64, to: u64| -> io::Result<()> {
        let range = &inner[from as usize..to as usize];
        if range
            .windows(2)
            .all(|w| inner_key(&w[0]) < inner_key(&w[1]))
        {
            Ok(())
        } else {
            Err(super::invalid(&format!(
                "{what}: the values of one entry are not sorted"
            )))
        }
    };
    let mut prev: Option<(K, u64)> = None;
    for (key, start) in outer {
        match prev {
            None => {
                if start != 0 || n == 0 {
                    return Err(super::invalid(&format!(
                        "{what}: the first start index is not 0, or an entry has no values"
                    )));
                }
            }
            Some((pk, ps)) => {
                if key <= pk || start <= ps || start >= n {
                    return Err(super::invalid(&format!(
                        "{what}: index not strictly increasing, or an entry without values"
                    )));
                }
                sorted(ps, start)?;
            }
        }
        prev = Some((key, start));
    }
    match prev {
        Some((_, ps)) => sorted(ps, n),
        None if n != 0 => Err(super::invalid(&format!(
            "{what}: values without an index entry"
        ))),
        None => Ok(()),
    }
}
