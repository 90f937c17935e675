//! The streaming reader over any `io::Read` (a file, a pipe, or mapped bytes as `&[u8]`): the
//! zlib stream after `z` is inflated a window at a time and parsed as it comes, so memory stays
//! near the largest record plus two 64 KiB buffers, whatever the file's size, and damage is
//! reported as soon as the record holding it is inflated.

use std::io::{ErrorKind, Read};

use flate2::{Decompress, FlushDecompress, Status};
use profcodec_common::Cursor;

use super::ahead::{Ahead, End, HEADROOM};
use super::record::{Header, Record, decode, decode_header, varint_at};
use super::zlib::{TRAILER_KEEP, trailer_text_len, zlib_problem};
use crate::error::Error;
use crate::raw;

/// How many bytes are read from the source, and inflated, at a time.
const CHUNK: usize = 64 * 1024;

/// An incomplete record may hold this many inflated bytes whatever its compressed size.
const RECORD_FREE: usize = 1 << 20;

/// Beyond 1 MiB, the most inflated bytes an incomplete record may hold per compressed
/// byte read since the previous record ended. Text (source lines, names) deflates 3 to 20 times;
/// deflate's own limit is about 1032, which only runs of one byte value reach: a string of
/// zeros announced by a huge length is a bomb, not a profile.
pub const MAX_RECORD_RATIO: u64 = 64;

/// Reads records one at a time from an `io::Read`, inflating after `z`.
///
/// Memory: the record being decoded, a 64 KiB window of inflated bytes and a 64 KiB window of
/// compressed ones. A record is held whole, so its size bounds memory too; past 1 MiB an
/// incomplete record may hold at most [`MAX_RECORD_RATIO`] inflated bytes per compressed byte
/// read since the previous record (else [`Error::InflationRatio`]). Time is linear in the
/// inflated size.
///
/// ```
/// let bytes: &[u8] = b"NYTProf 5 0\n#hello\n-";
/// let mut reader = profcodec_nytprof::Reader::new(bytes).unwrap();
/// let mut n = 0;
/// while let Some(record) = reader.next_record() {
///     record.unwrap();
///     n += 1;
/// }
/// assert_eq!(n, 2);
/// ```
#[derive(Debug)]
pub struct Reader<R> {
    src: R,
    src_eof: bool,
    /// Compressed bytes read but not yet inflated.
    raw: Vec<u8>,
    raw_pos: usize,
    /// Decoded (plain or inflated) bytes.
    buf: Vec<u8>,
    pos: usize,
    /// Offset of `buf[0]` in the uncompressed stream.
    base: u64,
    inflate: Option<Inflater>,
    /// A thread inflating the zlib stream ahead, to use from the `z` tag on instead of inflating
    /// here ([`super::ahead`]).
    ahead: Option<Ahead>,
    /// No more decoded bytes will come.
    eof: bool,
    pending: Option<Error>,
    done: bool,
    major: u32,
    minor: u32,
    header_line: Vec<u8>,
    /// File offset of the first zlib byte (just after `z`); 0 before `z`.
    compressed_offset: u64,
    /// Compressed bytes consumed when the previous record ended.
    in_at_record: u64,
    /// Bytes after the zlib stream: the first [`TRAILER_KEEP`], their file offset and count.
    after: Vec<u8>,
    after_offset: u64,
    after_len: u64,
    stream_ended: bool,
    /// Length of the record [`Reader::next_record`] returned last.
    last_len: usize,
}

/// Who inflates the zlib stream.
#[derive(Debug)]
enum Inflater {
    /// This thread, from the source.
    Inline(Decompress),
    /// Another thread, ahead of this one.
    Ahead(Ahead),
}

impl Inflater {
    /// Compressed bytes consumed so far.
    fn total_in(&self) -> u64 {
        match self {
            Inflater::Inline(d) => d.total_in(),
            Inflater::Ahead(a) => a.total_in,
        }
    }
}

/// Bytes found after the end of the zlib stream that are not the profiler's trailer text
/// (`#\n# Compressed N bytes to M, …\n`), which Devel::NYTProf never reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailing {
    /// File offset of the first such byte.
    pub offset: u64,
    /// How many there are.
    pub size: u64,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the version line.
    pub fn new(src: R) -> Result<Self, Error> {
        let mut r = Self::blank(src);
        loop {
            let mut c = Cursor::new(&r.buf, 0);
            match decode_header(&mut c) {
                Ok(h) => {
                    r.major = h.major;
                    r.minor = h.minor;
                    r.header_line = h.line.to_vec();
                    r.pos = c.position();
                    return Ok(r);
                }
                Err(Error::Truncated(_)) if !r.eof && r.buf.len() < 1 << 16 => r.fill()?,
                Err(e) => return Err(e),
            }
        }
    }

    fn blank(src: R) -> Self {
        Reader {
            src,
            src_eof: false,
            raw: Vec::new(),
            raw_pos: 0,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            inflate: None,
            ahead: None,
            eof: false,
            pending: None,
            done: false,
            major: 0,
            minor: 0,
            header_line: Vec::new(),
            compressed_offset: 0,
            in_at_record: 0,
            after: Vec::new(),
            after_offset: 0,
            after_len: 0,
            stream_ended: false,
            last_len: 0,
        }
    }

    /// A reader of a file whose version line was read elsewhere: `src` starts at file offset
    /// `offset`, at a record boundary.
    pub(crate) fn resume(src: R, offset: u64, header: Header<'_>) -> Self {
        let mut r = Self::blank(src);
        r.major = header.major;
        r.minor = header.minor;
        r.header_line = header.line.to_vec();
        r.base = offset;
        r
    }

    /// A reader of the zlib stream of a file whose version line and plain records were read
    /// elsewhere: `src` starts just after the `z` tag, which is at file offset `z_offset`.
    /// With `ahead`, the stream comes inflated from that thread instead of being inflated here.
    pub(crate) fn after_deflate_ahead(
        src: R,
        z_offset: u64,
        header: Header<'_>,
        ahead: Option<Ahead>,
    ) -> Self {
        let mut r = Self::resume(src, z_offset + 1, header);
        r.ahead = ahead;
        r.start_inflate();
        r
    }

    /// The major and minor version.
    pub fn version(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// The version line as written, with its `\n`.
    pub fn header_line(&self) -> &[u8] {
        &self.header_line
    }

    /// Offset of the next record in the uncompressed (logical) stream: the file offset before
    /// `z`; after it, the `z` offset plus one plus the inflated position. Errors carry offsets
    /// of this stream.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// How far the file itself has been read: before `z` the same as [`Reader::offset`]; after
    /// it, the file offset of the next compressed byte to inflate. With [`Reader::offset`] it
    /// places an error in both streams.
    pub fn input_offset(&self) -> u64 {
        match &self.inflate {
            Some(inflater) => self.compressed_offset + inflater.total_in(),
            None if self.stream_ended => self.after_offset,
            None => self.offset(),
        }
    }

    /// True once the `z` record was read.
    pub fn is_compressed(&self) -> bool {
        self.compressed_offset != 0
    }

    /// After the last record: the bytes after the zlib stream that are not the profiler's
    /// trailer text, if any (`None` for an uncompressed file, whose every byte is a record).
    pub fn trailing(&self) -> Option<Trailing> {
        if !self.stream_ended {
            return None;
        }
        let text = trailer_text_len(&self.after) as u64;
        (self.after_len > text).then(|| Trailing {
            offset: self.after_offset + text,
            size: self.after_len - text,
        })
    }

    /// The bytes after the zlib stream, up to the first 4 KiB (the profiler's trailer text).
    pub fn trailer(&self) -> &[u8] {
        &self.after
    }

    fn io_error(&self, kind: ErrorKind) -> Error {
        Error::Io {
            offset: self.base + self.buf.len() as u64,
            kind,
        }
    }

    fn read_src(&mut self, into: &mut Vec<u8>, size: usize) -> Result<usize, Error> {
        let old = into.len();
        into.resize(old + size, 0);
        loop {
            match self.src.read(&mut into[old..]) {
                Ok(n) => {
                    into.truncate(old + n);
                    if n == 0 {
                        self.src_eof = true;
                    }
                    return Ok(n);
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    into.truncate(old);
                    return Err(self.io_error(e.kind()));
                }
            }
        }
    }

    /// Appends more decoded bytes to `buf` (or sets `eof`).
    fn fill(&mut self) -> Result<(), Error> {
        // Drop consumed bytes so the buffer stays near one record.
        if self.pos > 0 && self.pos * 2 >= self.buf.len() {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
        // A record longer than a window doubles the window per fill, so that decoding it again
        // after each fill costs linear time in its length.
        let held = self.buf.len() - self.pos;
        let Some(mut inflater) = self.inflate.take() else {
            let mut buf = std::mem::take(&mut self.buf);
            let n = self.read_src(&mut buf, held.max(CHUNK));
            self.buf = buf;
            if n? == 0 {
                self.eof = true;
            }
            return Ok(());
        };
        let want = if held > CHUNK { held } else { 1 };
        let result = match &mut inflater {
            Inflater::Inline(d) => self.fill_inflated(d, want),
            Inflater::Ahead(ahead) => {
                self.fill_ahead(ahead, want);
                Ok(())
            }
        };
        if self.stream_ended {
            // The stream is over: the decompressor's state is freed.
            return result;
        }
        // A record that keeps growing far beyond its compressed bytes is a bomb: stop here,
        // before inflating the rest.
        let held = (self.buf.len() - self.pos) as u64;
        let compressed = inflater.total_in() - self.in_at_record;
        if held > RECORD_FREE as u64 && held > compressed.saturating_mul(MAX_RECORD_RATIO) {
            self.eof = true;
            self.pending = Some(Error::InflationRatio {
                offset: self.offset(),
                compressed_offset: self.compressed_offset + inflater.total_in(),
                inflated: held,
            });
        }
        self.inflate = Some(inflater);
        result
    }

    /// Inflates at least `want` more bytes into `buf`, unless the stream ends or breaks first.
    fn fill_inflated(&mut self, d: &mut Decompress, want: usize) -> Result<(), Error> {
        let start_len = self.buf.len();
        while self.buf.len() < start_len + want {
            if self.raw_pos == self.raw.len() && !self.src_eof {
                self.raw.clear();
                self.raw_pos = 0;
                let mut raw = std::mem::take(&mut self.raw);
                let n = self.read_src(&mut raw, CHUNK);
                self.raw = raw;
                n?;
            }
            // One window per step (or what `want` still asks), whatever the buffer's capacity.
            let len = self.buf.len();
            self.buf.resize(len + CHUNK.max(start_len + want - len), 0);
            let (before_in, before_out) = (d.total_in(), d.total_out());
            let status = d.decompress(
                &self.raw[self.raw_pos..],
                &mut self.buf[len..],
                FlushDecompress::None,
            );
            self.buf
                .truncate(len + (d.total_out() - before_out) as usize);
            self.raw_pos += (d.total_in() - before_in) as usize;
            let at = self.compressed_offset + d.total_in();
            match status {
                Ok(Status::StreamEnd) => {
                    self.eof = true;
                    self.end_of_stream(at)?;
                    return Ok(());
                }
                Ok(_) => {
                    let stalled = self.buf.len() == len && d.total_in() == before_in;
                    if stalled {
                        // Input left but no progress is not an intact stream; no input left
                        // means the file ends inside the stream. Never loop on either.
                        let cut = self.src_eof && self.raw_pos == self.raw.len();
                        if cut || self.raw_pos < self.raw.len() {
                            self.eof = true;
                            self.pending = Some(Error::Inflate {
                                offset: at,
                                problem: if cut {
                                    "a stream cut short"
                                } else {
                                    "corrupt deflate data"
                                },
                            });
                            return Ok(());
                        }
                    }
                }
                Err(e) => {
                    self.eof = true;
                    self.pending = Some(Error::Inflate {
                        offset: at,
                        problem: zlib_problem(&e),
                    });
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Takes at least `want` more inflated bytes from the thread inflating ahead, unless the
    /// stream ends or breaks first. A piece is parsed in place: the unfinished record still held
    /// goes into its headroom, and the emptied buffer goes back to the thread.
    fn fill_ahead(&mut self, ahead: &mut Ahead, want: usize) {
        let start_len = self.buf.len() - self.pos;
        while self.buf.len() - self.pos < start_len + want {
            let Some(piece) = ahead.next() else {
                // The thread stops on its own only after saying how the stream ended.
                self.eof = true;
                self.pending = Some(Error::Inflate {
                    offset: self.compressed_offset + ahead.total_in,
                    problem: "a stream whose inflating thread stopped",
                });
                return;
            };
            let held = self.buf.len() - self.pos;
            let at = HEADROOM.saturating_sub(held);
            // `buf[0]` stays at a logical offset: the headroom left before the held bytes must
            // not reach back before offset 0 (only the first piece of a stream can).
            if held <= HEADROOM && self.offset() >= at as u64 {
                let mut bytes = piece.bytes;
                bytes[at..HEADROOM].copy_from_slice(&self.buf[self.pos..]);
                let done = std::mem::replace(&mut self.buf, bytes);
                self.base = self.offset() - at as u64;
                self.pos = at;
                ahead.give_back(done);
            } else {
                self.buf.extend_from_slice(&piece.bytes[HEADROOM..]);
                ahead.give_back(piece.bytes);
            }
            match piece.end {
                None => {}
                Some(End::Stream { after, after_len }) => {
                    self.eof = true;
                    self.stream_ended = true;
                    self.after_offset = self.compressed_offset + ahead.total_in;
                    self.after = after;
                    self.after_len = after_len;
                    return;
                }
                Some(End::Damaged(e)) => {
                    self.eof = true;
                    self.pending = Some(e);
                    return;
                }
            }
        }
    }

    /// Reads what follows the zlib stream (file offset `at`): the first [`TRAILER_KEEP`] bytes
    /// are kept, the rest counted.
    fn end_of_stream(&mut self, at: u64) -> Result<(), Error> {
        self.stream_ended = true;
        self.after_offset = at;
        let keep = |bytes: &[u8], after: &mut Vec<u8>, len: &mut u64| {
            let room = TRAILER_KEEP.saturating_sub(after.len()).min(bytes.len());
            after.extend_from_slice(&bytes[..room]);
            *len += bytes.len() as u64;
        };
        let (mut after, mut len) = (Vec::new(), 0u64);
        keep(&self.raw[self.raw_pos..], &mut after, &mut len);
        self.raw_pos = self.raw.len();
        while !self.src_eof {
            self.raw.clear();
            let mut raw = std::mem::take(&mut self.raw);
            let n = self.read_src(&mut raw, CHUNK);
            self.raw = raw;
            n?;
            keep(&self.raw, &mut after, &mut len);
        }
        self.raw = Vec::new();
        self.raw_pos = 0;
        self.after = after;
        self.after_len = len;
        Ok(())
    }

    /// Switches to inflating: the bytes after `z` already read become zlib input.
    fn start_inflate(&mut self) {
        let rest = self.buf.split_off(self.pos);
        self.base += self.pos as u64;
        self.compressed_offset = self.base;
        self.buf.clear();
        self.pos = 0;
        self.raw = rest;
        self.raw_pos = 0;
        self.eof = false;
        self.in_at_record = 0;
        self.inflate = Some(match self.ahead.take() {
            Some(ahead) => Inflater::Ahead(ahead),
            _ => Inflater::Inline(Decompress::new(true)),
        });
    }

    /// Marks the end of a record for the inflation ratio check.
    #[inline]
    fn record_done(&mut self) {
        if let Some(inflater) = &self.inflate {
            self.in_at_record = inflater.total_in();
        }
    }

    /// Fast path for the bulk of a profile, used by the model loader: when the next record is a
    /// complete `+` record already in the window, consumes it and returns its ticks, fid and
    /// line. Anything else is left for [`Reader::next_record`], which gives the same record or
    /// the precise error.
    #[inline]
    pub(crate) fn next_time_line(&mut self) -> Option<(i32, u32, u32)> {
        let rest = &self.buf[self.pos..];
        if rest.len() < 16 || rest[0] != raw::tag::TIME_LINE || self.done {
            return None;
        }
        let mut i = 1;
        let ticks = varint_at(rest, &mut i) as i32;
        let fid = varint_at(rest, &mut i);
        let line = varint_at(rest, &mut i);
        self.pos += i;
        self.record_done();
        Some((ticks, fid, line))
    }

    /// Fast path for `-` records (a statement discount, one byte): when the next record is one,
    /// consumes it and returns true.
    #[inline]
    pub(crate) fn next_discount(&mut self) -> bool {
        if self.done || self.buf.get(self.pos) != Some(&raw::tag::DISCOUNT) {
            return false;
        }
        self.pos += 1;
        self.record_done();
        true
    }

    /// Fast path for `<` records when the call paths are built: when the next record is a
    /// complete, well-formed `<` record in the window, consumes it and returns its depth,
    /// inclusive and exclusive ticks, name bytes and whether the name is UTF-8.
    #[inline]
    pub(crate) fn next_sub_return(&mut self) -> Option<(u32, f64, f64, &[u8], bool)> {
        let start = self.pos;
        let (_, used) = super::record::sub_return_at(&self.buf[start..], self.done)?;
        self.pos += used;
        self.record_done();
        super::record::sub_return_at(&self.buf[start..], false).map(|(f, _)| f)
    }

    /// Fast path for `<` records, which the model loader ignores: when the next record is a
    /// complete, well-formed `<` record in the window, consumes it and returns true.
    #[inline]
    pub(crate) fn skip_sub_return(&mut self) -> bool {
        let rest = &self.buf[self.pos..];
        if rest.len() < 32 || rest[0] != raw::tag::SUB_RETURN || self.done {
            return false;
        }
        let mut i = 1;
        let _depth = varint_at(rest, &mut i);
        i += 16;
        if rest[i] != raw::tag::STR_BYTES && rest[i] != raw::tag::STR_UTF8 {
            return false;
        }
        i += 1;
        let len = varint_at(rest, &mut i) as usize;
        if len > rest.len() - i {
            return false;
        }
        self.pos += i + len;
        self.record_done();
        true
    }

    /// Fast path for `S` records whose text the caller does not keep: when the next record is
    /// a complete, well-formed `S` record in the window and `skip(fid)` is true for its fid,
    /// consumes it and returns true.
    #[inline]
    pub(crate) fn skip_src_line(&mut self, skip: impl FnOnce(u32) -> bool) -> bool {
        match super::record::src_line_at(&self.buf[self.pos..], self.done) {
            Some((fid, used)) if skip(fid) => {
                self.pos += used;
                self.record_done();
                true
            }
            _ => false,
        }
    }

    /// The next record, or `None` at the end of the stream; after an error, `None`.
    #[allow(clippy::should_implement_trait)]
    pub fn next_record(&mut self) -> Option<Result<Record<'_>, Error>> {
        if self.done {
            return None;
        }
        // First find a complete record (filling the buffer as needed), then decode it once more
        // from a stable borrow to hand it out.
        loop {
            if self.pos == self.buf.len() {
                if self.eof {
                    self.done = true;
                    return self.pending.take().map(Err);
                }
                if let Err(e) = self.fill() {
                    self.done = true;
                    return Some(Err(e));
                }
                continue;
            }
            let mut c = Cursor::new(&self.buf[self.pos..], self.base + self.pos as u64);
            match decode(&mut c) {
                Ok(Record::StartDeflate) => {
                    if self.inflate.is_some() || self.stream_ended {
                        self.done = true;
                        return Some(Err(Error::Inflate {
                            offset: self.base + self.pos as u64,
                            problem: "a second START_DEFLATE inside the zlib stream",
                        }));
                    }
                    self.pos += c.position();
                    self.start_inflate();
                    return Some(Ok(Record::StartDeflate));
                }
                Ok(_) => break,
                Err(Error::Truncated(_)) if !self.eof => {
                    if let Err(e) = self.fill() {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
                Err(e) => {
                    self.done = true;
                    // A record cut by a damaged zlib stream is reported as the zlib damage.
                    return Some(Err(match (self.pending.take(), e) {
                        (Some(p), Error::Truncated(_)) => p,
                        _ => e,
                    }));
                }
            }
        }
        self.record_done();
        let mut c = Cursor::new(&self.buf[self.pos..], self.base + self.pos as u64);
        let record = decode(&mut c);
        self.last_len = c.position();
        self.pos += c.position();
        Some(record)
    }

    /// Like [`Reader::next_record`], but gives the record's bytes; after an error, the bytes of
    /// the window from the damaged record on (decoding them gives the same error, or a cut
    /// record where the error is the zlib stream's).
    pub(crate) fn next_raw(&mut self) -> Option<RawRecord<'_>> {
        match self.next_record().map(|r| r.map(|_| ())) {
            None => None,
            Some(Ok(())) => Some(Ok(&self.buf[self.pos - self.last_len..self.pos])),
            Some(Err(e)) => Some(Err((e, &self.buf[self.pos..]))),
        }
    }
}

/// A record's bytes, or the error and the window's bytes from the damaged record on.
pub(crate) type RawRecord<'a> = Result<&'a [u8], (Error, &'a [u8])>;
