//! xtask support for the tables (profcodec-arrow, `profcodec export --parquet` and `profcodec
//! sql`): the consumers that judge the Parquet export, DuckDB for the tests and Spark for
//! `cargo xtask interop-spark`, installed from PyPI into a venv under `target/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::{TestEnv, Workspace, apt_install, run, succeeds};

/// The venv DuckDB (and, for `interop-spark`, pyspark) is installed into.
fn venv(ws: &Workspace) -> PathBuf {
    ws.root.join("target").join("tables-venv")
}

/// The venv's python, after making the venv and installing `module` from the PyPI package
/// `package` when it cannot be imported yet.
fn python_with(ws: &Workspace, module: &str, package: &str) -> Result<PathBuf> {
    let venv = venv(ws);
    let python = venv.join("bin").join("python");
    if !succeeds(Command::new(&python).args(["-c", &format!("import {module}")])) {
        if !python.exists() {
            run(Command::new("python3").arg("-m").arg("venv").arg(&venv))
                .context("creating the tables venv (needs python3 with venv)")?;
        }
        run(Command::new(&python).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            package,
        ]))
        .with_context(|| format!("installing {package} from PyPI"))?;
    }
    Ok(python)
}

fn utf8(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))
}

/// Installs DuckDB (PyPI `duckdb`) and returns `PROFCODEC_DUCKDB_PYTHON` for the Parquet test
/// (crates/cli/tests/tables.rs).
pub(crate) fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let python = python_with(ws, "duckdb", "duckdb")?;
    Ok(vec![("PROFCODEC_DUCKDB_PYTHON".to_owned(), utf8(&python)?)])
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
    run(&mut ws.cargo(&["build", "--quiet", "-p", "profcodec-cli"]))?;
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
