//! Text output in chunks: the exporters build lines in a buffer and hand it to the writer when
//! it is full, so an unbuffered writer costs one call per chunk, not one per number.

use std::io::{self, Write};

/// The size at which the buffer is handed to the writer.
const CHUNK: usize = 1 << 16;

/// A chunked text writer over `W`.
pub(crate) struct TextOut<W: Write> {
    buf: Vec<u8>,
    out: W,
}

impl<W: Write> TextOut<W> {
    pub(crate) fn new(out: W) -> Self {
        TextOut {
            buf: Vec::with_capacity(CHUNK + 4096),
            out,
        }
    }

    /// Hands the buffer to the writer once it holds a chunk.
    #[inline]
    pub(crate) fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buf.len() >= CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }

    #[inline]
    pub(crate) fn str(&mut self, s: &str) {
        self.buf.extend_from_slice(s.as_bytes());
    }

    #[inline]
    pub(crate) fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    #[inline]
    pub(crate) fn int(&mut self, v: i64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    #[inline]
    pub(crate) fn uint(&mut self, v: u64) {
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
    }

    /// A finite number in the shortest form that reads back equal (integers without a
    /// fraction); a non-finite one as 0, which JSON and the viewers accept.
    pub(crate) fn float(&mut self, v: f64) {
        if !v.is_finite() {
            self.byte(b'0');
        } else if v.fract() == 0.0 && v.abs() < 9e15 {
            self.int(v as i64);
        } else {
            self.buf
                .extend_from_slice(ryu::Buffer::new().format_finite(v).as_bytes());
        }
    }

    /// A JSON string literal of `s`, quoted and escaped.
    pub(crate) fn json_str(&mut self, s: &str) {
        // serde_json's escaping writes into a Vec, which never fails.
        let _ = serde_json::to_writer(&mut self.buf, s);
    }

    /// Writes what is left and flushes the writer.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }
}
