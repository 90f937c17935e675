//! The streaming reader over any `io::Read`: memory stays near the largest record, whatever the
//! file's size (the whole input is never held).

use std::io::{ErrorKind, Read};

use flate2::{Decompress, FlushDecompress, Status};
use profcodec_common::Cursor;

use super::record::{Record, decode, decode_header};
use crate::error::Error;

const CHUNK: usize = 64 * 1024;

/// Reads records one at a time from an `io::Read`, inflating after `z`.
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
    inflate: Option<Decompress>,
    /// No more decoded bytes will come.
    eof: bool,
    pending: Option<Error>,
    done: bool,
    major: u32,
    minor: u32,
    header_line: Vec<u8>,
    compressed_offset: u64,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the version line.
    pub fn new(src: R) -> Result<Self, Error> {
        let mut r = Reader {
            src,
            src_eof: false,
            raw: Vec::new(),
            raw_pos: 0,
            buf: Vec::new(),
            pos: 0,
            base: 0,
            inflate: None,
            eof: false,
            pending: None,
            done: false,
            major: 0,
            minor: 0,
            header_line: Vec::new(),
            compressed_offset: 0,
        };
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

    /// The major and minor version.
    pub fn version(&self) -> (u32, u32) {
        (self.major, self.minor)
    }

    /// The version line as written, with its `\n`.
    pub fn header_line(&self) -> &[u8] {
        &self.header_line
    }

    /// Offset of the next record in the uncompressed stream.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn io_error(&self, kind: ErrorKind) -> Error {
        Error::Io {
            offset: self.base + self.buf.len() as u64,
            kind,
        }
    }

    fn read_src(&mut self, into: &mut Vec<u8>) -> Result<usize, Error> {
        let old = into.len();
        into.resize(old + CHUNK, 0);
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
        let Some(mut d) = self.inflate.take() else {
            let mut buf = std::mem::take(&mut self.buf);
            let n = self.read_src(&mut buf);
            self.buf = buf;
            if n? == 0 {
                self.eof = true;
            }
            return Ok(());
        };
        let result = self.fill_inflated(&mut d);
        self.inflate = Some(d);
        result
    }

    fn fill_inflated(&mut self, d: &mut Decompress) -> Result<(), Error> {
        let start_len = self.buf.len();
        while self.buf.len() == start_len {
            if self.raw_pos == self.raw.len() && !self.src_eof {
                self.raw.clear();
                self.raw_pos = 0;
                let mut raw = std::mem::take(&mut self.raw);
                let n = self.read_src(&mut raw);
                self.raw = raw;
                n?;
            }
            self.buf.reserve(CHUNK);
            let before_in = d.total_in();
            let status = d.decompress_vec(
                &self.raw[self.raw_pos..],
                &mut self.buf,
                FlushDecompress::None,
            );
            self.raw_pos += (d.total_in() - before_in) as usize;
            let at = self.compressed_offset + d.total_in();
            match status {
                Ok(Status::StreamEnd) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(_) => {
                    let stalled = self.buf.len() == start_len && d.total_in() == before_in;
                    if stalled && !(self.src_eof && self.raw_pos == self.raw.len()) {
                        // Input left but no progress: not an intact stream; never loop on it.
                        if self.raw_pos < self.raw.len() {
                            self.eof = true;
                            self.pending = Some(Error::Inflate {
                                offset: at,
                                problem: "corrupt deflate data",
                            });
                            return Ok(());
                        }
                    }
                    if stalled && self.src_eof && self.raw_pos == self.raw.len() {
                        self.eof = true;
                        self.pending = Some(Error::Inflate {
                            offset: at,
                            problem: "a stream cut short",
                        });
                        return Ok(());
                    }
                }
                Err(_) => {
                    self.eof = true;
                    self.pending = Some(Error::Inflate {
                        offset: at,
                        problem: "corrupt deflate data",
                    });
                    return Ok(());
                }
            }
        }
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
        self.inflate = Some(Decompress::new(true));
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
                    if self.inflate.is_some() {
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
                    return Some(Err(match (self.pending.take(), e) {
                        (Some(p), Error::Truncated(_)) => p,
                        _ => e,
                    }));
                }
            }
        }
        let mut c = Cursor::new(&self.buf[self.pos..], self.base + self.pos as u64);
        let record = decode(&mut c);
        self.pos += c.position();
        Some(record)
    }
}
