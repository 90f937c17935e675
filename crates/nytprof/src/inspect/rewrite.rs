//! `rewrite`: a v5.0 file streamed into a new one, or a Pynytprof file converted.

use std::io::Write;
use std::path::Path;

use profcodec_common::inspect::{Error, RewriteOptions, RewriteReport, Source};

use super::invalid;
use crate::{Record, parse, pynytprof};

/// Decodes `input` and encodes it again into `out`, which does not exist yet: a v5.0 file at
/// the zlib level it states (else the profiler's default 6), streamed; a Pynytprof file
/// converted into the v5.0 layout (`--to nytprof`, the only target). The output is created
/// only once the input is known to convert; a failure while writing leaves it half-written,
/// for the caller, which chose `out`, to remove.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    match options.to.as_deref() {
        None | Some("nytprof") | Some("5.0") => {}
        Some(other) => {
            return Err(Error::Usage(format!(
                "nytprof files can be rewritten --to nytprof only, not {other}"
            )));
        }
    }
    let bytes = input.bytes;
    let create =
        || -> Result<_, Error> { Ok(std::io::BufWriter::new(std::fs::File::create(out)?)) };
    let mut report = RewriteReport::default();
    if pynytprof::detect(bytes) {
        let py = pynytprof::parse(bytes).map_err(invalid)?;
        // Refused before the output is created when the counts would make it far larger than
        // the input (one record per counted statement); `convert` checks again, at the cost of
        // one pass over the line table.
        pynytprof::check_output_size(&py, bytes.len() as u64).map_err(invalid)?;
        let mut sink = create()?;
        pynytprof::convert(&py, bytes.len() as u64, &mut sink).map_err(invalid)?;
        sink.flush()?;
        report.dropped.push(
            "Pynytprof has no sub locations or call sites: subs are placed at the script's \
                 lines 0-0 and calls at its line 1"
                .into(),
        );
        return Ok(report);
    }
    let file = parse(bytes).map_err(invalid)?;
    // The level the file states (`!compress=N`, among the text lines that open it).
    let mut level = 6;
    for r in file.plain_records() {
        match r {
            Ok(Record::Option(l)) => {
                if let Some((b"compress", v)) = l.key_value() {
                    level = level_of(v);
                }
            }
            Ok(Record::Attribute(_) | Record::Comment(_)) => {}
            _ => break,
        }
    }
    let mut sink = create()?;
    let (_, summary) = crate::write::rewrite_to(&file, level, &mut sink).map_err(invalid)?;
    if let Some(t) = summary.trailing {
        report.dropped.push(format!(
            "{} bytes after the zlib stream (at byte {:#x}) that are not the profiler's trailer",
            t.size, t.offset
        ));
    }
    sink.flush()?;
    Ok(report)
}

/// The zlib level a rewrite uses: the one the file states, else the profiler's default 6.
fn level_of(value: &[u8]) -> u32 {
    std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|l| *l > 0)
        .unwrap_or(6)
}
