//! The error type of every decoder in this crate.
//!
//! Each variant carries the byte offset of the damage and the name of the field being read, so a
//! user can open a hex editor at the right place (ARCHITECTURE.md, error style). Offsets after the
//! `z` tag count bytes of the inflated stream, as the real reader's `pos` does
//! (nytprof-v5.md, "zlib").

use profcodec_common::{CountTooLarge, Truncated};

/// Why a NYTProf file (or a Pynytprof file) could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside a field.
    #[error(transparent)]
    Truncated(#[from] Truncated),
    /// A count is larger than the remaining input could hold.
    #[error(transparent)]
    CountTooLarge(#[from] CountTooLarge),
    /// The first line is not `NYTProf <major> <minor>\n` (real reader: "NYTProf data format
    /// error while parsing header").
    #[error(
        "not a NYTProf file: header: at byte {offset:#x}: expected \"NYTProf <major> <minor>\" but found another line"
    )]
    BadHeader {
        /// Offset of the first byte of the line.
        offset: u64,
    },
    /// The major version is not 5 (the only one Devel::NYTProf 6.12 reads).
    #[error(
        "a NYTProf version this reader does not know: header: at byte {offset:#x}: expected major version 5 but found {major}"
    )]
    UnsupportedVersion {
        /// Offset of the header line.
        offset: u64,
        /// The major version as written.
        major: u32,
        /// The minor version as written.
        minor: u32,
    },
    /// A record tag byte that no version of the format defines.
    #[error(
        "damaged data, a byte that starts no record: record tag: at byte {offset:#x}: expected one of :!#zPp@+*-Ssc>< but found {tag:#04x}"
    )]
    UnknownTag {
        /// Offset of the tag byte.
        offset: u64,
        /// The tag byte.
        tag: u8,
    },
    /// A string's tag byte is neither `'` nor `"`.
    #[error(
        "damaged data, a string without its tag: {what}: at byte {offset:#x}: expected string tag ' or \" but found {tag:#04x}"
    )]
    BadStringTag {
        /// Offset of the string tag byte.
        offset: u64,
        /// The field holding the string.
        what: &'static str,
        /// The tag byte found.
        tag: u8,
    },
    /// The `:nv_size` attribute is not 8: the doubles would not be 8 bytes wide.
    #[error(
        "written on a machine with other floating-point numbers: attribute nv_size: at byte {offset:#x}: expected 8 but found {found}"
    )]
    UnsupportedNvSize {
        /// Offset of the attribute record.
        offset: u64,
        /// The size as written (0 when it is not a number).
        found: u32,
    },
    /// The zlib stream after `z` is damaged (bad header, bad data or cut short).
    #[error(
        "the compressed part is damaged or cut short: zlib stream: at byte {offset:#x}: expected a complete zlib stream but found {problem}"
    )]
    Inflate {
        /// Offset (in the file) of the compressed bytes where inflation stopped.
        offset: u64,
        /// What zlib reported.
        problem: &'static str,
    },
    /// One unfinished record of the zlib stream inflates past 1 MiB at more than
    /// [`crate::read::MAX_RECORD_RATIO`] bytes per compressed byte: a zlib bomb (a string whose
    /// length claims gigabytes of zeros), which is refused before the rest is inflated.
    #[error(
        "the compressed stream inflates far beyond its size, as a zlib bomb does: record at byte {offset:#x} of the inflated stream (compressed file byte {compressed_offset:#x}): expected at most 64 inflated bytes per compressed byte but found {inflated} bytes of one unfinished record"
    )]
    InflationRatio {
        /// Offset of the record in the logical (inflated) stream.
        offset: u64,
        /// File offset of the compressed bytes read when inflation stopped.
        compressed_offset: u64,
        /// Inflated bytes the unfinished record held.
        inflated: u64,
    },
    /// A record refers to a file id that no earlier `@` record defined (the real reader crashes
    /// with SIGSEGV on a `s` record of this kind).
    #[error(
        "a record names a file the profile never defined: {what}: at byte {offset:#x}: expected a fid defined by an earlier NEW_FID but found fid {fid}"
    )]
    UndefinedFid {
        /// Offset of the record.
        offset: u64,
        /// The record kind.
        what: &'static str,
        /// The fid found.
        fid: u32,
    },
    /// A string eval names as the file it ran in (its NEW_FID `eval_fid`) a fid that no NEW_FID
    /// of the profile defines. NYTProf.xs warns ("has unknown invoking fid") and leaves an empty
    /// slot in its file table, on which Devel::NYTProf::Data dies (`Can't call method "fid" on
    /// an undefined value`, in `all_fileinfos`). An invoking file defined later in the profile
    /// is no error: the eval is then read as a plain file, as the real reader does.
    #[error(
        "a string eval names a file the profile never defines as the file it ran in, which Devel::NYTProf cannot load: {what}: at byte {offset:#x}: expected a fid some NEW_FID defines but found fid {eval_fid}"
    )]
    UndefinedEvalFid {
        /// Offset of the eval's NEW_FID record (0 when the writer refuses a model).
        offset: u64,
        /// The field at fault.
        what: &'static str,
        /// The fid of the eval.
        fid: u32,
        /// The invoking fid it names.
        eval_fid: u32,
    },
    /// The file defines fid 0, which the loader reserves (Data.pm drops it).
    #[error(
        "a file defined with the reserved id 0: NEW_FID: at byte {offset:#x}: expected a fid of at least 1 but found 0"
    )]
    ReservedFid {
        /// Offset of the record.
        offset: u64,
    },
    /// No usable `:ticks_per_sec` attribute: the real loader dies with "Illegal division by
    /// zero" (Data.pm:112).
    #[error(
        "the profile never states its clock rate, so no time can be computed: attribute ticks_per_sec: at byte {offset:#x}: expected a positive tick rate but found none"
    )]
    MissingTicksPerSec {
        /// Offset of the end of the input (where the attribute was last possible).
        offset: u64,
    },
    /// A value does not fit the field that must carry it (writer side).
    #[error(
        "a value too large for the file format: {what}: at byte {offset:#x}: expected a value that fits the field but found {value}"
    )]
    ValueOutOfRange {
        /// Offset in the output where the value would go.
        offset: u64,
        /// The field.
        what: &'static str,
        /// The value.
        value: u64,
    },
    /// The model's block or sub line times of a fid do not add up to the same ticks and
    /// statements as its line times, so no stream of `*` records makes all three (writer side).
    #[error(
        "the profile's times do not add up, so no file can hold them: {what} of fid {fid}: at byte {offset:#x}: expected the totals of the line times but found other totals"
    )]
    BlockTimesMismatch {
        /// Offset in the output where the statements would go.
        offset: u64,
        /// `block times` or `sub times`.
        what: &'static str,
        /// The fid.
        fid: u32,
    },
    /// A conversion would write far more than its input holds: the NYTProf format has one
    /// record per counted statement, so a Pynytprof line counting 2^24 statements would become
    /// 64 MiB of records.
    #[error(
        "the converted file would be far larger than its input: {what}: at byte {offset:#x}: expected at most {limit} bytes of output but found {estimate}"
    )]
    OutputTooLarge {
        /// Offset of the input where the conversion starts (0).
        offset: u64,
        /// What makes the output large.
        what: &'static str,
        /// The output size the conversion would need, at least.
        estimate: u64,
        /// The most it may write for this input.
        limit: u64,
    },
    /// Reading the input failed.
    #[error(
        "the input could not be read: input: at byte {offset:#x}: expected readable bytes but found an I/O error ({kind})"
    )]
    Io {
        /// Offset (in the uncompressed stream) where reading failed.
        offset: u64,
        /// The I/O error's kind.
        kind: std::io::ErrorKind,
    },
    /// A Pynytprof chunk has an unknown token or a malformed payload.
    #[error(
        "damaged Pynytprof data: {what}: at byte {offset:#x}: expected {expected} but found {found:#x}"
    )]
    Pynytprof {
        /// Offset of the damage.
        offset: u64,
        /// The chunk or field.
        what: &'static str,
        /// What was expected.
        expected: &'static str,
        /// What was found (a byte or a length).
        found: u64,
    },
}

impl Error {
    /// The byte offset of the damage, when known.
    pub fn offset(&self) -> Option<u64> {
        Some(match *self {
            Error::Truncated(t) => t.offset,
            Error::CountTooLarge(c) => c.offset,
            Error::BadHeader { offset }
            | Error::UnsupportedVersion { offset, .. }
            | Error::UnknownTag { offset, .. }
            | Error::BadStringTag { offset, .. }
            | Error::UnsupportedNvSize { offset, .. }
            | Error::Inflate { offset, .. }
            | Error::InflationRatio { offset, .. }
            | Error::UndefinedFid { offset, .. }
            | Error::UndefinedEvalFid { offset, .. }
            | Error::ReservedFid { offset }
            | Error::MissingTicksPerSec { offset }
            | Error::ValueOutOfRange { offset, .. }
            | Error::BlockTimesMismatch { offset, .. }
            | Error::Io { offset, .. }
            | Error::OutputTooLarge { offset, .. }
            | Error::Pynytprof { offset, .. } => offset,
        })
    }

    /// True when the error is only that the input ended early (a cut file).
    pub fn is_truncation(&self) -> bool {
        matches!(
            self,
            Error::Truncated(_)
                | Error::Inflate {
                    problem: "a stream cut short",
                    ..
                }
        )
    }
}
