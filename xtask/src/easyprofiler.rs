//! xtask support for the easyprofiler format: test prerequisites and generators.
//!
//! - `cargo xtask gen-easyprofiler large OUT [MB] [MRECORDS]`: a runtime-writer 2.1.0 capture of
//!   at least MB megabytes (default 70) and MRECORDS million records (default 3), as the bench
//!   uses.
//! - `cargo xtask gen-easyprofiler testdata [DIR]`: the small captures of
//!   `testdata/easyprofiler/` (DIR defaults to that folder).
//! - `cargo xtask gen-easyprofiler hostile KIND OUT [N]`: a hostile shape (an input that costs far more than its size)
//!   (`empty-slots`, `long-name`, `flat`, `deep`; see `profcodec_benches::easyprofiler::hostile`),
//!   optionally followed by `--trailing BYTES` zero bytes; `--name BYTES` sets the long name's
//!   length.
//! - `cargo xtask bench-peers easyprofiler --peer PATH [--runs N]`: `profcodec validate` against
//!   the library's own reader (`fillTreesFromFile`) on 4 threads x 15000 frames; PATH is a program
//!   built locally against yse/easy_profiler that calls `fillTreesFromFile` on its argument (the
//!   library is on no registry; BENCHMARKS.md tells how the figures were made).

use anyhow::{Context, Result, bail};
use profcodec_benches::easyprofiler;

use crate::{FormatTasks, TestEnv, Workspace, peers};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "easyprofiler",
    prepare,
    run,
};

/// Installs what the easyprofiler tests need: nothing (the C++ library is on no registry).
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

/// `cargo xtask bench-peers easyprofiler --peer PATH [--runs N]`: writes the capture of
/// [`easyprofiler::frames`] (4 threads x 15000 frames of 51 blocks and one value) and times
/// `profcodec validate FILE` against `PATH FILE`, each a whole process.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let peer = options.peer(
        "build yse/easy_profiler (CMake, -DEASY_PROFILER_NO_GUI=ON) and a program calling \
         fillTreesFromFile on its argument, as BENCHMARKS.md (\"Whole-process comparison with the \
         real readers\") tells, and pass its path",
    )?;
    let dir = ws.target().join("easyprofiler-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let (threads, frames) = (4, 15_000);
    let file = dir.join(format!("frames-{threads}x{frames}.prof"));
    // Written every time: the generator may have changed since.
    std::fs::write(&file, easyprofiler::frames(threads, frames).to_bytes()?)
        .with_context(|| format!("writing {}", file.display()))?;
    let profcodec = peers::profcodec(ws)?;
    let rows = [peers::Row {
        workload: format!(
            "EasyProfiler, {threads} threads x {frames} frames (1 frame, 10 middle, 40 leaf blocks, 1 value)"
        ),
        input: file.clone(),
        ours: peers::validate(&profcodec, &file),
        peer: Some(peers::CommandLine::new(&peer).arg(&file)),
        peer_name: "`fillTreesFromFile` (easy_profiler 2.1.0)".into(),
        target: 3.0,
    }];
    peers::compare(&rows, options.runs())
}

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        "gen" => generate(ws, args),
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for easyprofiler"),
    }
}

fn generate(ws: &Workspace, args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("large") => {
            let out = args
                .get(1)
                .context("usage: gen-easyprofiler large OUT [MB] [MRECORDS]")?;
            let mb: u64 = args.get(2).map_or(Ok(70), |s| s.parse())?;
            let mrec: u64 = args.get(3).map_or(Ok(3), |s| s.parse())?;
            let c = easyprofiler::large(mb << 20, mrec * 1_000_000, 8);
            let bytes = c.to_bytes()?;
            std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;
            let records: usize = c.threads.iter().map(|t| t.records.len()).sum();
            eprintln!("wrote {out}: {} bytes, {records} records", bytes.len());
            Ok(())
        }
        Some("testdata") => {
            let dir = args
                .get(1)
                .map_or_else(|| ws.root.join("testdata/easyprofiler"), Into::into);
            std::fs::create_dir_all(&dir)?;
            for (name, c) in easyprofiler::testdata() {
                let path = dir.join(name);
                std::fs::write(&path, c.to_bytes()?)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
            Ok(())
        }
        Some("hostile") => {
            let usage = "usage: gen-easyprofiler hostile empty-slots|long-name|flat|deep OUT [N] \
                         [--trailing BYTES] [--name BYTES]";
            let (Some(kind), Some(out)) = (args.get(1), args.get(2)) else {
                bail!(usage);
            };
            let mut n = None;
            let mut trailing = 0usize;
            let mut name_len = None;
            let mut rest = args[3..].iter();
            while let Some(a) = rest.next() {
                match a.as_str() {
                    "--trailing" => trailing = rest.next().context(usage)?.parse()?,
                    "--name" => name_len = Some(rest.next().context(usage)?.parse()?),
                    a => n = Some(a.parse()?),
                }
            }
            let c = easyprofiler::hostile(kind, n, name_len).context(usage)?;
            let mut bytes = c.to_bytes()?;
            bytes.resize(bytes.len() + trailing, 0);
            std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;
            eprintln!("wrote {out}: {} bytes", bytes.len());
            Ok(())
        }
        _ => bail!(
            "usage: gen-easyprofiler large OUT [MB] [MRECORDS] | testdata [DIR] | hostile KIND OUT [N]"
        ),
    }
}
