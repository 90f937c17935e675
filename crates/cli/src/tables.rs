//! `profcodec export --parquet OUT_DIR INPUT...` and `profcodec sql "SELECT ..." INPUT...`: the
//! inputs as tables (profcodec-arrow), exported as a Parquet dataset or queried in an embedded
//! DataFusion session. Each input brings its format's tables and the `profile` tables of its
//! profile model, which is made (as `top` makes it) only when one of them is read.

use std::path::PathBuf;

use crate::Failure;

/// The page compression of `export --parquet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Compression {
    /// zstd at its fast level (1): small files, fast to write and read.
    Zstd,
    /// Snappy: what older readers all support.
    Snappy,
    /// No compression.
    None,
}

/// Arguments of `profcodec export`.
#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// Write the tables as a Hive-partitioned Parquet dataset into this folder:
    /// OUT_DIR/<set>/<table>/input=<k>/part-<n>.parquet, and OUT_DIR/inputs/.
    #[arg(long, value_name = "OUT_DIR")]
    parquet: PathBuf,
    /// The pages' compression.
    #[arg(long, value_enum, default_value = "zstd")]
    compression: Compression,
    /// Only this table (`set.table`, `table` or a whole `set`); repeatable. Every table by
    /// default.
    #[arg(long = "table", value_name = "TABLE")]
    tables: Vec<String>,
    /// Replace an existing OUT_DIR whole, when profcodec wrote it (any other folder, or a file,
    /// is never replaced).
    #[arg(long)]
    force: bool,
    /// How many tables are written at once, each by a thread of its own. The machine's cores
    /// by default.
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Read every table as the export would, write nothing (OUT_DIR is not touched), and print
    /// the rows of each: checks that the inputs read, and times the reading alone.
    #[arg(long)]
    dry_run: bool,
    /// Inputs (files, database, measurement or session folders), numbered from 0 in order
    /// (the `input` column).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

/// How `profcodec sql` prints its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SqlFormat {
    /// An aligned table.
    Table,
    /// CSV with a header line.
    Csv,
    /// A JSON array of objects, one per row.
    Json,
}

/// Arguments of `profcodec sql`.
#[derive(Debug, clap::Args)]
pub(crate) struct SqlArgs {
    /// The query, over the tables `<set>.<table>` (`nytprof.lines`, `hpctoolkit.values`,
    /// `profile.frames`...) and `inputs`; the bare `<table>` works where only one set of the
    /// inputs has it. The tables and columns are listed in the profcodec-arrow docs, and by
    /// `SELECT * FROM information_schema.columns`.
    query: String,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: SqlFormat,
    /// Inputs (files, database, measurement or session folders), numbered from 0 in order
    /// (the `input` column).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

/// Runs `profcodec export`.
pub(crate) fn export(args: &ExportArgs) -> Result<(), Failure> {
    #[cfg(feature = "parquet")]
    {
        use profcodec_arrow::parquet::{self, ExportOptions};
        // The output is checked before any input is read; a dry run writes nothing.
        let output = if args.dry_run {
            None
        } else {
            let checked = profcodec::output::OutputPath::folder(&args.parquet)
                .overwrite(profcodec::output::Overwrite::from_force(args.force))
                .inputs(&args.inputs)
                .check()?;
            crate::note_stale_staging(&checked);
            Some(checked)
        };
        let inputs = open_inputs(&args.inputs)?;
        let options = ExportOptions::new()
            .compression(match args.compression {
                Compression::Zstd => parquet::Compression::Zstd,
                Compression::Snappy => parquet::Compression::Snappy,
                Compression::None => parquet::Compression::None,
            })
            .tables(args.tables.clone());
        let options = match args.threads {
            Some(n) => options.threads(n),
            None => options,
        };
        let Some(output) = output else {
            // A dry run: read every table, write nothing.
            let scanned = parquet::scan(&inputs, &options).map_err(failure)?;
            let mut totals: Vec<(String, u64)> = Vec::new();
            for s in scanned {
                let table = format!("{}.{}", s.set, s.table);
                match totals.iter_mut().find(|(t, _)| *t == table) {
                    Some((_, total)) => *total += s.rows,
                    None => totals.push((table, s.rows)),
                }
            }
            for (table, rows) in totals {
                println!("{table}: {rows} rows");
            }
            return Ok(());
        };
        // The files written, relative to the output.
        let written = output.write_with(|staged| {
            std::fs::create_dir(staged)?;
            let invalid = |e: profcodec_arrow::Error| crate::ops::OpError::Invalid {
                offset: e.offset(),
                message: e.to_string(),
            };
            let written = parquet::export(staged, &inputs, &options).map_err(invalid)?;
            // A file that shrank while it was read gave zeros: nothing is placed.
            for input in &inputs {
                input.check_intact().map_err(invalid)?;
            }
            Ok(written
                .into_iter()
                .map(|w| {
                    let path = w.path.strip_prefix(staged).unwrap_or(&w.path).to_path_buf();
                    (path, w.rows)
                })
                .collect::<Vec<_>>())
        })?;
        // Rows and files per table, for the person who ran it.
        let mut totals: Vec<(String, u64, usize)> = Vec::new();
        for (path, rows) in &written {
            let table = table_of(path);
            match totals.iter_mut().find(|(t, _, _)| *t == table) {
                Some((_, total, files)) => {
                    *total += rows;
                    *files += 1;
                }
                None => totals.push((table, *rows, 1)),
            }
        }
        for (table, rows, files) in totals {
            println!("{table}: {rows} rows in {files} files");
        }
        Ok(())
    }
    #[cfg(not(feature = "parquet"))]
    {
        let _ = args;
        Err(missing_feature("export --parquet", "parquet"))
    }
}

/// Runs `profcodec sql`.
pub(crate) fn sql(args: &SqlArgs) -> Result<(), Failure> {
    #[cfg(feature = "sql")]
    {
        use profcodec_arrow::sql::datafusion::arrow;
        use std::io::Write;
        let inputs = open_inputs(&args.inputs)?;
        let session =
            profcodec_arrow::sql::Session::new(&inputs, &Default::default()).map_err(failure)?;
        let rows = session.query(&args.query).map_err(failure)?;
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let io = |e: arrow::error::ArrowError| Failure {
            status: 1,
            message: e.to_string(),
        };
        match args.format {
            SqlFormat::Table => {
                // Column widths need every row: a large result is better asked for as CSV.
                let batches: Vec<_> = rows.collect::<Result<_, _>>().map_err(failure)?;
                let table = arrow::util::pretty::pretty_format_batches(&batches).map_err(io)?;
                writeln!(out, "{table}")?;
            }
            SqlFormat::Csv => {
                let mut writer = arrow::csv::WriterBuilder::new()
                    .with_header(true)
                    .build(&mut out);
                for batch in rows {
                    writer.write(&batch.map_err(failure)?).map_err(io)?;
                }
            }
            SqlFormat::Json => {
                let mut writer = arrow::json::ArrayWriter::new(&mut out);
                for batch in rows {
                    writer.write(&batch.map_err(failure)?).map_err(io)?;
                }
                writer.finish().map_err(io)?;
                drop(writer);
                writeln!(out)?;
            }
        }
        out.flush()?;
        Ok(())
    }
    #[cfg(not(feature = "sql"))]
    {
        let _ = args;
        Err(missing_feature("sql", "sql"))
    }
}

/// `set.table` of an exported file's path below the output (`nytprof/lines/input=0/...`).
#[cfg(feature = "parquet")]
fn table_of(relative: &std::path::Path) -> String {
    let parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    match parts.as_slice() {
        [set, table, _, _] => format!("{set}.{table}"),
        [table, ..] => table.clone(),
        [] => String::new(),
    }
}

/// Opens every input with its format's tables and its lazily made `profile` tables.
#[cfg(any(feature = "parquet", feature = "sql"))]
fn open_inputs(paths: &[PathBuf]) -> Result<Vec<profcodec_arrow::InputTables>, Failure> {
    let mut inputs = Vec::with_capacity(paths.len());
    for path in paths {
        let tables = profcodec_arrow::InputTables::open(path).map_err(failure)?;
        let for_profile: PathBuf = path.clone();
        let profile = profcodec_arrow::ProfileTables::lazy(move || {
            crate::profile_of(&for_profile).map_err(|f| f.message.into())
        });
        inputs.push(tables.with(std::sync::Arc::new(profile)));
    }
    Ok(inputs)
}

/// The exit status and message of a tables error: damaged or unreadable input 1, a usage error
/// (an unknown table, a query DataFusion refuses, an input the tables do not read) 2.
#[cfg(any(feature = "parquet", feature = "sql"))]
fn failure(e: profcodec_arrow::Error) -> Failure {
    use profcodec_arrow::Error;
    let status = match &e {
        Error::Open(profcodec::OpenError::Unknown { .. })
        | Error::Unsupported { .. }
        | Error::UnknownTable { .. } => 2,
        #[cfg(feature = "sql")]
        Error::Sql(sql) => {
            // A failure while reading an input travels inside DataFusion's error.
            let mut source: Option<&(dyn std::error::Error + 'static)> = Some(sql);
            let mut status = 2;
            while let Some(s) = source {
                if s.downcast_ref::<Error>().is_some() {
                    status = 1;
                    break;
                }
                source = s.source();
            }
            status
        }
        _ => 1,
    };
    Failure {
        status,
        message: e.to_string(),
    }
}

/// The failure of a verb whose feature this build lacks.
#[cfg(not(all(feature = "parquet", feature = "sql")))]
fn missing_feature(verb: &str, feature: &str) -> Failure {
    Failure {
        status: 2,
        message: format!(
            "{verb} is not in this build: build profcodec-cli with the `{feature}` feature"
        ),
    }
}
