//! The hot path of the logical stream: samples and frames, which are nearly every record of a
//! profile, parsed with no error details (the crate docs, "Body records" 1-6).
//!
//! Each function here gives `None` for anything unusual: a record of another kind, a record not
//! complete in the window, a varint longer than 2 bytes, a string of 128 bytes or more, a sample
//! end with a payload. The caller then reads the record with [`body_record`], which gives the
//! same record or says exactly what is missing. Whatever the hot path returns, [`body_record`]
//! returns too (tested below).
//!
//! With those limits a frame record is at most 394 bytes, so where [`WIDE`] bytes remain in the
//! window a frame is read from a fixed-size array with no length check per field ([`Wide`]);
//! near the end of the window every byte is checked ([`Narrow`]). Both read the same grammar
//! through [`Src`].

use crate::model::{Frame, Record};
use crate::raw::tag;
#[cfg(test)]
use crate::read::parse::body_record;
use crate::read::parse::{Span, SpanRecord};

/// The bytes a [`Wide`] reader sees: more than the longest hot frame record (1 tag byte, a 2-byte
/// length, 3 strings of 2 + 127 bytes, two 2-byte varints: 394 bytes), a power of two so that an
/// index is kept in range by a mask rather than a check.
const WIDE: usize = 512;

/// Where the hot path reads bytes from.
trait Src {
    /// The next byte; `None` past the end of the window.
    fn u8(&mut self) -> Option<u8>;
    /// Skips `n` bytes (`n` < 128); `None` past the end of the window.
    fn skip(&mut self, n: usize) -> Option<()>;
    /// The window index of the next byte.
    fn pos(&self) -> usize;

    /// A varint of 1 or 2 bytes (lines, weights and lengths below 16384).
    #[inline(always)]
    fn varint(&mut self) -> Option<u32> {
        let v = self.u8()?;
        if v < 0x80 {
            return Some(u32::from(v));
        }
        let w = self.u8()?;
        (w < 0x80).then_some((u32::from(v & 0x7f) << 7) | u32::from(w))
    }

    /// A string with a one-byte length (below 128 bytes), as a span of a window whose first
    /// byte is at stream offset `base`.
    #[inline(always)]
    fn span(&mut self, base: u64) -> Option<Span> {
        let flags = self.u8()?;
        let len = self.u8()?;
        if len >= 0x80 {
            return None;
        }
        let start = self.pos();
        self.skip(usize::from(len))?;
        Some(Span {
            flags,
            start: base + start as u64,
            len: u32::from(len),
        })
    }

    /// The fields of a frame record with tag `t` (after its length).
    #[inline(always)]
    fn frame(&mut self, t: u8, base: u64) -> Option<Frame<Span>> {
        Some(match t {
            tag::SUB_FRAME => Frame::Sub {
                package: self.span(base)?,
                name: self.span(base)?,
                file: self.span(base)?,
                line: self.varint()? as i32,
                first_line: self.varint()? as i32,
            },
            tag::MAIN_FRAME => Frame::Main {
                file: self.span(base)?,
                line: self.varint()? as i32,
            },
            tag::XSUB_FRAME => Frame::Xsub {
                package: self.span(base)?,
                name: self.span(base)?,
            },
            tag::EVAL_FRAME => Frame::Eval {
                file: self.span(base)?,
                line: self.varint()? as i32,
            },
            _ => return None,
        })
    }

    /// The record of a sample after its start: a frame pushed to `frames` as the real reader
    /// keeps it (see [`hot_sample`]), or the end. `None` for anything else.
    #[inline(always)]
    fn sample_record(
        &mut self,
        base: u64,
        frames: &mut Vec<Frame<Span>>,
        keep: &mut Keep<'_>,
    ) -> Option<Step> {
        let t = self.u8()?;
        let len = self.varint()?;
        match t {
            tag::SUB_FRAME => {
                let package = self.span(base)?;
                let name = self.span(base)?;
                let file = self.span(base)?;
                let line = self.varint()? as i32;
                let first_line = self.varint()? as i32;
                keep.sub(name);
                frames.push(Frame::Sub {
                    package,
                    name,
                    file,
                    line,
                    first_line,
                });
            }
            tag::MAIN_FRAME | tag::EVAL_FRAME => {
                let file = self.span(base)?;
                let line = self.varint()? as i32;
                if keep.file_frame() {
                    frames.push(if t == tag::MAIN_FRAME {
                        Frame::Main { file, line }
                    } else {
                        Frame::Eval { file, line }
                    });
                }
            }
            tag::XSUB_FRAME => {
                let package = self.span(base)?;
                let name = self.span(base)?;
                keep.sub(name);
                frames.push(Frame::Xsub { package, name });
            }
            tag::SAMPLE_END if len == 0 => return Some(Step::End),
            _ => return None,
        }
        Some(Step::Frame)
    }
}

/// What [`Src::sample_record`] read.
enum Step {
    Frame,
    End,
}

/// The real reader's rule for the frame after a `BEGIN` frame (traces.rs module docs).
struct Keep<'b> {
    window: &'b [u8],
    base: u64,
    drop_after_begin: bool,
    last_was_begin: bool,
}

impl Keep<'_> {
    /// A sub or xsub frame named `name`.
    #[inline(always)]
    fn sub(&mut self, name: Span) {
        self.last_was_begin = name.len == 5
            && self
                .window
                .get((name.start - self.base) as usize..)
                .is_some_and(|b| b.starts_with(b"BEGIN"));
    }

    /// Whether an eval or main frame is kept.
    #[inline(always)]
    fn file_frame(&mut self) -> bool {
        !(self.drop_after_begin && std::mem::take(&mut self.last_was_begin))
    }
}

/// Every byte checked against the end of the window.
struct Narrow<'b> {
    b: &'b [u8],
    i: usize,
}

impl Src for Narrow<'_> {
    #[inline(always)]
    fn u8(&mut self) -> Option<u8> {
        let v = *self.b.get(self.i)?;
        self.i += 1;
        Some(v)
    }

    #[inline(always)]
    fn skip(&mut self, n: usize) -> Option<()> {
        if self.b.len() - self.i < n {
            return None;
        }
        self.i += n;
        Some(())
    }

    #[inline(always)]
    fn pos(&self) -> usize {
        self.i
    }
}

/// [`WIDE`] bytes of the window from index `at`, read one record at a time: a record stays
/// below [`WIDE`] bytes (strings of 128 bytes or more and varints of 3 bytes or more are
/// refused), so the mask on the index never changes it; it only lets the compiler drop the
/// bounds checks.
struct Wide<'b> {
    r: &'b [u8; WIDE],
    at: usize,
    j: usize,
}

impl Src for Wide<'_> {
    #[inline(always)]
    fn u8(&mut self) -> Option<u8> {
        let v = self.r[self.j & (WIDE - 1)];
        self.j += 1;
        Some(v)
    }

    #[inline(always)]
    fn skip(&mut self, n: usize) -> Option<()> {
        self.j += n;
        Some(())
    }

    #[inline(always)]
    fn pos(&self) -> usize {
        self.at + self.j
    }
}

/// The record at window index `at`, if it is a sample start, a frame or a sample end without a
/// payload, complete in the window. Returns the record and the index after it.
#[inline(always)]
pub(crate) fn hot_record(window: &[u8], at: usize, base: u64) -> Option<(SpanRecord, usize)> {
    match window.get(at..at + WIDE).and_then(|w| w.try_into().ok()) {
        Some(r) => record(&mut Wide { r, at, j: 0 }, base),
        None => record(&mut Narrow { b: window, i: at }, base),
    }
}

/// [`hot_record`] from either reader.
#[inline(always)]
fn record(h: &mut impl Src, base: u64) -> Option<(SpanRecord, usize)> {
    let t = h.u8()?;
    let len = h.varint()?;
    let rec = match t {
        tag::SAMPLE_START => Record::SampleStart {
            weight: h.varint()?,
            op_name: h.span(base)?,
        },
        tag::SAMPLE_END if len == 0 => Record::SampleEnd {
            skipped: Span {
                flags: 0,
                start: base + h.pos() as u64,
                len: 0,
            },
        },
        _ => Record::Frame(h.frame(t, base)?),
    };
    Some((rec, h.pos()))
}

/// A sample read on the hot path: the start record, frame records only, the end record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HotSample {
    pub(crate) weight: u32,
    pub(crate) op_name: Span,
    /// Window index of the first frame record (of the end record when there is none).
    pub(crate) frames_start: usize,
    /// Window index of the end record.
    pub(crate) end_record: usize,
    /// Window index after the end record.
    pub(crate) end: usize,
}

/// A whole sample at window index `at` (a start record, frame records, an end record of length
/// 0), complete in the window and made of [`hot_record`]s only; its frames pushed to `frames` as
/// the real reader keeps them (an eval or main frame right after a `BEGIN` sub or xsub frame
/// dropped when `drop_after_begin`, see `traces.rs`). `None` (with `frames` partly filled) for
/// anything else; the caller then reads the records one by one.
#[inline(always)]
pub(crate) fn hot_sample(
    window: &[u8],
    at: usize,
    base: u64,
    frames: &mut Vec<Frame<Span>>,
    drop_after_begin: bool,
) -> Option<HotSample> {
    let mut h = Narrow { b: window, i: at };
    if h.u8()? != tag::SAMPLE_START {
        return None;
    }
    h.varint()?;
    let weight = h.varint()?;
    let op_name = h.span(base)?;
    let frames_start = h.i;
    let mut i = h.i;
    let mut keep = Keep {
        window,
        base,
        drop_after_begin,
        last_was_begin: false,
    };
    loop {
        let record = i;
        let step = match window.get(i..i + WIDE).and_then(|w| w.try_into().ok()) {
            Some(r) => {
                let mut w = Wide { r, at: i, j: 0 };
                let step = w.sample_record(base, frames, &mut keep)?;
                i = w.pos();
                step
            }
            None => {
                let mut n = Narrow { b: window, i };
                let step = n.sample_record(base, frames, &mut keep)?;
                i = n.i;
                step
            }
        };
        if let Step::End = step {
            return Some(HotSample {
                weight,
                op_name,
                frames_start,
                end_record: record,
                end: i,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use proptest::prelude::*;

    use super::*;

    /// Records made mostly of the hot tags with short fields, and arbitrary bytes.
    fn record_bytes() -> impl Strategy<Value = Vec<u8>> {
        let tag = prop_oneof![
            4 => 1u8..=6,
            1 => any::<u8>(),
        ];
        let byte = prop_oneof![
            6 => 0u8..0x20,
            2 => 0x7eu8..=0x82,
            1 => any::<u8>(),
        ];
        (tag, proptest::collection::vec(byte, 0..40)).prop_map(|(t, mut rest)| {
            rest.insert(0, t);
            rest
        })
    }

    proptest! {
        /// The hot path never disagrees with the full parser.
        #[test]
        fn hot_record_agrees(
            mut bytes in record_bytes(),
            at in 0usize..3,
            base in 0u64..1 << 40,
            wide in any::<bool>(),
        ) {
            // Room after the record makes the hot path read it from a fixed-size array.
            if wide {
                bytes.resize(bytes.len() + WIDE, 0);
            }
            let at = at.min(bytes.len());
            if let Some(hot) = hot_record(&bytes, at, base) {
                let full = body_record(&bytes, at, base).ok();
                prop_assert_eq!(Some(hot), full);
            }
        }
    }

    #[test]
    fn hot_record_takes_the_common_records() {
        // A sub frame: tag, length, three strings, line 200 (two bytes), first line 3.
        let b = [3, 12, 0, 1, b'A', 0, 1, b'f', 1, 1, b'x', 0x81, 0x48, 3];
        let (rec, end) = hot_record(&b, 0, 100).unwrap();
        assert_eq!(end, b.len());
        assert_eq!(Some((rec, end)), body_record(&b, 0, 100).ok());
        // A line of three bytes goes to the full parser.
        let b = [6, 5, 0, 1, b'm', 0x81, 0x80, 0];
        assert!(hot_record(&b, 0, 0).is_none());
        assert!(body_record(&b, 0, 0).is_ok());
        // Cut anywhere: never a hot record.
        let b = [1, 4, 2, 0, 2, b'o', b'p'];
        for cut in 0..b.len() {
            assert!(hot_record(&b[..cut], 0, 0).is_none());
        }
        assert!(hot_record(&b, 0, 0).is_some());
    }
}
