//! The `profcodec` command line: argument parsing and output over the per-format glue in `ops`.
//!
//! Exit status: 0 success, 1 an input is invalid, 2 usage error or unsupported format/operation.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
mod ops;
mod text;

use ops::dump::{Dump, DumpLayout, DumpOptions};
use ops::{OpError, RewriteOptions};

/// Read, check, dump and rewrite profiler files (HPCToolkit, hpcrun, NYTProf, EasyProfiler,
/// StatProfiler).
#[derive(Debug, Parser)]
#[command(name = "profcodec", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print each file's format, version and counts.
    Info {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Files (or HPCToolkit database directories).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Decode everything; exit 1 with the error and byte offset when a file is invalid.
    Validate {
        /// Accept trailing bytes after the end of a stream (reported, but not a failure).
        #[arg(long)]
        allow_trailing: bool,
        /// Files (or HPCToolkit database directories).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the full content of a file as a stream of flat JSON records (schemas in the CLI
    /// README).
    Dump {
        /// Output layout: one JSON document, or newline-delimited JSON (one record a line).
        #[arg(long, value_enum, default_value = "json")]
        format: DumpLayout,
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
        /// The file (or HPCToolkit database directory).
        file: PathBuf,
    },
    /// Decode a file and encode it again, atomically: the output appears only when complete.
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
}

/// A failure, with the exit status it maps to.
struct Failure {
    status: u8,
    message: String,
}

impl From<OpError> for Failure {
    fn from(e: OpError) -> Self {
        let status = match e {
            OpError::Invalid { .. } | OpError::Io(_) => 1,
            _ => 2,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl From<profcodec::OpenError> for Failure {
    fn from(e: profcodec::OpenError) -> Self {
        // An input that cannot be read, or is no profile at all, is invalid (1); bytes of a
        // format this build does not know are unsupported (2).
        let status = match e {
            profcodec::OpenError::Unknown { .. } => 2,
            _ => 1,
        };
        Failure {
            status,
            message: e.to_string(),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure {
            status: 1,
            message: e.to_string(),
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
    op(&opened).map_err(|e| failure_of(file, &opened, e))
}

/// `e` as a failure whose message names the file and the format it was taken for.
fn failure_of(file: &std::path::Path, opened: &profcodec::Opened, e: OpError) -> Failure {
    let mut f = Failure::from(e);
    f.message = format!("{}: {}: {}", file.display(), opened.format(), f.message);
    f
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
        bar.set_message(file.display().to_string());
        if let Err(f) = each(file, &bar) {
            bar.suspend(|| eprintln!("{}", f.message));
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
                let info = open_and(file, |o| ops::codec(o.format()).info(o))?;
                if json {
                    infos.push(serde_json::json!({"path": file, "info": info}));
                    return Ok(());
                }
                bar.suspend(|| -> io::Result<()> {
                    writeln!(out, "{}: {} {}", file.display(), info.format, info.version)?;
                    text::write_details(&mut out, &info.details, 1)
                })?;
                Ok(())
            });
            if json {
                ops::write_json(&mut out, &infos)?;
            }
            result
        }
        Command::Validate {
            allow_trailing,
            files,
        } => for_each_file(&files, |file, bar| {
            let validated = open_and(file, |o| ops::codec(o.format()).validate(o))?;
            let mut failed = false;
            for finding in &validated.findings {
                failed |= !allow_trailing;
                bar.suspend(|| eprintln!("{}: {finding}", file.display()));
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
            bar.suspend(|| println!("{}: valid", file.display()));
            Ok(())
        }),
        Command::Dump {
            format,
            pretty,
            partial,
            json: _,
            file,
        } => {
            let pretty = pretty || (format == DumpLayout::Json && out.is_terminal());
            let mut buf = io::BufWriter::new(out);
            let options = DumpOptions {
                layout: format,
                pretty,
            };
            let mut dump = Dump::new(&mut buf, options);
            let opened = profcodec::open(&file)?;
            if let Err(e) = ops::codec(opened.format()).dump(&opened, &mut dump) {
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
            let report = open_and(&input, |o| {
                ops::rewrite_atomically(ops::codec(o.format()), o, &output, &options, force)
            })?;
            for dropped in &report.dropped {
                eprintln!("{}: dropped: {dropped}", input.display());
            }
            for copied in &report.copied {
                eprintln!("{}: copied unchanged: {copied}", output.display());
            }
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("profcodec: {}", f.message);
            }
            ExitCode::from(f.status)
        }
    }
}
