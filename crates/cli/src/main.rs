//! The `profcodec` command line: argument parsing and output over the per-format glue in `ops`.
//!
//! Exit status: 0 success (a closed standard output, as under `| head`, ends quietly with 0), 1
//! an input is invalid, 2 usage error or unsupported format/operation, 3 the output could not
//! be written where asked ([`OUTPUT_FAILED`]), 124 a `sql --timeout` ran out, 130 interrupted (SIGINT, SIGTERM: the staging
//! of an output being written is removed first).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
mod convert;
mod external;
mod filter;
mod prof;
mod report;
mod top;

pub(crate) use profcodec::inspect::Error as OpError;
use profcodec::inspect::{Dump, DumpLayout, DumpOptions, RewriteOptions};
use profcodec::output::{OutputPath, Overwrite};
use profcodec::terminal::{escape, escape_display};
use profcodec_cli::failure::{Failure, note_stale_staging, say};
use profcodec_cli::inputs::expand_inputs;

/// Read, check, query and convert profiler files: HPCToolkit databases, hpcrun measurements,
/// Devel::NYTProf, EasyProfiler and Devel::StatProfiler.
#[derive(Debug, Parser)]
#[command(name = "profcodec", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print each file's format, version and counts.
    #[command(
        after_help = "Examples:\n  profcodec info nytprof.out\n  profcodec info --json db.d run.m"
    )]
    Info {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Files (or HPCToolkit database directories); `-` reads standard input.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Decode everything; exit 1 with the error and byte offset when a file is invalid.
    #[command(
        after_help = "Examples:\n  profcodec validate nytprof.out\n  profcodec validate --allow-trailing capture.prof db.d"
    )]
    Validate {
        /// Accept trailing bytes after the end of a stream (reported, but not a failure).
        #[arg(long)]
        allow_trailing: bool,
        /// Files (or HPCToolkit database directories); `-` reads standard input.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the full content of a file as a stream of flat JSON records (schemas in the CLI
    /// README).
    #[command(
        after_help = "Examples:\n  profcodec dump --format ndjson nytprof.out | head\n  profcodec dump --partial damaged.prof"
    )]
    Dump {
        /// Output layout: one JSON document, or newline-delimited JSON (one record a line).
        #[arg(long, value_enum, default_value = "json")]
        format: DumpFormat,
        /// Indent the JSON (the default on a terminal).
        #[arg(long)]
        pretty: bool,
        /// On damage, print what was decoded before it and end the document with an `error`
        /// record (the exit status is still 1).
        #[arg(long)]
        partial: bool,
        /// Accepted for compatibility: JSON is the default.
        #[arg(long, hide = true)]
        json: bool,
        /// The file (or HPCToolkit database directory); `-` reads standard input.
        file: PathBuf,
    },
    /// Decode a file and encode it again, atomically: the output appears only when complete.
    #[command(
        after_help = "Examples:\n  profcodec rewrite old.hpcrun new.hpcrun\n  profcodec rewrite --to 04.00 old.hpcrun new.hpcrun\n  profcodec rewrite --force db.d copy.d"
    )]
    Rewrite {
        /// Target format or version (for example `04.00` for hpcrun, `nytprof` for the Pynytprof
        /// layout); by default the input's own.
        #[arg(long)]
        to: Option<String>,
        /// Replace an existing output (a file, or a folder that is not empty) whole; nothing of
        /// the old content is kept or merged.
        #[arg(long)]
        force: bool,
        /// Input file or directory.
        input: PathBuf,
        /// Output file or directory; its parent folder must exist.
        output: PathBuf,
    },
    /// Merge profiles of one program (the runs of a test suite, a forked child's file) into
    /// one file of their own format that the format's tool reads: NYTProf, as `nytprofmerge`
    /// merges them. Written atomically: the output appears only when complete.
    #[command(
        after_help = "Examples:\n  profcodec merge -o merged.out before.out after.out\n  profcodec merge -o merged.out nytprof.out.* && nytprofhtml -f merged.out\n  profcodec merge --force -o suite.out profiles/"
    )]
    Merge {
        /// The merged file; its parent folder must exist.
        #[arg(short, long)]
        output: PathBuf,
        /// Replace an existing output file whole.
        #[arg(long)]
        force: bool,
        /// Input files, all of one format (a folder stands for the profiles in it).
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// The costliest functions, lines or modules, with self and inclusive values and a total;
    /// several inputs (per-rank or per-process files of one run) are merged into one profile.
    // `--depth` (a timeline's) is not in their help: both refuse it, in words.
    #[command(
        mut_arg("depth", |a| a.hide(true)),
        after_help = "Examples:\n  profcodec top nytprof.out\n  profcodec top -n 10 --by inclusive --metric CPUTIME db.d\n  profcodec top --group line --json nytprof.out"
    )]
    Top {
        #[command(flatten)]
        query: top::QueryArgs,
        /// Print a JSON array of rows instead of a table (schema in the CLI README).
        #[arg(long)]
        json: bool,
        /// Inputs (files, database or session folders, or a folder of profiles that stands for
        /// the profiles in it); several are merged; `-` reads standard input.
        #[arg(required = true)]
        inputs: Vec<PathBuf>,
    },
    /// Export a profile to a viewer's format (folded stacks, pprof, speedscope, callgrind,
    /// Firefox Profiler) or a timeline to a trace (Perfetto, Chrome JSON); several inputs are
    /// merged unless --split.
    #[command(
        after_help = "Examples:\n  profcodec convert --to folded nytprof.out | inferno-flamegraph > flame.svg\n  profcodec convert --to pprof -o cpu.pb.gz db.d && go tool pprof -top cpu.pb.gz\n  profcodec convert --to perfetto -o trace.perfetto-trace capture.prof"
    )]
    Convert(convert::ConvertArgs),
    /// Make an HPCToolkit database from hpcrun measurements, as HPCToolkit's hpcprof does.
    #[command(
        after_help = "Examples:\n  profcodec prof -o demo.d demo.m\n  profcodec prof --ignore-structs -j 2 -o run.d run.m"
    )]
    Prof(prof::ProfArgs),
    /// Export the inputs' tables (each format's, and the profile model's) as a Hive-partitioned
    /// Parquet dataset that DuckDB, Spark, Trino and DataFusion read (run by profcodec-sql).
    #[command(after_help = external::AFTER_HELP)]
    Export(external::Passed),
    /// Run a SQL query over the inputs' tables in an embedded DataFusion session (run by
    /// profcodec-sql).
    #[command(after_help = external::AFTER_HELP)]
    Sql(external::Passed),
    /// What changed between two profiles: rows matched by function (or line, or module), both
    /// values, the change and the relative change, largest change first.
    #[command(
        mut_arg("depth", |a| a.hide(true)),
        after_help = "Examples:\n  profcodec diff before.out after.out\n  profcodec diff --min-change 0.1ms --min-relative 5 before.out after.out\n  profcodec diff --by inclusive --json base.d new.d"
    )]
    Diff {
        #[command(flatten)]
        query: top::QueryArgs,
        #[command(flatten)]
        change: top::ChangeArgs,
        /// Print a JSON array of rows instead of a table (schema in the CLI README).
        #[arg(long)]
        json: bool,
        /// The profile compared against.
        base: PathBuf,
        /// The profile compared.
        new: PathBuf,
    },
    /// An HTML report (a folder with index.html that works offline): top functions, flame graph,
    /// callers and callees, source by line, timelines; --base adds a comparison.
    #[command(
        after_help = "Examples:\n  profcodec report -o report nytprof.out\n  profcodec report --base before.out -o changes after.out\n  profcodec report --source-root /build=. -o report db.d"
    )]
    Report(report::ReportArgs),
}

/// The layout of a dump (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum DumpFormat {
    /// One JSON document.
    Json,
    /// Newline-delimited JSON: one record a line.
    Ndjson,
}

impl From<DumpFormat> for DumpLayout {
    fn from(f: DumpFormat) -> DumpLayout {
        match f {
            DumpFormat::Json => DumpLayout::Json,
            DumpFormat::Ndjson => DumpLayout::Ndjson,
        }
    }
}

/// Opens `file` and runs `op` on it; an operation's error is prefixed with the path and the
/// detected format, so that even a rejected file says what it was taken for (an open error
/// already names the path).
fn open_and<T>(
    file: &std::path::Path,
    op: impl FnOnce(&profcodec::Opened) -> Result<T, OpError>,
) -> Result<T, Failure> {
    let opened = profcodec::open(file)?;
    let result = op(&opened);
    // A file cut while it was read (its lost pages read as zeros): that error, not the result.
    opened.check_intact()?;
    result.map_err(|e| failure_of(file, &opened, e))
}

/// `e` as a failure whose message names the file and the format it was taken for.
fn failure_of(file: &std::path::Path, opened: &profcodec::Opened, e: OpError) -> Failure {
    let mut f = Failure::from(e);
    f.message = format!("{}: {}: {}", file.display(), opened.format(), f.message);
    f
}

/// A query error: an unknown metric (the message lists the known ones), units that differ, or
/// a context filter that matches nothing are usage errors (exit status 2).
fn query_failure(e: profcodec_profile::QueryError) -> Failure {
    Failure {
        status: 2,
        message: e.to_string(),
    }
}

/// Refuses a `--thread`, `--rank` or `--process` that keeps no context of `profile` (read
/// from `inputs`), in the words of the model's `NoMatch`, which lists what it has.
fn check_contexts(
    profile: &profcodec_profile::Profile,
    query: &profcodec_profile::Query,
    inputs: &[impl AsRef<std::path::Path>],
    format: Option<profcodec::Format>,
) -> Result<(), Failure> {
    if let profcodec_profile::ContextFilter::Select(selection) = &query.contexts {
        selection
            .select(profile)
            .map_err(|e| filter::no_match(inputs, format, &e))?;
    }
    Ok(())
}

/// Inputs at least this large (or more than one input) get a progress bar on a terminal.
const PROGRESS_THRESHOLD: u64 = 64 << 20;

fn progress(files: &[PathBuf]) -> ProgressBar {
    let total: u64 = files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    if files.len() < 2 && total < PROGRESS_THRESHOLD {
        return ProgressBar::hidden();
    }
    // ProgressDrawTarget::stderr() draws nothing when stderr is not a terminal.
    let bar = ProgressBar::with_draw_target(Some(files.len() as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}") {
        bar.set_style(style);
    }
    bar
}

/// Runs `each` on every file under a progress bar. A file's failure is reported on stderr and
/// the others still run; the result carries the worst exit status seen.
fn for_each_file(
    files: &[PathBuf],
    mut each: impl FnMut(&std::path::Path, &ProgressBar) -> Result<(), Failure>,
) -> Result<(), Failure> {
    let bar = progress(files);
    let mut worst: Option<u8> = None;
    for file in files {
        bar.set_message(escape_display(&file.display()));
        if let Err(f) = each(file, &bar) {
            bar.suspend(|| say(&f.message));
            worst = worst.max(Some(f.status));
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    match worst {
        Some(status) => Err(Failure {
            status,
            message: String::new(),
        }),
        None => Ok(()),
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Info { json, files } => {
            let mut infos = Vec::new();
            let result = for_each_file(&files, |file, bar| {
                let info = open_and(file, profcodec::info)?;
                if json {
                    infos.push(serde_json::json!({"path": file, "info": info}));
                    return Ok(());
                }
                bar.suspend(|| -> io::Result<()> {
                    let head = format!("{}: {} {}", file.display(), info.format, info.version);
                    writeln!(out, "{}", escape(&head))?;
                    profcodec::text::write_details(&mut out, &info.details, 1)
                })?;
                Ok(())
            });
            if json {
                profcodec::inspect::write_json(&mut out, &infos)?;
            }
            result
        }
        Command::Validate {
            allow_trailing,
            files,
        } => for_each_file(&files, |file, bar| {
            let validated = open_and(file, profcodec::validate)?;
            let mut failed = false;
            for finding in &validated.findings {
                failed |= !allow_trailing;
                bar.suspend(|| say(format_args!("{}: {finding}", file.display())));
            }
            if failed {
                return Err(Failure {
                    status: 1,
                    message: format!(
                        "{}: not valid: data after the end of the stream (--allow-trailing \
                         accepts it)",
                        file.display()
                    ),
                });
            }
            bar.suspend(|| writeln!(out, "{}: valid", escape_display(&file.display())))?;
            Ok(())
        }),
        Command::Dump {
            format,
            pretty,
            partial,
            json: _,
            file,
        } => {
            let pretty = pretty || (format == DumpFormat::Json && out.is_terminal());
            let mut buf = io::BufWriter::new(out);
            let options = DumpOptions {
                layout: format.into(),
                pretty,
            };
            let mut dump = Dump::new(&mut buf, options);
            let opened = profcodec::open(&file)?;
            // A file cut while it was dumped gives that error, not the dump's (the umbrella
            // checks).
            if let Err(e) = profcodec::dump(&opened, &mut dump) {
                if partial {
                    dump.finish_with_error(&e)?;
                }
                buf.flush()?;
                return Err(failure_of(&file, &opened, e));
            }
            dump.finish()?;
            buf.flush()?;
            Ok(())
        }
        Command::Rewrite {
            to,
            force,
            input,
            output,
        } => {
            let options = RewriteOptions { to };
            let opened = profcodec::open(&input)?;
            let checked = OutputPath::like_input(&output, &input, opened.format())
                .overwrite(Overwrite::from_force(force))
                .check()?;
            note_stale_staging(&checked);
            let report = profcodec::rewrite(&opened, checked, &options).map_err(|e| match e {
                profcodec::output::WriteError::Write(e) => failure_of(&input, &opened, e),
                e => e.into(),
            })?;
            for dropped in &report.dropped {
                say(format_args!("{}: dropped: {dropped}", input.display()));
            }
            for copied in &report.copied {
                say(format_args!(
                    "{}: copied unchanged: {copied}",
                    output.display()
                ));
            }
            Ok(())
        }
        Command::Merge {
            output,
            force,
            inputs,
        } => {
            // The inputs as given: the output may not lie inside a folder of profiles (as for
            // export), where it would be one more profile, counted again by every later read.
            let checked = convert::checked(
                OutputPath::file(&output).overwrite(Overwrite::from_force(force)),
                &inputs,
            )?;
            let inputs = expand_inputs(&inputs)?;
            let report = profcodec::merge_files(&inputs, checked).map_err(|e| match e {
                profcodec::output::WriteError::Write(e) => Failure::from(e),
                e => e.into(),
            })?;
            for warning in &report.warnings {
                say(format_args!("{}: warning: {warning}", output.display()));
            }
            Ok(())
        }
        Command::Top {
            query,
            json,
            inputs,
        } => {
            query.filter.refuse_depth("top")?;
            query.use_binary_path();
            let inputs = expand_inputs(&inputs)?;
            let q = query.query();
            let merged = profcodec::merged_profile_for(&inputs, &q, &query.merge_options())?;
            let (format, profile) = (merged.format(), merged.profile);
            check_contexts(&profile, &q, &inputs, format)?;
            let table = profile.top(&q).map_err(query_failure)?;
            top::hint_unsymbolized(&table);
            top::note_left_out(&[("", table.left_out)]);
            let mut buf = io::BufWriter::new(out);
            if json {
                profcodec::text::write_top_json(&mut buf, &table)?;
            } else {
                profcodec::text::write_top(&mut buf, &profile, &table, &query.table_options())?;
            }
            buf.flush()?;
            Ok(())
        }
        Command::Convert(args) => convert::run(args),
        Command::Prof(args) => prof::run(args),
        Command::Export(args) => external::run("export", &args),
        Command::Sql(args) => external::run("sql", &args),
        Command::Report(args) => report::run(args),
        Command::Diff {
            query,
            change,
            json,
            base,
            new,
        } => {
            query.filter.refuse_depth("diff")?;
            query.use_binary_path();
            // Both sides decoded at once, each on a core.
            let sides = profcodec::profiles(&[&base, &new], &query.merge_options())?;
            let Ok([base_profile, new_profile]) = <[_; 2]>::try_from(sides) else {
                unreachable!("a profile per input")
            };
            let q = query.query();
            check_contexts(&base_profile, &q, &[&base], None)?;
            check_contexts(&new_profile, &q, &[&new], None)?;
            let diff =
                profcodec_profile::diff_with(&base_profile, &new_profile, &q, &change.options())
                    .map_err(query_failure)?;
            top::note_left_out(&[
                (" in the base", diff.base_left_out),
                (" in the new profile", diff.new_left_out),
            ]);
            let mut buf = io::BufWriter::new(out);
            if json {
                profcodec::text::write_diff_json(&mut buf, &diff)?;
            } else {
                profcodec::text::write_diff(
                    &mut buf,
                    &base_profile,
                    &diff,
                    &query.table_options(),
                )?;
            }
            buf.flush()?;
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // On SIGINT or SIGTERM, the output being written is abandoned and its staging removed:
    // nothing is left behind. Set after parsing (its thread is most of the start-up of
    // `--version` and `--help`), and not for the verbs profcodec-sql runs, which sets its own.
    if !matches!(cli.command, Command::Sql(_) | Command::Export(_)) {
        let _ = ctrlc::set_handler(|| {
            profcodec::output::remove_live_staging();
            std::process::exit(130);
        });
    }
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            f.say();
            ExitCode::from(f.status)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// What a build cannot do with a format (the umbrella's `Unsupported`) is a usage error
    /// (exit status 2) whose message names the file and the format it was taken for.
    #[test]
    fn an_unsupported_verb_exits_2_naming_the_file() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/statprofiler/features.statprof");
        let opened = profcodec::open(&path).unwrap();
        let failure = failure_of(&path, &opened, OpError::Unsupported { op: "dump" });
        assert_eq!(failure.status, 2);
        assert!(
            failure.message.contains("not yet supported"),
            "{}",
            failure.message
        );
        assert!(failure.message.contains("features.statprof"));
    }
}
