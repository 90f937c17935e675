//! The container: the prologue and the Snappy packets (the crate docs, "Container"; S:21-61).
//!
//! A packet is a u16 big-endian length N and N bytes holding one raw Snappy block (Snappy's own
//! little-endian varint length, then its elements). The reader refuses a block that decompresses
//! to more than 32000 bytes (S:37-41); the check is made on the block's stated length BEFORE
//! any room is made for it, so a hostile length costs nothing.

use std::io::Read;

use profcodec_common::{Cursor, Truncated};

use crate::error::{Error, snappy_reason};
use crate::model::Container;
use crate::raw::{FORMAT_VERSION, MAGIC, MAX_PACKET_LEN, PROLOGUE_LEN};

/// Checks the prologue (magic and version byte) and tells how the stream is stored.
///
/// A build without Snappy writes the logical stream as is, and nothing in the file says so
/// (the crate docs, Container). A Snappy packet holds at most 32000 bytes, which compress to at
/// most 37365 (csnappy's bound, 0x91f5), so the high byte of the first packet length is at most
/// 0x91; every header tag (200-205, 254; the writer starts with 201, T:1115) is above it. Byte 14
/// tells the two apart.
pub fn parse_prologue(data: &[u8]) -> Result<Container, Error> {
    let mut c = Cursor::new(data, 0);
    let head = c.rest();
    let n = head.len().min(MAGIC.len());
    if head[..n] != MAGIC[..n] {
        let mut found = [0u8; 13];
        found[..n].copy_from_slice(&head[..n]);
        return Err(Error::BadMagic { found });
    }
    c.skip(MAGIC.len(), "file magic")?;
    let version = c.u8("format version")?;
    if version != FORMAT_VERSION {
        return Err(Error::BadVersion { found: version });
    }
    Ok(match c.peek() {
        Some(b) if b > MAX_PACKET_HIGH_BYTE => Container::Plain,
        _ => Container::Snappy,
    })
}

/// The largest high byte of a packet length: 32000 bytes compress to at most 37365 bytes.
const MAX_PACKET_HIGH_BYTE: u8 = 0x91;

/// One packet, borrowed from the file.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// File offset of the packet's u16 length.
    pub offset: u64,
    /// The raw Snappy block.
    pub block: &'a [u8],
}

impl Packet<'_> {
    /// The decompressed length the block states, checked against the 32000 byte limit.
    pub fn decompressed_len(&self) -> Result<usize, Error> {
        let len = snap::raw::decompress_len(self.block).map_err(|e| Error::Snappy {
            offset: self.offset,
            reason: snappy_reason(&e),
        })?;
        if len > MAX_PACKET_LEN {
            return Err(Error::PacketTooLarge {
                offset: self.offset,
                found: len as u64,
            });
        }
        Ok(len)
    }

    /// Decompresses the block, appending to `out`; returns the number of bytes added.
    pub fn decompress(&self, out: &mut Vec<u8>) -> Result<usize, Error> {
        self.decompress_into(&mut snap::raw::Decoder::new(), out)
    }

    /// [`Packet::decompress`] with a decoder kept by the caller.
    pub fn decompress_into(
        &self,
        decoder: &mut snap::raw::Decoder,
        out: &mut Vec<u8>,
    ) -> Result<usize, Error> {
        let old = out.len();
        let n = self.decompress_at(decoder, out, old)?;
        out.truncate(old + n);
        Ok(n)
    }

    /// Decompresses the block into `buf` from index `at`, growing `buf` (with zeros) only when
    /// it is too short; returns the number of bytes written. `buf`'s bytes after them are left
    /// as they were, so a buffer reused for every packet is not cleared for each.
    pub fn decompress_at(
        &self,
        decoder: &mut snap::raw::Decoder,
        buf: &mut Vec<u8>,
        at: usize,
    ) -> Result<usize, Error> {
        let len = self.decompressed_len()?;
        if len == 0 {
            return Ok(0);
        }
        if buf.len() < at + len {
            buf.resize(at + len, 0);
        }
        decoder
            .decompress(self.block, &mut buf[at..at + len])
            .map_err(|e| Error::Snappy {
                offset: self.offset,
                reason: snappy_reason(&e),
            })
    }
}

/// A Snappy decoder and one buffer, reused for every packet: what the reader does, without the
/// logical stream around it.
///
/// ```
/// use profcodec_statprofiler::read::packets::{PacketDecoder, Packets};
/// use profcodec_statprofiler::{Container, Header, PerlStr, Writer};
/// let mut w = Writer::new(Vec::new(), &Header::default(), Container::Snappy).unwrap();
/// w.start_sample(1, &PerlStr::bytes(b"add")).unwrap();
/// w.end_sample().unwrap();
/// let file = w.finish().unwrap();
/// let mut decoder = PacketDecoder::new();
/// let mut total = 0;
/// for packet in Packets::new(&file).unwrap() {
///     total += decoder.decompress(&packet.unwrap()).unwrap().len();
/// }
/// assert!(total > 0);
/// ```
#[derive(Debug)]
pub struct PacketDecoder {
    decoder: snap::raw::Decoder,
    buf: Vec<u8>,
}

impl Default for PacketDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl PacketDecoder {
    /// A decoder with an empty buffer.
    pub fn new() -> Self {
        PacketDecoder {
            decoder: snap::raw::Decoder::new(),
            buf: Vec::new(),
        }
    }

    /// The decompressed bytes of `packet`, valid until the next call.
    pub fn decompress(&mut self, packet: &Packet<'_>) -> Result<&[u8], Error> {
        let n = packet.decompress_at(&mut self.decoder, &mut self.buf, 0)?;
        Ok(&self.buf[..n])
    }
}

/// The packets of a file (after [`parse_prologue`]), as an iterator; it stops after an error.
#[derive(Debug, Clone)]
pub struct Packets<'a> {
    cursor: Cursor<'a>,
    failed: bool,
}

impl<'a> Packets<'a> {
    /// The packets of `file` (the whole file, prologue included).
    pub fn new(file: &'a [u8]) -> Result<Self, Error> {
        parse_prologue(file)?;
        Ok(Packets {
            cursor: Cursor::new(&file[PROLOGUE_LEN..], PROLOGUE_LEN as u64),
            failed: false,
        })
    }

    fn next_packet(&mut self) -> Result<Packet<'a>, Error> {
        let offset = self.cursor.offset();
        let len = self.cursor.u16_be("snappy packet length")?;
        let block = self.cursor.bytes(len as usize, "snappy packet")?;
        Ok(Packet { offset, block })
    }
}

impl<'a> Iterator for Packets<'a> {
    type Item = Result<Packet<'a>, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.cursor.is_empty() {
            return None;
        }
        let packet = self.next_packet();
        self.failed = packet.is_err();
        Some(packet)
    }
}

/// Where the logical stream comes from: writes the next piece of it into a buffer.
///
/// Implemented for files in memory ([`SliceSource`]) and for any `io::Read` ([`ReadSource`]).
pub trait StreamSource {
    /// Writes the next piece of the logical stream into `buf` from index `at`, growing `buf`
    /// when it is too short. Returns the file offset of the piece (for a packet: of its length
    /// field) and its length, or `None` at the end of the file. The bytes of `buf` after the
    /// piece are left as they were: the caller keeps its own end mark, so one buffer serves
    /// every packet without being cleared for each.
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error>;
    /// How the stream is stored.
    fn container(&self) -> Container;
    /// The file offset of the first byte no call to [`StreamSource::fill`] has returned, and
    /// the number of bytes from there to the end of the file, counted without decoding them (for
    /// a reader: read into a fixed buffer and dropped). `None` when the source cannot tell.
    fn rest(&mut self) -> Result<Option<(u64, u64)>, Error> {
        Ok(None)
    }
}

/// A file in memory.
#[derive(Debug, Clone)]
pub struct SliceSource<'a> {
    packets: Packets<'a>,
    container: Container,
    decoder: snap::raw::Decoder,
}

impl<'a> SliceSource<'a> {
    /// The source for a whole file (prologue included).
    pub fn new(file: &'a [u8]) -> Result<Self, Error> {
        let container = parse_prologue(file)?;
        Ok(SliceSource {
            packets: Packets::new(file)?,
            container,
            decoder: snap::raw::Decoder::new(),
        })
    }
}

impl StreamSource for SliceSource<'_> {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error> {
        match self.container {
            Container::Snappy => match self.packets.next() {
                None => Ok(None),
                Some(packet) => {
                    let packet = packet?;
                    let n = packet.decompress_at(&mut self.decoder, buf, at)?;
                    Ok(Some((packet.offset, n)))
                }
            },
            Container::Plain => {
                let c = &mut self.packets.cursor;
                if c.is_empty() {
                    return Ok(None);
                }
                let offset = c.offset();
                let n = c.remaining().min(1 << 16);
                let piece = c.bytes(n, "stream")?;
                if buf.len() < at + n {
                    buf.resize(at + n, 0);
                }
                buf[at..at + n].copy_from_slice(piece);
                Ok(Some((offset, n)))
            }
        }
    }

    fn container(&self) -> Container {
        self.container
    }

    fn rest(&mut self) -> Result<Option<(u64, u64)>, Error> {
        let c = &self.packets.cursor;
        Ok(Some((c.offset(), c.remaining() as u64)))
    }
}

/// A file read through `io::Read` (a `File`, a pipe, a decompressor), one packet at a time.
#[derive(Debug)]
pub struct ReadSource<R> {
    input: R,
    offset: u64,
    container: Container,
    block: Vec<u8>,
    pending: Option<u8>,
    decoder: snap::raw::Decoder,
}

fn io_error(offset: u64, e: &std::io::Error) -> Error {
    Error::Io {
        offset,
        kind: e.kind(),
    }
}

/// Reads as many bytes as are available up to `buf.len()`; returns how many.
fn read_full<R: Read>(input: &mut R, buf: &mut [u8], offset: u64) -> Result<usize, Error> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(offset + n as u64, &e)),
        }
    }
    Ok(n)
}

impl<R: Read> ReadSource<R> {
    /// Reads the prologue from `input`.
    pub fn new(mut input: R) -> Result<Self, Error> {
        let mut head = [0u8; PROLOGUE_LEN + 1];
        let n = read_full(&mut input, &mut head, 0)?;
        let container = parse_prologue(&head[..n])?;
        Ok(ReadSource {
            input,
            offset: PROLOGUE_LEN as u64,
            container,
            block: Vec::new(),
            pending: (n > PROLOGUE_LEN).then_some(head[PROLOGUE_LEN]),
            decoder: snap::raw::Decoder::new(),
        })
    }
}

impl<R: Read> StreamSource for ReadSource<R> {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, Error> {
        let offset = self.offset;
        match self.container {
            Container::Snappy => {
                let mut len = [0u8; 2];
                let mut have = 0;
                if let Some(b) = self.pending.take() {
                    len[0] = b;
                    have = 1;
                }
                have += read_full(&mut self.input, &mut len[have..], offset + have as u64)?;
                if have == 0 {
                    return Ok(None);
                }
                if have < 2 {
                    return Err(Truncated {
                        offset,
                        what: "snappy packet length",
                        needed: 2,
                        available: have as u64,
                    }
                    .into());
                }
                let n = u16::from_be_bytes(len) as usize;
                // At most 65535 bytes, whatever the file says.
                self.block.resize(n, 0);
                let got = read_full(&mut self.input, &mut self.block, offset + 2)?;
                if got < n {
                    return Err(Truncated {
                        offset: offset + 2,
                        what: "snappy packet",
                        needed: n as u64,
                        available: got as u64,
                    }
                    .into());
                }
                self.offset += 2 + n as u64;
                let n = Packet {
                    offset,
                    block: &self.block,
                }
                .decompress_at(&mut self.decoder, buf, at)?;
                Ok(Some((offset, n)))
            }
            Container::Plain => {
                const PIECE: usize = 1 << 16;
                if buf.len() < at + PIECE + 1 {
                    buf.resize(at + PIECE + 1, 0);
                }
                let mut n = 0;
                if let Some(b) = self.pending.take() {
                    buf[at] = b;
                    n = 1;
                }
                n += read_full(&mut self.input, &mut buf[at + n..at + n + PIECE], offset)?;
                self.offset += n as u64;
                Ok((n > 0).then_some((offset, n)))
            }
        }
    }

    fn container(&self) -> Container {
        self.container
    }

    fn rest(&mut self) -> Result<Option<(u64, u64)>, Error> {
        let offset = self.offset;
        let pending = u64::from(self.pending.take().is_some());
        let mut sink = std::io::sink();
        let copied = std::io::copy(&mut self.input, &mut sink)
            .map_err(|e| io_error(offset + pending, &e))?;
        self.offset += pending + copied;
        Ok(Some((offset, pending + copied)))
    }
}
