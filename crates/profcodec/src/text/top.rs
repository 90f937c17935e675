//! The tables of `top` and `diff` (feature `profile`), as text for people and as JSON rows.
//!
//! Text output is an aligned table: values in human units (time in ns, µs, ms or s, one unit per
//! column chosen from the total; counts with thousands separators), each value's share of the
//! total, and a total line. The JSON forms are arrays of full-precision values in the model's
//! own unit (schemas in the CLI README).
//!
//! Names, files and metric names come from the input: the text tables print them escaped for
//! the terminal ([`crate::terminal`]), and the JSON forms escape C1 and bidi controls as
//! `\uXXXX` besides what JSON escapes ([`profcodec_common::json`]).

use std::collections::HashMap;
use std::io::{self, Write};

use profcodec_profile::{
    Diff, DiffRow, GroupBy, Order, PATH_SEPARATOR, Profile, Quantity, Row, ShownName, Table, Total,
    Unit, Values, distinct_short_names,
};
use serde::{Serialize, Serializer};

use super::grouped;
use super::table::write_table_cut;
use crate::terminal::escape;

/// How the text tables of [`write_top`] and [`write_diff`] are headed and shown: what the query
/// asked (its order, grouping, contexts and how they were combined), whether names are shortened,
/// and the width a table is cut to.
///
/// ```
/// use profcodec::profile::{GroupBy, Order};
/// let options = profcodec::text::TableOptions::new()
///     .order(Order::Inclusive)
///     .group(GroupBy::Line)
///     .only("thread 3")
///     .width(Some(120));
/// assert_eq!(options.group, GroupBy::Line);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct TableOptions {
    /// The ordering value of the query: `diff` shows the self or the inclusive values by it.
    pub order: Order,
    /// The query's grouping: function and call-path rows show their (last) function's file,
    /// and their names shortened; call paths are cut at their start to fit.
    pub group: GroupBy,
    /// The contexts the query was limited to, in words (`thread 3`, `rank 0`, `process 4711`),
    /// named in the heading; `None` for the whole program.
    pub only: Option<String>,
    /// Whether the query averaged the contexts (`mean of`) rather than summing them (`sum of`).
    pub mean: bool,
    /// Names whole: otherwise function names show C++ template arguments and parameter lists as
    /// `<…>` and `(…)`, but for the argument that tells two alike apart, or their file and
    /// line ([`distinct_short_names`]).
    pub full_names: bool,
    /// The most characters a line takes (names and files cut with a visible `…`); `None` for
    /// lines as long as their cells.
    pub width: Option<usize>,
}

impl TableOptions {
    /// Self order, grouped by function, the whole program summed, short names, uncut lines.
    pub fn new() -> Self {
        Self::default()
    }

    /// These options with the ordering value `order`.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// These options with the grouping `group`.
    pub fn group(mut self, group: GroupBy) -> Self {
        self.group = group;
        self
    }

    /// These options naming the contexts the query was limited to (`thread 3`).
    pub fn only(mut self, only: impl Into<String>) -> Self {
        self.only = Some(only.into());
        self
    }

    /// These options saying whether contexts were averaged.
    pub fn mean(mut self, mean: bool) -> Self {
        self.mean = mean;
        self
    }

    /// These options showing names whole or shortened.
    pub fn full_names(mut self, full_names: bool) -> Self {
        self.full_names = full_names;
        self
    }

    /// These options cutting lines to `width` characters (`None`: uncut).
    pub fn width(mut self, width: Option<usize>) -> Self {
        self.width = width;
        self
    }

    /// The rows' names as the table shows them: shortened (unless `full_names`) when rows are
    /// functions, or call paths (each function shortened), and made distinct where two
    /// functions would look alike ([`distinct_short_names`]); other names as they are.
    fn shown_names<'a>(&self, rows: impl Iterator<Item = RowName<'a>>) -> Vec<String> {
        let rows: Vec<RowName<'a>> = rows.collect();
        match self.group {
            _ if self.full_names => rows.iter().map(|r| r.name.to_owned()).collect(),
            GroupBy::Function => {
                let shown: Vec<ShownName<'_>> = rows
                    .iter()
                    .map(|r| ShownName::new(r.name).at(r.file, r.line))
                    .collect();
                distinct_short_names(&shown)
            }
            GroupBy::Path => {
                // Each function of the shown paths once, so that two functions alike when
                // shortened are told apart wherever they appear.
                let mut index: HashMap<&str, usize> = HashMap::new();
                let mut functions: Vec<ShownName<'_>> = Vec::new();
                for f in rows.iter().filter_map(|r| r.path).flatten() {
                    index.entry(f.as_str()).or_insert_with(|| {
                        functions.push(ShownName::new(f));
                        functions.len() - 1
                    });
                }
                let short = distinct_short_names(&functions);
                rows.iter()
                    .map(|r| match r.path {
                        Some(path) => path
                            .iter()
                            .map(|f| short[index[f.as_str()]].as_str())
                            .collect::<Vec<_>>()
                            .join(PATH_SEPARATOR),
                        None => r.name.to_owned(),
                    })
                    .collect()
            }
            GroupBy::Line | GroupBy::Module => rows.iter().map(|r| r.name.to_owned()).collect(),
        }
    }

    fn order_name(&self) -> &'static str {
        match self.order {
            Order::SelfValue => "self",
            Order::Inclusive => "inclusive",
        }
    }

    fn group_name(&self) -> &'static str {
        match self.group {
            GroupBy::Function => "function",
            GroupBy::Line => "line",
            GroupBy::Module => "module",
            GroupBy::Path => "call path",
        }
    }
}

/// What [`TableOptions::shown_names`] needs of a row.
struct RowName<'a> {
    name: &'a str,
    path: Option<&'a [String]>,
    file: Option<&'a str>,
    line: Option<u32>,
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
    /// The unit the cells are shown in, for a table's heading: the shown time unit in words
    /// (the metric's own unit may be another: microseconds shown as ms or s), else `unit`.
    fn unit_name<'a>(&self, unit: &'a str) -> &'a str {
        match self.suffix {
            "s" => "seconds",
            "ms" => "milliseconds",
            "µs" => "microseconds",
            "ns" => "nanoseconds",
            _ => unit,
        }
    }
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
fn location(row_file: Option<&str>, row_module: Option<&str>, group: GroupBy) -> String {
    match group {
        GroupBy::Function | GroupBy::Path => row_file.or(row_module).unwrap_or("").to_owned(),
        GroupBy::Line | GroupBy::Module => String::new(),
    }
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
    /// A call-path row's functions, root first.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a [String]>,
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
            path: None,
        }
    }

    /// This identity with a call-path row's path.
    fn path(mut self, path: &'a Option<Vec<String>>) -> Self {
        self.path = path.as_deref();
        self
    }
}

/// A value of a JSON row: a count that is whole is written as an integer (`3000`, not
/// `3000.0`); anything else (a time, a mean that is not whole) as a number with a fraction.
#[derive(Debug, Clone, Copy)]
struct JsonValue {
    value: f64,
    count: bool,
}

/// The largest integer an `f64` holds exactly: above it, a whole value is not known to the unit.
const EXACT_INTEGER: f64 = 9_007_199_254_740_992.0;

impl JsonValue {
    fn new(value: f64, count: bool) -> JsonValue {
        JsonValue { value, count }
    }

    /// The values of a metric in `unit` (a [`Table`]'s): counts where the unit counts.
    fn of_unit(unit: &str) -> impl Fn(f64) -> JsonValue {
        let count = Quantity::of_unit_name(unit) == Quantity::Count;
        move |value| JsonValue::new(value, count)
    }

    /// A call count.
    fn calls(value: f64) -> JsonValue {
        JsonValue::new(value, true)
    }
}

impl Serialize for JsonValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let x = self.value;
        if self.count && x.fract() == 0.0 && x.abs() <= EXACT_INTEGER {
            // Whole and within ±2^53: the conversion is exact.
            serializer.serialize_i64(x as i64)
        } else {
            serializer.serialize_f64(x)
        }
    }
}

/// One row of `top --json`.
#[derive(Debug, Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    identity: JsonIdentity<'a>,
    #[serde(rename = "self")]
    self_value: JsonValue,
    inclusive: Option<JsonValue>,
    calls: Option<JsonValue>,
    /// How many times a line's statements ran, where the profile counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    statements: Option<JsonValue>,
    /// The row's self value over the total self value (0 when the total is 0).
    self_share: f64,
    metric: &'a str,
    unit: &'a str,
}

impl<'a> JsonRow<'a> {
    fn new(row: &'a Row, total: f64) -> JsonRow<'a> {
        let value = JsonValue::of_unit(&row.unit);
        JsonRow {
            identity: JsonIdentity::new(
                &row.name,
                &row.function,
                &row.file,
                row.line,
                &row.module,
                row.address,
            )
            .path(&row.path),
            self_value: value(row.self_value),
            inclusive: row.inclusive.map(&value),
            calls: row.calls.map(JsonValue::calls),
            statements: row.statements.map(JsonValue::calls),
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

/// Writes `top`'s JSON form of `table`: a pretty-printed array with one object per row (its
/// name and frame fields, `self`, `inclusive`, `calls`, `self_share`, `metric`, `unit`; a
/// call-path row's `path`, root first; a line's `statements` where the profile counts them),
/// then a newline.
pub fn write_top_json(out: &mut dyn Write, table: &Table) -> io::Result<()> {
    let total = table.total.self_value;
    let rows: Vec<JsonRow<'_>> = table.rows.iter().map(|r| JsonRow::new(r, total)).collect();
    profcodec_common::json::to_writer(&mut *out, &rows, true).map_err(io::Error::other)?;
    writeln!(out)
}

/// Writes `top`'s text table of `table`, a query's answer over `profile`: a heading (metric,
/// order, grouping, contexts), one line per row with its self value and share of the total
/// self value, its inclusive value and share where the rows have them, its calls where any row
/// counts some, a line's statements where the profile counts them, its name and (grouped by
/// function or call path) its file, and a total line. Rows by line whose total differs from
/// the total by function ([`Total::functions`]) get a note under the table saying why.
pub fn write_top(
    out: &mut dyn Write,
    profile: &Profile,
    table: &Table,
    options: &TableOptions,
) -> io::Result<()> {
    let total = table.total.self_value;
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
        display.unit_name(&table.unit),
        options.order_name(),
        options.group_name()
    );
    if let Some(only) = &options.only {
        heading.push_str(&format!(", {only}"));
    }
    if table.contexts > 1 || options.mean {
        let how = if options.mean { "mean of" } else { "sum of" };
        let contexts = crate::words::count_of(table.contexts, "context", "contexts");
        heading.push_str(&format!(", {how} {contexts}"));
    }
    writeln!(out, "{}", escape(&heading))?;
    // Columns no row fills are left out: flat line values have no inclusive value, and
    // lines are not called.
    let has_inclusive =
        table.total.inclusive.is_some() || table.rows.iter().any(|r| r.inclusive.is_some());
    let has_calls = table.rows.iter().any(|r| r.calls.is_some_and(|c| c != 0.0));
    let has_statements = table.rows.iter().any(|r| r.statements.is_some());
    let file_column = matches!(options.group, GroupBy::Function | GroupBy::Path);
    let mut header = vec!["self".to_owned(), "%".to_owned()];
    if has_inclusive {
        header.extend(["inclusive".to_owned(), "%".to_owned()]);
    }
    if has_calls {
        header.push("calls".to_owned());
    }
    if has_statements {
        header.push("statements".to_owned());
    }
    header.push("name".to_owned());
    header.push(if file_column { "file" } else { "" }.to_owned());
    let values = header.len() - 2;
    let mut rows = vec![header];
    let names = options.shown_names(table.rows.iter().map(|r| RowName {
        name: &r.name,
        path: r.path.as_deref(),
        file: r.file.as_deref(),
        line: r.line,
    }));
    for (r, name) in table.rows.iter().zip(names) {
        let mut cells = vec![display.show(r.self_value), percent(r.self_value, total)];
        if has_inclusive {
            cells.push(r.inclusive.map(|v| display.show(v)).unwrap_or_default());
            cells.push(r.inclusive.map(|v| percent(v, total)).unwrap_or_default());
        }
        if has_calls {
            cells.push(r.calls.map(|c| grouped(c, 0)).unwrap_or_default());
        }
        if has_statements {
            cells.push(r.statements.map(|c| grouped(c, 0)).unwrap_or_default());
        }
        cells.push(name);
        cells.push(location(
            r.file.as_deref(),
            r.module.as_deref(),
            options.group,
        ));
        rows.push(cells);
    }
    let mut total_cells = vec![display.show(total), percent(total, total)];
    if has_inclusive {
        total_cells.push(
            table
                .total
                .inclusive
                .map(|v| display.show(v))
                .unwrap_or_default(),
        );
        total_cells.push(String::new());
    }
    total_cells.extend(std::iter::repeat_n(
        String::new(),
        values - total_cells.len(),
    ));
    total_cells.push("total".to_owned());
    rows.push(total_cells);
    let mut left = vec![false; values];
    left.extend([true, true]);
    write_table_cut(
        out,
        &rows,
        &left,
        options.width,
        options.group == GroupBy::Path,
    )?;
    if let Some(note) = line_total_note(&display, &table.total) {
        writeln!(out, "{note}")?;
    }
    Ok(())
}

/// The note under a table by line whose total is not the total by function, saying why.
fn line_total_note(display: &Display, total: &Total) -> Option<String> {
    let functions = total.functions?;
    let lines = total.self_value;
    // Totals equal but for rounding need no note.
    if (lines - functions).abs() <= 1e-6 * lines.abs().max(functions.abs()) {
        return None;
    }
    // Nor does a difference the table's unit shows as zero (`0.000 s less`).
    let difference_shown = display.show((lines - functions).abs());
    if !difference_shown
        .bytes()
        .any(|b| b.is_ascii_digit() && b != b'0')
    {
        return None;
    }
    let (difference, why) = if lines > functions {
        (
            "less",
            "statements outside any function (a script's top-level code) have lines but no \
             function",
        )
    } else {
        ("more", "the format times functions apart from their lines")
    };
    Some(format!(
        "note: the total by function is {}, {} {difference}: {why}",
        display.show(functions),
        difference_shown
    ))
}

/// One side of a `diff --json` row.
#[derive(Debug, Serialize)]
struct JsonValues {
    #[serde(rename = "self")]
    self_value: JsonValue,
    inclusive: Option<JsonValue>,
    calls: Option<JsonValue>,
}

/// One row of `diff --json`.
#[derive(Debug, Serialize)]
struct JsonDiffRow<'a> {
    #[serde(flatten)]
    identity: JsonIdentity<'a>,
    base: Option<JsonValues>,
    new: Option<JsonValues>,
    self_change: JsonValue,
    inclusive_change: Option<JsonValue>,
    self_relative: Option<f64>,
    inclusive_relative: Option<f64>,
    metric: &'a str,
    unit: &'a str,
}

impl<'a> JsonDiffRow<'a> {
    fn new(row: &'a DiffRow, diff: &'a Diff) -> JsonDiffRow<'a> {
        let value = JsonValue::of_unit(&diff.unit);
        let values = |v: &Values| JsonValues {
            self_value: value(v.self_value),
            inclusive: v.inclusive.map(&value),
            calls: v.calls.map(JsonValue::calls),
        };
        JsonDiffRow {
            identity: JsonIdentity::new(
                &row.name,
                &row.function,
                &row.file,
                row.line,
                &row.module,
                row.address,
            )
            .path(&row.path),
            base: row.base.as_ref().map(values),
            new: row.new.as_ref().map(values),
            self_change: value(row.self_change),
            inclusive_change: row.inclusive_change.map(&value),
            self_relative: row.self_relative,
            inclusive_relative: row.inclusive_relative,
            metric: &diff.value_type,
            unit: &diff.unit,
        }
    }
}

/// Writes `diff`'s JSON form: a pretty-printed array with one object per row (its name and
/// frame fields, the `base` and `new` values, the changes and relative changes of the self and
/// inclusive values, `metric`, `unit`), then a newline.
pub fn write_diff_json(out: &mut dyn Write, diff: &Diff) -> io::Result<()> {
    let rows: Vec<JsonDiffRow<'_>> = diff
        .rows
        .iter()
        .map(|r| JsonDiffRow::new(r, diff))
        .collect();
    profcodec_common::json::to_writer(&mut *out, &rows, true).map_err(io::Error::other)?;
    writeln!(out)
}

/// Writes `diff`'s text table, with `profile` (the base) naming the metric's unit: for the
/// ordering value of `options`, both sides, the change and the relative change of each row, and
/// a total line.
pub fn write_diff(
    out: &mut dyn Write,
    profile: &Profile,
    diff: &Diff,
    options: &TableOptions,
) -> io::Result<()> {
    let inclusive = options.order == Order::Inclusive;
    let pick = |v: &Values| {
        if inclusive {
            v.inclusive.unwrap_or(v.self_value)
        } else {
            v.self_value
        }
    };
    let total = |t: &Total| {
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
        display.unit_name(&diff.unit),
        options.order_name(),
        options.group_name()
    );
    if let Some(only) = &options.only {
        heading.push_str(&format!(", {only}"));
    }
    writeln!(out, "{}", escape(&heading))?;
    let mut rows = vec![vec![
        "base".to_owned(),
        "new".to_owned(),
        "change".to_owned(),
        "%".to_owned(),
        "name".to_owned(),
        if matches!(options.group, GroupBy::Function | GroupBy::Path) {
            "file"
        } else {
            ""
        }
        .to_owned(),
    ]];
    let names = options.shown_names(diff.rows.iter().map(|r| RowName {
        name: &r.name,
        path: r.path.as_deref(),
        file: r.file.as_deref(),
        line: r.line,
    }));
    for (r, name) in diff.rows.iter().zip(names) {
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
            name,
            location(r.file.as_deref(), r.module.as_deref(), options.group),
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
    write_table_cut(
        out,
        &rows,
        &[false, false, false, false, true, true],
        options.width,
        options.group == GroupBy::Path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Totals whose difference the table's unit shows as zero get no note (`0.000 s less`);
    /// a difference it shows does.
    #[test]
    fn a_difference_shown_as_zero_has_no_note() {
        let seconds = Display {
            scale: 1.0,
            suffix: "s",
            decimals: 3,
        };
        let total = |lines: f64, functions: f64| Total {
            self_value: lines,
            inclusive: None,
            functions: Some(functions),
        };
        assert_eq!(line_total_note(&seconds, &total(10.0, 10.0 - 1e-4)), None);
        let note = line_total_note(&seconds, &total(10.0, 9.5)).unwrap_or_default();
        assert!(note.contains("0.500 s less"), "{note}");
    }

    /// The heading names the unit the cells are shown in, not the metric's own.
    #[test]
    fn headings_name_the_unit_of_the_cells() {
        let ms = Display {
            scale: 1e3,
            suffix: "ms",
            decimals: 1,
        };
        assert_eq!(ms.unit_name("microseconds"), "milliseconds");
        let count = Display {
            scale: 1.0,
            suffix: "",
            decimals: 0,
        };
        assert_eq!(count.unit_name("samples"), "samples");
    }
}
