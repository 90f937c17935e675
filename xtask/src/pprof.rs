//! xtask support for the pprof export: `go tool pprof`, the real consumer its tests run.

use std::process::Command;

use anyhow::Result;

use crate::{TestEnv, Workspace, apt_install, succeeds};

/// Installs Debian's golang-go when `go` is missing; the tests find it through `PROFCODEC_GO`.
pub(crate) fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    if !succeeds(Command::new("go").arg("version")) {
        apt_install(&["golang-go"])?;
    }
    Ok(vec![("PROFCODEC_GO".to_owned(), "go".to_owned())])
}
