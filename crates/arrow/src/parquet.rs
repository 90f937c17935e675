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
//!
//! A dataset grows by inputs added after those it has ([`Dataset::read`], then [`export_after`]):
//! the new inputs take the numbers after the highest the dataset has, in new `input=<k>`
//! folders, and their rows of the `inputs` table go in a new part,
//! `inputs/part-<n>.parquet`, so that no file already there is rewritten. Readers of the
//! dataset see the old and the new inputs as one. The new part of the `inputs` table is moved
//! in last, as the append's commit point: the dataset's inputs are those its `inputs` table
//! lists, and partitions of an input it does not list are what an append killed before its
//! commit left, which the next append removes ([`Dataset`]). A reader that must never see
//! them joins with the `inputs` table (`WHERE input IN (SELECT input FROM inputs)`).

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

/// The entry of an export's folder that an append moves in after every other, its commit
/// point: the `inputs` table (`profcodec::output::OutputPath::commit_last`).
pub const COMMIT_LAST: &str = "inputs";

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
    export_numbered(out, inputs, options, 0, 0)
}

/// Writes the tables of `inputs` under `out` as [`export`] does, numbered after the inputs of
/// `dataset` (the first is `input=`[`Dataset::first_input`]) and with their rows of the
/// `inputs` table in the part [`Dataset::inputs_part`]: the files to add to that dataset,
/// none of which it has. `out` is typically a staging folder whose entries are then moved
/// into the dataset's (`profcodec::output::OutputPath::append`), the `inputs` folder last
/// ([`COMMIT_LAST`]).
pub fn export_after(
    out: &Path,
    inputs: &[InputTables],
    options: &ExportOptions,
    dataset: &Dataset,
) -> Result<Vec<Written>, Error> {
    dataset.room(inputs.len())?;
    export_numbered(
        out,
        inputs,
        options,
        dataset.first_input,
        dataset.inputs_part,
    )
}

fn export_numbered(
    out: &Path,
    inputs: &[InputTables],
    options: &ExportOptions,
    first_input: u32,
    inputs_part: u32,
) -> Result<Vec<Written>, Error> {
    // The `inputs` table: small, one file.
    let batch = crate::inputs::numbered(inputs, first_input)?;
    let dir = out.join("inputs");
    create_dir(&dir)?;
    let path = dir.join(format!("part-{inputs_part:05}.parquet"));
    let properties = options.properties(&batch.schema());
    let mut file = PartFile::create(&path, batch.schema(), &properties)?;
    file.write(&batch)?;
    let mut written = vec![file.close()?];
    for files in run_jobs(
        &jobs(inputs, options, first_input),
        options.threads,
        |job| job.export(out, options),
    )? {
        written.extend(files);
    }
    Ok(written)
}

/// Reads every table `export` would write, as it would (the same batches, the same threads), and
/// writes nothing: the rows of each table of each input, in the order `export` writes them. What
/// the export costs besides encoding and compressing, and a check that every table of the
/// inputs reads.
pub fn scan(inputs: &[InputTables], options: &ExportOptions) -> Result<Vec<Scanned>, Error> {
    run_jobs(&jobs(inputs, options, 0), options.threads, |job| {
        let mut rows = 0;
        for batch in job.tables.batches(job.table.name, &options.scan)? {
            rows += batch?.num_rows() as u64;
        }
        Ok(Scanned {
            input: job.input as usize,
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

/// The tables of `inputs` that `options` exports, in order, the first input numbered `first`.
fn jobs<'a>(inputs: &'a [InputTables], options: &ExportOptions, first: u32) -> Vec<Job<'a>> {
    let mut jobs = Vec::new();
    // The caller checked that the numbers fit (a plain export has far fewer than 2^32 inputs).
    for (k, input) in (first..=u32::MAX).zip(inputs) {
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
    input: u32,
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

/// What an existing dataset written by [`export`] holds, as far as adding inputs to it needs:
/// the numbers its inputs take, the parts of its `inputs` table, which of the paths about to
/// be added it has already, and what an append that did not complete left in it.
///
/// An append commits in one rename: its partitions go in first, its part of the `inputs`
/// table last. So the inputs of the dataset are those its `inputs` table lists, each with all
/// its partitions; a partition whose input number is above every number listed was moved in
/// by an append that was killed before it committed (a leftover, [`Dataset::leftovers`]),
/// and is no part of the dataset: a reader that joins with the `inputs` table (or keeps to
/// the inputs it lists) sees the dataset as it was before that append, and the next append
/// removes the leftovers ([`Dataset::remove_leftovers`]).
///
/// Reading it keeps nothing per existing input or file but the leftovers' paths: the folder
/// names are looked at one by one and the `inputs` table is read a batch at a time, its paths
/// compared with the new ones. Numbers in the dataset are never used to size anything.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dataset {
    root: PathBuf,
    first_input: u32,
    inputs_part: u32,
    present: Vec<Option<u32>>,
    leftovers: Vec<PathBuf>,
}

impl Dataset {
    /// Reads the dataset at `root` (nothing there, or an empty folder, is an empty dataset),
    /// noting which of `paths` (the inputs to be added, as they will appear in the `path`
    /// column) it has already. A partition folder `input=<k>` whose `k` is not a number up to
    /// 4,294,967,295, an `inputs` table that does not read or lacks its columns, partitions
    /// with no `inputs` table, or a leftover partition that holds anything but the part files
    /// an export writes, is an [`Error::Dataset`]: nothing is to be added to a damaged dataset.
    pub fn read(root: &Path, paths: &[PathBuf]) -> Result<Dataset, Error> {
        let mut dataset = Dataset {
            root: root.to_path_buf(),
            first_input: 0,
            inputs_part: 0,
            present: vec![None; paths.len()],
            leftovers: Vec::new(),
        };
        let Some(sets) = read_dir(root)? else {
            return Ok(dataset);
        };
        // The `inputs` table first: what it lists is what the dataset holds.
        let inputs = root.join("inputs");
        let mut listed: Option<u32> = None;
        let mut has_inputs_table = false;
        if let Some(parts) = read_dir(&inputs)? {
            let wanted: Vec<String> = paths
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            let mut highest_part: Option<u32> = None;
            for part in parts {
                let (name, path) = part?;
                let Some(stem) = name.strip_suffix(".parquet") else {
                    continue;
                };
                has_inputs_table = true;
                if let Some(n) = stem
                    .strip_prefix("part-")
                    .and_then(|n| n.parse::<u32>().ok())
                {
                    highest_part = highest_part.max(Some(n));
                }
                let rows = read_inputs_part(&path, &wanted, &mut dataset.present)?;
                listed = listed.max(rows);
            }
            dataset.inputs_part = match highest_part {
                None => 0,
                Some(n) => n.checked_add(1).ok_or_else(|| Error::Dataset {
                    path: inputs.clone(),
                    reason: format!(
                        "its inputs table has a part numbered {n}, the highest there is"
                    ),
                })?,
            };
        }
        // The highest input number of the dataset, listed rows and their partitions alike.
        let mut highest = listed;
        for set in sets {
            let (set_name, set_path) = set?;
            if set_name.starts_with('.') || set_name == "inputs" {
                continue;
            }
            let Some(tables) = read_dir(&set_path)? else {
                continue;
            };
            for table in tables {
                let (_, table_path) = table?;
                let Some(partitions) = read_dir(&table_path)? else {
                    continue;
                };
                for partition in partitions {
                    let (name, path) = partition?;
                    let Some(number) = name.strip_prefix("input=") else {
                        continue;
                    };
                    let k = number.parse::<u32>().map_err(|_| Error::Dataset {
                        path: path.clone(),
                        reason: format!(
                            "the partition folder {name:?} names no input number (0 to {})",
                            u32::MAX
                        ),
                    })?;
                    match listed {
                        Some(listed) if k <= listed => highest = highest.max(Some(k)),
                        _ if !has_inputs_table => {
                            return Err(Error::Dataset {
                                path,
                                reason: "the dataset has partitions but no inputs table (no                                          part in inputs/), so no input of it can be told                                          whole; export it again"
                                    .into(),
                            });
                        }
                        _ => {
                            check_leftover(&path)?;
                            dataset.leftovers.push(path);
                        }
                    }
                }
            }
        }
        dataset.leftovers.sort();
        dataset.first_input = match highest {
            None => 0,
            Some(k) => k.checked_add(1).ok_or_else(|| Error::Dataset {
                path: root.to_path_buf(),
                reason: format!("it has an input numbered {k}, the highest there is"),
            })?,
        };
        dataset.room(paths.len())?;
        Ok(dataset)
    }

    /// The partition folders an append that was killed before its commit point left: their
    /// input numbers are above every number the `inputs` table lists, and they hold only the
    /// part files an export writes. They are no part of the dataset.
    pub fn leftovers(&self) -> &[PathBuf] {
        &self.leftovers
    }

    /// Removes the [leftovers](Dataset::leftovers), their part files one by one, then the
    /// folders they leave empty (a table or set folder that only they had), and returns the
    /// partition folders removed. Call it only while holding the dataset against every other
    /// append (profcodec's output check of an append holds its lock): a live append's
    /// partitions look the same until it commits.
    pub fn remove_leftovers(&mut self) -> Result<Vec<PathBuf>, Error> {
        let leftovers = std::mem::take(&mut self.leftovers);
        for partition in &leftovers {
            if let Some(parts) = read_dir(partition)? {
                for part in parts {
                    let (_, path) = part?;
                    std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                }
            }
            // Not remove_dir_all: anything that appeared meanwhile stops the removal.
            std::fs::remove_dir(partition).map_err(|e| Error::io(partition, e))?;
            // A table, then a set, that a killed append brought whole and only it had.
            for folder in partition.ancestors().skip(1).take(2) {
                if std::fs::remove_dir(folder).is_err() {
                    break;
                }
            }
        }
        Ok(leftovers)
    }

    /// Whether `n` inputs numbered from [`Dataset::first_input`] fit the `input` column.
    fn room(&self, n: usize) -> Result<(), Error> {
        let last = match n.checked_sub(1) {
            None => return Ok(()),
            Some(more) => u32::try_from(more)
                .ok()
                .and_then(|more| self.first_input.checked_add(more)),
        };
        match last {
            Some(_) => Ok(()),
            None => Err(Error::Dataset {
                path: self.root.clone(),
                reason: format!(
                    "its inputs are numbered up to {}, and {n} more do not fit the input \
                     column (UInt32)",
                    self.first_input.saturating_sub(1),
                ),
            }),
        }
    }

    /// The number the first input added takes: one more than the highest the dataset has
    /// (0 for an empty dataset).
    pub fn first_input(&self) -> u32 {
        self.first_input
    }

    /// The part number of the `inputs` table's new file: one more than the highest there.
    pub fn inputs_part(&self) -> u32 {
        self.inputs_part
    }

    /// For the `i`-th of the paths given to [`Dataset::read`], the number of an input of the
    /// dataset with the same path, if it has one (a run profiled again is added again, as a
    /// new input).
    pub fn present(&self, i: usize) -> Option<u32> {
        self.present.get(i).copied().flatten()
    }
}

/// Checks that the leftover partition folder `path` holds only what an export writes there
/// (files `part-<n>.parquet`), so that removing it removes nothing profcodec did not write.
fn check_leftover(path: &Path) -> Result<(), Error> {
    let Some(entries) = read_dir(path)? else {
        return Ok(());
    };
    for entry in entries {
        let (name, file) = entry?;
        let is_part = name
            .strip_prefix("part-")
            .and_then(|n| n.strip_suffix(".parquet"))
            .is_some_and(|n| n.len() >= 5 && n.bytes().all(|b| b.is_ascii_digit()))
            && std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
        if !is_part {
            return Err(Error::Dataset {
                path: path.to_path_buf(),
                reason: format!(
                    "this partition's input is listed in no part of the inputs table (an \
                     append that did not complete left it), and it holds {name:?}, which \
                     profcodec does not write, so it is not removed; move it out of the \
                     dataset and append again"
                ),
            });
        }
    }
    Ok(())
}

/// An entry of a folder: its name and path.
type Entry = Result<(String, PathBuf), Error>;

/// The entries of the folder `dir` as (name, path), or `None` when `dir` is missing or not a
/// folder.
fn read_dir(dir: &Path) -> Result<Option<impl Iterator<Item = Entry> + '_>, Error> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(Error::io(dir, e)),
    };
    Ok(Some(entries.filter_map(move |entry| {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => return Some(Err(Error::io(dir, e))),
        };
        // Only folders and files matter here; a name that is not UTF-8 is no part of a
        // dataset profcodec wrote, and readers skip it too.
        let name = entry.file_name().into_string().ok()?;
        Some(Ok((name, entry.path())))
    })))
}

/// Reads one part of an `inputs` table, a batch at a time: returns its highest input number,
/// and sets `present[i]` for each `wanted[i]` its `path` column holds.
fn read_inputs_part(
    path: &Path,
    wanted: &[String],
    present: &mut [Option<u32>],
) -> Result<Option<u32>, Error> {
    use arrow_array::{Array, StringArray, UInt32Array};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let damaged = |reason: String| Error::Dataset {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| damaged(format!("the inputs table does not read: {e}")))?;
    let column = |name: &str| {
        builder
            .schema()
            .index_of(name)
            .map_err(|_| damaged(format!("the inputs table has no column {name:?}")))
    };
    let (input, path_column) = (column("input")?, column("path")?);
    let mask =
        parquet::arrow::ProjectionMask::roots(builder.parquet_schema(), [input, path_column]);
    let reader = builder
        .with_projection(mask)
        .with_batch_size(8192)
        .build()
        .map_err(|e| damaged(format!("the inputs table does not read: {e}")))?;
    let (mut highest, mut seen) = (None, 0u64);
    for batch in reader {
        let batch = batch.map_err(|e| damaged(format!("the inputs table does not read: {e}")))?;
        let numbers = batch
            .column_by_name("input")
            .and_then(|c| c.as_any().downcast_ref::<UInt32Array>())
            .ok_or_else(|| damaged("the inputs table's input column is not UInt32".into()))?;
        let paths = batch
            .column_by_name("path")
            .and_then(|c| c.as_any().downcast_ref::<StringArray>())
            .ok_or_else(|| damaged("the inputs table's path column is not UTF-8".into()))?;
        for row in 0..batch.num_rows() {
            if numbers.is_null(row) {
                return Err(damaged(format!(
                    "the inputs table's row {} has no input number",
                    seen + row as u64
                )));
            }
            let k = numbers.value(row);
            highest = highest.max(Some(k));
            if paths.is_null(row) {
                continue;
            }
            let p = paths.value(row);
            for (i, w) in wanted.iter().enumerate() {
                if w == p && present[i].is_none() {
                    present[i] = Some(k);
                }
            }
        }
        seen += batch.num_rows() as u64;
    }
    Ok(highest)
}
