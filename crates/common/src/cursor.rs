//! An offset-tracking cursor over a byte slice.

/// The input ended before a field could be read.
///
/// Displays in words first ("file ends early: 11 bytes missing in ..."), then the field, offset and
/// sizes, the wording every format crate uses for a cut-short file.
///
/// `Copy` and allocation-free (in the manner of gimli's error type) so that hot decoding loops can
/// return it cheaply; each format crate wraps it in its own error enum.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "file ends early: {} bytes missing in {what}: at byte {offset:#x}: expected {needed} bytes but found {available}",
    needed.saturating_sub(*available)
)]
pub struct Truncated {
    /// Absolute byte offset (in the whole file or stream) where the field starts.
    pub offset: u64,
    /// The field or structure being read.
    pub what: &'static str,
    /// Bytes the field needs.
    pub needed: u64,
    /// Bytes that were left.
    pub available: u64,
}

/// A reader over `&[u8]` that tracks the absolute offset of its position.
///
/// `base` is the absolute offset of `data[0]` (for a section slice, the section's file offset), so
/// errors report file offsets, not slice offsets.
#[derive(Debug, Clone, Copy)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

macro_rules! int_readers {
    ($($le:ident, $be:ident, $t:ty;)*) => {$(
        #[doc = concat!("Reads a little-endian `", stringify!($t), "`.")]
        #[inline]
        pub fn $le(&mut self, what: &'static str) -> Result<$t, Truncated> {
            Ok(<$t>::from_le_bytes(self.array(what)?))
        }
        #[doc = concat!("Reads a big-endian `", stringify!($t), "`.")]
        #[inline]
        pub fn $be(&mut self, what: &'static str) -> Result<$t, Truncated> {
            Ok(<$t>::from_be_bytes(self.array(what)?))
        }
    )*};
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`, whose first byte is at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Cursor { data, pos: 0, base }
    }

    /// Absolute offset of the next byte to be read.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Position relative to the start of the slice.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The unread bytes, without consuming them.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// True when every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos == self.data.len()
    }

    /// The error for a read of `needed` bytes at the current position.
    #[inline]
    pub fn truncated(&self, what: &'static str, needed: u64) -> Truncated {
        Truncated {
            offset: self.offset(),
            what,
            needed,
            available: self.remaining() as u64,
        }
    }

    /// Consumes `n` bytes and returns them, borrowed from the input.
    #[inline]
    pub fn bytes(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Truncated> {
        if n > self.remaining() {
            return Err(self.truncated(what, n as u64));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// Consumes `n` bytes (a `u64` count from a file) after checking it fits in the input.
    #[inline]
    pub fn bytes_u64(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], Truncated> {
        if n > self.remaining() as u64 {
            return Err(self.truncated(what, n));
        }
        self.bytes(n as usize, what)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize, what: &'static str) -> Result<(), Truncated> {
        self.bytes(n, what).map(|_| ())
    }

    /// Reads a fixed-size array.
    #[inline]
    pub fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Truncated> {
        let b = self.bytes(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    /// Reads one byte.
    #[inline]
    pub fn u8(&mut self, what: &'static str) -> Result<u8, Truncated> {
        match self.data.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(what, 1)),
        }
    }

    /// Looks at the next byte without consuming it.
    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    int_readers! {
        u16_le, u16_be, u16;
        u32_le, u32_be, u32;
        u64_le, u64_be, u64;
        i32_le, i32_be, i32;
        i64_le, i64_be, i64;
        f64_le, f64_be, f64;
    }

    /// Reads bytes up to (not including) a NUL and consumes the NUL too.
    pub fn cstr(&mut self, what: &'static str) -> Result<&'a [u8], Truncated> {
        let rest = self.rest();
        match rest.iter().position(|&b| b == 0) {
            Some(n) => {
                self.pos += n + 1;
                Ok(&rest[..n])
            }
            None => Err(self.truncated(what, rest.len() as u64 + 1)),
        }
    }

    /// A sub-cursor over the next `n` bytes (consumed from this one), keeping absolute offsets.
    pub fn sub(&mut self, n: usize, what: &'static str) -> Result<Cursor<'a>, Truncated> {
        let base = self.offset();
        Ok(Cursor::new(self.bytes(n, what)?, base))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_absolute_offsets() {
        let mut c = Cursor::new(&[1, 2, 3], 0x100);
        assert_eq!(c.u8("a"), Ok(1));
        let e = c.u32_be("b").unwrap_err();
        assert_eq!(
            e,
            Truncated {
                offset: 0x101,
                what: "b",
                needed: 4,
                available: 2
            }
        );
        assert_eq!(
            e.to_string(),
            "file ends early: 2 bytes missing in b: at byte 0x101: expected 4 bytes but found 2"
        );
    }

    #[test]
    fn cstr_and_sub() {
        let mut c = Cursor::new(b"ab\0cdef", 10);
        assert_eq!(c.cstr("s"), Ok(&b"ab"[..]));
        let mut s = c.sub(2, "sub").unwrap();
        assert_eq!(s.offset(), 13);
        assert_eq!(s.bytes(2, "x"), Ok(&b"cd"[..]));
        assert!(c.cstr("t").is_err());
        assert_eq!(c.bytes_u64(u64::MAX, "huge").unwrap_err().needed, u64::MAX);
    }
}
