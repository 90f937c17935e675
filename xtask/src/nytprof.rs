//! xtask support for the nytprof format: test prerequisites, generators, peer benchmarks.

use anyhow::{Result, bail};

use crate::{FormatTasks, TestEnv, Workspace, apt_install, succeeds};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "nytprof",
    prepare,
    run,
};

/// The interop tests run the real Devel::NYTProf (Debian's libdevel-nytprof-perl): `perl
/// -d:NYTProf`, `Devel::NYTProf::Data`, `dump_profile_data` and `nytprofhtml`.
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    if !succeeds(std::process::Command::new("perl").args(["-MDevel::NYTProf::Data", "-e1"])) {
        apt_install(&["libdevel-nytprof-perl"])?;
    }
    Ok(Vec::new())
}

fn run(_ws: &Workspace, cmd: &str, _args: &[String]) -> Result<()> {
    bail!("{cmd} is not implemented for nytprof yet")
}
