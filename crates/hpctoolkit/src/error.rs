//! Errors of the HPCToolkit database codec.
//!
//! Every variant that comes from bytes names the file ([`FileKind`]), the structure and field
//! (`&'static str`, spelled as in FORMATS.md, e.g. `"Context.pChildren"`) and the absolute byte
//! offset of that field, so that a user can open a hex editor at the right place. The type is
//! `Copy` and allocation-free, in the manner of gimli's error.

use crate::raw::FileKind;

/// An error while reading or writing an HPCToolkit database.
///
/// Displays as `<what happened>: <file> <field>: at byte 0x<offset>: <expected> but found
/// <seen>`, for example `out of order: profile.db Val.metricId: at byte 0x3c8: expected a value
/// greater than 39321 (sorted array) but found 3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file ends before a structure or array that the file points at.
    #[error(
        "file ends early: {} bytes missing in {file} {field}: at byte {offset:#x}: expected {needed:#x} bytes but the file holds {available:#x}", .needed.saturating_sub(*.available)
    )]
    Truncated {
        /// The file.
        file: FileKind,
        /// The structure or field being read.
        field: &'static str,
        /// Absolute offset where the read starts.
        offset: u64,
        /// Bytes the read needs.
        needed: u64,
        /// Bytes available from `offset` on.
        available: u64,
    },
    /// A structure lies past the head of the file that was read (a view made from a
    /// [`FileHead`](crate::read::FileHead) holds the header sections only).
    #[error(
        "not read: {file} {field}: at byte {offset:#x}: lies past the {held:#x} bytes of the file's head that were read"
    )]
    NotRead {
        /// The file.
        file: FileKind,
        /// The structure or field.
        field: &'static str,
        /// Its offset.
        offset: u64,
        /// Bytes of the head held.
        held: u64,
    },
    /// The file does not start with `HPCTOOLKIT`.
    #[error("not an HPCToolkit database file: {file} magic: at byte 0x0: expected \"HPCTOOLKIT\" but found \"{}\"", .found.escape_ascii())]
    BadMagic {
        /// The file.
        file: FileKind,
        /// The first 10 bytes.
        found: [u8; 10],
    },
    /// The 4-byte format identifier names another file type.
    #[error("another kind of HPCToolkit file: {file} format: at byte 0xa: expected \"{}\" but found \"{}\"", .file.format_id().escape_ascii(), .found.escape_ascii())]
    WrongFormat {
        /// The file that was expected.
        file: FileKind,
        /// The identifier found.
        found: [u8; 4],
    },
    /// The major version is not 4 (the only major version this crate reads).
    #[error(
        "unsupported version: {file} majorVersion: at byte 0xe: expected 4 but found {major}.{minor}"
    )]
    UnsupportedVersion {
        /// The file.
        file: FileKind,
        /// Major version found.
        major: u8,
        /// Minor version found.
        minor: u8,
    },
    /// The 8-byte footer is not the one of this file type.
    #[error("footer missing or damaged (file cut short?): {file} footer: at byte {offset:#x}: expected \"{}\" but found \"{}\"", .file.footer().escape_ascii(), .found.escape_ascii())]
    BadFooter {
        /// The file.
        file: FileKind,
        /// Offset of the footer.
        offset: u64,
        /// The last 8 bytes.
        found: [u8; 8],
    },
    /// A pointer (with the size of what it points at) leaves the region the format confines it to.
    #[error(
        "pointer outside its section: {file} {field}: at byte {offset:#x}: expected {size:#x} bytes within {start:#x}..{end:#x} but found a pointer to {pointer:#x}"
    )]
    OutOfBounds {
        /// The file.
        file: FileKind,
        /// The pointer field.
        field: &'static str,
        /// Offset of the pointer field.
        offset: u64,
        /// The pointer's value.
        pointer: u64,
        /// Bytes the pointed-at object occupies (saturated on overflow).
        size: u64,
        /// Start of the allowed region.
        start: u64,
        /// End (exclusive) of the allowed region.
        end: u64,
    },
    /// A stored structure size (the stride of an expandable structure's array) is smaller than the
    /// size this reader knows.
    #[error(
        "structure size too small: {file} {field}: at byte {offset:#x}: expected a size of at least {min:#x} but found {found:#x}"
    )]
    StrideTooSmall {
        /// The file.
        file: FileKind,
        /// The size field.
        field: &'static str,
        /// Offset of the size field.
        offset: u64,
        /// Smallest size this reader accepts.
        min: u64,
        /// Size found.
        found: u64,
    },
    /// A string has no terminating NUL inside its section.
    #[error(
        "string without its end: {file} {field}: at byte {offset:#x}: expected a NUL-terminated string within {start:#x}..{end:#x} but found none at {pointer:#x}"
    )]
    UnterminatedString {
        /// The file.
        file: FileKind,
        /// The `char*` field.
        field: &'static str,
        /// Offset of the pointer field.
        offset: u64,
        /// The pointer's value.
        pointer: u64,
        /// Start of the section.
        start: u64,
        /// End of the section.
        end: u64,
    },
    /// A string is not UTF-8.
    #[error(
        "string not UTF-8: {file} {field}: at byte {offset:#x}: expected a UTF-8 string but found invalid UTF-8 at {pointer:#x}"
    )]
    InvalidUtf8 {
        /// The file.
        file: FileKind,
        /// The `char*` field.
        field: &'static str,
        /// Offset of the pointer field.
        offset: u64,
        /// The string's start.
        pointer: u64,
    },
    /// An array that the format promises to be sorted is not.
    #[error(
        "out of order: {file} {field}: at byte {offset:#x}: expected a value greater than {previous} (sorted array) but found {found}"
    )]
    Unsorted {
        /// The file.
        file: FileKind,
        /// The sort key field.
        field: &'static str,
        /// Offset of the element out of order.
        offset: u64,
        /// The previous element's key.
        previous: u64,
        /// This element's key.
        found: u64,
    },
    /// A field holds a value the format forbids there.
    #[error(
        "invalid value: {file} {field}: at byte {offset:#x}: expected {expected} but found {found:#x}"
    )]
    Invalid {
        /// The file.
        file: FileKind,
        /// The field.
        field: &'static str,
        /// Offset of the field.
        offset: u64,
        /// What the format requires, in words.
        expected: &'static str,
        /// The value found.
        found: u64,
    },
    /// A cross-file reference points at nothing (e.g. a profIndex beyond profile.db's profiles).
    #[error(
        "reference to nothing: {file} {field}: at byte {offset:#x}: expected {expected} but found {found}"
    )]
    Dangling {
        /// The file holding the reference.
        file: FileKind,
        /// The referencing field.
        field: &'static str,
        /// Offset of the field.
        offset: u64,
        /// What it should reference, in words.
        expected: &'static str,
        /// The reference found.
        found: u64,
    },
    /// Two non-empty arrays, trace lines or strings that the format keeps apart share bytes.
    ///
    /// hpcprof never makes two value blocks, index arrays, identifier tuples or trace lines
    /// share a byte, and shares a string only whole (its interned string table); a file that
    /// aliases them would make every reader repeat the shared work once per alias, so each
    /// such pointer must name bytes of its own.
    #[error(
        "data used twice: {file} {field}: at byte {offset:#x}: expected {pointer:#x}..{end:#x} apart from the {other_field} stored at byte {other_offset:#x} ({other_pointer:#x}..{other_end:#x}) but found them overlapping"
    )]
    Overlap {
        /// The file.
        file: FileKind,
        /// The pointer field of the later range (by start).
        field: &'static str,
        /// Offset of that pointer field.
        offset: u64,
        /// Start of the range it points at.
        pointer: u64,
        /// End (exclusive) of that range.
        end: u64,
        /// The pointer field of the earlier range.
        other_field: &'static str,
        /// Offset of that pointer field.
        other_offset: u64,
        /// Start of the earlier range.
        other_pointer: u64,
        /// End (exclusive) of the earlier range.
        other_end: u64,
    },
    /// A count read from the file is larger than the remaining input could hold.
    #[error(transparent)]
    CountTooLarge(#[from] profcodec_common::CountTooLarge),
    /// The input ended early (from the shared byte cursor).
    #[error(transparent)]
    Cursor(#[from] profcodec_common::Truncated),
    /// A database file could not be read or written.
    #[error("{}: {kind}", match .file { Some(f) => f.file_name(), None => "database" })]
    Io {
        /// The file, when known.
        file: Option<FileKind>,
        /// What went wrong.
        kind: std::io::ErrorKind,
    },
    /// The profile model refused an entry while converting ([`crate::profile`]): a table
    /// outgrew its `u32` handles.
    #[cfg(feature = "profile")]
    #[error(transparent)]
    Model(#[from] profcodec_profile::ModelError),
    /// A value cannot be represented in the file format (for writers: a count or size that
    /// overflows its on-disk field).
    #[error("{field}: expected at most {max} but found {found}")]
    Unrepresentable {
        /// The field.
        field: &'static str,
        /// The largest value the field holds.
        max: u64,
        /// The value that did not fit.
        found: u64,
    },
}

impl Error {
    /// The absolute byte offset of the damage, when the error comes from bytes.
    pub fn offset(&self) -> Option<u64> {
        match *self {
            Error::Truncated { offset, .. }
            | Error::NotRead { offset, .. }
            | Error::BadFooter { offset, .. }
            | Error::OutOfBounds { offset, .. }
            | Error::StrideTooSmall { offset, .. }
            | Error::UnterminatedString { offset, .. }
            | Error::InvalidUtf8 { offset, .. }
            | Error::Unsorted { offset, .. }
            | Error::Invalid { offset, .. }
            | Error::Dangling { offset, .. }
            | Error::Overlap { offset, .. } => Some(offset),
            Error::BadMagic { .. } => Some(0),
            Error::WrongFormat { .. } => Some(0xa),
            Error::UnsupportedVersion { .. } => Some(0xe),
            Error::CountTooLarge(e) => Some(e.offset),
            Error::Cursor(e) => Some(e.offset),
            Error::Io { .. } | Error::Unrepresentable { .. } => None,
            #[cfg(feature = "profile")]
            Error::Model(_) => None,
        }
    }

    /// The file the error is about, when known.
    pub fn file(&self) -> Option<FileKind> {
        match *self {
            Error::Truncated { file, .. }
            | Error::NotRead { file, .. }
            | Error::BadMagic { file, .. }
            | Error::WrongFormat { file, .. }
            | Error::UnsupportedVersion { file, .. }
            | Error::BadFooter { file, .. }
            | Error::OutOfBounds { file, .. }
            | Error::StrideTooSmall { file, .. }
            | Error::UnterminatedString { file, .. }
            | Error::InvalidUtf8 { file, .. }
            | Error::Unsorted { file, .. }
            | Error::Invalid { file, .. }
            | Error::Dangling { file, .. }
            | Error::Overlap { file, .. } => Some(file),
            Error::Io { file, .. } => file,
            Error::CountTooLarge(_) | Error::Cursor(_) | Error::Unrepresentable { .. } => None,
            #[cfg(feature = "profile")]
            Error::Model(_) => None,
        }
    }

    /// An [`Error::Io`] for `file`.
    pub fn io(file: Option<FileKind>, err: &std::io::Error) -> Self {
        Error::Io {
            file,
            kind: err.kind(),
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        Error::io(None, &err)
    }
}
