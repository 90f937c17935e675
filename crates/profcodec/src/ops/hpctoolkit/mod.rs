//! `profcodec` CLI operations for HPCToolkit databases (profcodec-hpctoolkit).
//!
//! `info`, `validate` and `dump` (the reading half) live here; `rewrite` (the writing half) lives
//! in `rewrite.rs`.

use std::path::Path;

use super::{Codec, OpError, RewriteOptions, RewriteReport};
use crate::Opened;

mod rewrite;

/// The HPCToolkit codec. Operations not yet implemented answer `OpError::Unsupported`.
pub(super) struct Hpctoolkit;

impl Codec for Hpctoolkit {
    fn rewrite(
        &self,
        input: &Opened,
        out: &Path,
        options: &RewriteOptions,
    ) -> Result<RewriteReport, OpError> {
        rewrite::rewrite(input, out, options)
    }
}
