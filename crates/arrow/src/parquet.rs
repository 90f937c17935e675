//! Parquet export (feature `parquet`): every table of every input as a Hive-partitioned
//! dataset that DuckDB, Spark, Trino and DataFusion read one folder a table.
//!
//! Layout under the output folder:
//!
//! ```text
//! inputs/part-00000.parquet                       the `inputs` table (input, path, set)
//! <set>/<table>/input=<k>/part-<n>.parquet        table <table> of set <set> for input k
//! ```
//!
//! The `input` column is the Hive partition key: it is in the folder names, not in the files,
//! and every engine reading the folder as a dataset adds it (`read_parquet('out/nytprof/lines/*/*.parquet',
//! hive_partitioning = true)` in DuckDB, `spark.read.parquet("out/nytprof/lines")` in Spark).
//! Every table of every input gets at least one file, empty when the table is, so that a dataset
//! folder always exists with its schema.
//!
//! Files: row groups of at most [`ExportOptions::row_group_rows`] rows and 128 MiB, column
//! statistics per page (min, max, null count: what engines prune row groups and pages with),
//! dictionary encoding for strings (numbers plain: as small once compressed, and faster), the
//! compression chosen, the Arrow schema with each column's meaning
//! (its `description` field metadata) in the file's metadata; a new part starts after
//! [`ExportOptions::file_rows`] rows. Batches are written as they are read: memory is a row
//! group being encoded per table being written ([`ExportOptions::threads`] at once), whatever
//! the input's size.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression as ParquetCompression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use crate::{Error, InputTables, ScanOptions, TableDef, TableSet, Tables};

/// The compression of the Parquet pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Compression {
    /// zstd at its fast level (1): small files, fast to write and read.
    #[default]
    Zstd,
    /// Snappy: what older readers all support.
    Snappy,
    /// None.
    None,
}

/// How tables are exported.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The pages' compression.
    pub compression: Compression,
    /// The most rows a row group holds (a row group is also cut at 128 MiB).
    pub row_group_rows: usize,
    /// The rows after which a new part file starts.
    pub file_rows: usize,
    /// How the inputs are read.
    pub scan: ScanOptions,
    /// Only these tables (`set.table`, `table` or `set`); every table when empty.
    pub tables: Vec<String>,
    /// How many tables are written at once, each by a thread of its own (at least 1).
    pub threads: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            compression: Compression::Zstd,
            row_group_rows: 1 << 20,
            file_rows: 8 << 20,
            scan: ScanOptions::new(),
            tables: Vec::new(),
            threads: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

impl ExportOptions {
    /// The default options: zstd, row groups of 1 Mi rows, parts of 8 Mi rows, every table, as
    /// many tables at once as the machine has cores.
    pub fn new() -> Self {
        ExportOptions::default()
    }

    /// These options with `compression`.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// These options exporting only `tables` (`set.table`, `table` or `set`).
    pub fn tables(mut self, tables: Vec<String>) -> Self {
        self.tables = tables;
        self
    }

    /// These options writing `threads` tables at once (0 is taken as 1).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// Whether table `table` of `set` is exported.
    fn wants(&self, set: TableSet, table: &str) -> bool {
        self.tables.is_empty()
            || self.tables.iter().any(|t| match t.split_once('.') {
                Some((s, name)) => s == set.name() && name == table,
                None => t == set.name() || t == table,
            })
    }

    /// The writer properties of a table of `schema`: dictionary encoding for strings (names and
    /// paths repeat row after row); numbers plain, which on this data is as small after
    /// compression and much faster to write than a dictionary of ids, values and times.
    fn properties(&self, schema: &arrow_schema::Schema) -> WriterProperties {
        let mut builder = self.builder().set_dictionary_enabled(false);
        for field in schema.fields() {
            if field.data_type() == &arrow_schema::DataType::Utf8 {
                builder = builder.set_column_dictionary_enabled(
                    parquet::schema::types::ColumnPath::from(field.name().as_str()),
                    true,
                );
            }
        }
        builder.build()
    }

    fn builder(&self) -> parquet::file::properties::WriterPropertiesBuilder {
        let compression = match self.compression {
            Compression::Zstd => ParquetCompression::ZSTD(ZstdLevel::default()),
            Compression::Snappy => ParquetCompression::SNAPPY,
            Compression::None => ParquetCompression::UNCOMPRESSED,
        };
        WriterProperties::builder()
            .set_compression(compression)
            .set_max_row_group_row_count(Some(self.row_group_rows.max(1)))
            .set_max_row_group_bytes(Some(128 << 20))
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_created_by(format!("profcodec {}", env!("CARGO_PKG_VERSION")))
    }
}

/// One file written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// The file.
    pub path: PathBuf,
    /// Its rows.
    pub rows: u64,
}

/// Writes the tables of `inputs` under `out` (which must exist; files are created, never
/// replaced: give a fresh folder) and returns the files written, in order. The `k`-th input is
/// `input=k`. Tables are written [`ExportOptions::threads`] at a time, each read and encoded by
/// one thread (the large ones, an HPCToolkit database's `values` and `traces`, on cores of their
/// own).
pub fn export(
    out: &Path,
    inputs: &[InputTables],
    options: &ExportOptions,
) -> Result<Vec<Written>, Error> {
    // The `inputs` table: small, one file.
    let batch = crate::inputs::batch(inputs)?;
    let dir = out.join("inputs");
    create_dir(&dir)?;
    let path = dir.join("part-00000.parquet");
    let properties = options.properties(&batch.schema());
    let mut file = PartFile::create(&path, batch.schema(), &properties)?;
    file.write(&batch)?;
    let mut written = vec![file.close()?];
    for files in run_jobs(&jobs(inputs, options), options.threads, |job| {
        job.export(out, options)
    })? {
        written.extend(files);
    }
    Ok(written)
}

/// Reads every table `export` would write, as it would (the same batches, the same threads), and
/// writes nothing: the rows of each table of each input, in the order `export` writes them. What
/// the export costs besides encoding and compressing, and a check that every table of the
/// inputs reads.
pub fn scan(inputs: &[InputTables], options: &ExportOptions) -> Result<Vec<Scanned>, Error> {
    run_jobs(&jobs(inputs, options), options.threads, |job| {
        let mut rows = 0;
        for batch in job.tables.batches(job.table.name, &options.scan)? {
            rows += batch?.num_rows() as u64;
        }
        Ok(Scanned {
            input: job.input,
            set: job.tables.set(),
            table: job.table.name,
            rows,
        })
    })
}

/// One table read by [`scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Scanned {
    /// The input's position.
    pub input: usize,
    /// The table's set.
    pub set: TableSet,
    /// The table's name.
    pub table: &'static str,
    /// Its rows.
    pub rows: u64,
}

/// The tables of `inputs` that `options` exports, in order.
fn jobs<'a>(inputs: &'a [InputTables], options: &ExportOptions) -> Vec<Job<'a>> {
    let mut jobs = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        for tables in input.sets() {
            let set = tables.set();
            for table in set.tables() {
                if options.wants(set, table.name) {
                    jobs.push(Job {
                        input: k,
                        tables: tables.as_ref(),
                        table,
                    });
                }
            }
        }
    }
    jobs
}

/// One table of one input to export.
struct Job<'a> {
    input: usize,
    tables: &'a dyn Tables,
    table: &'static TableDef,
}

impl Job<'_> {
    /// Writes the table's part files under `out`.
    fn export(&self, out: &Path, options: &ExportOptions) -> Result<Vec<Written>, Error> {
        let (tables, table) = (self.tables, self.table);
        let dir = out
            .join(tables.set().name())
            .join(table.name)
            .join(format!("input={}", self.input));
        create_dir(&dir)?;
        let schema = table.schema();
        let properties = options.properties(&schema);
        let part = |n: usize| dir.join(format!("part-{n:05}.parquet"));
        let mut written = Vec::new();
        let mut n = 0;
        let mut file = PartFile::create(&part(n), schema.clone(), &properties)?;
        for batch in tables.batches(table.name, &options.scan)? {
            let batch = batch?;
            if file.rows > 0 && file.rows + batch.num_rows() as u64 > options.file_rows as u64 {
                written.push(file.close()?);
                n += 1;
                file = PartFile::create(&part(n), schema.clone(), &properties)?;
            }
            file.write(&batch)?;
        }
        written.push(file.close()?);
        Ok(written)
    }
}

/// The results of `work` on every job, in the jobs' order, `threads` jobs at a time; the first
/// error (in the jobs' order) is returned, and no job starts after one has failed.
fn run_jobs<J: Sync, T: Send>(
    jobs: &[J],
    threads: usize,
    work: impl Fn(&J) -> Result<T, Error> + Sync,
) -> Result<Vec<T>, Error> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let worker = || {
        let mut done = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(job) = jobs.get(i) else { break };
            let result = work(job);
            failed.fetch_or(result.is_err(), Ordering::Relaxed);
            done.push((i, result));
        }
        done
    };
    let threads = threads.clamp(1, jobs.len().max(1));
    let mut results: Vec<(usize, Result<T, Error>)> = if threads == 1 {
        worker()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
            handles
                .into_iter()
                .flat_map(|h| {
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        })
    };
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// A part file being written.
struct PartFile {
    path: PathBuf,
    writer: ArrowWriter<std::fs::File>,
    rows: u64,
}

impl PartFile {
    fn create(
        path: &Path,
        schema: arrow_schema::SchemaRef,
        properties: &WriterProperties,
    ) -> Result<PartFile, Error> {
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let writer = ArrowWriter::try_new(file, Arc::clone(&schema), Some(properties.clone()))
            .map_err(|source| Error::Parquet {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(PartFile {
            path: path.to_path_buf(),
            writer,
            rows: 0,
        })
    }

    fn write(&mut self, batch: &arrow_array::RecordBatch) -> Result<(), Error> {
        self.writer.write(batch).map_err(|source| Error::Parquet {
            path: self.path.clone(),
            source,
        })?;
        self.rows += batch.num_rows() as u64;
        Ok(())
    }

    fn close(self) -> Result<Written, Error> {
        let PartFile { path, writer, rows } = self;
        writer.close().map_err(|source| Error::Parquet {
            path: path.clone(),
            source,
        })?;
        Ok(Written { path, rows })
    }
}
