//! `profcodec rewrite` for HPCToolkit databases: read with the reader into the owned model, write
//! with the writer. A directory gives a directory (every file it had); a single `.db` file gives
//! a single file of the same kind.
//!
//! The output decodes to exactly the input's content (every field of every file); the layout is
//! profcodec's (hpcprof's section order and alignment), so a database written by profcodec
//! rewrites byte-identically.

use std::fs::File;
use std::io::{BufWriter, Cursor, Write};
use std::path::Path;

use profcodec_hpctoolkit::model::{ContextMajor, Database, Meta, Traces};
use profcodec_hpctoolkit::write::{
    profiles_from_read, write_context_major, write_database, write_meta, write_profiles,
    write_traces,
};
use profcodec_hpctoolkit::{CctDb, Error, FileKind, MetaDb, ProfileDb, TraceDb};

use crate::ops::{OpError, RewriteOptions, RewriteReport};
use profcodec::Opened;

fn invalid(e: Error) -> OpError {
    OpError::invalid(e, e.offset())
}

/// Rewrites a database directory (or one `.db` file) into `out`.
pub(super) fn rewrite(
    input: &Opened,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, OpError> {
    if let Some(to) = &options.to
        && to != "4.0"
        && to != "4"
    {
        return Err(OpError::Usage(format!(
            "HPCToolkit databases are written as version 4.0 only, not {to}"
        )));
    }
    if input.path().is_dir() {
        let db = profcodec_hpctoolkit::Database::open(input.path()).map_err(invalid)?;
        let model = Database::from_read(&db).map_err(invalid)?;
        write_database(&model, out)?;
        return Ok(RewriteReport::default());
    }
    let bytes = input.bytes();
    let kind = bytes
        .get(10..14)
        .and_then(|id| <[u8; 4]>::try_from(id).ok())
        .and_then(FileKind::from_format_id)
        .ok_or_else(|| OpError::Usage("not an HPCToolkit .db file".to_owned()))?;
    let mut written = Cursor::new(Vec::new());
    match kind {
        FileKind::Meta => {
            let meta = Meta::from_read(&MetaDb::parse(bytes).map_err(invalid)?).map_err(invalid)?;
            write_meta(&meta, &mut written)?;
        }
        FileKind::Profile => {
            let profiles =
                profiles_from_read(&ProfileDb::parse(bytes).map_err(invalid)?).map_err(invalid)?;
            written = write_profiles(&profiles, written)?;
        }
        FileKind::Cct => {
            let cct =
                ContextMajor::from_read(&CctDb::parse(bytes).map_err(invalid)?).map_err(invalid)?;
            written = write_context_major(&cct, written)?;
        }
        FileKind::Trace => {
            let traces =
                Traces::from_read(&TraceDb::parse(bytes).map_err(invalid)?).map_err(invalid)?;
            written = write_traces(&traces, written)?;
        }
    }
    let mut file = BufWriter::new(File::create(out)?);
    file.write_all(written.get_ref())?;
    file.flush()?;
    Ok(RewriteReport::default())
}
