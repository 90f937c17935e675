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
        match self.records {
            TraceRecords::Plain(r) => r.len(),
            TraceRecords::DataCentric(r) => r.len(),
        }
    }

    /// True when there is no complete record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i`.
    pub fn get(&self, i: usize) -> Option<TraceRecord> {
        match self.records {
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
