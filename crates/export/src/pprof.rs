//! TODO: the pprof exporter.

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// Writes `profile` as pprof to `out`.
pub fn write_pprof(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let _ = (profile, options, out);
    Ok(())
}
