//! The tables of Devel::StatProfiler output (feature `arrow`): one file, or a session (a folder
//! or template of rotated and forked files) grouped into processes. Samples are read as the real
//! reader returns them (a [`TraceReader`] over each file's bytes), so memory stays at the
//! reader's window and the open sample. A session's files are opened one at a time, as the scan
//! reaches them, and closed when it leaves them: a session larger than memory (hundreds of files
//! of the profiler's 10 MiB, each read whole when small) holds one file at a time.

use std::io;
use std::path::Path;

use profcodec_common::Source;
use profcodec_common::source::Member;
use profcodec_tables::arrow_array::RecordBatch;
use profcodec_tables::{Batches, Error, Rows, ScanOptions, SourceTables, TableSet, batches, table};

use crate::read::packets::{ReadSource, SliceSource, StreamSource};
use crate::session::{Process, open_session};
use crate::{Frame, PerlStr, ProcessId, Reader, Trace, TraceReader};

table! {
    /// StatProfiler `processes`: one row per process of the input (a process's rotated files
    /// are one process; a forked child is its own).
    Processes, ProcessRows, "processes" {
        process: Utf8 => "The process's 48-hex-digit id (empty for a file without one), the key of the other tables' `process`.",
        pid: UInt32 => "The operating-system pid, the id's first word.",
        parent: Utf8 nullable => "The parent process's id, for a forked child.",
        files: UInt32 => "How many files the process wrote.",
        tick_duration_us: UInt32 nullable => "The sampling period in microseconds, from its first file's header.",
    }
}

table! {
    /// StatProfiler `samples`: one row per sample the real reader returns (its empty traces
    /// at section records left out).
    Samples, SampleRows, "samples" {
        process: Utf8 => "The process (`processes.process`).",
        sample: UInt64 => "The sample's number within the input, from 0, the key of `frames.sample`.",
        weight: UInt32 => "Timer ticks since the previous sample: the samples it stands for.",
        time_us: Float64 nullable => "The weight times the file's tick duration, in microseconds.",
        op_name: Utf8 => "The Perl op running when the sample was taken.",
        depth: UInt32 => "How many frames the sample has.",
    }
}

table! {
    /// StatProfiler `frames`: one row per frame of every sample, innermost first.
    Frames, FrameRows, "frames" {
        process: Utf8 => "The process (`processes.process`).",
        sample: UInt64 => "The sample (`samples.sample`).",
        depth: UInt32 => "0 for the innermost frame (where the sample was taken), counting outwards.",
        kind: Utf8 => "`sub`, `xsub`, `eval` (an eval STRING) or `main` (the main program or a required file).",
        package: Utf8 nullable => "A sub's package.",
        name: Utf8 nullable => "A sub's name without its package.",
        file: Utf8 nullable => "The frame's file (an eval's `(eval N)`).",
        line: Int32 nullable => "The frame's current line.",
        first_line: Int32 nullable => "A sub's first line (-1 when unknown).",
    }
}

/// The set's name: the SQL schema of its tables, and the format its errors name.
const NAME: &str = crate::FORMAT_NAME;

/// The `statprofiler` set: its tables, in order.
pub const SET: TableSet = TableSet::new(NAME, &[Processes::DEF, Samples::DEF, Frames::DEF]);

/// The tables of one file, or of the processes of a session.
#[derive(Debug)]
pub struct TableReader {
    input: Files,
}

enum Files {
    /// The input's own bytes.
    One,
    /// The processes, whose files are opened in process then ordinal order as they are read.
    Session(Vec<Process>),
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Files::One => f.write_str("One"),
            Files::Session(processes) => f.debug_tuple("Session").field(processes).finish(),
        }
    }
}

impl TableReader {
    /// The tables of `source`: a file, or a session (a folder or template) whose files are
    /// listed now (their headers read) and opened through `source.members` one at a time when
    /// a table is read.
    pub fn open(source: &Source<'_>) -> Result<TableReader, Error> {
        let path = source.path;
        let input = if path.is_file() {
            Files::One
        } else {
            let processes = open_session(path).map_err(|e| Error::invalid(path, NAME, None, e))?;
            Files::Session(processes)
        };
        Ok(TableReader { input })
    }
}

impl SourceTables for TableReader {
    fn set(&self) -> TableSet {
        SET
    }

    fn batches<'a>(
        &'a self,
        source: Source<'a>,
        table: &str,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error> {
        SET.table(table)?;
        Ok(match table {
            Processes::NAME => self.processes(&source, options)?,
            Samples::NAME => self.samples(source, options, false),
            _ => self.samples(source, options, true),
        })
    }
}

impl TableReader {
    fn processes<'a>(
        &'a self,
        source: &Source<'_>,
        options: &ScanOptions,
    ) -> Result<Batches<'a>, Error> {
        let rows: Vec<ProcessRow> = match &self.input {
            Files::One => {
                let reader = Reader::from_slice(source.bytes)
                    .map_err(|e| Error::invalid(source.path, NAME, e.offset(), e))?;
                let header = reader.header();
                let genealogy = header.genealogy;
                vec![ProcessRow {
                    id: genealogy.map(|g| g.id),
                    parent: genealogy.map(|g| g.parent_id).filter(|p| !p.is_zero()),
                    files: 1,
                    tick: header.tick_duration_us,
                }]
            }
            Files::Session(processes) => processes
                .iter()
                .map(|p| ProcessRow {
                    id: Some(p.id),
                    parent: p.parent.map(|(id, _)| id),
                    files: p.files.len() as u32,
                    tick: p.files.first().and_then(|f| f.header.tick_duration_us),
                })
                .collect(),
        };
        Ok(batches(
            ProcessRows::new(),
            rows.into_iter().map(Ok),
            options,
            |rows, p: ProcessRow| {
                rows.process.append_value(hex(p.id));
                rows.pid.append_value(p.id.map_or(0, |id| id.words()[0]));
                rows.parent.append_option(p.parent.map(|id| id.hex()));
                rows.files.append_value(p.files);
                rows.tick_duration_us.append_option(p.tick);
            },
        ))
    }

    /// The files to read, in process then ordinal order, each with the path to name in errors:
    /// the input's own bytes, or a session's files, each opened when the scan reaches it.
    fn files<'a>(
        &'a self,
        source: Source<'a>,
    ) -> Box<dyn Iterator<Item = Result<FileSamples<'a>, Error>> + 'a> {
        match &self.input {
            Files::One => Box::new(std::iter::once_with(move || {
                let stream = SliceSource::new(source.bytes)
                    .map_err(|e| Error::invalid(source.path, NAME, e.offset(), e))?;
                FileSamples::open(source.path, FileSource::Slice(stream))
            })),
            Files::Session(processes) => {
                Box::new(processes.iter().flat_map(|p| &p.files).map(move |file| {
                    let path = file.path.as_path();
                    let member = source.members.open(path).map_err(Error::open)?;
                    let stream = ReadSource::new(io::Cursor::new(MemberBytes(member)))
                        .map_err(|e| Error::invalid(path, NAME, e.offset(), e))?;
                    FileSamples::open(path, FileSource::Member(stream))
                }))
            }
        }
    }

    /// The `samples` table, or with `frames` the `frames` table: both come from one pass of the
    /// trace reader over each file.
    fn samples<'a>(
        &'a self,
        source: Source<'a>,
        options: &ScanOptions,
        frames: bool,
    ) -> Batches<'a> {
        let mut files = self.files(source);
        let mut current: Option<FileSamples<'a>> = None;
        let mut sample = 0u64;
        let mut failed = false;
        let limit = options.batch_rows.max(1);
        let mut sample_rows = SampleRows::new();
        let mut frame_rows = FrameRows::new();
        // A sample's frames are appended together: a batch that passes the limit is cut, and
        // its rest handed out next.
        let mut rest: Option<RecordBatch> = None;
        Box::new(std::iter::from_fn(move || {
            if let Some(batch) = rest.take() {
                return Some(Ok(cut(batch, limit, &mut rest)));
            }
            if failed {
                return None;
            }
            loop {
                let rows = if frames {
                    frame_rows.len()
                } else {
                    sample_rows.len()
                };
                if rows >= limit {
                    break;
                }
                if current.is_none() {
                    let Some(file) = files.next() else {
                        break;
                    };
                    match file {
                        Ok(f) => current = Some(f),
                        Err(e) => {
                            failed = true;
                            return Some(Err(e));
                        }
                    }
                }
                let Some(file) = current.as_mut() else {
                    break;
                };
                let more = file.next_sample(|process, tick, trace| {
                    if frames {
                        append_frames(&mut frame_rows, process, sample, trace);
                    } else {
                        append_sample(&mut sample_rows, process, sample, tick, trace);
                    }
                    sample += 1;
                });
                match more {
                    Ok(true) => {}
                    Ok(false) => current = None,
                    Err(e) => {
                        failed = true;
                        return Some(Err(e));
                    }
                }
            }
            let rows: &mut dyn Rows = if frames {
                &mut frame_rows
            } else {
                &mut sample_rows
            };
            (!rows.is_empty()).then(|| rows.finish().map(|b| cut(b, limit, &mut rest)))
        }))
    }
}

/// The first `limit` rows of `batch`, the others left in `rest`.
fn cut(batch: RecordBatch, limit: usize, rest: &mut Option<RecordBatch>) -> RecordBatch {
    if batch.num_rows() <= limit {
        return batch;
    }
    *rest = Some(batch.slice(limit, batch.num_rows() - limit));
    batch.slice(0, limit)
}

struct ProcessRow {
    id: Option<ProcessId>,
    parent: Option<ProcessId>,
    files: u32,
    tick: Option<u32>,
}

/// A process id as the tables spell it (empty for none).
fn hex(id: Option<ProcessId>) -> String {
    id.map(|id| id.hex()).unwrap_or_default()
}

/// A session's file as opened by the caller's [`Members`](profcodec_common::source::Members),
/// read through [`io::Cursor`] so that the trace reader can own it.
struct MemberBytes(Member);

impl AsRef<[u8]> for MemberBytes {
    fn as_ref(&self) -> &[u8] {
        (*self.0).as_ref()
    }
}

/// Where a file's stream comes from: the input's own bytes, or a session's file, which the
/// reader owns while it reads it and drops after.
enum FileSource<'a> {
    Slice(SliceSource<'a>),
    Member(ReadSource<io::Cursor<MemberBytes>>),
}

impl StreamSource for FileSource<'_> {
    fn fill(&mut self, buf: &mut Vec<u8>, at: usize) -> Result<Option<(u64, usize)>, crate::Error> {
        match self {
            FileSource::Slice(s) => s.fill(buf, at),
            FileSource::Member(s) => s.fill(buf, at),
        }
    }

    fn container(&self) -> crate::Container {
        match self {
            FileSource::Slice(s) => s.container(),
            FileSource::Member(s) => s.container(),
        }
    }

    fn rest(&mut self) -> Result<Option<(u64, u64)>, crate::Error> {
        match self {
            FileSource::Slice(s) => s.rest(),
            FileSource::Member(s) => s.rest(),
        }
    }
}

/// One file's trace reader.
struct FileSamples<'a> {
    path: &'a Path,
    process: String,
    tick: Option<u32>,
    traces: TraceReader<FileSource<'a>>,
}

impl<'a> FileSamples<'a> {
    fn open(path: &'a Path, source: FileSource<'a>) -> Result<Self, Error> {
        let reader =
            Reader::with_source(source).map_err(|e| Error::invalid(path, NAME, e.offset(), e))?;
        let header = reader.header();
        Ok(FileSamples {
            process: hex(header.genealogy.map(|g| g.id)),
            tick: header.tick_duration_us,
            traces: TraceReader::new(reader),
            path,
        })
    }

    /// Reads the next sample and hands it to `each`; `Ok(false)` at the end of the file.
    fn next_sample(
        &mut self,
        mut each: impl FnMut(&str, Option<u32>, &Trace<'_>),
    ) -> Result<bool, Error> {
        loop {
            let trace = self
                .traces
                .next_trace()
                .map_err(|e| Error::invalid(self.path, NAME, e.offset(), e))?;
            let Some(trace) = trace else {
                return Ok(false);
            };
            // The reader's empty traces at section records are no samples.
            if trace.weight == 0 && trace.frame_count() == 0 {
                continue;
            }
            each(&self.process, self.tick, &trace);
            return Ok(true);
        }
    }
}

fn append_sample(
    rows: &mut SampleRows,
    process: &str,
    sample: u64,
    tick: Option<u32>,
    trace: &Trace<'_>,
) {
    rows.process.append_value(process);
    rows.sample.append_value(sample);
    rows.weight.append_value(trace.weight);
    rows.time_us
        .append_option(tick.map(|t| f64::from(trace.weight) * f64::from(t)));
    rows.op_name.append_value(trace.op_name.to_string());
    rows.depth.append_value(trace.frame_count() as u32);
}

fn append_frames(rows: &mut FrameRows, process: &str, sample: u64, trace: &Trace<'_>) {
    let text = |s: PerlStr<'_>| s.to_string();
    for (depth, frame) in trace.frames().enumerate() {
        rows.process.append_value(process);
        rows.sample.append_value(sample);
        rows.depth.append_value(depth as u32);
        match frame {
            Frame::Sub {
                package,
                name,
                file,
                line,
                first_line,
            } => {
                rows.kind.append_value("sub");
                rows.package.append_value(text(package));
                rows.name.append_value(text(name));
                rows.file.append_value(text(file));
                rows.line.append_value(line);
                rows.first_line.append_value(first_line);
            }
            Frame::Xsub { package, name } => {
                rows.kind.append_value("xsub");
                rows.package.append_value(text(package));
                rows.name.append_value(text(name));
                rows.file.append_null();
                rows.line.append_null();
                rows.first_line.append_null();
            }
            Frame::Eval { file, line } | Frame::Main { file, line } => {
                let kind = if matches!(frame, Frame::Eval { .. }) {
                    "eval"
                } else {
                    "main"
                };
                rows.kind.append_value(kind);
                rows.package.append_null();
                rows.name.append_null();
                rows.file.append_value(text(file));
                rows.line.append_value(line);
                rows.first_line.append_null();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::PathBuf;

    use profcodec_common::source::ReadWhole;

    use super::*;

    fn testdata(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/statprofiler")
            .join(name)
    }

    /// The rows of every table of `source`, read in batches of 7 rows of the table's schema.
    fn rows(source: Source<'_>) -> Vec<usize> {
        let tables = TableReader::open(&source).unwrap();
        tables
            .row_counts(source, &ScanOptions::new().batch_rows(7))
            .unwrap()
    }

    #[test]
    fn a_file_is_one_process_and_a_session_is_its_processes() {
        let path = testdata("features.statprof");
        let bytes = std::fs::read(&path).unwrap();
        let file = rows(Source::file(&path, &bytes));
        assert_eq!(file[0], 1);
        assert!(file[1] > 0 && file[2] > 0, "{file:?}");
        let session = testdata("session");
        let session = rows(Source {
            path: &session,
            bytes: &[],
            members: &ReadWhole,
        });
        assert_eq!(
            session[0], 3,
            "a rotated process, a forked child, a file still open"
        );
        assert!(session[1] > 0, "{session:?}");
    }
}
