//! Project automation, run as `cargo xtask <command>` (see `.cargo/config.toml`).
//!
//! - `cargo xtask test`: THE test command (README, `.ci/run`). Installs what the tests need when it
//!   is missing, then runs rustfmt, clippy, the whole workspace's tests with the shared corpus, the
//!   Python package's pytest suite (`src/python.rs`), `interop-spark` (below: DuckDB and Spark
//!   on a 1,000-rank database's export, about 40 s), the docs with warnings denied, the
//!   hostile amplification cases (`cargo xtask hostile`), a replay of every fuzz target's corpus
//!   on stable Rust, and the packaging checks (no unused dependency, `cargo publish --dry-run
//!   --workspace`).
//! - `cargo xtask floors`: the shape `ARCHITECTURE.md` draws: outside its own crate a format is
//!   named only by the umbrella's dispatch, no source file imports a file that imports it back,
//!   and test support stays out of the published crates (`src/floors.rs`).
//! - `cargo xtask corpus-outputs --bin PROFCODEC OUT_DIR`: what a `profcodec` binary prints and
//!   writes for every input of the corpus and `testdata/`, to `diff -r` with another binary's
//!   (`src/outputs.rs`).
//! - `cargo xtask hostile`: small crafted inputs (deep call chains, long names, aliased trace
//!   lines) at three sizes each, converted to every target by `profcodec`: each is
//!   refused with a message or stays within the output budget (`src/hostile.rs`).
//! - `cargo xtask gen-<format> ARGS...`: large-input generators (for benches and experiments).
//! - `cargo xtask bench-peers <format> [ARGS...] [--runs N] [--peer PATH]`: the `profcodec
//!   validate` process timed against the real tool's reader on the same input, interleaved
//!   (`peers.rs`); `--peer` names a locally built reader where the real one is on no registry
//!   (easyprofiler, statprofiler; optional for hpcrun). BENCHMARKS.md has the figures.
//! - `cargo xtask bench-scale [FORMAT...] [--base SIZE] [--limit SIZE] [--scales 1,4,16]
//!   [--keep]`: each verb at 1x, 4x and 16x of an input size, in a memory cgroup and unlimited
//!   (`src/scale.rs`).
//! - `cargo xtask interop-spark [DATABASE]`: DuckDB and Spark (pyspark, `local[2]`) read
//!   `profcodec export --parquet`'s dataset of an HPCToolkit database (by default one of 1,000
//!   ranks that `gen-hpctoolkit` writes) and give `profcodec sql`'s load imbalance per function
//!   (max over mean across ranks) and top 10 functions (`src/tables.rs`, which also installs
//!   DuckDB for the tests).
//! - `cargo xtask bench-peers tables [--runs N] [GEN OPTIONS]`: `profcodec export --parquet` and
//!   `profcodec sql` over a synthetic HPCToolkit database of 2.3 GB (`src/tables.rs`).
//!
//! - `cargo xtask bench-peers report [ITERATIONS] [--runs N]`: `profcodec report` against
//!   `nytprofhtml` on the same NYTProf profile (`src/report.rs`), with each tool's memory in a
//!   memory cgroup of its own (`src/cgroup.rs`).
//! - `cargo xtask bench-peers report-statprofiler [ITERATIONS...] --peer BLIB [--runs N]`: the
//!   same against `statprofilehtml`, from a local build of Devel::StatProfiler (`src/report.rs`).
//! - `cargo xtask bench-peers nytprof-suite [--runs N] [--dist NAME]`: 1,000 NYTProf profiles of a
//!   Debian-packaged CPAN distribution's test suite merged by `profcodec merge`/`top` against
//!   `nytprofmerge` + `nytprofcsv`, per-sub totals compared (`src/suite.rs`).
//!
//! Each format's prerequisites, generators and peer benchmarks live in `src/<format>.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

mod api;
mod cgroup;
mod easyprofiler;
mod export;
mod floors;
mod fuzz;
mod hostile;
mod hpcprof;
mod hpcrun;
mod hpctoolkit;
mod msrv;
mod nytprof;
mod outputs;
mod peers;
mod pprof;
mod python;
mod report;
mod scale;
mod spark;
mod statprofiler;
mod suite;
mod tables;
mod timeline;

/// Environment variables a format's tests need, as `(name, value)` pairs.
pub(crate) type TestEnv = Vec<(String, String)>;

/// What every format module of the xtask offers.
pub(crate) struct FormatTasks {
    /// The format's name, as used in `gen-<name>` and `bench-peers <name>`.
    name: &'static str,
    /// Installs what this format's tests need (Debian or PyPI packages) when it is missing.
    /// Returns environment variables the tests need.
    prepare: fn(&Workspace) -> Result<TestEnv>,
    /// Runs `gen-<name>` or `bench-peers <name>` (`cmd` is `"gen"` or `"bench-peers"`).
    run: fn(&Workspace, cmd: &str, args: &[String]) -> Result<()>,
}

const FORMATS: &[FormatTasks] = &[
    hpctoolkit::TASKS,
    hpcrun::TASKS,
    hpcprof::TASKS,
    nytprof::TASKS,
    easyprofiler::TASKS,
    statprofiler::TASKS,
    timeline::TASKS,
];

/// Paths of the workspace.
pub(crate) struct Workspace {
    /// The workspace root.
    root: PathBuf,
    /// Whether cargo keeps incremental-compilation state (on for benches and generators;
    /// off for `cargo xtask test`, which builds each test target once: CI's clean build then
    /// writes no incremental folders, several GB that a CI machine's disk need not hold).
    incremental: bool,
}

impl Workspace {
    fn find() -> Result<Self> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .context("xtask has no parent folder")?
            .to_path_buf();
        Ok(Workspace {
            root,
            incremental: true,
        })
    }

    /// The shared corpus: `PROFCODEC_CORPUS` when set, else `../shared/corpus`.
    pub(crate) fn corpus(&self) -> PathBuf {
        std::env::var_os("PROFCODEC_CORPUS")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.root.join("../shared/corpus"))
    }

    /// `target/` of the workspace.
    pub(crate) fn target(&self) -> PathBuf {
        std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.root.join("target"))
    }

    /// A `cargo` command run in the workspace root.
    pub(crate) fn cargo(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.current_dir(&self.root).args(args);
        self.build_env(&mut cmd);
        cmd
    }

    /// The environment of a command that runs cargo (cargo itself, maturin).
    pub(crate) fn build_env(&self, cmd: &mut Command) {
        if !self.incremental {
            cmd.env("CARGO_INCREMENTAL", "0");
        }
    }
}

/// Runs `cmd`, failing with its description when it fails.
pub(crate) fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// True when `cmd` runs and exits 0 (its output is discarded).
pub(crate) fn succeeds(cmd: &mut Command) -> bool {
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The Python of the venv `target/NAME`, made when missing, with the PyPI `packages` installed
/// when the Python statement `check` (an import) fails in it.
pub(crate) fn python_venv(
    ws: &Workspace,
    name: &str,
    check: &str,
    packages: &[&str],
) -> Result<PathBuf> {
    let venv = ws.target().join(name);
    let python = venv.join("bin").join("python");
    if !succeeds(Command::new(&python).args(["-c", check])) {
        if !python.exists() {
            run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
                .with_context(|| format!("creating target/{name} (needs python3 with venv)"))?;
        }
        run(pip_install(&python).args(packages))
            .with_context(|| format!("installing {} from PyPI", packages.join(", ")))?;
    }
    Ok(python)
}

/// `python -m pip install`, quiet, for the arguments to add.
pub(crate) fn pip_install(python: &Path) -> Command {
    let mut cmd = Command::new(python);
    cmd.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    cmd
}

/// A path as the UTF-8 string an environment variable passes on.
pub(crate) fn utf8(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))
}

/// Installs Debian packages (as root, which every machine of this project is).
pub(crate) fn apt_install(packages: &[&str]) -> Result<()> {
    run(Command::new("apt-get").arg("update").arg("-qq"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

fn test(ws: &Workspace) -> Result<()> {
    let mut env = Vec::new();
    for format in FORMATS {
        env.extend((format.prepare)(ws).with_context(|| format!("preparing {}", format.name))?);
    }
    env.extend(export::prepare(ws).context("preparing the exporters' consumers")?);
    env.extend(pprof::prepare(ws).context("preparing go tool pprof")?);
    env.extend(tables::prepare(ws).context("preparing the tables' consumers")?);
    let corpus = ws.corpus();
    if !corpus.is_dir() {
        bail!("the shared corpus is missing at {}", corpus.display());
    }
    let corpus = corpus.canonicalize()?;
    run(&mut ws.cargo(&["fmt", "--all", "--check"]))?;
    floors::check(ws)?;
    run(&mut ws.cargo(&[
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    run(ws
        .cargo(&["test", "--workspace", "--no-fail-fast"])
        .env("PROFCODEC_CORPUS", &corpus)
        .envs(env.iter().map(|(k, v)| (k, v))))?;
    python::test(ws, &corpus)?;
    tables::interop_spark(ws, &[])?;
    spark::spark_source(ws, &[])?;
    run(ws
        .cargo(&["doc", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    api::check(ws)?;
    msrv::check(ws)?;
    newcomer_examples(ws)?;
    hostile::run_all(ws)?;
    fuzz::replay(ws)?;
    packaging(ws)?;
    eprintln!("xtask: every check passed");
    Ok(())
}

/// A newcomer's five questions, each answered by a short example of a format crate, run on a
/// file of `testdata/`: `(package, example, input)`.
const NEWCOMER_EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "profcodec-hpctoolkit",
        "top_functions",
        "testdata/hpctoolkit/demo.d",
    ),
    (
        "profcodec-nytprof",
        "hottest_lines",
        "testdata/nytprof/hello.nytprof.out",
    ),
    (
        "profcodec-easyprofiler",
        "totals",
        "testdata/easyprofiler/small_v210.prof",
    ),
    (
        "profcodec-statprofiler",
        "folded",
        "testdata/statprofiler/session",
    ),
    (
        "profcodec-hpcrun",
        "top_call_paths",
        "testdata/hpcrun/demo-04.00b.hpcrun",
    ),
];

/// Runs every newcomer example (built by the tests already) and checks it printed something.
fn newcomer_examples(ws: &Workspace) -> Result<()> {
    for (package, example, input) in NEWCOMER_EXAMPLES {
        let mut cmd = ws.cargo(&["run", "--quiet", "-p", package, "--example", example, "--"]);
        cmd.arg(ws.root.join(input));
        eprintln!("xtask: running {cmd:?}");
        let out = cmd
            .output()
            .with_context(|| format!("could not start {cmd:?}"))?;
        if !out.status.success() || out.stdout.is_empty() {
            bail!(
                "example {example} of {package} failed or printed nothing: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    Ok(())
}

/// The packaging checks: no declared dependency goes unused (cargo-machete, installed from
/// crates.io when missing), and every package of the workspace packages and builds as crates.io
/// would see it (`cargo publish --dry-run --workspace`, cargo's multi-package publish, which
/// resolves the workspace's own crates from the packages it makes).
fn packaging(ws: &Workspace) -> Result<()> {
    // Run as its own binary: through the toolchain's cargo (as xtask runs it) the subcommand
    // takes its own name for a path.
    let machete = || {
        let mut cmd = Command::new("cargo-machete");
        cmd.current_dir(&ws.root);
        cmd
    };
    if !succeeds(machete().arg("--version")) {
        run(&mut ws.cargo(&["install", "cargo-machete", "--locked", "--quiet"]))?;
    }
    // It reads every Cargo.toml below the root, fuzz/ (a workspace of its own) included.
    run(machete().arg("."))?;
    // The package step builds each crate in target/package: the same target directory, so the
    // dependencies built for the tests are reused.
    forget_unpacked_packages()?;
    forget_packaged_builds(ws)?;
    run(&mut ws.cargo(&["publish", "--dry-run", "--workspace", "--allow-dirty"]))
}

/// Removes what earlier builds left of the workspace's packages in `target/debug`. The dry run
/// verifies each package against the others as crates of a local registry, and cargo never
/// rebuilds a registry crate of a name and version it has built before (a registry's sources
/// cannot change): a rerun would check a package against another's stale build. The workspace's
/// own builds of these packages go with them, and the next test run builds them again.
fn forget_packaged_builds(ws: &Workspace) -> Result<()> {
    let debug = ws.target().join("debug");
    for folder in [".fingerprint", "deps", "build"] {
        let Ok(entries) = std::fs::read_dir(debug.join(folder)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if !(name.starts_with("profcodec") || name.starts_with("libprofcodec")) {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut ws = Workspace::find()?;
    match args.first().map(String::as_str) {
        Some("test") => {
            ws.incremental = false;
            test(&ws)
        }
        Some("fuzz-replay") => fuzz::replay(&ws),
        Some("bench-peers") if args.get(1).is_some_and(|a| a == "python") => {
            python::bench(&ws, &args[2..])
        }
        Some("bench-peers") if args.get(1).is_some_and(|a| a == "tables") => {
            tables::bench(&ws, &args[2..])
        }
        Some("bench-peers") if args.get(1).is_some_and(|a| a == "report") => {
            report::bench(&ws, &args[2..])
        }
        Some("bench-peers") if args.get(1).is_some_and(|a| a == "nytprof-suite") => {
            suite::bench(&ws, &args[2..])
        }
        Some("bench-peers") if args.get(1).is_some_and(|a| a == "report-statprofiler") => {
            report::bench_statprofiler(&ws, &args[2..])
        }
        Some("interop-spark") => tables::interop_spark(&ws, &args[1..]),
        Some("spark-source") => spark::spark_source(&ws, &args[1..]),
        Some("bench-scale") => scale::bench_scale(&ws, &args[1..]),
        Some("hostile") => hostile::run_all(&ws),
        Some("floors") => floors::check(&ws),
        Some("corpus-outputs") => outputs::run(&ws, &args[1..]),
        Some("bench-peers") => {
            let name = args
                .get(1)
                .context("usage: cargo xtask bench-peers <format> [ARGS...]")?;
            let format = FORMATS
                .iter()
                .find(|f| f.name == name)
                .with_context(|| format!("unknown format {name}"))?;
            (format.run)(&ws, "bench-peers", &args[2..])
        }
        Some(cmd) if cmd.starts_with("gen-") => {
            let name = &cmd["gen-".len()..];
            let format = FORMATS
                .iter()
                .find(|f| f.name == name)
                .with_context(|| format!("unknown format {name}"))?;
            (format.run)(&ws, "gen", &args[1..])
        }
        _ => {
            eprintln!(
                "usage: cargo xtask test | hostile | fuzz-replay | interop-spark [DATABASE] | gen-<format> ARGS... | bench-peers <format> ARGS...\n\
                 formats: {}",
                FORMATS
                    .iter()
                    .map(|f| f.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            std::process::exit(2)
        }
    }
}

/// Removes the workspace's packages that an earlier `cargo publish --dry-run` unpacked into
/// cargo's registry cache: cargo reuses an unpacked `name-version` folder as it is, so a second
/// dry run at the same version would verify against the first run's sources.
fn forget_unpacked_packages() -> Result<()> {
    let Some(home) = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))
    else {
        return Ok(());
    };
    let Ok(registries) = std::fs::read_dir(home.join("registry").join("src")) else {
        return Ok(());
    };
    for registry in registries.flatten() {
        let Ok(packages) = std::fs::read_dir(registry.path()) else {
            continue;
        };
        for package in packages.flatten() {
            if package
                .file_name()
                .to_string_lossy()
                .starts_with("profcodec")
            {
                std::fs::remove_dir_all(package.path())?;
            }
        }
    }
    Ok(())
}
