//! The inspection verbs of this format (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`, over a [`Source`] the caller opened. The umbrella `profcodec` dispatches to them.
//!
//! Each accepts a database directory, whose files are opened through `input.members`
//! ([`DatabaseFiles`]), or a single `.db` file (`input.bytes`). The dump's record schema is
//! documented in the CLI README (section "HPCToolkit").

use std::path::Path;

use profcodec_common::inspect::{
    Dump, Error, Info, RewriteOptions, RewriteReport, Source, Validated,
};

use crate::MetaDb;
use crate::files::DatabaseFiles;

mod dump;
mod info;
mod rewrite;
mod validate;

/// Why `profcodec merge` writes no file of this format, as the format's own tools combine many
/// inputs instead: what the umbrella says when asked to merge inputs of this format.
pub const NO_MERGE: &str = "an HPCToolkit database is what hpcprof makes of measurements, and no HPCToolkit tool \
    merges databases (hpcprof over all the measurements makes one)";

/// Title, time span, who and what was measured, then counts; the versions of the files, once
/// each.
pub fn info(input: &Source<'_>) -> Result<Info, Error> {
    info::info(&load(input)?)
}

/// The whole database through [`Database::validate`](crate::Database::validate) (every file
/// once, cross-links in the same passes: metric ids, profile indexes, trace ctxIds), or the
/// single file's `validate`. Every file of the format ends with its footer, so no bytes can
/// trail it: the findings are always empty.
pub fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    validate::validate(&load(input)?)
}

/// Streams the header, then the records of meta.db, profile.db, cct.db and trace.db in turn.
pub fn dump(input: &Source<'_>, dump: &mut Dump<'_>) -> Result<(), Error> {
    dump::dump(&load(input)?, dump)
}

/// Rewrites a database directory (or one `.db` file) into `out`, which does not exist yet: a
/// directory gives a directory, a single file a single file of the same kind.
pub fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    rewrite::rewrite(input, out, options)
}

/// The files of `input`; a file that cannot be opened is damage of the input, as the caller's
/// message (naming the file) says.
fn load<'a>(input: &Source<'a>) -> Result<DatabaseFiles<'a>, Error> {
    DatabaseFiles::load(input).map_err(|e| Error::invalid(e, None))
}

/// The number of contexts of a database whose tree is `index`, with `elided` elided contexts:
/// the global context (ctxId 0, implicit in meta.db, unless the tree lists it), the entry
/// points and contexts of the tree, and the elided ones. `info`'s `contexts`, `dump`'s
/// `context` records and the rows of the `contexts` table all count this.
fn context_count(index: &crate::read::ContextIndex, elided: usize) -> usize {
    usize::from(!index.contains(0)) + index.len() + elided
}

/// A decoder error as an inspection error, keeping its message and offset.
fn invalid(e: crate::Error) -> Error {
    Error::invalid(e, e.offset())
}

/// A file's version as `major.minor`.
fn version((major, minor): (u8, u8)) -> String {
    format!("{major}.{minor}")
}

/// The identifier kind names, indexed by an identifier's `kind`: meta.db's when there is one
/// (hpcprof's list, lower case), else the kinds hpcprof writes (summary, node, rank, thread,
/// gpudevice, gpucontext, gpustream, core).
fn kind_names(meta: Option<&MetaDb<'_>>) -> Result<Vec<String>, Error> {
    const DEFAULT: [&str; 8] = [
        "summary",
        "node",
        "rank",
        "thread",
        "gpudevice",
        "gpucontext",
        "gpustream",
        "core",
    ];
    match meta {
        Some(m) => m
            .id_names()
            .map(|n| n.map(|n| n.to_ascii_lowercase()).map_err(invalid))
            .collect(),
        None => Ok(DEFAULT.iter().map(|&s| s.to_owned()).collect()),
    }
}
