//! xtask support for the hpcrun format: test prerequisites, generators, peer benchmarks.

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "hpcrun",
    prepare,
    run,
};

/// Installs what the hpcrun tests need: nothing (HPCToolkit is not in Debian or PyPI, so there is
/// no interop test; the corpus holds files its hpcrun wrote).
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

fn run(_ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        // cargo xtask gen-hpcrun OUT [SIZE_MB]: a synthetic 04.00b measurement (default 512 MiB).
        "gen" => {
            let out = args
                .first()
                .context("usage: cargo xtask gen-hpcrun OUT [SIZE_MB]")?;
            let mb: u64 = match args.get(1) {
                Some(s) => s.parse().with_context(|| format!("SIZE_MB: {s}"))?,
                None => 512,
            };
            let bytes = profcodec_benches::hpcrun::file(mb << 20, 1);
            std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;
            eprintln!(
                "xtask: wrote {out} ({} bytes, HPCRUN-profile____04.00b)",
                bytes.len()
            );
            Ok(())
        }
        _ => bail!("{cmd} is not implemented for hpcrun: no peer reader installs from a registry"),
    }
}
