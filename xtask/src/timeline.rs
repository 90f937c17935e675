//! xtask support for profcodec-timeline: test prerequisites (Perfetto's Python package, whose
//! `perfetto_trace_pb2` decodes the traces the tests write, from PyPI in a venv under
//! `target/`) and `cargo xtask bench-peers timeline`, the large trace.db conversion measured as
//! a whole process.

use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace, run, succeeds};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "timeline",
    prepare,
    run: run_task,
};

/// Installs PyPI's `perfetto` into `target/timeline-venv` when it is not there yet, and returns
/// `PROFCODEC_PERFETTO_PYTHON` for the format crates' timeline tests (through
/// `profcodec_testkit::timeline::decoded`).
pub(crate) fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let python = crate::python_venv(
        ws,
        "timeline-venv",
        "from perfetto.protos.perfetto.trace import perfetto_trace_pb2",
        &["perfetto"],
    )?;
    Ok(vec![(
        "PROFCODEC_PERFETTO_PYTHON".to_owned(),
        crate::utf8(&python)?,
    )])
}

/// `cargo xtask bench-peers timeline [GB]`: writes a synthetic database whose trace.db holds at
/// least GB gigabytes (default 2) under `target/`, converts it with the release `profcodec
/// convert --to perfetto` under `/usr/bin/time` (peak memory, wall and CPU time, with the load
/// average before and after), prints the figures and deletes the files.
fn run_task(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    if cmd != "bench-peers" {
        bail!("{cmd} is not implemented for timeline (the generator is gen-hpctoolkit)");
    }
    let gb: f64 = args.first().map_or(Ok(2.0), |s| s.parse())?;
    if !succeeds(Command::new("/usr/bin/time").arg("true")) {
        crate::apt_install(&["time"])?;
    }
    let dir = ws.target().join("timeline-bench");
    let db = dir.join("big.d");
    let out = dir.join("big.perfetto-trace");
    let _ = std::fs::remove_dir_all(&dir);
    // 64 profiles of N samples each; runs of 16 samples on average in one calling context.
    let profiles = 64u64;
    let elems = ((gb * 1e9) / 12.0 / profiles as f64).ceil() as u64;
    let config = profcodec_benches::hpctoolkit::SyntheticConfig {
        profiles: profiles as u32,
        contexts: 2000,
        trace_elems: elems,
        trace_run: 16,
        ..Default::default()
    };
    let started = std::time::Instant::now();
    profcodec_benches::hpctoolkit::generate(&db, config)
        .with_context(|| format!("writing {}", db.display()))?;
    eprintln!(
        "xtask: generated {} in {:.1?}",
        db.display(),
        started.elapsed()
    );
    run(&mut ws.cargo(&["build", "--release", "--quiet", "-p", "profcodec-cli"]))?;
    let input = std::fs::metadata(db.join("trace.db"))?.len();
    let profcodec = ws.target().join("release").join("profcodec");
    // CPU time (user + sys) beside wall time: on a shared machine the wall time measures the
    // load as much as the conversion.
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    eprintln!("xtask: load average before: {}", load().trim());
    let mut convert = Command::new("/usr/bin/time");
    convert
        .args(["-f", "%e s wall, %U s user, %S s sys, %M KiB peak resident"])
        .arg(&profcodec)
        .args(["convert", "--to", "perfetto", "--force", "-o"])
        .arg(&out)
        .arg(&db);
    run(&mut convert)?;
    eprintln!("xtask: load average after: {}", load().trim());
    let output = std::fs::metadata(&out)?.len();
    eprintln!(
        "xtask: trace.db {input} bytes ({:.2} GB) -> Perfetto trace {output} bytes",
        input as f64 / 1e9
    );
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
