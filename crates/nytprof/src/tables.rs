//! The tables of a Devel::NYTProf profile (feature `arrow`): its files, statement lines, subs
//! and calls, as `Devel::NYTProf::Data` reports them (string evals collapsed as Data.pm does).
//! The tables are made from the aggregated [`Profile`], read once per input: its size follows
//! the profiled program's distinct files, lines and subs, never the number of records.
//!
//! The hottest lines: `SELECT file, line, time, count FROM nytprof.lines ORDER BY time DESC
//! LIMIT 10`.
//!
//! ```
//! use profcodec_common::Source;
//! use profcodec_nytprof::tables::TableReader;
//! use profcodec_tables::{ScanOptions, SourceTables};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/nytprof/hello.nytprof.out");
//! let bytes = std::fs::read(path)?;
//! let source = Source::file(path.as_ref(), &bytes);
//! let tables = TableReader::open(&source)?;
//! let mut lines = 0;
//! for batch in tables.batches(source, "lines", &ScanOptions::new())? {
//!     lines += batch?.num_rows();
//! }
//! assert!(lines > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use profcodec_common::Source;
use profcodec_tables::{Batches, Error, ScanOptions, SourceTables, TableSet, batches, table};

use crate::Profile;
use crate::model::{CallInfo, FileInfo, LineTime, SubInfo};

table! {
    /// NYTProf `files`: one row per file id of the profile (source files and string evals).
    Files, FileRows, "files" {
        fid: UInt32 => "The file id, the key of `lines.fid`, `subs.fid` and `calls.caller_fid`.",
        name: Utf8 => "The file's name as Perl saw it (`(eval 3)[t.pl:12]` for an eval).",
        eval_fid: UInt32 nullable => "For a string eval: the file holding the eval.",
        eval_line: UInt32 nullable => "For a string eval: the line of the eval.",
        flags: UInt32 => "NYTProf's fid flags.",
        merged_evals: UInt32 => "How many sibling evals with the same source were collapsed into this one.",
    }
}

table! {
    /// NYTProf `lines`: one row per file and line with statements.
    Lines, LineRows, "lines" {
        fid: UInt32 => "The file (`files.fid`).",
        file: Utf8 => "The file's name.",
        line: UInt32 => "The line.",
        time: Float64 => "The statements' exclusive time in seconds.",
        count: Int64 => "How many statements ran (NYTProf's count, with its discount rule).",
    }
}

table! {
    /// NYTProf `subs`: one row per sub, with its totals over every call.
    Subs, SubRows, "subs" {
        name: Utf8 => "The sub, `package::name`.",
        fid: UInt32 nullable => "The file defining it (`files.fid`).",
        first_line: UInt32 nullable => "Its first line (0 for an xsub).",
        last_line: UInt32 nullable => "Its last line (0 for an xsub).",
        calls: UInt64 => "How many times it was called.",
        inclusive_time: Float64 => "Inclusive seconds (a recursive sub's outermost calls only).",
        exclusive_time: Float64 => "Exclusive seconds.",
        recursive_time: Float64 => "Inclusive seconds of its recursive calls.",
        recursion_depth: UInt32 => "The deepest recursion seen.",
    }
}

table! {
    /// NYTProf `calls`: one row per sub and call site (the file and line it was called from).
    Calls, CallRows, "calls" {
        callee: Utf8 => "The sub called (`subs.name`).",
        caller: Utf8 nullable => "The sub calling from that line (the first by name when several did; null for the main program).",
        caller_fid: UInt32 => "The file of the call site (`files.fid`; 0 for an xsub's own row).",
        caller_line: UInt32 => "The line of the call site.",
        count: UInt64 => "How many calls.",
        inclusive_time: Float64 => "Inclusive seconds of those calls.",
        exclusive_time: Float64 => "Exclusive seconds of those calls.",
        recursive_time: Float64 => "Inclusive seconds of the recursive ones.",
        recursion_depth: UInt32 => "The deepest recursion seen from there.",
    }
}

/// The set's name: the SQL schema of its tables, and the format its errors name.
const NAME: &str = crate::FORMAT_NAME;

/// The `nytprof` set: its tables, in order.
pub const SET: TableSet = TableSet::new(NAME, &[Files::DEF, Lines::DEF, Subs::DEF, Calls::DEF]);

/// The tables of one profile: its model, read on first use, once, whatever the number of
/// threads reading its tables at once (the others wait for it and share it).
#[derive(Debug)]
pub struct TableReader {
    model: profcodec_tables::OnceCell<Profile>,
}

impl TableReader {
    /// The tables of the profile `source` holds (its bytes are read when a table first is).
    pub fn open(_source: &Source<'_>) -> Result<TableReader, Error> {
        Ok(TableReader {
            model: profcodec_tables::OnceCell::new(),
        })
    }

    /// The aggregated model of `source`, read once.
    fn model(&self, source: &Source<'_>) -> Result<&Profile, Error> {
        self.model.get_or_try_init(|| {
            Profile::from_bytes(source.bytes)
                .map_err(|e| Error::invalid(source.path, NAME, e.offset(), e))
        })
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
        let model = self.model(&source)?;
        Ok(match table {
            Files::NAME => batches(
                FileRows::new(),
                model.files.values().map(Ok),
                options,
                |rows, f: &FileInfo| {
                    rows.fid.append_value(f.fid);
                    rows.name.append_value(&f.name);
                    rows.eval_fid.append_option(f.eval.map(|e| e.fid));
                    rows.eval_line.append_option(f.eval.map(|e| e.line));
                    rows.flags.append_value(f.flags);
                    rows.merged_evals.append_value(f.merged_fids.len() as u32);
                },
            ),
            Lines::NAME => {
                let items = model.line_times.iter().flat_map(|(&fid, lines)| {
                    let file = model.files.get(&fid).map_or("", |f| f.name.as_str());
                    lines
                        .iter()
                        .map(move |(&line, t)| Ok((fid, file, line, *t)))
                });
                batches(
                    LineRows::new(),
                    items,
                    options,
                    |rows, (fid, file, line, t)| {
                        let t: LineTime = t;
                        rows.fid.append_value(fid);
                        rows.file.append_value(file);
                        rows.line.append_value(line);
                        rows.time.append_value(t.time);
                        rows.count.append_value(t.count);
                    },
                )
            }
            Subs::NAME => batches(
                SubRows::new(),
                model.subs.values().map(Ok),
                options,
                |rows, s: &SubInfo| {
                    rows.name.append_value(&s.name);
                    rows.fid.append_option(s.fid);
                    rows.first_line.append_option(s.first_line);
                    rows.last_line.append_option(s.last_line);
                    rows.calls.append_value(s.calls);
                    rows.inclusive_time.append_value(s.incl);
                    rows.exclusive_time.append_value(s.excl);
                    rows.recursive_time.append_value(s.reci);
                    rows.recursion_depth.append_value(s.rec_depth);
                },
            ),
            _ => {
                let items = model.subs.values().flat_map(|s| {
                    s.callers.iter().flat_map(move |(&fid, lines)| {
                        lines
                            .iter()
                            .map(move |(&line, call)| Ok((s.name.as_str(), fid, line, call)))
                    })
                });
                batches(
                    CallRows::new(),
                    items,
                    options,
                    |rows, (callee, fid, line, c): (&str, u32, u32, &CallInfo)| {
                        rows.callee.append_value(callee);
                        rows.caller
                            .append_option(c.calling_subs.iter().next().map(String::as_str));
                        rows.caller_fid.append_value(fid);
                        rows.caller_line.append_value(line);
                        rows.count.append_value(c.count);
                        rows.inclusive_time.append_value(c.incl);
                        rows.exclusive_time.append_value(c.excl);
                        rows.recursive_time.append_value(c.reci);
                        rows.recursion_depth.append_value(c.rec_depth);
                    },
                )
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn every_table_reads_in_bounded_batches_of_its_schema() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/nytprof/hello.nytprof.out"
        );
        let bytes = std::fs::read(path).unwrap();
        let source = Source::file(path.as_ref(), &bytes);
        let tables = TableReader::open(&source).unwrap();
        let options = ScanOptions::new().batch_rows(7);
        for def in SET.tables() {
            let mut rows = 0;
            for batch in tables.batches(source, def.name, &options).unwrap() {
                let batch = batch.unwrap();
                assert!((1..=7).contains(&batch.num_rows()), "{}", def.name);
                assert_eq!(batch.schema(), def.schema(), "{}", def.name);
                rows += batch.num_rows();
            }
            assert!(rows > 0, "{}", def.name);
        }
        let err = tables.batches(source, "nope", &options).err().unwrap();
        assert_eq!(
            err.to_string(),
            "no table \"nope\" in the nytprof tables: the set has files, lines, subs, calls"
        );
    }
}
