//! `cargo xtask bench-peers report [ITERATIONS] [--uncompressed] [--runs N]`: `profcodec report`
//! timed as a whole process against `nytprofhtml` (Devel::NYTProf's HTML report, with its flame
//! graph) on the same profile of `testdata/nytprof/workload.pl ITERATIONS` (default 20000),
//! uncompressed and (unless `--uncompressed`) with zlib level 6; each writes its report folder
//! anew (`--force`, `--delete`). After the table: the report sizes, each tool's peak memory
//! (`/usr/bin/time`'s maximum resident set, one run each), and how long headless Chromium takes
//! to open the page `profcodec report` wrote (when `chromium` is installed).
//!
//! Then each tool's memory as BENCHMARKS.md measures it, in a fresh memory cgroup per run
//! (`src/cgroup.rs`; root is needed, else this part is skipped with the reason): two runs without
//! a limit give the anonymous peak, the cgroup's own peak and the output (which must agree), then
//! the lowest limit of [`cgroup::LADDER_MIB`] under which the tool succeeds and writes that same
//! output.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{Workspace, cgroup, nytprof, peers};

pub(crate) fn bench(ws: &Workspace, args: &[String]) -> Result<()> {
    nytprof::prepare(ws)?;
    let options = peers::Options::parse(args)?;
    let uncompressed_only = options.rest.iter().any(|a| a == "--uncompressed");
    let iterations: u64 = options
        .rest
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(Ok(20_000), |s| s.parse())?;
    let dir = ws.target().join("report-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let profcodec = peers::profcodec(ws)?;
    let mut rows = Vec::new();
    let mut outputs = Vec::new();
    let variants = [
        (
            "uncompressed",
            format!("workload-{iterations}-plain.out"),
            ":compress=0",
        ),
        (
            "zlib level 6",
            format!("workload-{iterations}-zlib6.out"),
            "",
        ),
    ];
    let variants = if uncompressed_only {
        &variants[..1]
    } else {
        &variants[..]
    };
    for (label, name, profiler_options) in variants {
        let input = nytprof::profile(ws, &dir, name, profiler_options, iterations)?;
        let ours_out = dir.join(format!("{name}.report"));
        let peer_out = dir.join(format!("{name}.nytprofhtml"));
        rows.push(peers::Row {
            workload: format!("NYTProf report, `workload.pl {iterations}`, {label}"),
            input: input.clone(),
            ours: peers::CommandLine::new(&profcodec)
                .arg("report")
                .arg("--force")
                .arg("-o")
                .arg(&ours_out)
                .arg(&input),
            peer: Some(
                peers::CommandLine::new("nytprofhtml")
                    .arg("--delete")
                    .arg("--file")
                    .arg(&input)
                    .arg("--out")
                    .arg(&peer_out),
            ),
            peer_name: "`nytprofhtml`".into(),
            target: 10.0,
        });
        outputs.push((ours_out, peer_out));
    }
    // Checked before the long part, so that a missing permission is said once, up front.
    let cgroups = cgroup::available();
    peers::compare(&rows, options.runs())?;
    println!();
    for (row, (ours, peer)) in rows.iter().zip(&outputs) {
        println!(
            "- {}: report sizes `profcodec report` {} ({} of index.html), `nytprofhtml` {}",
            row.workload,
            peers::human_size(peers::size_of(ours)),
            peers::human_size(peers::size_of(&ours.join("index.html"))),
            peers::human_size(peers::size_of(peer)),
        );
        let ours_rss = peak_memory(&row.ours)?;
        let peer_rss = match &row.peer {
            Some(peer) => peak_memory(peer)?,
            None => 0,
        };
        println!(
            "  peak memory (maximum resident set): `profcodec report` {}, `nytprofhtml` {}",
            peers::human_size(ours_rss),
            peers::human_size(peer_rss),
        );
        if let Some(seconds) = chromium_open(&ours.join("index.html"), &dir)? {
            println!("  headless Chromium opens the page (`--dump-dom`) in {seconds:.2} s");
        }
        match &cgroups {
            Ok(()) => {
                cgroup_memory("`profcodec report`", &row.ours, ours, &|_| false)?;
                if let Some(peer_cmd) = &row.peer {
                    // Perl randomises its hash order per process, and nytprofhtml writes rows and
                    // ids in that order: a fixed seed makes runs comparable. It dates every page
                    // too ("Reported on Sat Nov 28 10:23:07 2026").
                    let inner = peer_cmd.command();
                    let seeded = inner.get_args().fold(
                        peers::CommandLine::new("env")
                            .arg("PERL_HASH_SEED=0")
                            .arg("PERL_PERTURB_KEYS=0")
                            .arg(inner.get_program()),
                        peers::CommandLine::arg,
                    );
                    let dated = |f: &str| f.contains("Reported on");
                    cgroup_memory("`nytprofhtml`", &seeded, peer, &dated)?;
                }
            }
            Err(e) => println!("  memory cgroup: skipped ({e:#})"),
        }
    }
    Ok(())
}

/// Prints `cmd`'s memory in a fresh cgroup: the anonymous and cgroup peaks of a run without a
/// limit, and the lowest limit under which it writes the same `output` (but for the fragments
/// `volatile` names; see [`cgroup::fingerprint`]). Two unlimited runs must write the same, else
/// the comparison would prove nothing; the peaks given are the higher of the two.
fn cgroup_memory(
    name: &str,
    cmd: &peers::CommandLine,
    output: &Path,
    volatile: &dyn Fn(&str) -> bool,
) -> Result<()> {
    // No limit, but a bound, as for the limited runs: a run that hangs is reported, not waited on.
    let unlimited = || -> Result<(cgroup::Outcome, cgroup::Fingerprint)> {
        let outcome = cgroup::run(cmd, None, std::time::Duration::from_secs(3600))?;
        if outcome.ending != cgroup::Ending::Success {
            bail!(
                "{} in a memory cgroup without a limit: {}",
                cmd.display(),
                cgroup::describe(&outcome.ending)
            );
        }
        Ok((outcome, cgroup::fingerprint(output, volatile)?))
    };
    let (first, earlier) = unlimited()?;
    let (mut free, expected) = unlimited()?;
    free.anon_peak = free.anon_peak.max(first.anon_peak);
    free.cgroup_peak = free.cgroup_peak.max(first.cgroup_peak);
    if expected != earlier {
        bail!(
            "{} writes a different {} on every run: no limit can be judged by its output",
            cmd.display(),
            output.display()
        );
    }
    let bound = free.wall * 10 + std::time::Duration::from_secs(60);
    let lowest = cgroup::lowest_limit(cmd, output, &expected, volatile, bound)?;
    let failed: Vec<String> = lowest
        .failed
        .iter()
        .map(|(limit, ending)| format!("{} MiB: {}", limit / cgroup::MIB, cgroup::describe(ending)))
        .collect();
    let passed = match &lowest.passed {
        Some((limit, run)) => format!(
            "lowest limit passed {} MiB (anonymous peak there {}, {:.3} s)",
            limit / cgroup::MIB,
            peers::human_size(run.anon_peak),
            run.wall.as_secs_f64()
        ),
        None => format!(
            "no limit up to {} MiB passed",
            cgroup::LADDER_MIB[cgroup::LADDER_MIB.len() - 1]
        ),
    };
    println!(
        "  memory cgroup, {name}: anonymous peak {}, cgroup peak {} (no limit, higher of 2 runs, {:.3} s); {passed}{}",
        peers::human_size(free.anon_peak),
        peers::human_size(free.cgroup_peak),
        free.wall.as_secs_f64(),
        if failed.is_empty() {
            String::new()
        } else {
            format!("; below it: {}", failed.join(", "))
        },
    );
    Ok(())
}

/// The maximum resident set of one run of `cmd`, in bytes (`/usr/bin/time -f %M`).
fn peak_memory(cmd: &peers::CommandLine) -> Result<u64> {
    let report = std::env::temp_dir().join(format!("xtask-report-rss-{}", std::process::id()));
    let inner = cmd.command();
    let status = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&report)
        .arg(inner.get_program())
        .args(inner.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running /usr/bin/time (Debian's package `time`)")?;
    if !status.success() {
        bail!("{} failed under /usr/bin/time", cmd.display());
    }
    let text = std::fs::read_to_string(&report)?;
    std::fs::remove_file(&report)?;
    let kib: u64 = text
        .lines()
        .last()
        .unwrap_or("")
        .trim()
        .parse()
        .with_context(|| format!("unexpected /usr/bin/time output {text:?}"))?;
    Ok(kib * 1024)
}

/// How long headless Chromium takes to load `page` from the file system and print its DOM,
/// bounded at a minute; `None` without `chromium`.
fn chromium_open(page: &Path, dir: &Path) -> Result<Option<f64>> {
    if Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        return Ok(None);
    }
    let profile = dir.join("chromium-profile");
    let started = std::time::Instant::now();
    let status = Command::new("timeout")
        .args([
            "60",
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-dev-shm-usage",
        ])
        .args(["--no-first-run", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let seconds = started.elapsed().as_secs_f64();
    if !status.success() {
        bail!("chromium did not open {} within a minute", page.display());
    }
    Ok(Some(seconds))
}
