//! Writing: the logical stream with the real writer's length values, packetised as the real
//! writer's buffer does ([`Writer`]), and sessions with rotation ([`SessionWriter`]).
//!
//! The packet boundaries follow `OutputBuffer` (T:191-232): a 32000 byte buffer, flushed into a
//! packet when the next write call (a tag byte, a varint, a string's flag, length or bytes) would
//! not fit, after the header, and on [`Writer::flush`] / [`Writer::finish`]. A rewrite of a real
//! file therefore gives the same packets unless the profiler flushed at a point of its own (at a
//! `fork`, `prepare_fork`, R:1107-1115); the compressed bytes differ only where snap's compressor
//! chooses other matches than csnappy's.

use std::io::{self, Write};

use crate::model::{Container, Frame, Header, PerlText, Record};
use crate::raw::{
    FORMAT_VERSION, MAGIC, MAX_PACKET_LEN, MAX_VARINT_LEN, PLAIN_BUFFER_LEN, cpp_string_size,
    cpp_varint_size, encode_varint, tag,
};

mod session;
pub use session::{SessionWriter, session_file_name};

/// The real writer's `OutputBuffer` (T:191-260).
#[derive(Debug)]
struct Out<W> {
    out: W,
    container: Container,
    buf: Vec<u8>,
    limit: usize,
    /// Bytes written to `out` so far.
    written: u64,
    encoder: snap::raw::Encoder,
    block: Vec<u8>,
}

impl<W: Write> Out<W> {
    fn new(out: W, container: Container) -> Self {
        let limit = match container {
            Container::Snappy => MAX_PACKET_LEN,
            Container::Plain => PLAIN_BUFFER_LEN,
        };
        Out {
            out,
            container,
            buf: Vec::with_capacity(limit),
            limit,
            written: 0,
            encoder: snap::raw::Encoder::new(),
            block: Vec::new(),
        }
    }

    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// `flush_buffer` (T:202-216): one packet per buffer.
    fn flush_buffer(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        match self.container {
            Container::Snappy => {
                self.block
                    .resize(snap::raw::max_compress_len(self.buf.len()), 0);
                let n = self
                    .encoder
                    .compress(&self.buf, &mut self.block)
                    .map_err(io::Error::other)?;
                // 32000 bytes compress to at most 37365, which fits the u16.
                let len = u16::try_from(n).map_err(io::Error::other)?;
                self.out.write_all(&len.to_be_bytes())?;
                self.out.write_all(&self.block[..n])?;
                self.written += 2 + n as u64;
            }
            Container::Plain => {
                self.out.write_all(&self.buf)?;
                self.written += self.buf.len() as u64;
            }
        }
        self.buf.clear();
        Ok(())
    }

    #[inline]
    fn byte(&mut self, b: u8) -> io::Result<()> {
        if self.buf.len() + 1 > self.limit {
            self.flush_buffer()?;
        }
        self.buf.push(b);
        Ok(())
    }

    /// `write_bytes` (T:223-244): one call is never split unless larger than the buffer.
    #[inline]
    fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        if self.buf.len() + b.len() > self.limit {
            self.flush_buffer()?;
        }
        if b.len() > self.limit {
            return match self.container {
                Container::Snappy => {
                    for chunk in b.chunks(self.limit) {
                        self.bytes(chunk)?;
                    }
                    Ok(())
                }
                Container::Plain => self.raw(b),
            };
        }
        self.buf.extend_from_slice(b);
        Ok(())
    }

    #[inline]
    fn varint(&mut self, v: u32) -> io::Result<()> {
        let mut tmp = [0u8; MAX_VARINT_LEN];
        let enc = encode_varint(v, &mut tmp);
        self.bytes(enc)
    }

    /// `write_string` (T:369-381).
    #[inline]
    fn string(&mut self, s: &impl PerlText) -> io::Result<()> {
        self.byte(s.flags())?;
        self.varint(s.bytes().len() as u32)?;
        self.bytes(s.bytes())
    }

    /// `position()` (T:240-243): bytes on disk plus bytes buffered.
    fn position(&self) -> u64 {
        self.written + self.buf.len() as u64
    }
}

/// Writes one file: prologue, header, then records exactly as given (the writer invents no
/// record: the synthetic empty sample and the end records of the real profiler are records
/// of the stream).
///
/// Every record gets the length value the C++ writer computes (the crate docs, "The length
/// field is NOT reliable"), so the logical stream of a rewritten real file is byte-identical.
#[derive(Debug)]
pub struct Writer<W> {
    out: Out<W>,
}

impl<W: Write> Writer<W> {
    /// Writes the prologue and the header (`write_header`, T:1104-1144), then flushes it as the
    /// first packet.
    pub fn new(out: W, header: &Header, container: Container) -> io::Result<Self> {
        let mut o = Out::new(out, container);
        o.raw(MAGIC)?;
        o.raw(&[FORMAT_VERSION])?;
        if let Some(v) = header.perl_version {
            o.byte(tag::PERL_VERSION)?;
            o.varint(v.revision)?;
            o.varint(v.version)?;
            o.varint(v.subversion)?;
        }
        if let Some(t) = header.tick_duration_us {
            o.byte(tag::TICK_DURATION)?;
            o.varint(t)?;
        }
        if let Some(d) = header.stack_depth {
            o.byte(tag::STACK_DEPTH)?;
            o.varint(d)?;
        }
        if let Some(g) = header.genealogy {
            o.byte(tag::GENEALOGY)?;
            o.varint(g.ordinal)?;
            o.varint(g.parent_ordinal)?;
            o.bytes(&g.id.0)?;
            o.bytes(&g.parent_id.0)?;
        }
        let mut w = Writer { out: o };
        for (key, value) in &header.metadata {
            w.metadata(key, value)?;
        }
        w.out.byte(tag::HEADER_END)?;
        w.out.flush_buffer()?;
        Ok(w)
    }

    /// `write_custom_metadata` (T:1346-1369): the stored length is key + value length only.
    fn metadata(&mut self, key: &impl PerlText, value: &impl PerlText) -> io::Result<()> {
        let o = &mut self.out;
        o.byte(tag::CUSTOM_META)?;
        o.varint((key.bytes().len() as u32).wrapping_add(value.bytes().len() as u32))?;
        o.string(key)?;
        o.string(value)
    }

    /// Writes one record (T:1146-1369).
    pub fn write<S: PerlText, B: AsRef<[u8]>>(&mut self, record: &Record<S, B>) -> io::Result<()> {
        let o = &mut self.out;
        let ss = |s: &S| cpp_string_size(s.bytes().len());
        match record {
            Record::SampleStart { weight, op_name } => self.start_sample(*weight, op_name),
            Record::Frame(frame) => self.frame(frame),
            Record::EvalSource { source, seq } => {
                o.byte(tag::EVAL_SEQ)?;
                o.varint(ss(source).wrapping_add(cpp_varint_size(*seq)))?;
                o.string(source)?;
                o.varint(*seq)
            }
            Record::SampleEnd { skipped } => {
                o.byte(tag::SAMPLE_END)?;
                o.varint(skipped.as_ref().len() as u32)?;
                o.bytes(skipped.as_ref())
            }
            Record::SectionStart { name } | Record::SectionEnd { name } => {
                let t = if matches!(record, Record::SectionStart { .. }) {
                    tag::SECTION_START
                } else {
                    tag::SECTION_END
                };
                o.byte(t)?;
                o.varint(ss(name))?;
                o.string(name)
            }
            Record::Metadata { key, value } => self.metadata(key, value),
            Record::FileEnd | Record::StreamEnd => {
                let t = if matches!(record, Record::FileEnd) {
                    tag::FILE_END
                } else {
                    tag::STREAM_END
                };
                o.byte(t)?;
                o.varint(0)
            }
            Record::Unknown { tag, payload } => {
                o.byte(*tag)?;
                o.varint(payload.as_ref().len() as u32)?;
                o.bytes(payload.as_ref())
            }
        }
    }

    /// `start_sample` (T:1183-1196): a sample-start record.
    #[inline]
    pub fn start_sample(&mut self, weight: u32, op_name: &impl PerlText) -> io::Result<()> {
        let o = &mut self.out;
        o.byte(tag::SAMPLE_START)?;
        o.varint(cpp_varint_size(weight).wrapping_add(cpp_string_size(op_name.bytes().len())))?;
        o.varint(weight)?;
        o.string(op_name)
    }

    /// `end_sample` (T:1351-1358): a sample-end record.
    #[inline]
    pub fn end_sample(&mut self) -> io::Result<()> {
        self.out.byte(tag::SAMPLE_END)?;
        self.out.varint(0)
    }

    /// `add_frame` (T:1262-1345).
    #[inline]
    pub fn frame<S: PerlText>(&mut self, frame: &Frame<S>) -> io::Result<()> {
        let o = &mut self.out;
        let ss = |s: &S| cpp_string_size(s.bytes().len());
        match frame {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => {
                o.byte(tag::SUB_FRAME)?;
                let len = ss(package)
                    .wrapping_add(ss(name))
                    .wrapping_add(ss(file))
                    .wrapping_add(cpp_varint_size(*line as u32))
                    .wrapping_add(cpp_varint_size(*first_line as u32));
                o.varint(len)?;
                o.string(package)?;
                o.string(name)?;
                o.string(file)?;
                o.varint(*line as u32)?;
                o.varint(*first_line as u32)
            }
            Frame::Xsub { package, name } => {
                o.byte(tag::XSUB_FRAME)?;
                o.varint(ss(package).wrapping_add(ss(name)))?;
                o.string(package)?;
                o.string(name)
            }
            Frame::Eval { file, line } | Frame::Main { file, line } => {
                o.byte(frame.tag())?;
                o.varint(ss(file).wrapping_add(cpp_varint_size(*line as u32)))?;
                o.string(file)?;
                o.varint(*line as u32)
            }
        }
    }

    /// Ends the current packet (what the profiler does at a fork, R:1107-1115).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush_buffer()?;
        self.out.out.flush()
    }

    /// The real writer's `position()`: bytes on disk plus bytes buffered, which decides
    /// rotation (R:790).
    pub fn position(&self) -> u64 {
        self.out.position()
    }

    /// Flushes the last packet and returns the output. Writes no end record.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush()?;
        Ok(self.out.out)
    }
}
