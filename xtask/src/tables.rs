//! xtask support for the tables (profcodec-arrow, `profcodec export --parquet` and `profcodec
//! sql`): the consumers that judge the Parquet export, DuckDB for the tests and Spark for
//! `cargo xtask interop-spark`, installed from PyPI into a venv under `target/`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::peers::{CommandLine, Sample};
use crate::{TestEnv, Workspace, apt_install, run, succeeds};

/// The venv under `target/` DuckDB (and, for `interop-spark`, pyspark) is installed into.
const VENV: &str = "tables-venv";

/// The tables venv's python, with `module` installed from the PyPI package `package`.
fn python_with(ws: &Workspace, module: &str, package: &str) -> Result<PathBuf> {
    crate::python_venv(ws, VENV, &format!("import {module}"), &[package])
}

/// Installs DuckDB (PyPI `duckdb`) and returns `PROFCODEC_DUCKDB_PYTHON` for the Parquet test
/// (crates/sql/tests/tables.rs).
pub(crate) fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let python = python_with(ws, "duckdb", "duckdb")?;
    Ok(vec![(
        "PROFCODEC_DUCKDB_PYTHON".to_owned(),
        crate::utf8(&python)?,
    )])
}

/// Spark computes the top 10 functions of an HPCToolkit database from the export.
const SPARK: &str = r#"
import json, sys
from pyspark.sql import SparkSession
out = sys.argv[1]
spark = (SparkSession.builder.master("local[2]").appName("profcodec")
         .config("spark.ui.enabled", "false").config("spark.driver.host", "127.0.0.1")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
for table in ["contexts", "metrics", "values"]:
    spark.read.parquet(f"{out}/hpctoolkit/{table}").createOrReplaceTempView(table)
rows = spark.sql(sys.argv[2]).collect()
print(json.dumps([r.asDict() for r in rows]))
spark.stop()
"#;

/// hpcviewer's exclusive time per function over the summary profile, the top 10.
/// `{values}`, `{metrics}` and `{contexts}` name the tables as each engine knows them.
const TOP_FUNCTIONS: &str = "SELECT c.function AS function, SUM(v.value) AS self \
     FROM {values} v \
     JOIN {metrics} m ON m.metric_id = v.metric_id AND m.summary = v.summary \
     JOIN {contexts} c ON c.ctx_id = v.ctx_id AND c.input = v.input \
     WHERE v.summary AND (m.name = '{metric}' OR m.name = concat('{metric} (', m.unit, ')')) \
       AND m.scope = 'function' AND m.combine = 'sum' \
       AND (c.relation <> 'lexical' OR c.lexical_type = 'function') \
     GROUP BY c.function ORDER BY self DESC, function LIMIT 10";

/// `cargo xtask interop-spark [DATABASE]`: exports an HPCToolkit database (by default the
/// corpus's `hpctoolkit/hatchet-gamess`) with `profcodec export --parquet`, has Spark (PyPI
/// `pyspark` in local mode, Java from Debian's `default-jre-headless`) read the dataset and
/// compute the top 10 functions by exclusive time, and checks them against `profcodec sql` on
/// the database itself.
pub(crate) fn interop_spark(ws: &Workspace, args: &[String]) -> Result<()> {
    if !succeeds(Command::new("java").arg("-version")) {
        apt_install(&["default-jre-headless"])?;
    }
    let python = python_with(ws, "pyspark", "pyspark")?;
    let db = match args.first() {
        Some(db) => PathBuf::from(db),
        None => ws.corpus().join("hpctoolkit/hatchet-gamess"),
    };
    // `profcodec export` and `profcodec sql` run the profcodec-sql built beside it.
    run(&mut ws.cargo(&[
        "build",
        "--quiet",
        "-p",
        "profcodec-cli",
        "-p",
        "profcodec-sql",
    ]))?;
    let profcodec = ws.target().join("debug").join("profcodec");
    let out = ws.target().join("interop-spark");
    run(Command::new(&profcodec)
        .args(["export", "--force", "--table", "hpctoolkit", "--parquet"])
        .arg(&out)
        .arg(&db))?;
    // The metric `profcodec top` reads by default (the database's time), and its top 10.
    let top = json_rows(
        Command::new(&profcodec)
            .args(["top", "--json", "-n", "10"])
            .arg(&db),
    )?;
    let metric = top
        .first()
        .and_then(|r| r.get("metric"))
        .and_then(|n| n.as_str())
        .context("profcodec top printed no row")?
        .to_owned();
    let query = |prefix: &str, values: &str| {
        TOP_FUNCTIONS
            .replace("{metric}", &metric)
            .replace("{values}", values)
            .replace("{metrics}", &format!("{prefix}metrics"))
            .replace("{contexts}", &format!("{prefix}contexts"))
    };
    let started = std::time::Instant::now();
    let spark = json_rows(
        Command::new(&python)
            .arg("-c")
            .arg(SPARK)
            .arg(&out)
            .arg(query("", "`values`")),
    )?;
    let spark_time = started.elapsed();
    let ours = json_rows(
        Command::new(&profcodec)
            .args(["sql", "--format", "json"])
            .arg(query("hpctoolkit.", "hpctoolkit.values"))
            .arg(&db),
    )?;
    eprintln!("xtask: Spark's top 10 ({metric}, {spark_time:.1?}):");
    for row in &spark {
        eprintln!("  {row}");
    }
    if spark.len() != ours.len() {
        bail!(
            "Spark returned {} rows, profcodec sql {}",
            spark.len(),
            ours.len()
        );
    }
    for (s, o) in spark.iter().zip(&ours) {
        let value = |r: &serde_json::Value| r.get("self").and_then(serde_json::Value::as_f64);
        let (sv, ov) = (value(s), value(o));
        let close =
            matches!((sv, ov), (Some(a), Some(b)) if (a - b).abs() <= 1e-9 * a.abs().max(b.abs()));
        if s.get("function") != o.get("function") || !close {
            bail!("Spark and profcodec sql differ: {s} vs {o}");
        }
    }
    eprintln!("xtask: Spark's top 10 equals profcodec sql's");
    for (s, t) in spark.iter().zip(&top) {
        let value = |r: &serde_json::Value, key| r.get(key).and_then(serde_json::Value::as_f64);
        let (sv, tv) = (value(s, "self"), value(t, "self"));
        let close =
            matches!((sv, tv), (Some(a), Some(b)) if (a - b).abs() <= 1e-9 * a.abs().max(b.abs()));
        if function(s) != function(t) || !close {
            bail!("Spark and profcodec top differ: {s} vs {t}");
        }
    }
    eprintln!("xtask: and profcodec top's");
    Ok(())
}

/// A row's function name (none for a function without one).
fn function(row: &serde_json::Value) -> Option<&str> {
    row.get("function").and_then(serde_json::Value::as_str)
}

/// Runs `cmd` and parses its standard output as a JSON array.
fn json_rows(cmd: &mut Command) -> Result<Vec<serde_json::Value>> {
    eprintln!("xtask: running {cmd:?}");
    let out = cmd
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    match serde_json::from_slice(&out.stdout)? {
        serde_json::Value::Array(rows) => Ok(rows),
        other => bail!("{cmd:?} printed {other}, not a JSON array"),
    }
}

/// The database `bench-peers tables` exports, unless other `gen-hpctoolkit` options are given:
/// 2.3 GB (meta.db 9.8 MB, profile.db 751 MB, cct.db 772 MB, trace.db 768 MB), 64 M values and
/// 64 M trace samples.
const BENCH_SHAPE: &[&str] = &[
    "--profiles",
    "64",
    "--contexts",
    "200000",
    "--metrics",
    "4",
    "--trace-elems",
    "1000000",
];

/// Timed runs of each command unless `--runs N` says otherwise: an export of the bench database
/// takes seconds.
const BENCH_RUNS: usize = 3;

/// The export's targets: database bytes per wall-clock second, and peak anonymous memory.
const EXPORT_TARGET_MB_S: f64 = 300.0;
const MEMORY_TARGET_MB: f64 = 512.0;
/// `profcodec sql`'s top 10 in at most this many times the export's scan.
const SQL_TARGET_RATIO: f64 = 5.0;

/// `cargo xtask bench-peers tables [--runs N] [GEN OPTIONS]`: writes a synthetic HPCToolkit
/// database ([`BENCH_SHAPE`], or the `gen-hpctoolkit` options given) under `target/`, builds the
/// release CLI and times, each as a whole process and interleaved round by round:
///
/// - `profcodec export --table hpctoolkit --parquet` with zstd (the default), with zstd on one
///   thread, and without compression;
/// - the export's scan, `profcodec export --dry-run`: the same tables read the same way (same
///   batches, same threads) with nothing encoded or written: the part of the export that reads
///   the database;
/// - `profcodec sql` computing hpcviewer's top 10 functions by exclusive time (the query the
///   DuckDB test and `interop-spark` check) from the database itself.
///
/// One more untimed run of each, sampled every 10 ms from /proc, gives its peak memory: the
/// resident high-water mark (VmHWM, which counts the mapped database's file-backed pages) and
/// the largest anonymous resident set (RssAnon: what the process allocated). Prints a Markdown
/// table, the targets met or not (also with the CPU time spread over the machine's cores, what an
/// idle machine would allow), the load average before and after, and the command lines.
pub(crate) fn bench(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = crate::peers::Options::parse(args)?;
    let runs = options.runs.unwrap_or(BENCH_RUNS).max(1);
    let shape: Vec<String> = if options.rest.is_empty() {
        BENCH_SHAPE.iter().map(|s| (*s).to_owned()).collect()
    } else {
        options.rest.clone()
    };
    let dir = ws.target().join("tables-bench");
    let db = dir.join(shape.join("").replace("--", "-").trim_start_matches('-'));
    // Made once per shape: writing 2.3 GB takes longer than the bench.
    if !db.join("trace.db").is_file() {
        if db.exists() {
            std::fs::remove_dir_all(&db)?;
        }
        std::fs::create_dir_all(&db)?;
        let mut gen_args = shape.clone();
        gen_args.push(crate::utf8(&db)?);
        crate::hpctoolkit::generate(&gen_args)?;
    }
    let profcodec = crate::peers::profcodec_with_sql(ws)?;
    let out = dir.join("out");
    let export = |extra: &[&str]| {
        let mut cmd = CommandLine::new(&profcodec)
            .arg("export")
            .arg("--table")
            .arg("hpctoolkit");
        for a in extra {
            cmd = cmd.arg(a);
        }
        cmd.arg("--parquet").arg(&out).arg(&db)
    };
    let query = TOP_FUNCTIONS
        .replace("{metric}", "CPUTIME (sec)")
        .replace("{values}", "hpctoolkit.values")
        .replace("{metrics}", "hpctoolkit.metrics")
        .replace("{contexts}", "hpctoolkit.contexts");
    let benches = [
        ("export, zstd (default)", export(&[])),
        ("export, zstd, one thread", export(&["--threads", "1"])),
        ("export, no compression", export(&["--compression", "none"])),
        ("export's scan (`--dry-run`)", export(&["--dry-run"])),
        (
            "`profcodec sql` top 10 functions",
            CommandLine::new(&profcodec)
                .arg("sql")
                .arg("--format")
                .arg("csv")
                .arg(&query)
                .arg(&db),
        ),
    ];
    let size = crate::peers::size_of(&db) as f64;
    let load_before = crate::peers::load_average();
    // Each export writes into a fresh folder, so that no run pays for removing the last one's.
    let fresh = || -> Result<()> {
        if out.exists() {
            std::fs::remove_dir_all(&out)?;
        }
        Ok(())
    };
    let mut memory = Vec::new();
    let mut top10 = String::new();
    for (_, cmd) in &benches {
        fresh()?;
        // Untimed: fills the page cache and measures the peak memory.
        let (hwm, anon, stdout) = peak_memory(cmd)?;
        memory.push((hwm, anon));
        top10 = stdout;
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); benches.len()];
    for round in 0..runs {
        for (k, (_, cmd)) in benches.iter().enumerate() {
            fresh()?;
            samples[k].push(crate::peers::time_once(cmd)?);
        }
        eprintln!("xtask: round {} of {runs} done", round + 1);
    }
    fresh()?;
    let load_after = crate::peers::load_average();
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    let median = |k: usize, f: fn(&Sample) -> f64| {
        crate::peers::median(&mut samples[k].iter().map(f).collect::<Vec<_>>())
    };
    let range = |k: usize| {
        let walls = samples[k].iter().map(|s| s.wall);
        let (lo, hi) = walls.fold((f64::INFINITY, 0f64), |(lo, hi), w| (lo.min(w), hi.max(w)));
        format!(
            "{} ({}-{})",
            crate::peers::seconds(median(k, |s| s.wall)),
            crate::peers::seconds(lo),
            crate::peers::seconds(hi)
        )
    };
    println!(
        "Database: {} ({}), `{}`.",
        crate::peers::human_size(size as u64),
        shape.join(" "),
        db.display()
    );
    println!();
    println!(
        "| run | wall, median of {runs} (min-max) | CPU, user + sys | peak RSS (VmHWM) | peak anonymous (RssAnon) | database / wall | database / (CPU / {cores} cores) |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (k, (name, _)) in benches.iter().enumerate() {
        let (wall, cpu) = (median(k, |s| s.wall), median(k, |s| s.cpu));
        let (hwm, anon) = memory[k];
        println!(
            "| {name} | {} | {} | {:.0} MB | {:.0} MB | {:.0} MB/s | {:.0} MB/s |",
            range(k),
            crate::peers::seconds(cpu),
            hwm as f64 / 1e6,
            anon as f64 / 1e6,
            size / 1e6 / wall,
            size / 1e6 / (cpu / cores),
        );
    }
    println!();
    let met = |ok: bool| if ok { "met" } else { "not met" };
    let (wall, cpu) = (median(0, |s| s.wall), median(0, |s| s.cpu));
    let rate = size / 1e6 / wall;
    let idle = size / 1e6 / (cpu / cores);
    println!(
        "- Export at >= {EXPORT_TARGET_MB_S:.0} MB/s: {rate:.0} MB/s, {}; from its CPU time on {cores} idle cores: {idle:.0} MB/s, {}.",
        met(rate >= EXPORT_TARGET_MB_S),
        met(idle >= EXPORT_TARGET_MB_S)
    );
    let anon = memory[0].1 as f64 / 1e6;
    println!(
        "- Peak memory under {MEMORY_TARGET_MB:.0} MB: {anon:.0} MB allocated (RssAnon), {}.",
        met(anon < MEMORY_TARGET_MB)
    );
    let (scan, sql) = (median(3, |s| s.wall), median(4, |s| s.wall));
    println!(
        "- `profcodec sql` top 10 in under {SQL_TARGET_RATIO:.0}x the export's scan: {} against {}, {:.1}x, {}.",
        crate::peers::seconds(sql),
        crate::peers::seconds(scan),
        sql / scan,
        met(sql < SQL_TARGET_RATIO * scan)
    );
    println!();
    println!("Load average (1, 5, 15 min): {load_before} before, {load_after} after.");
    println!();
    println!("The top 10 (CSV):");
    println!();
    println!("```text\n{}```", top10);
    println!();
    for (_, cmd) in &benches {
        println!("- `{}`", cmd.display());
    }
    Ok(())
}

/// Runs `cmd` once, its standard output kept, sampling its memory every 10 ms: the resident
/// high-water mark (VmHWM) and the largest anonymous resident set (RssAnon) seen, in bytes.
fn peak_memory(cmd: &CommandLine) -> Result<(u64, u64, String)> {
    use std::io::Read;
    let mut child = cmd
        .command()
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .with_context(|| format!("could not start {}", cmd.display()))?;
    let status_file = PathBuf::from(format!("/proc/{}/status", child.id()));
    // The output is small (a top 10, a few lines of counts), read after the exit.
    let (mut hwm, mut anon) = (0u64, 0u64);
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            for line in text.lines() {
                let kb = |rest: &str| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<u64>()
                        .unwrap_or(0)
                        * 1024
                };
                if let Some(rest) = line.strip_prefix("VmHWM:") {
                    hwm = hwm.max(kb(rest));
                } else if let Some(rest) = line.strip_prefix("RssAnon:") {
                    anon = anon.max(kb(rest));
                }
            }
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut stdout = String::new();
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout)?;
    }
    if !status.success() {
        bail!("{} failed ({status})", cmd.display());
    }
    Ok((hwm, anon, stdout))
}
