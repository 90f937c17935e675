//! `rewrite`: record by record from the reader into the writer, or into the early note's text.

use std::io::{BufWriter, Write};
use std::path::Path;

use profcodec_common::inspect::{Error, RewriteOptions, RewriteReport, Source};

use super::{each_named_file, invalid};
use crate::{Container, PerlString, Reader, Record, Writer, text};

pub(super) fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    if !input.path.is_file() {
        std::fs::create_dir(out)?;
    }
    let mut report = RewriteReport::default();
    each_named_file(input, |place, bytes| {
        let target = match place {
            None => out.to_path_buf(),
            Some((_, path)) => out.join(path.file_name().unwrap_or_default()),
        };
        let r = rewrite_file(bytes, &target, options)?;
        for d in r.dropped {
            if !report.dropped.contains(&d) {
                report.dropped.push(d);
            }
        }
        Ok(())
    })?;
    Ok(report)
}

/// Rewrites one file into `out`, record by record.
fn rewrite_file(
    bytes: &[u8],
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
    let container = match options.to.as_deref() {
        None | Some("statprofiler") | Some("1") => reader.container(),
        Some("snappy") => Container::Snappy,
        Some("plain") => Container::Plain,
        Some("text") => return rewrite_text(bytes, out),
        Some(other) => {
            return Err(Error::Usage(format!(
                "statprofiler files can be rewritten --to statprofiler, snappy, plain or text, not {other}"
            )));
        }
    };
    let file = BufWriter::new(std::fs::File::create(out)?);
    let mut writer = Writer::new(file, &reader.header().clone(), container)?;
    while let Some(event) = reader.next_event().map_err(invalid)? {
        writer.write(&event)?;
    }
    writer.finish()?.flush()?;
    Ok(RewriteReport::default())
}

/// `--to text`: the early note's one-line-per-sample format, written sample by sample as the
/// records are read (the line of the open sample is the only thing held).
fn rewrite_text(bytes: &[u8], out: &Path) -> Result<RewriteReport, Error> {
    let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
    let mut file = BufWriter::new(std::fs::File::create(out)?);
    let mut line = Vec::new();
    let mut op_name: Option<PerlString> = None;
    let mut other = 0u64;
    while let Some(event) = reader.next_event().map_err(invalid)? {
        match event {
            Record::SampleStart {
                weight,
                op_name: op,
            } => {
                line.clear();
                line.extend_from_slice(weight.to_string().as_bytes());
                op_name = Some(op.to_owned());
            }
            Record::Frame(frame) => {
                if op_name.is_some() {
                    text::write_frame(&mut line, &frame);
                }
            }
            Record::SampleEnd { .. } => {
                if let Some(op) = op_name.take() {
                    text::end_line(&mut line, &op);
                    file.write_all(&line)?;
                }
            }
            _ => other += 1,
        }
    }
    file.flush()?;
    Ok(RewriteReport {
        dropped: vec![format!(
            "the text format keeps samples only: the header, {other} other records, \
             sub first lines and string flags are dropped"
        )],
        ..RewriteReport::default()
    })
}
