//! The aggregated profile, equal in content to what `Devel::NYTProf::Data->new` builds
//! (NYTProf.xs `load_profile_to_hv` and its callbacks, 3920-5060, then Data.pm `new`).
//!
//! Aggregation rules followed (citations into NYTProf.xs v6.12):
//! - line counts: one per `+`/`*`, except `1 - discount` after `-` records; a later statement
//!   with a count other than 0 or 1 adds `(IV)seconds` instead of the count (3318-3328, a quirk
//!   kept as is);
//! - times in seconds: ticks / `ticks_per_sec` (3996); `c` already carries seconds;
//! - subs: the lowest fid wins when a name is defined twice (4213-4236); a `c` with fid 0 marks an
//!   xsub and sets its lines to 0 (4350-4354); per place the counts and times add up and the
//!   recursion depth is the maximum (4310-4340);
//! - derived attributes (`complete`, `total_*`, `profiler_*`) as in 4997-5040 and Data.pm:104-108;
//! - subs with calls but no fid get fid 1 (Data.pm:110-117).
//!
//! Not done: Data.pm's `collapse_evals_in` (merging sibling string evals with the same source);
//! compare with `Devel::NYTProf::Data->new({skip_collapse_evals => 1})`.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::Error;
use crate::read::{Reader, Record, Str, atoi, parse};

/// Per fid, per line: time and count.
pub type LineTimes = BTreeMap<u32, BTreeMap<u32, LineTime>>;

/// One line's statement time and count.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct LineTime {
    /// Seconds spent on the line's statements.
    pub time: f64,
    /// Statements counted (the discount rule applied).
    pub count: i64,
}

/// A string eval's parent: the file and line holding the `eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct EvalParent {
    /// The fid holding the eval.
    pub fid: u32,
    /// The line of the eval.
    pub line: u32,
}

/// One entry of the file table (`fid_fileinfo`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct FileInfo {
    /// The file id.
    pub fid: u32,
    /// The name as Perl sees it (see [`crate::Str::to_text`]).
    pub name: String,
    /// The name's string tag was `"` (UTF-8).
    pub name_utf8: bool,
    /// For a string eval whose parent fid is known: where the eval is.
    pub eval: Option<EvalParent>,
    /// [`crate::raw::fid_flags`] bits.
    pub flags: u32,
    /// Size (0 in 6.12).
    pub size: u32,
    /// Modification time (0 in 6.12).
    pub mtime: u32,
    /// Names of the subs defined in this file (`s` records naming this fid).
    pub subs_defined: BTreeSet<String>,
}

/// The calls of one sub from one place (`NYTP_SCi_*`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct CallInfo {
    /// Number of calls.
    pub count: u64,
    /// Inclusive seconds.
    pub incl: f64,
    /// Exclusive seconds.
    pub excl: f64,
    /// Recursive inclusive seconds.
    pub reci: f64,
    /// Maximum recursion depth.
    pub rec_depth: u32,
    /// The subs the calls came from.
    pub calling_subs: BTreeSet<String>,
}

/// One sub (`sub_subinfo`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct SubInfo {
    /// `package::name`.
    pub name: String,
    /// Where it is defined; `None` when no `s` record named it.
    pub fid: Option<u32>,
    /// First line (0 for an xsub).
    pub first_line: Option<u32>,
    /// Last line (0 for an xsub).
    pub last_line: Option<u32>,
    /// Total calls.
    pub calls: u64,
    /// Total inclusive seconds.
    pub incl: f64,
    /// Total exclusive seconds.
    pub excl: f64,
    /// Total recursive seconds.
    pub reci: f64,
    /// Maximum recursion depth.
    pub rec_depth: u32,
    /// Callers: calling fid, then calling line. Fid 0 with no lines marks an xsub.
    pub callers: BTreeMap<u32, BTreeMap<u32, CallInfo>>,
}

/// One profiled process (`P` and `p`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct PidRun {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Start, seconds since the epoch.
    pub start: f64,
    /// End, seconds since the epoch; `None` when the `p` record is missing.
    pub end: Option<f64>,
}

/// Totals the loader derives (stored as attributes by Devel::NYTProf::Data).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Totals {
    /// `+`/`*` records read.
    pub stmts_measured: u64,
    /// Statements discounted (a trailing unused `-` is not counted).
    pub stmts_discounted: u64,
    /// Sum of statement seconds.
    pub stmts_duration: f64,
    /// Sum of `c` counts.
    pub sub_calls: u64,
    /// Sum over pids of end minus start; `None` when no `p` was read.
    pub profiler_duration: Option<f64>,
}

/// The aggregated profile.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
pub struct Profile {
    /// Major version (5).
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// Comment lines (`#`), in order, without the `#`.
    pub comments: Vec<String>,
    /// Attributes as written (`:` records; a later one replaces an earlier one).
    pub attributes: BTreeMap<String, String>,
    /// Options (`!` records).
    pub options: BTreeMap<String, String>,
    /// The file table by fid.
    pub files: BTreeMap<u32, FileInfo>,
    /// Saved source (`S` records): fid, line, text.
    pub source: BTreeMap<u32, BTreeMap<u32, String>>,
    /// Statement times per fid and line (`fid_line_time`).
    pub line_times: LineTimes,
    /// Per fid and enclosing block line (`fid_block_time`, `blocks=1` only).
    pub block_times: Option<LineTimes>,
    /// Per fid and enclosing sub line (`fid_sub_time`, `blocks=1` only).
    pub sub_times: Option<LineTimes>,
    /// Subs by name.
    pub subs: BTreeMap<String, SubInfo>,
    /// Processes in order of their `P` records.
    pub pids: Vec<PidRun>,
    /// Derived totals.
    pub totals: Totals,
}

impl Profile {
    /// Reads a whole file in memory (compressed or not) into the model.
    pub fn from_bytes(data: &[u8]) -> Result<Profile, Error> {
        match Self::from_bytes_partial(data) {
            (p, None) => Ok(p),
            (_, Some(e)) => Err(e),
        }
    }

    /// Like [`Profile::from_bytes`], but keeps what was read before an error.
    pub fn from_bytes_partial(data: &[u8]) -> (Profile, Option<Error>) {
        let file = match parse(data) {
            Ok(f) => f,
            Err(e) => return (Profile::default(), Some(e)),
        };
        let h = file.header();
        let mut loader = Loader::new(h.major, h.minor);
        let mut records = file.records();
        loop {
            let offset = records.offset();
            match records.next() {
                None => {
                    let p = loader.finish();
                    let err = p.check_ticks_per_sec(offset);
                    return (p, err.err());
                }
                Some(Ok(r)) => {
                    if let Err(e) = loader.record(offset, &r) {
                        return (loader.finish(), Some(e));
                    }
                }
                Some(Err(e)) => return (loader.finish(), Some(e)),
            }
        }
    }

    /// Reads from any `io::Read`, streaming (memory near the model's size).
    pub fn from_reader(src: impl std::io::Read) -> Result<Profile, Error> {
        let mut reader = Reader::new(src)?;
        let (major, minor) = reader.version();
        let mut loader = Loader::new(major, minor);
        loop {
            let offset = reader.offset();
            match reader.next_record() {
                None => {
                    let p = loader.finish();
                    p.check_ticks_per_sec(offset)?;
                    return Ok(p);
                }
                Some(r) => loader.record(offset, &r?)?,
            }
        }
    }

    /// The real loader divides by `ticks_per_sec` (Data.pm:112) and dies when it is missing or
    /// 0; `offset` is where the input ended.
    pub fn check_ticks_per_sec(&self, offset: u64) -> Result<(), Error> {
        let tps = self
            .attributes
            .get("ticks_per_sec")
            .map_or(0.0, |v| perl_num(v));
        if tps == 0.0 || tps.is_nan() {
            return Err(Error::MissingTicksPerSec { offset });
        }
        Ok(())
    }

    /// True when every started process also ended (the `complete` attribute).
    pub fn complete(&self) -> bool {
        self.pids.iter().all(|p| p.end.is_some())
    }

    /// `ticks_per_sec` as the reader takes it (`(unsigned)atoi`, 0 when missing).
    pub fn ticks_per_sec(&self) -> u32 {
        self.attributes
            .get("ticks_per_sec")
            .map_or(0, |v| atoi(v.as_bytes()) as i32 as u32)
    }

    /// The attribute hash Devel::NYTProf::Data exposes: the file's attributes plus the derived
    /// ones, each as a number or a string.
    pub fn data_attributes(&self) -> BTreeMap<String, AttrValue> {
        let mut out: BTreeMap<String, AttrValue> = self
            .attributes
            .iter()
            .map(|(k, v)| (k.clone(), AttrValue::Text(v.clone())))
            .collect();
        let num = |v: f64| AttrValue::Number(v);
        if let Some(last) = self.pids.last() {
            out.insert("profiler_start_time".into(), num(last.start));
        }
        if let Some(end) = self.pids.iter().rev().find_map(|p| p.end) {
            out.insert("profiler_end_time".into(), num(end));
        }
        if let Some(d) = self.totals.profiler_duration {
            out.insert("profiler_duration".into(), num(d));
        }
        out.insert(
            "complete".into(),
            AttrValue::Text(if self.complete() { "1" } else { "" }.into()),
        );
        let t = &self.totals;
        out.insert("total_stmts_measured".into(), num(t.stmts_measured as f64));
        out.insert(
            "total_stmts_discounted".into(),
            num(t.stmts_discounted as f64),
        );
        out.insert("total_stmts_duration".into(), num(t.stmts_duration));
        out.insert("total_sub_calls".into(), num(t.sub_calls as f64));
        let overhead = self
            .attributes
            .get("cumulative_overhead_ticks")
            .map_or(0.0, |v| perl_num(v));
        let tps = self
            .attributes
            .get("ticks_per_sec")
            .map_or(0.0, |v| perl_num(v));
        out.insert(
            "profiler_active".into(),
            num(t.profiler_duration.unwrap_or(0.0) - overhead / tps),
        );
        out
    }

    /// The eval fids whose parent is `fid`, in fid order.
    pub fn evals_of(&self, fid: u32) -> impl Iterator<Item = &FileInfo> {
        self.files
            .values()
            .filter(move |f| f.eval.is_some_and(|e| e.fid == fid))
    }

    /// The calls made from `fid`: line, called sub, call info (`NYTP_FIDi_SUBS_CALLED`).
    pub fn calls_from(&self, fid: u32) -> BTreeMap<u32, BTreeMap<&str, &CallInfo>> {
        let mut out: BTreeMap<u32, BTreeMap<&str, &CallInfo>> = BTreeMap::new();
        for (name, si) in &self.subs {
            if fid == 0 {
                continue;
            }
            if let Some(lines) = si.callers.get(&fid) {
                for (line, ci) in lines {
                    out.entry(*line).or_default().insert(name.as_str(), ci);
                }
            }
        }
        out
    }

    /// Merges `other` (for example a forked child's `nytprof.out.<pid>`) into `self`: files are
    /// matched by name and eval parent (new ones get new fids), line times and calls add up,
    /// processes are appended.
    pub fn merge(&mut self, other: &Profile) {
        let mut map: BTreeMap<u32, u32> = BTreeMap::new();
        map.insert(0, 0);
        let mut next = self.files.keys().next_back().copied().unwrap_or(0) + 1;
        for (fid, fi) in &other.files {
            let eval = fi.eval.map(|e| EvalParent {
                fid: map.get(&e.fid).copied().unwrap_or(e.fid),
                line: e.line,
            });
            let found = self
                .files
                .values()
                .find(|f| f.name == fi.name && f.eval == eval)
                .map(|f| f.fid);
            let new_fid = found.unwrap_or_else(|| {
                let n = next;
                next += 1;
                let mut copy = fi.clone();
                copy.fid = n;
                copy.eval = eval;
                self.files.insert(n, copy);
                n
            });
            if let Some(f) = self.files.get_mut(&new_fid) {
                f.subs_defined.extend(fi.subs_defined.iter().cloned());
            }
            map.insert(*fid, new_fid);
        }
        let m = |fid: u32| map.get(&fid).copied().unwrap_or(fid);
        let merge_lines = |dst: &mut LineTimes, src: &LineTimes| {
            for (fid, lines) in src {
                let d = dst.entry(m(*fid)).or_default();
                for (line, lt) in lines {
                    let e = d.entry(*line).or_default();
                    e.time += lt.time;
                    e.count += lt.count;
                }
            }
        };
        merge_lines(&mut self.line_times, &other.line_times);
        if let Some(src) = &other.block_times {
            merge_lines(self.block_times.get_or_insert_with(Default::default), src);
        }
        if let Some(src) = &other.sub_times {
            merge_lines(self.sub_times.get_or_insert_with(Default::default), src);
        }
        for (fid, lines) in &other.source {
            self.source.entry(m(*fid)).or_insert_with(|| lines.clone());
        }
        for (name, si) in &other.subs {
            let d = self.subs.entry(name.clone()).or_insert_with(|| SubInfo {
                name: name.clone(),
                ..SubInfo::default()
            });
            if d.fid.is_none() {
                d.fid = si.fid.map(m);
                d.first_line = si.first_line;
                d.last_line = si.last_line;
            }
            d.calls += si.calls;
            d.incl += si.incl;
            d.excl += si.excl;
            d.reci += si.reci;
            d.rec_depth = d.rec_depth.max(si.rec_depth);
            for (fid, lines) in &si.callers {
                let dl = d.callers.entry(m(*fid)).or_default();
                for (line, ci) in lines {
                    let e = dl.entry(*line).or_default();
                    e.count += ci.count;
                    e.incl += ci.incl;
                    e.excl += ci.excl;
                    e.reci += ci.reci;
                    e.rec_depth = e.rec_depth.max(ci.rec_depth);
                    e.calling_subs.extend(ci.calling_subs.iter().cloned());
                }
            }
        }
        self.pids.extend(other.pids.iter().copied());
        let t = &mut self.totals;
        t.stmts_measured += other.totals.stmts_measured;
        t.stmts_discounted += other.totals.stmts_discounted;
        t.stmts_duration += other.totals.stmts_duration;
        t.sub_calls += other.totals.sub_calls;
        if let Some(d) = other.totals.profiler_duration {
            t.profiler_duration = Some(t.profiler_duration.unwrap_or(0.0) + d);
        }
    }
}

/// An attribute value of [`Profile::data_attributes`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(untagged))]
pub enum AttrValue {
    /// A value kept as the file wrote it.
    Text(String),
    /// A value the loader computed.
    Number(f64),
}

/// Perl's numeric value of a string (leading decimal number, 0 otherwise).
pub(crate) fn perl_num(s: &str) -> f64 {
    let t = s.trim_start();
    let end = t
        .char_indices()
        .take_while(|(i, c)| {
            c.is_ascii_digit()
                || *c == '.'
                || ((*c == '-' || *c == '+') && *i == 0)
                || *c == 'e'
                || *c == 'E'
        })
        .map(|(i, c)| i + c.len_utf8())
        .last()
        .unwrap_or(0);
    let mut cut = end;
    while cut > 0 {
        if let Ok(v) = t[..cut].parse::<f64>() {
            return v;
        }
        cut -= 1;
    }
    0.0
}

/// Builds a [`Profile`] from records, as NYTProf.xs's loader callbacks do.
#[derive(Debug)]
pub struct Loader {
    profile: Profile,
    ticks_per_sec: u32,
    statement_discount: i64,
    live_pids: BTreeMap<u32, usize>,
    last_start: f64,
    duration: Option<f64>,
}

fn add_entry(lines: &mut BTreeMap<u32, LineTime>, line: u32, seconds: f64, count: i64) {
    use std::collections::btree_map::Entry;
    match lines.entry(line) {
        Entry::Vacant(v) => {
            v.insert(LineTime {
                time: seconds,
                count,
            });
        }
        Entry::Occupied(mut o) => {
            let e = o.get_mut();
            e.time += seconds;
            if count == 1 {
                e.count += 1;
            } else if count != 0 {
                // store_profile_line_entry adds `(IV)time`, not the count (NYTProf.xs:3326).
                e.count = e.count.wrapping_add(seconds as i64);
            }
        }
    }
}

impl Loader {
    /// A loader for a file of version `major.minor`.
    pub fn new(major: u32, minor: u32) -> Self {
        Loader {
            profile: Profile {
                major,
                minor,
                ..Profile::default()
            },
            ticks_per_sec: 0,
            statement_discount: 0,
            live_pids: BTreeMap::new(),
            last_start: 0.0,
            duration: None,
        }
    }

    fn sub_entry<'p>(subs: &'p mut BTreeMap<String, SubInfo>, name: &Str<'_>) -> &'p mut SubInfo {
        let name = name.to_text();
        subs.entry(name.clone()).or_insert_with(|| SubInfo {
            name,
            ..SubInfo::default()
        })
    }

    /// Adds one record found at `offset`.
    pub fn record(&mut self, offset: u64, r: &Record<'_>) -> Result<(), Error> {
        let p = &mut self.profile;
        match *r {
            Record::Attribute(l) => {
                if let Some((k, v)) = l.key_value() {
                    if k == b"ticks_per_sec" {
                        self.ticks_per_sec = atoi(v) as i32 as u32;
                    }
                    p.attributes.insert(
                        crate::read::decode_text(k, false),
                        crate::read::decode_text(v, false),
                    );
                }
            }
            Record::Option(l) => {
                if let Some((k, v)) = l.key_value() {
                    p.options.insert(
                        crate::read::decode_text(k, false),
                        crate::read::decode_text(v, false),
                    );
                }
            }
            Record::Comment(l) => p.comments.push(crate::read::decode_text(l.text, false)),
            Record::StartDeflate | Record::SubEntry { .. } | Record::SubReturn { .. } => {}
            Record::PidStart { pid, ppid, time } => {
                self.last_start = time;
                self.live_pids.insert(pid, p.pids.len());
                p.pids.push(PidRun {
                    pid,
                    ppid,
                    start: time,
                    end: None,
                });
            }
            Record::PidEnd { pid, time } => {
                if let Some(i) = self.live_pids.remove(&pid) {
                    p.pids[i].end = Some(time);
                } else {
                    p.pids.push(PidRun {
                        pid,
                        ppid: 0,
                        start: f64::NAN,
                        end: Some(time),
                    });
                }
                self.duration = Some(self.duration.unwrap_or(0.0) + (time - self.last_start));
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
                if fid == 0 {
                    return Err(Error::ReservedFid { offset });
                }
                // An eval whose parent is unknown is kept as a plain file (4140-4150).
                let eval =
                    (eval_fid != 0 && p.files.contains_key(&eval_fid)).then_some(EvalParent {
                        fid: eval_fid,
                        line: eval_line,
                    });
                p.files.insert(
                    fid,
                    FileInfo {
                        fid,
                        name: name.to_text(),
                        name_utf8: name.utf8,
                        eval,
                        flags,
                        size,
                        mtime,
                        subs_defined: BTreeSet::new(),
                    },
                );
            }
            Record::Discount => self.statement_discount += 1,
            Record::TimeLine { ticks, fid, line } => self.time(ticks, fid, line, None),
            Record::TimeBlock {
                ticks,
                fid,
                line,
                block_line,
                sub_line,
            } => self.time(ticks, fid, line, Some((block_line, sub_line))),
            Record::SrcLine { fid, line, text } => {
                p.source
                    .entry(fid)
                    .or_default()
                    .insert(line, text.to_text());
            }
            Record::SubInfo {
                fid,
                name,
                first_line,
                last_line,
            } => {
                // The real loader dereferences the fileinfo without a check and crashes
                // (NYTProf.xs:4241); this is a typed error instead.
                let Some(fi) = p.files.get_mut(&fid) else {
                    return Err(Error::UndefinedFid {
                        offset,
                        what: "SUB_INFO",
                        fid,
                    });
                };
                fi.subs_defined.insert(name.to_text());
                let si = Self::sub_entry(&mut p.subs, &name);
                if si.fid.is_none_or(|old| fid <= old) {
                    si.fid = Some(fid);
                    si.first_line = Some(first_line);
                    si.last_line = Some(last_line);
                }
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
                if fid != 0 && !p.files.contains_key(&fid) {
                    return Err(Error::UndefinedFid {
                        offset,
                        what: "SUB_CALLERS",
                        fid,
                    });
                }
                let si = Self::sub_entry(&mut p.subs, &called);
                let by_line = si.callers.entry(fid).or_default();
                if fid != 0 {
                    let ci = by_line.entry(line).or_default();
                    ci.count += u64::from(count);
                    ci.incl += incl;
                    ci.excl += excl;
                    ci.reci += reci;
                    ci.rec_depth = ci.rec_depth.max(rec_depth);
                    ci.calling_subs.insert(caller.to_text());
                } else {
                    si.first_line = Some(0);
                    si.last_line = Some(0);
                }
                si.calls += u64::from(count);
                si.incl += incl;
                si.excl += excl;
                si.rec_depth = si.rec_depth.max(rec_depth);
                si.reci += reci;
                p.totals.sub_calls += u64::from(count);
            }
        }
        Ok(())
    }

    fn time(&mut self, ticks: i32, fid: u32, line: u32, block: Option<(u32, u32)>) {
        let p = &mut self.profile;
        let seconds = f64::from(ticks) / f64::from(self.ticks_per_sec);
        let count = 1 - self.statement_discount;
        add_entry(p.line_times.entry(fid).or_default(), line, seconds, count);
        if let Some((block_line, sub_line)) = block {
            let b = p.block_times.get_or_insert_with(Default::default);
            add_entry(b.entry(fid).or_default(), block_line, seconds, count);
            let s = p.sub_times.get_or_insert_with(Default::default);
            add_entry(s.entry(fid).or_default(), sub_line, seconds, count);
        }
        p.totals.stmts_measured += 1;
        p.totals.stmts_discounted += self.statement_discount.max(0) as u64;
        p.totals.stmts_duration += seconds;
        self.statement_discount = 0;
    }

    /// The profile, with the loader's and Data.pm's final steps applied.
    pub fn finish(mut self) -> Profile {
        // An unused trailing discount is not counted (NYTProf.xs:5018-5019): discounts are
        // counted above only when a statement consumes them.
        let p = &mut self.profile;
        p.totals.profiler_duration = self.duration;
        // Data.pm:110-117: subs with calls but no fid move to fid 1.
        let has_fid1 = p.files.contains_key(&1);
        for si in p.subs.values_mut() {
            if si.calls != 0 && si.fid.is_none_or(|f| f == 0) {
                if has_fid1 {
                    si.fid = Some(1);
                    if let Some(f) = p.files.get_mut(&1) {
                        f.subs_defined.insert(si.name.clone());
                    }
                } else {
                    si.fid = Some(0);
                }
            }
        }
        self.profile
    }
}
