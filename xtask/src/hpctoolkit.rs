//! xtask support for the hpctoolkit format: test prerequisites (hatchet from PyPI in a venv under
//! `target/`) and the synthetic database generator.

use std::path::PathBuf;

use anyhow::{Context, Result, anyhow, bail};

use crate::{FormatTasks, TestEnv, Workspace, peers};

/// The venv under `target/` hatchet is installed into (the Python package's tests use it too).
pub(crate) const HATCHET_VENV: &str = "hatchet-venv";

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "hpctoolkit",
    prepare,
    run: run_task,
};

/// Installs `llnl-hatchet` from PyPI into `target/hatchet-venv` when it is not there yet, and
/// returns `PROFCODEC_HATCHET_PYTHON` for the interop test (crates/hpctoolkit/tests/hatchet.rs).
fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let python = crate::python_venv(ws, HATCHET_VENV, "import hatchet", &["llnl-hatchet"])?;
    Ok(vec![(
        "PROFCODEC_HATCHET_PYTHON".to_owned(),
        crate::utf8(&python)?,
    )])
}

/// `cargo xtask gen-hpctoolkit --profiles N --contexts M --metrics K --trace-elems T OUT_DIR`
/// (also `--trace-run R`, the mean run of samples in one context; `--samples S`, `--seed X`).
fn run_task(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        "gen" => generate(args),
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for hpctoolkit"),
    }
}

/// The database `bench-peers` reads, unless other `gen-hpctoolkit` options are given: 9.1 MB,
/// about the size of a real 8.4 MB database hatchet is quoted as reading in 0.14-0.32 s (not in
/// the corpus): a CPU run of 16 threads, one CPUTIME metric with its scopes and summaries, no trace.
const BENCH_SHAPE: &[&str] = &[
    "--profiles",
    "16",
    "--contexts",
    "13000",
    "--metrics",
    "1",
    "--trace-elems",
    "0",
];

/// `cargo xtask bench-peers hpctoolkit [--runs N] [GEN OPTIONS]`: writes a synthetic database
/// ([`BENCH_SHAPE`], or the `gen-hpctoolkit` options given) and times `profcodec validate DIR`
/// against hatchet's `GraphFrame.from_hpctoolkit_latest(DIR)` (PyPI llnl-hatchet, in the venv
/// the tests use), each a whole process.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    let env = prepare(ws)?;
    let python = env
        .iter()
        .find(|(k, _)| k == "PROFCODEC_HATCHET_PYTHON")
        .map(|(_, v)| v.clone())
        .context("prepare gave no hatchet python")?;
    let options = peers::Options::parse(args)?;
    let dir = ws.target().join("hpctoolkit-bench-peers");
    let shape: Vec<String> = if options.rest.is_empty() {
        BENCH_SHAPE.iter().map(|s| (*s).to_owned()).collect()
    } else {
        options.rest.clone()
    };
    let db = dir.join(shape.join("").replace("--", "-").trim_start_matches('-'));
    let mut gen_args = shape.clone();
    gen_args.push(db.to_string_lossy().into_owned());
    if db.exists() {
        std::fs::remove_dir_all(&db)?;
    }
    std::fs::create_dir_all(&db)?;
    generate(&gen_args)?;
    let profcodec = peers::profcodec(ws)?;
    let row = |workload: String, db: PathBuf| peers::Row {
        workload,
        ours: peers::validate(&profcodec, &db),
        peer: Some(
            peers::CommandLine::new(&python)
                .arg("-c")
                .arg("import sys, hatchet; hatchet.GraphFrame.from_hpctoolkit_latest(sys.argv[1])")
                .arg(&db),
        ),
        input: db,
        peer_name: "hatchet `GraphFrame.from_hpctoolkit_latest`".into(),
        target: 50.0,
    };
    let mut rows = vec![row(
        format!("HPCToolkit database, synthetic ({})", shape.join(" ")),
        db.clone(),
    )];
    // The largest real database of the corpus, made by HPCToolkit's hpcprof.
    let gamess = ws.corpus().join("hpctoolkit/hatchet-gamess");
    if gamess.join("meta.db").is_file() {
        rows.push(row(
            "HPCToolkit database, corpus `hatchet-gamess` (hpcprof, 65 profiles, 44 metrics)"
                .into(),
            gamess,
        ));
    }
    peers::compare(&rows, options.runs())
}

pub(crate) fn generate(args: &[String]) -> Result<()> {
    let (config, out) = profcodec_benches::hpctoolkit::parse_args(args).map_err(|e| {
        anyhow!(
            "{e}\nusage: cargo xtask gen-hpctoolkit --profiles N --contexts M --metrics K \
             --trace-elems T [--trace-run R] [--samples S] [--seed X] OUT_DIR"
        )
    })?;
    let started = std::time::Instant::now();
    let sizes = profcodec_benches::hpctoolkit::generate(out, config)
        .with_context(|| format!("writing {}", out.display()))?;
    eprintln!(
        "xtask: wrote {} in {:.1?}: meta.db {} B, profile.db {} B, cct.db {} B, trace.db {} B",
        out.display(),
        started.elapsed(),
        sizes.meta,
        sizes.profile,
        sizes.cct,
        sizes.trace
    );
    Ok(())
}
