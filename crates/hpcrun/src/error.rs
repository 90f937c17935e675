//! The error type of every reader in this crate.

use profcodec_common::{CountTooLarge, Truncated};

/// Why a measurement or trace file could not be read.
///
/// Every variant knows the byte offset of the damage ([`Error::offset`]) and the structure or
/// field being read; the messages follow `<plain words>: <field>: at byte 0x<offset>: <expected> but
/// found <seen>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended inside a field.
    #[error(transparent)]
    Truncated(#[from] Truncated),
    /// A count is larger than the rest of the input could hold.
    #[error(transparent)]
    CountTooLarge(#[from] CountTooLarge),
    /// The file does not start with an hpcrun or hpctrace magic.
    #[error("not an hpcrun measurement or trace: magic: at byte 0x0: expected \"HPCRUN____\", \"HPCRUN-profile____\" or \"HPCRUN-trace______\" but found {}", show_bytes(.found))]
    BadMagic {
        /// Up to the first 18 bytes of the input.
        found: [u8; 18],
    },
    /// The magic names a version (or byte order) this crate does not read.
    #[error("a version this reader does not know: version: at byte {offset:#x}: expected one of 02.00l, 01.98b, 02.00b, 03.00b, 04.00b (profiles) or 01.00b, 01.01b (traces) but found {}", show_bytes(.found))]
    UnsupportedVersion {
        /// Offset of the version string.
        offset: u64,
        /// The six bytes of version and byte order.
        found: [u8; 6],
    },
    /// A field holds a value the format does not allow.
    #[error(
        "a field holds a value the format does not allow: {what}: at byte {offset:#x}: expected {expected} but found {found:#x}"
    )]
    BadValue {
        /// Offset of the field.
        offset: u64,
        /// The field.
        what: &'static str,
        /// What the format allows.
        expected: &'static str,
        /// The value found.
        found: u64,
    },
    /// A section of a 04.00 file did not end where its footer says it ends.
    #[error(
        "a section does not end where the footer says: {what}: at byte {offset:#x}: expected the section to end at byte {expected:#x} but it ended at byte {found:#x}"
    )]
    SectionEnd {
        /// Start of the section.
        offset: u64,
        /// The section.
        what: &'static str,
        /// End recorded in the footer.
        expected: u64,
        /// Where the decoded section ended.
        found: u64,
    },
    /// The input could not be read (a streamed trace, [`crate::TraceStream`]).
    #[error("the input could not be read: at byte {offset:#x}: {kind}")]
    Io {
        /// How far the input had been read.
        offset: u64,
        /// What the operating system said.
        kind: std::io::ErrorKind,
    },
    /// Bytes follow the end of the measurement: after a 04.00 footer, or after the last epoch.
    /// hpcrun writes none; [`crate::read_measurement_prefix`] reads the measurement before them.
    #[error(
        "data after the end of the measurement: {size} trailing bytes: at byte {offset:#x}: expected the end of the file but found more bytes"
    )]
    TrailingData {
        /// Where the trailing bytes start (the end of the measurement).
        offset: u64,
        /// How many bytes follow.
        size: u64,
    },
}

impl Error {
    /// The byte offset of the damage.
    pub fn offset(&self) -> Option<u64> {
        Some(match self {
            Error::Truncated(t) => t.offset,
            Error::CountTooLarge(c) => c.offset,
            Error::BadMagic { .. } => 0,
            Error::UnsupportedVersion { offset, .. }
            | Error::BadValue { offset, .. }
            | Error::SectionEnd { offset, .. }
            | Error::Io { offset, .. }
            | Error::TrailingData { offset, .. } => *offset,
        })
    }

    pub(crate) fn bad(offset: u64, what: &'static str, expected: &'static str, found: u64) -> Self {
        Error::BadValue {
            offset,
            what,
            expected,
            found,
        }
    }
}

fn show_bytes(bytes: &[u8]) -> String {
    let text: String = bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() {
                (b as char).to_string()
            } else {
                format!("\\x{b:02x}")
            }
        })
        .collect();
    format!("\"{text}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_follow_the_house_style() {
        let e = Error::bad(0x18, "cct node flags", "0 or 1", 7);
        assert_eq!(
            e.to_string(),
            "a field holds a value the format does not allow: cct node flags: at byte 0x18: \
             expected 0 or 1 but found 0x7"
        );
        assert_eq!(e.offset(), Some(0x18));
        let v = Error::UnsupportedVersion {
            offset: 18,
            found: *b"09.00b",
        };
        assert!(v.to_string().contains("\"09.00b\""));
    }
}
