//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`, over a [`Source`] the caller opened. The umbrella `profcodec` dispatches to them.
//!
//! An input is a `.hpcrun` profile, a `.hpctrace` trace (told apart by their magic) or a
//! measurement folder (`*.m`, listed by [`MeasurementFolder`]), whose files are opened through
//! the caller's [`Source::members`], one at a time. Every verb reads each file once: a 04.00
//! profile through the borrowed [`V4View`](crate::V4View) (its CCT and sparse values are never
//! copied), an older one into the owned model, a trace through the borrowed
//! [`TraceView`](crate::TraceView).

use std::path::Path;

use profcodec_common::inspect::{
    Dump, Error, Finding, Info, Member, RewriteOptions, RewriteReport, Source, Validated,
};

use crate::{MeasurementFolder, Version};

mod dump;
mod info;
mod rewrite;
mod validate;

/// Why `profcodec merge` writes no file of this format, as the format's own tools combine many
/// inputs instead: what the umbrella says when asked to merge inputs of this format.
pub const NO_MERGE: &str = "an hpcrun file holds the profile of one thread, and HPCToolkit combines threads, ranks \
    and runs by reading all their measurements together (hpcprof DIR...), never into one \
    file";

/// The version and summary of `input`: one file, or a whole folder summarised once.
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    info::info(input)
}

/// Decodes everything once, checking every offset, count and cross-reference: every file of a
/// folder, the first damaged one ending it, named in the error.
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    validate::validate(input)
}

/// Streams the full content into `dump`: a folder's files one after the other, each announced
/// by a `file` record.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    dump::dump(input, dump)
}

/// Decodes `input` and encodes it again into `out`, which does not exist yet: in its own
/// version, or a profile migrated to 04.00 (`--to 04.00`). A folder is rewritten one file at a
/// time.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    rewrite::rewrite(input, out, options)
}

/// A decoder error as an inspection error, keeping its message and offset.
fn invalid(e: crate::Error) -> Error {
    Error::invalid(e, e.offset())
}

/// The error of file `name` of a folder, named.
fn invalid_in(name: &str, e: crate::Error) -> Error {
    Error::invalid(format!("{name}: {e}"), e.offset())
}

/// Bytes after the end of the measurement, as a finding.
fn trailing(end: u64, len: usize) -> Option<Finding> {
    let len = len as u64;
    (end < len).then(|| Finding::TrailingData {
        offset: end,
        size: len - end,
    })
}

/// True for a trace (`HPCRUN-trace______` magic); anything else is read as a profile.
fn is_trace(data: &[u8]) -> bool {
    data.starts_with(crate::raw::TRACE_PREFIX)
}

/// The folder behind `input`, when it is a directory (a measurement folder).
fn folder(input: &Source<'_>) -> Option<Result<MeasurementFolder, Error>> {
    input
        .is_folder()
        .then(|| MeasurementFolder::open(input.path).map_err(|e| Error::invalid(e, None)))
}

/// The name a folder's file goes by in messages and dump records: its file name.
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// File `path` of a folder input, opened through the caller's members (whose error names it).
fn open_member(input: &Source<'_>, path: &Path) -> Result<Member, Error> {
    input
        .members
        .open(path)
        .map_err(|e| Error::invalid(e, None))
}

/// The version a profile's magic states; for 02.00b, which of its two layouts.
fn profile_version(data: &[u8]) -> Result<&'static str, crate::Error> {
    let v = crate::detect_version(data)?;
    if v == Version::V0200B {
        // Which 02.00b layout only the full read tells.
        return Ok(crate::read_measurement_prefix(data)?.0.version.as_str());
    }
    Ok(v.as_str())
}
