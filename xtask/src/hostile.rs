//! `cargo xtask hostile`: the amplification cases, each at three sizes, converted by
//! `profcodec` (the debug build the tests use) as a whole process. Every conversion must either succeed within the
//! output budget (100 times the input plus 64 MiB, what `convert` applies by default) or be
//! refused with a worded message (exit status 1 or 2); a crash, a silent failure, an output
//! over the budget or a run over a minute fails the task.
//!
//! The inputs are made by `profcodec_benches::hostile` (and, for NYTProf, by Devel::NYTProf
//! profiling a generated Perl program) into `target/hostile/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use profcodec_benches::hostile;

use crate::{Workspace, run};

/// The slowest a conversion of these small inputs may be.
const TIME_LIMIT: Duration = Duration::from_secs(60);

/// One crafted input and the conversions it is put through.
struct Case {
    name: String,
    input: PathBuf,
    targets: &'static [&'static str],
}

const PROFILE_TARGETS: &[&str] = &["folded", "speedscope", "pprof", "callgrind", "firefox"];
const TIMELINE_TARGETS: &[&str] = &["chrome", "perfetto"];
const EVERY_TARGET: &[&str] = &[
    "folded",
    "speedscope",
    "pprof",
    "callgrind",
    "firefox",
    "chrome",
    "perfetto",
];

/// Runs every case; fails when one breaks its budget.
pub(crate) fn run_all(ws: &Workspace) -> Result<()> {
    run(&mut ws.cargo(&["build", "--quiet", "-p", "profcodec-cli"]))?;
    let cli = ws.target().join("debug").join("profcodec");
    let dir = ws.target().join("hostile");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let cases = make_cases(ws, &dir)?;
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir)?;
    println!(
        "{:<32} {:>10} {:<10} {:<8} {:>13} {:>9} {:>7}",
        "case", "input", "target", "outcome", "output", "ratio", "seconds"
    );
    let mut broken = Vec::new();
    for case in &cases {
        let input_bytes = size_of(&case.input);
        let budget = input_bytes.saturating_mul(100) + (64 << 20);
        for target in case.targets {
            let out = out_dir.join(format!("{}.{target}", case.name));
            let started = Instant::now();
            let result = Command::new(&cli)
                .args(["convert", "--to", target, "-o"])
                .arg(&out)
                .arg(&case.input)
                .output()
                .with_context(|| format!("running {}", cli.display()))?;
            let seconds = started.elapsed();
            let stderr = String::from_utf8_lossy(&result.stderr);
            let (outcome, output_bytes) = match result.status.code() {
                Some(0) => ("written", size_of(&out)),
                Some(1 | 2) if !stderr.trim().is_empty() => ("refused", 0),
                _ => ("FAILED", 0),
            };
            println!(
                "{:<32} {:>10} {:<10} {:<8} {:>13} {:>9.1} {:>7.2}",
                case.name,
                input_bytes,
                target,
                outcome,
                output_bytes,
                output_bytes as f64 / input_bytes.max(1) as f64,
                seconds.as_secs_f64()
            );
            let why = if outcome == "FAILED" {
                Some(format!("exit {:?}: {}", result.status, stderr.trim()))
            } else if output_bytes > budget {
                Some(format!("{output_bytes} bytes over the budget of {budget}"))
            } else if seconds > TIME_LIMIT {
                Some(format!("took {seconds:?}"))
            } else {
                None
            };
            if let Some(why) = why {
                broken.push(format!("{} --to {target}: {why}", case.name));
            }
            if out.exists() {
                std::fs::remove_file(&out)?;
            }
        }
    }
    if !broken.is_empty() {
        bail!("amplification budget broken:\n{}", broken.join("\n"));
    }
    eprintln!("xtask: every hostile case is refused or within its budget");
    Ok(())
}

/// Writes the inputs of every case into `dir`.
fn make_cases(ws: &Workspace, dir: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for depth in [1_000usize, 4_000, 16_000] {
        let program = dir.join(format!("chain-{depth}.pl"));
        std::fs::write(&program, hostile::nytprof_chain_program(depth))?;
        let input = dir.join(format!("nytprof-chain-{depth}.out"));
        run(Command::new("perl")
            .arg("-d:NYTProf")
            .arg(&program)
            .env("NYTPROF", format!("file={}:compress=0", input.display()))
            .stdout(std::process::Stdio::null()))
        .context("profiling a generated chain (needs Debian's libdevel-nytprof-perl)")?;
        cases.push(Case {
            name: format!("nytprof-chain-{depth}"),
            input,
            targets: PROFILE_TARGETS,
        });
    }
    for depth in [100u64, 200, 400] {
        let input = dir.join(format!("easyprofiler-deep-{depth}.prof"));
        std::fs::write(&input, hostile::easyprofiler_deep(depth, 10_000))?;
        cases.push(Case {
            name: format!("easyprofiler-deep-{depth}"),
            input,
            targets: EVERY_TARGET,
        });
    }
    for name_len in [16_000usize, 32_000, 65_000] {
        let input = dir.join(format!("easyprofiler-name-{name_len}.prof"));
        std::fs::write(&input, hostile::easyprofiler_long_name(16_000, name_len))?;
        cases.push(Case {
            name: format!("easyprofiler-name-{name_len}"),
            input,
            targets: EVERY_TARGET,
        });
    }
    let demo = ws.root.join("testdata/hpctoolkit/demo.d");
    for lines in [100u32, 1_000, 10_000] {
        let db = dir.join(format!("hpctoolkit-aliased-{lines}.d"));
        hostile::write_hpctoolkit_aliased_database(&demo, &db, lines)?;
        cases.push(Case {
            name: format!("hpctoolkit-aliased-{lines}"),
            input: db,
            targets: TIMELINE_TARGETS,
        });
    }
    Ok(cases)
}

/// The bytes of a file, or of a folder's files.
fn size_of(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => std::fs::read_dir(path)
            .map(|entries| entries.flatten().map(|e| size_of(&e.path())).sum::<u64>())
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}
