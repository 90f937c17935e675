//! One pass over a file that makes the real reader's checks and counts what a summary shows,
//! without keeping a sample's frames ([`check`], [`crate::validate`]).
//!
//! Cost: linear in the logical stream, and memory bounded by the reader's window (a few packets,
//! or the longest record) plus the distinct section names and eval sequence numbers: a sample of
//! any number of frames is counted, never held. The pass stops at the end of the stream (a
//! file-end or stream-end record): what follows is reported as [`Warning::TrailingData`] with its
//! offset and size, found without decoding it.

use std::collections::{BTreeMap, HashSet};

use crate::error::{Error, Warning};
use crate::model::{Frame, PerlString, Record};
use crate::read::Reader;
use crate::read::packets::StreamSource;

/// What [`check`] counted, and the warnings it found. Counts are those of the traces the real
/// reader returns (see [`crate::TraceReader`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Traces as the real reader returns them: one per sample, one per section record.
    pub traces: u64,
    /// Samples (sample-start ... sample-end).
    pub samples: u64,
    /// Frames of those samples (an eval or main frame right after `BEGIN` not counted, as in a
    /// reader built with perl 5.36 or later).
    pub frames: u64,
    /// The samples' weights summed: timer ticks (times the header's tick duration gives the
    /// sampled time).
    pub total_weight: u64,
    /// Distinct eval sources (by eval sequence number).
    pub eval_sources: u64,
    /// Custom metadata records in the body.
    pub metadata_records: u64,
    /// True once a file-end or stream-end record (or the end of the file) was read.
    pub file_ended: bool,
    /// True once a stream-end record (or the end of a file without an end record) was read.
    pub stream_ended: bool,
    /// The main program: the file of the outermost frame of the first sample whose outermost
    /// frame is a main frame.
    pub program: Option<PerlString>,
    /// What the real reader reads past, in file order.
    pub warnings: Vec<Warning>,
}

/// Reads every body record of `reader` (whose header was read), makes the real reader's checks
/// (a frame or sample end outside a sample, a section end without its start) and counts into
/// `summary`, which keeps what was counted before an error. Stops at the end of the stream.
pub fn check<S: StreamSource>(reader: &mut Reader<S>, summary: &mut Summary) -> Result<(), Error> {
    let mut sections: BTreeMap<PerlString, u64> = BTreeMap::new();
    let mut seqs: HashSet<u32> = HashSet::new();
    let mut unknown: Option<usize> = None;
    // The open sample's weight and frame count.
    let mut sample: Option<(u32, u64)> = None;
    let mut last_was_begin = false;
    // The file of the open sample's last frame when it is a main frame, until the program is
    // known; one buffer reused, so a sample of many main frames costs no allocation each.
    let mut last_main = PerlString::default();
    let mut last_is_main = false;
    loop {
        let Some(rec) = reader.next_span()? else {
            if !summary.file_ended {
                summary.file_ended = true;
                summary.stream_ended = true;
            }
            return Ok(());
        };
        let at = reader.record_offset();
        match rec {
            Record::SampleStart { weight, .. } => {
                sample = Some((weight, 0));
                last_was_begin = false;
                last_is_main = false;
            }
            Record::Frame(frame) => {
                let Some((_, frames)) = sample.as_mut() else {
                    return Err(Error::StrayRecord {
                        what: "frame record",
                        pos: reader.position_of(at),
                    });
                };
                match frame {
                    Frame::Sub { name, .. } | Frame::Xsub { name, .. } => {
                        last_was_begin = name.len == 5 && reader.str(name).bytes == b"BEGIN";
                        *frames += 1;
                    }
                    Frame::Eval { .. } | Frame::Main { .. } => {
                        if !last_was_begin {
                            *frames += 1;
                        }
                        last_was_begin = false;
                    }
                }
                last_is_main = false;
                if let (Frame::Main { file, .. }, None) = (frame, &summary.program) {
                    let file = reader.str(file);
                    last_main.flags = file.flags;
                    last_main.bytes.clear();
                    last_main.bytes.extend_from_slice(file.bytes);
                    last_is_main = true;
                }
            }
            Record::SampleEnd { .. } => {
                let Some((weight, frames)) = sample.take() else {
                    return Err(Error::StrayRecord {
                        what: "sample end record",
                        pos: reader.position_of(at),
                    });
                };
                summary.traces += 1;
                summary.samples += 1;
                summary.frames += frames;
                summary.total_weight += u64::from(weight);
                if last_is_main && summary.program.is_none() {
                    summary.program = Some(std::mem::take(&mut last_main));
                }
                last_is_main = false;
            }
            Record::EvalSource { seq, .. } => {
                if seqs.insert(seq) {
                    summary.eval_sources += 1;
                }
            }
            Record::Metadata { .. } => summary.metadata_records += 1,
            Record::SectionStart { name } => {
                *sections.entry(reader.str(name).to_owned()).or_insert(0) += 1;
                summary.traces += 1;
                sample = None;
            }
            Record::SectionEnd { name } => {
                let name = reader.str(name);
                // Looked up borrowed: only a name that opens a section is ever stored.
                let key = PerlString {
                    flags: name.flags,
                    bytes: name.bytes.to_vec(),
                };
                match sections.get_mut(&key) {
                    Some(depth) if *depth > 1 => *depth -= 1,
                    Some(_) => {
                        sections.remove(&key);
                    }
                    None => {
                        return Err(Error::UnmatchedSectionEnd {
                            pos: reader.position_of(at),
                        });
                    }
                }
                summary.traces += 1;
                sample = None;
            }
            Record::FileEnd | Record::StreamEnd => {
                summary.file_ended = true;
                summary.stream_ended |= matches!(rec, Record::StreamEnd);
                if let Some(trailing) = reader.trailing_data()? {
                    summary.warnings.push(Warning::TrailingData(trailing));
                }
                return Ok(());
            }
            Record::Unknown { tag, .. } => match unknown {
                Some(i) => {
                    if let Some(Warning::UnknownRecords { count, .. }) = summary.warnings.get_mut(i)
                    {
                        *count += 1;
                    }
                }
                None => {
                    unknown = Some(summary.warnings.len());
                    summary.warnings.push(Warning::UnknownRecords {
                        count: 1,
                        first_tag: tag,
                        first: reader.position_of(at),
                    });
                }
            },
        }
    }
}
