//! xtask support for the statprofiler format: test prerequisites, generators, peer benchmarks.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use profcodec_benches::statprofiler::{SessionSpec, write_session};

use crate::{FormatTasks, TestEnv, Workspace};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "statprofiler",
    prepare,
    run,
};

/// Devel::StatProfiler is not in Debian and CPAN is out of reach: the corpus dumps are the judge,
/// nothing to install.
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

fn run(_ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        // cargo xtask gen-statprofiler TEMPLATE [SAMPLES] [MAXSIZE]: a synthetic session
        // `TEMPLATE.<id>.<ordinal>` (default 1.55 M samples of at least 4 frames, rotated at
        // 10 MiB), as the bench uses.
        "gen" => {
            let template = PathBuf::from(
                args.first()
                    .context("usage: cargo xtask gen-statprofiler TEMPLATE [SAMPLES] [MAXSIZE]")?,
            );
            let mut spec = SessionSpec::default();
            if let Some(n) = args.get(1) {
                spec.samples = n.parse().context("SAMPLES must be a number")?;
            }
            if let Some(n) = args.get(2) {
                spec.max_size = n.parse().context("MAXSIZE must be a number of bytes")?;
            }
            if let Some(dir) = template.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            let stats = write_session(&template, spec)?;
            println!(
                "{} files, {} bytes on disk, {} samples, {} frames",
                stats.files.len(),
                stats.bytes,
                stats.samples,
                stats.frames
            );
            Ok(())
        }
        _ => bail!(
            "{cmd} is not implemented for statprofiler (the real profiler cannot be installed here)"
        ),
    }
}
