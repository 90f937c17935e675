//! `profcodec` CLI operations for HPCToolkit databases (profcodec-hpctoolkit).
//!
//! `info`, `validate` and `dump` (the reading half) live here, the dump's records in
//! `records.rs`; `rewrite` (the writing half) lives in `rewrite.rs`; `profile` (the database
//! in the format-neutral model, for `top` and `diff`) is [`profcodec::to_profile`], which
//! chooses the profiles. Each accepts a database
//! directory or a single `.db` file; the files are memory-mapped through [`profcodec::open`].
//! The dump's record schema is documented in the CLI README (section "HPCToolkit").

use std::path::Path;

use profcodec_hpctoolkit::{Database, Error, FileKind};

use super::dump::Dump;
use super::{Codec, Info, OpError, RewriteOptions, RewriteReport, Validated};
use profcodec::{Format, Opened};

mod records;
mod rewrite;
#[cfg(test)]
mod tests;

/// The HPCToolkit codec.
pub(super) struct Hpctoolkit;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// The files of the input: a directory's (mapped one by one) or the single file given.
type Files = profcodec::HpctoolkitFiles;

fn version((major, minor): (u8, u8)) -> String {
    format!("{major}.{minor}")
}

impl Codec for Hpctoolkit {
    /// [`profcodec::info`]: title, time span, who and what was measured, then counts.
    fn info(&self, input: &Opened) -> Result<Info, OpError> {
        Ok(profcodec::info(input)?)
    }

    /// The whole database through [`Database::validate`] (every file once, cross-links in the
    /// same passes: metric ids, profile indexes, trace ctxIds), or the single file's `validate`.
    /// Every file of the format ends with its footer, so no bytes can trail it: the findings
    /// are always empty.
    fn validate(&self, input: &Opened) -> Result<Validated, OpError> {
        let files = Files::load(input)?;
        if input.format() == Format::HpctoolkitDatabase {
            let meta = files.bytes(FileKind::Meta).unwrap_or_default();
            let db = Database::from_parts(
                meta,
                files.bytes(FileKind::Profile),
                files.bytes(FileKind::Cct),
                files.bytes(FileKind::Trace),
            )
            .map_err(invalid)?;
            db.validate().map_err(invalid)?;
            return Ok(Validated::default());
        }
        if let Some(m) = files.meta()? {
            m.validate().map_err(invalid)?;
        }
        if let Some(p) = files.profile()? {
            p.validate().map_err(invalid)?;
        }
        if let Some(c) = files.cct()? {
            c.validate().map_err(invalid)?;
        }
        if let Some(t) = files.trace()? {
            t.validate().map_err(invalid)?;
        }
        Ok(Validated::default())
    }

    fn dump(&self, input: &Opened, dump: &mut Dump<'_>) -> Result<(), OpError> {
        let files = Files::load(input)?;
        records::dump(&files, input.format(), dump)
    }

    /// [`profcodec::to_profile`]: a database directory (meta.db and profile.db) or a lone
    /// meta.db (the tree without values).
    fn profile(&self, input: &Opened) -> Result<profcodec_profile::Profile, OpError> {
        Ok(profcodec::to_profile(input)?)
    }

    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        rewrite::rewrite(input, out, options)
    }
}
