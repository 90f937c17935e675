//! One record: its typed form and its decoder (nytprof-v5.md, "File" tag table).

use profcodec_common::Cursor;

use crate::error::Error;
use crate::raw::{self, read_i32, read_nv, read_u32, tag};

/// A string field: its bytes, borrowed from the input, and whether its tag said UTF-8.
///
/// Devel::NYTProf 6.12 always writes the byte tag `'`; sub names that Perl can represent in
/// Latin-1 come out as Latin-1 bytes (nytprof-v5.md, "str").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Str<'a> {
    /// The bytes as stored.
    pub bytes: &'a [u8],
    /// True when the tag was `"` (UTF-8 text); false for `'` (bytes).
    pub utf8: bool,
}

impl<'a> Str<'a> {
    /// A byte string (tag `'`).
    pub fn bytes(bytes: &'a [u8]) -> Self {
        Str { bytes, utf8: false }
    }

    /// The string as Perl sees it after reading: for the byte tag `'` each byte is one
    /// character (a Perl byte string, Latin-1); for `"` the bytes are UTF-8 (invalid sequences
    /// become U+FFFD). [`crate::write`](mod@crate::write) inverts this exactly for every `'` string.
    pub fn to_text(&self) -> String {
        decode_text(self.bytes, self.utf8)
    }

    /// [`Str::to_text`], borrowed from the input where the text is the bytes as they are
    /// (valid UTF-8, ASCII for a byte string): a lookup by name then allocates nothing.
    pub fn text(&self) -> std::borrow::Cow<'a, str> {
        match std::str::from_utf8(self.bytes) {
            Ok(s) if self.utf8 || s.is_ascii() => std::borrow::Cow::Borrowed(s),
            _ => std::borrow::Cow::Owned(self.to_text()),
        }
    }
}

/// Decodes stored bytes the way [`Str::to_text`] does.
pub fn decode_text(bytes: &[u8], utf8: bool) -> String {
    // The common case, valid UTF-8 (ASCII for a byte string), is one validation and one copy:
    // `from_utf8_lossy`'s chunk iterator costs more than the check.
    match std::str::from_utf8(bytes) {
        Ok(s) if utf8 || s.is_ascii() => s.to_owned(),
        _ if utf8 => String::from_utf8_lossy(bytes).into_owned(),
        _ => bytes.iter().map(|&b| char::from(b)).collect(),
    }
}

/// A text line record (`:`, `!`, `#`): the bytes between the tag and the `\n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// The text, without the tag and without the terminating `\n`.
    pub text: &'a [u8],
}

impl<'a> Line<'a> {
    /// `key` and `value` split at the first `=`; `None` for a malformed line, which the real
    /// reader skips with the warning "attribute malformed".
    pub fn key_value(&self) -> Option<(&'a [u8], &'a [u8])> {
        let eq = self.text.iter().position(|&b| b == b'=')?;
        Some((&self.text[..eq], &self.text[eq + 1..]))
    }

    /// [`Line::key_value`] as the model keeps it: both halves as byte strings
    /// ([`decode_text`] without the UTF-8 flag), as Devel::NYTProf::Data stores them.
    pub(crate) fn model_key_value(&self) -> Option<(String, String)> {
        let (k, v) = self.key_value()?;
        Some((decode_text(k, false), decode_text(v, false)))
    }
}

/// One record of the stream.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Record<'a> {
    /// `:key=value` (for example `ticks_per_sec=10000000`).
    Attribute(Line<'a>),
    /// `!key=value` (an option of the profiler run).
    Option(Line<'a>),
    /// `#text`.
    Comment(Line<'a>),
    /// `z`: everything after it is one zlib stream.
    StartDeflate,
    /// `P`: a process starts.
    PidStart {
        /// Process id.
        pid: u32,
        /// Parent process id.
        ppid: u32,
        /// Wall-clock time, seconds since the epoch.
        time: f64,
    },
    /// `p`: a process ends.
    PidEnd {
        /// Process id.
        pid: u32,
        /// Wall-clock time, seconds since the epoch.
        time: f64,
    },
    /// `@`: a file id is defined.
    NewFid {
        /// The new fid (1 and up).
        fid: u32,
        /// For a string eval: the fid holding the eval, else 0.
        eval_fid: u32,
        /// For a string eval: the line of the eval, else 0.
        eval_line: u32,
        /// [`crate::raw::fid_flags`] bits.
        flags: u32,
        /// File size (always 0 in 6.12).
        size: u32,
        /// Modification time (always 0 in 6.12).
        mtime: u32,
        /// The file name (absolute for scripts, `(eval N)[file:line]` for evals).
        name: Str<'a>,
    },
    /// `+`: time of one statement.
    TimeLine {
        /// Clock ticks (see the `ticks_per_sec` attribute).
        ticks: i32,
        /// File id.
        fid: u32,
        /// Line.
        line: u32,
    },
    /// `*`: time of one statement, with its enclosing block and sub lines (`blocks=1`).
    TimeBlock {
        /// Clock ticks.
        ticks: i32,
        /// File id.
        fid: u32,
        /// Line.
        line: u32,
        /// First line of the enclosing block.
        block_line: u32,
        /// First line of the enclosing sub.
        sub_line: u32,
    },
    /// `-`: the next statement is not counted.
    Discount,
    /// `S`: one saved source line.
    SrcLine {
        /// File id.
        fid: u32,
        /// Line.
        line: u32,
        /// The text, with its `\n`.
        text: Str<'a>,
    },
    /// `s`: where a sub is defined.
    SubInfo {
        /// File id.
        fid: u32,
        /// `package::name`.
        name: Str<'a>,
        /// First line.
        first_line: u32,
        /// Last line.
        last_line: u32,
    },
    /// `c`: the calls of one sub from one place.
    SubCallers {
        /// Calling file id (0 with line 0 marks an xsub).
        fid: u32,
        /// Calling line.
        line: u32,
        /// Calling sub.
        caller: Str<'a>,
        /// Number of calls.
        count: u32,
        /// Inclusive time, seconds.
        incl: f64,
        /// Exclusive time, seconds.
        excl: f64,
        /// Recursive inclusive time, seconds.
        reci: f64,
        /// Maximum recursion depth.
        rec_depth: u32,
        /// Called sub.
        called: Str<'a>,
    },
    /// `>`: a sub is entered (`calls=2`).
    SubEntry {
        /// Calling file id.
        fid: u32,
        /// Calling line.
        line: u32,
    },
    /// `<`: a sub returns.
    SubReturn {
        /// Profiler call depth.
        depth: u32,
        /// Inclusive ticks.
        incl_ticks: f64,
        /// Exclusive ticks.
        excl_ticks: f64,
        /// The sub.
        name: Str<'a>,
    },
}

impl Record<'_> {
    /// The tag byte of this record.
    pub fn tag(&self) -> u8 {
        match self {
            Record::Attribute(_) => tag::ATTRIBUTE,
            Record::Option(_) => tag::OPTION,
            Record::Comment(_) => tag::COMMENT,
            Record::StartDeflate => tag::START_DEFLATE,
            Record::PidStart { .. } => tag::PID_START,
            Record::PidEnd { .. } => tag::PID_END,
            Record::NewFid { .. } => tag::NEW_FID,
            Record::TimeLine { .. } => tag::TIME_LINE,
            Record::TimeBlock { .. } => tag::TIME_BLOCK,
            Record::Discount => tag::DISCOUNT,
            Record::SrcLine { .. } => tag::SRC_LINE,
            Record::SubInfo { .. } => tag::SUB_INFO,
            Record::SubCallers { .. } => tag::SUB_CALLERS,
            Record::SubEntry { .. } => tag::SUB_ENTRY,
            Record::SubReturn { .. } => tag::SUB_RETURN,
        }
    }
}

/// Reads a tagged string (NYTProf.xs `read_str` :625-665).
#[inline]
fn read_str<'a>(c: &mut Cursor<'a>, what: &'static str) -> Result<Str<'a>, Error> {
    let offset = c.offset();
    let t = c.u8(what)?;
    let utf8 = match t {
        tag::STR_BYTES => false,
        tag::STR_UTF8 => true,
        _ => {
            return Err(Error::BadStringTag {
                offset,
                what,
                tag: t,
            });
        }
    };
    let len = read_u32(c, what)?;
    // The length is checked against the remaining input by the cursor before any slicing; the
    // bytes are borrowed, never copied, so a hostile length cannot allocate.
    let bytes = c.bytes_u64(u64::from(len), what)?;
    Ok(Str { bytes, utf8 })
}

/// Reads a text line up to `\n` (NYTP_gets).
#[inline]
fn read_line<'a>(c: &mut Cursor<'a>, what: &'static str) -> Result<Line<'a>, Error> {
    let rest = c.rest();
    match rest.iter().position(|&b| b == b'\n') {
        Some(n) => {
            let text = c.bytes(n, what)?;
            c.skip(1, what)?;
            Ok(Line { text })
        }
        None => Err(c.truncated(what, rest.len() as u64 + 1).into()),
    }
}

/// Parses the leading decimal number of `s` as `atoi` does (0 when there is none).
pub(crate) fn atoi(s: &[u8]) -> i64 {
    let s = match s.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(p) => &s[p..],
        None => return 0,
    };
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut v: i64 = 0;
    for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
        v = v.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -v } else { v }
}

/// Decodes the record at the cursor. On error the cursor position is unspecified.
pub(crate) fn decode<'a>(c: &mut Cursor<'a>) -> Result<Record<'a>, Error> {
    let offset = c.offset();
    let t = c.u8("record tag")?;
    Ok(match t {
        tag::TIME_LINE => Record::TimeLine {
            ticks: read_i32(c, "TIME_LINE ticks")?,
            fid: read_u32(c, "TIME_LINE fid")?,
            line: read_u32(c, "TIME_LINE line")?,
        },
        tag::TIME_BLOCK => Record::TimeBlock {
            ticks: read_i32(c, "TIME_BLOCK ticks")?,
            fid: read_u32(c, "TIME_BLOCK fid")?,
            line: read_u32(c, "TIME_BLOCK line")?,
            block_line: read_u32(c, "TIME_BLOCK block_line")?,
            sub_line: read_u32(c, "TIME_BLOCK sub_line")?,
        },
        tag::DISCOUNT => Record::Discount,
        tag::SUB_RETURN => Record::SubReturn {
            depth: read_u32(c, "SUB_RETURN depth")?,
            incl_ticks: read_nv(c, "SUB_RETURN incl_ticks")?,
            excl_ticks: read_nv(c, "SUB_RETURN excl_ticks")?,
            name: read_str(c, "SUB_RETURN subname")?,
        },
        tag::SUB_ENTRY => Record::SubEntry {
            fid: read_u32(c, "SUB_ENTRY fid")?,
            line: read_u32(c, "SUB_ENTRY line")?,
        },
        tag::NEW_FID => Record::NewFid {
            fid: read_u32(c, "NEW_FID fid")?,
            eval_fid: read_u32(c, "NEW_FID eval_fid")?,
            eval_line: read_u32(c, "NEW_FID eval_line")?,
            flags: read_u32(c, "NEW_FID flags")?,
            size: read_u32(c, "NEW_FID size")?,
            mtime: read_u32(c, "NEW_FID mtime")?,
            name: read_str(c, "NEW_FID name")?,
        },
        tag::SRC_LINE => Record::SrcLine {
            fid: read_u32(c, "SRC_LINE fid")?,
            line: read_u32(c, "SRC_LINE line")?,
            text: read_str(c, "SRC_LINE text")?,
        },
        tag::SUB_INFO => Record::SubInfo {
            fid: read_u32(c, "SUB_INFO fid")?,
            name: read_str(c, "SUB_INFO subname")?,
            first_line: read_u32(c, "SUB_INFO first_line")?,
            last_line: read_u32(c, "SUB_INFO last_line")?,
        },
        tag::SUB_CALLERS => Record::SubCallers {
            fid: read_u32(c, "SUB_CALLERS fid")?,
            line: read_u32(c, "SUB_CALLERS line")?,
            caller: read_str(c, "SUB_CALLERS caller")?,
            count: read_u32(c, "SUB_CALLERS count")?,
            incl: read_nv(c, "SUB_CALLERS incl")?,
            excl: read_nv(c, "SUB_CALLERS excl")?,
            reci: read_nv(c, "SUB_CALLERS reci")?,
            rec_depth: read_u32(c, "SUB_CALLERS rec_depth")?,
            called: read_str(c, "SUB_CALLERS called")?,
        },
        tag::PID_START => Record::PidStart {
            pid: read_u32(c, "PID_START pid")?,
            ppid: read_u32(c, "PID_START ppid")?,
            time: read_nv(c, "PID_START time")?,
        },
        tag::PID_END => Record::PidEnd {
            pid: read_u32(c, "PID_END pid")?,
            time: read_nv(c, "PID_END time")?,
        },
        tag::ATTRIBUTE => {
            let line = read_line(c, "ATTRIBUTE")?;
            // nytprof-v5.md: the only check of the double's layout (NYTProf.xs:4905-4909).
            if let Some((b"nv_size", value)) = line.key_value() {
                let n = atoi(value);
                if n != 8 {
                    return Err(Error::UnsupportedNvSize {
                        offset,
                        found: u32::try_from(n).unwrap_or(0),
                    });
                }
            }
            Record::Attribute(line)
        }
        tag::OPTION => Record::Option(read_line(c, "OPTION")?),
        tag::COMMENT => Record::Comment(read_line(c, "COMMENT")?),
        tag::START_DEFLATE => Record::StartDeflate,
        _ => return Err(Error::UnknownTag { offset, tag: t }),
    })
}

/// The parsed version line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    /// Major version (always 5 here: others are rejected).
    pub major: u32,
    /// Minor version (the real reader only warns when it is above 0).
    pub minor: u32,
    /// The whole line as written, with its `\n` (kept for byte-identical rewriting).
    pub line: &'a [u8],
}

/// Parses `NYTProf <major> <minor>\n` (sscanf "NYTProf %d %d\n", NYTProf.xs:4714-4726).
pub(crate) fn decode_header<'a>(c: &mut Cursor<'a>) -> Result<Header<'a>, Error> {
    let offset = c.offset();
    let rest = c.rest();
    let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
        if rest.len() < 64 && (rest.starts_with(raw::MAGIC) || raw::MAGIC.starts_with(rest)) {
            return Err(c.truncated("header line", rest.len() as u64 + 1).into());
        }
        return Err(Error::BadHeader { offset });
    };
    let line = &rest[..=nl];
    let Some(after) = line.strip_prefix(&b"NYTProf"[..]) else {
        return Err(Error::BadHeader { offset });
    };
    let mut nums = after
        .split(|b| b.is_ascii_whitespace())
        .filter(|s| !s.is_empty());
    let mut num = || -> Option<i64> {
        let s = nums.next()?;
        let body = s.strip_prefix(b"-").or(s.strip_prefix(b"+")).unwrap_or(s);
        (!body.is_empty() && body.iter().all(u8::is_ascii_digit)).then(|| atoi(s))
    };
    let (Some(major), Some(minor)) = (num(), num()) else {
        return Err(Error::BadHeader { offset });
    };
    let (major, minor) = (major as u32, minor as u32);
    if major != raw::MAJOR {
        return Err(Error::UnsupportedVersion {
            offset,
            major,
            minor,
        });
    }
    c.skip(line.len(), "header line")?;
    Ok(Header { major, minor, line })
}

/// Decodes a varint from `b` at `*i`; the caller guarantees five readable bytes.
#[inline(always)]
pub(crate) fn varint_at(b: &[u8], i: &mut usize) -> u32 {
    let b0 = b[*i];
    let (v, n) = match b0 {
        0x00..=0x7f => (u32::from(b0), 1),
        0x80..=0xbf => ((u32::from(b0 & 0x7f) << 8) | u32::from(b[*i + 1]), 2),
        0xc0..=0xdf => (
            (u32::from(b0 & 0x1f) << 16) | (u32::from(b[*i + 1]) << 8) | u32::from(b[*i + 2]),
            3,
        ),
        0xe0..=0xfe => (
            (u32::from(b0 & 0x0f) << 24)
                | (u32::from(b[*i + 1]) << 16)
                | (u32::from(b[*i + 2]) << 8)
                | u32::from(b[*i + 3]),
            4,
        ),
        0xff => (
            u32::from_be_bytes([b[*i + 1], b[*i + 2], b[*i + 3], b[*i + 4]]),
            5,
        ),
    };
    *i += n;
    v
}

/// The fields of a complete, well-formed `<` record at the start of `rest` (depth, inclusive
/// and exclusive ticks, name bytes, UTF-8 tag) and its length; `None` when `done`, or when the
/// record is anything else, cut short, or needs the general decoder to report it.
#[inline]
#[allow(clippy::type_complexity)]
pub(crate) fn sub_return_at(
    rest: &[u8],
    done: bool,
) -> Option<((u32, f64, f64, &[u8], bool), usize)> {
    if done || rest.len() < 32 || rest[0] != tag::SUB_RETURN {
        return None;
    }
    let mut i = 1;
    let depth = varint_at(rest, &mut i);
    let nv = |at: usize| -> Option<f64> {
        Some(f64::from_le_bytes(rest.get(at..at + 8)?.try_into().ok()?))
    };
    let incl = nv(i)?;
    let excl = nv(i + 8)?;
    i += 16;
    let utf8 = match *rest.get(i)? {
        tag::STR_BYTES => false,
        tag::STR_UTF8 => true,
        _ => return None,
    };
    i += 1;
    if rest.len() < i + 5 {
        return None;
    }
    let len = varint_at(rest, &mut i) as usize;
    if len > rest.len() - i {
        return None;
    }
    Some(((depth, incl, excl, &rest[i..i + len], utf8), i + len))
}

/// The fid of a complete, well-formed `S` record (a saved source line) at the start of `rest`
/// and its length; `None` when `done`, or when the record is anything else, cut short, or
/// needs the general decoder to report it. What skips the text of a line nobody keeps, without
/// decoding it.
#[inline]
pub(crate) fn src_line_at(rest: &[u8], done: bool) -> Option<(u32, usize)> {
    // Tag, fid and line (five bytes each at most), string tag, length (five at most).
    if done || rest.len() < 17 || rest[0] != tag::SRC_LINE {
        return None;
    }
    let mut i = 1;
    let fid = varint_at(rest, &mut i);
    let _line = varint_at(rest, &mut i);
    if !matches!(rest[i], tag::STR_BYTES | tag::STR_UTF8) {
        return None;
    }
    i += 1;
    let len = varint_at(rest, &mut i) as usize;
    if len > rest.len() - i {
        return None;
    }
    Some((fid, i + len))
}
