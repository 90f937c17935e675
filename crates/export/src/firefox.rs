//! TODO: the firefox exporter.

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// Writes `profile` as firefox to `out`.
pub fn write_firefox(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let _ = (profile, options, out);
    Ok(())
}
