//! Readers: a view over a whole file in memory ([`parse`], [`File`]) and a streaming reader over
//! any `io::Read` ([`Reader`]). Both yield the same typed [`Record`]s, inflating transparently
//! after the `z` tag (nytprof-v5.md, "zlib").

mod record;
mod stream;

pub use record::{Header, Line, Record, Str, decode_text};
pub(crate) use record::{atoi, decode, decode_header};
pub use stream::Reader;

use std::cell::OnceCell;

use flate2::{Decompress, FlushDecompress, Status};
use profcodec_common::Cursor;

use crate::error::Error;

/// A NYTProf file in memory: the header is checked; records are decoded on iteration.
#[derive(Debug)]
pub struct File<'a> {
    header: Header<'a>,
    data: &'a [u8],
    body_start: usize,
    inflated: OnceCell<Inflated>,
}

/// The decompressed part of a compressed file.
#[derive(Debug, Clone)]
pub struct Inflated {
    /// The inflated record stream.
    pub bytes: Vec<u8>,
    /// File offset of the first zlib byte (just after `z`).
    pub start: usize,
    /// How many compressed bytes the zlib stream took.
    pub consumed: usize,
    /// Why inflation stopped before the end of the zlib stream, if it did.
    pub error: Option<Error>,
}

/// Checks the version line and returns a view of the file; O(header).
///
/// ```
/// let bytes = b"NYTProf 5 0\n:ticks_per_sec=1000000\n-";
/// let file = profcodec_nytprof::parse(bytes).unwrap();
/// assert_eq!(file.header().major, 5);
/// assert_eq!(file.records().count(), 2);
/// ```
pub fn parse(data: &[u8]) -> Result<File<'_>, Error> {
    let mut c = Cursor::new(data, 0);
    let header = decode_header(&mut c)?;
    Ok(File {
        header,
        data,
        body_start: c.position(),
        inflated: OnceCell::new(),
    })
}

impl<'a> File<'a> {
    /// The version line.
    pub fn header(&self) -> Header<'a> {
        self.header
    }

    /// The whole input.
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// The records, in file order; after an error the iterator ends.
    pub fn records(&self) -> Records<'_> {
        Records {
            file: self,
            cursor: Cursor::new(&self.data[self.body_start..], self.body_start as u64),
            compressed: false,
            pending: None,
            done: false,
        }
    }

    /// Decodes every record, proving the whole file readable.
    pub fn validate(&self) -> Result<(), Error> {
        self.records().try_for_each(|r| r.map(|_| ()))
    }

    /// The compressed part, inflated, when the file has a `z` record at file offset `z_at`.
    fn inflate_after(&self, z_at: usize) -> &Inflated {
        self.inflated.get_or_init(|| inflate(self.data, z_at + 1))
    }

    /// The inflated stream and the bytes after the zlib stream, when the file is compressed and
    /// every record before `z` is readable.
    pub fn compressed_part(&self) -> Option<(&Inflated, &'a [u8])> {
        if self.inflated.get().is_none() {
            // Walk the records up to `z` (the iterator inflates there).
            for r in self.records() {
                match r {
                    Ok(Record::StartDeflate) => break,
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        }
        let inf = self.inflated.get()?;
        let end = (inf.start + inf.consumed).min(self.data.len());
        Some((inf, &self.data[end..]))
    }
}

/// Inflates the zlib stream starting at `start` (FileHandle.xs `inflateInit2(15)`): it stops at
/// the stream's end, so bytes after it (the plain-text trailer) are left alone.
fn inflate(data: &[u8], start: usize) -> Inflated {
    let input = &data[start.min(data.len())..];
    let mut d = Decompress::new(true);
    // Start near a typical ratio; the vector grows by doubling after that.
    let mut out: Vec<u8> = Vec::with_capacity(input.len().saturating_mul(4).min(1 << 26));
    let mut error = None;
    loop {
        if out.capacity() - out.len() < 64 * 1024 {
            out.reserve(out.capacity().max(64 * 1024));
        }
        let before_in = d.total_in() as usize;
        let before_out = d.total_out();
        let status = d.decompress_vec(&input[before_in..], &mut out, FlushDecompress::None);
        let consumed = d.total_in() as usize;
        match status {
            Ok(Status::StreamEnd) => break,
            Ok(_) => {
                let progress = consumed != before_in || d.total_out() != before_out;
                if !progress {
                    // No progress with input left cannot happen with an intact stream; never
                    // loop on it.
                    let problem = if consumed >= input.len() {
                        "a stream cut short"
                    } else {
                        "corrupt deflate data"
                    };
                    error = Some(Error::Inflate {
                        offset: (start + consumed) as u64,
                        problem,
                    });
                    break;
                }
            }
            Err(e) => {
                let problem = match e.message() {
                    Some("incorrect header check") => "an incorrect header check",
                    Some("invalid stored block lengths") => "invalid stored block lengths",
                    Some("incorrect data check") => "an incorrect data check",
                    _ => "corrupt deflate data",
                };
                error = Some(Error::Inflate {
                    offset: (start + consumed) as u64,
                    problem,
                });
                break;
            }
        }
    }
    Inflated {
        consumed: d.total_in() as usize,
        bytes: out,
        start,
        error,
    }
}

/// Iterator over the records of a [`File`].
#[derive(Debug)]
pub struct Records<'a> {
    file: &'a File<'a>,
    cursor: Cursor<'a>,
    compressed: bool,
    pending: Option<Error>,
    done: bool,
}

impl<'a> Records<'a> {
    /// Absolute offset of the next record in the uncompressed stream (the file offset before
    /// `z`; after it, the `z` offset plus one plus the inflated position).
    pub fn offset(&self) -> u64 {
        self.cursor.offset()
    }

    /// True when the records come from the inflated part.
    pub fn is_compressed(&self) -> bool {
        self.compressed
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, Error>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.cursor.is_empty() {
            self.done = true;
            return self.pending.take().map(Err);
        }
        match decode(&mut self.cursor) {
            Ok(Record::StartDeflate) if self.compressed => {
                self.done = true;
                Some(Err(Error::Inflate {
                    offset: self.cursor.offset() - 1,
                    problem: "a second START_DEFLATE inside the zlib stream",
                }))
            }
            Ok(Record::StartDeflate) => {
                let z_end = self.cursor.offset() as usize;
                let inf = self.file.inflate_after(z_end - 1);
                self.cursor = Cursor::new(&inf.bytes, z_end as u64);
                self.compressed = true;
                self.pending = inf.error;
                Some(Ok(Record::StartDeflate))
            }
            Ok(r) => Some(Ok(r)),
            Err(e) => {
                self.done = true;
                // A record cut by a damaged zlib stream is reported as the zlib damage.
                Some(Err(match (self.pending.take(), e) {
                    (Some(p), Error::Truncated(_)) => p,
                    _ => e,
                }))
            }
        }
    }
}
