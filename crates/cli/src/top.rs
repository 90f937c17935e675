//! `profcodec top` and `profcodec diff`: the query flags, the query and table options they make,
//! and the terminal's width. The tables themselves are `profcodec::text`'s (`write_top`,
//! `write_diff` and their JSON forms).

use std::io::{self, IsTerminal};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use profcodec::query::TopOptions;
use profcodec::text::TableOptions;
use profcodec_profile::{Amount, DiffOptions, GroupBy, Order, Query};

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
    /// One row per call path (calling context): the functions from the root to the row's,
    /// leaf last, for formats with a call tree.
    #[value(alias = "context")]
    Path,
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
    /// Group rows by function, source line, module (package) or call path (`context`).
    #[arg(long, value_enum, default_value = "function")]
    group: Group,
    #[command(flatten)]
    pub(crate) filter: crate::filter::FilterArgs,
    /// Only these processes, by pid (StatProfiler sessions, merged per-process files); repeat
    /// or separate with commas.
    #[arg(long, value_name = "PID", value_delimiter = ',')]
    process: Vec<u64>,
    /// Average over the threads, ranks or processes read instead of summing them: those the
    /// filters keep, else every one measured (never a summary); the heading says over how many.
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
    #[arg(short, long, value_name = "N", default_value_t = 0, help = JOBS)]
    jobs: usize,
}

/// What `--jobs` (of `top`, `diff` and `convert`) does.
pub(crate) const JOBS: &str = "How many inputs are decoded at once, each on a thread; 0: \
    RAYON_NUM_THREADS when it is set, else one per core";

/// The minimum change of `diff`'s rows.
#[derive(Debug, Clone, Args)]
pub(crate) struct ChangeArgs {
    /// List only rows that change by at least this much, by the ordering value: a number in the
    /// metric's unit (as in --json), or a time such as 0.1ms, 250us, 2s.
    #[arg(long, value_name = "ABS")]
    min_change: Option<Amount>,
    /// List only rows that change by at least this percentage of their base value (a row new
    /// in one profile always does).
    #[arg(long, value_name = "PCT", value_parser = percent)]
    min_relative: Option<f64>,
}

/// A percentage (`5`, `5%`) as a fraction.
fn percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(pct) if pct.is_finite() && pct >= 0.0 => Ok(pct / 100.0),
        _ => Err(format!("not a percentage: {text:?}")),
    }
}

impl ChangeArgs {
    /// The model's options for these flags.
    pub(crate) fn options(&self) -> DiffOptions {
        let mut options = DiffOptions::new();
        options.min_change = self.min_change;
        options.min_relative = self.min_relative;
        options
    }
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
/// error for each load module that stays unresolved, and why, and for each structure file
/// (`structs/*.hpcstruct`) that was not used. A line is said once, though a report reads a
/// measurement twice (its profile and its timeline).
pub(crate) fn use_binary_path(dirs: &[PathBuf]) {
    profcodec::symbols::set_binary_path(dirs.iter().cloned());
    let said = std::sync::Mutex::new(std::collections::HashSet::new());
    let say = move |line: String| {
        let new = said.lock().map_or(true, |mut s| s.insert(line.clone()));
        if new {
            profcodec_cli::failure::say(&line);
        }
    };
    profcodec::symbols::set_reporter(move |report| {
        for warning in profcodec::symbols::warnings(report, "--binary-path DIR") {
            say(format!("profcodec: {warning}"));
        }
    });
}

impl QueryArgs {
    /// Sets up symbolization for `--binary-path` ([`use_binary_path`]).
    pub(crate) fn use_binary_path(&self) {
        use_binary_path(&self.binary_path);
    }

    /// How the inputs are read (`--jobs`).
    pub(crate) fn merge_options(&self) -> profcodec::MergeOptions {
        profcodec::MergeOptions::new().jobs(self.jobs)
    }

    /// The options of `top` and `diff` these flags make.
    fn options(&self) -> TopOptions {
        let mut options = TopOptions::new();
        options.order = match self.by {
            By::SelfValue => Order::SelfValue,
            By::Inclusive => Order::Inclusive,
        };
        options.group = match self.group {
            Group::Function => GroupBy::Function,
            Group::Line => GroupBy::Line,
            Group::Module => GroupBy::Module,
            Group::Path => GroupBy::Path,
        };
        options.metric.clone_from(&self.metric);
        options.limit = (self.rows > 0).then_some(self.rows);
        options.selection = self
            .filter
            .selection()
            .processes(self.process.iter().copied());
        options.mean = self.mean;
        options.full_names = self.full_names;
        options
    }

    /// The model's query for these flags.
    pub(crate) fn query(&self) -> Query {
        self.options().query()
    }

    /// How `top` and `diff` show their tables for these flags: cut to the terminal's width
    /// ([`table_width`]) unless `--full-names`.
    pub(crate) fn table_options(&self) -> TableOptions {
        let options = self.options().table_options();
        options.width((!self.full_names).then(table_width))
    }
}

/// Says once, on standard error, how to read a table whose rows are bare addresses (hpcrun
/// measurements whose binaries were not found): one row per address says little, and a
/// grouping by module, or the binaries, say more.
pub(crate) fn hint_unsymbolized(table: &profcodec_profile::Table) {
    let addresses = table
        .rows
        .iter()
        .filter(|r| r.function.is_none() && r.address.is_some() && r.path.is_none())
        .count();
    if addresses == 0 {
        return;
    }
    let rows = profcodec::words::count_of(table.rows.len(), "row", "rows");
    profcodec_cli::failure::say(format_args!(
        "profcodec: {addresses} of {rows} are addresses without a symbol: --group module \
         sums them by load module, --binary-path DIR names them from the binaries"
    ));
}

/// Says once, on standard error, what a table left out of its rows because it is not code that
/// ran (EasyProfiler's values and events: [`profcodec_profile::FrameKind::is_marker`]), and
/// which verb shows it. `sides` names each profile's count (`""` for `top`'s one profile).
pub(crate) fn note_left_out(sides: &[(&str, profcodec_profile::LeftOut)]) {
    let said: Vec<String> = sides
        .iter()
        .filter(|(_, left_out)| !left_out.is_empty())
        .map(|(side, left_out)| format!("{left_out}{side}"))
        .collect();
    if said.is_empty() {
        return;
    }
    profcodec_cli::failure::say(format_args!(
        "profcodec: {} left out of the rows: they are counters and instants, not functions \
         (profcodec convert --to perfetto shows them on a timeline)",
        said.join(", ")
    ));
}
