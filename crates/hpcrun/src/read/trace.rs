//! `.hpctrace` (`crate::format`, ".hpctrace 01.01b"; hpcrun-fmt.c, `hpctrace_fmt_hdr_fread`,
//! `hpctrace_fmt_datum_fread`): a 24-byte magic, u64 flags (01.01 only), then fixed-size
//! big-endian records to the end of the file.

use profcodec_common::{Cursor, Truncated};
use zerocopy::FromBytes;

use crate::Error;
use crate::model::{Trace, TraceRecord, TraceVersion};
use crate::raw::{self, TraceRecordDcRaw, TraceRecordRaw};

/// The records of a trace, borrowed from the input.
#[derive(Debug, Clone, Copy)]
pub enum TraceRecords<'a> {
    /// (time, ctx) records.
    Plain(&'a [TraceRecordRaw]),
    /// (time, ctx, metric) records of a data-centric trace.
    DataCentric(&'a [TraceRecordDcRaw]),
}

/// A trace file, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct TraceView<'a> {
    /// The version.
    pub version: TraceVersion,
    /// Header flags (0 in 01.00).
    pub flags: u64,
    /// Every complete record.
    pub records: TraceRecords<'a>,
    /// Offset of the first record.
    pub records_offset: u64,
    /// Bytes after the last complete record (a record cut short; empty in an intact file).
    pub tail: &'a [u8],
}

impl<'a> TraceView<'a> {
    /// Reads the header and views the records. A cut final record is not an error here: it is
    /// left in [`TraceView::tail`] and reported by [`TraceView::validate`], so that a truncated
    /// trace still yields every complete record.
    ///
    /// O(1) time and no allocation: the records are a view of the input. A trace has no end
    /// marker, so no byte after the header can be trailing data: the bytes after the last whole
    /// record are a record cut short.
    pub fn parse(data: &'a [u8]) -> Result<Self, Error> {
        let mut c = Cursor::new(data, 0);
        let magic = c.bytes(18, "magic").map_err(|_| super::bad_magic(data))?;
        if magic != raw::TRACE_PREFIX {
            return Err(super::bad_magic(data));
        }
        let version = match c.bytes(6, "trace version")? {
            b"01.00b" => TraceVersion::V0100B,
            b"01.01b" => TraceVersion::V0101B,
            v => return Err(super::unsupported(18, v)),
        };
        let flags = if version == TraceVersion::V0101B {
            c.u64_be("trace flags")?
        } else {
            0
        };
        let records_offset = c.offset();
        let rest = c.rest();
        let dc = version == TraceVersion::V0101B && flags & raw::TRACE_FLAG_DATA_CENTRIC != 0;
        let size = if dc { 16 } else { 12 };
        let whole = rest.len() / size * size;
        let (body, tail) = rest.split_at(whole);
        let bad = Error::bad(
            records_offset,
            "trace records",
            "whole records",
            whole as u64,
        );
        let records = if dc {
            TraceRecords::DataCentric(<[TraceRecordDcRaw]>::ref_from_bytes(body).map_err(|_| bad)?)
        } else {
            TraceRecords::Plain(<[TraceRecordRaw]>::ref_from_bytes(body).map_err(|_| bad)?)
        };
        Ok(TraceView {
            version,
            flags,
            records,
            records_offset,
            tail,
        })
    }

    /// Number of complete records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there is no complete record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<TraceRecord> {
        self.records.get(i)
    }

    /// Every complete record, then the truncation error if the last record was cut short.
    pub fn iter(&self) -> impl Iterator<Item = Result<TraceRecord, Error>> + '_ {
        (0..self.len())
            .filter_map(|i| self.get(i).map(Ok))
            .chain(self.validate().err().map(Err))
    }

    /// Checks that no record is cut short.
    pub fn validate(&self) -> Result<(), Error> {
        if self.tail.is_empty() {
            return Ok(());
        }
        let record = match self.records {
            TraceRecords::Plain(_) => 12,
            TraceRecords::DataCentric(_) => 16,
        };
        Err(Error::Truncated(Truncated {
            offset: self.records_offset + (self.len() * record) as u64,
            what: "trace record",
            needed: record as u64,
            available: self.tail.len() as u64,
        }))
    }

    /// The owned trace (fails on a record cut short).
    pub fn to_model(&self) -> Result<Trace, Error> {
        self.validate()?;
        Ok(Trace {
            version: self.version,
            flags: self.flags,
            records: match self.records {
                TraceRecords::Plain(r) => r
                    .iter()
                    .map(|r| TraceRecord {
                        time: r.time.get(),
                        ctx: r.ctx.get(),
                        metric: None,
                    })
                    .collect(),
                TraceRecords::DataCentric(r) => r
                    .iter()
                    .map(|r| TraceRecord {
                        time: r.time.get(),
                        ctx: r.ctx.get(),
                        metric: Some(r.metric.get()),
                    })
                    .collect(),
            },
        })
    }
}

/// Reads a trace file into the owned model.
pub fn read_trace(data: &[u8]) -> Result<Trace, Error> {
    TraceView::parse(data)?.to_model()
}

/// A trace file read from an [`std::io::Read`] in chunks of records, so that a trace of any
/// size costs one chunk of memory (64 Ki records); [`TraceView`] is the same over bytes in
/// memory.
///
/// ```
/// # let bytes = profcodec_hpcrun::write_trace(&profcodec_hpcrun::Trace::default());
/// let mut trace = profcodec_hpcrun::TraceStream::new(&bytes[..])?;
/// let mut samples = 0;
/// while let Some(records) = trace.next_chunk()? {
///     samples += records.len();
/// }
/// assert_eq!(samples, 0);
/// # Ok::<(), profcodec_hpcrun::Error>(())
/// ```
#[derive(Debug)]
pub struct TraceStream<R> {
    reader: R,
    version: TraceVersion,
    flags: u64,
    data_centric: bool,
    buffer: Vec<u8>,
    /// Offset of the next record.
    next: u64,
    /// The bytes of a record cut short at the end of the input, reported after the records
    /// before it.
    cut: Option<usize>,
    done: bool,
}

/// Records read per chunk.
const CHUNK_RECORDS: usize = 1 << 16;

impl<R: std::io::Read> TraceStream<R> {
    /// Reads the header (magic, version, flags) with the checks of [`TraceView::parse`].
    pub fn new(mut reader: R) -> Result<Self, Error> {
        let mut head = [0u8; 32];
        let mut n = fill(&mut reader, &mut head[..24], 0)?;
        if n == 24 && &head[18..24] == b"01.01b" {
            n += fill(&mut reader, &mut head[24..32], 24)?;
        }
        let view = TraceView::parse(&head[..n])?;
        Ok(TraceStream {
            reader,
            version: view.version,
            flags: view.flags,
            data_centric: matches!(view.records, TraceRecords::DataCentric(_)),
            buffer: Vec::new(),
            next: view.records_offset,
            cut: None,
            done: false,
        })
    }

    /// The version.
    pub fn version(&self) -> TraceVersion {
        self.version
    }

    /// Header flags (0 in 01.00).
    pub fn flags(&self) -> u64 {
        self.flags
    }

    /// The next records (at most 64 Ki), `None` at the end of the input; a record cut short at
    /// the end is [`Error::Truncated`], reported after every complete record before it.
    pub fn next_chunk(&mut self) -> Result<Option<TraceRecords<'_>>, Error> {
        let size = if self.data_centric { 16 } else { 12 };
        if let Some(available) = self.cut.take() {
            self.done = true;
            return Err(Error::Truncated(Truncated {
                offset: self.next,
                what: "trace record",
                needed: size as u64,
                available: available as u64,
            }));
        }
        if self.done {
            return Ok(None);
        }
        self.buffer.resize(CHUNK_RECORDS * size, 0);
        let n = fill(&mut self.reader, &mut self.buffer, self.next)?;
        let whole = n / size * size;
        if n < self.buffer.len() {
            self.done = true;
            if whole != n {
                self.cut = Some(n - whole);
            }
        }
        if whole == 0 {
            return self.next_chunk();
        }
        let body = &self.buffer[..whole];
        let at = self.next;
        self.next += whole as u64;
        let bad = || Error::bad(at, "trace records", "whole records", whole as u64);
        Ok(Some(if self.data_centric {
            TraceRecords::DataCentric(
                <[TraceRecordDcRaw]>::ref_from_bytes(body).map_err(|_| bad())?,
            )
        } else {
            TraceRecords::Plain(<[TraceRecordRaw]>::ref_from_bytes(body).map_err(|_| bad())?)
        }))
    }
}

/// Reads until `buf` is full or the input ends; the number of bytes read (`offset`: where in the
/// file `buf` starts, for the error).
fn fill<R: std::io::Read>(reader: &mut R, buf: &mut [u8], offset: u64) -> Result<usize, Error> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::Io {
                    offset: offset + n as u64,
                    kind: e.kind(),
                });
            }
        }
    }
    Ok(n)
}

impl TraceRecords<'_> {
    /// The number of records.
    pub fn len(&self) -> usize {
        match self {
            TraceRecords::Plain(r) => r.len(),
            TraceRecords::DataCentric(r) => r.len(),
        }
    }

    /// True when there is no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<TraceRecord> {
        match self {
            TraceRecords::Plain(r) => r.get(i).map(|r| TraceRecord {
                time: r.time.get(),
                ctx: r.ctx.get(),
                metric: None,
            }),
            TraceRecords::DataCentric(r) => r.get(i).map(|r| TraceRecord {
                time: r.time.get(),
                ctx: r.ctx.get(),
                metric: Some(r.metric.get()),
            }),
        }
    }

    /// Every record (time and ctx; the metric of a data-centric trace).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TraceRecord> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }
}
