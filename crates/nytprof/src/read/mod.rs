//! Readers: a view over a whole file in memory ([`parse`], [`File`]) and a streaming reader over
//! any `io::Read` ([`Reader`]). Both yield the same typed [`Record`]s, inflating transparently
//! after the `z` tag (nytprof-v5.md, "zlib").

mod ahead;
mod record;
mod stream;
mod zlib;

pub(crate) use ahead::with_inflate_ahead;
pub use record::{Header, Line, Record, Str, decode_text};
pub(crate) use record::{atoi, decode, decode_header, sub_return_at, varint_at};
pub use stream::{MAX_RECORD_RATIO, Reader, Trailing};
pub(crate) use zlib::trailer_text_len;

use std::cell::OnceCell;

use profcodec_common::Cursor;

use crate::error::Error;
use crate::raw;

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
    /// Why inflation stopped before the end of the zlib stream, if it did: the zlib stream's
    /// damage, a zlib bomb, or the first damaged record (whose bytes end `bytes`).
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
    ///
    /// The records borrow the file, so for a compressed file the whole zlib stream is inflated
    /// into memory when iteration reaches `z` (it stops at the first damaged record, see
    /// [`MAX_RECORD_RATIO`]). To read a large compressed file in bounded memory use
    /// [`File::reader`].
    pub fn records(&self) -> Records<'_> {
        Records {
            file: self,
            cursor: Cursor::new(&self.data[self.body_start..], self.body_start as u64),
            compressed: false,
            pending: None,
            done: false,
            stop_at_deflate: false,
        }
    }

    /// The records of the uncompressed part: up to and including `z`, without inflating what
    /// follows (for a file without `z`, every record).
    pub fn plain_records(&self) -> Records<'_> {
        Records {
            stop_at_deflate: true,
            ..self.records()
        }
    }

    /// The same records through a streaming [`Reader`] over the file's bytes: after `z` the
    /// zlib stream is inflated a 64 KiB window at a time and parsed as it comes, so memory stays
    /// near the largest record whatever the stream inflates to, and damage is reported as soon
    /// as its record is inflated.
    ///
    /// ```
    /// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out")).unwrap();
    /// let file = profcodec_nytprof::parse(&bytes).unwrap();
    /// let mut reader = file.reader();
    /// let mut statements = 0;
    /// while let Some(record) = reader.next_record() {
    ///     if let profcodec_nytprof::Record::TimeLine { .. } = record.unwrap() {
    ///         statements += 1;
    ///     }
    /// }
    /// assert!(statements > 0);
    /// ```
    pub fn reader(&self) -> Reader<&'a [u8]> {
        Reader::resume(
            &self.data[self.body_start..],
            self.body_start as u64,
            self.header,
        )
    }

    /// Decodes every record, proving the whole file readable.
    pub fn validate(&self) -> Result<(), Error> {
        self.records().try_for_each(|r| r.map(|_| ()))
    }

    /// The compressed part, inflated, when the file has a `z` record at file offset `z_at`.
    fn inflate_after(&self, z_at: usize) -> &Inflated {
        self.inflated
            .get_or_init(|| inflate(self.data, z_at + 1, self.header))
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

/// Inflates the zlib stream starting at file offset `start` (FileHandle.xs `inflateInit2(15)`):
/// it stops at the stream's end, so bytes after it (the plain-text trailer) are left alone.
///
/// The records are taken from a streaming [`Reader`] as it inflates (on a second thread, ahead of
/// the parsing, where there are two cores), so inflation stops at the first damaged record (a stream of zeros fails at its first byte, not after inflating
/// everything) with the same bounds and the same errors as the [`Reader`]. Memory is the
/// inflated size of the readable records.
fn inflate(data: &[u8], start: usize, header: Header<'_>) -> Inflated {
    let input = &data[start.min(data.len())..];
    with_inflate_ahead(input, start as u64, true, |ahead| {
        let mut reader = Reader::after_deflate_ahead(input, start as u64 - 1, header, ahead);
        let mut out = Vec::new();
        let mut error = None;
        loop {
            match reader.next_raw() {
                None => break,
                Some(Ok(bytes)) => out.extend_from_slice(bytes),
                Some(Err((e, rest))) => {
                    // The iterator decodes the same bytes and meets the same damage; an error
                    // the bytes do not show (the zlib stream's) comes when they run out.
                    out.extend_from_slice(rest);
                    error = Some(e);
                    break;
                }
            }
        }
        out.shrink_to_fit();
        Inflated {
            consumed: (reader.input_offset() as usize).saturating_sub(start),
            bytes: out,
            start,
            error,
        }
    })
}

/// Iterator over the records of a [`File`].
#[derive(Debug)]
pub struct Records<'a> {
    file: &'a File<'a>,
    cursor: Cursor<'a>,
    compressed: bool,
    pending: Option<Error>,
    done: bool,
    stop_at_deflate: bool,
}

impl<'a> Records<'a> {
    /// The bytes from the next record on, for the model loader's own loop over the runs of
    /// records that make up most of a profile; empty once the iterator has ended.
    /// [`Records::advance`] consumes what that loop read.
    #[inline]
    pub(crate) fn bulk(&self) -> &'a [u8] {
        if self.done { &[] } else { self.cursor.rest() }
    }

    /// Consumes the first `n` bytes of [`Records::bulk`], which the caller read as whole
    /// records.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        // Within `bulk()`, so the skip cannot fail.
        let _ = self.cursor.skip(n, "records");
    }

    /// Fast path for `<` records when the call paths are built: when the next record is a
    /// complete, well-formed `<` record, consumes it and returns its depth, inclusive and
    /// exclusive ticks, name bytes and whether the name is UTF-8.
    #[inline]
    pub(crate) fn next_sub_return(&mut self) -> Option<(u32, f64, f64, &'a [u8], bool)> {
        let rest = self.cursor.rest();
        let (fields, used) = record::sub_return_at(rest, self.done)?;
        self.cursor.skip(used, "SUB_RETURN").ok()?;
        Some(fields)
    }

    /// Fast path for `<` records, which the model loader ignores: when the next record is a
    /// complete, well-formed `<` record, consumes it and returns true.
    #[inline]
    pub(crate) fn skip_sub_return(&mut self) -> bool {
        let rest = self.cursor.rest();
        if self.done || rest.len() < 32 || rest[0] != raw::tag::SUB_RETURN {
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
        self.cursor.skip(i + len, "SUB_RETURN").is_ok()
    }

    /// Fast path for `S` records whose text the caller does not keep: when the next record is
    /// a complete, well-formed `S` record and `skip(fid)` is true for its fid, consumes it and
    /// returns true.
    #[inline]
    pub(crate) fn skip_src_line(&mut self, skip: impl FnOnce(u32) -> bool) -> bool {
        match record::src_line_at(self.cursor.rest(), self.done) {
            Some((fid, used)) if skip(fid) => self.cursor.skip(used, "SRC_LINE").is_ok(),
            _ => false,
        }
    }

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
            Ok(Record::StartDeflate) if self.stop_at_deflate => {
                self.done = true;
                Some(Ok(Record::StartDeflate))
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
