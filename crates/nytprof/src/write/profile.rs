//! The model writer: a [`Profile`] as a record stream that Devel::NYTProf::Data loads back into
//! the same model (within floating-point rounding of summed times).
//!
//! The aggregated model has no statement order, so the writer makes one up: per line, one `+`
//! carrying the line's ticks, then `+ 0` records for the remaining count (or `-` records before it
//! for a count of 0 or less).
//!
//! With block and sub line times (`blocks=1`), every statement is a `*` record that adds its
//! ticks and count to a line, a block line and a sub line of one fid at once, so the three tables
//! of a fid must have the same totals (they do in every profile the loader builds, except after
//! the `(IV)time` count quirk). The writer splits the totals greedily along the three tables in
//! line order (the north-west corner rule of transport problems): the ticks go in discounted
//! `*` records (count 0), the counts in `*` records of 0 ticks and count 1, and a discounted
//! empty `*` touches any entry left with neither. Each step closes at least one entry, so a fid
//! takes at most as many tick records as its three tables have entries, plus one record per
//! counted statement (as the profiler wrote).

use std::collections::BTreeMap;
use std::io::Write;

use super::Writer;
use crate::error::Error;
use crate::model::{LineTime, LineTimes, Profile, Totals, check_ticks_per_sec_value};
use crate::raw::MAJOR;
use crate::read::{Line, Record, Str};

/// The largest per-line count the writer expands into records.
const MAX_COUNT: i64 = 1 << 24;

/// Bytes and tag of a model string: a Perl byte string when every char fits in one byte
/// (exactly what the reader decoded), else UTF-8 with the `"` tag.
fn encode_text(s: &str) -> (Vec<u8>, bool) {
    if s.chars().all(|c| (c as u32) < 0x100) {
        (s.chars().map(|c| c as u32 as u8).collect(), false)
    } else {
        (s.as_bytes().to_vec(), true)
    }
}

/// The bytes of an attribute, option or comment line: the text as [`encode_text`] gives it, cut
/// at its first newline (a text line cannot hold one).
fn text_line(text: &str) -> Vec<u8> {
    let (mut bytes, _) = encode_text(text);
    if let Some(cut) = bytes.iter().position(|&b| b == b'\n') {
        bytes.truncate(cut);
    }
    bytes
}

/// The output, counting what the loader will count.
struct Out<W: Write> {
    w: Writer<W>,
    /// Statement records written, and `-` records (each consumed by the next statement).
    statements: u64,
    discounts: u64,
    last_place: Option<Place>,
}

/// A statement's place: fid, line, and block and sub lines for a `*`.
type Place = (u32, u32, Option<(u32, u32)>);

impl<W: Write> Out<W> {
    fn rec(&mut self, r: &Record<'_>) -> Result<(), Error> {
        match *r {
            Record::Discount => self.discounts += 1,
            Record::TimeLine { fid, line, .. } => {
                self.statements += 1;
                self.last_place = Some((fid, line, None));
            }
            Record::TimeBlock {
                fid,
                line,
                block_line,
                sub_line,
                ..
            } => {
                self.statements += 1;
                self.last_place = Some((fid, line, Some((block_line, sub_line))));
            }
            _ => {}
        }
        self.w.record(r).map_err(|e| Error::Io {
            offset: 0,
            kind: e.kind(),
        })
    }

    /// Brings `total_stmts_measured` and `total_stmts_discounted` to the model's figures when
    /// both fall short by the same number (the profiler's statements are counted as the
    /// writer's lines are): that many discounted statements of 0 ticks at the last place
    /// written, which change no line's time or count.
    fn pad_statement_totals(&mut self, t: &Totals) -> Result<(), Error> {
        let Some((fid, line, block)) = self.last_place else {
            return Ok(());
        };
        let (Some(k), Some(kd)) = (
            t.stmts_measured.checked_sub(self.statements),
            t.stmts_discounted.checked_sub(self.discounts),
        ) else {
            return Ok(());
        };
        if k != kd || k > self.statements.saturating_add(1 << 16) {
            return Ok(());
        }
        for _ in 0..k {
            self.rec(&Record::Discount)?;
            self.rec(&match block {
                None => Record::TimeLine {
                    ticks: 0,
                    fid,
                    line,
                },
                Some((block_line, sub_line)) => Record::TimeBlock {
                    ticks: 0,
                    fid,
                    line,
                    block_line,
                    sub_line,
                },
            })?;
        }
        Ok(())
    }

    fn line(&mut self, tag: u8, text: &str) -> Result<(), Error> {
        let bytes = text_line(text);
        let l = Line { text: &bytes };
        self.rec(&match tag {
            b':' => Record::Attribute(l),
            b'!' => Record::Option(l),
            _ => Record::Comment(l),
        })
    }

    fn statements(&mut self, fid: u32, line: u32, lt: &LineTime, tps: f64) -> Result<(), Error> {
        if lt.count > MAX_COUNT || lt.count < -MAX_COUNT {
            return Err(Error::ValueOutOfRange {
                offset: 0,
                what: "line count",
                value: lt.count.unsigned_abs(),
            });
        }
        let mut ticks = (lt.time * tps).round();
        if !ticks.is_finite() {
            ticks = 0.0;
        }
        let first = ticks.clamp(f64::from(i32::MIN), f64::from(i32::MAX));
        let mut rest = ticks - first;
        for _ in 0..(1 - lt.count).max(0) {
            self.rec(&Record::Discount)?;
        }
        self.rec(&Record::TimeLine {
            ticks: first as i32,
            fid,
            line,
        })?;
        for _ in 1..lt.count.max(1) {
            self.rec(&Record::TimeLine {
                ticks: 0,
                fid,
                line,
            })?;
        }
        // Ticks beyond i32 go in discounted statements, which add time but no count.
        let mut guard = 0;
        while rest != 0.0 && guard < 1 << 16 {
            let part = rest.clamp(f64::from(i32::MIN), f64::from(i32::MAX));
            self.rec(&Record::Discount)?;
            self.rec(&Record::TimeLine {
                ticks: part as i32,
                fid,
                line,
            })?;
            rest -= part;
            guard += 1;
        }
        Ok(())
    }

    /// `*` records making the line, block and sub line times of every fid (module docs).
    fn block_statements(&mut self, p: &Profile, tps: f64) -> Result<(), Error> {
        let none = LineTimes::new();
        let tables = [
            &p.line_times,
            p.block_times.as_ref().unwrap_or(&none),
            p.sub_times.as_ref().unwrap_or(&none),
        ];
        let fids: std::collections::BTreeSet<u32> =
            tables.iter().flat_map(|t| t.keys().copied()).collect();
        for fid in fids {
            let [l, b, s] = tables.map(|t| t.get(&fid));
            if b.is_none_or(|b| b.is_empty()) && s.is_none_or(|s| s.is_empty()) {
                for (line, lt) in l.into_iter().flatten() {
                    self.statements(fid, *line, lt, tps)?;
                }
                continue;
            }
            let mut ticks: [Column; 3] = Default::default();
            let mut counts: [Column; 3] = Default::default();
            for (t, table) in [l, b, s].into_iter().enumerate() {
                for (line, lt) in table.into_iter().flatten() {
                    let tk = (lt.time * tps).round();
                    // At most 65536 records of i32::MAX ticks per entry (about 162 days at the
                    // profiler's 10 MHz clock).
                    if !(0.0..=f64::from(i32::MAX) * 65536.0).contains(&tk) {
                        return Err(Error::ValueOutOfRange {
                            offset: 0,
                            what: "block mode statement ticks",
                            value: tk.abs().min(u64::MAX as f64) as u64,
                        });
                    }
                    if !(0..=MAX_COUNT).contains(&lt.count) {
                        return Err(Error::ValueOutOfRange {
                            offset: 0,
                            what: "block mode line count",
                            value: lt.count.unsigned_abs(),
                        });
                    }
                    ticks[t].push((*line, tk as i64));
                    counts[t].push((*line, lt.count));
                }
            }
            let total = |c: &Column| c.iter().map(|e| i128::from(e.1)).sum::<i128>();
            for (t, what) in [(1, "block times"), (2, "sub times")] {
                if ticks[t].is_empty()
                    || ticks[0].is_empty()
                    || total(&ticks[t]) != total(&ticks[0])
                    || total(&counts[t]) != total(&counts[0])
                {
                    return Err(Error::BlockTimesMismatch {
                        offset: 0,
                        what,
                        fid,
                    });
                }
            }
            type Touched = [std::collections::BTreeSet<u32>; 3];
            let mut touched: Touched = Default::default();
            let put = |o: &mut Self,
                       touched: &mut Touched,
                       lines: [u32; 3],
                       ticks: i32,
                       counted: bool| {
                for t in 0..3 {
                    touched[t].insert(lines[t]);
                }
                if !counted {
                    o.rec(&Record::Discount)?;
                }
                o.rec(&Record::TimeBlock {
                    ticks,
                    fid,
                    line: lines[0],
                    block_line: lines[1],
                    sub_line: lines[2],
                })
            };
            for (lines, mut amount) in north_west([&ticks[0], &ticks[1], &ticks[2]]) {
                while amount > 0 {
                    let part = amount.min(i64::from(i32::MAX));
                    put(self, &mut touched, lines, part as i32, false)?;
                    amount -= part;
                }
            }
            for (lines, amount) in north_west([&counts[0], &counts[1], &counts[2]]) {
                for _ in 0..amount {
                    put(self, &mut touched, lines, 0, true)?;
                }
            }
            // Entries with neither ticks nor count still exist in the model: touch them.
            let untouched: [Vec<u32>; 3] = [0, 1, 2].map(|t| {
                ticks[t]
                    .iter()
                    .map(|e| e.0)
                    .filter(|line| !touched[t].contains(line))
                    .collect()
            });
            let n = untouched.iter().map(Vec::len).max().unwrap_or(0);
            for i in 0..n {
                let lines =
                    [0, 1, 2].map(|t| untouched[t].get(i).copied().unwrap_or(ticks[t][0].0));
                put(self, &mut touched, lines, 0, false)?;
            }
        }
        Ok(())
    }
}

/// One table's entries of one fid: line and an amount still to place.
type Column = Vec<(u32, i64)>;

/// The north-west corner walk: splits equal totals of three columns (amounts above 0) into
/// steps `(line a, line b, line c, amount)`, closing at least one entry per step.
fn north_west(cols: [&Column; 3]) -> Vec<([u32; 3], i64)> {
    let mut left: [Column; 3] = cols.map(|c| c.iter().copied().filter(|e| e.1 > 0).collect());
    let mut at = [0usize; 3];
    let mut out = Vec::new();
    while (0..3).all(|t| at[t] < left[t].len()) {
        let amount = (0..3).map(|t| left[t][at[t]].1).min().unwrap_or(0);
        out.push(([0, 1, 2].map(|t| left[t][at[t]].0), amount));
        for t in 0..3 {
            left[t][at[t]].1 -= amount;
            if left[t][at[t]].1 == 0 {
                at[t] += 1;
            }
        }
    }
    out
}

impl Profile {
    /// Writes the profile uncompressed.
    pub fn write(&self, out: impl Write) -> Result<(), Error> {
        self.write_with(out, None)
    }

    /// Checks that the real reader would load what [`Profile::write`] makes of this profile.
    pub fn check_writable(&self) -> Result<(), Error> {
        if self.major != 0 && self.major != MAJOR {
            return Err(Error::UnsupportedVersion {
                offset: 0,
                major: self.major,
                minor: self.minor,
            });
        }
        // The checks look at the attributes as the reader will load them from the lines written
        // below, not at the model's map: a key holding `=` or a text holding a newline changes
        // what the reader sees (the `nytprof_model` fuzz target wrote a `ticks_per_sec` value
        // that started with a newline, so the reader found it empty).
        let written = self.attributes_as_written();
        check_ticks_per_sec_value(written.get("ticks_per_sec").map(String::as_str), 0)?;
        if self.files.contains_key(&0) || self.files.iter().any(|(k, f)| *k != f.fid) {
            return Err(Error::ReservedFid { offset: 0 });
        }
        // An eval of a file that is not written: the reader (and Devel::NYTProf) would refuse it.
        if let Some((fid, eval_fid)) = self.files.values().find_map(|f| {
            let parent = f.eval?.fid;
            (parent != 0 && !self.files.contains_key(&parent)).then_some((f.fid, parent))
        }) {
            return Err(Error::UndefinedEvalFid {
                offset: 0,
                what: "eval fid",
                fid,
                eval_fid,
            });
        }
        if let Some(v) = written.get("nv_size") {
            let n = crate::read::atoi(v.as_bytes());
            if n != 8 {
                return Err(Error::UnsupportedNvSize {
                    offset: 0,
                    found: u32::try_from(n).unwrap_or(0),
                });
            }
        }
        for si in self.subs.values() {
            // A `c` record holds 32-bit counts (a merge of many runs can add up to more).
            let counts = si
                .callers
                .values()
                .flat_map(|l| l.values().map(|c| c.count));
            let placed: u64 = counts.clone().fold(0, u64::saturating_add);
            let rest = si.calls.saturating_sub(placed);
            if let Some(count) = counts.chain([rest]).find(|c| *c > u64::from(u32::MAX)) {
                return Err(Error::ValueOutOfRange {
                    offset: 0,
                    what: "call count",
                    value: count,
                });
            }
            if let Some(fid) = si
                .callers
                .keys()
                .find(|f| **f != 0 && !self.files.contains_key(f))
            {
                return Err(Error::UndefinedFid {
                    offset: 0,
                    what: "caller fid",
                    fid: *fid,
                });
            }
        }
        Ok(())
    }

    /// The attributes as the loader keeps them from the lines [`Profile::write`] makes: each
    /// line split at its first `=` ([`Line::model_key_value`], as the loader does), a later line
    /// replacing an earlier one of the same key.
    fn attributes_as_written(&self) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (k, v) in &self.attributes {
            let bytes = text_line(&format!("{k}={v}"));
            if let Some((key, value)) = (Line { text: &bytes }).model_key_value() {
                out.insert(key, value);
            }
        }
        out
    }

    /// Writes the profile, deflating after the options when `level` is given (0-9).
    ///
    /// Fails (before writing anything) when [`Profile::check_writable`] does.
    pub fn write_with(&self, out: impl Write, level: Option<u32>) -> Result<(), Error> {
        self.check_writable()?;
        let mut o = Out {
            w: Writer::new(out).compression_level(level.unwrap_or(6)),
            statements: 0,
            discounts: 0,
            last_place: None,
        };
        let major = if self.major == 0 { MAJOR } else { self.major };
        o.w.header(major, self.minor).map_err(|e| Error::Io {
            offset: 0,
            kind: e.kind(),
        })?;
        for c in &self.comments {
            o.line(b'#', c)?;
        }
        for (k, v) in &self.attributes {
            o.line(b':', &format!("{k}={v}"))?;
        }
        for (k, v) in &self.options {
            o.line(b'!', &format!("{k}={v}"))?;
        }
        if level.is_some() {
            o.rec(&Record::StartDeflate)?;
        }
        // Every process but the last starts and ends here, one after the other: the loader adds
        // each end's time minus the latest start's to `profiler_duration`, and a pid ends once
        // (a merge of several runs has several processes, maybe of one pid).
        let last = self.pids.len().saturating_sub(1);
        for (i, pid) in self.pids.iter().enumerate() {
            if pid.start.is_finite() {
                o.rec(&Record::PidStart {
                    pid: pid.pid,
                    ppid: pid.ppid,
                    time: pid.start,
                })?;
            }
            if let (true, Some(end)) = (i < last, pid.end) {
                o.rec(&Record::PidEnd {
                    pid: pid.pid,
                    time: end,
                })?;
            }
        }
        // Parents before their evals: emit in passes until every file is out; files in a
        // parent cycle (impossible in a real profile) go out as they are, and load as plain
        // files.
        let mut done = std::collections::BTreeSet::new();
        let mut strict = true;
        while done.len() < self.files.len() {
            let mut progress = false;
            for fi in self.files.values() {
                if done.contains(&fi.fid) {
                    continue;
                }
                if let Some(e) = fi.eval
                    && strict
                    && !done.contains(&e.fid)
                    && self.files.contains_key(&e.fid)
                {
                    continue;
                }
                let (name, utf8) = if fi.name_utf8 {
                    (fi.name.as_bytes().to_vec(), true)
                } else {
                    encode_text(&fi.name)
                };
                o.rec(&Record::NewFid {
                    fid: fi.fid,
                    eval_fid: fi.eval.map_or(0, |e| e.fid),
                    eval_line: fi.eval.map_or(0, |e| e.line),
                    flags: fi.flags,
                    size: fi.size,
                    mtime: fi.mtime,
                    name: Str { bytes: &name, utf8 },
                })?;
                done.insert(fi.fid);
                progress = true;
                if !strict {
                    strict = true;
                    break;
                }
            }
            if !progress {
                strict = false;
            }
        }
        let tps = f64::from(self.ticks_per_sec());
        if self.block_times.is_some() || self.sub_times.is_some() {
            o.block_statements(self, tps)?;
        } else {
            for (fid, lines) in &self.line_times {
                for (line, lt) in lines {
                    o.statements(*fid, *line, lt, tps)?;
                }
            }
        }
        o.pad_statement_totals(&self.totals)?;
        for (fid, lines) in &self.source {
            for (line, text) in lines {
                let (bytes, utf8) = encode_text(text);
                o.rec(&Record::SrcLine {
                    fid: *fid,
                    line: *line,
                    text: Str {
                        bytes: &bytes,
                        utf8,
                    },
                })?;
            }
        }
        for fi in self.files.values() {
            for name in &fi.subs_defined {
                let Some(si) = self.subs.get(name) else {
                    continue;
                };
                let (Some(first), Some(last)) = (si.first_line, si.last_line) else {
                    continue;
                };
                let (bytes, utf8) = encode_text(name);
                o.rec(&Record::SubInfo {
                    fid: fi.fid,
                    name: Str {
                        bytes: &bytes,
                        utf8,
                    },
                    first_line: first,
                    last_line: last,
                })?;
            }
        }
        for (name, si) in &self.subs {
            let (called, called_utf8) = encode_text(name);
            let called = Str {
                bytes: &called,
                utf8: called_utf8,
            };
            let (mut count, mut incl, mut excl, mut reci) = (0u64, 0.0, 0.0, 0.0);
            for (fid, lines) in &si.callers {
                if *fid == 0 {
                    continue;
                }
                for (line, ci) in lines {
                    let mut first = true;
                    for caller in &ci.calling_subs {
                        let (cb, cu) = encode_text(caller);
                        o.rec(&Record::SubCallers {
                            fid: *fid,
                            line: *line,
                            caller: Str {
                                bytes: &cb,
                                utf8: cu,
                            },
                            count: if first { ci.count as u32 } else { 0 },
                            incl: if first { ci.incl } else { 0.0 },
                            excl: if first { ci.excl } else { 0.0 },
                            reci: if first { ci.reci } else { 0.0 },
                            rec_depth: ci.rec_depth,
                            called,
                        })?;
                        first = false;
                    }
                    count += ci.count;
                    incl += ci.incl;
                    excl += ci.excl;
                    reci += ci.reci;
                }
            }
            // What the places do not account for (an xsub marker, or calls kept only in the
            // totals) goes in one fid-0 record.
            let rest = si.calls.saturating_sub(count);
            if si.callers.contains_key(&0) || rest != 0 {
                o.rec(&Record::SubCallers {
                    fid: 0,
                    line: 0,
                    caller: Str::bytes(b""),
                    count: rest as u32,
                    incl: si.incl - incl,
                    excl: si.excl - excl,
                    reci: si.reci - reci,
                    rec_depth: si.rec_depth,
                    called,
                })?;
            }
        }
        if let Some(pid) = self.pids.last()
            && let Some(end) = pid.end
        {
            o.rec(&Record::PidEnd {
                pid: pid.pid,
                time: end,
            })?;
        }
        o.w.finish().map(|_| ()).map_err(|e| Error::Io {
            offset: 0,
            kind: e.kind(),
        })
    }
}
