//! `profcodec prof`: an HPCToolkit database from hpcrun measurements, with hpcprof's flags as
//! far as `profcodec::prof` implements them; the others are refused in words.

use std::path::PathBuf;

use profcodec::prof::{ProfOptions, prof};
use profcodec::terminal::escape_display;
use profcodec_cli::failure::{Failure, say};

/// Arguments of `profcodec prof` (hpcprof's names).
#[derive(Debug, clap::Args)]
pub(crate) struct ProfArgs {
    /// The database folder to make (its parent must exist; an existing folder is refused).
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Worker threads decoding measurement files (every core by default); the database is the
    /// same for any number.
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub(crate) jobs: Option<usize>,
    /// Ignore the hpcstruct files of the measurements' structs/ folders.
    #[arg(long)]
    pub(crate) ignore_structs: bool,
    /// The measurements come from another system: binaries are not looked up on this one
    /// (profcodec never does, so this is accepted for hpcprof's command lines).
    #[arg(long)]
    pub(crate) foreign: bool,
    /// Leave out trace.db.
    #[arg(long)]
    pub(crate) no_traces: bool,
    /// The database's title (the measured program's name by default).
    #[arg(short = 'n', long = "name", value_name = "TITLE")]
    pub(crate) title: Option<String>,
    /// An hpcstruct file for a binary (not implemented yet: refused).
    #[arg(short = 'S', long = "structure", value_name = "FILE")]
    pub(crate) structure: Vec<PathBuf>,
    /// Replace a path prefix FROM with TO when looking for files (not implemented yet: refused).
    #[arg(short = 'R', long = "replace-path", value_name = "FROM=TO")]
    pub(crate) replace_path: Vec<String>,
    /// Further summary statistics over threads (not implemented yet: refused).
    #[arg(short = 'M', long = "metric", value_name = "STAT")]
    pub(crate) metric: Vec<String>,
    /// Do not write per-thread values (not implemented yet: refused).
    #[arg(long)]
    pub(crate) no_thread_local: bool,
    /// Measurement folders (or .hpcrun files).
    #[arg(required = true)]
    pub(crate) measurements: Vec<PathBuf>,
}

/// Refuses a flag of hpcprof that is not implemented, naming it.
fn refuse(flag: &str, what: &str) -> Failure {
    Failure::new(
        2,
        format!("prof: {flag} ({what}) is not implemented yet; leave it out"),
    )
}

pub(crate) fn run(args: ProfArgs) -> Result<(), Failure> {
    if !args.structure.is_empty() {
        return Err(refuse("-S", "structure files given by name"));
    }
    if !args.replace_path.is_empty() {
        return Err(refuse("-R", "path prefix replacement"));
    }
    if !args.metric.is_empty() {
        return Err(refuse("-M", "statistics beyond the sum"));
    }
    if args.no_thread_local {
        return Err(refuse(
            "--no-thread-local",
            "a database without thread profiles",
        ));
    }
    if args.jobs == Some(0) {
        return Err(Failure::new(2, "prof: -j must be at least 1"));
    }
    let options = ProfOptions {
        jobs: args.jobs,
        ignore_structs: args.ignore_structs,
        no_traces: args.no_traces,
        title: args.title,
    };
    let _ = args.foreign;
    let summary = prof(&args.measurements, &options, &args.output)
        .map_err(|e| Failure::new(1, format!("prof: {e}")))?;
    for warning in &summary.warnings {
        say(format_args!("profcodec prof: warning: {warning}"));
    }
    say(format_args!(
        "profcodec prof: wrote {} ({} contexts, {} thread profiles{})",
        escape_display(&summary.path.display()),
        summary.contexts,
        summary.threads,
        if summary.traces { ", traces" } else { "" },
    ));
    Ok(())
}
