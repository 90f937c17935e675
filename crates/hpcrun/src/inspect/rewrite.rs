//! `rewrite`: a file decoded and written again, in its own version or (a profile) migrated to
//! 04.00.

use std::path::Path;

use profcodec_common::inspect::{Error, Finding, RewriteOptions, RewriteReport, Source};

use super::{invalid, is_trace, trailing};

pub(super) fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    if input.is_folder() {
        return Err(Error::Usage(
            "a measurement folder is rewritten one file at a time: name a .hpcrun or \
             .hpctrace file"
                .to_owned(),
        ));
    }
    let target = options
        .to
        .as_deref()
        .map(|t| t.trim_end_matches(['b', 'l']));
    let data = input.bytes;
    if is_trace(data) {
        let mut t = crate::read_trace(data).map_err(invalid)?;
        match target {
            None => {}
            Some("01.01") => t.version = crate::TraceVersion::V0101B,
            Some("01.00") if t.flags == 0 => t.version = crate::TraceVersion::V0100B,
            Some(to) => {
                return Err(Error::Usage(format!(
                    "an hpctrace file is rewritten as 01.01 (or as 01.00 when its flags are 0), not {to}"
                )));
            }
        }
        std::fs::write(out, crate::write_trace(&t))?;
        return Ok(RewriteReport::default());
    }
    let (m, end) = crate::read_measurement_prefix(data).map_err(invalid)?;
    let (m, mut dropped) = match target {
        None => (m, Vec::new()),
        Some(to) if to == &m.version.as_str()[..5] => (m, Vec::new()),
        Some("04.00") => crate::migrate::to_v4(&m),
        Some(to) => {
            return Err(Error::Usage(format!(
                "an hpcrun {} file is rewritten in its own version or migrated to 04.00, not {to}",
                m.version.as_str()
            )));
        }
    };
    if let Some(Finding::TrailingData { offset, size }) = trailing(end, data.len()) {
        dropped.push(format!(
            "{size} bytes after the end of the measurement (at byte {offset:#x})"
        ));
    }
    let bytes = crate::write_measurement(&m).map_err(|e| Error::Usage(e.to_string()))?;
    std::fs::write(out, bytes)?;
    Ok(RewriteReport {
        dropped,
        ..RewriteReport::default()
    })
}
