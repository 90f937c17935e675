//! The source pages: one page per source file with values per line (`files/<n>.html`), as
//! nytprofhtml writes them: per line the columns the profile has (its value types by line; and
//! where the profiler measured calls by call site, the calls made on the line and the time
//! spent in them), graded against the file's other lines as nytprofhtml grades them, sub
//! definitions annotated with their callers and call lines with the subs they call.
//!
//! Which files get a page is decided before any is made, from each page's projected size: a
//! page over [`Options::max_page`] or past the room the budget leaves is left out, and the
//! index says so. Links to a line are made only to lines that have a row on a kept page.

use std::collections::{BTreeMap, HashMap};

use profcodec_profile::{ContextFilter, GroupBy, Order, Profile, Query, Unit, ValueTypeId};
use serde::Serialize;

use crate::text::{self, Cell, Style};
use crate::{Input, Options, ReportError, source};

/// The folder of the source pages inside the report.
pub(crate) const FOLDER: &str = "files";

/// The bytes of one row besides its cells, text and notes: its tags and anchors, at most.
const ROW_BYTES: u64 = 200;
/// The bytes of one cell besides its column's name: without a value, and with one, at most.
const EMPTY_CELL_BYTES: u64 = 50;
const CELL_BYTES: u64 = 160;
/// The bytes of a page besides its rows: head, style, script and navigation, at most.
const PAGE_BYTES: u64 = 16 << 10;
/// The bytes of one note (a caller or a call) besides its names, at most.
const NOTE_BYTES: u64 = 600;

/// A column of the source pages.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LineColumn {
    pub(crate) key: String,
    pub(crate) label: String,
    #[serde(skip)]
    style: StyleOf,
    /// The value type's unit name, for its heading when not a time.
    #[serde(skip)]
    unit: String,
}

#[derive(Debug, Clone, Copy)]
enum StyleOf {
    Unit(Unit),
    Count,
}

impl StyleOf {
    fn style(self) -> Style {
        match self {
            StyleOf::Unit(unit) => Style::of(unit),
            StyleOf::Count => Style::count(),
        }
    }
}

/// A call made at one call site, or received from one.
#[derive(Debug, Clone)]
struct Call {
    /// The other function: the callee at a call site, the calling sub for a caller.
    name: String,
    file: String,
    line: u32,
    calls: f64,
    time: f64,
}

/// What the profile says per source line, gathered once for every page.
pub(crate) struct Lines {
    pub(crate) columns: Vec<LineColumn>,
    /// file -> line -> values per column.
    values: HashMap<String, BTreeMap<u32, Vec<Option<f64>>>>,
    /// The files with line values, with the most of the main value first, and that value.
    pub(crate) order: Vec<(String, f64)>,
    /// (file, line) -> the calls made there, by callee.
    calls_at: HashMap<(String, u32), Vec<Call>>,
    /// callee -> the call sites that called it.
    callers_of: HashMap<String, Vec<Call>>,
    /// (file, line) -> the functions defined there.
    defined_at: HashMap<(String, u32), Vec<String>>,
    /// function -> where it is defined.
    pub(crate) definition: HashMap<String, (String, u32)>,
    /// function -> (self, inclusive) of the main value type.
    totals: HashMap<String, (f64, Option<f64>)>,
    main_style: Style,
    /// The unit of the main value type, for the time columns.
    main_name: String,
}

/// One source page planned: its file, its text, and the lines that have a row.
pub(crate) struct Planned {
    pub(crate) file: String,
    pub(crate) number: usize,
    pub(crate) total: f64,
    text: Vec<String>,
    from: Option<String>,
    note: Option<String>,
}

impl Planned {
    /// Where the page's text came from.
    pub(crate) fn from(&self) -> Option<&str> {
        self.from.as_deref()
    }

    /// Why the page has no text.
    pub(crate) fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}

/// A file with line values whose page was left out, and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct LeftOut {
    pub(crate) file: String,
    pub(crate) why: String,
}

/// The pages planned and the files left out.
pub(crate) struct Plan {
    pub(crate) pages: Vec<Planned>,
    pub(crate) left_out: Vec<LeftOut>,
    /// file -> index into `pages`.
    by_file: HashMap<String, usize>,
    source_lines: usize,
}

/// How many characters `s` takes once escaped for HTML (as the templates escape it).
fn escaped_len(s: &str) -> u64 {
    s.len() as u64
        + s.bytes()
            .map(|b| match b {
                b'&' => 4,
                b'<' | b'>' => 3,
                b'"' | b'\'' | b'/' => 5,
                _ => 0,
            })
            .sum::<u64>()
}

impl Lines {
    pub(crate) fn gather(
        profile: &Profile,
        main: ValueTypeId,
        line_types: &[ValueTypeId],
    ) -> Result<Lines, ReportError> {
        let width = line_types.len() + 2;
        let mut values: HashMap<String, BTreeMap<u32, Vec<Option<f64>>>> = HashMap::new();
        let mut file_totals: HashMap<String, f64> = HashMap::new();
        let mut used = vec![false; width];
        for (i, &vt) in line_types.iter().enumerate() {
            let q = Query::new()
                .value_type(profile.value_type_name(vt))
                .group(GroupBy::Line)
                .by(Order::SelfValue);
            let table = profile.top(&q)?;
            for row in table.rows {
                let (Some(file), Some(line)) = (row.file, row.line) else {
                    continue;
                };
                if row.self_value == 0.0 {
                    continue;
                }
                used[i] = true;
                if i == 0 {
                    *file_totals.entry(file.clone()).or_default() += row.self_value;
                }
                values
                    .entry(file)
                    .or_default()
                    .entry(line)
                    .or_insert_with(|| vec![None; width])[i] = Some(row.self_value);
            }
        }
        // The calls measured by call site: the calls made on each line and the time in them.
        let calls_type = profile.calls_value_type();
        let (calls_col, in_subs_col) = (width - 2, width - 1);
        let mut calls_at: HashMap<(String, u32), Vec<Call>> = HashMap::new();
        let mut callers_of: HashMap<String, Vec<Call>> = HashMap::new();
        if !profile.edge_values().is_empty() {
            let selected = profile.selected_contexts(&ContextFilter::Whole)?;
            // (site file, site line, caller, callee) -> (calls, time), in a stable order.
            let mut sums: BTreeMap<(String, u32, String, String), (f64, f64)> = BTreeMap::new();
            let mut names: HashMap<profcodec_profile::FrameId, String> = HashMap::new();
            for ev in profile.edge_values() {
                if !selected[ev.context.index()] {
                    continue;
                }
                let is_calls = Some(ev.value_type) == calls_type;
                if !is_calls && ev.value_type != main {
                    continue;
                }
                let edge = profile.call_edge(ev.edge);
                let Some(site) = edge.site.map(|s| profile.frame(s)) else {
                    continue;
                };
                let (Some(file), Some(line)) = (site.file, site.line) else {
                    continue;
                };
                let mut name = |f| {
                    names
                        .entry(f)
                        .or_insert_with(|| crate::calls::name(profile, f).into_owned())
                        .clone()
                };
                let key = (
                    profile.string(file).to_owned(),
                    line,
                    name(edge.caller),
                    name(edge.callee),
                );
                let sum = sums.entry(key).or_default();
                if is_calls {
                    sum.0 += ev.value;
                } else {
                    sum.1 += ev.value;
                }
            }
            for ((file, line, caller, callee), (calls, time)) in sums {
                let row = values
                    .entry(file.clone())
                    .or_default()
                    .entry(line)
                    .or_insert_with(|| vec![None; width]);
                if calls_type.is_some() {
                    used[calls_col] = true;
                    *row[calls_col].get_or_insert(0.0) += calls;
                }
                used[in_subs_col] = true;
                *row[in_subs_col].get_or_insert(0.0) += time;
                file_totals.entry(file.clone()).or_default();
                calls_at
                    .entry((file.clone(), line))
                    .or_default()
                    .push(Call {
                        name: callee.clone(),
                        file: file.clone(),
                        line,
                        calls,
                        time,
                    });
                callers_of.entry(callee).or_default().push(Call {
                    name: caller,
                    file,
                    line,
                    calls,
                    time,
                });
            }
        }
        // Where each function is defined: its frame's file and first line.
        let mut definition: HashMap<String, (String, u32)> = HashMap::new();
        for (id, frame) in profile.frames() {
            if !frame.kind.is_function_like() {
                continue;
            }
            let (Some(file), Some(line)) = (frame.file, frame.line) else {
                continue;
            };
            let name = profile.function_name(id).into_owned();
            let at = (profile.string(file).to_owned(), line);
            definition
                .entry(name)
                .and_modify(|d| {
                    if at < *d {
                        *d = at.clone();
                    }
                })
                .or_insert(at);
        }
        let mut defined_at: HashMap<(String, u32), Vec<String>> = HashMap::new();
        for (name, at) in &definition {
            defined_at.entry(at.clone()).or_default().push(name.clone());
        }
        for names in defined_at.values_mut() {
            names.sort();
        }
        let mut totals = HashMap::new();
        let q = Query::new().value_type(profile.value_type_name(main));
        for row in profile.top(&q)?.rows {
            if let Some(function) = row.function {
                totals
                    .entry(function)
                    .or_insert((row.self_value, row.inclusive));
            }
        }
        let main_name = profile.value_type_name(main).to_owned();
        let mut columns: Vec<LineColumn> = line_types
            .iter()
            .map(|&vt| LineColumn {
                key: profile.value_type_name(vt).to_owned(),
                label: profile.value_type_name(vt).to_owned(),
                style: StyleOf::Unit(profile.value_type(vt).unit),
                unit: profile.unit_name(profile.value_type(vt).unit).to_owned(),
            })
            .collect();
        columns.push(LineColumn {
            key: "calls".to_owned(),
            label: "calls".to_owned(),
            style: StyleOf::Count,
            unit: String::new(),
        });
        columns.push(LineColumn {
            key: format!("{main_name}_in_subs"),
            label: format!("{main_name} in subs"),
            style: StyleOf::Unit(profile.value_type(main).unit),
            unit: profile.unit_name(profile.value_type(main).unit).to_owned(),
        });
        // Only the columns with values stay, in every row alike.
        let keep: Vec<usize> = (0..width).filter(|&i| used[i]).collect();
        let columns = keep.iter().map(|&i| columns[i].clone()).collect();
        for lines in values.values_mut() {
            for row in lines.values_mut() {
                *row = keep.iter().map(|&i| row[i]).collect();
            }
        }
        let mut order: Vec<(String, f64)> = file_totals.into_iter().collect();
        order.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(Lines {
            columns,
            values,
            order,
            calls_at,
            callers_of,
            defined_at,
            definition,
            totals,
            main_style: Style::of(profile.value_type(main).unit),
            main_name,
        })
    }

    /// How many lines of `file` have values.
    pub(crate) fn lines_with_values(&self, file: &str) -> usize {
        self.values.get(file).map_or(0, BTreeMap::len)
    }

    /// The lines of `file` that have a row: each line of its text, then the lines with values
    /// beyond the text, at most `max` in all.
    fn row_lines<'a>(
        &'a self,
        file: &str,
        text_lines: usize,
        max: usize,
    ) -> impl Iterator<Item = u32> + 'a {
        let text_end = u32::try_from(text_lines).unwrap_or(u32::MAX);
        let beyond = self
            .values
            .get(file)
            .into_iter()
            .flat_map(move |lines| lines.range(text_end.saturating_add(1)..).map(|(&l, _)| l));
        (1..=text_end).chain(beyond).take(max)
    }

    /// Plans the source pages: the files with the most of the main value first, each kept
    /// while its projected page is within `max_page` and the pages so far within `room`.
    pub(crate) fn plan(&self, input: &Input<'_>, options: &Options, room: u64) -> Plan {
        let mut plan = Plan {
            pages: Vec::new(),
            left_out: Vec::new(),
            by_file: HashMap::new(),
            source_lines: options.source_lines,
        };
        let mut used: u64 = 0;
        for (n, (file, total)) in self.order.iter().enumerate() {
            if n >= options.source_files {
                plan.left_out.push(LeftOut {
                    file: file.clone(),
                    why: format!(
                        "the report makes pages of the {} files with the most {} (--source-files)",
                        options.source_files, self.main_name
                    ),
                });
                continue;
            }
            let (text, from, note) = match source::text(input, file, &options.source_roots) {
                source::Text::Found { lines, from } => (lines, Some(from), None),
                source::Text::Missing { note } => (Vec::new(), None, Some(note)),
            };
            let projected = self.project(file, &text, options.source_lines);
            let why = if projected > options.max_page {
                Some(format!(
                    "its page would take about {}, over the limit of {} a page may take",
                    text::bytes(projected),
                    text::bytes(options.max_page)
                ))
            } else if used.saturating_add(projected) > room {
                Some(format!(
                    "its page (about {}) would take the report over its output budget (--max-output)",
                    text::bytes(projected)
                ))
            } else {
                None
            };
            if let Some(why) = why {
                plan.left_out.push(LeftOut {
                    file: file.clone(),
                    why,
                });
                continue;
            }
            used += projected;
            plan.by_file.insert(file.clone(), plan.pages.len());
            plan.pages.push(Planned {
                file: file.clone(),
                number: plan.pages.len(),
                total: *total,
                text,
                from,
                note,
            });
        }
        plan
    }

    /// The most bytes the page of `file` with `text` takes.
    fn project(&self, file: &str, text: &[String], max_rows: usize) -> u64 {
        let mut bytes = PAGE_BYTES + 4 * escaped_len(file);
        let keys: u64 = self.columns.iter().map(|c| escaped_len(&c.key)).sum();
        let empty_row = ROW_BYTES + keys + EMPTY_CELL_BYTES * self.columns.len() as u64;
        let values = self.values.get(file);
        for line in self.row_lines(file, text.len(), max_rows) {
            bytes += match values.and_then(|v| v.get(&line)) {
                Some(v) => {
                    let valued = v.iter().filter(|x| x.is_some()).count() as u64;
                    empty_row + valued * (CELL_BYTES - EMPTY_CELL_BYTES)
                }
                None => empty_row,
            };
            if let Some(t) = usize::try_from(line)
                .ok()
                .and_then(|l| text.get(l.wrapping_sub(1)))
            {
                bytes += escaped_len(t);
            }
            let key = (file.to_owned(), line);
            for call in self.calls_at.get(&key).into_iter().flatten() {
                bytes += NOTE_BYTES + 2 * escaped_len(&call.name);
            }
            for name in self.defined_at.get(&key).into_iter().flatten() {
                bytes += NOTE_BYTES + 2 * escaped_len(name);
                for caller in self.callers_of.get(name).into_iter().flatten() {
                    bytes +=
                        NOTE_BYTES + 2 * escaped_len(&caller.name) + 2 * escaped_len(&caller.file);
                }
            }
        }
        bytes
    }
}

impl Plan {
    /// The link to line `line` of `file` from the report's folder, when a kept page has a row
    /// for it.
    pub(crate) fn line_href(&self, lines: &Lines, file: &str, line: u32) -> Option<String> {
        let page = &self.pages[*self.by_file.get(file)?];
        let text = page.text.len();
        let at = usize::try_from(line).unwrap_or(usize::MAX);
        let has_row = if (1..=text).contains(&at) {
            at <= self.source_lines
        } else {
            // A line beyond the text: its row follows the text's and the lines before it.
            let end = u32::try_from(text).unwrap_or(u32::MAX).saturating_add(1);
            lines.values.get(file).is_some_and(|values| {
                values.contains_key(&line)
                    && line >= end
                    && text.saturating_add(values.range(end..line).count()) < self.source_lines
            })
        };
        has_row.then(|| format!("{FOLDER}/{}.html#L{line}", page.number))
    }

    /// The link to the definition of `function` from the report's folder, when it has one.
    pub(crate) fn function_href(&self, lines: &Lines, function: &str) -> Option<String> {
        let (file, line) = lines.definition.get(function)?;
        self.line_href(lines, file, *line)
    }
}

/// One graded cell of a source row.
#[derive(Debug, Serialize)]
struct LineCell {
    col: String,
    raw: String,
    text: String,
    /// nytprofhtml's grade: `c0` (far above the file's median) to `c3` (at or below it).
    grade: &'static str,
}

/// A caller of a sub, on its definition line.
#[derive(Debug, Serialize)]
struct CallerNote {
    name: String,
    file: String,
    line: u32,
    href: Option<String>,
    place: String,
    times: String,
    calls: Cell,
    time: Cell,
    avg: Option<String>,
}

/// A sub defined on a line, with who called it.
#[derive(Debug, Serialize)]
struct DefinitionNote {
    name: String,
    spent: String,
    called: String,
    callers: Vec<CallerNote>,
}

/// The calls a line makes to one sub.
#[derive(Debug, Serialize)]
struct CallNote {
    name: String,
    href: Option<String>,
    spent: String,
    calls: Cell,
    time: Cell,
    avg: Option<String>,
}

#[derive(Debug, Serialize)]
struct RowView {
    number: u32,
    text: String,
    cells: Vec<LineCell>,
    definitions: Vec<DefinitionNote>,
    calls: Vec<CallNote>,
}

/// What a source page shows.
#[derive(Debug, Serialize)]
pub(crate) struct FileView {
    path: String,
    from: Option<String>,
    note: Option<String>,
    total: String,
    columns: Vec<LineColumn>,
    rows: Vec<RowView>,
    cut: usize,
}

/// nytprofhtml's median absolute deviation of `values`: (the median of the deviations from the
/// median, the median), each the element at half the length of the sorted list.
fn mad(mut values: Vec<f64>) -> (f64, f64) {
    if values.is_empty() {
        return (0.0, 0.0);
    }
    values.sort_by(f64::total_cmp);
    let median = values[values.len() / 2];
    let mut devs: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    devs.sort_by(f64::total_cmp);
    (devs[devs.len() / 2], median)
}

/// nytprofhtml's grade of `value` against its file's (deviation, median).
fn grade(value: f64, (dev, median): (f64, f64)) -> &'static str {
    let mut devs = value - median;
    if dev != 0.0 {
        devs /= dev;
    }
    if devs < 0.5 {
        "c3"
    } else if devs < 1.0 {
        "c2"
    } else if devs < 2.0 {
        "c1"
    } else {
        "c0"
    }
}

/// "N times" in nytprofhtml's words.
fn times(n: f64) -> String {
    if n == 1.0 {
        "once".to_owned()
    } else {
        format!("{} times", text::grouped(n))
    }
}

impl Lines {
    /// The view of a planned page: its rows, graded, with their notes. `href` links a
    /// function or a line from the page (whose folder is [`FOLDER`]).
    pub(crate) fn view(&self, page: &Planned, plan: &Plan) -> FileView {
        let file = page.file.as_str();
        let empty = BTreeMap::new();
        let values = self.values.get(file).unwrap_or(&empty);
        // Each column's times in the one unit that keeps the file's largest readable, named
        // in its heading.
        let styles: Vec<Style> = (0..self.columns.len())
            .map(|i| {
                let largest = values
                    .values()
                    .filter_map(|v| v[i])
                    .map(f64::abs)
                    .filter(|v| v.is_finite())
                    .fold(0.0, f64::max);
                self.columns[i].style.style().fixed(largest)
            })
            .collect();
        let columns: Vec<LineColumn> = self
            .columns
            .iter()
            .zip(&styles)
            .map(|(c, s)| match c.style {
                StyleOf::Unit(_) => LineColumn {
                    label: s.heading(&c.label, &c.unit),
                    ..c.clone()
                },
                StyleOf::Count => c.clone(),
            })
            .collect();
        let stats: Vec<(f64, f64)> = (0..self.columns.len())
            .map(|i| mad(values.values().filter_map(|v| v[i]).collect()))
            .collect();
        // Links from a source page: to a line of this page by its anchor, else up a folder.
        let from_here =
            |href: String| match href.strip_prefix(&format!("{FOLDER}/{}.html", page.number)) {
                Some(anchor) => anchor.to_owned(),
                None => href
                    .strip_prefix(&format!("{FOLDER}/"))
                    .map_or_else(|| format!("../{href}"), str::to_owned),
            };
        let main = self.main_style;
        let rows = self
            .row_lines(file, page.text.len(), plan.source_lines)
            .map(|number| {
                let text = usize::try_from(number)
                    .ok()
                    .and_then(|l| page.text.get(l.wrapping_sub(1)))
                    .cloned()
                    .unwrap_or_default();
                let line_values = values.get(&number);
                let cells = self
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let v = line_values.and_then(|v| v[i]);
                        let cell = styles[i].cell(&c.key, v);
                        LineCell {
                            col: cell.col,
                            raw: cell.raw,
                            text: cell.text,
                            grade: v.map_or("", |v| grade(v, stats[i])),
                        }
                    })
                    .collect();
                let key = (file.to_owned(), number);
                let definitions = self
                    .defined_at
                    .get(&key)
                    .into_iter()
                    .flatten()
                    .filter_map(|name| self.definition_note(name, plan, &from_here))
                    .collect();
                let mut calls: Vec<&Call> = self.calls_at.get(&key).into_iter().flatten().collect();
                calls.sort_by(|a, b| b.time.total_cmp(&a.time).then_with(|| a.name.cmp(&b.name)));
                // One note per callee (a line may call one sub from several callers' frames).
                let mut merged: Vec<Call> = Vec::new();
                for call in calls {
                    match merged.iter_mut().find(|m| m.name == call.name) {
                        Some(m) => {
                            m.calls += call.calls;
                            m.time += call.time;
                        }
                        None => merged.push(call.clone()),
                    }
                }
                let calls = merged
                    .into_iter()
                    .map(|call| CallNote {
                        href: plan.function_href(self, &call.name).map(&from_here),
                        spent: main.show(call.time),
                        avg: (call.calls > 1.0).then(|| main.show(call.time / call.calls)),
                        calls: Style::count().cell("calls", Some(call.calls)),
                        time: main.cell(&self.main_name, Some(call.time)),
                        name: call.name,
                    })
                    .collect();
                RowView {
                    number,
                    text,
                    cells,
                    definitions,
                    calls,
                }
            })
            .collect::<Vec<_>>();
        let shown = self.row_lines(file, page.text.len(), usize::MAX).count();
        FileView {
            path: page.file.clone(),
            from: page.from.clone(),
            note: page.note.clone(),
            total: main.show(page.total),
            columns,
            cut: shown.saturating_sub(rows.len()),
            rows,
        }
    }

    /// nytprofhtml's note on the definition of `name`: "spent X (A+B) within NAME, which was
    /// called N times, avg Z/call", and each caller; none for a sub nobody called.
    fn definition_note(
        &self,
        name: &str,
        plan: &Plan,
        from_here: &dyn Fn(String) -> String,
    ) -> Option<DefinitionNote> {
        let callers = self.callers_of.get(name).filter(|c| !c.is_empty())?;
        let main = self.main_style;
        let (excl, incl) = self.totals.get(name).copied().unwrap_or((0.0, None));
        let incl = incl.unwrap_or(excl);
        let total_calls: f64 = callers.iter().map(|c| c.calls).sum();
        let mut callers: Vec<&Call> = callers.iter().collect();
        // The most frequent caller first, then by time (as nytprofhtml orders them).
        callers.sort_by(|a, b| {
            b.calls
                .total_cmp(&a.calls)
                .then_with(|| b.time.total_cmp(&a.time))
                .then_with(|| (&a.file, a.line).cmp(&(&b.file, b.line)))
        });
        let here = self.definition.get(name).map(|(f, _)| f.as_str());
        Some(DefinitionNote {
            name: name.to_owned(),
            spent: format!(
                "{} ({}+{})",
                main.show(incl),
                main.show(excl),
                main.show(incl - excl)
            ),
            called: if total_calls <= 1.0 {
                String::new()
            } else {
                format!(
                    " {} times, avg {}/call",
                    text::grouped(total_calls),
                    main.show(incl / total_calls)
                )
            },
            callers: callers
                .into_iter()
                .map(|c| CallerNote {
                    name: c.name.clone(),
                    file: c.file.clone(),
                    line: c.line,
                    href: plan.line_href(self, &c.file, c.line).map(from_here),
                    place: if Some(c.file.as_str()) == here {
                        format!("line {}", c.line)
                    } else {
                        format!("line {} of {}", c.line, c.file)
                    },
                    times: times(c.calls),
                    calls: Style::count().cell("calls", Some(c.calls)),
                    time: main.cell(&self.main_name, Some(c.time)),
                    avg: (c.calls > 1.0).then(|| main.show(c.time / c.calls)),
                })
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grades_as_nytprofhtml() {
        // Median 3, deviations 0,1,1,2,7: median deviation 1.
        let stats = mad(vec![1.0, 2.0, 3.0, 4.0, 10.0]);
        assert_eq!(stats, (1.0, 3.0));
        assert_eq!(grade(1.0, stats), "c3");
        assert_eq!(grade(3.6, stats), "c2");
        assert_eq!(grade(4.5, stats), "c1");
        assert_eq!(grade(10.0, stats), "c0");
        assert_eq!(escaped_len("a<b&'/"), 6 + 3 + 4 + 5 + 5);
        assert_eq!(times(1.0), "once");
        assert_eq!(times(1200.0), "1,200 times");
    }
}
