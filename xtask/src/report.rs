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
//!
//! `cargo xtask bench-peers report-statprofiler [ITERATIONS...] --peer BLIB [--runs N]`: the same
//! against `statprofilehtml` (Devel::StatProfiler's HTML report), on profiles of the same
//! `workload.pl ITERATIONS` (default 2000000) made by Devel::StatProfiler; see
//! [`bench_statprofiler`].

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{Workspace, cgroup, nytprof, peers, run as run_cmd, statprofiler};

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
            ours: report_command(&profcodec, &ours_out, &input),
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
    // nytprofhtml dates every page ("Reported on Sat Nov 28 10:23:07 2026").
    let dated = |f: &str| f.contains("Reported on");
    compare_and_measure(&rows, &outputs, options.runs(), &dir, &dated)
}

/// How to build Devel::StatProfiler, said when `--peer` is missing.
const BUILD_STATPROFILER: &str = "Devel::StatProfiler is on no registry this project reaches: \
    build mbarbon/devel-statprofiler (754126d, 0.56) outside the repository with Debian's \
    libmodule-build-perl, libmodule-build-withxspp-perl, libextutils-xspp-perl, \
    libextutils-cppguess-perl, libtext-microtemplate-perl, libfile-sharedir-perl and \
    libarchive-zip-perl, a Build.PL as BENCHMARKS.md (\"Whole-process comparison with the real \
    readers\") tells, then `perl Build.PL && ./Build`, and pass its blib folder";

/// `cargo xtask bench-peers report-statprofiler [ITERATIONS...] --peer BLIB [--runs N]`:
/// profiles `testdata/nytprof/workload.pl ITERATIONS` (default 2000000; each count given makes
/// one row) with Devel::StatProfiler from BLIB, the `blib` folder of a local build
/// (`-file,OUT,-interval,10`: one Snappy-compressed file), then times `profcodec report FILE -o
/// DIR --force` against `statprofilehtml FILE` run from that `blib`, interleaved, each a whole
/// process. statprofilehtml always writes `./statprof/`: it runs in a scratch folder of its own,
/// whose `statprof/` is removed before each run, untimed. After the table come the same sizes
/// and memory figures as for `nytprofhtml`.
pub(crate) fn bench_statprofiler(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let blib = options.peer(BUILD_STATPROFILER)?;
    let blib = std::path::absolute(&blib)?;
    let script = blib.join("script").join("statprofilehtml");
    if !script.is_file() {
        bail!(
            "{} has no script/statprofilehtml: --peer takes the blib folder of a built \
             Devel::StatProfiler; {BUILD_STATPROFILER}",
            blib.display()
        );
    }
    let mut counts = Vec::new();
    for arg in &options.rest {
        if arg.starts_with("--") {
            bail!("bench-peers report-statprofiler: unknown option {arg}");
        }
        counts.push(
            arg.parse::<u64>()
                .with_context(|| format!("ITERATIONS must be a number, not {arg:?}"))?,
        );
    }
    if counts.is_empty() {
        counts.push(2_000_000);
    }
    let dir = ws.target().join("report-statprofiler-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let program = ws.root.join("testdata/nytprof/workload.pl");
    let profcodec = peers::profcodec(ws)?;
    let mut rows = Vec::new();
    let mut outputs = Vec::new();
    for iterations in counts {
        let input = dir.join(format!("workload-{iterations}.statprof"));
        if peers::stale(&input, &[&program, &blib.join("lib/Devel/StatProfiler.pm")]) {
            eprintln!("xtask: profiling workload.pl {iterations} with Devel::StatProfiler");
            let profiler = statprofiler::perl_with(&blib)
                .arg(format!(
                    "-MDevel::StatProfiler=-file,{},-interval,10",
                    input.display()
                ))
                .arg(&program)
                .arg(iterations.to_string());
            run_cmd(profiler.command().stdout(Stdio::null()))?;
        }
        let ours_out = dir.join(format!("workload-{iterations}.report"));
        let scratch = dir.join(format!("workload-{iterations}.statprofilehtml"));
        std::fs::create_dir_all(&scratch)?;
        let peer_out = scratch.join("statprof");
        rows.push(peers::Row {
            workload: format!(
                "StatProfiler report, `workload.pl {iterations}` profiled by Devel::StatProfiler 0.56 (-interval 10)"
            ),
            input: input.clone(),
            ours: report_command(&profcodec, &ours_out, &input),
            peer: Some(
                statprofiler::perl_with(&blib)
                    .arg(&script)
                    .arg(&input)
                    .in_dir(&scratch)
                    .fresh(&peer_out),
            ),
            peer_name: "`statprofilehtml`".into(),
            target: 10.0,
        });
        outputs.push((ours_out, peer_out));
    }
    // statprofilehtml dates every page ("Generated on Sat Nov 28 11:33:51 2026"), and its flame
    // graphs (flamegraph.pl's) give each frame a random colour.
    let volatile = |f: &str| f.contains("Generated on") || f.contains("fill=\"rgb(");
    compare_and_measure(&rows, &outputs, options.runs(), &dir, &volatile)
}

/// Times `rows` ([`peers::compare`]), then prints for each row, whose (ours, peer) report folders
/// `outputs` names: the report sizes, each tool's maximum resident set, how long Chromium takes
/// to open our page, and each tool's memory in a cgroup ([`cgroup_memory`]; the fragments
/// `peer_volatile` names are those the peer changes on every run).
fn compare_and_measure(
    rows: &[peers::Row],
    outputs: &[(PathBuf, PathBuf)],
    runs: usize,
    dir: &Path,
    peer_volatile: &dyn Fn(&str) -> bool,
) -> Result<()> {
    // Checked before the long part, so that a missing permission is said once, up front.
    let cgroups = cgroup::available();
    peers::compare(rows, runs)?;
    println!();
    for (row, (ours, peer)) in rows.iter().zip(outputs) {
        let peer_name = &row.peer_name;
        println!(
            "- {}: report sizes `profcodec report` {} ({} of index.html), {peer_name} {}",
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
            "  peak memory (maximum resident set): `profcodec report` {}, {peer_name} {}",
            peers::human_size(ours_rss),
            peers::human_size(peer_rss),
        );
        if let Some(seconds) = chromium_open(&ours.join("index.html"), dir)? {
            println!("  headless Chromium opens the page (`--dump-dom`) in {seconds:.2} s");
        }
        match &cgroups {
            Ok(()) => {
                cgroup_memory("`profcodec report`", &row.ours, ours, &|_| false)?;
                if let Some(peer_cmd) = &row.peer {
                    // Both peers are Perl programs: Perl randomises its hash order per process,
                    // and the peers write rows and ids in that order; a fixed seed makes runs
                    // comparable.
                    let seeded = peer_cmd
                        .clone()
                        .env("PERL_HASH_SEED", "0")
                        .env("PERL_PERTURB_KEYS", "0");
                    cgroup_memory(peer_name, &seeded, peer, peer_volatile)?;
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
/// the comparison would prove nothing: then only the peaks are given, with that finding. The
/// peaks given are the higher of the two runs.
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
        // Said, not fatal: the peaks still stand, and the other rows and tools are still
        // measured.
        println!(
            "  memory cgroup, {name}: anonymous peak {}, cgroup peak {} (no limit, higher of 2 runs, {:.3} s); no limit judged: the 2 runs wrote different {}",
            peers::human_size(free.anon_peak),
            peers::human_size(free.cgroup_peak),
            free.wall.as_secs_f64(),
            output.display()
        );
        return Ok(());
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
    let status = cmd
        .wrapped(
            "/usr/bin/time".as_ref(),
            &[
                "-f".as_ref(),
                "%M".as_ref(),
                "-o".as_ref(),
                report.as_os_str(),
            ],
        )?
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

/// `profcodec report --force -o OUT INPUT`, the command both report benches time.
fn report_command(profcodec: &Path, out: &Path, input: &Path) -> peers::CommandLine {
    peers::CommandLine::new(profcodec)
        .arg("report")
        .arg("--force")
        .arg("-o")
        .arg(out)
        .arg(input)
}
