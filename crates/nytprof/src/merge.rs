//! Many profiles of one program merged into one profile that Devel::NYTProf reads, with the
//! semantics of Devel::NYTProf 6.12's `nytprofmerge` (the runs of a test suite, a forked
//! child's `nytprof.out.<pid>` beside its parent's file).
//!
//! Each input is read into its raw model ([`ModelOptions::raw`]) and folded into the merged
//! model at once, so memory is the merged model (its distinct files, subs, lines and callers)
//! plus one input's model, never the inputs together. [`Profile::write`] then writes the merged
//! model; loading that file with `Devel::NYTProf::Data` gives the per-line and per-sub totals
//! that loading `nytprofmerge`'s output of the same inputs gives. Unlike `nytprofmerge`, which
//! copies every statement record of every input, the file holds each line once, so it is about
//! the size of one input, not of all of them.
//!
//! The rules, as `nytprofmerge` applies them:
//! - files are matched by name; every string eval of every input stays a file of its own (its
//!   parent mapped), and Data.pm's eval collapsing folds identical siblings when the merged
//!   file is loaded;
//! - a named sub defined again, with the same line range, in an eval at the place of an earlier
//!   eval (a loop of `eval "sub f {...}"`) counts its lines, callers and source in the first
//!   eval, so that all its calls are collated; anonymous subs of evals stay in their own eval;
//! - a named sub defined again there with another line range keeps its lines and callers in
//!   its own eval, but its definition is written, as `nytprofmerge` writes it, with the fid it
//!   has in its input, not the merged one: the merged file defines it in the file that has that
//!   number there (`nytprofcsv` lists the sub among that file's lines, which decides where its
//!   runs of blank lines are folded; a Test::Builder `cmp_ok` eval's `#line` file is one such);
//! - line, block and sub-line times and statement counts add up; sub callers add up per
//!   calling place and calling sub, with the deepest recursion kept; a sub's definition is the
//!   lowest merged fid's, as the loader keeps it;
//! - every input's processes are kept (`profiler_duration` is their sum);
//! - attributes: `PL_perldb`, `clock_id`, `nv_size`, `perl_version`, `ticks_per_sec` and
//!   `xs_version` keep the first input's value (another value is a [`Merger::warnings`]
//!   entry); `basetime` is the earliest; `application` lists the programs (`a (3 runs) and
//!   b`); `cumulative_overhead_ticks` is the sum; `sawampersand_*` keep the first value; any
//!   other attribute keeps the last input's value, which is what Data.pm loads of the several
//!   lines `nytprofmerge` writes;
//! - options keep the first input's value (another value is a warning); comments are kept once
//!   each, in order, without the zlib comment of a compressed input;
//! - saved source lines: the last input's text of each line.
//!
//! Times are read in seconds, so inputs with different `ticks_per_sec` add up correctly (where
//! `nytprofmerge` copies ticks and warns that the result is garbage); the merged file counts
//! in the first input's ticks. The definition of a sub in the raw model is the lowest fid's, so
//! the line range of a sub redefined in a sibling eval is taken to be that of its first
//! definition.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::error::Error;
use crate::model::{
    EvalParent, FileInfo, LineTimes, LoadReport, MergeScan, ModelOptions, Place, Profile, SubDef,
    SubInfo,
};

/// Attributes whose value must be the same in every input (`nytprofmerge`'s
/// `%attr_should_be_identical`).
const IDENTICAL_ATTRIBUTES: &[&str] = &[
    "PL_perldb",
    "clock_id",
    "nv_size",
    "perl_version",
    "ticks_per_sec",
    "xs_version",
];

/// The merge so far: feed it raw models ([`Merger::add`]) or files ([`Merger::add_bytes`]),
/// then take the merged profile ([`Merger::finish`]).
///
/// ```
/// use profcodec_nytprof::merge::Merger;
/// let bytes = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out")).unwrap();
/// let mut merger = Merger::new();
/// merger.add_bytes(&bytes).unwrap();
/// merger.add_bytes(&bytes).unwrap();
/// let once = profcodec_nytprof::Profile::from_bytes(&bytes).unwrap();
/// let merged = merger.finish();
/// assert_eq!(merged.subs["main::fib"].calls, 2 * once.subs["main::fib"].calls);
/// let mut out = Vec::new();
/// merged.write(&mut out).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct Merger {
    merged: Profile,
    inputs: usize,
    /// Merged fid of each plain (non-eval) file name.
    by_name: HashMap<String, u32>,
    /// The first merged eval fid at each (folded parent fid, eval line).
    eval_at: HashMap<(u32, u32), u32>,
    /// Line range of each named sub, per folded fid, as first defined (keyed by fid first, so
    /// that a lookup by name needs no owned copy of it).
    seen_subs: HashMap<u32, HashMap<String, (u32, u32)>>,
    /// Per `application` value, how many inputs had it, in first-seen order.
    applications: Vec<(String, usize)>,
    basetime: Option<(f64, String)>,
    overhead: Option<f64>,
    /// Keys already warned about, to say each difference once.
    warned: BTreeSet<String>,
    warnings: Vec<String>,
    comments: BTreeSet<String>,
    compression: Option<u32>,
    /// `-` records after the last statement of the input before.
    pending_discounts: i64,
}

/// One input read by [`Merger::read`], owning what it holds (no borrow of the file's bytes).
#[derive(Debug)]
pub struct ReadInput {
    profile: Profile,
    report: LoadReport,
    scan: MergeScan,
}

impl ReadInput {
    /// What the load saw besides the model.
    pub fn report(&self) -> &LoadReport {
        &self.report
    }
}

/// One input's fid mapping: its fid to the merged fid, and the line ranges of a merged fid that
/// count in another (a sub redefined in a sibling eval).
///
/// It is looked up for every line, sub caller and source line of every input, so it is a sorted
/// vector (the input's fids come in order) searched by bisection, with no hashing.
struct FidMap {
    /// (input fid, merged fid), sorted by input fid.
    fids: Vec<(u32, u32)>,
    /// Per merged fid, by first line: the last line and the fid the lines count in. The ranges
    /// of one fid are kept disjoint ([`FidMap::redirect`] joins those that overlap, as a sub
    /// nested in another does), so the range starting last at or before a line is the only one
    /// that can hold it (a lookup in logarithmic time, whatever a damaged file defines).
    ranges: BTreeMap<u32, BTreeMap<u32, (u32, u32)>>,
}

impl FidMap {
    /// The merged fid of input fid `fid`, if the input has that fid.
    fn get(&self, fid: u32) -> Option<u32> {
        self.fids
            .binary_search_by_key(&fid, |&(from, _)| from)
            .ok()
            .map(|i| self.fids[i].1)
    }

    /// Lines `first..=last` of merged fid `mapped` count in `to`. All the ranges of one input
    /// fid go to the same fid (the first eval at its place), so overlapping ranges are joined:
    /// every line of any of them is redirected, as `nytprofmerge`'s per-line table does.
    fn redirect(&mut self, mapped: u32, first: u32, last: u32, to: u32) {
        let ranges = self.ranges.entry(mapped).or_default();
        let (mut first, mut last) = (first, last.max(first));
        // The range before that reaches `first`, and those starting within the new one.
        if let Some((&start, &(end, _))) = ranges.range(..first).next_back()
            && end >= first
        {
            first = start;
            last = last.max(end);
        }
        let inside: Vec<u32> = ranges.range(first..=last).map(|(&s, _)| s).collect();
        for start in inside {
            if let Some((end, _)) = ranges.remove(&start) {
                last = last.max(end);
            }
        }
        ranges.insert(first, (last, to));
    }

    /// The merged fid of `fid` at `line`.
    fn at(&self, fid: u32, line: u32) -> u32 {
        let Some(mapped) = self.get(fid) else {
            return fid;
        };
        if self.ranges.is_empty() {
            return mapped;
        }
        self.ranges
            .get(&mapped)
            .and_then(|r| r.range(..=line).next_back())
            .filter(|(_, (last, _))| line <= *last)
            .map_or(mapped, |(_, &(_, to))| to)
    }
}

impl Merger {
    /// An empty merge.
    pub fn new() -> Merger {
        Merger::default()
    }

    /// Number of inputs added.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// What `nytprofmerge` warns about: an attribute that must be the same in every input, or
    /// an option, that differs (the first value is kept); an attribute passed through with
    /// several values (the last is kept).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The zlib level for the merged file: the `compress` option of the first compressed input
    /// (the profiler's 6 when it states none), `None` when no input was compressed.
    pub fn compression(&self) -> Option<u32> {
        self.compression
    }

    /// Reads a file (compressed or not) into its raw model and merges it. On an error nothing
    /// of the file is merged.
    pub fn add_bytes(&mut self, bytes: &[u8]) -> Result<(), Error> {
        match self.add_bytes_report(bytes) {
            (_, None) => Ok(()),
            (_, Some(e)) => Err(e),
        }
    }

    /// [`Merger::add_bytes`], also saying what the load saw ([`LoadReport`], whose
    /// [`LoadReport::error_message`] places an error of a compressed file).
    ///
    /// The file is read twice, as `nytprofmerge` reads it: into its model, then for its sub
    /// definitions (`s` records) as written, which the model keeps one per name (the
    /// statements are skipped without being decoded).
    pub fn add_bytes_report(&mut self, bytes: &[u8]) -> (LoadReport, Option<Error>) {
        match Merger::read(bytes) {
            Ok(input) => {
                let report = input.report;
                self.add_read(input);
                (report, None)
            }
            Err((report, e)) => (report, Some(e)),
        }
    }

    /// Reads a file for [`Merger::add_read`], as [`Merger::add_bytes`] reads it, without a
    /// merger: the reading, most of the work, can run on another thread while the merger
    /// folds the inputs before it. The error comes with what the load saw.
    pub fn read(bytes: &[u8]) -> Result<ReadInput, (LoadReport, Error)> {
        Merger::read_with(bytes, true)
    }

    /// [`Merger::read`], with a second thread for a compressed file only when `second_thread`
    /// ([`ModelOptions::second_thread`]).
    pub fn read_with(bytes: &[u8], second_thread: bool) -> Result<ReadInput, (LoadReport, Error)> {
        let options = ModelOptions::raw().second_thread(second_thread);
        let (profile, report, scan, error) = Profile::from_bytes_for_merge(bytes, options);
        if let Some(e) = error {
            return Err((report, e));
        }
        Ok(ReadInput {
            profile,
            report,
            scan,
        })
    }

    /// Merges an input that [`Merger::read`] read.
    pub fn add_read(&mut self, input: ReadInput) {
        let ReadInput {
            mut profile,
            report,
            scan,
        } = input;
        if report.compressed && self.compression.is_none() {
            let level = profile
                .options
                .get("compress")
                .and_then(|v| v.trim().parse::<u32>().ok())
                .filter(|l| (1..=9).contains(l))
                .unwrap_or(6);
            self.compression = Some(level);
        }
        // The input is owned: its saved source lines move into the merged model, uncopied.
        let source = std::mem::take(&mut profile.source);
        let map = self.add_with(&profile, &scan.defs);
        for (fid, lines) in source {
            for (line, text) in lines {
                self.merged
                    .source
                    .entry(map.at(fid, line))
                    .or_default()
                    .insert(line, text);
            }
        }
        if let Some(first) = scan.first {
            self.discount_first(&map, first);
        }
        self.pending_discounts = scan.trailing_discounts;
    }

    /// Merges one input's raw model ([`ModelOptions::raw`]: a model whose evals were collapsed
    /// merges too, but Data.pm's collapsed view of it is not reconciled).
    ///
    /// The model keeps one definition per sub name, and subs that Data.pm placed in fid 1
    /// (called, never defined) look defined there; [`Merger::add_bytes`], which reads the
    /// file's own definitions, is exact where this is not.
    pub fn add(&mut self, input: &Profile) {
        let mut defs = Vec::new();
        for (fid, fi) in &input.files {
            for name in &fi.subs_defined {
                if let Some(si) = input.subs.get(name)
                    && si.fid == Some(*fid)
                    && let (Some(first), Some(last)) = (si.first_line, si.last_line)
                {
                    defs.push((*fid, name.clone(), first, last));
                }
            }
        }
        self.add_with(input, &defs);
        self.pending_discounts = 0;
    }

    /// Applies the `-` records left pending at the end of the input before to this input's
    /// first statement, at `first`, as the loader of `nytprofmerge`'s file does (it copies
    /// every record, so they discount that statement).
    fn discount_first(&mut self, map: &FidMap, (fid, line, block): Place) {
        let d = std::mem::take(&mut self.pending_discounts);
        if d <= 0 {
            return;
        }
        let to = map.at(fid, line);
        let m = &mut self.merged;
        let less = |table: &mut LineTimes, line: u32| {
            let e = table.entry(to).or_default().entry(line).or_default();
            e.count = e.count.saturating_sub(d);
        };
        less(&mut m.line_times, line);
        if let Some((block_line, sub_line)) = block {
            if let Some(t) = &mut m.block_times {
                less(t, block_line);
            }
            if let Some(t) = &mut m.sub_times {
                less(t, sub_line);
            }
        }
        m.totals.stmts_discounted += d.unsigned_abs();
    }

    /// Merges `input`, whose sub definitions are `defs` (fid, name, first and last line).
    fn add_with(&mut self, input: &Profile, defs: &[SubDef]) -> FidMap {
        self.inputs += 1;
        if self.inputs == 1 {
            self.merged.major = input.major;
            self.merged.minor = input.minor;
        }
        self.add_text(input);
        let map = self.map_files(input, defs);
        let m = &mut self.merged;
        add_lines(&mut m.line_times, &input.line_times, &map);
        if let Some(src) = &input.block_times {
            add_lines(
                m.block_times.get_or_insert_with(Default::default),
                src,
                &map,
            );
        }
        if let Some(src) = &input.sub_times {
            add_lines(m.sub_times.get_or_insert_with(Default::default), src, &map);
        }
        for (fid, lines) in &input.source {
            for (line, text) in lines {
                m.source
                    .entry(map.at(*fid, *line))
                    .or_default()
                    .insert(*line, text.clone());
            }
        }
        self.add_subs(input, &map);
        self.merged.add_processes(input);
        map
    }

    /// The merged profile, ready for [`Profile::write`].
    pub fn finish(mut self) -> Profile {
        let attributes = &mut self.merged.attributes;
        if let Some((_, text)) = self.basetime {
            attributes.insert("basetime".into(), text);
        }
        if let Some(sum) = self.overhead {
            attributes.insert("cumulative_overhead_ticks".into(), crate::perl_nv(sum));
        }
        if !self.applications.is_empty() {
            let mut apps = self.applications;
            apps.sort();
            let mut names: Vec<String> = apps
                .into_iter()
                .map(|(name, n)| {
                    if n > 1 {
                        format!("{name} ({n} runs)")
                    } else {
                        name
                    }
                })
                .collect();
            let last = names.pop().unwrap_or_default();
            let value = if names.is_empty() {
                last
            } else {
                format!("{} and {last}", names.join(", "))
            };
            attributes.insert("application".into(), value);
        }
        self.merged
    }

    fn warn(&mut self, key: String, message: String) {
        if self.warned.insert(key) {
            self.warnings.push(message);
        }
    }

    /// Comments, attributes and options.
    fn add_text(&mut self, input: &Profile) {
        for c in &input.comments {
            let zlib = c.starts_with("Compressed at level ") && c.contains(" with zlib ");
            if !zlib && self.comments.insert(c.clone()) {
                self.merged.comments.push(c.clone());
            }
        }
        let n = self.inputs;
        for (key, value) in &input.attributes {
            match key.as_str() {
                k if IDENTICAL_ATTRIBUTES.contains(&k) => match self.merged.attributes.get(k) {
                    Some(old) if old != value => {
                        let message = format!(
                            "attribute {k} is {value:?} in input {n}, not {old:?} as in the \
                             inputs before: the profiles are not of one program and \
                             interpreter; the first value is kept"
                        );
                        self.warn(format!("attribute {k}"), message);
                    }
                    Some(_) => {}
                    None => {
                        self.merged.attributes.insert(key.clone(), value.clone());
                    }
                },
                "basetime" => {
                    let v = crate::model::perl_num(value);
                    if self.basetime.as_ref().is_none_or(|(old, _)| v < *old) {
                        self.basetime = Some((v, value.clone()));
                    }
                }
                "application" => match self.applications.iter_mut().find(|(a, _)| a == value) {
                    Some((_, count)) => *count += 1,
                    None => self.applications.push((value.clone(), 1)),
                },
                "cumulative_overhead_ticks" => {
                    *self.overhead.get_or_insert(0.0) += crate::model::perl_num(value);
                }
                k if k.starts_with("sawampersand_") => {
                    self.merged
                        .attributes
                        .entry(key.clone())
                        .or_insert_with(|| value.clone());
                }
                _ => {
                    self.merged.attributes.insert(key.clone(), value.clone());
                }
            }
        }
        for (key, value) in &input.options {
            match self.merged.options.get(key) {
                Some(old) if old != value => {
                    let message = format!(
                        "option {key} is {value:?} in input {n}, not {old:?} as in the inputs \
                         before; the first value is kept"
                    );
                    self.warn(format!("option {key}"), message);
                }
                Some(_) => {}
                None => {
                    self.merged.options.insert(key.clone(), value.clone());
                }
            }
        }
    }

    /// Gives every file of `input` its merged fid (plain files by name, each eval a new one)
    /// and finds the line ranges of subs redefined in sibling evals.
    fn map_files(&mut self, input: &Profile, defs: &[SubDef]) -> FidMap {
        let mut fids: HashMap<u32, u32> = HashMap::from([(0, 0)]);
        // Each input fid's folded fid: the first merged eval at its place, else its own.
        let mut folded: HashMap<u32, u32> = HashMap::from([(0, 0)]);
        let mut next = self.merged.files.keys().next_back().map_or(1, |f| f + 1);
        for (fid, fi) in &input.files {
            let new_fid = match fi.eval {
                None => {
                    if let Some(&known) = self.by_name.get(&fi.name) {
                        fids.insert(*fid, known);
                        folded.insert(*fid, known);
                        continue;
                    }
                    self.by_name.insert(fi.name.clone(), next);
                    folded.insert(*fid, next);
                    next
                }
                Some(parent) => {
                    let parent_fid = fids.get(&parent.fid).copied().unwrap_or(parent.fid);
                    let parent_folded = folded.get(&parent.fid).copied().unwrap_or(parent_fid);
                    let first = *self
                        .eval_at
                        .entry((parent_folded, parent.line))
                        .or_insert(next);
                    folded.insert(*fid, first);
                    next
                }
            };
            fids.insert(*fid, new_fid);
            next += 1;
            let eval = fi.eval.map(|e| EvalParent {
                fid: fids.get(&e.fid).copied().unwrap_or(e.fid),
                line: e.line,
            });
            self.merged.files.insert(
                new_fid,
                FileInfo {
                    fid: new_fid,
                    eval,
                    subs_defined: BTreeSet::new(),
                    merged_fids: Vec::new(),
                    ..fi.clone()
                },
            );
        }
        let mut fids: Vec<(u32, u32)> = fids.into_iter().collect();
        fids.sort_unstable();
        let mut map = FidMap {
            fids,
            ranges: BTreeMap::new(),
        };
        // Named subs: the place each definition counts in.
        for (fid, name, first, last) in defs {
            let (first, last) = (*first, *last);
            let (Some(mapped), Some(&fold)) = (map.get(*fid), folded.get(fid)) else {
                continue;
            };
            let output = if name.contains("__ANON__[(eval") {
                let seen = self.seen_subs.entry(mapped).or_default();
                if !seen.contains_key(name) {
                    seen.insert(name.clone(), (first, last));
                }
                mapped
            } else {
                match self.seen_subs.get(&fold).and_then(|s| s.get(name)) {
                    // Defined before at this place with other lines: not folded, and
                    // `nytprofmerge` writes this definition with the input's own fid, not the
                    // mapped one, so the merged file defines it in whatever file has that fid
                    // there (Data.pm lists it among that file's subs, which moves the rows of
                    // `nytprofcsv`'s report of it). A fid that names no merged file (an input
                    // with gaps in its fids) keeps the mapped one.
                    Some(&seen) if seen != (first, last) => {
                        if self.merged.files.contains_key(fid) {
                            *fid
                        } else {
                            mapped
                        }
                    }
                    seen => {
                        if fold != mapped {
                            map.redirect(mapped, first, last, fold);
                        }
                        if seen.is_none() {
                            self.seen_subs
                                .entry(fold)
                                .or_default()
                                .insert(name.clone(), (first, last));
                        }
                        fold
                    }
                }
            };
            if let Some(f) = self.merged.files.get_mut(&output) {
                f.subs_defined.insert(name.clone());
            }
            let d = sub_entry(&mut self.merged.subs, name);
            if d.fid.is_none_or(|old| output <= old) {
                d.fid = Some(output);
                d.first_line = Some(first);
                d.last_line = Some(last);
            }
        }
        map
    }

    /// Sub totals and callers.
    fn add_subs(&mut self, input: &Profile, map: &FidMap) {
        for (name, si) in &input.subs {
            let d = sub_entry(&mut self.merged.subs, name);
            d.calls += si.calls;
            d.incl += si.incl;
            d.excl += si.excl;
            d.reci += si.reci;
            d.rec_depth = d.rec_depth.max(si.rec_depth);
            for (fid, lines) in &si.callers {
                // Fid 0 (an xsub's marker, calls with no place) maps to itself.
                for (line, ci) in lines {
                    let to = map.at(*fid, *line);
                    add_call(
                        d.callers.entry(to).or_default().entry(*line).or_default(),
                        ci,
                    );
                }
                if lines.is_empty() {
                    d.callers.entry(map.at(*fid, 0)).or_default();
                }
            }
        }
    }
}

/// The merged entry of sub `name`, made when missing (its name copied only then: most subs of
/// an input are in the inputs before it too).
fn sub_entry<'a>(subs: &'a mut BTreeMap<String, SubInfo>, name: &str) -> &'a mut SubInfo {
    if !subs.contains_key(name) {
        subs.insert(
            name.to_owned(),
            SubInfo {
                name: name.to_owned(),
                ..SubInfo::default()
            },
        );
    }
    subs.get_mut(name)
        .unwrap_or_else(|| unreachable!("inserted above"))
}

/// Adds `ci`'s calls to `to`.
fn add_call(to: &mut crate::model::CallInfo, ci: &crate::model::CallInfo) {
    to.count += ci.count;
    to.incl += ci.incl;
    to.excl += ci.excl;
    to.reci += ci.reci;
    to.rec_depth = to.rec_depth.max(ci.rec_depth);
    to.calling_subs.extend(ci.calling_subs.iter().cloned());
}

/// Adds one input's per-line times and counts, each line at its merged fid.
fn add_lines(dst: &mut LineTimes, src: &LineTimes, map: &FidMap) {
    for (fid, lines) in src {
        for (line, lt) in lines {
            let e = dst
                .entry(map.at(*fid, *line))
                .or_default()
                .entry(*line)
                .or_default();
            e.time += lt.time;
            e.count = e.count.saturating_add(lt.count);
        }
    }
}

/// Merges files (each compressed or not) into one profile, as [`Merger`] does; the first
/// input that fails to load ends it with its error and its position in `inputs`.
pub fn merge<'a>(inputs: impl IntoIterator<Item = &'a [u8]>) -> Result<Profile, (usize, Error)> {
    let mut merger = Merger::new();
    for (i, bytes) in inputs.into_iter().enumerate() {
        merger.add_bytes(bytes).map_err(|e| (i, e))?;
    }
    Ok(merger.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(fids: &[(u32, u32)]) -> FidMap {
        FidMap {
            fids: fids.to_vec(),
            ranges: BTreeMap::new(),
        }
    }

    #[test]
    fn fids_map_by_bisection_and_unknown_fids_keep_their_number() {
        let m = map(&[(0, 0), (1, 1), (2, 7), (9, 12)]);
        assert_eq!((m.at(2, 5), m.at(9, 1), m.at(0, 3)), (7, 12, 0));
        assert_eq!(m.at(5, 1), 5, "a fid the input never declared");
        assert_eq!(m.get(u32::MAX), None);
    }

    #[test]
    fn a_sub_nested_in_another_redirects_every_line_of_both() {
        let mut m = map(&[(3, 8)]);
        // Outer sub 10..=50, then a sub inside it, then one reaching past its end, then one
        // apart: nytprofmerge's per-line table redirects each line of any of them.
        m.redirect(8, 10, 50, 4);
        m.redirect(8, 20, 30, 4);
        m.redirect(8, 45, 60, 4);
        m.redirect(8, 70, 72, 4);
        for line in [10, 25, 40, 50, 55, 60, 70, 72] {
            assert_eq!(m.at(3, line), 4, "line {line}");
        }
        for line in [9, 61, 69, 73, 0] {
            assert_eq!(m.at(3, line), 8, "line {line}");
        }
        assert_eq!(m.ranges[&8].len(), 2, "joined into disjoint ranges");
        // A range enclosing all of them joins them into one; a reversed range is one line.
        m.redirect(8, 1, 100, 4);
        m.redirect(8, 200, 150, 4);
        assert_eq!(m.ranges[&8].len(), 2);
        assert_eq!(
            (m.at(3, 1), m.at(3, 100), m.at(3, 200), m.at(3, 150)),
            (4, 4, 4, 8)
        );
        // Hostile line numbers: no overflow, no allocation per line.
        m.redirect(8, u32::MAX - 1, u32::MAX, 4);
        assert_eq!(m.at(3, u32::MAX), 4);
    }
}
