//! Reading a database file without holding it: its head (the file header and the sections it
//! points at, [`FileHead`]) in memory, and trace lines streamed from an [`io::Read`] in chunks
//! ([`TraceReader`]), so that a multi-gigabyte trace.db or profile.db costs memory by its
//! number of profiles and trace lines, not by its size.

use std::io::{self, Read, Seek, SeekFrom};

use zerocopy::FromBytes;

use crate::Error;
use crate::raw::{FOOTER_SIZE, FileKind, TraceElem};

use super::bytes::Bytes;
use super::profile::ProfileDb;
use super::trace::TraceDb;

/// The head of a database file: every byte from the start to the end of the last section the
/// file header points at (profile.db: the profile infos and identifier tuples; trace.db: the
/// trace headers), the file's length and its footer. [`ProfileDb::from_head`] and
/// [`TraceDb::from_head`] view it with every check of `parse`; a read past the head (a value
/// block, a trace line) is [`Error::NotRead`].
#[derive(Debug, Clone)]
pub struct FileHead {
    kind: FileKind,
    data: Vec<u8>,
    len: u64,
    footer: [u8; FOOTER_SIZE],
}

impl FileHead {
    /// Reads the head of a `kind` file from `reader`. Memory: the head (a section the header
    /// points past the end of the file is cut at the end, and `parse` reports it).
    pub fn read<R: Read + Seek>(kind: FileKind, reader: &mut R) -> Result<FileHead, Error> {
        let io = |e: io::Error| Error::io(Some(kind), &e);
        let len = reader.seek(SeekFrom::End(0)).map_err(io)?;
        let header_size = kind.header_size() as u64;
        let mut footer = [0u8; FOOTER_SIZE];
        if len >= FOOTER_SIZE as u64 {
            reader
                .seek(SeekFrom::Start(len - FOOTER_SIZE as u64))
                .map_err(io)?;
            reader.read_exact(&mut footer).map_err(io)?;
        }
        let mut data = Vec::new();
        reader.seek(SeekFrom::Start(0)).map_err(io)?;
        reader
            .by_ref()
            .take(header_size.min(len))
            .read_to_end(&mut data)
            .map_err(io)?;
        // The {size, pointer} pairs after the 16-byte common header: the sections.
        let mut end = data.len() as u64;
        for pair in data.get(16..).unwrap_or_default().chunks_exact(16) {
            let word = |i: usize| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&pair[i..i + 8]);
                u64::from_le_bytes(w)
            };
            end = end.max(word(8).saturating_add(word(0)));
        }
        let end = end
            .min(len.saturating_sub(FOOTER_SIZE as u64))
            .max(data.len() as u64);
        reader
            .by_ref()
            .take(end - data.len() as u64)
            .read_to_end(&mut data)
            .map_err(io)?;
        Ok(FileHead {
            kind,
            data,
            len,
            footer,
        })
    }

    /// Which file this is the head of.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The bytes read.
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// The length of the whole file.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    pub(crate) fn bytes(&self) -> Bytes<'_> {
        if self.data.len() as u64 == self.len {
            return Bytes::new(&self.data, self.kind);
        }
        Bytes::head(&self.data, self.kind, self.len, self.footer)
    }
}

impl<'a> ProfileDb<'a> {
    /// A view of profile.db's head: its profiles' identifier tuples and flags without the value
    /// blocks (those are [`Error::NotRead`]).
    pub fn from_head(head: &'a FileHead) -> Result<Self, Error> {
        Self::parse_bytes(head.bytes())
    }
}

impl<'a> TraceDb<'a> {
    /// A view of trace.db's head: its trace headers without the elements ([`TraceReader`]
    /// streams those).
    pub fn from_head(head: &'a FileHead) -> Result<Self, Error> {
        Self::parse_bytes(head.bytes())
    }
}

/// A trace.db read line by line from an [`io::Read`]: the head in memory, each line's elements
/// streamed in chunks of a fixed size, with the checks of [`TraceDb::validate`]: no two lines
/// share bytes ([`TraceDb::check_overlaps`], in [`TraceReader::new`], so that reading every
/// line reads each byte of the file once), and per line those of [`TraceDb::validate_trace`]
/// (elements inside the file, timestamps non-decreasing and within the file's range).
///
/// ```no_run
/// use profcodec_hpctoolkit::read::TraceReader;
///
/// let mut traces = TraceReader::new(std::fs::File::open("db/trace.db")?)?;
/// for i in 0..traces.view().trace_count() {
///     let mut line = traces.line(i)?;
///     let mut samples = 0;
///     while let Some(chunk) = line.next_chunk()? {
///         samples += chunk.len();
///     }
///     println!("line {i}: {samples} samples");
/// }
/// # Ok::<(), profcodec_hpctoolkit::Error>(())
/// ```
#[derive(Debug)]
pub struct TraceReader<R> {
    reader: R,
    head: FileHead,
    buffer: Vec<u8>,
}

/// Elements read per chunk: 64 Ki elements, 768 KiB.
const CHUNK_ELEMS: usize = 1 << 16;

impl<R: Read + Seek> TraceReader<R> {
    /// Reads and checks the head of the trace.db `reader` holds, and that its lines do not
    /// overlap ([`TraceDb::check_overlaps`], [`Error::Overlap`]): aliased lines would make a
    /// pass over every line read the shared bytes once per alias.
    pub fn new(mut reader: R) -> Result<Self, Error> {
        let head = FileHead::read(FileKind::Trace, &mut reader)?;
        TraceDb::from_head(&head)?.check_overlaps()?;
        Ok(TraceReader {
            reader,
            head,
            buffer: Vec::new(),
        })
    }

    /// The view of the head: timestamps range, trace count, trace headers.
    pub fn view(&self) -> TraceDb<'_> {
        // Checked in `new`.
        TraceDb::from_head(&self.head).unwrap_or_else(|_| unreachable!("checked in new"))
    }

    /// Starts reading trace `index` (its position in the trace headers).
    pub fn line(&mut self, index: u32) -> Result<TraceLine<'_, R>, Error> {
        let view = TraceDb::from_head(&self.head)?;
        let (p_start, count) = view.line_extent(index)?;
        let (min, max) = (view.min_timestamp(), view.max_timestamp());
        let prof_index = view.trace_header(index)?.prof_index;
        self.reader
            .seek(SeekFrom::Start(p_start))
            .map_err(|e| Error::io(Some(FileKind::Trace), &e))?;
        Ok(TraceLine {
            reader: &mut self.reader,
            buffer: &mut self.buffer,
            prof_index,
            next: p_start,
            left: count,
            previous: min,
            max,
        })
    }
}

/// One trace line being read ([`TraceReader::line`]).
#[derive(Debug)]
pub struct TraceLine<'r, R> {
    reader: &'r mut R,
    buffer: &'r mut Vec<u8>,
    prof_index: u32,
    /// File offset of the next element.
    next: u64,
    left: u64,
    previous: u64,
    max: u64,
}

impl<R: Read> TraceLine<'_, R> {
    /// The `profIndex` of the line.
    pub fn prof_index(&self) -> u32 {
        self.prof_index
    }

    /// Elements not read yet.
    pub fn remaining(&self) -> u64 {
        self.left
    }

    /// The next chunk of elements (at most 64 Ki), `None` at the end of the line.
    pub fn next_chunk(&mut self) -> Result<Option<&[TraceElem]>, Error> {
        if self.left == 0 {
            return Ok(None);
        }
        let n = self.left.min(CHUNK_ELEMS as u64) as usize;
        self.buffer.resize(n * TraceElem::SIZE, 0);
        self.reader.read_exact(self.buffer).map_err(|e| {
            if e.kind() == io::ErrorKind::UnexpectedEof {
                Error::Truncated {
                    file: FileKind::Trace,
                    field: "CTH.pEnd",
                    offset: self.next,
                    needed: (n * TraceElem::SIZE) as u64,
                    available: 0,
                }
            } else {
                Error::io(Some(FileKind::Trace), &e)
            }
        })?;
        let elems = <[TraceElem]>::ref_from_bytes(self.buffer).map_err(|_| Error::Invalid {
            file: FileKind::Trace,
            field: "CTH.pStart",
            offset: self.next,
            expected: "whole elements",
            found: self.buffer.len() as u64,
        })?;
        // The fast pass collects one flag; the exact pass names the first fault.
        let mut ok = true;
        let mut prev = self.previous;
        for e in elems {
            let ts = e.timestamp();
            ok &= ts >= prev;
            prev = ts;
        }
        if !ok || prev > self.max {
            let mut prev = self.previous;
            for (k, e) in elems.iter().enumerate() {
                let at = self.next + (k * TraceElem::SIZE) as u64;
                let ts = e.timestamp();
                if ts < prev {
                    return Err(Error::Unsorted {
                        file: FileKind::Trace,
                        field: "Elem.timestamp",
                        offset: at,
                        previous: prev,
                        found: ts,
                    });
                }
                if ts > self.max {
                    return Err(Error::Invalid {
                        file: FileKind::Trace,
                        field: "Elem.timestamp",
                        offset: at,
                        expected: "a timestamp at or before maxTimestamp",
                        found: ts,
                    });
                }
                prev = ts;
            }
        }
        self.previous = prev;
        self.left -= n as u64;
        self.next += (n * TraceElem::SIZE) as u64;
        Ok(Some(elems))
    }
}
