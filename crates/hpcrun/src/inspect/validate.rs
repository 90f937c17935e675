//! `validate`: the fullest check of a file, once; a folder file by file.

use profcodec_common::inspect::{Error, Finding, Source, Validated};

use super::{file_name, folder, invalid, invalid_in, is_trace, open_member, trailing};
use crate::{MeasurementFolder, TraceView, V4View, Version};

pub(super) fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    if let Some(folder) = folder(input) {
        return validate_folder(input, &folder?);
    }
    let found = validate_file(input.bytes).map_err(invalid)?;
    Ok(Validated::new(found.into_iter().collect()))
}

/// Validates one file: the fullest check, once. A 04.00 profile is viewed and every
/// cross-reference checked (no model is built); an older one is read into the model; a trace is
/// viewed. Bytes after the measurement are a finding.
fn validate_file(data: &[u8]) -> Result<Option<Finding>, crate::Error> {
    if is_trace(data) {
        // A trace has no end marker: records run to the end of the file, and a cut final record
        // is a truncation, so nothing can trail it.
        TraceView::parse(data)?.validate()?;
        return Ok(None);
    }
    if crate::detect_version(data)? == Version::V0400B {
        let view = V4View::parse_prefix(data)?;
        view.validate()?;
        return Ok(trailing(view.end(), data.len()));
    }
    let (_, end) = crate::read_measurement_prefix(data)?;
    Ok(trailing(end, data.len()))
}

/// Validates every file of a folder; the first damaged file ends it, named in the error.
fn validate_folder(input: &Source<'_>, folder: &MeasurementFolder) -> Result<Validated, Error> {
    let mut findings = Vec::new();
    for path in folder.files() {
        let name = file_name(path);
        let member = open_member(input, path)?;
        let found = validate_file((*member).as_ref()).map_err(|e| invalid_in(&name, e))?;
        findings.extend(found);
    }
    Ok(Validated::new(findings))
}
