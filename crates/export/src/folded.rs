//! TODO: the folded exporter.

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// Writes `profile` as folded to `out`.
pub fn write_folded(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let _ = (profile, options, out);
    Ok(())
}
