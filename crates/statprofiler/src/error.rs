//! Errors (the crate docs, "The format").
//!
//! Every variant is `Copy` and says where the damage is. Errors in the container (magic, version,
//! packet framing, Snappy blocks) carry file offsets. Errors in the logical stream carry a
//! [`StreamPos`]: the offset in the logical stream (the concatenated decompressed packets) and the
//! file offset of the packet holding that byte, so a user can find it with a hex editor after
//! decompressing, or find the packet on disk.

use core::fmt;

use profcodec_common::Truncated;

/// A position in the logical stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StreamPos {
    /// Offset in the logical stream (0 = the first byte of the first packet's decompressed data).
    pub stream: u64,
    /// File offset of the packet header (u16 length) whose data holds the byte; for a file
    /// without Snappy packets, the file offset of the byte itself.
    pub file: u64,
}

impl fmt::Display for StreamPos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "stream byte {:#x} (packet at byte {:#x})",
            self.stream, self.file
        )
    }
}

/// Why a StatProfiler file could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file ended inside the prologue or inside a packet's framing (file offsets).
    #[error(transparent)]
    Truncated(#[from] Truncated),
    /// The file does not start with `=statprofiler`.
    #[error("file magic: at byte 0x0: expected \"=statprofiler\" but found {found:02x?}")]
    BadMagic {
        /// The first 13 bytes.
        found: [u8; 13],
    },
    /// The version byte is not 1 (the real reader refuses it, T:488-492).
    #[error("format version: at byte 0xd: expected 1 but found {found}")]
    BadVersion {
        /// The byte read.
        found: u8,
    },
    /// A packet's Snappy block says it decompresses to more than 32000 bytes (S:37-41).
    #[error(
        "snappy packet: at byte {offset:#x}: expected at most 32000 decompressed bytes but found a block of {found}"
    )]
    PacketTooLarge {
        /// File offset of the packet header.
        offset: u64,
        /// The decompressed length the block states.
        found: u64,
    },
    /// A packet's Snappy block is damaged.
    #[error("snappy packet: at byte {offset:#x}: expected a raw Snappy block but found {reason}")]
    Snappy {
        /// File offset of the packet header.
        offset: u64,
        /// What the decompressor found.
        reason: &'static str,
    },
    /// The logical stream ended inside a record.
    #[error("{what}: at {pos}: expected {needed} more bytes but the stream ended")]
    StreamTruncated {
        /// The field being read.
        what: &'static str,
        /// Where the field starts.
        pos: StreamPos,
        /// Bytes the field needs.
        needed: u64,
    },
    /// A varint is longer than the 5 bytes a `uint32` needs.
    #[error("{what}: at {pos}: expected a varint of at most 5 bytes but found a longer one")]
    VarintTooLong {
        /// The field.
        what: &'static str,
        /// Where the varint starts.
        pos: StreamPos,
    },
    /// A header record has a tag the real reader refuses (T:540-542).
    #[error("header record tag: at {pos}: expected one of 200-203, 205 or 254 but found {tag}")]
    HeaderTag {
        /// Where the record starts.
        pos: StreamPos,
        /// The tag read.
        tag: u8,
    },
    /// A frame record outside a sample (the real reader croaks, T:820ff).
    #[error("{what}: at {pos}: expected a sample-start record before it but found none")]
    StrayRecord {
        /// The record (frame or sample end).
        what: &'static str,
        /// Where the record starts.
        pos: StreamPos,
    },
    /// A section end without a matching section start (the real reader croaks).
    #[error("section end: at {pos}: expected an open section of that name but found none")]
    UnmatchedSectionEnd {
        /// Where the record starts.
        pos: StreamPos,
    },
    /// Reading from an `io::Read` failed.
    #[error("input: at byte {offset:#x}: expected to read but found the I/O error {kind}")]
    Io {
        /// File offset of the read.
        offset: u64,
        /// The error kind.
        kind: std::io::ErrorKind,
    },
    /// A line of the text format is malformed.
    #[error("text line {line}: at byte {offset:#x}: expected {expected}")]
    Text {
        /// Byte offset of the line start.
        offset: u64,
        /// 1-based line number.
        line: u64,
        /// What was expected.
        expected: &'static str,
    },
}

impl Error {
    /// The file offset of the damage (for stream errors: of the packet holding it).
    pub fn offset(&self) -> Option<u64> {
        Some(match *self {
            Error::Truncated(t) => t.offset,
            Error::BadMagic { .. } => 0,
            Error::BadVersion { .. } => 13,
            Error::PacketTooLarge { offset, .. }
            | Error::Snappy { offset, .. }
            | Error::Io { offset, .. }
            | Error::Text { offset, .. } => offset,
            Error::StreamTruncated { pos, .. }
            | Error::VarintTooLong { pos, .. }
            | Error::HeaderTag { pos, .. }
            | Error::StrayRecord { pos, .. }
            | Error::UnmatchedSectionEnd { pos } => pos.file,
        })
    }

    /// The offset in the logical stream, for errors found there.
    pub fn stream_offset(&self) -> Option<u64> {
        match *self {
            Error::StreamTruncated { pos, .. }
            | Error::VarintTooLong { pos, .. }
            | Error::HeaderTag { pos, .. }
            | Error::StrayRecord { pos, .. }
            | Error::UnmatchedSectionEnd { pos } => Some(pos.stream),
            _ => None,
        }
    }
}

/// A short description of a Snappy error, without allocating.
pub(crate) fn snappy_reason(err: &snap::Error) -> &'static str {
    match err {
        snap::Error::TooBig { .. } => "a block too big to decompress",
        snap::Error::BufferTooSmall { .. } => "a block longer than its stated length",
        snap::Error::Empty => "an empty block",
        snap::Error::Header => "a bad length header",
        snap::Error::HeaderMismatch { .. } => "fewer bytes than the stated length",
        snap::Error::Literal { .. } => "a literal running past the block",
        snap::Error::CopyRead { .. } => "a copy running past the block",
        snap::Error::CopyWrite { .. } => "a copy running past the stated length",
        snap::Error::Offset { .. } => "a copy with an invalid offset",
        _ => "an invalid block",
    }
}

/// Bytes after the end of a file's stream (a file-end or stream-end record), after which the
/// profiler writes nothing. The real reader reads on and warns on each record it does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrailingData {
    /// File offset where the trailing data starts: for a Snappy file, the packet holding the
    /// first trailing byte; exact for a file without Snappy.
    pub offset: u64,
    /// Bytes from `offset` to the end of the file.
    pub size: u64,
    /// Offset in the logical stream of the first byte after the end record.
    pub stream_offset: u64,
    /// Bytes after the end record in the packet holding it (already decompressed).
    pub stream_bytes: u64,
}

/// Something a file holds that the real reader reads past, with or without a warning, and that
/// a careful user should hear of. Warnings never stop a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Warning {
    /// Bytes after the end of the stream ([`TrailingData`]).
    TrailingData(TrailingData),
    /// Records with a tag the format does not define, which the real reader skips with a
    /// warning each ("Unknown record type in trace file"). Counted, not listed one by one.
    UnknownRecords {
        /// How many.
        count: u64,
        /// The first one's tag.
        first_tag: u8,
        /// Where the first one starts.
        first: StreamPos,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::TrailingData(t) => write!(
                f,
                "data after the end of the stream: {} bytes from byte {:#x} to the end of the file \
                 (the stream ends at stream byte {:#x})",
                t.size, t.offset, t.stream_offset
            ),
            Warning::UnknownRecords {
                count,
                first_tag,
                first,
            } => write!(
                f,
                "records of unknown type, skipped as the real reader does: {count}, the first \
                 with tag {first_tag} at {first}"
            ),
        }
    }
}
