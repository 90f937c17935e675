//! Data.pm's eval collapsing: `Devel::NYTProf::Data->new` (unless `skip_collapse_evals`) merges
//! sibling string evals (same parent fid, same line) whose source is the same into the first of
//! them, so that a loop running one `eval $code` a thousand times shows as one eval.
//!
//! Followed as Devel::NYTProf 6.12 does it (Data.pm `collapse_evals_in`, FileInfo.pm
//! `collapse_sibling_evals` and `src_digest`, SubInfo.pm `merge_in`, `_alter_fileinfo`,
//! `_alter_called_by_fileinfo`, `_merge_in_caller_info`), including its quirks:
//! - evals are compared by a digest of their saved source (line count, length, 32-bit byte sum),
//!   so different sources with the same digest collapse too; without saved source all the evals
//!   of a line collapse unless one holds evals or defines subs and another does not;
//! - a group holding a nested eval is left alone, unless the line has more distinct sources
//!   than [`crate::model::ModelOptions::max_eval_siblings`], when every eval of the line is
//!   collapsed (the nested evals then keep the dead fid as their parent);
//! - the donors' statement times are added to the survivor's (only when the survivor has some,
//!   and not the block and sub times), and stay under the donor fid too;
//! - merged call places add counts and times but take the maximum of the recursive time;
//! - anonymous subs whose names differ only by the eval number are merged into the first by
//!   name; their call places move to that sub in the calling files, but the sub itself keeps
//!   only the places from files that already called it ([`Profile::file_calls`] then holds the
//!   calling files' view).

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{CallInfo, FileCalls, Profile, SubInfo};

/// The per-file call view while collapsing: calling fid, called sub, line (keyed by sub so a
/// renamed sub's places are found without scanning every line of the calling file).
type CallsByFile = BTreeMap<u32, BTreeMap<String, BTreeMap<u32, CallInfo>>>;

/// Adds one place's calls into another (SubInfo.pm `_merge_in_caller_info`): counts and times
/// add up, the recursion depth and the recursive time take the larger value.
fn merge_caller(dst: &mut CallInfo, src: &CallInfo) {
    dst.count = dst.count.saturating_add(src.count);
    dst.incl += src.incl;
    dst.excl += src.excl;
    dst.rec_depth = dst.rec_depth.max(src.rec_depth);
    if src.reci > dst.reci {
        dst.reci = src.reci;
    }
    dst.calling_subs.extend(src.calling_subs.iter().cloned());
}

/// Merges every line of `src` into `dst` ([`merge_caller`] per line).
fn merge_lines(dst: &mut BTreeMap<u32, CallInfo>, src: &BTreeMap<u32, CallInfo>) {
    for (line, ci) in src {
        merge_caller(dst.entry(*line).or_default(), ci);
    }
}

/// Both views start equal: the calling files' view is the subs' callers turned around.
fn calls_by_file(subs: &BTreeMap<String, SubInfo>) -> CallsByFile {
    let mut fv = CallsByFile::new();
    for (name, si) in subs {
        for (fid, lines) in &si.callers {
            if *fid != 0 && !lines.is_empty() {
                fv.entry(*fid)
                    .or_default()
                    .insert(name.clone(), lines.clone());
            }
        }
    }
    fv
}

/// FileInfo.pm `src_digest`: `lines,length,checksum` of the saved source joined with newlines,
/// or the empty string when there is none (or it is `0`, which Perl takes as false).
fn src_digest(source: Option<&BTreeMap<u32, String>>) -> String {
    let Some(lines) = source else {
        return String::new();
    };
    // The source array is indexed by line; line 0 is dropped and missing lines join as "".
    // Counted without building the string: a hostile line number must not allocate.
    let last = lines.keys().next_back().copied().unwrap_or(0);
    if last == 0 {
        return String::new();
    }
    let newlines = last - 1;
    let (mut chars, mut sum) = (u64::from(newlines), newlines.wrapping_mul(u32::from(b'\n')));
    for text in lines.range(1..).map(|(_, t)| t) {
        for c in text.chars() {
            // length() counts characters; unpack("%32C*") adds character codes mod 2^32.
            chars += 1;
            sum = sum.wrapping_add(c as u32);
        }
    }
    if chars == 0 || (last == 1 && lines.get(&1).is_some_and(|t| t == "0")) {
        return String::new();
    }
    format!("{last},{chars},{sum}")
}

/// SubInfo.pm `is_anon`: the name holds `::__ANON__` followed by a non-word character or the
/// end.
fn is_anon(name: &str) -> bool {
    name.match_indices("::__ANON__").any(|(i, m)| {
        name[i + m.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// The name with every `(eval N)` and `(re_eval N)` made `(eval 0)` / `(re_eval 0)`, as
/// `collapse_sibling_evals` buckets anonymous subs.
fn normalized_anon_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let (word, tail) = if let Some(t) = after.strip_prefix("re_eval") {
            ("re_eval", t)
        } else if let Some(t) = after.strip_prefix("eval") {
            ("eval", t)
        } else {
            out.push('(');
            rest = after;
            continue;
        };
        let mut chars = tail.chars();
        let matched = chars.next().filter(|c| c.is_whitespace()).and_then(|ws| {
            let digits = &tail[ws.len_utf8()..];
            let n = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(0);
            (n > 0 && digits[n..].starts_with(')')).then(|| &digits[n + 1..])
        });
        match matched {
            Some(t) => {
                out.push('(');
                out.push_str(word);
                out.push_str(" 0)");
                rest = t;
            }
            None => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Working state: the eval tree and the per-file call view (built on the first collapse).
struct Collapser<'p> {
    p: &'p mut Profile,
    /// Live evals of each fid, in fid order (FileInfo `has_evals`).
    children: BTreeMap<u32, Vec<u32>>,
    calls: Option<CallsByFile>,
    max_siblings: usize,
}

impl Collapser<'_> {
    fn calls(&mut self) -> &mut CallsByFile {
        let (subs, known) = (&self.p.subs, &self.p.file_calls);
        self.calls.get_or_insert_with(|| match known {
            // A model collapsed before keeps its calling files' view.
            Some(fc) => {
                let mut fv = CallsByFile::new();
                for (fid, lines) in fc {
                    for (line, by_name) in lines {
                        for (name, ci) in by_name {
                            fv.entry(*fid)
                                .or_default()
                                .entry(name.clone())
                                .or_default()
                                .insert(*line, ci.clone());
                        }
                    }
                }
                fv
            }
            None => calls_by_file(subs),
        })
    }

    fn has_evals(&self, fid: u32) -> bool {
        self.children.get(&fid).is_some_and(|c| !c.is_empty())
    }

    /// Data.pm `collapse_evals_in` for one file whose evals were already processed.
    fn collapse_in(&mut self, parent: u32) {
        let Some(children) = self.children.get(&parent) else {
            return;
        };
        let mut by_line: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for fid in children {
            if let Some(line) = self.p.files.get(fid).and_then(|f| f.eval).map(|e| e.line) {
                by_line.entry(line).or_default().push(*fid);
            }
        }
        let mut gone = std::collections::HashSet::new();
        for siblings in by_line.into_values() {
            if siblings.len() < 2 {
                continue;
            }
            // Keys in order of first appearance (the first fid of each group survives).
            let mut keyed: Vec<(String, Vec<u32>)> = Vec::new();
            let mut index: std::collections::HashMap<String, usize> = Default::default();
            for fid in &siblings {
                let mut key = src_digest(self.p.source.get(fid));
                if key.is_empty() {
                    if self.has_evals(*fid) {
                        key.push_str(",evals");
                    }
                    if self
                        .p
                        .files
                        .get(fid)
                        .is_some_and(|f| !f.subs_defined.is_empty())
                    {
                        key.push_str(",subs");
                    }
                }
                match index.get(&key) {
                    Some(&i) => keyed[i].1.push(*fid),
                    None => {
                        index.insert(key.clone(), keyed.len());
                        keyed.push((key, vec![*fid]));
                    }
                }
            }
            if keyed.len() > self.max_siblings {
                self.collapse_siblings(&siblings, &mut gone);
            } else {
                for (_, fids) in keyed {
                    if fids.len() > 1 && !fids.iter().any(|f| self.has_evals(*f)) {
                        self.collapse_siblings(&fids, &mut gone);
                    }
                }
            }
        }
        // The merged-away evals leave the parent's list once, after every line: removing them
        // per merged group would rescan the list per group.
        if !gone.is_empty()
            && let Some(c) = self.children.get_mut(&parent)
        {
            c.retain(|f| !gone.contains(f));
        }
    }

    /// FileInfo.pm `collapse_sibling_evals`: the first fid survives; the donors are added to
    /// `gone`.
    fn collapse_siblings(&mut self, fids: &[u32], gone: &mut std::collections::HashSet<u32>) {
        let Some((&survivor, donors)) = fids.split_first() else {
            return;
        };
        let survivor_has_lines = self.p.line_times.contains_key(&survivor);
        for &donor in donors {
            let Some(donor_fi) = self.p.files.remove(&donor) else {
                continue;
            };
            // Subs defined in the donor move to the survivor.
            for name in &donor_fi.subs_defined {
                if let Some(si) = self.p.subs.get_mut(name)
                    && si.fid == Some(donor)
                {
                    si.fid = Some(survivor);
                    if let Some(s) = self.p.files.get_mut(&survivor) {
                        s.subs_defined.insert(name.clone());
                    }
                }
            }
            // Calls made from the donor move to the survivor, in both views.
            if let Some(moved) = self.calls().remove(&donor) {
                let dst = self.calls().entry(survivor).or_default();
                for (name, lines) in &moved {
                    merge_lines(dst.entry(name.clone()).or_default(), lines);
                }
                for name in moved.keys() {
                    let Some(si) = self.p.subs.get_mut(name) else {
                        continue;
                    };
                    if let Some(cb) = si.callers.remove(&donor) {
                        merge_lines(si.callers.entry(survivor).or_default(), &cb);
                    }
                }
            }
            // Statement times add into the survivor's (Data.pm keeps the donor's as well).
            if survivor_has_lines
                && let Some(lines) = self.p.line_times.get(&donor).cloned()
                && let Some(s) = self.p.line_times.get_mut(&survivor)
            {
                for (line, lt) in lines {
                    let e = s.entry(line).or_default();
                    e.time += lt.time;
                    e.count = e.count.saturating_add(lt.count);
                }
            }
            if let Some(s) = self.p.files.get_mut(&survivor) {
                s.merged_fids.push(donor);
            }
            if self
                .p
                .attributes
                .get("sawampersand_fid")
                .is_some_and(|v| *v == donor.to_string())
            {
                self.p
                    .attributes
                    .insert("sawampersand_fid".into(), survivor.to_string());
            }
        }
        gone.extend(donors.iter().copied());
        self.merge_anon_subs(survivor);
    }

    /// The survivor's anonymous subs that differ only by eval number merge into the first.
    fn merge_anon_subs(&mut self, survivor: u32) {
        let Some(defined) = self.p.files.get(&survivor).map(|f| f.subs_defined.clone()) else {
            return;
        };
        let mut buckets: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for name in defined.into_iter().filter(|n| is_anon(n)) {
            if self.p.subs.contains_key(&name) {
                buckets
                    .entry(normalized_anon_name(&name))
                    .or_default()
                    .push(name);
            }
        }
        for names in buckets.into_values() {
            let Some((keep, rest)) = names.split_first() else {
                continue;
            };
            for gone in rest {
                let Some(gone_si) = self.p.subs.remove(gone) else {
                    continue;
                };
                // The calling files now call the surviving sub.
                let caller_fids: Vec<u32> = gone_si
                    .callers
                    .keys()
                    .copied()
                    .filter(|f| *f != 0 && self.p.files.contains_key(f))
                    .collect();
                for fid in caller_fids {
                    if let Some(by_name) = self.calls().get_mut(&fid)
                        && let Some(lines) = by_name.remove(gone)
                    {
                        merge_lines(by_name.entry(keep.clone()).or_default(), &lines);
                    }
                }
                if let Some(keep_si) = self.p.subs.get_mut(keep) {
                    merge_in(keep_si, &gone_si);
                }
                if let Some(f) = self.p.files.get_mut(&survivor) {
                    f.subs_defined.remove(gone);
                }
            }
        }
    }
}

/// SubInfo.pm `merge_in`: lines widen, totals add up (the recursive time too), and call places
/// merge only from files that already call `dst` (Data.pm looks the file up without creating
/// it, so the others are dropped from the sub).
fn merge_in(dst: &mut SubInfo, src: &SubInfo) {
    dst.merged_subs.push(src.name.clone());
    let pick = |a: Option<u32>, b: Option<u32>, f: fn(u32, u32) -> u32| match (a, b) {
        (Some(a), Some(b)) => Some(f(a, b)),
        (a, b) => a.or(b),
    };
    dst.first_line = pick(dst.first_line, src.first_line, u32::min);
    dst.last_line = pick(dst.last_line, src.last_line, u32::max);
    dst.calls = dst.calls.saturating_add(src.calls);
    dst.incl += src.incl;
    dst.excl += src.excl;
    dst.rec_depth = dst.rec_depth.max(src.rec_depth);
    dst.reci += src.reci;
    for (fid, lines) in &src.callers {
        if let Some(d) = dst.callers.get_mut(fid) {
            merge_lines(d, lines);
        }
    }
}

impl Profile {
    /// Collapses sibling string evals as `Devel::NYTProf::Data->new` does by default (see the
    /// [module docs](crate::collapse)); `max_siblings` is Data.pm's `NYTPROF_MAX_EVAL_SIBLINGS`
    /// (200 when unset). [`crate::model::ModelOptions`] runs it when loading; running it twice
    /// changes nothing more.
    pub fn collapse_evals(&mut self, max_siblings: usize) {
        let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        for f in self.files.values() {
            if let Some(e) = f.eval
                && e.fid != f.fid
                && self.files.contains_key(&e.fid)
            {
                children.entry(e.fid).or_default().push(f.fid);
            }
        }
        if children.is_empty() {
            return;
        }
        // Data.pm walks the files that are not evals (eval line 0 counts as not an eval), each
        // one's evals first (depth first); iteratively here, as eval chains can be deep.
        let roots: Vec<u32> = self
            .files
            .values()
            .filter(|f| f.eval.is_none_or(|e| e.line == 0))
            .map(|f| f.fid)
            .collect();
        let mut order = Vec::new();
        let mut seen = BTreeSet::new();
        for root in roots {
            if !seen.insert(root) {
                continue;
            }
            let mut stack = vec![(root, 0usize)];
            while let Some((fid, next)) = stack.pop() {
                let kids = children.get(&fid).map_or(&[][..], Vec::as_slice);
                if let Some(&kid) = kids.get(next) {
                    stack.push((fid, next + 1));
                    if seen.insert(kid) {
                        stack.push((kid, 0));
                    }
                } else {
                    order.push(fid);
                }
            }
        }
        let mut c = Collapser {
            p: self,
            children,
            calls: None,
            max_siblings,
        };
        for fid in order {
            c.collapse_in(fid);
        }
        let Some(calls) = c.calls.take() else {
            return;
        };
        // Keep the calling files' view only when it differs from the subs' callers.
        let derived = calls_by_file(&self.subs);
        let mut pruned = calls;
        pruned.retain(|_, by_name| {
            by_name.retain(|_, lines| !lines.is_empty());
            !by_name.is_empty()
        });
        self.file_calls = None;
        if pruned != derived {
            let mut fc = FileCalls::new();
            for (fid, by_name) in pruned {
                for (name, lines) in by_name {
                    for (line, ci) in lines {
                        fc.entry(fid)
                            .or_default()
                            .entry(line)
                            .or_default()
                            .insert(name.clone(), ci);
                    }
                }
            }
            self.file_calls = Some(fc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anon_names() {
        assert!(is_anon("main::__ANON__[(eval 3)[x.pl:5]:1]"));
        assert!(is_anon("main::__ANON__"));
        assert!(!is_anon("main::__ANON__x"));
        assert_eq!(
            normalized_anon_name("main::__ANON__[(eval 31)[(re_eval 2)[x.pl:5]:1]:1]"),
            "main::__ANON__[(eval 0)[(re_eval 0)[x.pl:5]:1]:1]"
        );
        assert_eq!(normalized_anon_name("a(eval x)(eval 1"), "a(eval x)(eval 1");
        assert_eq!(
            normalized_anon_name("(evil 1)(eval\t7)"),
            "(evil 1)(eval 0)"
        );
    }

    #[test]
    fn digest_as_perl() {
        // perl -e 'my @l = ("a\n", "\x{263a}"); my $s = join "\n", @l;
        //          print join ",", 2, length $s, unpack("%32C*", $s)'  => 2,4,9903
        let src: BTreeMap<u32, String> =
            [(1, "a\n".to_string()), (2, "\u{263a}".to_string())].into();
        assert_eq!(src_digest(Some(&src)), "2,4,9903");
        let zero: BTreeMap<u32, String> = [(1, "0".to_string())].into();
        assert_eq!(src_digest(Some(&zero)), "");
        let only0: BTreeMap<u32, String> = [(0, "x".to_string())].into();
        assert_eq!(src_digest(Some(&only0)), "");
        let gap: BTreeMap<u32, String> = [(2, "x".to_string())].into();
        assert_eq!(src_digest(Some(&gap)), "2,2,130");
        assert_eq!(src_digest(None), "");
    }

    #[test]
    fn collapses_siblings_and_merges_their_anonymous_subs() {
        use crate::model::{EvalParent, FileInfo, LineTime};
        let mut p = Profile::default();
        let anon = |n: u32| format!("main::__ANON__[(eval {n})[x.pl:5]:1]");
        for fid in 1..=4u32 {
            let eval = (fid == 2 || fid == 3).then_some(EvalParent { fid: 1, line: 5 });
            let subs_defined = match fid {
                2 | 3 => [anon(fid - 1)].into(),
                _ => BTreeSet::new(),
            };
            p.files.insert(
                fid,
                FileInfo {
                    fid,
                    name: format!("f{fid}"),
                    name_utf8: false,
                    eval,
                    flags: 0,
                    size: 0,
                    mtime: 0,
                    subs_defined,
                    merged_fids: Vec::new(),
                },
            );
            p.line_times.entry(fid).or_default().insert(
                1,
                LineTime {
                    time: 0.5,
                    count: 2,
                },
            );
        }
        for fid in [2, 3] {
            p.source.insert(fid, [(1, "sub { 1 }".to_string())].into());
        }
        for (n, (caller_fid, line)) in [(1u32, (1u32, 6u32)), (2, (4, 2))] {
            let mut si = SubInfo {
                name: anon(n),
                fid: Some(n + 1),
                first_line: Some(1),
                last_line: Some(1),
                calls: 3,
                incl: 1.0,
                ..SubInfo::default()
            };
            let ci = si
                .callers
                .entry(caller_fid)
                .or_default()
                .entry(line)
                .or_default();
            ci.count = 3;
            ci.incl = 1.0;
            p.subs.insert(anon(n), si);
        }
        p.collapse_evals(200);
        assert_eq!(p.files.keys().copied().collect::<Vec<_>>(), [1, 2, 4]);
        assert_eq!(p.files[&2].merged_fids, [3]);
        assert_eq!(
            p.line_times[&2][&1],
            LineTime {
                time: 1.0,
                count: 4
            }
        );
        assert!(
            p.line_times.contains_key(&3),
            "Data.pm keeps the donor's lines"
        );
        assert_eq!(p.subs.keys().cloned().collect::<Vec<_>>(), [anon(1)]);
        let si = &p.subs[&anon(1)];
        assert_eq!(
            (si.calls, si.incl, si.merged_subs.clone()),
            (6, 2.0, vec![anon(2)])
        );
        // The sub keeps only its callers from files that already called it ...
        assert_eq!(si.callers.keys().copied().collect::<Vec<_>>(), [1]);
        // ... while the calling file sees its calls go to the surviving sub.
        let from4 = p.calls_from(4);
        assert_eq!(from4[&2][anon(1).as_str()].count, 3);
        let before = p.clone();
        p.collapse_evals(200);
        assert_eq!(p, before, "collapsing twice changes nothing more");
    }
}
