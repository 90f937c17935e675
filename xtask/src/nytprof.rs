//! xtask support for the nytprof format: test prerequisites, generators, peer benchmarks.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace, apt_install, peers, run as run_cmd, succeeds};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "nytprof",
    prepare,
    run,
};

/// The interop tests run the real Devel::NYTProf (Debian's libdevel-nytprof-perl): `perl
/// -d:NYTProf`, `Devel::NYTProf::Data`, `dump_profile_data` and `nytprofhtml`.
pub(crate) fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    if !succeeds(Command::new("perl").args(["-MDevel::NYTProf::Data", "-e1"])) {
        apt_install(&["libdevel-nytprof-perl"])?;
    }
    Ok(Vec::new())
}

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        // cargo xtask gen-nytprof OUT [SIZE_MB] [LEVEL]: a synthetic profile (default 40 MiB,
        // uncompressed; a LEVEL 0-9 deflates it).
        "gen" => {
            let out = args
                .first()
                .context("usage: cargo xtask gen-nytprof OUT [SIZE_MB] [LEVEL]")?;
            let mb: u64 = args.get(1).map_or(Ok(40), |s| s.parse())?;
            let level = args.get(2).map(|s| s.parse()).transpose()?;
            let bytes = profcodec_benches::nytprof::file(mb << 20, level);
            std::fs::write(out, &bytes)?;
            eprintln!("xtask: wrote {out} ({} bytes)", bytes.len());
            Ok(())
        }
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for nytprof"),
    }
}

/// Profiles `testdata/nytprof/workload.pl ITERATIONS` with the real Devel::NYTProf into `dir`
/// (again when the program changed since), with the profiler's `options`.
pub(crate) fn profile(
    ws: &Workspace,
    dir: &Path,
    name: &str,
    options: &str,
    iterations: u64,
) -> Result<PathBuf> {
    let path = dir.join(name);
    let program = ws.root.join("testdata/nytprof/workload.pl");
    if peers::stale(&path, &[&program]) {
        run_cmd(
            Command::new("perl")
                .arg("-d:NYTProf")
                .arg(&program)
                .arg(iterations.to_string())
                .env("NYTPROF", format!("file={}{options}", path.display()))
                .stdout(std::process::Stdio::null()),
        )?;
    }
    Ok(path)
}

/// `cargo xtask bench-peers nytprof [ITERATIONS] [--runs N]`: profiles
/// `testdata/nytprof/workload.pl` (80000 iterations give about 41 MB uncompressed: many subs,
/// recursion, string evals) with the real Devel::NYTProf, uncompressed and with its default zlib
/// level 6, then times `profcodec validate FILE` against
/// `perl -MDevel::NYTProf::Data -e 'Devel::NYTProf::Data->new({filename => FILE})'`, each a whole
/// process, interleaved ([`peers::compare`]).
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    prepare(ws)?;
    let options = peers::Options::parse(args)?;
    let iterations: u64 = options.rest.first().map_or(Ok(80_000), |s| s.parse())?;
    let dir = ws.target().join("nytprof-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let plain = profile(
        ws,
        &dir,
        &format!("workload-{iterations}-plain.out"),
        ":compress=0",
        iterations,
    )?;
    let zlib = profile(
        ws,
        &dir,
        &format!("workload-{iterations}-zlib6.out"),
        "",
        iterations,
    )?;
    let profcodec = peers::profcodec(ws)?;
    let data = |file: &Path| {
        peers::CommandLine::new("perl")
            .arg("-MDevel::NYTProf::Data")
            .arg("-e")
            .arg("Devel::NYTProf::Data->new({filename => $ARGV[0], quiet => 1})")
            .arg(file)
    };
    let rows = [
        peers::Row {
            workload: format!("NYTProf, `workload.pl {iterations}`, uncompressed"),
            input: plain.clone(),
            ours: peers::validate(&profcodec, &plain),
            peer: Some(data(&plain)),
            peer_name: "`Devel::NYTProf::Data->new`".into(),
            target: 10.0,
        },
        peers::Row {
            workload: format!("NYTProf, `workload.pl {iterations}`, zlib level 6"),
            input: zlib.clone(),
            ours: peers::validate(&profcodec, &zlib),
            peer: Some(data(&zlib)),
            peer_name: "`Devel::NYTProf::Data->new`".into(),
            target: 4.0,
        },
    ];
    peers::compare(&rows, options.runs())
}
