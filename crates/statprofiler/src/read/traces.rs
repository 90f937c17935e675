//! Traces as the real reader returns them (`TraceFileReader::read_trace`, T:731-1022).
//!
//! On top of the records, the real reader:
//! - returns one trace per sample (records 1 .. 2), with the sections/metadata changes seen since
//!   the previous trace;
//! - returns an extra empty trace (weight 0, op `""`, no frames) for every section start or end
//!   record ("horrible temporary hack", T:940-960);
//! - drops an eval or main frame that directly follows a `BEGIN` sub frame (when built with perl
//!   5.36 or later, T:858-862; [`TraceReader::set_drop_frame_after_begin`]);
//! - shows eval STRING file names of sub and eval frames as `qeval:<id>/(eval N)`
//!   ([`reader_file_name`]), and keeps eval sources with `CODE(0x...)` addresses blanked
//!   ([`normalize_references`]);
//! - croaks on a frame or sample end outside a sample and on an unmatched section end;
//! - treats the end of the file as the end of the stream (setting both flags) unless a
//!   file-end or stream-end record was seen.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::error::Error;
use crate::model::{Frame, PerlStr, PerlString, ProcessId, Record};
use crate::read::Reader;
use crate::read::packets::StreamSource;
use crate::read::parse::Span;

/// One trace, borrowing from the reader.
#[derive(Debug, Clone, Copy)]
pub struct Trace<'r> {
    /// Timer ticks.
    pub weight: u32,
    /// Op name (`""` for the synthetic traces).
    pub op_name: PerlStr<'r>,
    /// True when a section started or ended since the previous trace.
    pub sections_changed: bool,
    /// True when custom metadata was read since the previous trace.
    pub metadata_changed: bool,
    /// Custom metadata records read while collecting this trace.
    pub metadata: &'r [(PerlString, PerlString)],
    frames: &'r [Frame<Span>],
    window: &'r [u8],
    base: u64,
    frame_records: Option<&'r [u8]>,
}

impl<'r> Trace<'r> {
    /// The frames, innermost first (`.rev()` gives them outermost first).
    pub fn frames(
        &self,
    ) -> impl ExactSizeIterator<Item = Frame<PerlStr<'r>>> + DoubleEndedIterator + 'r {
        Frames {
            frames: self.frames.iter(),
            window: self.window,
            base: self.base,
        }
    }

    /// The number of frames.
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// The encoded frame records of this sample, when it was read in one piece and holds frame
    /// records only (nearly every sample; `None` for the others). Two samples of one file with
    /// equal frame records have equal [`frames`](Self::frames) for readers with the same
    /// [`set_drop_frame_after_begin`](TraceReader::set_drop_frame_after_begin): the bytes
    /// identify a stack seen before without resolving its frames.
    pub fn frame_records(&self) -> Option<&'r [u8]> {
        self.frame_records
    }
}

/// The iterator of [`Trace::frames`].
struct Frames<'r> {
    frames: std::slice::Iter<'r, Frame<Span>>,
    window: &'r [u8],
    base: u64,
}

impl<'r> Frames<'r> {
    #[inline]
    fn resolve(&self, frame: &Frame<Span>) -> Frame<PerlStr<'r>> {
        let (window, base) = (self.window, self.base);
        // The spans lie in the window (the trace reader pins the sample's bytes); `get` keeps
        // this free of a panic path all the same.
        let str = |span: &Span| PerlStr {
            flags: span.flags,
            bytes: usize::try_from(span.start - base)
                .ok()
                .and_then(|at| window.get(at..at + span.len as usize))
                .unwrap_or_default(),
        };
        // By hand rather than `Frame::map`, which the compiler does not inline here.
        match *frame {
            Frame::Sub {
                ref package,
                ref name,
                ref file,
                line,
                first_line,
            } => Frame::Sub {
                package: str(package),
                name: str(name),
                file: str(file),
                line,
                first_line,
            },
            Frame::Xsub {
                ref package,
                ref name,
            } => Frame::Xsub {
                package: str(package),
                name: str(name),
            },
            Frame::Eval { ref file, line } => Frame::Eval {
                file: str(file),
                line,
            },
            Frame::Main { ref file, line } => Frame::Main {
                file: str(file),
                line,
            },
        }
    }
}

impl<'r> Iterator for Frames<'r> {
    type Item = Frame<PerlStr<'r>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let frame = self.frames.next()?;
        Some(self.resolve(frame))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.frames.size_hint()
    }
}

impl DoubleEndedIterator for Frames<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        let frame = self.frames.next_back()?;
        Some(self.resolve(frame))
    }
}

impl ExactSizeIterator for Frames<'_> {}

/// Whether `file` is the file name perl gives an eval STRING's code, `(eval N)`.
pub(crate) fn is_eval_file(file: &[u8]) -> bool {
    file.len() >= 8 && file.starts_with(b"(eval ") && file.ends_with(b")")
}

/// The reader's presentation of a sub or eval frame's file: an eval STRING file `(eval N)` becomes
/// `qeval:<id hex>/(eval N)` (`make_fullfile`, T:410-423). Main frames keep their file.
pub fn reader_file_name<'a>(file: &'a [u8], id: &ProcessId) -> Cow<'a, [u8]> {
    if is_eval_file(file) {
        let mut out = format!("qeval:{}/", id.hex()).into_bytes();
        out.extend_from_slice(file);
        Cow::Owned(out)
    } else {
        Cow::Borrowed(file)
    }
}

/// The reader's copy of an eval source: the hex digits of `CODE(0x...)`-style references
/// (GLOB, CODE, REF, HASH, IO, SCALAR, ARRAY) replaced by `f` (`normalize_references`,
/// T:686-729), so sources differing only by addresses compare equal.
pub fn normalize_references(source: &[u8]) -> Vec<u8> {
    let mut s = source.to_vec();
    let mut from = 1;
    while from < s.len() {
        let Some(found) = s[from..].windows(3).position(|w| w == b"(0x") else {
            break;
        };
        let curr = from + found;
        from = curr + 1;
        let check: &[u8] = match s[curr - 1] {
            b'B' => b"GLOB",
            b'E' => b"CODE",
            b'F' => b"REF",
            b'H' => b"HASH",
            b'O' => b"IO",
            b'R' => b"SCALAR",
            b'Y' => b"ARRAY",
            _ => continue,
        };
        if curr < check.len() || &s[curr - check.len()..curr] != check {
            continue;
        }
        let mut end = curr + 3;
        while end < s.len() && matches!(s[end], b'0'..=b'9' | b'a'..=b'f') {
            end += 1;
        }
        if end >= s.len() || s[end] != b')' {
            continue;
        }
        for b in &mut s[curr + 3..end] {
            *b = b'f';
        }
        from = end;
    }
    s
}

/// Reads traces as the real reader does (module docs), keeping its running state: custom
/// metadata, active sections, eval sources, and the file-end/stream-end flags.
#[derive(Debug)]
pub struct TraceReader<S> {
    reader: Reader<S>,
    frames: Vec<Frame<Span>>,
    new_metadata: Vec<(PerlString, PerlString)>,
    custom_metadata: BTreeMap<PerlString, PerlString>,
    sections: BTreeMap<PerlString, u64>,
    source_code: BTreeMap<u32, PerlString>,
    sections_changed: bool,
    metadata_changed: bool,
    file_ended: bool,
    stream_ended: bool,
    drop_after_begin: bool,
}

impl<S: StreamSource> TraceReader<S> {
    /// Traces from a reader (whose header was read). Header metadata is the starting custom
    /// metadata, as in the real reader.
    pub fn new(reader: Reader<S>) -> Self {
        let custom_metadata = reader.header().metadata.iter().cloned().collect();
        TraceReader {
            reader,
            frames: Vec::new(),
            new_metadata: Vec::new(),
            custom_metadata,
            sections: BTreeMap::new(),
            source_code: BTreeMap::new(),
            sections_changed: false,
            metadata_changed: false,
            file_ended: false,
            stream_ended: false,
            drop_after_begin: true,
        }
    }

    /// Whether an eval/main frame right after a `BEGIN` frame is dropped: true (the default) as
    /// in a reader built with perl 5.36 or later, false as in one built with an older perl.
    pub fn set_drop_frame_after_begin(&mut self, drop: bool) {
        self.drop_after_begin = drop;
    }

    /// The underlying reader (its header).
    pub fn reader(&self) -> &Reader<S> {
        &self.reader
    }

    /// Custom metadata seen so far (header and body), by key.
    pub fn custom_metadata(&self) -> &BTreeMap<PerlString, PerlString> {
        &self.custom_metadata
    }

    /// Sections open now, with their nesting depth.
    pub fn active_sections(&self) -> &BTreeMap<PerlString, u64> {
        &self.sections
    }

    /// Eval sources seen so far, by eval sequence number, normalized as the reader does.
    pub fn source_code(&self) -> &BTreeMap<u32, PerlString> {
        &self.source_code
    }

    /// True once a file-end or stream-end record (or the end of the file) was read.
    pub fn file_ended(&self) -> bool {
        self.file_ended
    }

    /// True once a stream-end record (or the end of a file without an end record) was read.
    pub fn stream_ended(&self) -> bool {
        self.stream_ended
    }

    /// Whether an eval/main frame right after a `BEGIN` frame is dropped
    /// ([`set_drop_frame_after_begin`](Self::set_drop_frame_after_begin)).
    pub fn drop_frame_after_begin(&self) -> bool {
        self.drop_after_begin
    }

    /// The trace of what was read since the last one; `frame_records` is the window range of
    /// the sample's frame records when they were read in one piece.
    fn trace(
        &mut self,
        weight: u32,
        op_name: Option<Span>,
        frame_records: Option<std::ops::Range<usize>>,
    ) -> Trace<'_> {
        let sections_changed = std::mem::take(&mut self.sections_changed);
        let metadata_changed = std::mem::take(&mut self.metadata_changed);
        let op_name = op_name.map_or(PerlStr::default(), |s| self.reader.str(s));
        let (window, base) = self.reader.window();
        Trace {
            weight,
            op_name,
            sections_changed,
            metadata_changed,
            metadata: &self.new_metadata,
            frames: &self.frames,
            window,
            base,
            frame_records: frame_records.and_then(|r| window.get(r)),
        }
    }

    /// The next trace, or `None` at the end of the file.
    pub fn next_trace(&mut self) -> Result<Option<Trace<'_>>, Error> {
        self.reader.set_pin(None);
        self.frames.clear();
        self.new_metadata.clear();
        // Nearly every trace is a sample complete in the window: read in one go.
        if let Some(hot) = self
            .reader
            .hot_sample(&mut self.frames, self.drop_after_begin)
        {
            let records = hot.frames_start..hot.end_record;
            return Ok(Some(self.trace(
                hot.weight,
                Some(hot.op_name),
                Some(records),
            )));
        }
        self.frames.clear();
        let mut sample: Option<(u32, Span)> = None;
        let mut last_was_begin = false;
        loop {
            let Some(rec) = self.reader.next_span()? else {
                if !self.file_ended {
                    self.file_ended = true;
                    self.stream_ended = true;
                }
                return Ok(None);
            };
            let at = self.reader.record_offset();
            match rec {
                Record::SampleStart { weight, op_name } => {
                    sample = Some((weight, op_name));
                    self.frames.clear();
                    self.reader.set_pin(Some(at));
                    last_was_begin = false;
                }
                Record::Frame(frame) => {
                    if sample.is_none() {
                        return Err(Error::StrayRecord {
                            what: "frame record",
                            pos: self.reader.position_of(at),
                        });
                    }
                    match frame {
                        Frame::Sub { name, .. } | Frame::Xsub { name, .. } => {
                            last_was_begin =
                                name.len == 5 && self.reader.str(name).bytes == b"BEGIN";
                            self.frames.push(frame);
                        }
                        Frame::Eval { .. } | Frame::Main { .. } => {
                            if !(self.drop_after_begin && last_was_begin) {
                                self.frames.push(frame);
                            }
                            last_was_begin = false;
                        }
                    }
                }
                Record::EvalSource { source, seq } => {
                    let text = self.reader.str(source);
                    let normalized = PerlString {
                        flags: text.flags,
                        bytes: normalize_references(text.bytes),
                    };
                    self.source_code.insert(seq, normalized);
                }
                Record::SampleEnd { .. } => {
                    let Some((weight, op_name)) = sample else {
                        return Err(Error::StrayRecord {
                            what: "sample end record",
                            pos: self.reader.position_of(at),
                        });
                    };
                    return Ok(Some(self.trace(weight, Some(op_name), None)));
                }
                Record::Metadata { key, value } => {
                    let key = self.reader.str(key).to_owned();
                    let value = self.reader.str(value).to_owned();
                    self.custom_metadata.insert(key.clone(), value.clone());
                    self.new_metadata.push((key, value));
                    self.metadata_changed = true;
                }
                Record::SectionStart { name } => {
                    let name = self.reader.str(name).to_owned();
                    *self.sections.entry(name).or_insert(0) += 1;
                    self.sections_changed = true;
                    self.frames.clear();
                    return Ok(Some(self.trace(0, None, None)));
                }
                Record::SectionEnd { name } => {
                    let name = self.reader.str(name).to_owned();
                    match self.sections.get_mut(&name) {
                        Some(depth) if *depth > 1 => *depth -= 1,
                        Some(_) => {
                            self.sections.remove(&name);
                        }
                        None => {
                            return Err(Error::UnmatchedSectionEnd {
                                pos: self.reader.position_of(at),
                            });
                        }
                    }
                    self.sections_changed = true;
                    self.frames.clear();
                    return Ok(Some(self.trace(0, None, None)));
                }
                Record::StreamEnd => {
                    self.stream_ended = true;
                    self.file_ended = true;
                }
                Record::FileEnd => self.file_ended = true,
                Record::Unknown { .. } => {}
            }
        }
    }
}
