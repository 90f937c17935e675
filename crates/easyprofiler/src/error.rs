//! Errors and oddities (the workspace's error style).
//!
//! Every variant is `Copy` and carries the byte offset of the damage and the name of the field, in
//! the workspace style `<what>: at byte 0x<offset>: <expected> but found <seen>`.

use profcodec_common::{CountTooLarge, Truncated};

/// Why a capture could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside a field.
    #[error(transparent)]
    Truncated(#[from] Truncated),
    /// A count cannot fit in the bytes that remain.
    #[error(transparent)]
    CountTooLarge(#[from] CountTooLarge),
    /// The file does not start with (or a section does not end with) the signature `ysaE`.
    #[error(
        "{what}: at byte {offset:#x}: expected the signature 0x45617379 but found {found:#010x}"
    )]
    BadSignature {
        /// Offset of the signature field.
        offset: u64,
        /// Which signature.
        what: &'static str,
        /// The value read.
        found: u32,
    },
    /// The version is below 0.1.0, which the C++ reader refuses.
    #[error(
        "header version: at byte {offset:#x}: expected at least 0x00010000 but found {found:#010x}"
    )]
    UnsupportedVersion {
        /// Offset of the version field.
        offset: u64,
        /// The version read.
        found: u32,
    },
    /// A size-prefixed item is smaller than its fixed part.
    #[error("{what}: at byte {offset:#x}: expected a size of at least {min} but found {found}")]
    TooSmall {
        /// Offset of the size prefix.
        offset: u64,
        /// The item.
        what: &'static str,
        /// The smallest valid size.
        min: u64,
        /// The size read.
        found: u64,
    },
    /// A string field does not end with its NUL.
    #[error(
        "{what}: at byte {offset:#x}: expected a NUL as the field's last byte but found {found:#04x}"
    )]
    MissingNul {
        /// Offset of the field's last byte.
        offset: u64,
        /// The field.
        what: &'static str,
        /// The byte found instead.
        found: u8,
    },
    /// A value record's data size disagrees with its record size.
    #[error(
        "value data size: at byte {offset:#x}: expected {expected} (record size - 34) but found {found}"
    )]
    ValueSize {
        /// Offset of the data-size field.
        offset: u64,
        /// The size the record leaves for data.
        expected: u64,
        /// The data size read.
        found: u64,
    },
    /// A record refers to a descriptor id that is out of range or an empty slot.
    #[error(
        "record descriptor id: at byte {offset:#x}: expected a descriptor below {count} that is present but found {id}"
    )]
    BadDescriptorId {
        /// Offset of the record's size prefix.
        offset: u64,
        /// The id read.
        id: u32,
        /// Number of descriptor slots.
        count: u32,
    },
    /// Strict mode: the C++ reader refuses this file.
    #[error("strict mode refuses the file (the C++ reader does): {0}")]
    Refused(Oddity),
}

impl Error {
    /// The byte offset of the damage, when known.
    pub fn offset(&self) -> Option<u64> {
        Some(match self {
            Error::Truncated(t) => t.offset,
            Error::CountTooLarge(c) => c.offset,
            Error::BadSignature { offset, .. }
            | Error::UnsupportedVersion { offset, .. }
            | Error::TooSmall { offset, .. }
            | Error::MissingNul { offset, .. }
            | Error::ValueSize { offset, .. }
            | Error::BadDescriptorId { offset, .. } => *offset,
            Error::Refused(o) => o.offset(),
        })
    }
}

/// Something the tolerant mode reads but reports, and that the C++ reader (strict mode) may refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Oddity {
    /// A header counter is zero (the C++ reader refuses every one of these).
    #[error("{what}: at byte {offset:#x}: expected a non-zero value but found 0")]
    ZeroCounter {
        /// Offset of the field.
        offset: u64,
        /// The counter.
        what: &'static str,
    },
    /// The 2.1 header padding is not zero.
    #[error("header padding: at byte {offset:#x}: expected 0 but found {found}")]
    NonZeroPadding {
        /// Offset of the field.
        offset: u64,
        /// Value read.
        found: u16,
    },
    /// The records kept (after dropping those before the capture's begin) differ from
    /// `blocks_count`.
    #[error(
        "header blocks_count: at byte {offset:#x}: expected {found} (records kept) but found {header}"
    )]
    BlocksCount {
        /// Offset of the header field.
        offset: u64,
        /// The header's count.
        header: u64,
        /// The count of records kept.
        found: u64,
    },
    /// The records occupy more bytes than `memory_size` says.
    #[error(
        "header memory_size: at byte {offset:#x}: expected at least {found} but found {header}"
    )]
    MemorySizeExceeded {
        /// Offset of the header field.
        offset: u64,
        /// The header's size.
        header: u64,
        /// Bytes the records occupy.
        found: u64,
    },
    /// The records occupy fewer bytes than `memory_size` says (harmless to the C++ reader).
    #[error("header memory_size: at byte {offset:#x}: expected {found} but found {header}")]
    MemorySizeLarger {
        /// Offset of the header field.
        offset: u64,
        /// The header's size.
        header: u64,
        /// Bytes the records occupy.
        found: u64,
    },
    /// The descriptors occupy more bytes than `descriptors_memory_size` says (the C++ reader
    /// overruns its buffer).
    #[error(
        "header descriptors_memory_size: at byte {offset:#x}: expected at least {found} but found {header}"
    )]
    DescriptorMemoryExceeded {
        /// Offset of the header field.
        offset: u64,
        /// The header's size.
        header: u64,
        /// Bytes the descriptors occupy.
        found: u64,
    },
    /// Fewer threads than `threads_count` before the end of the file.
    #[error(
        "header threads_count: at byte {offset:#x}: expected {header} threads but found {found}"
    )]
    FewerThreads {
        /// Offset of the header field.
        offset: u64,
        /// The header's count.
        header: u64,
        /// Threads read.
        found: u64,
    },
    /// A block tree deeper than the C++ reader's limit of 254.
    #[error("block nesting: at byte {offset:#x}: expected a depth below 254 but found 254")]
    DepthLimit {
        /// Offset of the record that would exceed the limit.
        offset: u64,
    },
    /// The file ends where an end signature could be (the C++ reader accepts this).
    #[error(
        "{what}: at byte {offset:#x}: expected the end signature but found the end of the file"
    )]
    MissingEndMark {
        /// Offset where the mark would be.
        offset: u64,
        /// Which mark.
        what: &'static str,
    },
    /// Bytes after everything the reader reads (ignored by the C++ reader).
    #[error(
        "trailing bytes: at byte {offset:#x}: expected the end of the file but found {len} more bytes"
    )]
    TrailingBytes {
        /// Offset of the first trailing byte.
        offset: u64,
        /// How many bytes.
        len: u64,
    },
}

impl Oddity {
    /// The byte offset the oddity refers to.
    pub fn offset(&self) -> u64 {
        match *self {
            Oddity::ZeroCounter { offset, .. }
            | Oddity::NonZeroPadding { offset, .. }
            | Oddity::BlocksCount { offset, .. }
            | Oddity::MemorySizeExceeded { offset, .. }
            | Oddity::MemorySizeLarger { offset, .. }
            | Oddity::DescriptorMemoryExceeded { offset, .. }
            | Oddity::FewerThreads { offset, .. }
            | Oddity::DepthLimit { offset }
            | Oddity::MissingEndMark { offset, .. }
            | Oddity::TrailingBytes { offset, .. } => offset,
        }
    }

    /// True when the C++ reader refuses a file with this oddity (strict mode turns it into
    /// [`Error::Refused`]).
    pub fn cpp_refuses(&self) -> bool {
        matches!(
            self,
            Oddity::ZeroCounter { .. }
                | Oddity::NonZeroPadding { .. }
                | Oddity::BlocksCount { .. }
                | Oddity::MemorySizeExceeded { .. }
                | Oddity::DescriptorMemoryExceeded { .. }
                | Oddity::DepthLimit { .. }
        )
    }
}

/// Why a model could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The target version cannot carry something in the model.
    #[error("cannot write version {version}: {what}")]
    Unrepresentable {
        /// The version being written.
        version: crate::Version,
        /// What does not fit.
        what: &'static str,
    },
    /// An item is larger than its u16 size prefix can say.
    #[error("{what}: {size} bytes do not fit a u16 size prefix")]
    TooLarge {
        /// The item.
        what: &'static str,
        /// Its size.
        size: usize,
    },
    /// The output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
