//! `validate`: the whole database cross-linked, or the single file alone.

use profcodec_common::inspect::{Error, Validated};

use super::invalid;
use crate::files::DatabaseFiles;

pub(super) fn validate(files: &DatabaseFiles<'_>) -> Result<Validated, Error> {
    if files.is_directory() {
        files
            .database()
            .map_err(invalid)?
            .validate()
            .map_err(invalid)?;
        return Ok(Validated::default());
    }
    if let Some(m) = files.meta().map_err(invalid)? {
        m.validate().map_err(invalid)?;
    }
    if let Some(p) = files.profile().map_err(invalid)? {
        p.validate().map_err(invalid)?;
    }
    if let Some(c) = files.cct().map_err(invalid)? {
        c.validate().map_err(invalid)?;
    }
    if let Some(t) = files.trace().map_err(invalid)? {
        t.validate().map_err(invalid)?;
    }
    Ok(Validated::default())
}
