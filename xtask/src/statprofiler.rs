//! xtask support for the statprofiler format: test prerequisites, generators, peer benchmarks.

use anyhow::{Result, bail};

use crate::{FormatTasks, TestEnv, Workspace};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "statprofiler",
    prepare,
    run,
};

/// Installs what the statprofiler tests need; nothing yet.
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

fn run(_ws: &Workspace, cmd: &str, _args: &[String]) -> Result<()> {
    bail!("{cmd} is not implemented for statprofiler yet")
}
