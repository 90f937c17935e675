//! xtask support for the tables (profcodec-arrow, `profcodec export --parquet` and `profcodec
//! sql`): the consumers that judge the Parquet export, DuckDB for the tests and DuckDB and Spark
//! for `cargo xtask interop-spark` (which `cargo xtask test` runs too: the load imbalance per
//! function of a 1,000-rank database, the same in `profcodec sql`, DuckDB and Spark), installed
//! from PyPI into a venv under `target/`; and `cargo xtask bench-peers tables`.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::peers::{CommandLine, Sample};
use crate::{TestEnv, Workspace, apt_install, run, succeeds};

/// The venv under `target/` DuckDB (and, for `interop-spark`, pyspark) is installed into.
pub(crate) const VENV: &str = "tables-venv";

/// pyspark from PyPI: Spark 4 runs on Debian 12's Java 17 (`default-jre-headless`).
pub(crate) const PYSPARK: &str = "pyspark>=4,<5";

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

/// The engines' side of `interop-spark`: registers the HPCToolkit tables of the dataset `out`
/// (`sys.argv[2]`) as views, in DuckDB (`sys.argv[1]` = `duckdb`, PyPI `duckdb`: each view
/// `read_parquet` of the table's folder with Hive partitioning) or in Spark (`spark`, PyPI
/// `pyspark` in local mode on two cores, `spark.read.parquet` of the folder), runs each query
/// of the JSON object `sys.argv[3]` (name: SQL) and prints a JSON object of their rows.
const ENGINES: &str = r#"
import json, sys
engine, out, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
tables = ["contexts", "metrics", "profiles", "values"]
if engine == "duckdb":
    import duckdb
    con = duckdb.connect()
    for t in tables:
        folder = f"{out}/hpctoolkit/{t}".replace("'", "''")
        con.execute(f"""CREATE VIEW "{t}" AS SELECT * FROM
            read_parquet('{folder}/*/*.parquet', hive_partitioning = true)""")
    def run(q):
        cur = con.execute(q)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
else:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("profcodec")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             # A few thousand rows a query: 200 shuffle partitions would be 200 tasks each.
             .config("spark.sql.shuffle.partitions", "2")
             # A short run: the JVM's quick compiler alone and no generated code halve the
             # time (most of it is the JVM warming up, not the data).
             .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
             .config("spark.sql.codegen.wholeStage", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    for t in tables:
        spark.read.parquet(f"{out}/hpctoolkit/{t}").createOrReplaceTempView(t)
    def run(q):
        return [r.asDict() for r in spark.sql(q).collect()]
print(json.dumps({name: run(q) for name, q in queries.items()}))
if engine != "duckdb":
    spark.stop()
"#;

/// Load imbalance per function, the question `interop-spark` asks every engine: for each
/// function, its exclusive cost in each rank (each non-summary profile: the `function`-scope
/// value of the metric `{metric}` at the function's contexts, as hpcviewer counts a function's
/// exclusive cost), then the largest over the mean across all ranks, a rank without the
/// function counting as 0 (`ranks` counts every non-summary profile). 1 is a perfect balance;
/// N ranks with all the cost in one give N. Plain SQL that DataFusion (`profcodec sql`),
/// DuckDB and Spark all run as written; `{values}`, `{metrics}`, `{contexts}` and
/// `{profiles}` name the tables as each engine knows them.
pub(crate) const IMBALANCE: &str = "\
WITH per_rank AS (
  SELECT c.function AS function, v.profile AS profile, SUM(v.value) AS self
  FROM {values} v
  JOIN {metrics} m ON m.metric_id = v.metric_id AND m.summary = v.summary AND m.input = v.input
  JOIN {contexts} c ON c.ctx_id = v.ctx_id AND c.input = v.input
  WHERE NOT v.summary AND m.scope = 'function'
    AND (m.name = '{metric}' OR m.name = concat('{metric} (', m.unit, ')'))
    AND (c.relation <> 'lexical' OR c.lexical_type = 'function')
  GROUP BY c.function, v.profile
),
ranks AS (SELECT COUNT(*) AS n FROM {profiles} WHERE NOT summary)
SELECT p.function AS function, MAX(p.self) AS max_self, SUM(p.self) / MAX(r.n) AS mean_self,
       MAX(p.self) / (SUM(p.self) / MAX(r.n)) AS imbalance
FROM per_rank p CROSS JOIN ranks r
GROUP BY p.function
ORDER BY imbalance DESC, function";

/// How an engine names the HPCToolkit tables in SQL.
pub(crate) struct TableNames {
    values: &'static str,
    metrics: &'static str,
    contexts: &'static str,
    profiles: &'static str,
}

/// `profcodec sql`: the tables of set `hpctoolkit` of the database itself.
pub(crate) const PROFCODEC_TABLES: TableNames = TableNames {
    values: "hpctoolkit.values",
    metrics: "hpctoolkit.metrics",
    contexts: "hpctoolkit.contexts",
    profiles: "hpctoolkit.profiles",
};
/// Spark: the temporary views of [`ENGINES`] (`values` is a keyword there, quoted with
/// backticks).
pub(crate) const SPARK_TABLES: TableNames = TableNames {
    values: "`values`",
    metrics: "metrics",
    contexts: "contexts",
    profiles: "profiles",
};
/// DuckDB: the views of [`ENGINES`] (`values` quoted as standard SQL quotes a name).
pub(crate) const DUCKDB_TABLES: TableNames = TableNames {
    values: "\"values\"",
    metrics: "metrics",
    contexts: "contexts",
    profiles: "profiles",
};

/// `template` ([`IMBALANCE`] or [`TOP_FUNCTIONS`]) for metric `metric` and the tables `names`.
pub(crate) fn render(template: &str, metric: &str, names: &TableNames) -> String {
    template
        .replace("{metric}", &metric.replace('\'', "''"))
        .replace("{values}", names.values)
        .replace("{metrics}", names.metrics)
        .replace("{contexts}", names.contexts)
        .replace("{profiles}", names.profiles)
}

/// The `gen-hpctoolkit` options of the databases `interop-spark` and `spark-source` make:
/// `ranks` profiles over 400 contexts (25 functions), `CPUTIME` only, no trace. At 1,000 ranks
/// (interop-spark's, when given no database) 7.6 MB, written in well under a second, 252,082
/// values.
pub(crate) fn interop_shape(ranks: usize) -> Vec<String> {
    let ranks = ranks.to_string();
    [
        "--profiles",
        &ranks,
        "--contexts",
        "400",
        "--samples",
        "32",
        "--metrics",
        "1",
        "--trace-elems",
        "0",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// `cargo xtask interop-spark [DATABASE]` (also the last stage but the packaging of `cargo
/// xtask test`): the same questions asked of one HPCToolkit database by three engines, which
/// must give the same answers:
///
/// 1. the database is DATABASE, or else one `gen-hpctoolkit` writes ([`interop_shape`]: 1,000
///    ranks) under `target/interop-spark/`;
/// 2. `profcodec export --table hpctoolkit --parquet` writes it as a dataset beside it;
/// 3. the load imbalance of each function ([`IMBALANCE`]: max over mean of its exclusive cost
///    across ranks) and hpcviewer's top 10 functions ([`TOP_FUNCTIONS`]) are computed by
///    `profcodec sql` on the database itself (DataFusion), and by DuckDB (PyPI `duckdb`) and
///    Spark (PyPI `pyspark`, `local[2]`, Java from Debian's `default-jre-headless`) reading the
///    dataset, with no code of profcodec's ([`ENGINES`]);
/// 4. the three agree: the same functions, each number within 1e-9 of each other relatively;
///    and the top 10 is also `profcodec top`'s.
///
/// The metric is the one `profcodec top` reads by default (the database's time). Each step's
/// time is printed; Spark's startup (a JVM) is most of it.
pub(crate) fn interop_spark(ws: &Workspace, args: &[String]) -> Result<()> {
    let started = std::time::Instant::now();
    if !succeeds(Command::new("java").arg("-version")) {
        apt_install(&["default-jre-headless"])?;
    }
    let python = crate::python_venv(ws, VENV, "import pyspark, duckdb", &[PYSPARK, "duckdb"])?;
    let dir = ws.target().join("interop-spark");
    let db = match args {
        [] => {
            let db = dir.join("db-1000-ranks");
            if db.exists() {
                std::fs::remove_dir_all(&db)?;
            }
            std::fs::create_dir_all(&db)?;
            let mut gen_args = interop_shape(1000);
            gen_args.push(crate::utf8(&db)?);
            crate::hpctoolkit::generate(&gen_args)?;
            db
        }
        [db] => PathBuf::from(db),
        _ => bail!("usage: cargo xtask interop-spark [DATABASE]"),
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
    let prepared = started.elapsed();
    let profcodec = ws.target().join("debug").join("profcodec");
    let out = dir.join("dataset");
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
    let timed = std::time::Instant::now();
    let ours_imbalance = json_rows(
        Command::new(&profcodec)
            .args(["sql", "--format", "json"])
            .arg(render(IMBALANCE, &metric, &PROFCODEC_TABLES))
            .arg(&db),
    )?;
    let ours_top = json_rows(
        Command::new(&profcodec)
            .args(["sql", "--format", "json"])
            .arg(render(TOP_FUNCTIONS, &metric, &PROFCODEC_TABLES))
            .arg(&db),
    )?;
    let ours_time = timed.elapsed();
    let mut engines = Vec::new();
    for (engine, names) in [("duckdb", &DUCKDB_TABLES), ("spark", &SPARK_TABLES)] {
        let queries = serde_json::json!({
            "imbalance": render(IMBALANCE, &metric, names),
            "top": render(TOP_FUNCTIONS, &metric, names),
        });
        let timed = std::time::Instant::now();
        eprintln!(
            "xtask: {engine} reads {} and runs the same two queries",
            out.display()
        );
        let answers = json_object(
            Command::new(&python)
                .arg("-c")
                .arg(ENGINES)
                .arg(engine)
                .arg(&out)
                .arg(queries.to_string())
                .current_dir(&dir),
        )?;
        engines.push((engine, answers, timed.elapsed()));
    }
    eprintln!(
        "xtask: load imbalance of {} functions over the ranks ({metric}), the largest:",
        ours_imbalance.len()
    );
    for row in ours_imbalance.iter().take(5) {
        eprintln!("  {row}");
    }
    if ours_imbalance.len() < 2 {
        bail!("profcodec sql found the load imbalance of fewer than 2 functions");
    }
    for (engine, answers, time) in &engines {
        let rows = |name: &str| -> Result<&Vec<serde_json::Value>> {
            answers
                .get(name)
                .and_then(serde_json::Value::as_array)
                .with_context(|| format!("{engine} gave no answer to {name}"))
        };
        same_by_function(
            engine,
            rows("imbalance")?,
            &ours_imbalance,
            &["max_self", "mean_self", "imbalance"],
        )?;
        same_in_order(engine, "profcodec sql", rows("top")?, &ours_top)?;
        eprintln!(
            "xtask: {engine} ({time:.1?}) gives profcodec sql's ({ours_time:.1?}) load imbalance \
             of every function and top 10"
        );
    }
    same_in_order("profcodec sql", "profcodec top", &ours_top, &top)?;
    eprintln!(
        "xtask: and the top 10 is profcodec top's; interop-spark took {:.1?} ({:.1?} of it \
         installing and building)",
        started.elapsed(),
        prepared
    );
    Ok(())
}

/// Whether `a` and `b` are within 1e-9 of each other, relatively.
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Checks that `theirs` (from `engine`) has a row for each function of `ours` and no other,
/// with the numbers `keys` close.
fn same_by_function(
    engine: &str,
    theirs: &[serde_json::Value],
    ours: &[serde_json::Value],
    keys: &[&str],
) -> Result<()> {
    use std::collections::BTreeMap;
    let by_function =
        |rows: &[serde_json::Value]| -> Result<BTreeMap<Option<String>, serde_json::Value>> {
            let mut map = BTreeMap::new();
            for row in rows {
                if map
                    .insert(function(row).map(str::to_owned), row.clone())
                    .is_some()
                {
                    bail!("two rows for function {:?}", function(row));
                }
            }
            Ok(map)
        };
    let (theirs, ours) = (by_function(theirs)?, by_function(ours)?);
    if theirs.keys().ne(ours.keys()) {
        bail!(
            "{engine} and profcodec sql give the load imbalance of different functions: {:?} vs {:?}",
            theirs.keys().collect::<Vec<_>>(),
            ours.keys().collect::<Vec<_>>()
        );
    }
    for (f, o) in &ours {
        let t = &theirs[f];
        for key in keys {
            let value = |r: &serde_json::Value| r.get(*key).and_then(serde_json::Value::as_f64);
            if !matches!((value(t), value(o)), (Some(a), Some(b)) if close(a, b)) {
                bail!("{engine} and profcodec sql differ on {key}: {t} vs {o}");
            }
        }
    }
    Ok(())
}

/// Checks that the top functions `a` (from `a_name`) and `b` are the same functions in the same
/// order, with close `self` values.
fn same_in_order(
    a_name: &str,
    b_name: &str,
    a: &[serde_json::Value],
    b: &[serde_json::Value],
) -> Result<()> {
    if a.len() != b.len() {
        bail!("{a_name} returned {} rows, {b_name} {}", a.len(), b.len());
    }
    for (x, y) in a.iter().zip(b) {
        let value = |r: &serde_json::Value| r.get("self").and_then(serde_json::Value::as_f64);
        if function(x) != function(y)
            || !matches!((value(x), value(y)), (Some(p), Some(q)) if close(p, q))
        {
            bail!("{a_name} and {b_name} differ: {x} vs {y}");
        }
    }
    Ok(())
}

/// A row's function name (none for a function without one).
fn function(row: &serde_json::Value) -> Option<&str> {
    row.get("function").and_then(serde_json::Value::as_str)
}

/// Runs `cmd` and parses its standard output as a JSON array.
fn json_rows(cmd: &mut Command) -> Result<Vec<serde_json::Value>> {
    eprintln!("xtask: running {cmd:?}");
    match json_output(cmd)? {
        serde_json::Value::Array(rows) => Ok(rows),
        other => bail!("{cmd:?} printed {other}, not a JSON array"),
    }
}

/// Runs `cmd` (whose arguments the caller has shown) and parses its standard output as a JSON
/// object.
fn json_object(cmd: &mut Command) -> Result<serde_json::Map<String, serde_json::Value>> {
    match json_output(cmd)? {
        serde_json::Value::Object(answers) => Ok(answers),
        other => bail!("{cmd:?} printed {other}, not a JSON object"),
    }
}

/// Runs `cmd`, which must succeed, and parses its standard output as JSON.
fn json_output(cmd: &mut Command) -> Result<serde_json::Value> {
    let out = cmd
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
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
