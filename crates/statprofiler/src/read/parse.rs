//! Parsing one record of the logical stream from a window of decompressed bytes
//! (the crate docs, "Primitives", "Header", "Body records").
//!
//! Records span packets, so a record may be cut by the end of the window. The parser then stops
//! with [`Stop::Short`], saying which field needs how many bytes at which position; the reader
//! decompresses packets until that many bytes are there and parses the record again. Knowing the
//! exact need (a string's stated length, not just "one more packet") keeps a long record linear.
//!
//! Strings are returned as [`Span`]s (absolute stream offsets), not slices, so a record can be
//! kept across later window moves by the trace reader and resolved when needed.

use crate::model::{Frame, PerlVersion, ProcessId, Record};
use crate::raw::{ID_LEN, MAX_VARINT_LEN, tag};

/// A string or payload in the logical stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Span {
    /// The flag byte (0 for payloads).
    pub(crate) flags: u8,
    /// Absolute stream offset of the first byte.
    pub(crate) start: u64,
    /// Length in bytes.
    pub(crate) len: u32,
}

/// Why a record could not be parsed from the window.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    /// The window ends inside `what`, which starts at window index `at` and needs `needed` bytes.
    Short {
        what: &'static str,
        at: usize,
        needed: u64,
    },
    /// A varint longer than 5 bytes starts at `at`.
    Long { what: &'static str, at: usize },
}

pub(crate) type SpanRecord = Record<Span, Span>;

/// A header record (the crate docs, Header).
#[derive(Debug, Clone, Copy)]
pub(crate) enum HeaderRecord {
    PerlVersion(PerlVersion),
    TickDuration(u32),
    StackDepth(u32),
    Genealogy {
        ordinal: u32,
        parent_ordinal: u32,
        id: ProcessId,
        parent_id: ProcessId,
    },
    Metadata(Span, Span),
    End,
    /// A tag the reader refuses.
    Bad(u8),
}

struct P<'b> {
    b: &'b [u8],
    i: usize,
    base: u64,
}

impl P<'_> {
    #[inline(always)]
    fn u8(&mut self, what: &'static str) -> Result<u8, Stop> {
        match self.b.get(self.i) {
            Some(&v) => {
                self.i += 1;
                Ok(v)
            }
            None => Err(Stop::Short {
                what,
                at: self.i,
                needed: 1,
            }),
        }
    }

    /// Big-endian base-128 (T:315-330): each byte adds 7 low bits; bits shifted past 32 are lost,
    /// as in the reader's `int`.
    #[inline(always)]
    fn varint(&mut self, what: &'static str) -> Result<u32, Stop> {
        // Fast path: one byte.
        if let Some(&v) = self.b.get(self.i)
            && v < 0x80
        {
            self.i += 1;
            return Ok(u32::from(v));
        }
        let start = self.i;
        let mut value: u32 = 0;
        for _ in 0..MAX_VARINT_LEN {
            let Some(&v) = self.b.get(self.i) else {
                return Err(Stop::Short {
                    what,
                    at: start,
                    needed: (self.i - start + 1) as u64,
                });
            };
            self.i += 1;
            value = (value << 7) | u32::from(v & 0x7f);
            if v < 0x80 {
                return Ok(value);
            }
        }
        Err(Stop::Long { what, at: start })
    }

    #[inline(always)]
    fn bytes(&mut self, n: u64, what: &'static str) -> Result<Span, Stop> {
        let avail = (self.b.len() - self.i) as u64;
        if n > avail {
            return Err(Stop::Short {
                what,
                at: self.i,
                needed: n,
            });
        }
        let span = Span {
            flags: 0,
            start: self.base + self.i as u64,
            len: n as u32,
        };
        self.i += n as usize;
        Ok(span)
    }

    /// Flag byte, varint length, bytes (T:332-354).
    #[inline(always)]
    fn string(&mut self, what: &'static str) -> Result<Span, Stop> {
        // Fast path: flag byte and a one-byte length, all bytes present.
        if let Some(&[flags, len]) = self.b.get(self.i..self.i + 2)
            && len < 0x80
            && self.b.len() - (self.i + 2) >= usize::from(len)
        {
            let span = Span {
                flags,
                start: self.base + (self.i + 2) as u64,
                len: u32::from(len),
            };
            self.i += 2 + usize::from(len);
            return Ok(span);
        }
        let flags = self.u8(what)?;
        let len = self.varint(what)?;
        let mut span = self.bytes(u64::from(len), what)?;
        span.flags = flags;
        Ok(span)
    }

    fn id(&mut self, what: &'static str) -> Result<ProcessId, Stop> {
        let span = self.bytes(ID_LEN as u64, what)?;
        let at = (span.start - self.base) as usize;
        let mut id = [0u8; ID_LEN];
        id.copy_from_slice(&self.b[at..at + ID_LEN]);
        Ok(ProcessId(id))
    }
}

/// Parses the body record at window index `at`; `base` is the stream offset of `window[0]`.
/// Returns the record and the index after it.
#[inline(always)]
pub(crate) fn body_record(
    window: &[u8],
    at: usize,
    base: u64,
) -> Result<(SpanRecord, usize), Stop> {
    let mut p = P {
        b: window,
        i: at,
        base,
    };
    let t = p.u8("record tag")?;
    // Every body record has a varint length (T:749); the reader uses it only to skip unknown
    // records and after a sample end.
    let len = p.varint("record length")?;
    let rec = match t {
        tag::SAMPLE_START => {
            let weight = p.varint("sample weight")?;
            let op_name = p.string("sample op name")?;
            Record::SampleStart { weight, op_name }
        }
        tag::SUB_FRAME => {
            let package = p.string("sub frame package")?;
            let name = p.string("sub frame name")?;
            let file = p.string("sub frame file")?;
            let line = p.varint("sub frame line")? as i32;
            let first_line = p.varint("sub frame first line")? as i32;
            Record::Frame(Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            })
        }
        tag::MAIN_FRAME => {
            let file = p.string("main frame file")?;
            let line = p.varint("main frame line")? as i32;
            Record::Frame(Frame::Main { file, line })
        }
        tag::XSUB_FRAME => {
            let package = p.string("xsub frame package")?;
            let name = p.string("xsub frame name")?;
            Record::Frame(Frame::Xsub { package, name })
        }
        tag::EVAL_FRAME => {
            let file = p.string("eval frame file")?;
            let line = p.varint("eval frame line")? as i32;
            Record::Frame(Frame::Eval { file, line })
        }
        tag::SAMPLE_END => Record::SampleEnd {
            skipped: p.bytes(u64::from(len), "sample end payload")?,
        },
        tag::EVAL_SEQ => {
            let source = p.string("eval source text")?;
            let seq = p.varint("eval source sequence")?;
            Record::EvalSource { source, seq }
        }
        tag::SECTION_START => Record::SectionStart {
            name: p.string("section start name")?,
        },
        tag::SECTION_END => Record::SectionEnd {
            name: p.string("section end name")?,
        },
        tag::CUSTOM_META => {
            let key = p.string("metadata key")?;
            let value = p.string("metadata value")?;
            Record::Metadata { key, value }
        }
        // The length of the end records is read and ignored (T:1010-1016).
        tag::FILE_END => Record::FileEnd,
        tag::STREAM_END => Record::StreamEnd,
        other => Record::Unknown {
            tag: other,
            payload: p.bytes(u64::from(len), "unknown record payload")?,
        },
    };
    Ok((rec, p.i))
}

/// Parses the header record at window index `at` (header records have no length, T:476-547).
pub(crate) fn header_record(
    window: &[u8],
    at: usize,
    base: u64,
) -> Result<(HeaderRecord, usize), Stop> {
    let mut p = P {
        b: window,
        i: at,
        base,
    };
    let rec = match p.u8("header record tag")? {
        tag::HEADER_END => HeaderRecord::End,
        tag::PERL_VERSION => HeaderRecord::PerlVersion(PerlVersion {
            revision: p.varint("perl revision")?,
            version: p.varint("perl version")?,
            subversion: p.varint("perl subversion")?,
        }),
        tag::TICK_DURATION => HeaderRecord::TickDuration(p.varint("tick duration")?),
        tag::STACK_DEPTH => HeaderRecord::StackDepth(p.varint("stack sample depth")?),
        tag::GENEALOGY => HeaderRecord::Genealogy {
            ordinal: p.varint("genealogy ordinal")?,
            parent_ordinal: p.varint("genealogy parent ordinal")?,
            id: p.id("genealogy id")?,
            parent_id: p.id("genealogy parent id")?,
        },
        tag::CUSTOM_META => {
            // The stored length is wrong (key + value lengths only) and ignored (T:549-551).
            p.varint("metadata length")?;
            let key = p.string("metadata key")?;
            let value = p.string("metadata value")?;
            HeaderRecord::Metadata(key, value)
        }
        other => HeaderRecord::Bad(other),
    };
    Ok((rec, p.i))
}
