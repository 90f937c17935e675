//! The streaming reader of the logical stream: header, then one [`Event`] per body record.

use std::io::Read;

use crate::error::{Error, StreamPos, TrailingData};
use crate::model::{Container, Event, Genealogy, Header, PerlStr};
use crate::raw::PROLOGUE_LEN;
use crate::read::hot::{HotSample, hot_record, hot_sample};
use crate::read::packets::{ReadSource, SliceSource, StreamSource};
use crate::read::parse::{HeaderRecord, Span, SpanRecord, Stop, body_record, header_record};

/// Reads a StatProfiler file record by record, borrowing strings from its window of
/// decompressed bytes.
///
/// The window holds the undecoded rest of the current packet plus whatever a record spanning
/// packets needs; memory stays at a few packets whatever the file's size.
///
/// ```
/// use profcodec_statprofiler::{Header, PerlStr, Record, Reader, Writer, Container};
/// let mut w = Writer::new(Vec::new(), &Header::default(), Container::Snappy).unwrap();
/// w.start_sample(3, &PerlStr::bytes(b"add")).unwrap();
/// w.end_sample().unwrap();
/// let file = w.finish().unwrap();
///
/// let mut r = Reader::from_slice(&file).unwrap();
/// match r.next_event().unwrap() {
///     Some(Record::SampleStart { weight, op_name }) => {
///         assert_eq!((weight, op_name.bytes), (3, &b"add"[..]));
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
#[derive(Debug)]
pub struct Reader<S> {
    source: S,
    container: Container,
    exhausted: bool,
    failed: bool,
    /// The window is `buf[..filled]`; the bytes after it are scratch, kept so that the next
    /// packet is decompressed without clearing room for it first.
    buf: Vec<u8>,
    filled: usize,
    /// Stream offset of `window[0]`.
    base: u64,
    /// Window index of the next record.
    pos: usize,
    /// Stream offset below which bytes must be kept (the open sample of a trace reader).
    pin: Option<u64>,
    /// Stream offset of the last record returned.
    record_start: u64,
    /// `(stream offset, file offset)` of each packet that reaches into the window.
    packets: Vec<(u64, u64)>,
    header: Header,
}

impl<'a> Reader<SliceSource<'a>> {
    /// Reads the prologue and header of a file in memory.
    pub fn from_slice(file: &'a [u8]) -> Result<Self, Error> {
        Reader::with_source(SliceSource::new(file)?)
    }
}

impl<R: Read> Reader<ReadSource<R>> {
    /// Reads the prologue and header from `input`.
    pub fn new(input: R) -> Result<Self, Error> {
        Reader::with_source(ReadSource::new(input)?)
    }
}

impl<S: StreamSource> Reader<S> {
    /// A reader over any [`StreamSource`]; reads the header.
    pub fn with_source(source: S) -> Result<Self, Error> {
        let mut reader = Reader {
            container: source.container(),
            source,
            exhausted: false,
            failed: false,
            buf: Vec::new(),
            filled: 0,
            base: 0,
            pos: 0,
            pin: None,
            record_start: 0,
            packets: Vec::new(),
            header: Header::default(),
        };
        reader.read_header()?;
        Ok(reader)
    }

    /// The file header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// How the stream is stored.
    pub fn container(&self) -> Container {
        self.container
    }

    /// The stream offset of the last record returned.
    pub fn record_offset(&self) -> u64 {
        self.record_start
    }

    /// The position of a stream offset, for error messages.
    pub fn position_of(&self, stream: u64) -> StreamPos {
        let file = match self.container {
            Container::Plain => stream + PROLOGUE_LEN as u64,
            Container::Snappy => self
                .packets
                .iter()
                .rev()
                .find(|(s, _)| *s <= stream)
                .or(self.packets.first())
                .map_or(PROLOGUE_LEN as u64, |&(_, f)| f),
        };
        StreamPos { stream, file }
    }

    /// The error for a stop found in the window whose first byte was at stream offset `base`.
    fn stop_error(&self, stop: Stop, base: u64) -> Error {
        match stop {
            Stop::Short { what, at, needed } => {
                let abs = base + at as u64;
                let pos = self.position_of(abs);
                let end = self.base + self.filled as u64;
                let available = end.saturating_sub(abs);
                Error::StreamTruncated {
                    what,
                    pos,
                    needed: needed.saturating_sub(available),
                }
            }
            Stop::Long { what, at } => Error::VarintTooLong {
                what,
                pos: self.position_of(base + at as u64),
            },
        }
    }

    /// Makes at least `needed` bytes available from window index `at`. Returns false when the
    /// file ends first. Bytes before the current record (and before the pin) are dropped.
    fn fill(&mut self, at: usize, needed: u64) -> Result<bool, Error> {
        let abs = self.base + at as u64;
        let keep = self.pin.map_or(self.base + self.pos as u64, |p| {
            p.min(self.base + self.pos as u64)
        });
        let drop = (keep - self.base) as usize;
        if drop > 0 {
            self.buf.copy_within(drop..self.filled, 0);
            self.filled -= drop;
            self.base += drop as u64;
            self.pos -= drop;
            let base = self.base;
            // Keep the packet holding `base` and every later one.
            let first = self
                .packets
                .iter()
                .rposition(|(s, _)| *s <= base)
                .unwrap_or(0);
            self.packets.drain(..first);
        }
        let at = (abs - self.base) as usize;
        while ((self.filled - at) as u64) < needed {
            if self.exhausted {
                return Ok(false);
            }
            let stream = self.base + self.filled as u64;
            match self.source.fill(&mut self.buf, self.filled) {
                // An empty packet adds no byte: it is not recorded, so that a run of them
                // cannot grow the packet list (the window does not move while they are read).
                Ok(Some((_, 0))) => {}
                Ok(Some((file, n))) => {
                    self.filled += n;
                    self.packets.push((stream, file));
                }
                Ok(None) => self.exhausted = true,
                Err(e) => {
                    self.exhausted = true;
                    self.failed = true;
                    return Err(e);
                }
            }
        }
        Ok(true)
    }

    fn read_header(&mut self) -> Result<(), Error> {
        loop {
            let rec = match header_record(self.window_bytes(), self.pos, self.base) {
                Ok((rec, end)) => {
                    self.record_start = self.base + self.pos as u64;
                    self.pos = end;
                    rec
                }
                Err(stop) => {
                    let base = self.base;
                    let (at, needed) = match stop {
                        Stop::Short { at, needed, .. } => (at, needed),
                        Stop::Long { .. } => return Err(self.stop_error(stop, base)),
                    };
                    if !self.fill(at, needed)? {
                        return Err(self.stop_error(stop, base));
                    }
                    continue;
                }
            };
            match rec {
                HeaderRecord::End => return Ok(()),
                HeaderRecord::PerlVersion(v) => self.header.perl_version = Some(v),
                HeaderRecord::TickDuration(v) => self.header.tick_duration_us = Some(v),
                HeaderRecord::StackDepth(v) => self.header.stack_depth = Some(v),
                HeaderRecord::Genealogy {
                    ordinal,
                    parent_ordinal,
                    id,
                    parent_id,
                } => {
                    self.header.genealogy = Some(Genealogy {
                        ordinal,
                        parent_ordinal,
                        id,
                        parent_id,
                    })
                }
                HeaderRecord::Metadata(k, v) => {
                    let pair = (self.str(k).to_owned(), self.str(v).to_owned());
                    self.header.metadata.push(pair);
                }
                HeaderRecord::Bad(tag) => {
                    return Err(Error::HeaderTag {
                        pos: self.position_of(self.record_start),
                        tag,
                    });
                }
            }
        }
    }

    /// The next record as spans, or `None` at the end of the file.
    #[inline(always)]
    pub(crate) fn next_span(&mut self) -> Result<Option<SpanRecord>, Error> {
        if self.failed {
            return Ok(None);
        }
        if let Some((rec, end)) = hot_record(self.window_bytes(), self.pos, self.base) {
            self.record_start = self.base + self.pos as u64;
            self.pos = end;
            return Ok(Some(rec));
        }
        loop {
            match body_record(self.window_bytes(), self.pos, self.base) {
                Ok((rec, end)) => {
                    self.record_start = self.base + self.pos as u64;
                    self.pos = end;
                    return Ok(Some(rec));
                }
                Err(Stop::Short { at, needed, .. }) if at == self.pos && needed == 1 => {
                    // Between records: the end of the file is the end of the stream.
                    if !self.fill(at, 1)? {
                        return Ok(None);
                    }
                }
                Err(stop @ Stop::Short { at, needed, .. }) => {
                    let base = self.base;
                    if !self.fill(at, needed)? {
                        self.failed = true;
                        return Err(self.stop_error(stop, base));
                    }
                }
                Err(stop) => {
                    self.failed = true;
                    return Err(self.stop_error(stop, self.base));
                }
            }
        }
    }

    /// A whole sample read on the hot path ([`hot_sample`]), or `None` (nothing consumed; the
    /// caller clears `frames` and reads the records one by one).
    #[inline(always)]
    pub(crate) fn hot_sample(
        &mut self,
        frames: &mut Vec<crate::model::Frame<Span>>,
        drop_after_begin: bool,
    ) -> Option<HotSample> {
        if self.failed {
            return None;
        }
        let sample = hot_sample(
            self.window_bytes(),
            self.pos,
            self.base,
            frames,
            drop_after_begin,
        )?;
        self.record_start = self.base + sample.end_record as u64;
        self.pos = sample.end;
        Some(sample)
    }

    /// The bytes of a span (which must lie in the window).
    #[inline]
    pub(crate) fn str(&self, span: Span) -> PerlStr<'_> {
        let at = (span.start - self.base) as usize;
        PerlStr {
            flags: span.flags,
            bytes: &self.window_bytes()[at..at + span.len as usize],
        }
    }

    /// The window and the stream offset of its first byte.
    pub(crate) fn window(&self) -> (&[u8], u64) {
        (self.window_bytes(), self.base)
    }

    /// The decompressed bytes not yet dropped.
    #[inline(always)]
    fn window_bytes(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// Keeps every byte from stream offset `pin` in the window until unpinned.
    pub(crate) fn set_pin(&mut self, pin: Option<u64>) {
        self.pin = pin;
    }

    /// Resolves a span record into a borrowed event.
    pub(crate) fn resolve(&self, rec: SpanRecord) -> Event<'_> {
        rec.map(|span| self.str(*span), |span| self.str(*span).bytes)
    }

    /// What follows the last record returned, found without decoding it: `None` when the file
    /// ends there. Meant for after a file-end or stream-end record, after which the profiler
    /// writes nothing; the reader reads on all the same (as the real reader does), so calling
    /// this first is what keeps trailing data from being decoded.
    ///
    /// The bytes after the record that were already decompressed (the rest of its packet) are
    /// `stream_bytes`; `offset` is the file offset where the trailing data starts: for a Snappy
    /// file, of the packet holding the first trailing byte (the packet holding the end record
    /// when it continues past it), exact for a file without Snappy. `size` counts from `offset`
    /// to the end of the file. After this call the reader is at the end of the file.
    pub fn trailing_data(&mut self) -> Result<Option<TrailingData>, Error> {
        let stream_offset = self.base + self.pos as u64;
        let stream_bytes = (self.filled - self.pos) as u64;
        let Some((next, rest)) = self.source.rest()? else {
            return Ok(None);
        };
        let end = next + rest;
        let offset = if stream_bytes > 0 {
            self.position_of(stream_offset).file
        } else {
            next
        };
        self.exhausted = true;
        self.pos = self.filled;
        if end <= offset {
            return Ok(None);
        }
        Ok(Some(TrailingData {
            offset,
            size: end - offset,
            stream_offset,
            stream_bytes,
        }))
    }

    /// The next body record, or `None` at the end of the file (end of data without a 196/197
    /// record is a truncated file's normal end, as for the real reader). After an error, `None`.
    pub fn next_event(&mut self) -> Result<Option<Event<'_>>, Error> {
        match self.next_span()? {
            None => Ok(None),
            Some(rec) => Ok(Some(self.resolve(rec))),
        }
    }
}
