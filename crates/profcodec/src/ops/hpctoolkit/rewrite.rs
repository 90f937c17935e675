//! `profcodec rewrite` for HPCToolkit databases: read with the reader, write with the writer.

use std::path::Path;

use crate::Opened;
use crate::ops::{OpError, RewriteOptions, RewriteReport};

/// Rewrites a database directory (or one `.db` file) into `out`.
pub(super) fn rewrite(
    input: &Opened,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, OpError> {
    let _ = (out, options);
    Err(OpError::Unsupported {
        format: input.format(),
        op: "rewrite",
    })
}
