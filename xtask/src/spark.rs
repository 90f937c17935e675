//! `cargo xtask spark-source` (and a step of `cargo xtask test`): the Python package's Spark data
//! source (`profcodec.spark`) on a real standalone Spark cluster on this machine: a master and
//! two workers, each a JVM of its own started by pyspark's `bin/spark-class`, bound to
//! 127.0.0.1, the executors running the venv's Python with the package's dev wheel installed.
//!
//! Through the data source, the cluster reads the corpus files of every format, a generated
//! HPCToolkit database of [`RANKS`] ranks, a measurement folder of [`RANKS`] hpcrun files and a
//! folder of [`RANKS`] NYTProf profiles; every table's row count and column sums must equal the
//! package's `sql()` (DataFusion, `profcodec sql`'s engine) over the same inputs, the load
//! imbalance per function of the database (`tables::IMBALANCE`) DuckDB's over the Parquet export,
//! and a damaged profile must give each `mode`'s documented behaviour. The issue asks for 1,000
//! of each; 100 keep the step within a few minutes on two cores (`--ranks N` runs more).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::tables::{DUCKDB_TABLES, IMBALANCE, PYSPARK, SPARK_TABLES, VENV, render};
use crate::{Workspace, apt_install, run, succeeds};

/// Ranks of the generated database, hpcrun files and NYTProf profiles by default.
const RANKS: usize = 100;

/// The JVMs of the cluster: each started in a process group of its own, so that stopping it
/// stops the executors its worker started too. Dropping it stops them all.
struct Cluster {
    daemons: Vec<Child>,
}

impl Cluster {
    /// Starts `class` (a master or a worker) with `args` through `spark_home/bin/spark-class`.
    fn start(
        &mut self,
        spark_home: &Path,
        env: &[(&str, String)],
        class: &str,
        args: &[String],
    ) -> Result<()> {
        let child = Command::new(spark_home.join("bin").join("spark-class"))
            .arg(class)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .with_context(|| format!("starting {class}"))?;
        self.daemons.push(child);
        Ok(())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // TERM first (a worker's shutdown kills its executors), KILL what is left.
        for signal in ["-TERM", "-KILL"] {
            for child in &mut self.daemons {
                if matches!(child.try_wait(), Ok(None)) {
                    // `--`: the negative number is the process group, not an option.
                    let _ = Command::new("kill")
                        .args([signal, "--"])
                        .arg(format!("-{}", child.id()))
                        .status();
                }
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline
                && self
                    .daemons
                    .iter_mut()
                    .any(|c| matches!(c.try_wait(), Ok(None)))
            {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        for child in &mut self.daemons {
            let _ = child.wait();
        }
    }
}

/// A TCP port free on 127.0.0.1 now.
fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The inputs the cluster reads, written under `dir` when missing: the database, the
/// measurement folder and the folder of NYTProf profiles, each of `ranks` ranks.
fn generate(dir: &Path, ranks: usize) -> Result<[PathBuf; 3]> {
    let db = dir.join(format!("db-{ranks}-ranks"));
    let hpcrun = dir.join(format!("hpcrun-{ranks}-ranks"));
    let nytprof = dir.join(format!("nytprof-{ranks}-profiles"));
    let stamp = dir.join("generated");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == ranks.to_string()) {
        return Ok([db, hpcrun, nytprof]);
    }
    for d in [&db, &hpcrun, &nytprof] {
        if d.exists() {
            std::fs::remove_dir_all(d)?;
        }
        std::fs::create_dir_all(d)?;
    }
    let mut gen_args = crate::tables::interop_shape(ranks);
    gen_args.push(crate::utf8(&db)?);
    crate::hpctoolkit::generate(&gen_args)?;
    for rank in 0..ranks {
        std::fs::write(
            hpcrun.join(format!("app-000000-{rank:03}-7f000001-4242-0.hpcrun")),
            profcodec_benches::hpcrun::file(16 << 10, rank as u64),
        )?;
        std::fs::write(
            nytprof.join(format!("nytprof.out.{}", 10_000 + rank)),
            profcodec_benches::nytprof::file(8 << 10, None),
        )?;
    }
    std::fs::write(&stamp, ranks.to_string())?;
    Ok([db, hpcrun, nytprof])
}

/// The driver's side: checks the data source against `sql()` and DuckDB (see the module's
/// documentation). `sys.argv[1]` is a JSON object of what to read and where the cluster is.
const DRIVER: &str = r#"
import glob, json, os, sys, time, urllib.request, warnings
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[1])
import pyarrow as pa
import profcodec
from profcodec import _profcodec
from profcodec.spark import register, expand, CORRUPT_INPUT

deadline = time.time() + 90
while True:
    try:
        state = json.load(urllib.request.urlopen(f"http://127.0.0.1:{spec['master_ui']}/json/"))
        if state.get("aliveworkers", 0) >= 2:
            break
    except OSError:
        pass
    if time.time() > deadline:
        sys.exit("the two workers did not register with the master within 90 s")
    time.sleep(0.5)

from pyspark.sql import SparkSession
spark = (SparkSession.builder.master(spec["master"]).appName("profcodec-spark-source")
         .config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1")
         .config("spark.driver.bindAddress", "127.0.0.1")
         .config("spark.executor.memory", "1g")
         .config("spark.sql.shuffle.partitions", "4")
         .config("spark.executor.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
         .config("spark.sql.codegen.wholeStage", "false")
         .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
register(spark)
failures = []

def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what, flush=True)

def close(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1.0)

def source(table, paths, **options):
    reader = spark.read.format("profcodec").option("table", table)
    # Small partitions, so that both executors decode.
    reader = reader.option("partitionBytes", str(2 << 20))
    for k, v in options.items():
        reader = reader.option(k, v)
    return reader.load(paths)

paths = spec["paths"]
DQ, BT = '"', "`"
inputs = expand(paths)
print(f"{len(inputs)} inputs", flush=True)
started = time.time()
for table in _profcodec.table_names():
    schema = _profcodec.table_schema(table)
    exprs = ["count(*)"]
    for f in schema:
        if pa.types.is_integer(f.type) or pa.types.is_floating(f.type):
            exprs.append(f"sum(cast({{q}}{f.name}{{q}} as double))")
        elif pa.types.is_string(f.type):
            exprs.append(f"sum(length({{q}}{f.name}{{q}}))")
    select = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    ours = profcodec.sql(f"SELECT {select.format(q=DQ)} FROM {table}", inputs).to_pylist()[0]
    source(table, paths).createOrReplaceTempView("t")
    theirs = spark.sql(f"SELECT {select.format(q=BT)} FROM t").collect()[0].asDict()
    for i, e in enumerate(exprs):
        check(close(ours[f"c{i}"], theirs[f"c{i}"]),
              f"{table}: {e.format(q='')}: profcodec.sql {ours[f'c{i}']}, Spark {theirs[f'c{i}']}")
    print(f"{table}: {ours['c0']} rows, {len(exprs) - 1} sums equal", flush=True)
print(f"every table of {len(inputs)} inputs: {time.time() - started:.1f} s", flush=True)

# Load imbalance per function of the database: Spark through the data source, DuckDB over the
# Parquet export of the same database.
db = spec["db"]
metric = profcodec.open(db).profile().top(limit=1).value_type
def render(q):
    return q.replace("{metric}", metric.replace("'", "''"))
for t in ["contexts", "metrics", "profiles", "values"]:
    source(f"hpctoolkit.{t}", db).createOrReplaceTempView(t)
spark_rows = {r["function"]: r.asDict() for r in spark.sql(render(spec["imbalance_spark"])).collect()}
profcodec.export_parquet([db], spec["dataset"], tables=["hpctoolkit"], overwrite=True)
import duckdb
con = duckdb.connect()
for t in ["contexts", "metrics", "profiles", "values"]:
    folder = f"{spec['dataset']}/hpctoolkit/{t}".replace("'", "''")
    con.execute(f"""CREATE VIEW "{t}" AS SELECT * FROM
        read_parquet('{folder}/*/*.parquet', hive_partitioning = true)""")
cur = con.execute(render(spec["imbalance_duckdb"]))
names = [d[0] for d in cur.description]
duck_rows = {r[0]: dict(zip(names, r)) for r in cur.fetchall()}
check(len(duck_rows) >= 2, f"DuckDB found the imbalance of {len(duck_rows)} functions")
check(set(spark_rows) == set(duck_rows), "Spark and DuckDB found other functions")
for f, d in duck_rows.items():
    s = spark_rows.get(f, {})
    for k in ["max_self", "mean_self", "imbalance"]:
        check(close(s.get(k), d[k]), f"imbalance of {f}: {k}: Spark {s.get(k)}, DuckDB {d[k]}")
print(f"load imbalance of {len(duck_rows)} functions over the ranks ({metric}) is DuckDB's", flush=True)

# A damaged profile beside a good one, in each mode.
good, bad = spec["good"], spec["damaged"]
good_rows = profcodec.sql("SELECT count(*) AS n FROM nytprof.lines", [good]).to_pylist()[0]["n"]
try:
    source("nytprof.lines", [good, bad]).count()
    check(False, "FAILFAST read a damaged profile")
except Exception as e:
    check(bad in str(e) and "InvalidDataError" in str(e),
          f"FAILFAST's error names the damaged file: {str(e)[:300]}")
df = source("nytprof.lines", [good, bad], mode="PERMISSIVE")
check(CORRUPT_INPUT in df.columns, "PERMISSIVE has the column _corrupt_input")
corrupt = df.where(f"{CORRUPT_INPUT} IS NOT NULL").collect()
check(len(corrupt) == 1 and corrupt[0]["input"] == bad and bad in corrupt[0][CORRUPT_INPUT]
      and "cut short" in corrupt[0][CORRUPT_INPUT], f"PERMISSIVE: one row for the damaged file: {corrupt}")
check(df.where(f"{CORRUPT_INPUT} IS NULL").count() == good_rows, "PERMISSIVE keeps the good rows")
df = source("nytprof.lines", [good, bad], mode="DROPMALFORMED")
check(CORRUPT_INPUT not in df.columns, "DROPMALFORMED has no _corrupt_input")
check(df.count() == good_rows, "DROPMALFORMED keeps the good rows only")
time.sleep(1)
logged = [p for p in glob.glob(f"{spec['work']}/**/stderr", recursive=True)
          if "dropped 1 malformed of the 2 inputs" in open(p, errors="replace").read()]
check(bool(logged), "DROPMALFORMED counted the dropped input in an executor's log")
try:
    source("nytprof.lines", [good], mode="LENIENT").count()
    check(False, "an unknown mode was taken")
except Exception as e:
    check("mode must be one of" in str(e), f"an unknown mode is refused: {str(e)[:200]}")
print("FAILFAST, PERMISSIVE and DROPMALFORMED behave as documented", flush=True)
spark.stop()
if failures:
    sys.exit(f"{len(failures)} checks failed")
"#;

/// `cargo xtask spark-source [--ranks N]`: see the module's documentation.
pub(crate) fn spark_source(ws: &Workspace, args: &[String]) -> Result<()> {
    let ranks = match args {
        [] => RANKS,
        [flag, n] if flag == "--ranks" => n.parse().context("--ranks N")?,
        _ => bail!("usage: cargo xtask spark-source [--ranks N]"),
    };
    let started = Instant::now();
    if !succeeds(Command::new("java").arg("-version")) {
        apt_install(&["openjdk-17-jre-headless"])?;
    }
    let python = crate::python_venv(
        ws,
        VENV,
        "import pyspark, duckdb, pyarrow, pandas, maturin",
        &[
            PYSPARK,
            "duckdb",
            "pyarrow>=15",
            "pandas<3",
            "maturin>=1.9.4,<2",
        ],
    )?;
    crate::python::install_from(ws, &python, "dev", &["sql"], "spark")?;
    let dir = ws.target().join("spark-source");
    std::fs::create_dir_all(&dir)?;
    let [db, hpcrun, nytprof] = generate(&dir, ranks)?;
    let good = ws
        .corpus()
        .canonicalize()?
        .join("nytprof/multi__default.nytprof.out");
    let bytes = std::fs::read(&good).with_context(|| format!("reading {}", good.display()))?;
    let damaged = dir.join("damaged.nytprof.out");
    std::fs::write(&damaged, &bytes[..bytes.len() / 2])?;
    let prepared = started.elapsed();

    let spark_home = PathBuf::from(
        String::from_utf8(
            Command::new(&python)
                .args([
                    "-c",
                    "import os, pyspark; print(os.path.dirname(pyspark.__file__))",
                ])
                .output()?
                .stdout,
        )?
        .trim(),
    );
    let work = dir.join("work");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    let env = [
        ("SPARK_HOME", crate::utf8(&spark_home)?),
        ("SPARK_LOCAL_IP", "127.0.0.1".to_owned()),
        ("PYSPARK_PYTHON", crate::utf8(&python)?),
        ("SPARK_WORKER_DIR", crate::utf8(&work)?),
    ];
    let (port, ui) = (free_port()?, free_port()?);
    let master = format!("spark://127.0.0.1:{port}");
    let mut cluster = Cluster {
        daemons: Vec::new(),
    };
    cluster.start(
        &spark_home,
        &env,
        "org.apache.spark.deploy.master.Master",
        &[
            "--host".into(),
            "127.0.0.1".into(),
            "--port".into(),
            port.to_string(),
            "--webui-port".into(),
            ui.to_string(),
        ],
    )?;
    for _ in 0..2 {
        cluster.start(
            &spark_home,
            &env,
            "org.apache.spark.deploy.worker.Worker",
            &[
                "--host".into(),
                "127.0.0.1".into(),
                "--cores".into(),
                "1".into(),
                "--memory".into(),
                "1536m".into(),
                "--webui-port".into(),
                free_port()?.to_string(),
                master.clone(),
            ],
        )?;
    }
    let corpus = ws.corpus().canonicalize()?;
    let mut paths: Vec<String> = [
        "easyprofiler/*.prof",
        "hpctoolkit/dbase",
        "hpctoolkit/hatchet-gamess",
        "hpctoolkit/meas",
        "nytprof",
        "statprofiler",
    ]
    .iter()
    .map(|p| crate::utf8(&corpus.join(p)))
    .collect::<Result<_>>()?;
    for p in [&db, &hpcrun, &nytprof] {
        paths.push(crate::utf8(p)?);
    }
    let spec = serde_json::json!({
        "master": master,
        "master_ui": ui,
        "paths": paths,
        "db": db,
        "dataset": dir.join("dataset"),
        "good": good,
        "damaged": damaged,
        "work": work,
        "imbalance_spark": render(IMBALANCE, "{metric}", &SPARK_TABLES),
        "imbalance_duckdb": render(IMBALANCE, "{metric}", &DUCKDB_TABLES),
    });
    let checked = run(Command::new(&python)
        .arg("-c")
        .arg(DRIVER)
        .arg(spec.to_string())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(&dir))
    .context("the Spark data source on a standalone cluster");
    drop(cluster);
    checked?;
    eprintln!(
        "xtask: spark-source took {:.1?} ({:.1?} of it installing, building and generating)",
        started.elapsed(),
        prepared
    );
    Ok(())
}
