//! TODO: the speedscope exporter.

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// Writes `profile` as speedscope to `out`.
pub fn write_speedscope(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let _ = (profile, options, out);
    Ok(())
}
