//! Writers: records to bytes ([`Writer`], [`encode_record`]) and the model to a file
//! ([`crate::Profile::write`], in `profile.rs`).

mod profile;

use std::io::{self, Write};

use flate2::Compression;
use flate2::write::ZlibEncoder;

use crate::raw::{put_i32, put_nv, put_u32, tag};
use crate::read::{Line, Record, Str};

fn put_str(out: &mut Vec<u8>, s: &Str<'_>) {
    out.push(if s.utf8 {
        tag::STR_UTF8
    } else {
        tag::STR_BYTES
    });
    put_u32(out, s.bytes.len() as u32);
    out.extend_from_slice(s.bytes);
}

fn put_line(out: &mut Vec<u8>, t: u8, l: &Line<'_>) {
    out.push(t);
    out.extend_from_slice(l.text);
    out.push(b'\n');
}

/// Appends the bytes of one record, as Devel::NYTProf writes it (FileHandle.xs `NYTP_write_*`).
///
/// Varints take their shortest form, as `output_tag_u32` writes them; a string longer than
/// `u32::MAX` bytes cannot be stored (its length is cut, as the C writer's cast would).
pub fn encode_record(out: &mut Vec<u8>, record: &Record<'_>) {
    out.push(record.tag());
    match record {
        Record::Attribute(l) | Record::Option(l) | Record::Comment(l) => {
            out.pop();
            put_line(out, record.tag(), l);
        }
        Record::StartDeflate | Record::Discount => {}
        Record::PidStart { pid, ppid, time } => {
            put_u32(out, *pid);
            put_u32(out, *ppid);
            put_nv(out, *time);
        }
        Record::PidEnd { pid, time } => {
            put_u32(out, *pid);
            put_nv(out, *time);
        }
        Record::NewFid {
            fid,
            eval_fid,
            eval_line,
            flags,
            size,
            mtime,
            name,
        } => {
            for v in [fid, eval_fid, eval_line, flags, size, mtime] {
                put_u32(out, *v);
            }
            put_str(out, name);
        }
        Record::TimeLine { ticks, fid, line } => {
            put_i32(out, *ticks);
            put_u32(out, *fid);
            put_u32(out, *line);
        }
        Record::TimeBlock {
            ticks,
            fid,
            line,
            block_line,
            sub_line,
        } => {
            put_i32(out, *ticks);
            for v in [fid, line, block_line, sub_line] {
                put_u32(out, *v);
            }
        }
        Record::SrcLine { fid, line, text } => {
            put_u32(out, *fid);
            put_u32(out, *line);
            put_str(out, text);
        }
        Record::SubInfo {
            fid,
            name,
            first_line,
            last_line,
        } => {
            put_u32(out, *fid);
            put_str(out, name);
            put_u32(out, *first_line);
            put_u32(out, *last_line);
        }
        Record::SubCallers {
            fid,
            line,
            caller,
            count,
            incl,
            excl,
            reci,
            rec_depth,
            called,
        } => {
            put_u32(out, *fid);
            put_u32(out, *line);
            put_str(out, caller);
            put_u32(out, *count);
            put_nv(out, *incl);
            put_nv(out, *excl);
            put_nv(out, *reci);
            put_u32(out, *rec_depth);
            put_str(out, called);
        }
        Record::SubEntry { fid, line } => {
            put_u32(out, *fid);
            put_u32(out, *line);
        }
        Record::SubReturn {
            depth,
            incl_ticks,
            excl_ticks,
            name,
        } => {
            put_u32(out, *depth);
            put_nv(out, *incl_ticks);
            put_nv(out, *excl_ticks);
            put_str(out, name);
        }
    }
}

enum Sink<W: Write> {
    Plain(W),
    Zlib(ZlibEncoder<W>),
}

impl<W: Write> std::fmt::Debug for Sink<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Sink::Plain(_) => "Plain",
            Sink::Zlib(_) => "Zlib",
        })
    }
}

/// Writes records; after a [`Record::StartDeflate`] everything goes through zlib (a zlib
/// wrapper, as `deflateInit2(level, Z_DEFLATED, 15, 9, …)` writes, FileHandle.xs:165-185).
///
/// ```
/// use profcodec_nytprof::{Record, Writer, read::Line};
/// let mut w = Writer::new(Vec::new());
/// w.header(5, 0).unwrap();
/// w.record(&Record::Attribute(Line { text: b"ticks_per_sec=1000000" })).unwrap();
/// let bytes = w.finish().unwrap();
/// assert_eq!(bytes, b"NYTProf 5 0\n:ticks_per_sec=1000000\n");
/// ```
#[derive(Debug)]
pub struct Writer<W: Write> {
    sink: Option<Sink<W>>,
    buf: Vec<u8>,
    level: u32,
    trailer: Option<Vec<u8>>,
}

impl<W: Write> Writer<W> {
    /// A writer that deflates at level 6 (the profiler's default) after a `z` record.
    pub fn new(out: W) -> Self {
        Writer {
            sink: Some(Sink::Plain(out)),
            buf: Vec::with_capacity(1 << 16),
            level: 6,
            trailer: None,
        }
    }

    /// Sets the zlib level (0-9) used after a `z` record.
    pub fn compression_level(mut self, level: u32) -> Self {
        self.level = level.min(9);
        self
    }

    /// Sets the bytes written after the zlib stream (by default the profiler's
    /// `#\n# Compressed N bytes to M, …\n` text).
    pub fn trailer(mut self, trailer: &[u8]) -> Self {
        self.trailer = Some(trailer.to_vec());
        self
    }

    /// Sets the zlib level (0-9) for a `z` record not written yet.
    pub fn set_compression_level(&mut self, level: u32) {
        self.level = level.min(9);
    }

    /// Sets the bytes written after the zlib stream, before [`Writer::finish`].
    pub fn set_trailer(&mut self, trailer: &[u8]) {
        self.trailer = Some(trailer.to_vec());
    }

    /// Writes the version line `NYTProf <major> <minor>\n`.
    pub fn header(&mut self, major: u32, minor: u32) -> io::Result<()> {
        self.header_line(format!("NYTProf {major} {minor}\n").as_bytes())
    }

    /// Writes a version line exactly as given (it must end with `\n`).
    pub fn header_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.buf.extend_from_slice(line);
        Ok(())
    }

    fn sink(&mut self) -> io::Result<&mut Sink<W>> {
        self.sink
            .as_mut()
            .ok_or_else(|| io::Error::other("writer already failed"))
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        let result = match self.sink()? {
            Sink::Plain(w) => w.write_all(&buf),
            Sink::Zlib(z) => z.write_all(&buf),
        };
        self.buf = buf;
        self.buf.clear();
        result
    }

    /// Writes one record.
    pub fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        encode_record(&mut self.buf, record);
        if matches!(record, Record::StartDeflate) {
            self.flush_buf()?;
            if let Some(Sink::Plain(w)) = self.sink.take() {
                self.sink = Some(Sink::Zlib(ZlibEncoder::new(
                    w,
                    Compression::new(self.level),
                )));
            } else {
                return Err(io::Error::other("a second START_DEFLATE record"));
            }
        } else if self.buf.len() >= 1 << 16 {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Finishes the zlib stream (if any), writes the trailer and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_buf()?;
        match self.sink.take() {
            Some(Sink::Plain(mut w)) => {
                w.flush()?;
                Ok(w)
            }
            Some(Sink::Zlib(z)) => {
                let (total_in, total_out) = (z.total_in(), z.total_out());
                let mut w = z.finish()?;
                let trailer = self.trailer.take().unwrap_or_else(|| {
                    let ratio = total_in as f64 / (total_out.max(1)) as f64;
                    format!(
                        "#\n# Compressed {total_in} bytes to {total_out}, ratio {ratio:.6}:1, data shrunk by {:.6}%\n",
                        100.0 * (1.0 - 1.0 / ratio)
                    )
                    .into_bytes()
                });
                w.write_all(&trailer)?;
                w.flush()?;
                Ok(w)
            }
            None => Err(io::Error::other("writer already failed")),
        }
    }
}

/// Rewrites a file record by record: the same bytes for an uncompressed file; for a compressed
/// one the same inflated stream and trailer (the deflate bytes are this zlib's, at `level`).
pub fn rewrite(file: &crate::File<'_>, level: u32) -> Result<Vec<u8>, crate::Error> {
    let out = rewrite_to(file, level, Vec::with_capacity(file.data().len()))?;
    Ok(out.0)
}

/// What [`rewrite_to`] read besides the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RewriteSummary {
    /// Bytes after the zlib stream that are not the profiler's trailer text (not written).
    pub trailing: Option<crate::Trailing>,
}

/// [`rewrite`] into any `io::Write`, streaming: the zlib stream is inflated a window at a time
/// ([`crate::File::reader`]), so memory stays bounded whatever the file inflates to. The
/// profiler's trailer text after the zlib stream is carried; other trailing bytes are not.
pub fn rewrite_to<W: Write>(
    file: &crate::File<'_>,
    level: u32,
    out: W,
) -> Result<(W, RewriteSummary), crate::Error> {
    let mut w = Writer::new(out).compression_level(level);
    let mut reader = file.reader();
    let io_err = |offset: u64| {
        move |e: io::Error| crate::Error::Io {
            offset,
            kind: e.kind(),
        }
    };
    w.header_line(file.header().line).map_err(io_err(0))?;
    loop {
        let offset = reader.offset();
        match reader.next_record() {
            None => break,
            Some(r) => w.record(&r?).map_err(io_err(offset))?,
        }
    }
    let text = crate::read::trailer_text_len(reader.trailer());
    if reader.is_compressed() {
        w.set_trailer(&reader.trailer()[..text]);
    }
    let summary = RewriteSummary {
        trailing: reader.trailing(),
    };
    let out = w.finish().map_err(io_err(reader.offset()))?;
    Ok((out, summary))
}
