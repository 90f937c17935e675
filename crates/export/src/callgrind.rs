//! TODO: the callgrind exporter.

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// Writes `profile` as callgrind to `out`.
pub fn write_callgrind(
    profile: &Profile,
    options: &ExportOptions,
    out: impl Write,
) -> Result<(), ExportError> {
    let _ = (profile, options, out);
    Ok(())
}
