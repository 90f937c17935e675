//! `profcodec export --parquet OUT_DIR INPUT...` and `profcodec sql "SELECT ..." INPUT...`: the
//! inputs as tables (profcodec-arrow), exported as a Parquet dataset or queried in an embedded
//! DataFusion session. Each input brings its format's tables and the `profile` tables of its
//! profile model, which is made (as `profcodec top` makes it) only when one of them is read.

use std::path::PathBuf;

use crate::Failure;
use profcodec::terminal::{EscapingWriter, escape_display};
use profcodec_arrow::parquet::{self, ExportOptions};
use profcodec_arrow::sql::datafusion::arrow;
use profcodec_arrow::sql::{Limits, Session};

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
    #[arg(long, conflicts_with = "append")]
    force: bool,
    /// Add the inputs to the dataset in OUT_DIR, which profcodec wrote: they are numbered
    /// after its highest input, in new input=<k> folders and a new part of its inputs table;
    /// no file already there is changed. A missing (or empty) OUT_DIR becomes a new dataset;
    /// any other folder, or a file, is refused. The new files appear once all are written; if
    /// the append fails, none is left. A path the dataset has already is added again as a
    /// new input (a run profiled again), with a note.
    #[arg(long)]
    append: bool,
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
    /// An aligned table of the first 1,000 rows, then how many more there are.
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
    /// `SELECT * FROM information_schema.columns`. SQL here is read-only: COPY, CREATE,
    /// INSERT, DROP and SET are refused, so a query cannot write files.
    query: String,
    /// Output format. The table keeps its first 1,000 rows to align them and counts the rest;
    /// csv and json stream every row.
    #[arg(long, value_enum, default_value = "table")]
    format: SqlFormat,
    /// The memory the query's joins, sorts and aggregations may hold at once: a size in
    /// binary units (`512M`, `4G`, `1.5GiB`, bytes without a unit), or `none`. A sort over it
    /// spills to the temporary folder where it can (up to --spill-limit); otherwise the query
    /// stops with an error (exit status 2).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = memory_limit)]
    memory_limit: MemoryLimit,
    /// The temporary files a query over --memory-limit may spill its sorts and aggregations to,
    /// in the system's temporary folder (TMPDIR): a size as for --memory-limit, or `none` (no
    /// limit). Beyond it the query stops with an error (exit status 2) and its temporary files
    /// are removed.
    #[arg(long, value_name = "SIZE", default_value = "2G", value_parser = memory_limit)]
    spill_limit: MemoryLimit,
    /// Cancel the query if it still runs after this many seconds (exit status 124, as
    /// `timeout(1)`), or `none`: a recursive query that never ends stops there.
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = timeout)]
    timeout: Timeout,
    /// Inputs (files, database, measurement or session folders), numbered from 0 in order
    /// (the `input` column).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
}

/// The `--memory-limit` of `profcodec sql`: bytes, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemoryLimit(Option<usize>);

/// Parses `--memory-limit`: `none`, or a number with an optional binary unit (`K`, `M`, `G`,
/// `T`, each optionally followed by `i` and `B`: `512M`, `1.5GiB`, `4gb`).
fn memory_limit(text: &str) -> Result<MemoryLimit, String> {
    let trimmed = text.trim();
    if trimmed.eq_ignore_ascii_case("none") {
        return Ok(MemoryLimit(None));
    }
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit.strip_suffix('b').unwrap_or(&unit);
    let unit = unit.strip_suffix('i').unwrap_or(unit);
    let scale: f64 = match unit {
        "" => 1.0,
        "k" => 1024.0,
        "m" => 1024.0 * 1024.0,
        "g" => 1024.0 * 1024.0 * 1024.0,
        "t" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "{text:?} is no size: write bytes, or a number with K, M, G or T (512M, 4G), or none"
            ));
        }
    };
    let bytes = number
        .parse::<f64>()
        .ok()
        .map(|n| n * scale)
        .filter(|b| b.is_finite() && *b >= 1.0 && *b <= usize::MAX as f64)
        .ok_or_else(|| {
            format!("{text:?} is no size: write a positive number such as 512M or 4G")
        })?;
    Ok(MemoryLimit(Some(bytes as usize)))
}

/// The `--timeout` of `profcodec sql`: a duration, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timeout(Option<std::time::Duration>);

/// Parses `--timeout`: positive seconds, fractions allowed, or `none`.
fn timeout(text: &str) -> Result<Timeout, String> {
    if text.trim().eq_ignore_ascii_case("none") {
        return Ok(Timeout(None));
    }
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
        .map(|d| Timeout(Some(d)))
        .ok_or_else(|| {
            format!("{text:?} is no timeout: write a positive number of seconds, or none")
        })
}

/// The most rows the table format of `sql` keeps to align its columns: the rest are counted
/// and dropped, so that a result of millions of rows prints in bounded memory (csv and json
/// stream them all).
const TABLE_ROWS: usize = 1000;

/// Runs `profcodec export`.
pub(crate) fn export(args: &ExportArgs) -> Result<(), Failure> {
    // The output is checked before any input is read; a dry run writes nothing.
    let output = if args.dry_run {
        None
    } else {
        let checked = profcodec::output::OutputPath::folder(&args.parquet)
            .overwrite(profcodec::output::Overwrite::from_force(args.force))
            .append(args.append)
            .commit_last(parquet::COMMIT_LAST)
            .inputs(&args.inputs)
            .check()?;
        profcodec_cli::failure::note_stale_staging(&checked);
        Some(checked)
    };
    // A folder of profiles stands for its profiles, as in every verb; the output was checked
    // against the inputs as given (it may not lie in such a folder).
    let paths = profcodec_cli::inputs::expand_inputs(&args.inputs)?;
    // The dataset added to: the numbers its new inputs take, and which it has already.
    let dataset = match (&output, args.append) {
        (Some(output), true) => {
            let mut dataset = parquet::Dataset::read(&args.parquet, &paths).map_err(failure)?;
            // What an append killed before its commit left; this run holds the dataset.
            if output.holds_appended_folder() {
                for left in dataset.remove_leftovers().map_err(failure)? {
                    eprintln!(
                        "profcodec: removed {}, left by an append that did not complete",
                        escape_display(&left.display())
                    );
                }
            }
            for (i, path) in paths.iter().enumerate() {
                if let Some(k) = dataset.present(i) {
                    eprintln!(
                        "profcodec: note: {} is in {} already (input {k}); it is added again \
                         as input {}",
                        escape_display(&path.display()),
                        escape_display(&args.parquet.display()),
                        u64::from(dataset.first_input()) + i as u64
                    );
                }
            }
            Some(dataset)
        }
        _ => None,
    };
    let inputs = open_inputs(&paths)?;
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
        let written = match &dataset {
            Some(dataset) => parquet::export_after(staged, &inputs, &options, dataset),
            None => parquet::export(staged, &inputs, &options),
        }
        .map_err(failure)?;
        // A file that shrank while it was read gave zeros: nothing is placed.
        for input in &inputs {
            input.check_intact().map_err(failure)?;
        }
        Ok::<_, Failure>(
            written
                .into_iter()
                .map(|w| {
                    let path = w.path.strip_prefix(staged).unwrap_or(&w.path).to_path_buf();
                    (path, w.rows)
                })
                .collect::<Vec<_>>(),
        )
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

/// Runs `profcodec sql`.
pub(crate) fn sql(args: &SqlArgs) -> Result<(), Failure> {
    use std::io::Write;
    let inputs = open_inputs(&profcodec_cli::inputs::expand_inputs(&args.inputs)?)?;
    let limits = Limits::new()
        .memory(args.memory_limit.0)
        .spill(args.spill_limit.0.map(|bytes| bytes as u64))
        .timeout(args.timeout.0);
    let session = Session::with_limits(
        &inputs,
        profcodec::tables::SETS,
        &Default::default(),
        &limits,
    )
    .map_err(failure)?;
    let rows = session.query(&args.query).map_err(sql_failure)?;
    let stdout = std::io::stdout();
    // Strings from the inputs could drive a terminal: the table escapes them always, csv when
    // standard output is a terminal (a pipe or a file gets the exact text), json always as
    // `\uXXXX` escapes (the same document for a reader).
    let terminal = std::io::IsTerminal::is_terminal(&stdout);
    let mut out = std::io::BufWriter::new(stdout.lock());
    // Every format ends on what writing to standard output failed with as `writeln!` does
    // (`From<io::Error> for Failure`): a closed standard output (`| head`) quietly.
    let io = |e: arrow::error::ArrowError| match e {
        arrow::error::ArrowError::IoError(_, io) => Failure::from(io),
        e => Failure {
            status: 1,
            message: e.to_string(),
        },
    };
    match args.format {
        SqlFormat::Table => {
            // Column widths need the rows: the first TABLE_ROWS are kept (whole batches
            // but the last, sliced), the others only counted.
            let schema = for_people(&rows.schema());
            let mut kept = Vec::new();
            let (mut shown, mut more) = (0usize, 0u64);
            for batch in rows {
                let batch = batch.map_err(sql_failure)?;
                let take = (TABLE_ROWS - shown).min(batch.num_rows());
                if take > 0 {
                    kept.push(cells_for_people(&batch.slice(0, take), &schema)?);
                    shown += take;
                }
                more += (batch.num_rows() - take) as u64;
            }
            let table = arrow::util::pretty::pretty_format_batches_with_schema(schema, &kept)
                .map_err(io)?;
            writeln!(out, "{table}")?;
            if shown == 0 {
                writeln!(out, "0 rows")?;
            } else if more > 0 {
                writeln!(
                    out,
                    "... and {} more {} (use --format csv for all)",
                    profcodec::text::grouped(more as f64, 0),
                    if more == 1 { "row" } else { "rows" }
                )?;
            }
        }
        SqlFormat::Csv => {
            // Each batch is encoded in memory, then written as the table is: arrow's CSV
            // writer words an I/O error as text, and a closed standard output would be
            // reported as a failure.
            let schema = rows.schema();
            let encoded = |batch: &arrow::record_batch::RecordBatch, header: bool| {
                let mut writer = arrow::csv::WriterBuilder::new()
                    .with_header(header)
                    .build(Vec::new());
                writer.write(batch).map_err(io)?;
                Ok::<_, Failure>(writer.into_inner())
            };
            let mut out = EscapingWriter::lines_on_terminal(&mut out, terminal);
            let mut header = true;
            for batch in rows {
                out.write_all(&encoded(&batch.map_err(sql_failure)?, header)?)?;
                header = false;
            }
            // An empty result still has its header line, for the scripts that read it.
            if header {
                let empty = arrow::record_batch::RecordBatch::new_empty(schema);
                out.write_all(&encoded(&empty, true)?)?;
            }
            out.finish()?;
        }
        SqlFormat::Json => {
            let mut escaped = EscapingWriter::json(&mut out);
            let mut writer = arrow::json::ArrayWriter::new(&mut escaped);
            for batch in rows {
                writer.write(&batch.map_err(sql_failure)?).map_err(io)?;
            }
            writer.finish().map_err(io)?;
            drop(writer);
            writeln!(escaped)?;
            escaped.finish()?;
        }
    }
    out.flush()?;
    // A file that shrank while it was read gave zeros: say so after what was printed.
    for input in &inputs {
        input.check_intact().map_err(failure)?;
    }
    Ok(())
}

/// `schema` as the table format prints it: float columns as text ([`float_for_people`]), and
/// every column that may hold text from the inputs as that text escaped ([`shows_text`]).
fn for_people(schema: &arrow::datatypes::SchemaRef) -> arrow::datatypes::SchemaRef {
    use arrow::datatypes::{DataType, Field, Schema};
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match f.data_type() {
            DataType::Float64 => Field::new(f.name(), DataType::Utf8, f.is_nullable()),
            t if shows_text(t) => Field::new(f.name(), DataType::Utf8, f.is_nullable()),
            _ => f.as_ref().clone(),
        })
        .collect();
    std::sync::Arc::new(Schema::new(fields))
}

/// Whether a column of type `t` may show text from the inputs (strings, and lists, structs,
/// maps or dictionaries that may hold them), which the table prints escaped
/// (`profcodec::terminal`): a name could drive the terminal or break the table's rows.
fn shows_text(t: &arrow::datatypes::DataType) -> bool {
    use arrow::datatypes::DataType;
    !(t.is_numeric() || t.is_temporal() || matches!(t, DataType::Boolean | DataType::Null))
}

/// `batch` as the table prints it, in `schema` ([`for_people`]): its float columns as text
/// ([`float_for_people`]), the columns that [`shows_text`] as their text escaped.
fn cells_for_people(
    batch: &arrow::record_batch::RecordBatch,
    schema: &arrow::datatypes::SchemaRef,
) -> Result<arrow::record_batch::RecordBatch, Failure> {
    use arrow::array::{Array, ArrayRef, Float64Array, StringArray};
    use arrow::util::display::{ArrayFormatter, FormatOptions};
    let failure = |e: arrow::error::ArrowError| Failure {
        status: 1,
        message: e.to_string(),
    };
    let options = FormatOptions::default();
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(batch.num_columns());
    for column in batch.columns() {
        let column = if let Some(floats) = column.as_any().downcast_ref::<Float64Array>() {
            std::sync::Arc::new(
                floats
                    .iter()
                    .map(|x| x.map(float_for_people))
                    .collect::<StringArray>(),
            ) as ArrayRef
        } else if shows_text(column.data_type()) {
            let text = ArrayFormatter::try_new(column.as_ref(), &options).map_err(failure)?;
            std::sync::Arc::new(
                (0..column.len())
                    .map(|i| {
                        (!column.is_null(i)).then(|| {
                            profcodec::terminal::escape(&text.value(i).to_string()).into_owned()
                        })
                    })
                    .collect::<StringArray>(),
            ) as ArrayRef
        } else {
            column.clone()
        };
        columns.push(column);
    }
    arrow::record_batch::RecordBatch::try_new(schema.clone(), columns).map_err(failure)
}

/// A float as the table format prints it: rounded to 12 significant digits, then in the
/// shortest text that reads back as that value. A sum of many values carries rounding noise in
/// its last digits (a relative error up to the terms' count times 2^-53), which goes:
/// `0.17791849999999912` prints `0.1779185`. csv and json keep every digit.
fn float_for_people(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let rounded: f64 = format!("{x:.11e}").parse().unwrap_or(x);
    // Far from 1, the digits a fixed point would need say less than an exponent.
    if rounded != 0.0 && !(1e-6..1e16).contains(&rounded.abs()) {
        format!("{rounded:e}")
    } else {
        rounded.to_string()
    }
}

/// `set.table` of an exported file's path below the output (`nytprof/lines/input=0/...`).
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
fn open_inputs(paths: &[PathBuf]) -> Result<Vec<profcodec_arrow::InputTables>, Failure> {
    let mut inputs = Vec::with_capacity(paths.len());
    for path in paths {
        let input = profcodec::tables::Input::open(path).map_err(|e| failure(e.into()))?;
        inputs.push(input.into_tables());
    }
    Ok(inputs)
}

/// A failure of `sql`'s query: [`failure`], with the flag that moves the limit it ran into.
fn sql_failure(e: profcodec_arrow::Error) -> Failure {
    let hint = match &e {
        profcodec_arrow::Error::MemoryLimit { .. } => "; --memory-limit raises it",
        profcodec_arrow::Error::SpillLimit { .. } => {
            "; --spill-limit raises it (or --memory-limit, to spill less)"
        }
        profcodec_arrow::Error::Timeout { .. } => "; --timeout sets how long a query may run",
        _ => "",
    };
    let mut f = failure(e);
    f.message.push_str(hint);
    f
}

/// The exit status of a query cancelled at `--timeout`: 124, as `timeout(1)` exits.
const QUERY_TIMED_OUT: u8 = 124;

/// The exit status and message of a tables error: damaged or unreadable input 1, a usage error
/// (an unknown table, a query DataFusion refuses or that needs more than the memory or spill
/// limit, an
/// input the tables do not read) 2, a query cancelled at its timeout 124.
fn failure(e: profcodec_arrow::Error) -> Failure {
    use profcodec::tables::Error as Tables;
    use profcodec_arrow::Error;
    let status = match &e {
        Error::Tables(Tables::Open(open))
            if matches!(
                open.downcast_ref::<profcodec::OpenError>(),
                Some(profcodec::OpenError::Unknown { .. })
            ) =>
        {
            2
        }
        Error::Tables(Tables::Unsupported { .. } | Tables::UnknownTable { .. }) => 2,
        Error::NoSuchTable { .. }
        | Error::AmbiguousTable { .. }
        | Error::ReadOnly { .. }
        | Error::MemoryLimit { .. }
        | Error::SpillLimit { .. } => 2,
        Error::Timeout { .. } => QUERY_TIMED_OUT,
        // The dataset appended to cannot take the inputs: the output's failure.
        Error::Dataset { .. } => profcodec_cli::failure::OUTPUT_FAILED,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn floats_print_without_rounding_noise() {
        assert_eq!(super::float_for_people(0.17791849999999912), "0.1779185");
        assert_eq!(super::float_for_people(0.1 + 0.2), "0.3");
        assert_eq!(super::float_for_people(1e300), "1e300");
        assert_eq!(super::float_for_people(1.5e-9), "1.5e-9");
        assert_eq!(super::float_for_people(0.0), "0");
        assert_eq!(super::float_for_people(-2.5), "-2.5");
        assert_eq!(super::float_for_people(f64::NAN), "NaN");
    }

    #[test]
    fn memory_limits_read_binary_units_and_none() {
        let bytes = |t: &str| memory_limit(t).unwrap().0;
        assert_eq!(bytes("1G"), Some(1 << 30));
        assert_eq!(bytes("1GiB"), Some(1 << 30));
        assert_eq!(bytes("512m"), Some(512 << 20));
        assert_eq!(bytes("1.5K"), Some(1536));
        assert_eq!(bytes("4096"), Some(4096));
        assert_eq!(bytes("2 TB"), Some(2 << 40));
        assert_eq!(bytes("none"), None);
        for bad in ["", "G", "0", "1X", "-1G", "1..5G"] {
            assert!(memory_limit(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn timeouts_are_positive_seconds() {
        assert_eq!(
            timeout("1").unwrap().0,
            Some(std::time::Duration::from_secs(1))
        );
        assert_eq!(
            timeout("0.25").unwrap().0,
            Some(std::time::Duration::from_millis(250))
        );
        assert_eq!(timeout("none").unwrap().0, None);
        for bad in ["0", "-1", "soon", "inf", ""] {
            assert!(timeout(bad).is_err(), "{bad}");
        }
    }
}
