//! `validate`: the fullest decode, once.

use profcodec_common::inspect::{Error, Finding, Source, Validated};

use super::{invalid, load_error};
use crate::{ModelOptions, Profile, pynytprof};

/// Decodes everything once, checking every offset, count and cross-reference: every record
/// into the model, evals collapsed as `Devel::NYTProf::Data->new` does. Bytes after the zlib
/// stream that are not the profiler's trailer are a [`Finding::TrailingData`].
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    let bytes = input.bytes;
    if pynytprof::detect(bytes) {
        pynytprof::parse(bytes).map_err(invalid)?;
        return Ok(Validated::default());
    }
    let (_, report, error) = Profile::from_bytes_report(bytes, ModelOptions::default());
    if let Some(e) = error {
        return Err(load_error(e, &report));
    }
    let findings = report
        .trailing
        .map(|t| Finding::TrailingData {
            offset: t.offset,
            size: t.size,
        })
        .into_iter()
        .collect();
    Ok(Validated::new(findings))
}
