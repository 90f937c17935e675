//! The text of `Devel::NYTProf::Data::dump_profile_data({separator => "\t"})` for a
//! [`Profile`], so a profile can be diffed against the real tool's dump line by line.
//!
//! Differences by design: file names are printed whole (the Perl dump strips the `@INC`
//! prefixes of the dumping perl).
//!
//! After eval collapsing, Devel::NYTProf 6.12's plain `dump_profile_data` dies on the emptied
//! FileInfo objects of the merged evals (`Can't call method "inc" on an undefined value`); the
//! text here is then what it prints with `skip_fileinfo_hook => sub { 0 }`, which skips them:
//! no line, block or sub times and no subs under a merged-away fid.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::model::{CallInfo, LineTimes, Profile};

/// Formats a number as Perl prints an NV (`%.15g`).
pub fn perl_nv(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Inf".into() } else { "-Inf".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{v:.14e}");
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..15).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.abs())
    } else {
        let decimals = (14 - exp).max(0) as usize;
        trim(&format!("{v:.decimals$}"))
    }
}

fn call_values(ci: &CallInfo) -> String {
    let callers: Vec<&str> = ci.calling_subs.iter().map(String::as_str).collect();
    format!(
        "[ {} {} {} 0 0 {} {} {} ]",
        ci.count,
        perl_nv(ci.incl),
        perl_nv(ci.excl),
        perl_nv(ci.reci),
        ci.rec_depth,
        callers.join("|")
    )
}

fn line_times(out: &mut String, key: &str, lt: &LineTimes, gone: &BTreeSet<u32>) {
    if lt.is_empty() {
        // An empty per-fid array prints compact (no statement was profiled, as with stmts=0).
        let _ = writeln!(out, "{key}\t[  ]");
    }
    for (fid, lines) in lt {
        if gone.contains(fid) {
            continue;
        }
        for (line, t) in lines {
            let _ = writeln!(
                out,
                "{key}\t{fid}\t{line}\t[ {} {} ]",
                perl_nv(t.time),
                t.count
            );
        }
    }
}

impl Profile {
    /// The `dump_profile_data` text (tab separator), one line per datum.
    pub fn dump_profile_data(&self) -> String {
        let mut out = String::new();
        // Fids merged away by eval collapsing (see the module docs).
        let gone: BTreeSet<u32> = self
            .files
            .values()
            .flat_map(|f| f.merged_fids.iter().copied())
            .collect();
        for (k, v) in self.data_attributes() {
            let v = match v {
                crate::model::AttrValue::Text(t) => t,
                crate::model::AttrValue::Number(n) => perl_nv(n),
            };
            let _ = writeln!(out, "attribute\t{k}\t{v}");
        }
        if let Some(b) = &self.block_times {
            line_times(&mut out, "fid_block_time", b, &gone);
        }
        for fi in self.files.values() {
            let (ef, el) = fi.eval.map_or((String::new(), String::new()), |e| {
                (e.fid.to_string(), e.line.to_string())
            });
            let p = format!("fid_fileinfo\t{}\t", fi.fid);
            let _ = writeln!(
                out,
                "{p}[ {} {ef} {el} {} {} {} {} ]",
                fi.name, fi.fid, fi.flags, fi.size, fi.mtime
            );
            for name in &fi.subs_defined {
                let si = self.subs.get(name);
                let l = |v: Option<u32>| v.map_or("undef".to_string(), |v| v.to_string());
                let _ = writeln!(
                    out,
                    "{p}sub\t{name}\t{}-{}",
                    l(si.and_then(|s| s.first_line)),
                    l(si.and_then(|s| s.last_line))
                );
            }
            for (line, subs) in self.calls_from(fi.fid) {
                for (name, ci) in subs {
                    let _ = writeln!(out, "{p}call\t{line}\t{name}\t{}", call_values(ci));
                }
            }
            let mut by_line: std::collections::BTreeMap<u32, (usize, usize, usize)> =
                Default::default();
            for e in self.evals_of(fi.fid) {
                let nested = self.nested_evals(e.fid);
                let entry = by_line.entry(e.eval.map_or(0, |p| p.line)).or_default();
                entry.0 += 1;
                entry.1 += nested;
                entry.2 += e.merged_fids.len();
            }
            for (line, (count, nested, merged)) in by_line {
                let _ = writeln!(
                    out,
                    "{p}eval\t{line}\t[ count {count} nested {nested} merged {merged} ]"
                );
            }
        }
        line_times(&mut out, "fid_line_time", &self.line_times, &gone);
        if let Some(s) = &self.sub_times {
            line_times(&mut out, "fid_sub_time", s, &gone);
        }
        for (k, v) in &self.options {
            let _ = writeln!(out, "option\t{k}\t{v}");
        }
        if self.block_times.is_some() {
            let _ = writeln!(out, "profile_modes\tfid_block_time\tblock");
        }
        let _ = writeln!(out, "profile_modes\tfid_line_time\tline");
        if self.sub_times.is_some() {
            let _ = writeln!(out, "profile_modes\tfid_sub_time\tsub");
        }
        for (name, si) in &self.subs {
            if si.fid.is_some_and(|f| gone.contains(&f)) {
                continue;
            }
            let l = |v: Option<u32>| v.map_or("undef".to_string(), |v| v.to_string());
            let _ = writeln!(
                out,
                "sub_subinfo\t{name}\t[ {}:{}-{} calls {} times {} {} {} {} ]",
                l(si.fid),
                l(si.first_line),
                l(si.last_line),
                si.calls,
                perl_nv(si.incl),
                perl_nv(si.excl),
                si.rec_depth,
                perl_nv(si.reci)
            );
            for (fid, lines) in &si.callers {
                for (line, ci) in lines {
                    let _ = writeln!(
                        out,
                        "sub_subinfo\t{name}\tcalled_by\t{fid}:{line}\t{}",
                        call_values(ci)
                    );
                }
            }
            let mut donors: Vec<&String> = si.merged_subs.iter().collect();
            donors.sort();
            for d in donors {
                let _ = writeln!(out, "sub_subinfo\t{name}\tmerge_donor\t{d}");
            }
        }
        out
    }

    /// How many evals are nested below eval `fid` (all depths).
    fn nested_evals(&self, fid: u32) -> usize {
        let mut stack = vec![fid];
        let mut n = 0;
        let mut guard = 0;
        while let Some(f) = stack.pop() {
            guard += 1;
            if guard > self.files.len() + 1 {
                break;
            }
            for e in self.evals_of(f) {
                n += 1;
                stack.push(e.fid);
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::perl_nv;

    #[test]
    fn formats_like_perl() {
        assert_eq!(perl_nv(9.5e-6), "9.5e-06");
        assert_eq!(perl_nv(0.0011422), "0.0011422");
        assert_eq!(perl_nv(9.04999999999999e-05), "9.04999999999999e-05");
        assert_eq!(perl_nv(1795321467.41373), "1795321467.41373");
        assert_eq!(perl_nv(1018.0), "1018");
        assert_eq!(perl_nv(1e15), "1e+15");
    }
}
