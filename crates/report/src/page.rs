//! The page: what it shows, gathered from the model, and rendered by the template.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use profcodec_profile::{
    ContextFilter, ContextId, GroupBy, IdKind, LeftOut, Measured, Profile, Quantity, Query, Row,
    ValueTypeId,
};
use serde::Serialize;

use crate::budget::Budget;
use crate::files::{self, Lines};
use crate::names::Names;
use crate::text::{self, Cell, Style};
use crate::{Input, Options, ReportError, calls, flame, source, trees};
use profcodec_common::words;

/// The page's file name.
pub(crate) const INDEX: &str = "index.html";
const FLAME: &str = "flame.svg";
const DIFF_FLAME: &str = "diff.svg";
/// The macros every page shares (navigation, function links), put before each template.
macro_rules! page_template {
    ($file:literal) => {
        concat!(
            include_str!("../templates/nav.html"),
            include_str!(concat!("../templates/", $file))
        )
    };
}
const TEMPLATE: &str = page_template!("index.html");
const FILE_TEMPLATE: &str = page_template!("file.html");
const STYLE: &str = include_str!("../templates/style.css");
const SCRIPT: &str = include_str!("../templates/script.js");

/// The rendered page and the files beside it.
pub(crate) struct Rendered {
    /// Each file by its path in the report folder, `index.html` first.
    pub(crate) files: Vec<(String, Vec<u8>)>,
    /// Where each source file's text came from, or why there is none.
    pub(crate) sources: Vec<source::SourceUse>,
}

#[derive(Serialize)]
struct Summary {
    program: String,
    format: String,
    inputs: Vec<String>,
    duration: Option<String>,
    contexts: String,
    context_labels: Vec<String>,
    more_contexts: usize,
    value_types: Vec<ValueTypeInfo>,
    caveats: Vec<String>,
}

#[derive(Serialize)]
struct ValueTypeInfo {
    name: String,
    unit: String,
    measured: &'static str,
    total: String,
    main: bool,
}

#[derive(Serialize)]
struct Column {
    key: String,
    label: String,
}

#[derive(Serialize)]
struct TopRow {
    name: String,
    /// The name shown: shortened, told apart from the other functions', cut at the end.
    shown: String,
    #[serde(skip)]
    line: Option<u32>,
    /// The link to its definition line.
    href: Option<String>,
    file: String,
    module: String,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct TopTable {
    id: String,
    label: String,
    rows: Vec<TopRow>,
    totals: Vec<Cell>,
    of: usize,
    /// `of` in words: `1 function`, `12 functions`.
    of_words: String,
    /// The values and events left out of the rows.
    #[serde(skip)]
    left_out: LeftOut,
}

#[derive(Serialize)]
struct EdgeRow {
    name: String,
    shown: String,
    href: Option<String>,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct FunctionCalls {
    id: String,
    name: String,
    shown: String,
    href: Option<String>,
    callers: Vec<EdgeRow>,
    callees: Vec<EdgeRow>,
    more_callers: usize,
    more_callees: usize,
    /// `more_callers` and `more_callees` in words.
    more_callers_words: String,
    more_callees_words: String,
}

/// A file with a source page, on the index.
#[derive(Serialize)]
struct FileEntry {
    path: String,
    href: String,
    total: Cell,
    lines: Cell,
}

/// A context's total of the main value type, on the index.
#[derive(Serialize)]
struct ContextRow {
    label: String,
    value: Cell,
}

#[derive(Serialize)]
struct Flame {
    file: &'static str,
    note: String,
}

#[derive(Serialize)]
struct DiffRowView {
    name: String,
    shown: String,
    href: Option<String>,
    cells: Vec<Cell>,
}

#[derive(Serialize)]
struct Comparison {
    value_type: String,
    unit: String,
    base_total: String,
    new_total: String,
    columns: Vec<Column>,
    rows: Vec<DiffRowView>,
    flame: Option<Flame>,
}

#[derive(Serialize)]
struct Bar {
    x: usize,
    opacity: String,
}

#[derive(Serialize)]
struct TrackRow {
    label: String,
    name: String,
    cells: Vec<Cell>,
    bars: Vec<Bar>,
}

#[derive(Serialize)]
struct Trace {
    file: String,
    size: String,
}

#[derive(Serialize)]
struct TimelineView {
    summary: String,
    columns: usize,
    tracks: Vec<TrackRow>,
    more: Option<String>,
    trace: Option<Trace>,
}

/// The top-down and bottom-up trees, as HTML made by [`trees::Trees::html`].
#[derive(Serialize)]
struct TreesView {
    top_down: String,
    bottom_up: String,
    note: String,
}

#[derive(Serialize)]
struct Page {
    title: String,
    generator: String,
    style: &'static str,
    script: &'static str,
    summary: Summary,
    base_summary: Option<Summary>,
    columns: Vec<Column>,
    tables: Vec<TopTable>,
    flame: Option<Flame>,
    no_flame: Option<String>,
    trees: Option<TreesView>,
    edge_columns: Vec<Column>,
    edge_source: String,
    functions: Vec<FunctionCalls>,
    main: String,
    files: Vec<FileEntry>,
    left_out: Vec<files::LeftOut>,
    /// How many files have no page, in words.
    left_out_words: String,
    /// What the function tables and the flame graph leave out: values and events.
    markers: Option<String>,
    no_sources: Option<String>,
    contexts: Vec<ContextRow>,
    more_contexts: usize,
    more_contexts_words: String,
    timelines: Option<TimelineView>,
    timeline_note: Option<String>,
    comparison: Option<Comparison>,
}

/// The value types shown: the main one first, the calls type apart (its values are the calls
/// column), at most `limit`.
/// Value types without any value per function (statements counted per line only)
/// are left out of the function tables.
fn shown_value_types(profile: &Profile, main: ValueTypeId, limit: usize) -> Vec<ValueTypeId> {
    let mut out = vec![main];
    for (id, _) in profile.value_types() {
        if out.len() >= limit {
            break;
        }
        if id == main || Some(id) == profile.calls_value_type() {
            continue;
        }
        let q = Query::new()
            .value_type(profile.value_type_name(id))
            .limit(1);
        let has_values = profile.top(&q).is_ok_and(|t| {
            t.rows
                .first()
                .is_some_and(|r| r.self_value != 0.0 || r.inclusive.is_some_and(|i| i != 0.0))
        });
        if has_values {
            out.push(id);
        }
    }
    out
}

/// The value types shown per source line: the main one and every other with values by line.
fn line_value_types(profile: &Profile, main: ValueTypeId, limit: usize) -> Vec<ValueTypeId> {
    let mut out = vec![main];
    for (id, _) in profile.value_types() {
        if out.len() >= limit {
            break;
        }
        if id != main && Some(id) != profile.calls_value_type() {
            out.push(id);
        }
    }
    out
}

fn main_value_type(profile: &Profile, options: &Options) -> Result<ValueTypeId, ReportError> {
    match &options.metric {
        Some(name) => profile.value_type_by_name(name).ok_or_else(|| {
            profcodec_profile::QueryError::UnknownValueType {
                name: name.clone(),
                known: profile
                    .value_types()
                    .map(|(id, _)| profile.value_type_name(id))
                    .collect::<Vec<_>>()
                    .join(", "),
            }
            .into()
        }),
        None => profile.default_value_type().ok_or(ReportError::Query(
            profcodec_profile::QueryError::NoValueTypes,
        )),
    }
}

/// A row's identity in one profile's tables.
type Key = (
    Option<String>,
    Option<String>,
    Option<u32>,
    Option<String>,
    Option<u64>,
);

fn key(row: &Row) -> Key {
    (
        row.function.clone(),
        row.file.clone(),
        row.line,
        row.module.clone(),
        row.address,
    )
}

fn style(profile: &Profile, vt: ValueTypeId) -> Style {
    Style::of(profile.value_type(vt).unit)
}

/// What the contexts are, in words: `4 threads`, `2 ranks, 8 threads`, `1 process`.
fn context_words(profile: &Profile) -> String {
    let mut kinds: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    let mut summary = false;
    let mut count = 0;
    for (_, c) in profile.contexts() {
        if c.summary {
            summary = true;
            continue;
        }
        count += 1;
        for &(kind, value) in &c.ids {
            let name = match kind {
                IdKind::Other(s) => profile.string(s).to_owned(),
                other => other.name().unwrap_or("id").replace('_', " "),
            };
            kinds.entry(name).or_default().insert(value);
        }
    }
    let mut parts: Vec<String> = kinds
        .into_iter()
        .map(|(kind, values)| {
            let plural = if kind.ends_with('s') {
                format!("{kind}es")
            } else {
                format!("{kind}s")
            };
            words::count_of(values.len(), &kind, &plural)
        })
        .collect();
    if parts.is_empty() {
        parts.push(if count == 0 {
            "the whole program (no threads, ranks or processes told apart)".to_owned()
        } else {
            words::count_of(count, "context", "contexts")
        });
    } else {
        parts.push(format!(
            "{} in all",
            words::count_of(count, "context", "contexts")
        ));
    }
    if summary {
        parts.push("and a summary over them".to_owned());
    }
    parts.join(", ")
}

fn summary(input: &Input<'_>, main: ValueTypeId, options: &Options) -> Summary {
    let profile = input.profile;
    let totals: HashMap<ValueTypeId, f64> = profile
        .value_types()
        .filter_map(|(id, _)| {
            let name = profile.value_type_name(id).to_owned();
            let t = profile
                .top(&Query::new().value_type(name.clone()).limit(0))
                .ok()?;
            let mut total = t.total.self_value;
            if total == 0.0 {
                let q = Query::new().value_type(name).group(GroupBy::Line).limit(0);
                total = profile.top(&q).map_or(0.0, |t| t.total.self_value);
            }
            Some((id, total))
        })
        .collect();
    let value_types = profile
        .value_types()
        .map(|(id, vt)| ValueTypeInfo {
            name: profile.value_type_name(id).to_owned(),
            unit: match vt.unit {
                profcodec_profile::Unit::Ticks {
                    per_second: Some(rate),
                } => format!("ticks ({rate} per second)"),
                unit => profile.unit_name(unit).to_owned(),
            },
            measured: match vt.measured {
                Measured::SelfOnly => "self",
                Measured::InclusiveOnly => "inclusive",
                Measured::SelfAndInclusive => "self and inclusive",
            },
            total: totals
                .get(&id)
                .map(|&t| style(profile, id).show(t))
                .unwrap_or_default(),
            main: id == main,
        })
        .collect();
    let main_type = profile.value_type(main);
    let duration = (main_type.unit.quantity() == Quantity::Time)
        .then(|| main_type.unit.seconds())
        .flatten()
        .and_then(|s| totals.get(&main).map(|t| t * s))
        .map(|seconds| {
            let mut text = text::time(seconds);
            let contexts = profile.contexts().filter(|(_, c)| !c.summary).count();
            if contexts > 1 {
                text.push_str(&format!(
                    " of {} summed over {contexts} contexts",
                    profile.value_type_name(main)
                ));
            } else {
                text.push_str(&format!(" of {}", profile.value_type_name(main)));
            }
            text
        });
    let labels: Vec<String> = profile
        .contexts()
        .take(50)
        .map(|(id, _)| profile.context_label(id))
        .collect();
    let mut caveats = Vec::new();
    let frames = || profile.frames().map(|(_, f)| f);
    if !frames().any(|f| f.line.is_some()) {
        caveats.push("No line numbers: the file does not record where in the source a function or sample lies, so there is no source view.".to_owned());
    } else if !frames().any(|f| f.file.is_some()) {
        caveats.push("No source file names: lines are known, files are not.".to_owned());
    }
    if profile.node_value_columns().is_empty() {
        caveats.push("No call tree values: the file has per-function values only, so there is no flame graph.".to_owned());
    }
    if profile.calls_value_type().is_none() {
        caveats.push("No call counts: the profiler does not count calls.".to_owned());
    }
    if profile.call_edges().len() == 0 && profile.node_value_columns().is_empty() {
        caveats.push("No callers or callees.".to_owned());
    }
    if frames().any(|f| f.file.is_some()) && input.embedded.is_empty() {
        caveats.push("No source text in the file: the source view reads the files from disk where they are found.".to_owned());
    }
    if profile.value_types().len() > options.value_types {
        caveats.push(format!(
            "{} value types: the tables show the first {}.",
            profile.value_types().len(),
            options.value_types
        ));
    }
    Summary {
        program: profile.name().unwrap_or("").to_owned(),
        format: input.format.clone().unwrap_or_default(),
        inputs: input.paths.clone(),
        duration,
        contexts: context_words(profile),
        more_contexts: profile.contexts().len().saturating_sub(labels.len()),
        context_labels: labels,
        value_types,
        caveats,
    }
}

/// The top-functions table of `filter` (its element id and label): the union of the top rows by self and by inclusive of
/// the main value type and by self of the others, ordered by the main self value.
fn top_table(
    profile: &Profile,
    shown: &[ValueTypeId],
    styles: &[Style],
    filter: ContextFilter,
    (id, label): (String, String),
    options: &Options,
    columns: &[Column],
) -> Result<TopTable, ReportError> {
    let has_calls = profile.calls_value_type().is_some();
    // Per value type: every row of the query (linear), by identity.
    let mut per_type: Vec<(Vec<Row>, f64, Option<f64>)> = Vec::new();
    let mut left_out = LeftOut::default();
    for &vt in shown {
        let q = Query::new()
            .value_type(profile.value_type_name(vt))
            .contexts(filter.clone());
        let t = profile.top(&q)?;
        if per_type.is_empty() {
            left_out = t.left_out;
        }
        per_type.push((t.rows, t.total.self_value, t.total.inclusive));
    }
    let mut chosen: Vec<Key> = Vec::new();
    let mut seen: BTreeSet<Key> = BTreeSet::new();
    let mut choose = |rows: &mut dyn Iterator<Item = &Row>, n: usize| {
        for row in rows.take(n) {
            let k = key(row);
            if seen.insert(k.clone()) {
                chosen.push(k);
            }
        }
    };
    let n = options.functions;
    choose(&mut per_type[0].0.iter(), n);
    let mut by_inclusive: Vec<&Row> = per_type[0].0.iter().collect();
    by_inclusive.sort_by(|a, b| {
        b.inclusive
            .unwrap_or(b.self_value)
            .total_cmp(&a.inclusive.unwrap_or(a.self_value))
    });
    choose(&mut by_inclusive.into_iter(), n / 2);
    for (rows, _, _) in per_type.iter().skip(1) {
        choose(&mut rows.iter(), n / 10);
    }
    let indexes: Vec<HashMap<Key, usize>> = per_type
        .iter()
        .map(|(rows, _, _)| {
            rows.iter()
                .enumerate()
                .filter(|(_, r)| seen.contains(&key(r)))
                .map(|(i, r)| (key(r), i))
                .collect()
        })
        .collect();
    let total_rows = per_type[0].0.len();
    let mut rows: Vec<(f64, TopRow)> = Vec::new();
    for k in &chosen {
        let mut cells = Vec::new();
        let mut first: Option<&Row> = None;
        for (i, &vt) in shown.iter().enumerate() {
            let row = indexes[i].get(k).map(|&j| &per_type[i].0[j]);
            first = first.or(row);
            let s = styles[i];
            let name = profile.value_type_name(vt);
            cells.push(s.cell(&format!("self:{name}"), row.map(|r| r.self_value)));
            cells.push(s.cell(&format!("incl:{name}"), row.and_then(|r| r.inclusive)));
            if i == 0 && has_calls {
                cells.push(Style::count().cell("calls", row.and_then(|r| r.calls)));
            }
        }
        let Some(row) = first else { continue };
        let main_self = indexes[0]
            .get(k)
            .map_or(f64::NEG_INFINITY, |&j| per_type[0].0[j].self_value);
        rows.push((
            main_self,
            TopRow {
                name: row.name.clone(),
                shown: String::new(),
                line: row.line,
                href: None,
                file: row.file.clone().unwrap_or_default(),
                module: row.module.clone().unwrap_or_default(),
                cells,
            },
        ));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut totals = Vec::new();
    for (i, &vt) in shown.iter().enumerate() {
        let s = styles[i];
        let name = profile.value_type_name(vt);
        totals.push(s.cell(&format!("self:{name}"), Some(per_type[i].1)));
        totals.push(s.cell(&format!("incl:{name}"), per_type[i].2));
        if i == 0 && has_calls {
            totals.push(Style::count().cell("calls", None));
        }
    }
    debug_assert_eq!(totals.len(), columns.len());
    Ok(TopTable {
        id,
        label,
        rows: rows.into_iter().map(|(_, r)| r).collect(),
        totals,
        of: total_rows,
        of_words: text::counted(total_rows as u64, "function", "functions"),
        left_out,
    })
}

/// The style of each of the `shown` value types' columns: times in the one unit that keeps the
/// whole program's total readable, so that each heading names the unit of its cells.
fn column_styles(profile: &Profile, shown: &[ValueTypeId]) -> Vec<Style> {
    shown
        .iter()
        .map(|&vt| {
            let q = Query::new()
                .value_type(profile.value_type_name(vt))
                .limit(0);
            let largest = profile.top(&q).map_or(0.0, |t| {
                t.total
                    .self_value
                    .abs()
                    .max(t.total.inclusive.map_or(0.0, f64::abs))
            });
            style(profile, vt).fixed(largest)
        })
        .collect()
}

fn columns(profile: &Profile, shown: &[ValueTypeId], styles: &[Style]) -> Vec<Column> {
    let mut out = Vec::new();
    for (i, &vt) in shown.iter().enumerate() {
        let name = profile.value_type_name(vt);
        let unit = profile.unit_name(profile.value_type(vt).unit);
        out.push(Column {
            key: format!("self:{name}"),
            label: styles[i].heading(&format!("{name} self"), unit),
        });
        out.push(Column {
            key: format!("incl:{name}"),
            label: styles[i].heading(&format!("{name} inclusive"), unit),
        });
        if i == 0 && profile.calls_value_type().is_some() {
            out.push(Column {
                key: "calls".to_owned(),
                label: "calls".to_owned(),
            });
        }
    }
    out
}

/// The values and events `left_out` of the function tables and the flame graph, in words, as
/// `profcodec top` says it; `None` when there are none.
fn markers_note(left_out: LeftOut) -> Option<String> {
    (!left_out.is_empty()).then(|| {
        format!(
            "{left_out} left out of the functions and the flame graph: they are counters and \
             instants, not functions (the timelines and the Perfetto trace show them)."
        )
    })
}

/// The most contexts listed on the index.
const CONTEXT_ROWS: usize = 200;

/// Each context's total of the main value type, the largest first.
fn context_rows(profile: &Profile, main: ValueTypeId) -> Vec<ContextRow> {
    let s = style(profile, main);
    let name = profile.value_type_name(main);
    let mut totals = profile.context_totals(main);
    totals.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.index().cmp(&b.0.index())));
    totals
        .into_iter()
        .take(CONTEXT_ROWS)
        .map(|(id, total)| ContextRow {
            label: profile.context_label(id),
            value: s.cell(name, Some(total)),
        })
        .collect()
}

/// The columns of the activity bars.
const ACTIVITY_COLUMNS: usize = 100;

/// The timelines section: per track its counts and its activity over the whole trace.
fn timelines(input: &Input<'_>) -> Option<TimelineView> {
    let t = &input.timelines;
    let activity = t.activity.as_ref().filter(|a| !a.is_empty())?;
    let start = activity.start.unwrap_or(0);
    let end = activity.end.max(start + 1);
    let time = |ns: u64| text::time(ns as f64 * 1e-9);
    let ns = Style::of(profcodec_profile::Unit::Nanoseconds);
    let tracks = activity
        .kept
        .iter()
        .map(|track| {
            let first = track.first.unwrap_or(start);
            let bars = track
                .shares(start, end, ACTIVITY_COLUMNS)
                .into_iter()
                .enumerate()
                .filter(|(_, share)| *share >= 0.005)
                .map(|(x, share)| Bar {
                    x,
                    opacity: format!("{:.2}", share.min(1.0)),
                })
                .collect();
            TrackRow {
                label: track.label.clone(),
                name: track.name.clone(),
                cells: vec![
                    Style::count().cell("slices", Some(track.slices as f64)),
                    ns.cell("busy", Some(track.busy as f64)),
                    Cell {
                        col: "busy-share".to_owned(),
                        raw: text::raw(track.busy as f64 / (end - start) as f64),
                        text: format!("{:.1}%", 100.0 * track.busy as f64 / (end - start) as f64),
                    },
                    ns.cell("from", Some((first - start) as f64)),
                    ns.cell("until", Some((track.last - start) as f64)),
                    Style::count().cell("depth", Some(f64::from(track.max_depth))),
                    Style::count().cell("instants", Some(track.instants as f64)),
                ],
                bars,
            }
        })
        .collect();
    let more = (activity.more_tracks > 0).then(|| {
        format!(
            "{} ({}) not shown: the page shows the {} busiest.",
            text::counted(activity.more_tracks, "more track", "more tracks"),
            text::counted(activity.more_slices, "slice", "slices"),
            activity.kept.len()
        )
    });
    Some(TimelineView {
        summary: format!(
            "{}, {}, over {}.",
            text::counted(activity.tracks, "track", "tracks"),
            text::counted(activity.slices, "slice", "slices"),
            time(end - start)
        ),
        columns: ACTIVITY_COLUMNS,
        tracks,
        more,
        trace: t.trace.as_ref().map(|(file, bytes)| Trace {
            file: file.clone(),
            size: text::bytes(*bytes),
        }),
    })
}

fn call_lists(
    profile: &Profile,
    main: ValueTypeId,
    totals: Option<&profcodec_profile::NodeTotals>,
    functions: &[String],
) -> (Vec<Column>, String, Vec<FunctionCalls>) {
    let edges = match calls::measured(profile) {
        Some(edges) => edges,
        None => match totals {
            Some(totals) => {
                let call_totals = profile
                    .calls_value_type()
                    .and_then(|c| flame::totals(profile, c));
                calls::from_tree(profile, main, totals, call_totals.as_ref())
            }
            None => return (Vec::new(), String::new(), Vec::new()),
        },
    };
    let columns: Vec<Column> = edges
        .columns
        .iter()
        .map(|&vt| Column {
            key: format!("edge:{}", profile.value_type_name(vt)),
            label: profile.value_type_name(vt).to_owned(),
        })
        .collect();
    let index = edges.index();
    const MAX: usize = 20;
    let rows = |list: Option<&Vec<(&str, &[f64])>>| -> (Vec<EdgeRow>, usize) {
        let Some(list) = list else {
            return (Vec::new(), 0);
        };
        let rows = list
            .iter()
            .take(MAX)
            .map(|(name, values)| EdgeRow {
                name: (*name).to_owned(),
                shown: String::new(),
                href: None,
                cells: edges
                    .columns
                    .iter()
                    .zip(values.iter())
                    .map(|(&vt, &v)| {
                        style(profile, vt)
                            .cell(&format!("edge:{}", profile.value_type_name(vt)), Some(v))
                    })
                    .collect(),
            })
            .collect();
        (rows, list.len().saturating_sub(MAX))
    };
    let out = functions
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let (callers, more_callers) = rows(index.callers.get(name.as_str()));
            let (callees, more_callees) = rows(index.callees.get(name.as_str()));
            FunctionCalls {
                id: format!("fn-{i}"),
                name: name.clone(),
                shown: String::new(),
                href: None,
                callers,
                callees,
                more_callers_words: text::counted(
                    more_callers as u64,
                    "more caller",
                    "more callers",
                ),
                more_callees_words: text::counted(
                    more_callees as u64,
                    "more callee",
                    "more callees",
                ),
                more_callers,
                more_callees,
            }
        })
        .filter(|f| !f.callers.is_empty() || !f.callees.is_empty())
        .collect();
    (columns, edges.source.to_owned(), out)
}

fn comparison(
    base: &Input<'_>,
    input: &Input<'_>,
    main: ValueTypeId,
    options: &Options,
    budget: &mut Budget,
) -> Result<(Comparison, Option<Vec<u8>>), ReportError> {
    let profile = input.profile;
    let name = profile.value_type_name(main).to_owned();
    let q = Query::new()
        .value_type(name.clone())
        .limit(options.functions);
    let diff = profcodec_profile::diff(base.profile, profile, &q)?;
    let s = style(profile, main);
    let key = |k: &str| format!("{k}:{name}");
    let rows = diff
        .rows
        .iter()
        .map(|r| {
            let ratio = match (r.base, r.new) {
                (Some(b), Some(n)) if b.self_value != 0.0 => Some(n.self_value / b.self_value),
                _ => None,
            };
            DiffRowView {
                name: r.name.clone(),
                shown: String::new(),
                href: None,
                cells: vec![
                    s.cell(&key("base"), r.base.map(|v| v.self_value)),
                    s.cell(&key("new"), r.new.map(|v| v.self_value)),
                    s.cell(&key("change"), Some(r.self_change)),
                    Cell {
                        col: key("ratio"),
                        raw: ratio.map(text::raw).unwrap_or_default(),
                        text: match ratio {
                            Some(x) => format!("{x:.3}×"),
                            None if r.base.is_none() => "new".to_owned(),
                            None => "gone".to_owned(),
                        },
                    },
                ],
            }
        })
        .collect();
    let columns = ["base", "new", "change", "ratio"]
        .iter()
        .map(|k| Column {
            key: key(k),
            label: format!("{k} self"),
        })
        .collect();
    let mut svg = None;
    let mut flame_view = None;
    let base_vt = base.profile.value_type_by_name(&name);
    if let (Some(new_totals), Some(base_vt)) = (flame::totals(profile, main), base_vt)
        && let Some(base_totals) = flame::totals(base.profile, base_vt)
    {
        let mut labels = flame::Labels::default();
        let graph = flame::graph(profile, &new_totals, &mut labels, options.min_width / 100.0);
        // The base whole: a frame pruned from its graph still has a value to compare with.
        let base_graph = flame::graph(base.profile, &base_totals, &mut labels, 0.0);
        let title = format!("{name}: change from the base (red: more, blue: less)");
        let mut file = budget.file();
        flame::svg(&mut file, &graph, &labels, &title, s, Some(&base_graph))?;
        svg = Some(budget.take(file));
        flame_view = Some(Flame {
            file: DIFF_FLAME,
            note: "The shape is the new profile's; each frame is coloured by its change from the base's frame of the same call path, and its tooltip gives both values and the change.".to_owned(),
        });
    }
    Ok((
        Comparison {
            value_type: name,
            unit: diff.unit,
            base_total: s.show(diff.base_total.self_value),
            new_total: s.show(diff.new_total.self_value),
            columns,
            rows,
            flame: flame_view,
        },
        svg,
    ))
}

pub(crate) fn render(
    input: &Input<'_>,
    base: Option<&Input<'_>>,
    options: &Options,
) -> Result<Rendered, ReportError> {
    let profile = input.profile;
    let main = main_value_type(profile, options)?;
    let shown = shown_value_types(profile, main, options.value_types.max(1));
    let styles = column_styles(profile, &shown);
    let columns = columns(profile, &shown, &styles);
    let mut extra: Vec<(String, Vec<u8>)> = Vec::new();

    let mut tables = vec![top_table(
        profile,
        &shown,
        &styles,
        ContextFilter::Whole,
        ("top-all".to_owned(), "the whole program".to_owned()),
        options,
        &columns,
    )?];
    let singles: Vec<ContextId> = profile
        .contexts()
        .filter(|(_, c)| !c.summary)
        .map(|(id, _)| id)
        .collect();
    if singles.len() > 1 {
        for &id in singles.iter().take(options.contexts) {
            tables.push(top_table(
                profile,
                &shown[..1],
                &styles[..1],
                ContextFilter::Ids(vec![id]),
                (format!("top-{}", id.index()), profile.context_label(id)),
                options,
                &columns[..if profile.calls_value_type().is_some() {
                    3
                } else {
                    2
                }],
            )?);
        }
    }

    let mut budget = Budget::new(options.max_output);
    let totals = flame::totals(profile, main);
    let mut flame_view = None;
    let mut no_flame = None;
    match &totals {
        Some(totals) => {
            let mut labels = flame::Labels::default();
            let graph = flame::graph(profile, totals, &mut labels, options.min_width / 100.0);
            let unit = profile.unit_name(profile.value_type(main).unit);
            let title = format!("{} ({unit})", profile.value_type_name(main));
            let mut file = budget.file();
            flame::svg(
                &mut file,
                &graph,
                &labels,
                &title,
                style(profile, main),
                None,
            )?;
            extra.push((FLAME.to_owned(), budget.take(file)));
            flame_view = Some(Flame {
                file: FLAME,
                note: format!(
                    "{} drawn; {} narrower than {}% of the total left out (--min-width).",
                    text::counted(graph.kept_count as u64, "frame", "frames"),
                    text::counted(graph.pruned as u64, "frame", "frames"),
                    options.min_width
                ),
            });
        }
        None => {
            no_flame = Some(format!(
                "The profile has no call-tree values of {}, so there is no flame graph.",
                profile.value_type_name(main)
            ));
        }
    }

    let built_trees = totals
        .as_ref()
        .map(|totals| trees::build(profile, totals, options.min_width / 100.0));
    let function_names: Vec<String> = tables[0].rows.iter().map(|r| r.name.clone()).collect();
    let (edge_columns, edge_source, mut functions) =
        call_lists(profile, main, totals.as_ref(), &function_names);
    let timelines = timelines(input);
    let timeline_note = input.timelines.note.clone().or_else(|| {
        timelines
            .is_none()
            .then(|| "The report was made without a timeline.".to_owned())
    });

    let mut comparison = match base {
        Some(base) => {
            let (c, svg) = comparison(base, input, main, options, &mut budget)?;
            if let Some(svg) = svg {
                extra.push((DIFF_FLAME.to_owned(), svg));
            }
            Some(c)
        }
        None => None,
    };

    // The source pages: planned within half the room the graphs left (the rest is the
    // index's), so that every link to a line is made knowing its page is kept.
    let line_types = line_value_types(profile, main, 4);
    let lines = Lines::gather(profile, main, &line_types)?;
    let plan = lines.plan(input, options, budget.room() / 2);
    let href = |name: &str| plan.function_href(&lines, name);
    fn file_of(file: &str) -> Option<&str> {
        (!file.is_empty()).then_some(file)
    }
    // The names shown, chosen over the whole index so that a function reads the same in every
    // table and no two functions read alike.
    let mut names = Names::default();
    for row in tables.iter().flat_map(|t| &t.rows) {
        names.add(&row.name, file_of(&row.file), row.line);
    }
    for f in &functions {
        names.add_name(&f.name);
        for e in f.callers.iter().chain(&f.callees) {
            names.add_name(&e.name);
        }
    }
    for r in comparison.iter().flat_map(|c| &c.rows) {
        names.add_name(&r.name);
    }
    if let Some(t) = &built_trees {
        t.add_names(&mut names);
    }
    names.choose();
    let trees_view = built_trees.as_ref().map(|t| TreesView {
        top_down: t.html(&t.top_down, "top-down", &names, styles[0]),
        bottom_up: t.html(&t.bottom_up, "bottom-up", &names, styles[0]),
        note: format!(
            "Each node's inclusive then self value of {}. Nodes narrower than {}% of the total, \
             and past {} per tree, are left out ({} and {}); a bottom-up path follows at most \
             {} callers, and a recursive function's inclusive value counts at every depth.",
            profile.value_type_name(main),
            options.min_width,
            trees::MAX_NODES,
            text::counted(t.top_down.pruned as u64, "node top-down", "nodes top-down"),
            text::counted(
                t.bottom_up.pruned as u64,
                "node bottom-up",
                "nodes bottom-up"
            ),
            trees::MAX_CALLER_DEPTH,
        ),
    });
    for table in &mut tables {
        for row in &mut table.rows {
            row.href = href(&row.name);
            row.shown = names.shown(&row.name, file_of(&row.file), row.line);
        }
    }
    for f in &mut functions {
        f.href = href(&f.name);
        f.shown = names.shown(&f.name, None, None);
        for e in f.callers.iter_mut().chain(f.callees.iter_mut()) {
            e.href = href(&e.name);
            e.shown = names.shown(&e.name, None, None);
        }
    }
    if let Some(c) = &mut comparison {
        for r in &mut c.rows {
            r.href = href(&r.name);
            r.shown = names.shown(&r.name, None, None);
        }
    }
    let markers = markers_note(tables[0].left_out);
    let main_style = style(profile, main);
    let main_name = profile.value_type_name(main).to_owned();
    let file_entries: Vec<FileEntry> = plan
        .pages
        .iter()
        .map(|p| FileEntry {
            path: p.file.clone(),
            href: format!("{}/{}.html", files::FOLDER, p.number),
            total: main_style.cell(&main_name, Some(p.total)),
            lines: Style::count().cell("lines", Some(lines.lines_with_values(&p.file) as f64)),
        })
        .collect();
    let no_sources = lines.order.is_empty().then(|| {
        "The profile has no values per source line, so there are no source pages.".to_owned()
    });
    let mut source_uses = Vec::new();
    let generator = concat!("profcodec ", env!("CARGO_PKG_VERSION"));
    let title = options.title.clone().unwrap_or_else(|| {
        let what = profile
            .name()
            .map(str::to_owned)
            .or_else(|| input.paths.first().cloned())
            .unwrap_or_else(|| "profile".to_owned());
        match base {
            Some(_) => format!("{what}: profcodec comparison report"),
            None => format!("{what}: profcodec report"),
        }
    });
    let page = Page {
        title,
        generator: generator.to_owned(),
        style: STYLE,
        script: SCRIPT,
        summary: summary(input, main, options),
        base_summary: base.map(|b| {
            let vt = b
                .profile
                .value_type_by_name(profile.value_type_name(main))
                .or_else(|| b.profile.default_value_type())
                .unwrap_or(main);
            summary(b, vt, options)
        }),
        columns,
        tables,
        flame: flame_view,
        no_flame,
        trees: trees_view,
        edge_columns,
        edge_source,
        functions,
        main: main_name.clone(),
        files: file_entries,
        left_out: plan.left_out.clone(),
        left_out_words: text::counted(plan.left_out.len() as u64, "file", "files"),
        markers,
        no_sources,
        contexts: context_rows(profile, main),
        more_contexts: profile.contexts().len().saturating_sub(CONTEXT_ROWS),
        more_contexts_words: text::counted(
            profile.contexts().len().saturating_sub(CONTEXT_ROWS) as u64,
            "more context",
            "more contexts",
        ),
        timelines,
        timeline_note,
        comparison,
    };
    let mut env = minijinja::Environment::new();
    env.add_template("index.html", TEMPLATE)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    env.add_template("file.html", FILE_TEMPLATE)
        .map_err(|e| ReportError::Template(e.to_string()))?;
    let mut file = budget.file();
    env.get_template("index.html")
        .and_then(|t| t.render_captured_to(&page, &mut file).map(drop))
        .map_err(|e| ReportError::Template(format!("{e:#}")))?;
    let mut out = vec![(INDEX.to_owned(), budget.take(file))];
    out.append(&mut extra);
    // One source page at a time: only its view is held while it is made.
    let template = env
        .get_template("file.html")
        .map_err(|e| ReportError::Template(e.to_string()))?;
    for planned in &plan.pages {
        let view = lines.view(planned, &plan);
        source_uses.push(source::SourceUse::of(
            &planned.file,
            planned.from(),
            planned.note(),
        ));
        let mut file = budget.file();
        template
            .render_captured_to(
                minijinja::context! {
                    title => &page.title,
                    generator => generator,
                    style => STYLE,
                    comparison => base.is_some(),
                    main => &main_name,
                    source_lines => options.source_lines,
                    file => view,
                },
                &mut file,
            )
            .map_err(|e| ReportError::Template(format!("{e:#}")))?;
        out.push((
            format!("{}/{}.html", files::FOLDER, planned.number),
            budget.take(file),
        ));
    }
    for left in &plan.left_out {
        source_uses.push(source::SourceUse::of(
            &left.file,
            None,
            Some(&format!("The file has no page: {}.", left.why)),
        ));
    }
    budget.check()?;
    Ok(Rendered {
        files: out,
        sources: source_uses,
    })
}
