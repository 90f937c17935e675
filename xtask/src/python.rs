//! xtask support for the Python package (crates/python): its pytest suite in `cargo xtask test`
//! and `cargo xtask bench-peers python`.
//!
//! Both use the venv the hpctoolkit tests make (`target/hatchet-venv`, hatchet from PyPI),
//! with maturin, pytest and pyarrow added from PyPI, and install the package into it from a
//! wheel that maturin builds: the dev profile for the tests (the workspace's debug build is
//! mostly reused), with the package's feature `sql` (`profcodec.sql` and
//! `profcodec.export_parquet`, which the suite compares with `profcodec sql` and `profcodec
//! export`), and the release profile without it for the benchmark.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::{Workspace, run};

/// The venv's Python: the hpctoolkit tests' venv (made when missing) with hatchet, and
/// maturin, pytest and pyarrow (which `Input.tables()` returns).
fn python(ws: &Workspace) -> Result<PathBuf> {
    crate::python_venv(
        ws,
        crate::hpctoolkit::HATCHET_VENV,
        "import hatchet, maturin, pytest, pyarrow",
        &["llnl-hatchet", "maturin>=1.9.4,<2", "pytest", "pyarrow>=15"],
    )
}

/// Builds the package's wheel with `profile` (`dev` or `release`) and the cargo `features`
/// of crates/python, and installs it into the venv of `python`, replacing any earlier build.
fn install(ws: &Workspace, python: &Path, profile: &str, features: &[&str]) -> Result<()> {
    install_from(ws, python, profile, features, profile)
}

/// [`install`], the wheel built into `target/python-wheels/<folder>` (emptied first), so that
/// builds for different venvs do not remove each other's wheel.
pub(crate) fn install_from(
    ws: &Workspace,
    python: &Path,
    profile: &str,
    features: &[&str],
    folder: &str,
) -> Result<()> {
    let wheels = ws.target().join("python-wheels").join(folder);
    if wheels.exists() {
        std::fs::remove_dir_all(&wheels)?;
    }
    let started = std::time::Instant::now();
    let mut maturin = Command::new(python);
    ws.build_env(&mut maturin);
    maturin.args(["-m", "maturin", "build", "--quiet", "--profile", profile]);
    if !features.is_empty() {
        maturin.arg("--features").arg(features.join(","));
    }
    run(maturin
        .arg("--manifest-path")
        .arg(ws.root.join("crates/python/Cargo.toml"))
        .arg("--interpreter")
        .arg(python)
        .arg("--out")
        .arg(&wheels)
        .current_dir(&ws.root))
    .context("building the Python package with maturin")?;
    let elapsed = started.elapsed();
    let wheel = std::fs::read_dir(&wheels)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| anyhow!("maturin wrote no wheel into {}", wheels.display()))?;
    eprintln!(
        "xtask: maturin built the {profile} wheel (features: {}) in {elapsed:.0?}: {:.1} MB",
        if features.is_empty() {
            "none".to_owned()
        } else {
            features.join(",")
        },
        std::fs::metadata(&wheel)?.len() as f64 / 1e6
    );
    run(crate::pip_install(python)
        .args(["--force-reinstall", "--no-deps"])
        .arg(&wheel))
}

/// `cargo xtask test`'s Python part: the package built and installed into the venv, then its
/// pytest suite (crates/python/tests) on the shared `corpus`, hatchet required, with the
/// command line (`PROFCODEC_CLI`) whose `convert` and `top` the package's must equal.
pub(crate) fn test(ws: &Workspace, corpus: &Path) -> Result<()> {
    let python = python(ws)?;
    install(ws, &python, "dev", &["sql"])?;
    // The suite compares with `profcodec sql`, which runs the profcodec-sql beside profcodec.
    run(&mut ws.cargo(&[
        "build",
        "--quiet",
        "-p",
        "profcodec-cli",
        "-p",
        "profcodec-sql",
    ]))?;
    run(Command::new(&python)
        .env("PROFCODEC_CLI", ws.target().join("debug").join("profcodec"))
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(ws.root.join("crates/python/tests"))
        .env("PROFCODEC_CORPUS", corpus)
        .env("PROFCODEC_PYTEST_STRICT", "1")
        .current_dir(&ws.root))
    .context("the Python package's pytest suite")
}

/// A generated database of the benchmark: its folder name and `gen-hpctoolkit` arguments.
struct BenchDatabase {
    name: &'static str,
    args: &'static [&'static str],
}

/// The databases of `bench-peers python`: one of 8.4 MB (10,000 contexts, 10 thread profiles,
/// short traces: the size of a real database hatchet's reader is quoted as taking 0.14-0.32 s
/// on, and hatchet takes about that here), and one of more than 500 MB (200,000 contexts, 16
/// thread profiles with traces).
const BENCH_DATABASES: &[BenchDatabase] = &[
    BenchDatabase {
        name: "small-8mb",
        args: &[
            "--profiles",
            "10",
            "--contexts",
            "10000",
            "--metrics",
            "2",
            "--trace-elems",
            "4000",
        ],
    },
    BenchDatabase {
        name: "large-700mb",
        args: &[
            "--profiles",
            "16",
            "--contexts",
            "200000",
            "--metrics",
            "2",
            "--trace-elems",
            "2000000",
            "--samples",
            "100000",
        ],
    },
];

/// `cargo xtask bench-peers python [--runs N] [DATABASE...]`: profcodec.hpctoolkit.read against
/// hatchet's from_hpctoolkit_latest (crates/python/bench/bench_hatchet.py), on the generated
/// databases (made once, under target/bench-python) or on the databases given.
pub(crate) fn bench(ws: &Workspace, args: &[String]) -> Result<()> {
    let mut runs = "5".to_owned();
    let mut databases = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--runs" => runs = it.next().context("--runs needs a value")?.clone(),
            a if a.starts_with("--") => {
                bail!("usage: cargo xtask bench-peers python [--runs N] [DATABASE...]")
            }
            a => databases.push(PathBuf::from(a)),
        }
    }
    if databases.is_empty() {
        for db in BENCH_DATABASES {
            databases.push(generated(ws, db)?);
        }
    }
    let python = python(ws)?;
    install(ws, &python, "release", &[])?;
    run(Command::new(&python)
        .arg(ws.root.join("crates/python/bench/bench_hatchet.py"))
        .args(["--runs", &runs])
        .args(&databases))
}

/// The generated database `db`, written by the hpctoolkit generator when it is not there yet.
fn generated(ws: &Workspace, db: &BenchDatabase) -> Result<PathBuf> {
    let dir = ws.target().join("bench-python").join(db.name);
    // The arguments it was made with, written last: a partial database is made again.
    let stamp = dir.join("gen-args");
    let wanted = db.args.join(" ");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == wanted) {
        return Ok(dir);
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let args: Vec<String> = db.args.iter().map(|&a| a.to_owned()).collect();
    let (config, _) = profcodec_benches::hpctoolkit::parse_args(
        &[args, vec![dir.display().to_string()]].concat(),
    )
    .map_err(|e| anyhow!("{e}"))?;
    let sizes = profcodec_benches::hpctoolkit::generate(&dir, config)
        .with_context(|| format!("writing {}", dir.display()))?;
    eprintln!(
        "xtask: wrote {} ({} MB)",
        dir.display(),
        (sizes.meta + sizes.profile + sizes.cct + sizes.trace) / 1_000_000
    );
    std::fs::write(&stamp, wanted)?;
    Ok(dir)
}
