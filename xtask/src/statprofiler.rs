//! xtask support for the statprofiler format: test prerequisites, generators, peer benchmarks.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use profcodec_benches::statprofiler::{SessionSpec, write_session};

use crate::{FormatTasks, TestEnv, Workspace, peers, run as run_cmd};

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

const USAGE: &str =
    "usage: cargo xtask gen-statprofiler TEMPLATE [SAMPLES] [MAXSIZE] [PROCESSES] [BRANCHING]";

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        // cargo xtask gen-statprofiler TEMPLATE [SAMPLES] [MAXSIZE] [PROCESSES] [BRANCHING]: a
        // synthetic session `TEMPLATE.<id>.<ordinal>` (default 1.55 M samples of at least 4
        // frames in 1 process, each sub calling 3 others, rotated at 10 MiB), as the bench uses.
        // BRANCHING 1 keeps the distinct call paths few at any size (the memory measurements).
        "gen" => {
            let template = PathBuf::from(args.first().context(USAGE)?);
            let mut spec = SessionSpec::default();
            if let Some(n) = args.get(1) {
                spec.samples = n.parse().context("SAMPLES must be a number")?;
            }
            if let Some(n) = args.get(2) {
                spec.max_size = n.parse().context("MAXSIZE must be a number of bytes")?;
            }
            if let Some(n) = args.get(3) {
                spec.processes = n.parse().context("PROCESSES must be a number")?;
            }
            if let Some(n) = args.get(4) {
                spec.branching = n.parse().context("BRANCHING must be a number")?;
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
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for statprofiler"),
    }
}

/// `perl` with a local build of Devel::StatProfiler (its `blib` folder) on `@INC`.
pub(crate) fn perl_with(blib: &Path) -> peers::CommandLine {
    peers::CommandLine::new("perl")
        .arg("-I")
        .arg(blib.join("lib"))
        .arg("-I")
        .arg(blib.join("arch"))
}

/// `cargo xtask bench-peers statprofiler --peer BLIB [SECONDS] [--runs N]`: profiles
/// `testdata/statprofiler/workload.pl SECONDS` (default 60) with the real Devel::StatProfiler,
/// then times `profcodec validate SESSION_DIR` against Devel::StatProfiler::Reader reading every
/// trace of every file of the session, each a whole process.
///
/// Devel::StatProfiler is on no registry this project reaches: BLIB is the `blib` folder of a
/// local build of mbarbon/devel-statprofiler (BENCHMARKS.md tells how), used both to profile and
/// to read.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let blib = options.peer(
        "build mbarbon/devel-statprofiler locally (Debian's libmodule-build-withxspp-perl and \
         libextutils-xspp-perl, then its Module::Build script) as BENCHMARKS.md (\"Whole-process \
         comparison with the real readers\") tells, and pass its blib folder",
    )?;
    let seconds: u64 = options.rest.first().map_or(Ok(60), |s| s.parse())?;
    let program = ws.root.join("testdata/statprofiler/workload.pl");
    let session = ws
        .target()
        .join("statprofiler-bench-peers")
        .join(format!("workload-{seconds}s"));
    let template = session.join("statprof.out");
    let files = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect()
    };
    let first = files(&session).into_iter().min();
    if first.is_none_or(|f| peers::stale(&f, &[&program])) {
        if session.exists() {
            std::fs::remove_dir_all(&session)?;
        }
        std::fs::create_dir_all(&session)?;
        let profiler = perl_with(&blib)
            .arg(format!(
                "-MDevel::StatProfiler=-template,{},-interval,10",
                template.display()
            ))
            .arg(&program)
            .arg(seconds.to_string());
        run_cmd(profiler.command().stdout(std::process::Stdio::null()))?;
    }
    let profcodec = peers::profcodec(ws)?;
    let reader = perl_with(&blib)
        .arg("-MDevel::StatProfiler::Reader")
        .arg("-e")
        .arg(
            "for my $f (sort glob(\"$ARGV[0]/statprof.out.*\")) { \
             my $r = Devel::StatProfiler::Reader->new($f); while (my $t = $r->read_trace) {} }",
        )
        .arg(&session);
    let rows = [peers::Row {
        workload: format!(
            "StatProfiler, `workload.pl {seconds}` profiled by Devel::StatProfiler 0.56 (-interval 10, Snappy)"
        ),
        input: session.clone(),
        ours: peers::validate(&profcodec, &session),
        peer: Some(reader),
        peer_name: "`Devel::StatProfiler::Reader`, every trace".into(),
        target: 25.0,
    }];
    peers::compare(&rows, options.runs())
}
