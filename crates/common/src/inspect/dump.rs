//! The streaming writer behind `dump`, shared by every format.
//!
//! A dump is a header object followed by a stream of flat records, each serialised the moment the
//! format's reader produces it: memory stays bounded by the largest record, never by the
//! document. Trees are written as records that name their parent by id, so the indentation of a
//! pretty dump is the same at any depth of the tree.
//!
//! Conventions every format follows (the schemas are in the profcodec CLI README):
//! - keys are `snake_case`; every record has a `"record"` key naming its kind first;
//! - ids are numbers, enumerations are `snake_case` names, numbers are JSON numbers;
//! - nothing nests deeper than a record's own fields.
//!
//! Layouts:
//! - `json`: `{"header": {...}, "records": [ {...}, ... ]}` (compact, or `--pretty`);
//! - `ndjson`: the header on the first line as `{"record": "header", ...}`, then one record a
//!   line.
//!
//! On damage the reader's error ends the dump: with `--partial` the document is closed properly
//! with a last `{"record": "error", "message": ..., "offset": ...}` record; without it the output
//! simply stops (and the command exits 1), since what was streamed cannot be taken back.

use std::io::{self, Write};

use serde::Serialize;

use super::Error;

/// The layout of a dump (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DumpLayout {
    /// One JSON document.
    Json,
    /// Newline-delimited JSON: one record a line.
    Ndjson,
}

/// How a dump is written.
#[derive(Debug, Clone, Copy)]
pub struct DumpOptions {
    /// The layout.
    pub layout: DumpLayout,
    /// Indent (`json` only).
    pub pretty: bool,
}

/// The indentation of a record inside the `records` array of a pretty dump.
const RECORD_INDENT: &[u8] = b"    ";

/// A streaming dump: [`Dump::header`] once, then [`Dump::record`] for each record.
pub struct Dump<'w> {
    out: &'w mut dyn Write,
    options: DumpOptions,
    header_written: bool,
    records: u64,
    scratch: Vec<u8>,
}

impl std::fmt::Debug for Dump<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dump")
            .field("options", &self.options)
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

impl<'w> Dump<'w> {
    /// A dump into `out` (which the caller buffers).
    pub fn new(out: &'w mut dyn Write, options: DumpOptions) -> Self {
        Dump {
            out,
            options,
            header_written: false,
            records: 0,
            scratch: Vec::new(),
        }
    }

    /// Writes the header: format, version and whatever the format states once per file. Call
    /// it once, before the first record.
    pub fn header(&mut self, header: &impl Serialize) -> Result<(), Error> {
        debug_assert!(!self.header_written, "the dump header is written once");
        self.header_written = true;
        match self.options.layout {
            DumpLayout::Json => {
                self.out.write_all(b"{\"header\":")?;
                if self.options.pretty {
                    self.out.write_all(b" ")?;
                    self.write_pretty(header, b"")?;
                } else {
                    crate::json::to_writer(&mut *self.out, header, false)
                        .map_err(io::Error::other)?;
                }
                self.out.write_all(if self.options.pretty {
                    b",\n\"records\": ["
                } else {
                    b",\"records\":["
                })?;
            }
            DumpLayout::Ndjson => {
                self.scratch.clear();
                crate::json::to_writer(&mut self.scratch, header, false)
                    .map_err(io::Error::other)?;
                // `{"record":"header",` followed by the header's own fields.
                self.out.write_all(b"{\"record\":\"header\"")?;
                match self.scratch.get(1..) {
                    Some(b"}") | None => self.out.write_all(b"}")?,
                    Some(rest) => {
                        self.out.write_all(b",")?;
                        self.out.write_all(rest)?;
                    }
                }
                self.out.write_all(b"\n")?;
            }
        }
        Ok(())
    }

    /// Writes one record: a flat object whose first key is `"record"`.
    pub fn record(&mut self, record: &impl Serialize) -> Result<(), Error> {
        if !self.header_written {
            self.header(&serde_json::Map::new())?;
        }
        match self.options.layout {
            DumpLayout::Json => {
                if self.options.pretty {
                    self.out
                        .write_all(if self.records == 0 { b"\n" } else { b",\n" })?;
                    self.out.write_all(RECORD_INDENT)?;
                    self.write_pretty(record, RECORD_INDENT)?;
                } else {
                    if self.records > 0 {
                        self.out.write_all(b",")?;
                    }
                    crate::json::to_writer(&mut *self.out, record, false)
                        .map_err(io::Error::other)?;
                }
            }
            DumpLayout::Ndjson => {
                crate::json::to_writer(&mut *self.out, record, false).map_err(io::Error::other)?;
                self.out.write_all(b"\n")?;
            }
        }
        self.records += 1;
        Ok(())
    }

    /// Closes the document after the last record.
    pub fn finish(mut self) -> Result<(), Error> {
        if !self.header_written {
            self.header(&serde_json::Map::new())?;
        }
        if self.options.layout == DumpLayout::Json {
            self.out
                .write_all(if self.options.pretty && self.records > 0 {
                    b"\n]}\n"
                } else {
                    b"]}\n"
                })?;
        }
        self.out.flush()?;
        Ok(())
    }

    /// Closes the document with a last `error` record (`--partial`): what was decoded before
    /// the damage stays a well-formed dump.
    pub fn finish_with_error(mut self, error: &Error) -> Result<(), Error> {
        #[derive(Serialize)]
        struct ErrorRecord<'a> {
            record: &'static str,
            message: String,
            offset: Option<u64>,
            #[serde(skip_serializing_if = "Option::is_none")]
            field: Option<&'a str>,
        }
        let offset = match error {
            Error::Invalid { offset, .. } => *offset,
            _ => None,
        };
        self.record(&ErrorRecord {
            record: "error",
            message: error.to_string(),
            offset,
            field: None,
        })?;
        self.finish()
    }

    /// Pretty-prints `value`, indenting every line after the first by `indent`.
    fn write_pretty(&mut self, value: &impl Serialize, indent: &[u8]) -> Result<(), Error> {
        self.scratch.clear();
        crate::json::to_writer(&mut self.scratch, value, true).map_err(io::Error::other)?;
        for (i, line) in self.scratch.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.out.write_all(b"\n")?;
                self.out.write_all(indent)?;
            }
            self.out.write_all(line)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Rec {
        record: &'static str,
        id: u32,
        parent: Option<u32>,
    }

    fn dump(layout: DumpLayout, pretty: bool, n: u32, fail: bool) -> String {
        let mut out = Vec::new();
        let mut d = Dump::new(&mut out, DumpOptions { layout, pretty });
        d.header(&serde_json::json!({"format": "test", "version": "1"}))
            .unwrap();
        for id in 0..n {
            d.record(&Rec {
                record: "node",
                id,
                parent: id.checked_sub(1),
            })
            .unwrap();
        }
        if fail {
            d.finish_with_error(&Error::invalid("file ends early", Some(0x10)))
                .unwrap();
        } else {
            d.finish().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn json_layouts_parse_and_hold_every_record() {
        for pretty in [false, true] {
            for n in [0, 1, 3] {
                let text = dump(DumpLayout::Json, pretty, n, false);
                let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["header"]["format"], "test");
                assert_eq!(v["records"].as_array().unwrap().len(), n as usize);
            }
        }
    }

    #[test]
    fn pretty_indentation_does_not_grow_with_depth() {
        let text = dump(DumpLayout::Json, true, 500, false);
        let widest = text.lines().map(|l| l.len() - l.trim_start().len()).max();
        assert!(widest.unwrap() <= 8, "{widest:?}");
    }

    #[test]
    fn ndjson_is_one_record_a_line_after_the_header() {
        let text = dump(DumpLayout::Ndjson, false, 3, false);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["record"], "header");
        assert_eq!(lines[0]["format"], "test");
        assert_eq!(lines[3]["id"], 2);
    }

    #[test]
    fn partial_dump_ends_with_the_error_and_stays_well_formed() {
        for layout in [DumpLayout::Json, DumpLayout::Ndjson] {
            let text = dump(layout, false, 2, true);
            let last: serde_json::Value = match layout {
                DumpLayout::Json => {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    v["records"].as_array().unwrap().last().unwrap().clone()
                }
                DumpLayout::Ndjson => serde_json::from_str(text.lines().last().unwrap()).unwrap(),
            };
            assert_eq!(last["record"], "error");
            assert_eq!(last["offset"], 16);
        }
    }
}
