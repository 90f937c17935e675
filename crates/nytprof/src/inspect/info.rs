//! `info`: the version and summary of a profile (either layout).

use profcodec_common::inspect::{Error, Info, Source};
use serde_json::{Map, Value, json};

use super::{invalid, load_error};
use crate::{ModelOptions, Profile, pynytprof};

/// The version and summary of `input`, from the model loaded in one pass: the application,
/// times and counts, the three subs with the most exclusive time, files and evals, pids, then
/// the attributes and what the load saw (compression, records, trailing bytes).
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    let bytes = input.bytes;
    let mut details = Map::new();
    if pynytprof::detect(bytes) {
        let py = pynytprof::parse(bytes).map_err(invalid)?;
        details.insert("layout".into(), json!("pynytprof"));
        details.insert("files".into(), json!(py.files.len()));
        details.insert("lines".into(), json!(py.lines.len()));
        details.insert("subs".into(), json!(py.subs.len()));
        details.insert("calls".into(), json!(py.calls.len()));
        details.insert("ended".into(), json!(py.ended));
        return Ok(Info::new("5.0 (Pynytprof layout)", details));
    }
    // The file's own view first (one pass, evals as written), then the same model collapsed
    // in place, as Devel::NYTProf::Data shows it: no second load, no copy.
    let (mut profile, report, error) = Profile::from_bytes_report(bytes, ModelOptions::raw());
    if let Some(e) = error {
        return Err(load_error(e, &report));
    }
    let evals = profile.files.values().filter(|f| f.eval.is_some()).count();
    let files = profile.files.len();
    profile.collapse_evals(ModelOptions::default().max_eval_siblings);
    let evals_after_collapse = profile.files.values().filter(|f| f.eval.is_some()).count();
    let attribute = |key: &str| profile.attributes.get(key).map(|v| json!(v));
    let mut put = |key: &str, value: Value| {
        details.insert(key.into(), value);
    };
    if let Some(v) = attribute("application") {
        put("application", v);
    }
    if let Some(d) = profile.totals.profiler_duration {
        put("profiler_duration_seconds", json!(d));
    }
    put("statement_seconds", json!(profile.totals.stmts_duration));
    put("statements", json!(profile.totals.stmts_measured));
    put("subs", json!(profile.subs.len()));
    put("sub_calls", json!(profile.totals.sub_calls));
    // The three subs with the most exclusive time: the first thing a user looks for.
    let mut top: Vec<_> = profile.subs.values().filter(|s| s.calls > 0).collect();
    top.sort_by(|a, b| b.excl.total_cmp(&a.excl).then(a.name.cmp(&b.name)));
    put(
        "top_subs_by_exclusive_seconds",
        Value::Array(
            top.iter()
                .take(3)
                .map(|s| json!({"name": s.name, "exclusive_seconds": s.excl, "calls": s.calls}))
                .collect(),
        ),
    );
    put("files", json!(files));
    put("evals", json!(evals));
    put("evals_after_collapse", json!(evals_after_collapse));
    put(
        "pids",
        Value::Array(profile.pids.iter().map(|p| json!(p.pid)).collect()),
    );
    put("complete", json!(profile.complete()));
    for key in ["perl_version", "xs_version", "ticks_per_sec"] {
        if let Some(v) = attribute(key) {
            put(key, v);
        }
    }
    put("compressed", json!(report.compressed));
    put("records", json!(report.records));
    if let Some(t) = report.trailing {
        put("trailing_bytes", json!(t.size));
    }
    Ok(Info::new(
        format!("{}.{}", profile.major, profile.minor),
        details,
    ))
}
