//! Support of the timeline tests: what a trace holds, as both writers' outputs and a reference
//! spell it, so that each format crate's tests judge its converter's output against its own
//! readers.
//!
//! - [`convert`]: one input through a converter into a Perfetto or Chrome trace.
//! - [`decoded`]: a Perfetto trace decoded by Perfetto's own generated classes (PyPI
//!   `perfetto`, `perfetto_trace_pb2`, through `perfetto_decode.py` beside this crate's
//!   manifest), when `PROFCODEC_PERFETTO_PYTHON` names a Python with `perfetto` installed
//!   (`cargo xtask test` makes a venv under `target/` and sets it); [`perfetto_slices`] its
//!   slices.
//! - [`chrome_slices`]: the slices of a Chrome trace, parsed as JSON.
//! - [`reference()`]: hpcviewer's depth rule for sampled traces, computed naively, sample by
//!   sample.
#![allow(clippy::unwrap_used)] // test support: a failure is the test's panic

use std::collections::HashMap;
use std::path::Path;

use profcodec_profile::timeline::{Error, Filter, Summary, Timeline};
use profcodec_profile::{NodeId, Profile};
use profcodec_timeline::{Format, TimelineWriter};
use serde_json::Value;

/// A slice as both outputs and the reference spell it: (track name, name, begin, end, depth).
pub type Slice = (String, String, u64, u64, u64);

/// The trace `convert` writes in `format` keeping what `filter` keeps, and its summary; a
/// conversion error is a panic.
pub fn convert(
    format: Format,
    filter: Filter,
    convert: impl FnOnce(&mut Timeline<'_>) -> Result<Summary, Error>,
) -> (Vec<u8>, Summary) {
    let mut w = TimelineWriter::new(Vec::new(), format, filter);
    let summary = convert(&mut w.timeline()).unwrap_or_else(|e| panic!("{e}"));
    (w.finish().unwrap(), summary)
}

/// The Perfetto output decoded by Perfetto's classes, or `None` without the venv.
pub fn decoded(bytes: &[u8]) -> Option<Value> {
    let python = std::env::var_os("PROFCODEC_PERFETTO_PYTHON")?;
    let file = std::env::temp_dir().join(format!(
        "profcodec-timeline-{}-{:?}.pftrace",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&file, bytes).unwrap();
    let out = std::process::Command::new(python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("perfetto_decode.py"))
        .arg(&file)
        .output()
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    assert!(
        out.status.success(),
        "perfetto_decode.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The decoded Perfetto trace's slices (on tracks of the given kinds) and track count.
pub fn perfetto_slices(d: &Value, kinds: &[&str]) -> (Vec<Slice>, usize) {
    let tracks: HashMap<u64, (&str, &str)> = d["tracks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["uuid"].as_u64().unwrap(),
                (t["name"].as_str().unwrap(), t["kind"].as_str().unwrap()),
            )
        })
        .collect();
    let mut slices: Vec<Slice> = d["slices"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| {
            let (track, kind) = tracks[&s["track"].as_u64().unwrap()];
            kinds.contains(&kind).then(|| {
                (
                    track.to_owned(),
                    s["name"].as_str().unwrap().to_owned(),
                    s["begin"].as_u64().unwrap(),
                    s["end"].as_u64().unwrap(),
                    s["depth"].as_u64().unwrap(),
                )
            })
        })
        .collect();
    slices.sort();
    (slices, tracks.len())
}

/// The Chrome output's slices, per lane named by its `thread_name` metadata.
pub fn chrome_slices(bytes: &[u8]) -> Vec<Slice> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    let mut names: HashMap<(i64, i64), String> = HashMap::new();
    let mut open: HashMap<(i64, i64), Vec<(String, u64)>> = HashMap::new();
    let mut out = Vec::new();
    // Microseconds as a JSON reader gets them (a double): compared as such, see `as_chrome`.
    let ns = |e: &Value| -> u64 { e["ts"].as_f64().unwrap().to_bits() };
    for e in v["traceEvents"].as_array().unwrap() {
        let lane = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "thread_name" => {
                names.insert(lane, e["args"]["name"].as_str().unwrap().to_owned());
            }
            "B" => open
                .entry(lane)
                .or_default()
                .push((e["name"].as_str().unwrap().to_owned(), ns(e))),
            "E" => {
                let stack = open.get_mut(&lane).unwrap();
                let (name, begin) = stack.pop().unwrap();
                let track = names.get(&lane).cloned().unwrap_or_default();
                out.push((track, name, begin, ns(e), stack.len() as u64));
            }
            _ => {}
        }
    }
    assert!(open.values().all(Vec::is_empty), "slices left open");
    out.sort();
    out
}

/// Slices with their times as a JSON reader of the Chrome output gets them: the microseconds
/// with three decimals the writer prints, read as a double (its bits, which order as the times).
pub fn as_chrome(slices: &[Slice]) -> Vec<Slice> {
    let us = |ns: u64| -> u64 {
        format!("{}.{:03}", ns / 1000, ns % 1000)
            .parse::<f64>()
            .unwrap()
            .to_bits()
    };
    let mut out: Vec<Slice> = slices
        .iter()
        .map(|s| (s.0.clone(), s.1.clone(), us(s.2), us(s.3), s.4))
        .collect();
    out.sort();
    out
}

/// Slices of [`chrome_slices`] with their times back in nanoseconds (rounded).
pub fn from_chrome(slices: &[Slice]) -> Vec<Slice> {
    let ns = |bits: u64| (f64::from_bits(bits) * 1000.0).round() as u64;
    slices
        .iter()
        .map(|s| (s.0.clone(), s.1.clone(), ns(s.2), ns(s.3), s.4))
        .collect()
}

/// The procedure frames (function-like nodes) of `node`'s call path, outermost first.
pub fn procedure_path(profile: &Profile, node: Option<NodeId>) -> Vec<NodeId> {
    let mut path: Vec<NodeId> = std::iter::successors(node, |&n| profile.node(n).parent)
        .filter(|&n| profile.frame(profile.node(n).frame).kind.is_function_like())
        .collect();
    path.reverse();
    path
}

/// Slices of one sampled line as hpcviewer's trace view shows depth: at each depth, every
/// maximal run of consecutive samples whose paths share the prefix up to that depth; a run
/// lasts until the next sample, the last until `end`.
pub fn reference(
    track: &str,
    profile: &Profile,
    samples: &[(u64, Option<NodeId>)],
    end: u64,
) -> Vec<Slice> {
    let paths: Vec<Vec<NodeId>> = samples
        .iter()
        .map(|&(_, n)| procedure_path(profile, n))
        .collect();
    let depth = paths.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::new();
    for d in 0..depth {
        let mut i = 0;
        while i < samples.len() {
            if paths[i].len() <= d {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < samples.len() && paths[j].len() > d && paths[j][..=d] == paths[i][..=d] {
                j += 1;
            }
            let stop = samples.get(j).map_or(end, |s| s.0);
            let name = profile.frame_label(profile.node(paths[i][d]).frame);
            out.push((track.to_owned(), name, samples[i].0, stop, d as u64));
            i = j;
        }
    }
    out.sort();
    out
}

/// Checks a sampled input's trace, written by `convert` (each output once), against its
/// `expected` slices: the Chrome output always, the Perfetto output decoded when the venv is
/// there, with its `tracks`. `name` names the input in failures.
pub fn check_sampled(
    name: &str,
    convert: impl Fn(&mut Timeline<'_>) -> Result<Summary, Error>,
    expected: &[Slice],
    tracks: usize,
) {
    let (json, summary) = self::convert(Format::Chrome, Filter::new(), &convert);
    assert_eq!(
        chrome_slices(&json),
        as_chrome(expected),
        "{name}: Chrome slices"
    );
    assert_eq!(summary.slices as usize, expected.len(), "{name}");
    let (bytes, summary) = self::convert(Format::Perfetto, Filter::new(), &convert);
    if let Some(d) = decoded(&bytes) {
        let (slices, n) = perfetto_slices(&d, &["track"]);
        assert_eq!(slices, expected, "{name}: Perfetto slices");
        assert_eq!(n, tracks, "{name}: tracks");
        assert_eq!(n as u64, summary.tracks, "{name}: tracks");
    }
}
