//! xtask support for the hpcrun format: test prerequisites, generators, peer benchmarks.

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace, peers};

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

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
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
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for hpcrun"),
    }
}

/// `cargo xtask bench-peers hpcrun [SIZE_MB] [--peer PATH] [--runs N]`: times `profcodec validate`
/// on a synthetic 04.00b measurement (default 64 MiB) as a whole process. No reader of hpcrun
/// files installs from a registry (HPCToolkit's hpcprof is built with Spack), so without
/// `--peer` (a program that reads the file given as its argument) the table has profcodec's
/// figures alone.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let mb: u64 = match options.rest.first() {
        Some(s) => s.parse().with_context(|| format!("SIZE_MB: {s}"))?,
        None => 64,
    };
    let dir = ws.target().join("hpcrun-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let file = dir.join(format!("synthetic-{mb}mib.hpcrun"));
    std::fs::write(&file, profcodec_benches::hpcrun::file(mb << 20, 1))
        .with_context(|| format!("writing {}", file.display()))?;
    let peer = options
        .peer
        .as_ref()
        .map(|p| peers::CommandLine::new(p).arg(&file));
    let profcodec = peers::profcodec(ws)?;
    let rows = [peers::Row {
        workload: format!("hpcrun 04.00b, synthetic, {mb} MiB"),
        input: file.clone(),
        ours: peers::validate(&profcodec, &file),
        peer_name: match &options.peer {
            Some(p) => format!("`{}`", p.display()),
            None => "none on a registry".into(),
        },
        peer,
        target: 1.0,
    }];
    peers::compare(&rows, options.runs())
}
