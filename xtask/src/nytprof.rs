//! xtask support for the nytprof format: test prerequisites, generators, peer benchmarks.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{FormatTasks, TestEnv, Workspace, apt_install, run as run_cmd, succeeds};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "nytprof",
    prepare,
    run,
};

/// The interop tests run the real Devel::NYTProf (Debian's libdevel-nytprof-perl): `perl
/// -d:NYTProf`, `Devel::NYTProf::Data`, `dump_profile_data` and `nytprofhtml`.
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
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
        "bench-peers" => match args.first().map(String::as_str) {
            // Inner step, run from a release build: time our full decode of one file.
            Some("--decode") => {
                let file = args.get(1).context("--decode FILE REPS")?;
                let reps: u32 = args.get(2).map_or(Ok(3), |s| s.parse())?;
                let bytes = std::fs::read(file)?;
                let mut best = f64::INFINITY;
                for _ in 0..reps {
                    let t = Instant::now();
                    let p = profcodec_benches::nytprof::decode(&bytes);
                    std::hint::black_box(p.subs.len());
                    best = best.min(t.elapsed().as_secs_f64());
                }
                println!("{best}");
                Ok(())
            }
            _ => bench_peers(ws, args),
        },
        _ => bail!("{cmd} is not implemented for nytprof"),
    }
}

/// Best wall-clock seconds of `reps` runs of `cmd`.
fn time_command(mut make: impl FnMut() -> Command, reps: u32) -> Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..reps {
        let mut cmd = make();
        let t = Instant::now();
        let out = cmd.output()?;
        let s = t.elapsed().as_secs_f64();
        if !out.status.success() {
            bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        best = best.min(s);
    }
    Ok(best)
}

/// CPU seconds (user + system) that `args` (a program and its arguments) takes, measured by
/// bash's `times` for its children: insensitive to other load on a shared machine, unlike
/// wall-clock time.
fn cpu_seconds(args: &[&std::ffi::OsStr]) -> Result<f64> {
    let out = Command::new("bash")
        .arg("-c")
        .arg("\"$@\" > /dev/null || exit 1; times")
        .arg("cpu")
        .args(args)
        .output()?;
    if !out.status.success() {
        bail!("{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let children = text.lines().nth(1).context("no `times` output")?;
    let seconds = |t: &str| -> Option<f64> {
        let (m, s) = t.trim_end_matches('s').split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
    };
    children
        .split_whitespace()
        .map(|t| seconds(t).context("unexpected `times` output"))
        .sum()
}

fn profile(
    dir: &Path,
    name: &str,
    options: &str,
    iterations: u64,
    ws: &Workspace,
) -> Result<PathBuf> {
    let path = dir.join(name);
    if !path.exists() {
        run_cmd(
            Command::new("perl")
                .arg("-d:NYTProf")
                .arg(ws.root.join("testdata/nytprof/workload.pl"))
                .arg(iterations.to_string())
                .env("NYTPROF", format!("file={}{options}", path.display()))
                .stdout(std::process::Stdio::null()),
        )?;
    }
    Ok(path)
}

/// `cargo xtask bench-peers nytprof [ITERATIONS] [REPS]`: profiles `testdata/nytprof/workload.pl`
/// (125000 iterations give about 40 MB uncompressed), then times, side by side, profcodec's
/// full decode into the model (release build) against
/// `Devel::NYTProf::Data->new({filename => ...})`, uncompressed and compressed.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    prepare(ws)?;
    let iterations: u64 = args.first().map_or(Ok(125_000), |s| s.parse())?;
    let reps: u32 = args.get(1).map_or(Ok(3), |s| s.parse())?;
    let dir = ws.target().join("nytprof-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let plain = profile(
        &dir,
        &format!("workload-{iterations}-plain.out"),
        ":compress=0",
        iterations,
        ws,
    )?;
    let zlib = profile(
        &dir,
        &format!("workload-{iterations}-zlib6.out"),
        "",
        iterations,
        ws,
    )?;
    run_cmd(&mut ws.cargo(&["build", "--release", "--quiet", "-p", "xtask"]))?;
    let xtask = ws.target().join("release").join("xtask");
    println!(
        "| file | size | profcodec decode to model, wall (best of {reps}) | Devel::NYTProf::Data->new, wall | speed-up, wall | profcodec, CPU (process) | Perl, CPU (process) | speed-up, CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for file in [&plain, &zlib] {
        let size = std::fs::metadata(file)?.len();
        let ours: f64 = {
            let out = Command::new(&xtask)
                .args(["bench-peers", "nytprof", "--decode"])
                .arg(file)
                .arg(reps.to_string())
                .current_dir(&ws.root)
                .output()?;
            if !out.status.success() {
                bail!("decode failed: {}", String::from_utf8_lossy(&out.stderr));
            }
            String::from_utf8_lossy(&out.stdout).trim().parse()?
        };
        let perl = time_command(
            || {
                let mut c = Command::new("perl");
                c.args([
                    "-MDevel::NYTProf::Data",
                    "-e",
                    "Devel::NYTProf::Data->new({filename => $ARGV[0], quiet => 1})",
                ])
                .arg(file);
                c
            },
            reps,
        )?;
        // CPU time of one whole process each (start-up and reading the file included).
        let mut ours_cpu = f64::INFINITY;
        let mut perl_cpu = f64::INFINITY;
        for _ in 0..reps {
            ours_cpu = ours_cpu.min(cpu_seconds(&[
                xtask.as_os_str(),
                "bench-peers".as_ref(),
                "nytprof".as_ref(),
                "--decode".as_ref(),
                file.as_os_str(),
                "1".as_ref(),
            ])?);
            perl_cpu = perl_cpu.min(cpu_seconds(&[
                "perl".as_ref(),
                "-MDevel::NYTProf::Data".as_ref(),
                "-e".as_ref(),
                "Devel::NYTProf::Data->new({filename => $ARGV[0], quiet => 1})".as_ref(),
                file.as_os_str(),
            ])?);
        }
        println!(
            "| {} | {:.1} MB | {:.3} s ({:.0} MB/s) | {:.3} s | {:.1}x | {:.3} s | {:.3} s | {:.1}x |",
            file.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            size as f64 / 1e6,
            ours,
            size as f64 / 1e6 / ours,
            perl,
            perl / ours,
            ours_cpu,
            perl_cpu,
            perl_cpu / ours_cpu.max(0.001)
        );
    }
    Ok(())
}
