//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`, over a [`Source`] the caller opened. The umbrella `profcodec` dispatches to them.
//!
//! One file, or a whole session: a folder of `=statprofiler` files (or a `-template` prefix,
//! whose files are `<prefix>.<48 hex id>.<8 hex ordinal>`) is read process by process, file by
//! file in ordinal order, each file opened through the source's [`Members`](Source::members).
//! Every verb reads each file once:
//! - `info` and `validate` run one counting pass ([`check`](crate::check)), which never holds a
//!   sample's frames and stops at the end of the stream; data after it is a
//!   [`Finding::TrailingData`](profcodec_common::inspect::Finding::TrailingData), measured
//!   without being decoded. A session is summarised once.
//! - `dump` streams flat records as they are decoded: strings and frames are written once, when
//!   first seen, and a sample is one record whose `frames` are frame ids (schema in the CLI
//!   README). Memory: the reader's window, the interned strings and frames, and the open
//!   sample's frame ids (4 bytes a frame).
//! - `rewrite` copies record by record from the reader into the writer (`--to statprofiler`,
//!   `snappy` or `plain`); `--to text` writes the early note's text sample by sample.

use std::path::Path;

use profcodec_common::inspect::{
    Dump, Error, Info, RewriteOptions, RewriteReport, Source, Validated,
};

use crate::Container;
use crate::session::{Process, SessionError, session_of_input};

mod dump;
mod info;
mod rewrite;
mod validate;

/// Why `profcodec merge` writes no file of this format, as the format's own tools combine many
/// inputs instead: what the umbrella says when asked to merge inputs of this format.
pub const NO_MERGE: &str = "a Devel::StatProfiler file holds the samples of one process, and Devel::StatProfiler \
    combines many files by reading them together (statprofilehtml over a session), never \
    into one file";

/// The version and summary of `input`: one counting pass per file; a session is summarised
/// once (counts, no list of its files).
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    info::info(input)
}

/// Decodes everything once, checking every offset, count and cross-reference: one counting
/// pass per file, making the real reader's checks; data after the end of a stream is a finding.
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    validate::validate(input)
}

/// Streams the full content into `dump`: a `file` record per file, strings and frames once
/// each, then one record per sample holding its frame ids.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    dump::dump(input, dump)
}

/// Decodes `input` and encodes it again into `out`, which does not exist yet: a single file
/// into the file `out`, a session into the folder `out`, each file under its own name.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    rewrite::rewrite(input, out, options)
}

/// A decoder error, with its offset.
fn invalid(e: crate::Error) -> Error {
    let offset = e.offset();
    Error::invalid(e, offset)
}

fn container_name(c: Container) -> &'static str {
    match c {
        Container::Snappy => "snappy",
        Container::Plain => "plain",
    }
}

/// The input as a session: a folder of `=statprofiler` files, or a template prefix (a path that
/// is not a file but names `<prefix>.<id>.<ordinal>` files); `None` for a single file.
fn session(input: &Source<'_>) -> Result<Option<Vec<Process>>, Error> {
    session_of_input(input.path, input.bytes).map_err(|e| {
        let offset = match &e {
            SessionError::Invalid { source, .. } => source.offset(),
            _ => None,
        };
        Error::invalid(e, offset)
    })
}

/// This error with `file` named before its message: the file of a session that holds the
/// damage.
fn in_file(e: Error, file: &Path) -> Error {
    match e {
        Error::Invalid { message, offset } => Error::Invalid {
            message: format!("{}: {message}", file.display()),
            offset,
        },
        other => other,
    }
}

/// Runs `each` on every file of the input: the file itself when `session` is `None`, else the
/// session's files in process then ordinal order, with the file's process and path. Each file
/// is opened by the caller, as the input was (mapped when large, a file cut while read
/// reported).
fn each_file(
    input: &Source<'_>,
    session: Option<Vec<Process>>,
    mut each: impl FnMut(Option<(&Process, &Path)>, &[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(procs) = session else {
        return each(None, input.bytes);
    };
    for process in &procs {
        for file in &process.files {
            let member = input.members.open(&file.path)?;
            each(Some((process, &file.path)), (*member).as_ref())?;
        }
    }
    Ok(())
}

/// [`each_file`] over the input's session, if it is one; an error in a session's file names
/// the file.
fn each_named_file(
    input: &Source<'_>,
    mut each: impl FnMut(Option<(&Process, &Path)>, &[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    each_file(input, session(input)?, |place, bytes| {
        each(place, bytes).map_err(|e| match place {
            Some((_, path)) => in_file(e, path),
            None => e,
        })
    })
}
