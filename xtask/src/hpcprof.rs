//! xtask support for `profcodec prof`: HPCToolkit's test tool `hpctesttool` (BSD-3-Clause,
//! `../shared/judges/hpctesttool`) installed into a venv under `target/`, for the accuracy test
//! of crates/hpcprof/tests/db_compare.rs (`hpctesttool test db-compare NEW CANONICAL`).

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "hpcprof",
    prepare,
    run: run_task,
};

/// The venv under `target/` hpctesttool is installed into.
const VENV: &str = "hpctesttool-venv";

/// Installs hpctesttool from `../shared/judges/hpctesttool` (with its dependencies from PyPI)
/// when it is not there yet, and returns `PROFCODEC_HPCTESTTOOL`, the venv's Python, which
/// runs it as `python -m hpctesttool`. Without the judge's checkout the test skips itself.
fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let judge = ws.corpus().join("../judges/hpctesttool");
    if !judge.join("pyproject.toml").is_file() {
        eprintln!(
            "xtask: {} is missing: the hpcprof accuracy test is skipped",
            judge.display()
        );
        return Ok(Vec::new());
    }
    let judge = crate::utf8(&judge)?;
    let python = crate::python_venv(ws, VENV, "import hpctesttool", &[judge.as_str()])
        .context("installing hpctesttool")?;
    Ok(vec![(
        "PROFCODEC_HPCTESTTOOL".to_owned(),
        crate::utf8(&python)?,
    )])
}

fn run_task(_ws: &Workspace, cmd: &str, _args: &[String]) -> Result<()> {
    bail!("{cmd} is not implemented for hpcprof")
}
