//! xtask support for the hpctoolkit format: test prerequisites (hatchet from PyPI in a venv under
//! `target/`) and the synthetic database generator.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::{FormatTasks, TestEnv, Workspace, run, succeeds};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "hpctoolkit",
    prepare,
    run: run_task,
};

/// The venv hatchet is installed into.
fn venv(ws: &Workspace) -> PathBuf {
    ws.root.join("target").join("hatchet-venv")
}

/// Installs `llnl-hatchet` from PyPI into `target/hatchet-venv` when it is not there yet, and
/// returns `PROFCODEC_HATCHET_PYTHON` for the interop test (crates/hpctoolkit/tests/hatchet.rs).
fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let venv = venv(ws);
    let python = venv.join("bin").join("python");
    if !succeeds(Command::new(&python).args(["-c", "import hatchet"])) {
        if !python.exists() {
            run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
                .context("creating the hatchet venv (needs python3 with venv)")?;
        }
        run(Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "llnl-hatchet",
        ]))
        .context("installing llnl-hatchet from PyPI")?;
    }
    let python = python
        .to_str()
        .ok_or_else(|| anyhow!("the venv path is not UTF-8"))?
        .to_owned();
    Ok(vec![("PROFCODEC_HATCHET_PYTHON".to_owned(), python)])
}

/// `cargo xtask gen-hpctoolkit --profiles N --contexts M --metrics K --trace-elems T OUT_DIR`
/// (also `--trace-run R`, the mean run of samples in one context; `--samples S`, `--seed X`).
fn run_task(_ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    if cmd != "gen" {
        bail!("{cmd} is not implemented for hpctoolkit");
    }
    let (config, out) = profcodec_benches::hpctoolkit::parse_args(args).map_err(|e| {
        anyhow!(
            "{e}\nusage: cargo xtask gen-hpctoolkit --profiles N --contexts M --metrics K \
             --trace-elems T [--trace-run R] [--samples S] [--seed X] OUT_DIR"
        )
    })?;
    let started = std::time::Instant::now();
    let sizes = profcodec_benches::hpctoolkit::generate(out, config)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "xtask: wrote {} in {:.1?}: meta.db {} B, profile.db {} B, cct.db {} B, trace.db {} B",
        out.display(),
        started.elapsed(),
        sizes.meta,
        sizes.profile,
        sizes.cct,
        sizes.trace
    );
    Ok(())
}
