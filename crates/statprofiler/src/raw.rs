//! The bytes on disk: magic, tags, limits and the two primitives (the crate docs, "Container",
//! "Primitives"). No logic beyond encoding a single varint.

/// The 13 bytes every file starts with, without a NUL (the crate docs, Container; T:13,1111).
pub const MAGIC: &[u8; 13] = b"=statprofiler";

/// The only format version the real reader accepts: one raw byte after the magic (T:14,488-492).
pub const FORMAT_VERSION: u8 = 1;

/// Bytes before the first packet: the magic and the raw version byte.
pub const PROLOGUE_LEN: usize = MAGIC.len() + 1;

/// The most bytes one Snappy packet may decompress to: the writer's and the reader's buffer size
/// (H:18-19, `OUTPUT_BUFFER_SIZE` with `SNAPPY`); the reader refuses larger packets (S:37-41).
pub const MAX_PACKET_LEN: usize = 32000;

/// The buffer size of a build without Snappy (H:21); packets do not exist there, the logical
/// stream is stored as is.
pub const PLAIN_BUFFER_LEN: usize = 8192;

/// The size of a genealogy id: 6 native-order `uint32` (R:436-449).
pub const ID_LEN: usize = 24;

/// Record tags of the logical stream (T:22-43).
pub mod tag {
    /// Body: a sample starts (weight, op name).
    pub const SAMPLE_START: u8 = 1;
    /// Body: a sample ends.
    pub const SAMPLE_END: u8 = 2;
    /// Body: a Perl sub frame.
    pub const SUB_FRAME: u8 = 3;
    /// Body: an eval STRING frame.
    pub const EVAL_FRAME: u8 = 4;
    /// Body: an XSUB frame.
    pub const XSUB_FRAME: u8 = 5;
    /// Body: a main program (or require/do FILE) frame.
    pub const MAIN_FRAME: u8 = 6;
    /// Obsolete, never written; skipped as unknown.
    pub const EVAL_STRING: u8 = 7;
    /// Body: the source of an eval STRING.
    pub const EVAL_SEQ: u8 = 8;
    /// Body: this file ends, more files of the process follow.
    pub const FILE_END: u8 = 196;
    /// Body: the process stopped profiling.
    pub const STREAM_END: u8 = 197;
    /// Body: a section starts.
    pub const SECTION_START: u8 = 198;
    /// Body: a section ends.
    pub const SECTION_END: u8 = 199;
    /// Header and body: custom metadata.
    pub const CUSTOM_META: u8 = 200;
    /// Header: perl version.
    pub const PERL_VERSION: u8 = 201;
    /// Header: tick duration in microseconds.
    pub const TICK_DURATION: u8 = 202;
    /// Header: stack collection depth.
    pub const STACK_DEPTH: u8 = 203;
    /// Header: library version, reserved and never written (the reader refuses it).
    pub const LIBRARY_VERSION: u8 = 204;
    /// Header: genealogy (ids and ordinals).
    pub const GENEALOGY: u8 = 205;
    /// Header: end of the header.
    pub const HEADER_END: u8 = 254;
}

/// The longest varint the writer produces (a `uint32` in 7-bit groups). Longer ones are refused,
/// which keeps a run of continuation bytes from costing more than constant work.
pub const MAX_VARINT_LEN: usize = 5;

/// Encodes `value` as a big-endian base-128 varint into the tail of `out`; returns the slice used
/// (the crate docs, Primitives; T:356-367).
#[inline]
pub fn encode_varint(value: u32, out: &mut [u8; MAX_VARINT_LEN]) -> &[u8] {
    let mut v = value;
    let mut i = MAX_VARINT_LEN - 1;
    out[i] = (v & 0x7f) as u8;
    v >>= 7;
    while v != 0 {
        i -= 1;
        out[i] = (v & 0x7f) as u8 | 0x80;
        v >>= 7;
    }
    &out[i..]
}

/// Decodes a big-endian base-128 varint from the start of `bytes` as the reader does (bits beyond
/// 32 are shifted out); returns the value and the bytes used, or `None` when `bytes` ends first or
/// the varint is longer than [`MAX_VARINT_LEN`].
pub fn decode_varint(bytes: &[u8]) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    for (i, &b) in bytes.iter().take(MAX_VARINT_LEN).enumerate() {
        value = (value << 7) | u32::from(b & 0x7f);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
}

/// The C++ writer's `varint_size()`, which caps at 4 (T:292-298). It is only used to compute the
/// (wrong) record lengths the real writer stores, never to encode.
#[inline]
pub const fn cpp_varint_size(value: u32) -> u32 {
    if value < 1 << 7 {
        1
    } else if value < 1 << 14 {
        2
    } else if value < 1 << 21 {
        3
    } else {
        4
    }
}

/// The C++ writer's `string_size()`: varint size of the length plus the length, WITHOUT the flag
/// byte (T:300-313), so stored lengths are short by one per string.
#[inline]
pub const fn cpp_string_size(len: usize) -> u32 {
    let len = len as u32;
    cpp_varint_size(len).wrapping_add(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_is_big_endian() {
        let mut b = [0; MAX_VARINT_LEN];
        assert_eq!(encode_varint(1000, &mut b), &[0x87, 0x68]);
        assert_eq!(encode_varint(0, &mut b), &[0]);
        assert_eq!(
            encode_varint(u32::MAX, &mut b),
            &[0x8f, 0xff, 0xff, 0xff, 0x7f]
        );
        assert_eq!(cpp_varint_size(u32::MAX), 4);
        assert_eq!(cpp_string_size(3), 4);
    }
}
