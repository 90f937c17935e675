//! `profcodec top` and `profcodec diff`: the query flags, and the tables they print.
//!
//! Text output is an aligned table for people: values in human units (time in ns, µs, ms or s,
//! one unit per column chosen from the total; counts with thousands separators), each value's
//! share of the total, and a total line. `--json` prints full-precision values in the model's
//! own unit (schemas in the CLI README).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use profcodec::text::grouped;
use profcodec_profile::{
    Combine, ContextFilter, Diff, DiffRow, GroupBy, IdKind, Order, Profile, Quantity, Query, Row,
    Table, Unit, short_name,
};
use serde::Serialize;

/// Rows shown when `-n` is not given.
const DEFAULT_ROWS: usize = 20;

/// Which value orders the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum By {
    /// The self (exclusive) value.
    #[value(name = "self")]
    SelfValue,
    /// The inclusive value.
    Inclusive,
}

/// How rows are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Group {
    /// One row per function (sub, block, procedure).
    Function,
    /// One row per source line (file:line).
    Line,
    /// One row per load module or package.
    Module,
}

/// The query flags `top` and `diff` share.
#[derive(Debug, Clone, Args)]
pub(crate) struct QueryArgs {
    /// How many rows to print (0: all).
    #[arg(short = 'n', long = "rows", default_value_t = DEFAULT_ROWS)]
    rows: usize,
    /// Order by the self or the inclusive value.
    #[arg(long, value_enum, default_value = "self")]
    by: By,
    /// The metric (value type) by name; by default the profile's main one (time where it has
    /// time). An unknown name is refused with the list of known ones.
    #[arg(long)]
    metric: Option<String>,
    /// Group rows by function, source line or module (package).
    #[arg(long, value_enum, default_value = "function")]
    group: Group,
    /// Only this thread.
    #[arg(long, value_name = "T", conflicts_with_all = ["rank", "process"])]
    thread: Option<u64>,
    /// Only this MPI rank (all its threads).
    #[arg(long, value_name = "R", conflicts_with = "process")]
    rank: Option<u64>,
    /// Only this process (its pid).
    #[arg(long, value_name = "P")]
    process: Option<u64>,
    /// Average over the threads, ranks or processes read instead of summing them.
    #[arg(long)]
    mean: bool,
    /// Print names whole: by default C++ template arguments and parameter lists show as <…>
    /// and (…), and the table is cut to the terminal's width (200 columns off a terminal).
    #[arg(long)]
    full_names: bool,
    /// A folder where the binaries of hpcrun measurements are searched by file name, before
    /// PROFCODEC_BINARY_PATH's folders and the paths the load map records (repeatable).
    #[arg(long, value_name = "DIR")]
    binary_path: Vec<PathBuf>,
}

/// The width of text tables: the terminal's when standard output is one, else 200.
const OFF_TERMINAL_WIDTH: usize = 200;

fn table_width() -> usize {
    let out = io::stdout();
    if !out.is_terminal() {
        return OFF_TERMINAL_WIDTH;
    }
    #[cfg(unix)]
    if let Ok(size) = rustix::termios::tcgetwinsize(&out)
        && size.ws_col > 0
    {
        return usize::from(size.ws_col);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c| c > 0)
        .unwrap_or(OFF_TERMINAL_WIDTH)
}

/// Where hpcrun measurements' binaries are searched (`--binary-path`), and a line on standard
/// error for each load module that stays unresolved, and why.
pub(crate) fn use_binary_path(dirs: &[PathBuf]) {
    profcodec::symbols::set_binary_path(dirs.iter().cloned());
    profcodec::symbols::set_reporter(|report| {
        if let Some(why) = &report.unresolved {
            eprintln!(
                "profcodec: no symbols for {} ({} of {} files): {why}; addresses shown as [0x...] \
                 (--binary-path DIR or PROFCODEC_BINARY_PATH finds moved binaries)",
                report.module,
                report.files - report.resolved,
                report.files
            );
        }
    });
}

impl QueryArgs {
    /// Sets up symbolization for `--binary-path` ([`use_binary_path`]).
    pub(crate) fn use_binary_path(&self) {
        use_binary_path(&self.binary_path);
    }

    /// A row's name as the table shows it: shortened (`--full-names` keeps it whole) when rows
    /// are functions.
    fn shown_name(&self, name: &str) -> String {
        if self.full_names || self.group != Group::Function {
            name.to_owned()
        } else {
            short_name(name).into_owned()
        }
    }

    /// The width the table is cut to, `None` for `--full-names`.
    fn width(&self) -> Option<usize> {
        (!self.full_names).then(table_width)
    }

    /// The model's query for these flags.
    pub(crate) fn query(&self) -> Query {
        let mut query = Query::new()
            .by(match self.by {
                By::SelfValue => Order::SelfValue,
                By::Inclusive => Order::Inclusive,
            })
            .group(match self.group {
                Group::Function => GroupBy::Function,
                Group::Line => GroupBy::Line,
                Group::Module => GroupBy::Module,
            });
        if let Some(metric) = &self.metric {
            query = query.value_type(metric.clone());
        }
        if self.rows > 0 {
            query = query.limit(self.rows);
        }
        let only = [
            (IdKind::Thread, self.thread),
            (IdKind::Rank, self.rank),
            (IdKind::Process, self.process),
        ]
        .into_iter()
        .find_map(|(kind, id)| id.map(|id| (kind, id)));
        if let Some(only) = only {
            query = query.contexts(ContextFilter::Matching(vec![only]));
        }
        if self.mean {
            query = query.combine(Combine::Mean);
        }
        query
    }

    /// What the contexts flags chose, in words (`process 4711`), if any.
    fn only(&self) -> Option<String> {
        match (self.thread, self.rank, self.process) {
            (Some(t), _, _) => Some(format!("thread {t}")),
            (_, Some(r), _) => Some(format!("rank {r}")),
            (_, _, Some(p)) => Some(format!("process {p}")),
            _ => None,
        }
    }

    fn order_name(&self) -> &'static str {
        match self.by {
            By::SelfValue => "self",
            By::Inclusive => "inclusive",
        }
    }

    fn group_name(&self) -> &'static str {
        match self.group {
            Group::Function => "function",
            Group::Line => "line",
            Group::Module => "module",
        }
    }
}

/// How the values of one metric are shown: divided by `scale` and followed by `suffix`.
#[derive(Debug, Clone, Copy)]
struct Display {
    scale: f64,
    suffix: &'static str,
    /// Decimals after the point.
    decimals: usize,
}

impl Display {
    /// The display of the metric `name` for values up to `largest`: time in the unit that keeps
    /// `largest` between 1 and 1000 (seconds past that; 3 decimals in seconds, 1 in ms and µs),
    /// counts as they are (2 decimals when not whole, as a mean may be).
    fn new(profile: &Profile, name: &str, largest: f64) -> Display {
        let seconds = profile
            .value_type_by_name(name)
            .map(|id| profile.value_type(id).unit)
            .filter(|u| u.quantity() == Quantity::Time)
            .and_then(Unit::seconds);
        match seconds {
            Some(seconds) => {
                let largest = largest.abs() * seconds;
                let (scale, suffix, decimals) = if largest >= 1.0 {
                    (1.0, "s", 3)
                } else if largest >= 1e-3 {
                    (1e-3, "ms", 1)
                } else if largest >= 1e-6 {
                    (1e-6, "µs", 1)
                } else {
                    (1e-9, "ns", 0)
                };
                Display {
                    scale: scale / seconds,
                    suffix,
                    decimals,
                }
            }
            None => Display {
                scale: 1.0,
                suffix: "",
                decimals: 0,
            },
        }
    }

    fn show(&self, value: f64) -> String {
        let scaled = value / self.scale;
        let decimals = if self.decimals == 0 && scaled.fract() != 0.0 {
            2
        } else {
            self.decimals
        };
        let mut text = grouped(scaled, decimals);
        if !self.suffix.is_empty() {
            text.push(' ');
            text.push_str(self.suffix);
        }
        text
    }

    fn show_signed(&self, value: f64) -> String {
        let text = self.show(value);
        if value > 0.0 {
            format!("+{text}")
        } else {
            text
        }
    }
}

fn percent(part: f64, whole: f64) -> String {
    if whole == 0.0 {
        String::new()
    } else {
        format!("{:.1}%", 100.0 * part / whole)
    }
}

fn signed_percent(relative: Option<f64>) -> String {
    match relative {
        Some(r) if r > 0.0 => format!("+{:.1}%", 100.0 * r),
        Some(r) => format!("{:.1}%", 100.0 * r),
        None => "new".to_owned(),
    }
}

/// Where a row's function lives, when grouped by function: its file (or its module).
fn location(row_file: Option<&str>, row_module: Option<&str>, group: Group) -> String {
    match group {
        Group::Function => row_file.or(row_module).unwrap_or("").to_owned(),
        Group::Line | Group::Module => String::new(),
    }
}

/// The narrowest a cut name or file column gets.
const MIN_TEXT_WIDTH: usize = 16;

/// `cell` cut to `width` characters with a visible `…`: its end cut (a name), or its start (a
/// file path, whose end says most).
fn cut(cell: &str, width: usize, keep_end: bool) -> String {
    let n = cell.chars().count();
    if n <= width {
        return cell.to_owned();
    }
    let keep = width.saturating_sub(1);
    if keep_end {
        let mut s = String::from("…");
        s.extend(cell.chars().skip(n - keep));
        s
    } else {
        let mut s: String = cell.chars().take(keep).collect();
        s.push('…');
        s
    }
}

/// The widths of the last two columns (the name and its file) that keep a table within `max`
/// characters: the file cut first to two fifths of the room, then the name; never below
/// [`MIN_TEXT_WIDTH`] (a table of many value columns on a narrow terminal may still wrap).
fn fit(widths: &[usize], max: usize) -> Option<(usize, usize)> {
    let [values @ .., name, file] = widths else {
        return None;
    };
    let fixed: usize = values.iter().map(|w| w + 2).sum();
    let room = max.saturating_sub(fixed);
    let sep = if *file > 0 { 2 } else { 0 };
    if name + sep + file <= room {
        return None;
    }
    let room = room.saturating_sub(sep);
    let file_w = if *file == 0 {
        0
    } else {
        (*file).min(
            room.saturating_sub(*name)
                .max(room * 2 / 5)
                .max(MIN_TEXT_WIDTH),
        )
    };
    let name_w = (*name).min(room.saturating_sub(file_w).max(MIN_TEXT_WIDTH));
    Some((name_w, file_w))
}

/// [`write_table`] within `max` characters a line when given: the second-to-last column (names)
/// and the last (files) cut with a visible `…`, the value columns whole.
fn write_table_within(
    out: &mut dyn Write,
    rows: &[Vec<String>],
    left: &[bool],
    max: Option<usize>,
) -> io::Result<()> {
    let widths = column_widths(rows);
    let columns = widths.len();
    let Some((name_w, file_w)) = max.and_then(|m| fit(&widths, m)) else {
        return write_table(out, rows, left);
    };
    let cut_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(c, cell)| match columns - c {
                    2 => cut(cell, name_w, false),
                    1 => cut(cell, file_w, true),
                    _ => cell.clone(),
                })
                .collect()
        })
        .collect();
    write_table(out, &cut_rows, left)
}

/// The width of each column of `rows`, in characters: its widest cell.
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Writes `rows` (each a list of cells) with right-aligned value columns and left-aligned text
/// columns (`left[i]`), two spaces apart, without trailing blanks.
fn write_table(out: &mut dyn Write, rows: &[Vec<String>], left: &[bool]) -> io::Result<()> {
    let widths = column_widths(rows);
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - cell.chars().count();
            if left.get(c).copied().unwrap_or(false) {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

/// What a JSON row names: the group's name and the frame fields it was grouped by. `top` and
/// `diff` rows start with it.
#[derive(Debug, Serialize)]
struct JsonIdentity<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    function: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    module: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address: Option<u64>,
}

impl<'a> JsonIdentity<'a> {
    fn new(
        name: &'a str,
        function: &'a Option<String>,
        file: &'a Option<String>,
        line: Option<u32>,
        module: &'a Option<String>,
        address: Option<u64>,
    ) -> Self {
        JsonIdentity {
            name,
            function: function.as_deref(),
            file: file.as_deref(),
            line,
            module: module.as_deref(),
            address,
        }
    }
}

/// One row of `top --json`.
#[derive(Debug, Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    identity: JsonIdentity<'a>,
    #[serde(rename = "self")]
    self_value: f64,
    inclusive: Option<f64>,
    calls: Option<f64>,
    /// The row's self value over the total self value (0 when the total is 0).
    self_share: f64,
    metric: &'a str,
    unit: &'a str,
}

impl<'a> JsonRow<'a> {
    fn new(row: &'a Row, total: f64) -> JsonRow<'a> {
        JsonRow {
            identity: JsonIdentity::new(
                &row.name,
                &row.function,
                &row.file,
                row.line,
                &row.module,
                row.address,
            ),
            self_value: row.self_value,
            inclusive: row.inclusive,
            calls: row.calls,
            self_share: if total == 0.0 {
                0.0
            } else {
                row.self_value / total
            },
            metric: &row.value_type,
            unit: &row.unit,
        }
    }
}

/// Prints `top`'s table (or its JSON array).
pub(crate) fn write_top(
    out: &mut dyn Write,
    profile: &Profile,
    args: &QueryArgs,
    table: &Table,
    json: bool,
) -> io::Result<()> {
    let total = table.total.self_value;
    if json {
        let rows: Vec<JsonRow<'_>> = table.rows.iter().map(|r| JsonRow::new(r, total)).collect();
        serde_json::to_writer_pretty(&mut *out, &rows).map_err(io::Error::other)?;
        return writeln!(out);
    }
    let largest = table.total.inclusive.unwrap_or(total).max(total).max(
        table
            .rows
            .iter()
            .map(|r| r.inclusive.unwrap_or(0.0))
            .fold(0.0, f64::max),
    );
    let display = Display::new(profile, &table.value_type, largest);
    let mut heading = format!(
        "metric {} ({}), by {}, grouped by {}",
        table.value_type,
        table.unit,
        args.order_name(),
        args.group_name()
    );
    if let Some(only) = args.only() {
        heading.push_str(&format!(", {only}"));
    }
    if table.contexts > 1 {
        let how = if args.mean { "mean of" } else { "sum of" };
        heading.push_str(&format!(", {how} {} contexts", table.contexts));
    }
    writeln!(out, "{heading}")?;
    let has_calls = table.rows.iter().any(|r| r.calls.is_some());
    let mut rows = vec![{
        let mut h = vec![
            "self".to_owned(),
            "%".to_owned(),
            "inclusive".to_owned(),
            "%".to_owned(),
        ];
        if has_calls {
            h.push("calls".to_owned());
        }
        h.push("name".to_owned());
        h.push(
            if args.group == Group::Function {
                "file"
            } else {
                ""
            }
            .to_owned(),
        );
        h
    }];
    for r in &table.rows {
        let mut cells = vec![
            display.show(r.self_value),
            percent(r.self_value, total),
            r.inclusive.map(|v| display.show(v)).unwrap_or_default(),
            r.inclusive.map(|v| percent(v, total)).unwrap_or_default(),
        ];
        if has_calls {
            cells.push(r.calls.map(|c| grouped(c, 0)).unwrap_or_default());
        }
        cells.push(args.shown_name(&r.name));
        cells.push(location(r.file.as_deref(), r.module.as_deref(), args.group));
        rows.push(cells);
    }
    let mut total_cells = vec![
        display.show(total),
        percent(total, total),
        table
            .total
            .inclusive
            .map(|v| display.show(v))
            .unwrap_or_default(),
        String::new(),
    ];
    if has_calls {
        total_cells.push(String::new());
    }
    total_cells.push("total".to_owned());
    rows.push(total_cells);
    let mut left = vec![false; 4 + usize::from(has_calls)];
    left.extend([true, true]);
    write_table_within(out, &rows, &left, args.width())
}

/// One side of a `diff --json` row.
#[derive(Debug, Serialize)]
struct JsonValues {
    #[serde(rename = "self")]
    self_value: f64,
    inclusive: Option<f64>,
    calls: Option<f64>,
}

/// One row of `diff --json`.
#[derive(Debug, Serialize)]
struct JsonDiffRow<'a> {
    #[serde(flatten)]
    identity: JsonIdentity<'a>,
    base: Option<JsonValues>,
    new: Option<JsonValues>,
    self_change: f64,
    inclusive_change: Option<f64>,
    self_relative: Option<f64>,
    inclusive_relative: Option<f64>,
    metric: &'a str,
    unit: &'a str,
}

impl<'a> JsonDiffRow<'a> {
    fn new(row: &'a DiffRow, diff: &'a Diff) -> JsonDiffRow<'a> {
        let values = |v: &profcodec_profile::Values| JsonValues {
            self_value: v.self_value,
            inclusive: v.inclusive,
            calls: v.calls,
        };
        JsonDiffRow {
            identity: JsonIdentity::new(
                &row.name,
                &row.function,
                &row.file,
                row.line,
                &row.module,
                row.address,
            ),
            base: row.base.as_ref().map(values),
            new: row.new.as_ref().map(values),
            self_change: row.self_change,
            inclusive_change: row.inclusive_change,
            self_relative: row.self_relative,
            inclusive_relative: row.inclusive_relative,
            metric: &diff.value_type,
            unit: &diff.unit,
        }
    }
}

/// Prints `diff`'s table (or its JSON array): for the ordering value, both sides, the change
/// and the relative change.
pub(crate) fn write_diff(
    out: &mut dyn Write,
    profile: &Profile,
    args: &QueryArgs,
    diff: &Diff,
    json: bool,
) -> io::Result<()> {
    if json {
        let rows: Vec<JsonDiffRow<'_>> = diff
            .rows
            .iter()
            .map(|r| JsonDiffRow::new(r, diff))
            .collect();
        serde_json::to_writer_pretty(&mut *out, &rows).map_err(io::Error::other)?;
        return writeln!(out);
    }
    let inclusive = args.by == By::Inclusive;
    let pick = |v: &profcodec_profile::Values| {
        if inclusive {
            v.inclusive.unwrap_or(v.self_value)
        } else {
            v.self_value
        }
    };
    let total = |t: &profcodec_profile::Total| {
        if inclusive {
            t.inclusive.unwrap_or(t.self_value)
        } else {
            t.self_value
        }
    };
    let (base_total, new_total) = (total(&diff.base_total), total(&diff.new_total));
    let display = Display::new(
        profile,
        &diff.value_type,
        base_total.abs().max(new_total.abs()),
    );
    let mut heading = format!(
        "metric {} ({}), {} values, grouped by {}",
        diff.value_type,
        diff.unit,
        args.order_name(),
        args.group_name()
    );
    if let Some(only) = args.only() {
        heading.push_str(&format!(", {only}"));
    }
    writeln!(out, "{heading}")?;
    let mut rows = vec![vec![
        "base".to_owned(),
        "new".to_owned(),
        "change".to_owned(),
        "%".to_owned(),
        "name".to_owned(),
        if args.group == Group::Function {
            "file"
        } else {
            ""
        }
        .to_owned(),
    ]];
    for r in &diff.rows {
        let (change, relative) = if inclusive {
            (
                r.inclusive_change.unwrap_or(r.self_change),
                r.inclusive_relative,
            )
        } else {
            (r.self_change, r.self_relative)
        };
        rows.push(vec![
            r.base
                .as_ref()
                .map(|v| display.show(pick(v)))
                .unwrap_or_else(|| "-".to_owned()),
            r.new
                .as_ref()
                .map(|v| display.show(pick(v)))
                .unwrap_or_else(|| "-".to_owned()),
            display.show_signed(change),
            if change == 0.0 {
                "0.0%".to_owned()
            } else {
                signed_percent(relative)
            },
            args.shown_name(&r.name),
            location(r.file.as_deref(), r.module.as_deref(), args.group),
        ]);
    }
    let change = new_total - base_total;
    rows.push(vec![
        display.show(base_total),
        display.show(new_total),
        display.show_signed(change),
        if change == 0.0 {
            "0.0%".to_owned()
        } else {
            signed_percent((base_total != 0.0).then(|| change / base_total))
        },
        "total".to_owned(),
        String::new(),
    ]);
    write_table_within(
        out,
        &rows,
        &[false, false, false, false, true, true],
        args.width(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tables_are_cut_with_a_mark() {
        let long = "n".repeat(300);
        let rows = vec![
            vec!["self".to_owned(), "name".to_owned(), "file".to_owned()],
            vec![
                "1".to_owned(),
                long,
                format!("/very/long/{}/f.c", "d".repeat(100)),
            ],
        ];
        let mut out = Vec::new();
        write_table_within(&mut out, &rows, &[false, true, true], Some(80)).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        assert!(text.contains("n…"), "{text}");
        // A path keeps its end: the file name, after a mark where its start was cut.
        assert!(text.contains("…dd") && text.contains("d/f.c"), "{text}");
        assert!(!text.contains("/very/long"), "{text}");
    }

    #[test]
    fn tables_align_values_right_and_names_left() {
        let rows = vec![
            vec!["self".to_owned(), "name".to_owned()],
            vec!["1,000".to_owned(), "a".to_owned()],
            vec!["5".to_owned(), "longer".to_owned()],
        ];
        let mut out = Vec::new();
        write_table(&mut out, &rows, &[false, true]).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out),
            " self  name\n1,000  a\n    5  longer\n"
        );
    }
}
