//! The text format of the early design note (`statprofiler-fileformat.txt`, "Current"), as a
//! plain import/export format. It never shipped in the profiler.
//!
//! One sample per line: `weight;frame;frame;...;op_name`, frames innermost first, each frame
//! `type,package,file,line`. The note leaves the type to "the perl sources": profcodec uses Perl's
//! context types, `9` (`CXt_SUB`) for subs, `11` (`CXt_EVAL`) for eval STRING frames and `0` for the
//! main program; the `package` field holds the fully qualified sub name (`main::foo`) of a sub
//! frame and is empty otherwise; an XSUB is a `9` frame with an empty file and line `-1`.
//!
//! The note has no escaping; profcodec writes `%`, `;`, `,`, CR and LF inside fields as `%XX` and
//! decodes any `%XX` on import. The text keeps less than the binary format: no first line of a
//! sub (imported as -1), no string flags (imported names are flagged UTF-8 when they are
//! non-ASCII UTF-8), no sections, metadata or eval sources.

use std::io::{self, Write};

use crate::error::Error;
use crate::model::{Frame, OwnedFrame, OwnedRecord, PerlString, PerlText, Profile, Record};

/// Perl's `CXt_SUB`.
pub const TYPE_SUB: i32 = 9;
/// Perl's `CXt_EVAL`.
pub const TYPE_EVAL: i32 = 11;
/// The main program.
pub const TYPE_MAIN: i32 = 0;

/// One line of the text format.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct TextSample {
    /// Sample weight.
    pub weight: u32,
    /// Frames, innermost first.
    pub frames: Vec<OwnedFrame>,
    /// Op name.
    pub op_name: PerlString,
}

impl TextSample {
    /// The records of this sample in the binary format.
    pub fn to_records(&self) -> Vec<OwnedRecord> {
        let mut out = Vec::with_capacity(self.frames.len() + 2);
        out.push(Record::SampleStart {
            weight: self.weight,
            op_name: self.op_name.clone(),
        });
        out.extend(self.frames.iter().cloned().map(Record::Frame));
        out.push(Record::SampleEnd {
            skipped: Vec::new(),
        });
        out
    }
}

fn escape(out: &mut Vec<u8>, field: &[u8]) {
    for &b in field {
        if matches!(b, b'%' | b';' | b',' | b'\n' | b'\r') {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        } else {
            out.push(b);
        }
    }
}

fn unescape(field: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(field.len());
    let mut i = 0;
    while i < field.len() {
        if field[i] == b'%'
            && let Some(hex) = field.get(i + 1..i + 3)
            && let Some(v) = std::str::from_utf8(hex)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(field[i]);
        i += 1;
    }
    out
}

/// Appends one sample line (with its newline) to `out`.
pub fn write_line<'f, S: PerlText + 'f>(
    out: &mut Vec<u8>,
    weight: u32,
    frames: impl IntoIterator<Item = &'f Frame<S>>,
    op_name: &impl PerlText,
) {
    out.extend_from_slice(weight.to_string().as_bytes());
    for frame in frames {
        write_frame(out, frame);
    }
    end_line(out, op_name);
}

/// Appends one frame of a sample line (`;type,package,file,line`) to `out`: with
/// [`end_line`], a line is written frame by frame as the records are read, the weight first.
pub fn write_frame<S: PerlText>(out: &mut Vec<u8>, frame: &Frame<S>) {
    out.push(b';');
    let (ty, package, file, line): (i32, Vec<u8>, &[u8], i32) = match frame {
        Frame::Sub {
            package,
            name,
            file,
            line,
            ..
        } => (TYPE_SUB, qualified(package, name), file.bytes(), *line),
        Frame::Xsub { package, name } => (TYPE_SUB, qualified(package, name), b"", -1),
        Frame::Eval { file, line } => (TYPE_EVAL, Vec::new(), file.bytes(), *line),
        Frame::Main { file, line } => (TYPE_MAIN, Vec::new(), file.bytes(), *line),
    };
    out.extend_from_slice(format!("{ty},").as_bytes());
    escape(out, &package);
    out.push(b',');
    escape(out, file);
    out.extend_from_slice(format!(",{line}").as_bytes());
}

/// Ends a sample line: the op name and the newline.
pub fn end_line(out: &mut Vec<u8>, op_name: &impl PerlText) {
    out.push(b';');
    escape(out, op_name.bytes());
    out.push(b'\n');
}

fn qualified(package: &impl PerlText, name: &impl PerlText) -> Vec<u8> {
    let mut v = package.bytes().to_vec();
    v.extend_from_slice(b"::");
    v.extend_from_slice(name.bytes());
    v
}

fn name_string(bytes: &[u8]) -> PerlString {
    let utf8 = !bytes.is_ascii() && std::str::from_utf8(bytes).is_ok();
    PerlString {
        flags: u8::from(utf8),
        bytes: bytes.to_vec(),
    }
}

/// Parses text: one [`TextSample`] per non-empty line.
pub fn parse_text(text: &[u8]) -> Result<Vec<TextSample>, Error> {
    let mut out = Vec::new();
    let mut offset = 0u64;
    for (n, raw_line) in text.split(|&b| b == b'\n').enumerate() {
        let line_offset = offset;
        offset += raw_line.len() as u64 + 1;
        let line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if line.is_empty() {
            continue;
        }
        let err = |expected| Error::Text {
            offset: line_offset,
            line: n as u64 + 1,
            expected,
        };
        let fields: Vec<&[u8]> = line.split(|&b| b == b';').collect();
        let [weight, frames @ .., op] = fields.as_slice() else {
            return Err(err("weight;frames;op_name"));
        };
        if fields.len() < 2 {
            return Err(err("weight;frames;op_name"));
        }
        let weight = std::str::from_utf8(weight)
            .ok()
            .and_then(|w| w.trim().parse::<u32>().ok())
            .ok_or_else(|| err("a sample weight (0 to 4294967295)"))?;
        let mut parsed = Vec::with_capacity(frames.len());
        for frame in frames {
            let parts: Vec<&[u8]> = frame.split(|&b| b == b',').collect();
            let [ty, package, file, line] = parts.as_slice() else {
                return Err(err("a frame of 4 fields: type,package,file,line"));
            };
            let num = |f: &[u8]| {
                std::str::from_utf8(f)
                    .ok()
                    .and_then(|s| s.trim().parse::<i32>().ok())
            };
            let ty = num(ty).ok_or_else(|| err("a frame type number"))?;
            let line = num(line).ok_or_else(|| err("a frame line number"))?;
            let package = unescape(package);
            let file = unescape(file);
            parsed.push(match ty {
                TYPE_SUB => {
                    let split = package
                        .windows(2)
                        .rposition(|w| w == b"::")
                        .ok_or_else(|| err("a qualified sub name Package::name"))?;
                    let pkg = name_string(&package[..split]);
                    let name = name_string(&package[split + 2..]);
                    if file.is_empty() && line == -1 {
                        Frame::Xsub { package: pkg, name }
                    } else {
                        Frame::Sub {
                            package: pkg,
                            name,
                            file: PerlString::new(file),
                            line,
                            first_line: -1,
                        }
                    }
                }
                TYPE_EVAL => Frame::Eval {
                    file: PerlString::new(file),
                    line,
                },
                TYPE_MAIN => Frame::Main {
                    file: PerlString::new(file),
                    line,
                },
                _ => return Err(err("a frame type of 0 (main), 9 (sub) or 11 (eval)")),
            });
        }
        out.push(TextSample {
            weight,
            frames: parsed,
            op_name: PerlString::new(unescape(op)),
        });
    }
    Ok(out)
}

/// The samples of a profile's records (frames between each sample start and end), ignoring
/// every other record.
pub fn samples(profile: &Profile) -> Vec<TextSample> {
    let mut out = Vec::new();
    let mut current: Option<TextSample> = None;
    for record in &profile.records {
        match record {
            Record::SampleStart { weight, op_name } => {
                current = Some(TextSample {
                    weight: *weight,
                    frames: Vec::new(),
                    op_name: op_name.clone(),
                })
            }
            Record::Frame(f) => {
                if let Some(s) = current.as_mut() {
                    s.frames.push(f.clone());
                }
            }
            Record::SampleEnd { .. } => out.extend(current.take()),
            _ => {}
        }
    }
    out
}

/// Writes samples as text.
pub fn write_text<W: Write>(samples: &[TextSample], mut out: W) -> io::Result<W> {
    let mut line = Vec::new();
    for s in samples {
        line.clear();
        write_line(&mut line, s.weight, &s.frames, &s.op_name);
        out.write_all(&line)?;
    }
    Ok(out)
}
