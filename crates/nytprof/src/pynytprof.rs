//! The layout old Pynytprof versions wrote (`given/nytprof-pynytprof-FILE_FORMAT.md`): the text
//! banner, a blank line, then chunks of `u8 token`, `u32` little-endian length and a payload
//! (`F` files, `S` line statistics, `D` sub descriptors, `C` call edges, `E` end). Devel::NYTProf
//! rejects it (its chunk tokens are not v5 record tags); [`to_profile`] converts it into the
//! model so that [`crate::Profile::write`] makes a real profile.
//!
//! The conversion keeps everything the layout carries: the banner's attributes and options, the
//! file table (fid `n` becomes `n + 1`, since the real format reserves fid 0), per-line calls and
//! exclusive ticks, sub names and call edges. The layout has no sub locations and no call sites:
//! each sub is placed in the script (fid 1) at lines 0-0 and each call edge at fid 1, line 1.

use std::collections::BTreeMap;

use profcodec_common::{Cursor, checked_capacity};

use crate::error::Error;
use crate::model::{CallInfo, FileInfo, PidRun, Profile, SubInfo};
use crate::read::decode_text;

/// One `F` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PyFile {
    /// File id (the script is 0).
    pub fid: u32,
    /// Flags (`0x10` HAS_SRC for the script).
    pub flags: u32,
    /// Size.
    pub size: u32,
    /// Modification time.
    pub mtime: u32,
    /// Path.
    pub path: String,
}

/// One `S` entry: statistics of one executed line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PyLine {
    /// File id.
    pub fid: u32,
    /// Line.
    pub line: u32,
    /// Executions.
    pub calls: u32,
    /// Inclusive ticks (100 ns).
    pub inc_ticks: u64,
    /// Exclusive ticks (100 ns).
    pub exc_ticks: u64,
}

/// One `D` entry: a sub descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PySub {
    /// Sub id.
    pub sid: u32,
    /// Flags (0).
    pub flags: u32,
    /// Name.
    pub name: String,
}

/// One `C` entry: a call edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PyCall {
    /// Calling sub id.
    pub caller_sid: u32,
    /// Called sub id.
    pub callee_sid: u32,
    /// Calls.
    pub calls: u32,
    /// Inclusive ticks.
    pub ticks: u64,
    /// Exclusive ticks.
    pub sub_ticks: u64,
}

/// A Pynytprof file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PyProfile {
    /// Banner comment lines, without `#`.
    pub comments: Vec<String>,
    /// `:key=value` lines.
    pub attributes: BTreeMap<String, String>,
    /// `!key=value` lines.
    pub options: BTreeMap<String, String>,
    /// `F` entries.
    pub files: Vec<PyFile>,
    /// `S` entries.
    pub lines: Vec<PyLine>,
    /// `D` entries.
    pub subs: Vec<PySub>,
    /// `C` entries.
    pub calls: Vec<PyCall>,
    /// An `E` chunk was read.
    pub ended: bool,
}

/// True when `data` looks like the Pynytprof layout: the v5 banner whose text lines end with a
/// blank line followed by a chunk token.
pub fn detect(data: &[u8]) -> bool {
    banner_end(data).is_some()
}

/// Offset of the first chunk byte (just after the blank line ending the banner).
fn banner_end(data: &[u8]) -> Option<usize> {
    if !data.starts_with(b"NYTProf ") {
        return None;
    }
    let mut pos = data.iter().position(|&b| b == b'\n')? + 1;
    loop {
        match data.get(pos)? {
            b'\n' => {
                let next = *data.get(pos + 1)?;
                return b"FSDCE".contains(&next).then_some(pos + 1);
            }
            b'#' | b':' | b'!' => pos += data[pos..].iter().position(|&b| b == b'\n')? + 1,
            _ => return None,
        }
    }
}

fn zstr(c: &mut Cursor<'_>, what: &'static str) -> Result<String, Error> {
    Ok(decode_text(c.cstr(what)?, false))
}

/// Parses a Pynytprof file.
pub fn parse(data: &[u8]) -> Result<PyProfile, Error> {
    let Some(start) = banner_end(data) else {
        return Err(Error::Pynytprof {
            offset: 0,
            what: "banner",
            expected: "NYTProf text lines ended by a blank line and a chunk token",
            found: data.len() as u64,
        });
    };
    let mut out = PyProfile::default();
    let header_end = data.iter().position(|&b| b == b'\n').map_or(0, |p| p + 1);
    for line in data[header_end..start - 1].split(|&b| b == b'\n') {
        let Some((&t, text)) = line.split_first() else {
            continue;
        };
        let text = decode_text(text, false);
        match t {
            b'#' => out.comments.push(text),
            b':' | b'!' => {
                if let Some((k, v)) = text.split_once('=') {
                    let map = if t == b':' {
                        &mut out.attributes
                    } else {
                        &mut out.options
                    };
                    map.insert(k.to_owned(), v.to_owned());
                }
            }
            _ => {}
        }
    }
    let mut c = Cursor::new(&data[start..], start as u64);
    while !c.is_empty() {
        let at = c.offset();
        let token = c.u8("chunk token")?;
        let len = c.u32_le("chunk length")?;
        let base = c.offset();
        let mut p = Cursor::new(c.bytes_u64(u64::from(len), "chunk payload")?, base);
        match token {
            b'F' => {
                while !p.is_empty() {
                    out.files.push(PyFile {
                        fid: p.u32_le("F fid")?,
                        flags: p.u32_le("F flags")?,
                        size: p.u32_le("F size")?,
                        mtime: p.u32_le("F mtime")?,
                        path: zstr(&mut p, "F path")?,
                    });
                }
            }
            b'S' => {
                let n = checked_capacity(u64::from(len) / 28, 28, p.remaining(), at, "S entries")?;
                out.lines.reserve(n);
                while !p.is_empty() {
                    out.lines.push(PyLine {
                        fid: p.u32_le("S fid")?,
                        line: p.u32_le("S line")?,
                        calls: p.u32_le("S calls")?,
                        inc_ticks: p.u64_le("S inc_ticks")?,
                        exc_ticks: p.u64_le("S exc_ticks")?,
                    });
                }
            }
            b'D' => {
                while !p.is_empty() {
                    out.subs.push(PySub {
                        sid: p.u32_le("D sid")?,
                        flags: p.u32_le("D flags")?,
                        name: zstr(&mut p, "D name")?,
                    });
                }
            }
            b'C' => {
                let n = checked_capacity(u64::from(len) / 28, 28, p.remaining(), at, "C entries")?;
                out.calls.reserve(n);
                while !p.is_empty() {
                    out.calls.push(PyCall {
                        caller_sid: p.u32_le("C caller_sid")?,
                        callee_sid: p.u32_le("C callee_sid")?,
                        calls: p.u32_le("C calls")?,
                        ticks: p.u64_le("C ticks")?,
                        sub_ticks: p.u64_le("C sub_ticks")?,
                    });
                }
            }
            b'E' => {
                out.ended = true;
                break;
            }
            _ => {
                return Err(Error::Pynytprof {
                    offset: at,
                    what: "chunk token",
                    expected: "one of F, S, D, C, E",
                    found: u64::from(token),
                });
            }
        }
    }
    Ok(out)
}

/// The most bytes [`convert`] writes per byte of input (plus 1 MiB for the header and tables).
pub const MAX_OUTPUT_RATIO: u64 = 64;

/// The least number of bytes the NYTProf file made from `py` takes: its statement records
/// alone, one `+` of at least 4 bytes per counted statement (the format has no repeat count).
pub fn output_size_estimate(py: &PyProfile) -> u64 {
    py.lines
        .iter()
        .map(|l| u64::from(l.calls).saturating_mul(4))
        .fold(0, u64::saturating_add)
}

/// Checks that the NYTProf file made from `py`, read from `input_len` bytes, stays within
/// [`MAX_OUTPUT_RATIO`] times the input (plus 1 MiB); else [`Error::OutputTooLarge`], before
/// anything is built or written.
pub fn check_output_size(py: &PyProfile, input_len: u64) -> Result<(), Error> {
    let estimate = output_size_estimate(py);
    let limit = input_len
        .saturating_mul(MAX_OUTPUT_RATIO)
        .saturating_add(1 << 20);
    if estimate > limit {
        return Err(Error::OutputTooLarge {
            offset: 0,
            what: "statement records (one per counted statement)",
            estimate,
            limit,
        });
    }
    Ok(())
}

/// Converts a Pynytprof file into a NYTProf v5.0 file written to `out`, uncompressed, after
/// [`check_output_size`] (`input_len` is the size of the Pynytprof file read).
pub fn convert(py: &PyProfile, input_len: u64, out: impl std::io::Write) -> Result<(), Error> {
    check_output_size(py, input_len)?;
    to_profile(py).write(out)
}

/// Converts a Pynytprof file into the model (see the module docs for the placement rules).
///
/// The model's counts are what the file says; writing it makes one record per counted
/// statement (see [`check_output_size`], which [`convert`] applies).
pub fn to_profile(py: &PyProfile) -> Profile {
    let mut p = Profile {
        major: 5,
        minor: 0,
        comments: py.comments.clone(),
        attributes: py.attributes.clone(),
        options: py.options.clone(),
        ..Profile::default()
    };
    // The real loader needs these; Pynytprof always used 100 ns ticks and 8-byte doubles.
    p.attributes
        .entry("ticks_per_sec".into())
        .or_insert_with(|| "10000000".into());
    p.attributes.insert("nv_size".into(), "8".into());
    let tps = f64::from(p.ticks_per_sec().max(1));
    for f in &py.files {
        let fid = f.fid.saturating_add(1);
        p.files.insert(
            fid,
            FileInfo {
                fid,
                name: f.path.clone(),
                name_utf8: false,
                eval: None,
                flags: f.flags,
                size: f.size,
                mtime: f.mtime,
                subs_defined: Default::default(),
                merged_fids: Vec::new(),
            },
        );
    }
    p.files.entry(1).or_insert_with(|| FileInfo {
        fid: 1,
        name: "-".into(),
        name_utf8: false,
        eval: None,
        flags: 0,
        size: 0,
        mtime: 0,
        subs_defined: Default::default(),
        merged_fids: Vec::new(),
    });
    for l in &py.lines {
        let e = p
            .line_times
            .entry(l.fid.saturating_add(1))
            .or_default()
            .entry(l.line)
            .or_default();
        e.time += l.exc_ticks as f64 / tps;
        e.count += i64::from(l.calls);
        p.totals.stmts_measured += u64::from(l.calls);
        p.totals.stmts_duration += l.exc_ticks as f64 / tps;
    }
    let names: BTreeMap<u32, &str> = py.subs.iter().map(|s| (s.sid, s.name.as_str())).collect();
    for s in &py.subs {
        p.subs.insert(
            s.name.clone(),
            SubInfo {
                name: s.name.clone(),
                fid: Some(1),
                first_line: Some(0),
                last_line: Some(0),
                ..SubInfo::default()
            },
        );
        if let Some(f) = p.files.get_mut(&1) {
            f.subs_defined.insert(s.name.clone());
        }
    }
    for c in &py.calls {
        let (Some(callee), caller) = (names.get(&c.callee_sid), names.get(&c.caller_sid)) else {
            continue;
        };
        let caller = caller.copied().unwrap_or("main::RUNTIME").to_owned();
        let Some(si) = p.subs.get_mut(*callee) else {
            continue;
        };
        let (incl, excl) = (c.ticks as f64 / tps, c.sub_ticks as f64 / tps);
        let ci: &mut CallInfo = si.callers.entry(1).or_default().entry(1).or_default();
        ci.count += u64::from(c.calls);
        ci.incl += incl;
        ci.excl += excl;
        ci.calling_subs.insert(caller);
        si.calls += u64::from(c.calls);
        si.incl += incl;
        si.excl += excl;
        p.totals.sub_calls += u64::from(c.calls);
    }
    let start = py
        .attributes
        .get("basetime")
        .map_or(0.0, |b| crate::model::perl_num(b));
    // The layout has no wall-clock span: the run is taken to last as long as its statements.
    p.attributes
        .entry("cumulative_overhead_ticks".into())
        .or_insert_with(|| "0".into());
    let span = p.totals.stmts_duration.max(1e-6);
    p.pids.push(PidRun {
        pid: 1,
        ppid: 0,
        start,
        end: py.ended.then_some(start + span),
    });
    if py.ended {
        p.totals.profiler_duration = Some(span);
    }
    p
}
