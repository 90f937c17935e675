//! The bytes on disk: tags, flags and the two lexical encodings (nytprof-v5.md, "Lexical layer").
//!
//! No record framing exists: a record is one tag byte and fields that follow each other directly.
//! Integers use a big-endian prefix-length varint whose first byte's high bits give the length;
//! doubles are the raw 8 bytes of an x86-64 `NV` (little-endian); strings are a tag byte, a varint
//! length and the bytes.

use profcodec_common::{Cursor, Truncated};

/// The file's first bytes (followed by `<major> <minor>\n`).
pub const MAGIC: &[u8] = b"NYTProf ";
/// The only major version Devel::NYTProf 6.12 reads.
pub const MAJOR: u32 = 5;
/// The minor version it writes.
pub const MINOR: u32 = 0;

/// Record tags (FileHandle.h:52-69).
pub mod tag {
    /// `key=value\n` attribute line.
    pub const ATTRIBUTE: u8 = b':';
    /// `key=value\n` option line.
    pub const OPTION: u8 = b'!';
    /// Comment line.
    pub const COMMENT: u8 = b'#';
    /// The rest of the file is one zlib stream.
    pub const START_DEFLATE: u8 = b'z';
    /// A process starts.
    pub const PID_START: u8 = b'P';
    /// A process ends.
    pub const PID_END: u8 = b'p';
    /// A new file id.
    pub const NEW_FID: u8 = b'@';
    /// Statement time.
    pub const TIME_LINE: u8 = b'+';
    /// Statement time with block and sub lines.
    pub const TIME_BLOCK: u8 = b'*';
    /// The next statement is not counted.
    pub const DISCOUNT: u8 = b'-';
    /// One saved source line.
    pub const SRC_LINE: u8 = b'S';
    /// Where a sub is defined.
    pub const SUB_INFO: u8 = b's';
    /// Calls of a sub from one place.
    pub const SUB_CALLERS: u8 = b'c';
    /// A sub is entered (calls=2).
    pub const SUB_ENTRY: u8 = b'>';
    /// A sub returns.
    pub const SUB_RETURN: u8 = b'<';
    /// String of bytes.
    pub const STR_BYTES: u8 = b'\'';
    /// String of UTF-8 text.
    pub const STR_UTF8: u8 = b'"';
}

/// `NEW_FID` flags (NYTProf.xs:128-136).
pub mod fid_flags {
    /// A `.pmc` file.
    pub const IS_PMC: u32 = 0x1;
    /// First seen through a statement.
    pub const VIA_STMT: u32 = 0x2;
    /// First seen through a sub call.
    pub const VIA_SUB: u32 = 0x4;
    /// An AutoSplit file.
    pub const IS_AUTOSPLIT: u32 = 0x8;
    /// Perl kept the source lines.
    pub const HAS_SRC: u32 = 0x10;
    /// The source is saved in the profile (`S` records).
    pub const SAVE_SRC: u32 = 0x20;
    /// An alias of another fid.
    pub const IS_ALIAS: u32 = 0x40;
    /// A fake file.
    pub const IS_FAKE: u32 = 0x80;
    /// A string eval.
    pub const IS_EVAL: u32 = 0x100;
}

/// Reads a u32 varint (FileHandle.xs `read_u32` :763-801).
#[inline]
pub fn read_u32(c: &mut Cursor<'_>, what: &'static str) -> Result<u32, Truncated> {
    let b0 = c.u8(what)?;
    Ok(match b0 {
        0x00..=0x7f => u32::from(b0),
        0x80..=0xbf => {
            let b = c.array::<1>(what)?;
            (u32::from(b0 & 0x7f) << 8) | u32::from(b[0])
        }
        0xc0..=0xdf => {
            let b = c.array::<2>(what)?;
            (u32::from(b0 & 0x1f) << 16) | (u32::from(b[0]) << 8) | u32::from(b[1])
        }
        // The reader accepts 0xE0..=0xFE as the 4-byte form (it masks with 0x0f).
        0xe0..=0xfe => {
            let b = c.array::<3>(what)?;
            (u32::from(b0 & 0x0f) << 24)
                | (u32::from(b[0]) << 16)
                | (u32::from(b[1]) << 8)
                | u32::from(b[2])
        }
        0xff => c.u32_be(what)?,
    })
}

/// Reads an i32: the two's-complement bits as a u32 varint (:804-807).
#[inline]
pub fn read_i32(c: &mut Cursor<'_>, what: &'static str) -> Result<i32, Truncated> {
    read_u32(c, what).map(|v| v as i32)
}

/// Reads an `NV`: 8 bytes, little-endian on the x86-64 hosts the format is written on.
#[inline]
pub fn read_nv(c: &mut Cursor<'_>, what: &'static str) -> Result<f64, Truncated> {
    c.f64_le(what)
}

/// The canonical (shortest) encoding of `v`, as `output_tag_u32` writes it (:711-746): the
/// bytes and how many of them are used.
#[inline]
pub fn encode_u32(v: u32) -> ([u8; 5], usize) {
    if v < 0x80 {
        ([v as u8, 0, 0, 0, 0], 1)
    } else if v < 0x4000 {
        ([(v >> 8) as u8 | 0x80, v as u8, 0, 0, 0], 2)
    } else if v < 0x20_0000 {
        ([(v >> 16) as u8 | 0xc0, (v >> 8) as u8, v as u8, 0, 0], 3)
    } else if v < 0x1000_0000 {
        (
            [
                (v >> 24) as u8 | 0xe0,
                (v >> 16) as u8,
                (v >> 8) as u8,
                v as u8,
                0,
            ],
            4,
        )
    } else {
        let b = v.to_be_bytes();
        ([0xff, b[0], b[1], b[2], b[3]], 5)
    }
}

/// Appends the varint encoding of `v`.
#[inline]
pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    let (b, n) = encode_u32(v);
    out.extend_from_slice(&b[..n]);
}

/// Appends an i32 as the varint of its two's-complement bits.
#[inline]
pub fn put_i32(out: &mut Vec<u8>, v: i32) {
    put_u32(out, v as u32);
}

/// Appends an `NV` (8 little-endian bytes).
#[inline]
pub fn put_nv(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&v.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        let enc = |v| {
            let mut o = Vec::new();
            put_u32(&mut o, v);
            o
        };
        assert_eq!(enc(300), [0x81, 0x2c]);
        assert_eq!(enc(70000), [0xc1, 0x11, 0x70]);
        assert_eq!(enc(0x1234_5678), [0xff, 0x12, 0x34, 0x56, 0x78]);
        let mut o = Vec::new();
        put_i32(&mut o, -5);
        assert_eq!(o, [0xff, 0xff, 0xff, 0xff, 0xfb]);
        let mut c = Cursor::new(&[0xfe, 1, 2, 3], 0);
        assert_eq!(read_u32(&mut c, "x"), Ok(0x0e01_0203));
    }
}
