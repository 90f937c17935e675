//! `rewrite` for HPCToolkit databases: read with the reader into the owned model, write with the
//! writer. A directory gives a directory; a single `.db` file gives a single file of the same
//! kind.
//!
//! The output decodes to exactly the input's content (every field of every file); the layout is
//! profcodec's (hpcprof's section order and alignment), so a database written by profcodec
//! rewrites byte-identically. The database directory's other files (`metrics/default.yaml`,
//! which hpcviewer reads, `src/` with the copied sources, `FORMATS.md`, anything else) are
//! copied unchanged and listed in [`RewriteReport::copied`]; what is not a regular file or
//! folder (a symlink, a FIFO) is not followed and is listed in [`RewriteReport::dropped`].
//!
//! The input is validated first (one pass), and the model copies refuse aliased arrays, so the
//! output is bounded by the input's content.

use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::{Path, PathBuf};

use profcodec_common::inspect::{Error, RewriteOptions, RewriteReport, Source};

use super::{invalid, load};
use crate::files::file_kind;
use crate::model::{ContextMajor, Database, Meta, Traces};
use crate::write::{
    profiles_from_read, write_context_major, write_database, write_meta, write_profiles,
    write_traces,
};
use crate::{CctDb, FileKind, MetaDb, ProfileDb, TraceDb};

/// Rewrites a database directory (or one `.db` file) into `out`, which does not exist yet.
pub(super) fn rewrite(
    input: &Source<'_>,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    if let Some(to) = &options.to
        && to != "4.0"
        && to != "4"
    {
        return Err(Error::Usage(format!(
            "HPCToolkit databases are written as version 4.0 only, not {to}"
        )));
    }
    if input.path.is_dir() {
        return rewrite_dir(input, out);
    }
    let bytes = input.bytes;
    let kind =
        file_kind(bytes).ok_or_else(|| Error::Usage("not an HPCToolkit .db file".to_owned()))?;
    let mut written = Cursor::new(Vec::new());
    match kind {
        FileKind::Meta => {
            let view = MetaDb::parse(bytes).map_err(invalid)?;
            view.validate().map_err(invalid)?;
            write_meta(&Meta::from_read(&view).map_err(invalid)?, &mut written)?;
        }
        FileKind::Profile => {
            let view = ProfileDb::parse(bytes).map_err(invalid)?;
            view.validate().map_err(invalid)?;
            written = write_profiles(&profiles_from_read(&view).map_err(invalid)?, written)?;
        }
        FileKind::Cct => {
            let view = CctDb::parse(bytes).map_err(invalid)?;
            view.validate().map_err(invalid)?;
            let cct = ContextMajor::from_read(&view).map_err(invalid)?;
            written = write_context_major(&cct, written)?;
        }
        FileKind::Trace => {
            let view = TraceDb::parse(bytes).map_err(invalid)?;
            view.validate().map_err(invalid)?;
            written = write_traces(&Traces::from_read(&view).map_err(invalid)?, written)?;
        }
    }
    let mut file = BufWriter::new(File::create(out)?);
    file.write_all(written.get_ref())?;
    file.flush()?;
    Ok(RewriteReport::default())
}

fn rewrite_dir(input: &Source<'_>, out: &Path) -> Result<RewriteReport, Error> {
    // The files as the caller opens them (mapped, a cut one noticed), not read here.
    let files = load(input)?;
    let db = files.database().map_err(invalid)?;
    db.validate().map_err(invalid)?;
    let model = Database::from_read(&db).map_err(invalid)?;
    write_database(&model, out)?;
    if db.profile().is_none() {
        // The writer always makes a profile.db; the input had none, so neither does the output.
        std::fs::remove_file(out.join(FileKind::Profile.file_name()))?;
    }
    let mut report = RewriteReport::default();
    copy_others(input.path, out, &mut report)?;
    Ok(report)
}

/// Copies every file and folder of `input` but the four `.db` files at its top into `out`,
/// byte for byte, in name order.
fn copy_others(input: &Path, out: &Path, report: &mut RewriteReport) -> Result<(), Error> {
    let is_db = |rel: &Path| {
        FileKind::ALL
            .iter()
            .any(|k| rel.as_os_str() == k.file_name())
    };
    // Folders still to copy, relative to `input`; a stack rather than recursion.
    let mut pending = vec![PathBuf::new()];
    while let Some(dir) = pending.pop() {
        let mut entries = std::fs::read_dir(input.join(&dir))?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<Vec<_>, _>>()?;
        entries.sort();
        for name in entries {
            let rel = dir.join(&name);
            if is_db(&rel) {
                continue;
            }
            let from = input.join(&rel);
            let to = out.join(&rel);
            let kind = std::fs::symlink_metadata(&from)?.file_type();
            let shown = rel.to_string_lossy().replace('\\', "/");
            if kind.is_dir() {
                std::fs::create_dir(&to)?;
                pending.push(rel);
            } else if kind.is_file() {
                std::fs::copy(&from, &to)?;
                report.copied.push(shown);
            } else {
                report.dropped.push(format!(
                    "{shown}: not a regular file or folder (not followed, not copied)"
                ));
            }
        }
    }
    report.copied.sort();
    Ok(())
}
