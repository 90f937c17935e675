//! `profcodec-sql`: the two verbs of profcodec that need Arrow, Parquet and DataFusion,
//! `profcodec sql` and `profcodec export --parquet`, in a binary of their own so that the
//! default `profcodec` command links none of them (it builds in a fraction of the time, and
//! starts as fast as a small program).
//!
//! `profcodec sql ...` and `profcodec export ...` run `profcodec-sql sql ...` and
//! `profcodec-sql export ...` when this binary sits beside `profcodec` or on `PATH`; it may
//! also be run directly.
//!
//! Exit status: 0 success (a closed standard output, as under `| head`, ends quietly with 0), 1
//! an input is invalid, 2 usage error (a query refused, an unknown table, over the memory
//! limit), 3 the export could not be written where asked, 124 a `sql --timeout` ran out, 130
//! interrupted (SIGINT, SIGTERM: the staging of an export being written is removed first).

use std::io;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod tables;

/// SQL and Parquet over profiler files (HPCToolkit, hpcrun, Devel::NYTProf, EasyProfiler,
/// Devel::StatProfiler): what `profcodec sql` and `profcodec export` run.
#[derive(Debug, Parser)]
#[command(name = "profcodec-sql", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Export the inputs' tables (each format's, and the profile model's) as a Hive-partitioned
    /// Parquet dataset that DuckDB, Spark, Trino and DataFusion read.
    #[command(
        after_help = "Examples:\n  profcodec export --parquet dataset db.d\n  profcodec export --dry-run --parquet dataset run.m"
    )]
    Export(tables::ExportArgs),
    /// Run a SQL query over the inputs' tables in an embedded DataFusion session.
    #[command(
        after_help = "Examples:\n  profcodec sql 'SELECT name, count(*) FROM profile.frames GROUP BY name' nytprof.out\n  profcodec sql --format csv 'SELECT * FROM nytprof.lines' nytprof.out > lines.csv"
    )]
    Sql(tables::SqlArgs),
}

/// The exit status of an output that could not be written where asked (refused by the output
/// policy, or an I/O error while placing it), as `profcodec` exits.
const OUTPUT_FAILED: u8 = 3;

/// A failure, with the exit status it maps to.
#[derive(Debug)]
struct Failure {
    status: u8,
    message: String,
}

impl Failure {
    /// A closed standard output (`| head`): not a failure, and nothing to say.
    fn quiet() -> Failure {
        Failure {
            status: 0,
            message: String::new(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::quiet();
        }
        Failure {
            status: 1,
            message: e.to_string(),
        }
    }
}

impl From<profcodec::output::OutputError> for Failure {
    fn from(e: profcodec::output::OutputError) -> Self {
        use profcodec::output::OutputError;
        let hint = match e {
            OutputError::Exists { .. } => "; --force replaces it",
            _ => "",
        };
        Failure {
            status: OUTPUT_FAILED,
            message: format!("{e}{hint}"),
        }
    }
}

impl From<profcodec::output::WriteError<Failure>> for Failure {
    fn from(e: profcodec::output::WriteError<Failure>) -> Self {
        match e {
            profcodec::output::WriteError::Output(e) => e.into(),
            profcodec::output::WriteError::Write(f) => f,
            e => Failure {
                status: OUTPUT_FAILED,
                message: e.to_string(),
            },
        }
    }
}

/// Says which staging folders of killed runs a check removed beside an output.
fn note_stale_staging(checked: &profcodec::output::CheckedOutput) {
    for stale in checked.removed_stale_staging() {
        eprintln!(
            "profcodec: removed {}, left by an earlier run that was killed",
            stale.display()
        );
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // On SIGINT or SIGTERM, the export being written is abandoned and its staging removed:
    // nothing is left behind.
    let _ = ctrlc::set_handler(|| {
        profcodec::output::remove_live_staging();
        std::process::exit(130);
    });
    let result = match &cli.command {
        Command::Export(args) => tables::export(args),
        Command::Sql(args) => tables::sql(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("profcodec: {}", f.message);
            }
            ExitCode::from(f.status)
        }
    }
}
