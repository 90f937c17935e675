//! trace.db writer (FORMATS.md, `trace.db` version 4.0; hpctoolkit-db-v4.md).
//!
//! Layout, as hpcprof writes it: the 0x20-byte header, the Context Trace Headers section at 0x20
//! (a 0x20-byte header, then `nTraces` entries of `szTrace` = 0x18 bytes), then each trace line
//! at an 8-byte-aligned offset with room for its declared capacity (unused room is slack after
//! `pEnd`), then the footer `trace.db` at an 8-byte-aligned offset.

use std::io::{self, Seek, Write};

use super::bytes::{Buf, Out, file_header, put_trace_elements};
use super::invalid;
use crate::model::TraceElement;

/// The footer of trace.db.
const FOOTER: &[u8; 8] = b"trace.db";
/// Size of the file header.
const HEADER_SIZE: u64 = 0x20;
/// Size of the Context Trace Headers section header.
const SECTION_HEADER_SIZE: u64 = 0x20;
/// `szTrace`.
const TRACE_HEADER_SIZE: u64 = 0x18;
/// Size of one {Elem}.
const ELEMENT_SIZE: u64 = 12;

#[derive(Debug, Clone, Copy)]
struct Line {
    prof_index: u32,
    start: u64,
    capacity: u64,
    len: u64,
    first: Option<u64>,
    last: u64,
}

/// Streams trace.db: every line's `profIndex` and capacity up front (hpcprof reserves room for
/// the count in the measurement file), then elements appended to any line in any order (each
/// line's own elements in time order), then [`TraceDbWriter::finish`].
///
/// ```
/// use profcodec_hpctoolkit::model::TraceElement;
/// use profcodec_hpctoolkit::write::TraceDbWriter;
/// let mut w = TraceDbWriter::new(std::io::Cursor::new(Vec::new()), &[(1, 2)]).unwrap();
/// w.append(0, &[TraceElement { timestamp: 10, ctx_id: 3 }]).unwrap();
/// let bytes = w.finish().unwrap().into_inner();
/// assert!(bytes.ends_with(b"trace.db"));
/// ```
#[derive(Debug)]
pub struct TraceDbWriter<W> {
    out: Out<W>,
    lines: Vec<Line>,
    end: u64,
    range: Option<(u64, u64)>,
    scratch: Vec<u8>,
}

impl<W: Write + Seek> TraceDbWriter<W> {
    /// Lays out one line per `(profIndex, capacity in elements)`, in header order.
    pub fn new(out: W, lines: &[(u32, u64)]) -> io::Result<Self> {
        let n = u32::try_from(lines.len()).map_err(|_| invalid("more than u32::MAX traces"))?;
        let section = SECTION_HEADER_SIZE + TRACE_HEADER_SIZE * u64::from(n);
        let mut at = (HEADER_SIZE + section).next_multiple_of(8);
        let mut laid = Vec::with_capacity(lines.len());
        for &(prof_index, capacity) in lines {
            let size = capacity
                .checked_mul(ELEMENT_SIZE)
                .ok_or_else(|| invalid("trace capacity too large"))?;
            laid.push(Line {
                prof_index,
                start: at,
                capacity,
                len: 0,
                first: None,
                last: 0,
            });
            at = at
                .checked_add(size)
                .map(|e| e.next_multiple_of(8))
                .ok_or_else(|| invalid("trace capacity too large"))?;
        }
        let mut head = Buf::default();
        file_header(&mut head, b"trce", &[(section, HEADER_SIZE)]);
        let mut out = Out::new(out)?;
        out.write_at(0, &head.bytes)?;
        Ok(TraceDbWriter {
            out,
            lines: laid,
            end: at,
            range: None,
            scratch: Vec::new(),
        })
    }

    /// Appends elements to line `line` (an index into the `lines` given to `new`). Timestamps
    /// must not decrease, and the line must not outgrow its capacity.
    pub fn append(&mut self, line: u32, elements: &[TraceElement]) -> io::Result<()> {
        let l = self
            .lines
            .get_mut(line as usize)
            .ok_or_else(|| invalid("trace line out of range"))?;
        if elements.len() as u64 > l.capacity - l.len {
            return Err(invalid("trace line longer than its capacity"));
        }
        let mut last = if l.first.is_some() { l.last } else { 0 };
        for e in elements {
            if e.timestamp < last {
                return Err(invalid("trace timestamps decrease"));
            }
            last = e.timestamp;
        }
        let Some(first) = elements.first() else {
            return Ok(());
        };
        l.first.get_or_insert(first.timestamp);
        l.last = last;
        let at = l.start + l.len * ELEMENT_SIZE;
        l.len += elements.len() as u64;
        self.out.seek_to(at)?;
        put_trace_elements(&mut self.out, elements, &mut self.scratch)
    }

    /// Stores `minTimestamp` and `maxTimestamp` as given instead of computing them from the
    /// elements.
    pub fn set_time_range(&mut self, min: u64, max: u64) {
        self.range = Some((min, max));
    }

    /// Writes the headers and the footer. Without [`TraceDbWriter::set_time_range`], the range
    /// is that of the elements (0 and 0 when there are none).
    /// A range given by `set_time_range` must hold every element (readers check it, FORMATS.md,
    /// trace.db `minTimestamp`/`maxTimestamp`).
    pub fn finish(mut self) -> io::Result<W> {
        let first = self.lines.iter().filter_map(|l| l.first).min();
        let last = self
            .lines
            .iter()
            .filter(|l| l.first.is_some())
            .map(|l| l.last)
            .max();
        let (min, max) = match (self.range, first, last) {
            (Some((min, max)), Some(first), Some(last)) if min > first || max < last => {
                return Err(invalid(
                    "minTimestamp..=maxTimestamp does not hold every trace element",
                ));
            }
            (Some(range), _, _) => range,
            (None, first, last) => (first.unwrap_or(0), last.unwrap_or(0)),
        };
        self.out.write_at(self.end, FOOTER)?;
        let mut head = Buf::default();
        head.u64(HEADER_SIZE + SECTION_HEADER_SIZE);
        head.u32(self.lines.len() as u32);
        head.u8(TRACE_HEADER_SIZE as u8);
        head.align(8);
        head.u64(min);
        head.u64(max);
        for l in &self.lines {
            head.u32(l.prof_index);
            head.u32(0);
            head.u64(l.start);
            head.u64(l.start + l.len * ELEMENT_SIZE);
        }
        self.out.write_at(HEADER_SIZE, &head.bytes)?;
        self.out.seek_to(self.end + FOOTER.len() as u64)?;
        Ok(self.out.inner)
    }
}
