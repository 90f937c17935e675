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
//! an input is invalid, 2 usage error (a query refused, an unknown table, over the memory or
//! spill limit), 3 the export could not be written where asked, 124 a `sql --timeout` ran out,
//! 130 interrupted (SIGINT, SIGTERM: the staging of an export being written is removed first).

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
        after_help = "Examples:\n  profcodec export --parquet dataset db.d\n  profcodec export --parquet dataset --append run.m\n  profcodec export --dry-run --parquet dataset run.m"
    )]
    Export(tables::ExportArgs),
    /// Run a SQL query over the inputs' tables in an embedded DataFusion session.
    #[command(
        after_help = "Examples:\n  profcodec sql 'SELECT name, count(*) FROM profile.frames GROUP BY name' nytprof.out\n  profcodec sql --format csv 'SELECT * FROM nytprof.lines' nytprof.out > lines.csv"
    )]
    Sql(tables::SqlArgs),
}

pub(crate) use profcodec_cli::failure::Failure;

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
            f.say();
            ExitCode::from(f.status)
        }
    }
}
