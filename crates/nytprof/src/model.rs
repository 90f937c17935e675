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
//! - subs with calls but no fid get fid 1 (Data.pm:110-117);
//! - then, unless [`ModelOptions::skip_collapse_evals`] is set, sibling string evals with the
//!   same source are collapsed as Data.pm's `collapse_evals_in` does (see [`crate::collapse`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::calls::{CallPaths, CallPathsThread};
use crate::error::Error;
use crate::raw;
use crate::read::{Reader, Record, Records, Str, Trailing, atoi, parse};

/// The input size from which [`Profile::from_bytes_with_call_paths`] builds the call paths on
/// a second thread: below, starting the thread costs more than it saves.
const CALL_PATHS_THREAD_FROM: usize = 1 << 20;

/// What takes each `<` record's offset in the input and its fields (depth, inclusive and
/// exclusive ticks, name, whether the name is UTF-8) while a file is read: the call paths, on
/// this thread (which reads the fields) or another (which reads the record again at its
/// offset: handing over an offset costs the reading thread less than the fields).
type ReturnSink<'s, 'a> = dyn FnMut(u64, u32, f64, f64, &'a [u8], bool) + 's;

/// Where the uncompressed part of a file ended ([`Profile::load_plain`]).
enum PlainEnd {
    /// At the end of the input, at this offset.
    End(u64),
    /// At the record that starts the compressed part, read.
    Deflate,
}

/// A sub definition (`s` record): fid, name, first and last line.
pub(crate) type SubDef = (u32, String, u32, u32);

/// A statement's place: fid, line, and the block and sub lines of a `*` record.
pub(crate) type Place = (u32, u32, Option<(u32, u32)>);

/// What a merge reads of a file besides its model ([`Profile::from_bytes_for_merge`]), in the
/// same pass: its sub definitions in file order, its first statement's place, and the `-`
/// records after its last statement.
#[derive(Debug, Default)]
pub(crate) struct MergeScan {
    pub(crate) defs: Vec<SubDef>,
    pub(crate) first: Option<Place>,
    pub(crate) trailing_discounts: i64,
}

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
    /// The sibling evals collapsed into this one, in merge order (Data.pm's `merged_fids`;
    /// empty unless [`Profile::collapse_evals`] ran).
    #[cfg_attr(feature = "serde", serde(default))]
    pub merged_fids: Vec<u32>,
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
    /// Names of the anonymous subs of collapsed evals merged into this one (Data.pm's
    /// `merged_sub_names`, printed as `merge_donor`; empty unless [`Profile::collapse_evals`]
    /// ran).
    #[cfg_attr(feature = "serde", serde(default))]
    pub merged_subs: Vec<String>,
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
    /// Data.pm's per-file view of the calls (`NYTP_FIDi_SUBS_CALLED`: calling fid, line, called
    /// sub) when it differs from what [`SubInfo::callers`] says. The loader keeps the two
    /// views equal, so this is `None` except after [`Profile::collapse_evals`], which (like
    /// Data.pm) drops some merged anonymous subs' callers from the sub but keeps them in the
    /// calling file. [`Profile::calls_from`] reads it when present.
    #[cfg_attr(feature = "serde", serde(default))]
    pub file_calls: Option<FileCalls>,
}

/// Calls per calling fid, calling line and called sub name.
pub type FileCalls = BTreeMap<u32, BTreeMap<u32, BTreeMap<String, CallInfo>>>;

/// How [`Profile::from_bytes_with`] and [`Profile::from_reader_with`] build the model.
///
/// The default matches `Devel::NYTProf::Data->new`: string evals are collapsed. Lossless
/// rewriting through the model writer needs the raw model ([`ModelOptions::raw`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModelOptions {
    /// Keep every string eval as the file has it, as `skip_collapse_evals => 1` does.
    pub skip_collapse_evals: bool,
    /// Above this many distinct sources among the evals of one line, all of them are collapsed
    /// into one (Data.pm reads `$ENV{NYTPROF_MAX_EVAL_SIBLINGS}`, 200 when unset).
    pub max_eval_siblings: usize,
    /// Keep the source lines the file saved ([`Profile::source`]) for every file. When false,
    /// only the string evals' source is kept (the eval collapsing tells evals apart by it):
    /// what a conversion into the profile model, which shows no source, reads faster. A
    /// program's saved source is most of a profile's records. Default true.
    pub keep_source: bool,
    /// Where the machine has two cores or more, let a second thread inflate a compressed file
    /// ahead of the parsing, and build the call paths of a large uncompressed one beside it, so
    /// that one file reads in about the time of the slower half. Default true. A caller that
    /// already keeps every core busy with a file of its own (a merge of many profiles) turns it
    /// off: there the second thread only competes with the others, and handing the inflated
    /// bytes over costs CPU of its own.
    pub second_thread: bool,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            skip_collapse_evals: false,
            max_eval_siblings: 200,
            keep_source: true,
            second_thread: true,
        }
    }
}

impl ModelOptions {
    /// The defaults of `Devel::NYTProf::Data->new`: evals collapsed, 200 sibling sources.
    pub fn new() -> Self {
        Self::default()
    }

    /// The model as the file has it: no eval collapsed (`skip_collapse_evals => 1`).
    pub fn raw() -> Self {
        Self::default().skip_collapse_evals(true)
    }

    /// Sets [`ModelOptions::skip_collapse_evals`].
    #[must_use]
    pub fn skip_collapse_evals(mut self, skip: bool) -> Self {
        self.skip_collapse_evals = skip;
        self
    }

    /// Sets [`ModelOptions::max_eval_siblings`].
    #[must_use]
    pub fn max_eval_siblings(mut self, max: usize) -> Self {
        self.max_eval_siblings = max;
        self
    }

    /// Sets [`ModelOptions::keep_source`].
    #[must_use]
    pub fn keep_source(mut self, keep: bool) -> Self {
        self.keep_source = keep;
        self
    }

    /// Sets [`ModelOptions::second_thread`].
    #[must_use]
    pub fn second_thread(mut self, second_thread: bool) -> Self {
        self.second_thread = second_thread;
        self
    }

    fn apply(&self, p: &mut Profile) {
        if !self.skip_collapse_evals {
            p.collapse_evals(self.max_eval_siblings);
        }
    }
}

impl Profile {
    /// Reads a whole file in memory (compressed or not) into the model, with the default
    /// [`ModelOptions`] (evals collapsed, as `Devel::NYTProf::Data->new` does).
    pub fn from_bytes(data: &[u8]) -> Result<Profile, Error> {
        Self::from_bytes_with(data, ModelOptions::default())
    }

    /// Reads a whole file in memory into the model built as `options` say.
    pub fn from_bytes_with(data: &[u8], options: ModelOptions) -> Result<Profile, Error> {
        match Self::from_bytes_partial_with(data, options) {
            (p, None) => Ok(p),
            (_, Some(e)) => Err(e),
        }
    }

    /// Like [`Profile::from_bytes`], but keeps what was read before an error.
    pub fn from_bytes_partial(data: &[u8]) -> (Profile, Option<Error>) {
        Self::from_bytes_partial_with(data, ModelOptions::default())
    }

    /// Like [`Profile::from_bytes_with`], but keeps what was read before an error.
    pub fn from_bytes_partial_with(data: &[u8], options: ModelOptions) -> (Profile, Option<Error>) {
        let (p, _, e) = Self::from_bytes_report(data, options);
        (p, e)
    }

    /// Reads a whole file in memory into the model, once, and also says what the load saw
    /// besides the model ([`LoadReport`]: records, compression, bytes after the zlib stream);
    /// keeps what was read before an error.
    ///
    /// An uncompressed file is decoded in place; a compressed one is inflated a window at a time
    /// and parsed as it comes ([`crate::Reader`]), so memory is the model plus a fixed window,
    /// whatever the stream inflates to, and damage is found as soon as its record is inflated.
    /// Where the machine has two cores or more (and unless [`ModelOptions::second_thread`] is
    /// off), a second (scoped) thread inflates ahead of the parsing, at most four 128 KiB pieces
    /// ahead. Time is linear in the inflated size.
    pub fn from_bytes_report(
        data: &[u8],
        options: ModelOptions,
    ) -> (Profile, LoadReport, Option<Error>) {
        let mut report = LoadReport::default();
        let (mut p, e) = Self::load_slice(data, &mut report, None, None, options);
        options.apply(&mut p);
        (p, report, e)
    }

    /// [`Profile::from_bytes_report`], and what a merge reads of the file besides the model
    /// ([`MergeScan`]), in the same pass.
    pub(crate) fn from_bytes_for_merge(
        data: &[u8],
        options: ModelOptions,
    ) -> (Profile, LoadReport, MergeScan, Option<Error>) {
        let mut report = LoadReport::default();
        let mut scan = Some(MergeScan::default());
        let (mut p, e) = Self::load_slice(data, &mut report, None, Some(&mut scan), options);
        options.apply(&mut p);
        (p, report, scan.unwrap_or_default(), e)
    }

    /// Like [`Profile::from_bytes_report`], and also builds the call paths `nytprofcalls` prints
    /// from the `<` records, in the same pass ([`CallPaths`]: empty when the profile was made
    /// with `calls=0`). Memory is the model plus one node per distinct call path.
    pub fn from_bytes_with_call_paths(
        data: &[u8],
        options: ModelOptions,
    ) -> (Profile, CallPaths, LoadReport, Option<Error>) {
        let mut report = LoadReport::default();
        let mut calls = None;
        let (mut p, e) = Self::load_slice(data, &mut report, Some(&mut calls), None, options);
        options.apply(&mut p);
        (p, calls.unwrap_or_default(), report, e)
    }

    /// Loads `data`; with `calls`, also builds the call paths into it; with `scan`, what a
    /// merge reads besides the model. Of `options`, reads [`ModelOptions::keep_source`] and
    /// [`ModelOptions::second_thread`] (the caller applies the rest to the result).
    fn load_slice(
        data: &[u8],
        report: &mut LoadReport,
        calls: Option<&mut Option<CallPaths>>,
        scan: Option<&mut Option<MergeScan>>,
        options: ModelOptions,
    ) -> (Profile, Option<Error>) {
        let file = match parse(data) {
            Ok(f) => f,
            Err(e) => return (Profile::default(), Some(e)),
        };
        let h = file.header();
        let mut loader = Loader::new(h.major, h.minor);
        loader.keep_source = options.keep_source;
        if calls.is_some() {
            loader = loader.with_call_paths();
        }
        if scan.is_some() {
            loader.merge_scan = Some(MergeScan::default());
        }
        let second_thread = options.second_thread;
        let error = match Self::load_slice_into(data, &file, &mut loader, report, second_thread) {
            // In the real reader's order: Data.pm divides by the tick rate before it lists
            // the files.
            Ok(end) => check_ticks_per_sec_value(
                loader
                    .profile
                    .attributes
                    .get("ticks_per_sec")
                    .map(String::as_str),
                end,
            )
            .and_then(|()| loader.check_eval_fids())
            .err(),
            Err(e) => Some(e),
        };
        if let Some(out) = calls {
            *out = loader.take_call_paths();
        }
        if let Some(out) = scan {
            *out = loader.merge_scan.take().map(|mut scan| {
                // Discounts are counted until a statement takes them.
                scan.trailing_discounts = loader.statement_discount;
                scan
            });
        }
        (loader.finish(), error)
    }

    /// Feeds the records of `file` (read from `data`) to `loader`, with a second thread where
    /// `second_thread` allows ([`ModelOptions::second_thread`]); returns the offset where the
    /// input ended, or the first error.
    fn load_slice_into<'f>(
        data: &[u8],
        file: &'f crate::read::File<'_>,
        loader: &mut Loader,
        report: &mut LoadReport,
        second_thread: bool,
    ) -> Result<u64, Error> {
        let h = file.header();
        loader.set_input_read(data.len() as u64);
        let mut records = file.plain_records();
        let mut count = 0u64;
        // The call paths are taken out of the loader while the records before any compressed
        // part are read, and built beside them: on a second thread for a large input.
        let calls = loader.calls.take();
        let mut load = |returns: Option<&mut ReturnSink<'_, 'f>>| {
            Self::load_plain(&mut records, loader, report, &mut count, returns)
        };
        let (plain, calls) = match calls {
            None => (load(None), None),
            Some(calls) if second_thread && data.len() >= CALL_PATHS_THREAD_FROM => {
                std::thread::scope(|scope| {
                    let mut thread = CallPathsThread::spawn(scope, calls, file.data());
                    let plain = load(Some(&mut |offset, _, _, _, _, _| {
                        thread.add_return_at(offset)
                    }));
                    (plain, Some(thread.finish()))
                })
            }
            Some(mut calls) => {
                let plain = load(Some(&mut |_, depth, incl, excl, name, utf8| {
                    calls.add_return_raw(depth, incl, excl, name, utf8)
                }));
                (plain, Some(calls))
            }
        };
        loader.calls = calls;
        match plain? {
            PlainEnd::End(offset) => Ok(offset),
            PlainEnd::Deflate => {
                let z_end = records.offset();
                let rest = &data[(z_end as usize).min(data.len())..];
                let (e, end) =
                    crate::read::with_inflate_ahead(rest, z_end, second_thread, |ahead| {
                        let mut reader = Reader::after_deflate_ahead(rest, z_end - 1, h, ahead);
                        load_stream(&mut reader, loader, report)
                    });
                e.map_or(Ok(end), Err)
            }
        }
    }

    /// Feeds the records of the uncompressed part of a file to `loader`, up to its end or to
    /// the record that starts the compressed part; each `<` record goes to `returns` (skipped
    /// when `None`).
    fn load_plain<'a>(
        records: &mut Records<'a>,
        loader: &mut Loader,
        report: &mut LoadReport,
        count: &mut u64,
        mut returns: Option<&mut ReturnSink<'_, 'a>>,
    ) -> Result<PlainEnd, Error> {
        loop {
            // The record kinds that make up most of a profile skip the general decoder.
            let bulk = records.bulk();
            if let Some(&tag) = bulk.first()
                && (tag == raw::tag::TIME_LINE
                    || tag == raw::tag::DISCOUNT
                    || tag == raw::tag::SUB_RETURN)
            {
                let run = loader.statement_run(bulk, records.offset(), count, &mut returns);
                report.records = *count;
                match run {
                    Ok(0) => {}
                    Ok(used) => {
                        records.advance(used);
                        continue;
                    }
                    Err(e) => return Err(e),
                }
            }
            match &mut returns {
                None if records.skip_sub_return() => {
                    *count += 1;
                    continue;
                }
                Some(returns) => {
                    let at = records.offset();
                    if let Some((depth, incl, excl, name, utf8)) = records.next_sub_return() {
                        *count += 1;
                        returns(at, depth, incl, excl, name, utf8);
                        continue;
                    }
                }
                None => {}
            }
            if records.skip_src_line(|fid| loader.drops_source_of(fid)) {
                *count += 1;
                continue;
            }
            let offset = records.offset();
            report.records = *count;
            report.input_offset = offset;
            match records.next() {
                None => return Ok(PlainEnd::End(offset)),
                Some(Ok(Record::StartDeflate)) => {
                    *count += 1;
                    report.compressed = true;
                    report.records = *count;
                    return Ok(PlainEnd::Deflate);
                }
                Some(Ok(Record::SubReturn {
                    depth,
                    incl_ticks,
                    excl_ticks,
                    name,
                })) if returns.is_some() => {
                    // A `<` record the fast path above leaves to the general decoder (near the
                    // end of the input): to the call paths in its turn all the same.
                    *count += 1;
                    report.records = *count;
                    if let Some(returns) = &mut returns {
                        returns(offset, depth, incl_ticks, excl_ticks, name.bytes, name.utf8);
                    }
                }
                Some(Ok(r)) => {
                    *count += 1;
                    report.records = *count;
                    loader.record(offset, &r)?;
                }
                Some(Err(e)) => return Err(e),
            }
        }
    }

    /// Reads from any `io::Read`, streaming (memory near the model's size), with the default
    /// [`ModelOptions`].
    pub fn from_reader(src: impl std::io::Read) -> Result<Profile, Error> {
        Self::from_reader_with(src, ModelOptions::default())
    }

    /// Reads from any `io::Read` into the model built as `options` say.
    pub fn from_reader_with(
        src: impl std::io::Read,
        options: ModelOptions,
    ) -> Result<Profile, Error> {
        let mut reader = Reader::new(src)?;
        let (major, minor) = reader.version();
        let mut loader = Loader::new(major, minor);
        let mut report = LoadReport::default();
        let (e, end) = load_stream(&mut reader, &mut loader, &mut report);
        match loader.finish_checked(end, e) {
            (mut p, None) => {
                options.apply(&mut p);
                Ok(p)
            }
            (_, Some(e)) => Err(e),
        }
    }

    /// The real loader divides by `ticks_per_sec` (Data.pm:112) and dies when it is missing or
    /// 0; `offset` is where the input ended.
    pub fn check_ticks_per_sec(&self, offset: u64) -> Result<(), Error> {
        check_ticks_per_sec_value(
            self.attributes.get("ticks_per_sec").map(String::as_str),
            offset,
        )
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

    /// The source each file saved (`savesrc`, `S` records), as (the file's name, which is the
    /// file the profile model's frames name, and its lines from line 1 without their line
    /// ends; a line the file did not save is empty), in fid order. Files without saved source
    /// are left out. The gaps are bounded by the lines saved, so that a damaged file's line
    /// number of four billion makes no four billion empty lines: lines after twice the number
    /// of lines saved plus 1,024 are left out.
    pub fn saved_source_lines(&self) -> Vec<(String, Vec<String>)> {
        let mut out = Vec::new();
        for (fid, lines) in &self.source {
            let Some(file) = self.files.get(fid) else {
                continue;
            };
            let most = lines.len().saturating_mul(2).saturating_add(1024);
            let last = lines
                .keys()
                .map(|&l| l as usize)
                .take_while(|&l| l <= most)
                .last()
                .unwrap_or(0);
            let mut text = vec![String::new(); last];
            for (&line, saved) in lines {
                if let Some(slot) = (line as usize).checked_sub(1).and_then(|i| text.get_mut(i)) {
                    *slot = saved.trim_end_matches(['\n', '\r']).to_owned();
                }
            }
            out.push((file.name.clone(), text));
        }
        out
    }

    /// The calls made from `fid`: line, called sub, call info (`NYTP_FIDi_SUBS_CALLED`).
    pub fn calls_from(&self, fid: u32) -> BTreeMap<u32, BTreeMap<&str, &CallInfo>> {
        let mut out: BTreeMap<u32, BTreeMap<&str, &CallInfo>> = BTreeMap::new();
        if let Some(fc) = &self.file_calls {
            for (line, subs) in fc.get(&fid).into_iter().flatten() {
                if !subs.is_empty() {
                    out.insert(*line, subs.iter().map(|(n, c)| (n.as_str(), c)).collect());
                }
            }
            return out;
        }
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
    /// processes are appended. Merge raw models ([`ModelOptions::raw`]) and collapse the result
    /// ([`Profile::collapse_evals`]): the merged fids and [`Profile::file_calls`] of collapsed
    /// models are not reconciled.
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
                    e.count = e.count.saturating_add(lt.count);
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
        self.add_processes(other);
    }

    /// Adds `other`'s processes (pids) and totals to this profile's: what merging two profiles
    /// of one program does with them, whatever it does with their files and subs.
    pub(crate) fn add_processes(&mut self, other: &Profile) {
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

/// What [`Profile::from_bytes_report`] saw besides the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LoadReport {
    /// Records read (the `z` record included).
    pub records: u64,
    /// The file has a `z` record: what follows it is one zlib stream.
    pub compressed: bool,
    /// Bytes after the zlib stream that are not the profiler's trailer text.
    pub trailing: Option<Trailing>,
    /// Where the load stopped in the file itself: for a compressed file, the file offset of the
    /// compressed bytes read so far (errors carry offsets of the logical, inflated stream).
    pub input_offset: u64,
}

impl LoadReport {
    /// The message of `error`, an error of the load this report describes. Past the `z` tag an
    /// error's offset counts bytes of the inflated (logical) stream, which no hex editor shows,
    /// so the message adds the position reached in the compressed file; the zlib stream's own
    /// errors ([`Error::Inflate`], [`Error::InflationRatio`]) name a file offset already.
    pub fn error_message(&self, error: &Error) -> String {
        if !self.compressed || matches!(error, Error::Inflate { .. } | Error::InflationRatio { .. })
        {
            return error.to_string();
        }
        format!(
            "{error} (offsets after the `z` tag count inflated bytes; the compressed file was read to byte {:#x})",
            self.input_offset
        )
    }
}

/// Feeds every record of `reader` to `loader`; returns the first error and the logical offset
/// reached. `report` gets the record count, the file position reached and the trailing bytes.
fn load_stream<R: std::io::Read>(
    reader: &mut Reader<R>,
    loader: &mut Loader,
    report: &mut LoadReport,
) -> (Option<Error>, u64) {
    let mut count = report.records;
    let error = loop {
        let at = reader.offset();
        if let Some((ticks, fid, line)) = reader.next_time_line() {
            count += 1;
            if let Err(e) = loader.time(at, ticks, fid, line, None) {
                break Some(e);
            }
            continue;
        }
        if reader.next_discount() {
            count += 1;
            loader.statement_discount += 1;
            continue;
        }
        match &mut loader.calls {
            None if reader.skip_sub_return() => {
                count += 1;
                continue;
            }
            Some(calls) => {
                if let Some((depth, incl, excl, name, utf8)) = reader.next_sub_return() {
                    count += 1;
                    calls.add_return_raw(depth, incl, excl, name, utf8);
                    continue;
                }
            }
            None => {}
        }
        if reader.skip_src_line(|fid| loader.drops_source_of(fid)) {
            count += 1;
            continue;
        }
        let offset = reader.offset();
        loader.set_input_read(offset);
        match reader.next_record() {
            None => break None,
            Some(Ok(r)) => {
                count += 1;
                if let Err(e) = loader.record(offset, &r) {
                    break Some(e);
                }
            }
            Some(Err(e)) => break Some(e),
        }
    };
    report.records = count;
    report.compressed |= reader.is_compressed();
    report.input_offset = reader.input_offset();
    report.trailing = reader.trailing();
    (error, reader.offset())
}

/// The `ticks_per_sec` check of [`Profile::check_ticks_per_sec`] on an attribute value: Data.pm
/// divides by it as a Perl number and dies when it is missing, 0 or not a number.
pub(crate) fn check_ticks_per_sec_value(value: Option<&str>, offset: u64) -> Result<(), Error> {
    let tps = value.map_or(0.0, perl_num);
    if tps == 0.0 || tps.is_nan() {
        return Err(Error::MissingTicksPerSec { offset });
    }
    Ok(())
}

/// Perl's numeric value of a string: the longest leading decimal number (sign, digits, point,
/// exponent with its own sign, as in `4.81531e+06`, which is how the profiler writes a large
/// `cumulative_overhead_ticks`), 0 otherwise.
pub(crate) fn perl_num(s: &str) -> f64 {
    let t = s.trim_start().as_bytes();
    let digits = |from: usize| from + t[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut end = usize::from(matches!(t.first(), Some(b'+' | b'-')));
    let int_end = digits(end);
    let mut mantissa = int_end > end;
    end = int_end;
    if t.get(end) == Some(&b'.') {
        let frac_end = digits(end + 1);
        mantissa |= frac_end > end + 1;
        end = frac_end;
    }
    if !mantissa {
        return 0.0;
    }
    if matches!(t.get(end), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(t.get(end + 1), Some(b'+' | b'-')));
        let exp_end = digits(end + 1 + sign);
        if exp_end > end + 1 + sign {
            end = exp_end;
        }
    }
    std::str::from_utf8(&t[..end])
        .ok()
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or(0.0)
}

/// A small multiply-rotate hasher (in the manner of rustc's FxHasher) for the loader's
/// `(fid, line)` tables: statement records are the bulk of a profile, and SipHash or a B-tree
/// lookup per statement would dominate the load.
#[derive(Debug, Default, Clone, Copy)]
struct PairHasher(u64);

impl std::hash::Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type PairMap =
    std::collections::HashMap<(u32, u32), LineTime, std::hash::BuildHasherDefault<PairHasher>>;

/// A line slot never written yet.
const ABSENT: LineTime = LineTime {
    time: 0.0,
    count: i64::MIN,
};

/// The loader's per-fid, per-line table: dense vectors indexed by fid and line (as the real
/// loader's Perl arrays are) while their total size stays within a budget proportional to the
/// input read so far, and a hash map for whatever falls outside it, so that hostile fid and line
/// numbers cannot make it allocate beyond a small multiple of the input. The map's lines are
/// indexed by fid, so a fid that turns dense moves its own entries without scanning the others'.
#[derive(Debug, Default)]
struct LineTable {
    dense: Vec<Vec<LineTime>>,
    sparse: PairMap,
    /// The lines of each fid held in `sparse`.
    sparse_lines:
        std::collections::HashMap<u32, Vec<u32>, std::hash::BuildHasherDefault<PairHasher>>,
    used: usize,
}

/// Adds one statement to a line slot (NYTProf.xs `store_profile_line_entry`, 3308-3330).
#[inline]
fn add_to_slot(slot: &mut LineTime, seconds: f64, count: i64) {
    if slot.count == i64::MIN {
        *slot = LineTime {
            time: seconds,
            count,
        };
    } else {
        slot.time += seconds;
        if count == 1 {
            // Perl turns the IV into an NV past IV_MAX; saturating keeps the same order.
            slot.count = slot.count.saturating_add(1);
        } else if count != 0 {
            // store_profile_line_entry adds `(IV)time`, not the count (NYTProf.xs:3326).
            slot.count = slot.count.wrapping_add(seconds as i64);
        }
    }
}

impl LineTable {
    /// Adds to a dense slot; false when the slot is not dense (see [`LineTable::add_slow`]).
    #[inline]
    fn add_dense(&mut self, fid: u32, line: u32, seconds: f64, count: i64) -> bool {
        if let Some(slot) = self
            .dense
            .get_mut(fid as usize)
            .and_then(|v| v.get_mut(line as usize))
        {
            add_to_slot(slot, seconds, count);
            return true;
        }
        false
    }

    #[inline]
    fn add(&mut self, fid: u32, line: u32, seconds: f64, count: i64, budget: usize) {
        if !self.add_dense(fid, line, seconds, count) {
            self.add_slow(fid, line, seconds, count, budget);
        }
    }

    #[cold]
    fn add_slow(&mut self, fid: u32, line: u32, seconds: f64, count: i64, budget: usize) {
        let (f, l) = (fid as usize, line as usize);
        let current = self.dense.get(f).map_or(0, Vec::len);
        // Small to start with: a string eval is a fid of a line or two, and a long-running
        // program makes tens of thousands of them.
        let new_len = (l + 1).next_power_of_two().max(8);
        let growth = (new_len - current) + f.saturating_sub(self.dense.len());
        if f < 1 << 16 && l < 1 << 24 && self.used + growth <= budget {
            if self.dense.len() <= f {
                self.dense.resize_with(f + 1, Vec::new);
            }
            self.dense[f].resize(new_len, ABSENT);
            self.used += growth;
            // Entries of this fid kept in the map before are now covered by the vector. A
            // fid's vector doubles at most 24 times, so each entry is looked at that often.
            if let Some(lines) = self.sparse_lines.get_mut(&fid) {
                lines.retain(|&sl| {
                    if (sl as usize) < new_len {
                        if let Some(lt) = self.sparse.remove(&(fid, sl)) {
                            self.dense[f][sl as usize] = lt;
                        }
                        false
                    } else {
                        true
                    }
                });
                if lines.is_empty() {
                    self.sparse_lines.remove(&fid);
                }
            }
            add_to_slot(&mut self.dense[f][l], seconds, count);
        } else {
            let slot = self.sparse.entry((fid, line)).or_insert_with(|| {
                self.sparse_lines.entry(fid).or_default().push(line);
                ABSENT
            });
            add_to_slot(slot, seconds, count);
        }
    }

    fn into_line_times(self) -> LineTimes {
        let mut out = LineTimes::new();
        for (fid, lines) in self.dense.into_iter().enumerate() {
            let map: BTreeMap<u32, LineTime> = lines
                .into_iter()
                .enumerate()
                .filter(|(_, lt)| lt.count != i64::MIN)
                .map(|(line, lt)| (line as u32, lt))
                .collect();
            if !map.is_empty() {
                out.insert(fid as u32, map);
            }
        }
        for ((fid, line), lt) in self.sparse {
            out.entry(fid).or_default().insert(line, lt);
        }
        out
    }
}

/// Builds a [`Profile`] from records, as NYTProf.xs's loader callbacks do. The result is the
/// raw model ([`ModelOptions::raw`]); [`Profile::collapse_evals`] turns it into Data.pm's default
/// view.
#[derive(Debug)]
pub struct Loader {
    profile: Profile,
    line_times: LineTable,
    block_times: Option<LineTable>,
    sub_times: Option<LineTable>,
    /// Dense line slots the tables may hold: grows with the input read (see [`LineTable`]).
    budget: usize,
    ticks_per_sec: u32,
    statement_discount: i64,
    live_pids: BTreeMap<u32, usize>,
    last_start: f64,
    duration: Option<f64>,
    /// The call paths of the `<` records, when asked for ([`Loader::with_call_paths`]).
    calls: Option<CallPaths>,
    /// Seconds of 0 to [`SECONDS_TABLE`] - 1 ticks at the tick rate `seconds_of_tps`
    /// ([`Loader::statement_run`]).
    seconds_of_ticks: Vec<f64>,
    seconds_of_tps: Option<u32>,
    /// Whether the source of files other than string evals is kept ([`ModelOptions::keep_source`]).
    keep_source: bool,
    /// The subs read so far, in the order first named, found by name through `sub_index`: a
    /// hash lookup per `s` and `c` record where the model's B-tree compares the name with a
    /// dozen others. [`Loader::finish`] moves them into [`Profile::subs`].
    subs: Vec<SubInfo>,
    sub_index: SubIndex,
    /// What a merge reads besides the model, when asked ([`Profile::from_bytes_for_merge`]).
    merge_scan: Option<MergeScan>,
    /// The string evals whose invoking file was not defined when they were (fid, eval_fid,
    /// offset of the NEW_FID): [`Loader::check_eval_fids`] refuses those whose invoking file
    /// the profile never defines.
    evals_of_unknown_fids: Vec<(u32, u32, u64)>,
}

/// The index of [`Loader`]'s subs by name, hashed with a seed drawn at random (names come from
/// the input).
type SubIndex = std::collections::HashMap<Box<str>, usize, foldhash::fast::RandomState>;

/// Tick counts below this have their seconds in a table ([`Loader::statement_run`]): most
/// statements take a few ticks.
const SECONDS_TABLE: usize = 2048;

impl Loader {
    /// A loader for a file of version `major.minor`.
    pub fn new(major: u32, minor: u32) -> Self {
        Loader {
            profile: Profile {
                major,
                minor,
                ..Profile::default()
            },
            line_times: LineTable::default(),
            block_times: None,
            sub_times: None,
            budget: 1 << 12,
            ticks_per_sec: 0,
            statement_discount: 0,
            live_pids: BTreeMap::new(),
            last_start: 0.0,
            duration: None,
            calls: None,
            seconds_of_ticks: Vec::new(),
            seconds_of_tps: None,
            keep_source: true,
            subs: Vec::new(),
            sub_index: SubIndex::default(),
            merge_scan: None,
            evals_of_unknown_fids: Vec::new(),
        }
    }

    /// Refuses a string eval whose invoking file no NEW_FID of the whole profile defines
    /// ([`Error::UndefinedEvalFid`]): NYTProf.xs leaves an empty slot in its file table for it,
    /// which Devel::NYTProf::Data dies on. Called at the end of the input.
    fn check_eval_fids(&self) -> Result<(), Error> {
        let files = &self.profile.files;
        match self
            .evals_of_unknown_fids
            .iter()
            .find(|(_, eval_fid, _)| !files.contains_key(eval_fid))
        {
            Some(&(fid, eval_fid, offset)) => Err(Error::UndefinedEvalFid {
                offset,
                what: "NEW_FID eval_fid",
                fid,
                eval_fid,
            }),
            None => Ok(()),
        }
    }

    /// This loader, also building the call paths of the `<` records as `nytprofcalls` does
    /// ([`CallPaths`]; [`Loader::take_call_paths`] hands them over).
    pub fn with_call_paths(mut self) -> Self {
        self.calls = Some(CallPaths::new());
        self
    }

    /// The call paths built so far, finished ([`CallPaths::finish`]); `None` unless
    /// [`Loader::with_call_paths`] asked for them.
    pub fn take_call_paths(&mut self) -> Option<CallPaths> {
        let mut calls = self.calls.take()?;
        calls.finish();
        Some(calls)
    }

    /// Whether the saved source lines of `fid` are left out ([`ModelOptions::keep_source`]): a
    /// defined file that is not a string eval, when the source is not kept; for an `S` record
    /// read in full ([`Loader::record`]) as for one skipped undecoded. (Lines of an undefined
    /// fid are not left out: they are an error.)
    #[inline]
    fn drops_source_of(&self, fid: u32) -> bool {
        !self.keep_source
            && self
                .profile
                .files
                .get(&fid)
                .is_some_and(|fi| fi.eval.is_none())
    }

    /// The sub called `name`, added when new. A known sub's lookup allocates nothing.
    fn sub_entry<'s>(
        subs: &'s mut Vec<SubInfo>,
        index: &mut SubIndex,
        name: &Str<'_>,
    ) -> &'s mut SubInfo {
        let text = name.text();
        let at = match index.get(text.as_ref()) {
            Some(&at) => at,
            None => {
                let name = text.into_owned();
                index.insert(name.as_str().into(), subs.len());
                subs.push(SubInfo {
                    name,
                    ..SubInfo::default()
                });
                subs.len() - 1
            }
        };
        &mut subs[at]
    }

    /// Lets the line tables hold about `bytes / 2` dense slots (16 bytes each): call it with the
    /// number of input bytes read so far. The default allows 4096.
    pub fn set_input_read(&mut self, bytes: u64) {
        self.budget = (bytes / 2).max(1 << 12).min(usize::MAX as u64) as usize;
    }

    /// Adds one record found at `offset`.
    #[inline]
    pub fn record(&mut self, offset: u64, r: &Record<'_>) -> Result<(), Error> {
        let p = &mut self.profile;
        match *r {
            Record::Attribute(l) => {
                if let Some((k, v)) = l.key_value()
                    && k == b"ticks_per_sec"
                {
                    self.ticks_per_sec = atoi(v) as i32 as u32;
                }
                if let Some((k, v)) = l.model_key_value() {
                    p.attributes.insert(k, v);
                }
            }
            Record::Option(l) => {
                if let Some((k, v)) = l.model_key_value() {
                    p.options.insert(k, v);
                }
            }
            Record::Comment(l) => p.comments.push(crate::read::decode_text(l.text, false)),
            Record::SubReturn {
                depth,
                incl_ticks,
                excl_ticks,
                name,
            } => {
                if let Some(calls) = &mut self.calls {
                    calls.add_return_raw(depth, incl_ticks, excl_ticks, name.bytes, name.utf8);
                }
            }
            Record::StartDeflate | Record::SubEntry { .. } => {}
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
                // An eval whose parent is unknown is kept as a plain file (4140-4150), if the
                // parent is defined by the end ([`Loader::check_eval_fids`]).
                let eval =
                    (eval_fid != 0 && p.files.contains_key(&eval_fid)).then_some(EvalParent {
                        fid: eval_fid,
                        line: eval_line,
                    });
                if eval_fid != 0 && eval.is_none() {
                    self.evals_of_unknown_fids.push((fid, eval_fid, offset));
                }
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
                        merged_fids: Vec::new(),
                    },
                );
            }
            Record::Discount => self.statement_discount += 1,
            Record::TimeLine { ticks, fid, line } => self.time(offset, ticks, fid, line, None)?,
            Record::TimeBlock {
                ticks,
                fid,
                line,
                block_line,
                sub_line,
            } => self.time(offset, ticks, fid, line, Some((block_line, sub_line)))?,
            Record::SrcLine { fid, line, text } => {
                // Every fid the profiler saves source for was defined first; an undefined one
                // would only make a table per hostile fid.
                if !self.profile.files.contains_key(&fid) {
                    return Err(Error::UndefinedFid {
                        offset,
                        what: "SRC_LINE",
                        fid,
                    });
                }
                if self.drops_source_of(fid) {
                    return Ok(());
                }
                self.profile
                    .source
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
                if let Some(scan) = &mut self.merge_scan {
                    scan.defs.push((fid, name.to_text(), first_line, last_line));
                }
                let si = Self::sub_entry(&mut self.subs, &mut self.sub_index, &name);
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
                let si = Self::sub_entry(&mut self.subs, &mut self.sub_index, &called);
                let by_line = si.callers.entry(fid).or_default();
                if fid != 0 {
                    let ci = by_line.entry(line).or_default();
                    ci.count += u64::from(count);
                    ci.incl += incl;
                    ci.excl += excl;
                    ci.reci += reci;
                    ci.rec_depth = ci.rec_depth.max(rec_depth);
                    let caller = caller.text();
                    if !ci.calling_subs.contains(caller.as_ref()) {
                        ci.calling_subs.insert(caller.into_owned());
                    }
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

    /// Adds one statement (`+` or `*`) found at `offset`.
    #[inline(always)]
    pub(crate) fn time(
        &mut self,
        offset: u64,
        ticks: i32,
        fid: u32,
        line: u32,
        block: Option<(u32, u32)>,
    ) -> Result<(), Error> {
        if let Some(scan) = &mut self.merge_scan {
            scan.first.get_or_insert((fid, line, block));
        }
        let p = &mut self.profile;
        let seconds = f64::from(ticks) / f64::from(self.ticks_per_sec);
        let count = 1 - self.statement_discount;
        let budget = self.budget;
        if !self.line_times.add_dense(fid, line, seconds, count) {
            // The profiler defines every fid before its statements (a dense slot exists only
            // for a fid checked here before). An undefined fid would make a table per hostile
            // fid: the real loader grows a Perl array to its number.
            if !p.files.contains_key(&fid) {
                return Err(Error::UndefinedFid {
                    offset,
                    what: if block.is_some() {
                        "TIME_BLOCK"
                    } else {
                        "TIME_LINE"
                    },
                    fid,
                });
            }
            self.line_times.add_slow(fid, line, seconds, count, budget);
        }
        if let Some((block_line, sub_line)) = block {
            let b = self.block_times.get_or_insert_with(Default::default);
            b.add(fid, block_line, seconds, count, budget);
            let s = self.sub_times.get_or_insert_with(Default::default);
            s.add(fid, sub_line, seconds, count, budget);
        }
        p.totals.stmts_measured += 1;
        p.totals.stmts_discounted += self.statement_discount.max(0) as u64;
        p.totals.stmts_duration += seconds;
        self.statement_discount = 0;
        Ok(())
    }

    /// Adds the run of statement, discount and sub return records (`+`, `-` and `<`, most of a
    /// profile's records) that starts `bytes`, the next records of the input, the first at
    /// offset `base`: what [`Loader::time`] and the discount count do one record at a time, and
    /// each `<` to `returns` (skipped when `None`). Returns how many bytes the run took (0 when
    /// `bytes` starts with another record); `records` counts the records read, the one in error
    /// included. It stops at any other record, at a `<` the fast decoder leaves to the general
    /// one, and where fewer than 16 bytes are left, which the general decoder reads.
    ///
    /// One loop over the run rather than a call per record: between two returns there are a
    /// few statements only. The running totals stay in locals, and the seconds of small tick
    /// counts come from a table of the same divisions done once, so that the sums are the ones
    /// [`Loader::time`] makes, bit for bit.
    fn statement_run<'a>(
        &mut self,
        bytes: &'a [u8],
        base: u64,
        records: &mut u64,
        returns: &mut Option<&mut ReturnSink<'_, 'a>>,
    ) -> Result<usize, Error> {
        if self.seconds_of_tps != Some(self.ticks_per_sec) {
            let tps = f64::from(self.ticks_per_sec);
            self.seconds_of_ticks = (0..SECONDS_TABLE as i32)
                .map(|t| f64::from(t) / tps)
                .collect();
            self.seconds_of_tps = Some(self.ticks_per_sec);
        }
        let tps = f64::from(self.ticks_per_sec);
        let table = &self.seconds_of_ticks[..];
        let line_times = &mut self.line_times;
        let files = &self.profile.files;
        let totals = &mut self.profile.totals;
        let budget = self.budget;
        let mut discount = self.statement_discount;
        let mut measured = totals.stmts_measured;
        let mut discounted = totals.stmts_discounted;
        let mut duration = totals.stmts_duration;
        let mut n = 0u64;
        let mut i = 0;
        // A merge's scan, until it has the input's first statement.
        let mut first_wanted = self.merge_scan.as_mut().filter(|scan| scan.first.is_none());
        // Three varints of at most five bytes each after the tag.
        let end = bytes.len().saturating_sub(15);
        let result = loop {
            if i >= end {
                break Ok(i);
            }
            match bytes[i] {
                raw::tag::TIME_LINE => {
                    let mut j = i + 1;
                    let ticks = crate::read::varint_at(bytes, &mut j) as i32;
                    let fid = crate::read::varint_at(bytes, &mut j);
                    let line = crate::read::varint_at(bytes, &mut j);
                    if let Some(scan) = first_wanted.take() {
                        scan.first = Some((fid, line, None));
                    }
                    n += 1;
                    let seconds = match table.get(ticks as u32 as usize) {
                        Some(&s) => s,
                        None => f64::from(ticks) / tps,
                    };
                    let count = 1 - discount;
                    if !line_times.add_dense(fid, line, seconds, count) {
                        // As in `time`: a dense slot exists only for a fid checked here before.
                        if !files.contains_key(&fid) {
                            break Err(Error::UndefinedFid {
                                offset: base + i as u64,
                                what: "TIME_LINE",
                                fid,
                            });
                        }
                        line_times.add_slow(fid, line, seconds, count, budget);
                    }
                    measured += 1;
                    discounted += discount.max(0) as u64;
                    duration += seconds;
                    discount = 0;
                    i = j;
                }
                raw::tag::DISCOUNT => {
                    n += 1;
                    discount += 1;
                    i += 1;
                }
                raw::tag::SUB_RETURN => {
                    let Some(((depth, incl, excl, name, utf8), used)) =
                        crate::read::sub_return_at(&bytes[i..], false)
                    else {
                        break Ok(i);
                    };
                    n += 1;
                    if let Some(returns) = returns {
                        returns(base + i as u64, depth, incl, excl, name, utf8);
                    }
                    i += used;
                }
                _ => break Ok(i),
            }
        };
        totals.stmts_measured = measured;
        totals.stmts_discounted = discounted;
        totals.stmts_duration = duration;
        self.statement_discount = discount;
        *records += n;
        result
    }

    /// [`Loader::finish`], then, when no error came before, the `ticks_per_sec` check at the
    /// input's end `offset` and the check of the evals' invoking files.
    fn finish_checked(self, offset: u64, error: Option<Error>) -> (Profile, Option<Error>) {
        let evals = self.check_eval_fids().err();
        let p = self.finish();
        let error = error
            .or_else(|| p.check_ticks_per_sec(offset).err())
            .or(evals);
        (p, error)
    }

    /// The profile, with the loader's and Data.pm's final steps applied.
    pub fn finish(mut self) -> Profile {
        // An unused trailing discount is not counted (NYTProf.xs:5018-5019): discounts are
        // counted above only when a statement consumes them.
        let p = &mut self.profile;
        p.line_times = std::mem::take(&mut self.line_times).into_line_times();
        p.block_times = self.block_times.take().map(LineTable::into_line_times);
        p.sub_times = self.sub_times.take().map(LineTable::into_line_times);
        p.totals.profiler_duration = self.duration;
        // The index's keys become the model's: no name is copied again.
        let mut subs = std::mem::take(&mut self.subs);
        p.subs = std::mem::take(&mut self.sub_index)
            .into_iter()
            .map(|(name, at)| (String::from(name), std::mem::take(&mut subs[at])))
            .collect();
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

#[cfg(test)]
mod tests {
    use super::{FileInfo, ModelOptions, Profile, perl_num};

    #[test]
    fn saved_source_is_lines_from_line_one() {
        let mut p = Profile::default();
        p.files.insert(
            1,
            FileInfo {
                fid: 1,
                name: "/x/a.pl".to_owned(),
                name_utf8: false,
                eval: None,
                flags: 0,
                size: 0,
                mtime: 0,
                subs_defined: Default::default(),
                merged_fids: Vec::new(),
            },
        );
        let lines = p.source.entry(1).or_default();
        lines.insert(1, "use strict;\n".to_owned());
        lines.insert(3, "f();\r\n".to_owned());
        // A damaged line number far past the lines saved makes no gap of empty lines.
        lines.insert(4_000_000_000, "x".to_owned());
        // A file without an entry in the file table is left out.
        p.source.entry(2).or_default().insert(1, "y".to_owned());
        let saved = p.saved_source_lines();
        assert_eq!(
            saved,
            [(
                "/x/a.pl".to_owned(),
                vec!["use strict;".to_owned(), String::new(), "f();".to_owned()]
            )]
        );
    }

    /// Without `keep_source` only the evals' source is kept, and the model is otherwise the
    /// same: the collapsing, which tells evals apart by their source, merges the same ones.
    #[test]
    fn source_of_evals_only_leaves_the_model_alone() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/nytprof/evals_small.nytprof.out"
        );
        let bytes = std::fs::read(path).unwrap();
        for options in [ModelOptions::default(), ModelOptions::raw()] {
            let full = Profile::from_bytes_with(&bytes, options).unwrap();
            let lean = Profile::from_bytes_with(&bytes, options.keep_source(false)).unwrap();
            // Past the collapsing, a merged-away eval's source stays without its file.
            let plain = |p: &Profile, f: &u32| p.files.get(f).is_some_and(|f| f.eval.is_none());
            assert!(full.source.keys().any(|f| plain(&full, f)));
            assert!(!lean.source.keys().any(|f| plain(&lean, f)));
            assert!(!lean.source.is_empty());
            for (fid, lines) in &lean.source {
                assert_eq!(Some(lines), full.source.get(fid));
            }
            let strip = |mut p: Profile| {
                p.source.clear();
                p
            };
            assert_eq!(strip(full), strip(lean));
        }
    }

    #[test]
    fn numbers_as_perl_reads_them() {
        for (text, value) in [
            ("4.81531e+06", 4_815_310.0),
            ("10000000", 1e7),
            (" -2.5e-3x", -0.0025),
            ("1e", 1.0),
            ("1.", 1.0),
            (".5", 0.5),
            ("-", 0.0),
            ("abc", 0.0),
            ("3e+", 3.0),
        ] {
            assert_eq!(perl_num(text), value, "{text}");
        }
    }
}
