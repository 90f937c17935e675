//! `profcodec export --parquet` and `profcodec sql` (the program `profcodec-sql`, which
//! `profcodec` runs for them), judged by DuckDB (PyPI `duckdb`): DuckDB reads the exported folder
//! as a Hive-partitioned dataset, and
//!
//! - every table of every corpus input holds the same rows in DuckDB as in `profcodec sql`
//!   (which reads the inputs themselves), and as many as the export reported;
//! - the questions users ask give the same answers in DuckDB, in `profcodec sql` and in
//!   `profcodec top`: the top functions by self time of every HPCToolkit database (from the
//!   HPCToolkit tables as hpcviewer counts them, and from the profile model's tables), the
//!   hottest NYTProf lines, and the top functions of every other input.
//!
//! Runs when `PROFCODEC_DUCKDB_PYTHON` names a Python with duckdb installed (`cargo xtask test`
//! makes a venv under `target/` and sets it); otherwise prints one line and passes. `profcodec
//! top` is the `profcodec` binary named by `PROFCODEC_CLI`, else the one beside `profcodec-sql`
//! (`cargo test --workspace` builds both).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use profcodec_testkit::corpus::{corpus_dir, files_below};
use serde_json::Value;

/// Registers every table of an export as a view `<set>.<table>` (and `inputs`), then runs each
/// query of a JSON list and prints a JSON list of results (each a list of row objects).
const DUCKDB: &str = r#"
import duckdb, json, os, sys
out, queries = sys.argv[1], json.loads(sys.argv[2])
con = duckdb.connect()
con.execute(f"CREATE VIEW inputs AS SELECT * FROM read_parquet('{out}/inputs/*.parquet')")
for s in sorted(os.listdir(out)):
    if s == "inputs" or not os.path.isdir(os.path.join(out, s)):
        continue
    con.execute(f'CREATE SCHEMA "{s}"')
    for t in sorted(os.listdir(os.path.join(out, s))):
        con.execute(f"""CREATE VIEW "{s}"."{t}" AS SELECT * FROM
            read_parquet('{out}/{s}/{t}/*/*.parquet', hive_partitioning = true)""")
results = []
for q in queries:
    cur = con.execute(q)
    cols = [d[0] for d in cur.description]
    results.append([dict(zip(cols, r)) for r in cur.fetchall()])
print(json.dumps(results))
"#;

/// `profcodec-sql`: `profcodec-sql sql ...` is what `profcodec sql ...` runs.
fn profcodec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
}

/// The `profcodec` command whose `top` the tables must agree with: `PROFCODEC_CLI`, else the
/// binary beside `profcodec-sql`.
fn profcodec_cli() -> Command {
    let path = std::env::var_os("PROFCODEC_CLI").map_or_else(
        || Path::new(env!("CARGO_BIN_EXE_profcodec-sql")).with_file_name("profcodec"),
        PathBuf::from,
    );
    assert!(
        path.is_file(),
        "{} is missing: `cargo build -p profcodec-cli` (or set PROFCODEC_CLI)",
        path.display()
    );
    Command::new(path)
}

fn run_ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json_array(bytes: &[u8]) -> Vec<Value> {
    match serde_json::from_slice(bytes).unwrap() {
        Value::Array(rows) => rows,
        other => panic!("not an array: {other}"),
    }
}

/// `profcodec sql --format json QUERY INPUTS...`.
fn sql(query: &str, inputs: &[PathBuf]) -> Vec<Value> {
    json_array(&run_ok(
        profcodec()
            .args(["sql", "--format", "json", query])
            .args(inputs),
    ))
}

/// DuckDB's answers to `queries` over the export in `out`.
fn duckdb(python: &OsStr, out: &Path, queries: &[String]) -> Vec<Vec<Value>> {
    let results = run_ok(
        Command::new(python)
            .arg("-c")
            .arg(DUCKDB)
            .arg(out)
            .arg(serde_json::to_string(queries).unwrap()),
    );
    json_array(&results)
        .into_iter()
        .map(|r| match r {
            Value::Array(rows) => rows,
            other => panic!("not an array: {other}"),
        })
        .collect()
}

/// A row in a canonical text: columns sorted by name, nulls left out (the JSON writer of
/// `profcodec sql` omits them), numbers as doubles (DuckDB reads the Hive key as BIGINT, the
/// session has it as UInt32), with `digits` significant digits (all of them when `None`: sums
/// made in another order differ in the last bits).
fn canonical(row: &Value, digits: Option<usize>) -> String {
    let Value::Object(map) = row else {
        panic!("not an object: {row}")
    };
    let sorted: BTreeMap<&str, String> = map
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| {
            let v = match v {
                Value::Number(n) => match digits {
                    None => format!("{:?}", n.as_f64().unwrap()),
                    Some(d) => format!("{:.*e}", d - 1, n.as_f64().unwrap()),
                },
                other => other.to_string(),
            };
            (k.as_str(), v)
        })
        .collect();
    format!("{sorted:?}")
}

/// The rows as a sorted list of canonical texts (a multiset).
fn multiset(rows: &[Value]) -> Vec<String> {
    multiset_to(rows, None)
}

/// [`multiset`] with numbers to 12 significant digits, for sums.
fn sums(rows: &[Value]) -> Vec<String> {
    multiset_to(rows, Some(12))
}

fn multiset_to(rows: &[Value], digits: Option<usize>) -> Vec<String> {
    let mut out: Vec<String> = rows.iter().map(|r| canonical(r, digits)).collect();
    out.sort();
    out
}

fn number(row: &Value, key: &str) -> f64 {
    row.get(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key} in {row}"))
}

fn text(row: &Value, key: &str) -> String {
    match row.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// Every input of the corpus the tables read: the HPCToolkit databases, the hpcrun measurement
/// folders, NYTProf profiles, EasyProfiler captures and StatProfiler sessions.
fn corpus_inputs(corpus: &Path) -> Vec<PathBuf> {
    let dirs = |sub: &str| -> Vec<PathBuf> {
        let mut d: Vec<PathBuf> = std::fs::read_dir(corpus.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        d.sort();
        d
    };
    let mut inputs = dirs("hpctoolkit/dbase");
    inputs.push(corpus.join("hpctoolkit/hatchet-gamess"));
    inputs.extend(dirs("hpctoolkit/meas"));
    inputs.extend(
        files_below(&corpus.join("nytprof"))
            .into_iter()
            .filter(|f| f.to_string_lossy().ends_with(".nytprof.out")),
    );
    inputs.extend(
        files_below(&corpus.join("easyprofiler"))
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "prof")),
    );
    inputs.extend(
        dirs("statprofiler")
            .into_iter()
            .filter(|d| !d.ends_with("progs") && !d.ends_with("file_option")),
    );
    inputs.push(corpus.join("statprofiler/file_option/profile.bin"));
    inputs
}

/// The sets and tables of an export, from its folders.
fn exported_tables(out: &Path) -> Vec<(String, String)> {
    let mut tables = Vec::new();
    for set in std::fs::read_dir(out).unwrap() {
        let set = set.unwrap().path();
        // The `.profcodec-output` mark of a folder profcodec wrote is no set.
        if set.ends_with("inputs") || !set.is_dir() {
            continue;
        }
        for table in std::fs::read_dir(&set).unwrap() {
            let name = |p: &Path| p.file_name().unwrap().to_string_lossy().into_owned();
            tables.push((name(&set), name(&table.unwrap().path())));
        }
    }
    tables.sort();
    tables
}

/// Exports `inputs` into a fresh folder and returns it with the rows per `set.table` the export
/// reported.
fn export(inputs: &[PathBuf], name: &str) -> (PathBuf, BTreeMap<String, u64>) {
    let out = std::env::temp_dir().join(format!("profcodec-tables-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let report = run_ok(
        profcodec()
            .args(["export", "--compression", "snappy", "--parquet"])
            .arg(&out)
            .args(inputs),
    );
    (out, reported_rows(&report))
}

/// The rows per `set.table` an export (or its `--dry-run`) reported: `set.table: N rows...`.
fn reported_rows(report: &[u8]) -> BTreeMap<String, u64> {
    let mut rows = BTreeMap::new();
    for line in String::from_utf8_lossy(report).lines() {
        let (table, rest) = line.split_once(": ").unwrap();
        let n: u64 = rest.split(' ').next().unwrap().parse().unwrap();
        rows.insert(table.to_owned(), n);
    }
    rows
}

/// `export --dry-run` reads every table of every corpus input as the export does and reports the
/// same rows, writing nothing; an export on one thread writes the same rows as on several.
#[test]
fn dry_run_and_one_thread_read_what_the_export_writes() {
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let inputs = corpus_inputs(&corpus);
    let out = std::env::temp_dir().join(format!("profcodec-tables-dry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let export = |extra: &[&str]| {
        reported_rows(&run_ok(
            profcodec()
                .args(["export", "--table", "hpctoolkit", "--table", "nytprof"])
                .args(extra)
                .arg("--parquet")
                .arg(&out)
                .args(&inputs),
        ))
    };
    let dry = export(&["--dry-run"]);
    assert!(!out.exists(), "--dry-run writes nothing");
    let mut written = export(&["--threads", "2", "--compression", "none"]);
    // The `inputs` table is the export's own, not read from the inputs.
    assert_eq!(written.remove("inputs"), Some(inputs.len() as u64));
    assert_eq!(dry, written);
    assert!(written["hpctoolkit.values"] > 0 && written["nytprof.lines"] > 0);
    let mut one = export(&["--threads", "1", "--force", "--compression", "none"]);
    one.remove("inputs");
    assert_eq!(one, written);
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn duckdb_reads_every_table_as_profcodec_sql_reads_the_inputs() {
    let Some(python) = std::env::var_os("PROFCODEC_DUCKDB_PYTHON") else {
        println!("PROFCODEC_DUCKDB_PYTHON is not set; DuckDB test of the Parquet export not run");
        return;
    };
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let inputs = corpus_inputs(&corpus);
    let (out, reported) = export(&inputs, "all");
    let tables = exported_tables(&out);
    // Every set of the formats the corpus has, and the profile set, with all their tables.
    assert_eq!(tables.len(), 5 + 5 + 4 + 6 + 3 + 9, "{tables:?}");
    // Every column named in the query, unquoted: no column name needs quoting in either engine.
    let columns = sql(
        "SELECT table_schema, table_name, column_name FROM information_schema.columns \
         WHERE table_schema <> 'information_schema' ORDER BY ordinal_position",
        &inputs,
    );
    let mut queries: Vec<String> = tables
        .iter()
        .map(|(set, table)| {
            let names: Vec<String> = columns
                .iter()
                .filter(|c| text(c, "table_schema") == *set && text(c, "table_name") == *table)
                .map(|c| text(c, "column_name"))
                .collect();
            assert!(
                names.contains(&"input".to_owned()),
                "{set}.{table}: {names:?}"
            );
            format!("SELECT {} FROM {set}.\"{table}\"", names.join(", "))
        })
        .collect();
    queries.push("SELECT * FROM inputs".to_owned());
    let answers = duckdb(&python, &out, &queries);
    for (query, duck) in queries.iter().zip(&answers) {
        let ours = sql(query, &inputs);
        assert_eq!(duck.len(), ours.len(), "{query}: rows");
        let (duck, ours) = (multiset(duck), multiset(&ours));
        if let Some(i) = (0..duck.len()).find(|&i| duck[i] != ours[i]) {
            panic!("{query}: DuckDB {} but profcodec sql {}", duck[i], ours[i]);
        }
    }
    for ((set, table), duck) in tables.iter().zip(&answers) {
        assert_eq!(
            reported[&format!("{set}.{table}")],
            duck.len() as u64,
            "{set}.{table}: rows reported"
        );
    }
    std::fs::remove_dir_all(&out).unwrap();
}

/// The top functions by self value of the profile model, from its tables: each node's self
/// value goes to its nearest function-like node, over the summary contexts where the profile
/// has them (else every context), of the default value type, grouped by function, file and
/// module (a function without a name by its address).
const PROFILE_TOP: &str = "
WITH whole AS (
    SELECT c.context, c.input FROM profile.contexts c
    WHERE c.summary OR NOT EXISTS (
        SELECT 1 FROM profile.contexts s WHERE s.summary AND s.input = c.input))
SELECT f.function AS function, f.file AS file, f.module AS module,
    CASE WHEN f.function IS NULL THEN f.address END AS address,
    COALESCE(SUM(v.self_value), 0) AS self
FROM profile.node_values v
JOIN whole w ON w.context = v.context AND w.input = v.input
JOIN profile.value_types t ON t.value_type = v.value_type AND t.input = v.input
JOIN profile.nodes n ON n.node = v.node AND n.input = v.input
JOIN profile.nodes owner ON owner.node = n.function_node AND owner.input = n.input
JOIN profile.frames f ON f.frame = owner.frame AND f.input = owner.input
WHERE t.is_default AND v.input = 0
GROUP BY f.function, f.file, f.module, CASE WHEN f.function IS NULL THEN f.address END
ORDER BY self DESC, function, file, module, address";

/// hpcviewer's exclusive cost per function over the summary profile of the metric `{metric}`
/// (which hpcprof may store with its unit, `CPUTIME (sec)`),
/// from the HPCToolkit tables: the `function`-scope sums of the contexts that are functions or
/// calls (a call to an address without a function, in a database made without structure
/// files, is grouped by its module and offset).
const HPCTOOLKIT_TOP: &str = "
SELECT c.function AS function,
    CASE WHEN c.function IS NULL THEN c.module END AS module,
    CASE WHEN c.function IS NULL THEN c.module_offset END AS address, SUM(v.value) AS self
FROM hpctoolkit.values v
JOIN hpctoolkit.metrics m ON m.metric_id = v.metric_id AND m.summary = v.summary AND m.input = v.input
JOIN hpctoolkit.contexts c ON c.ctx_id = v.ctx_id AND c.input = v.input
WHERE v.summary AND (m.name = '{metric}' OR m.name = '{metric} (' || m.unit || ')')
  AND m.scope = 'function' AND m.combine = 'sum'
  AND (c.relation <> 'lexical' OR c.lexical_type = 'function')
GROUP BY c.function, CASE WHEN c.function IS NULL THEN c.module END,
    CASE WHEN c.function IS NULL THEN c.module_offset END
ORDER BY self DESC, function, module, address";

/// NYTProf's subs by exclusive time, as `top` reads them (its per-sub table).
const NYTPROF_SUBS: &str = "SELECT name AS function, exclusive_time AS self FROM nytprof.subs ORDER BY self DESC, function";

/// The hottest NYTProf lines.
const NYTPROF_LINES: &str =
    "SELECT file, line, time FROM nytprof.lines ORDER BY time DESC, file, line LIMIT 10";

/// `profcodec top --json` rows of `input` with `args`, all of them.
fn top(input: &Path, args: &[&str]) -> Vec<Value> {
    json_array(&run_ok(
        profcodec_cli()
            .args(["top", "--json", "-n", "0"])
            .args(args)
            .arg(input),
    ))
}

/// Checks that `duck` and `ours` are the same rows, in order, and that their first ten rows
/// are `top`'s first ten (names, then values).
fn assert_top(what: &str, duck: &[Value], ours: &[Value], top: &[Value], key: &[&str]) {
    assert_eq!(sums(duck), sums(ours), "{what}: DuckDB vs profcodec sql");
    let name = |r: &Value| key.iter().map(|k| text(r, k)).collect::<Vec<_>>().join("|");
    assert!(!top.is_empty(), "{what}: top has rows");
    // Both sides hold rows: every function of top with a value (top lists zero rows too).
    let valued = top.iter().filter(|t| number(t, "self") != 0.0).count();
    assert!(
        duck.len() >= valued.min(10),
        "{what}: {} rows for {valued}",
        duck.len()
    );
    for (i, (t, d)) in top.iter().zip(duck).take(10).enumerate() {
        // Equal values may come in any order: compare the value, then the name where unique.
        assert!(
            close(number(t, "self"), number(d, "self")),
            "{what}: row {i}: top {t} vs DuckDB {d}"
        );
        let tied = top
            .iter()
            .filter(|o| close(number(o, "self"), number(t, "self")))
            .count();
        if tied == 1 {
            assert_eq!(name(t), name(d), "{what}: row {i}");
        }
    }
    // And every row of the grouping has top's value.
    let by_name: BTreeMap<String, f64> =
        duck.iter().map(|r| (name(r), number(r, "self"))).collect();
    for t in top {
        if let Some(v) = by_name.get(&name(t)) {
            assert!(close(*v, number(t, "self")), "{what}: {t} vs {v}");
        }
    }
}

#[test]
fn top_functions_and_hottest_lines_agree_in_duckdb_sql_and_top() {
    let Some(python) = std::env::var_os("PROFCODEC_DUCKDB_PYTHON") else {
        println!("PROFCODEC_DUCKDB_PYTHON is not set; DuckDB test of the Parquet export not run");
        return;
    };
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    for input in corpus_inputs(&corpus) {
        let what = input.display().to_string();
        let inputs = [input.clone()];
        let (out, _) = export(&inputs, "top");
        let profile_top = PROFILE_TOP.to_owned();
        let mut queries = vec![profile_top.clone()];
        let is_hpctoolkit = input.join("meta.db").is_file();
        let is_nytprof = what.ends_with(".nytprof.out");
        let top_rows = top(&input, &[]);
        if is_hpctoolkit {
            let metric = text(&top_rows[0], "metric");
            queries.push(HPCTOOLKIT_TOP.replace("{metric}", &metric));
        }
        if is_nytprof {
            queries.push(NYTPROF_LINES.to_owned());
            queries.push(NYTPROF_SUBS.to_owned());
        }
        let answers = duckdb(&python, &out, &queries);
        // NYTProf's top reads the per-sub table, not the call tree.
        if !is_nytprof {
            let ours = sql(&profile_top, &inputs);
            assert_top(
                &what,
                &answers[0],
                &ours,
                &top_rows,
                &["function", "file", "module", "address"],
            );
        }
        if is_hpctoolkit {
            let ours = sql(&queries[1], &inputs);
            assert_top(
                &format!("{what} (hpctoolkit tables)"),
                &answers[1],
                &ours,
                &top_rows,
                &["function", "address"],
            );
        }
        if is_nytprof {
            let ours = sql(NYTPROF_LINES, &inputs);
            let lines = top(&input, &["--group", "line"]);
            assert_eq!(multiset(&answers[1]), multiset(&ours), "{what}: lines");
            for (i, (t, d)) in lines.iter().zip(&answers[1]).enumerate() {
                assert!(
                    close(number(t, "self"), number(d, "time")),
                    "{what}: line {i}: {t} vs {d}"
                );
            }
            let ours = sql(NYTPROF_SUBS, &inputs);
            assert_top(
                &format!("{what} (subs)"),
                &answers[2],
                &ours,
                &top_rows,
                &["function"],
            );
        }
        std::fs::remove_dir_all(&out).unwrap();
    }
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// A damaged input is exit status 1 naming the file, a query DataFusion refuses 2, an unknown
/// `--table` 2, and an export over an existing folder 3 (without `--force`, or whatever the
/// flags when profcodec did not write it).
#[test]
fn failures_say_what_and_exit_as_documented() {
    let dir = std::env::temp_dir().join(format!("profcodec-tables-fail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let good = testdata("nytprof/hello.nytprof.out");
    let bytes = std::fs::read(&good).unwrap();
    let cut = dir.join("cut.nytprof.out");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();

    let out = profcodec()
        .args(["sql", "SELECT * FROM nytprof.lines"])
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cut.nytprof.out: nytprof: "), "{stderr}");

    let out = profcodec()
        .args(["sql", "SELEC 1"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    let out = profcodec()
        .args(["sql", "SELECT * FROM nytprof.nothing"])
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing"));

    // A folder that profcodec did not write is never replaced, even with --force (exit 3).
    let target = dir.join("export");
    std::fs::create_dir(&target).unwrap();
    std::fs::write(target.join("keep"), b"").unwrap();
    for force in [false, true] {
        let mut cmd = profcodec();
        cmd.args(["export", "--parquet"]).arg(&target).arg(&good);
        if force {
            cmd.arg("--force");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert!(target.join("keep").exists(), "a foreign folder replaced");
    }
    // An export is replaced only with --force, and then whole.
    let target = dir.join("dataset");
    let export = |force: bool, table: &str| {
        let mut cmd = profcodec();
        cmd.args(["export", "--table", table, "--parquet"])
            .arg(&target)
            .arg(&good);
        if force {
            cmd.arg("--force");
        }
        cmd.output().unwrap()
    };
    let out = export(false, "subs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(export(false, "lines").status.code(), Some(3));
    let out = export(true, "lines");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        target
            .join("nytprof/lines/input=0/part-00000.parquet")
            .is_file()
    );
    assert!(!target.join("nytprof/subs").exists());

    // A damaged input leaves no output at all.
    let failed = dir.join("failed");
    let out = profcodec()
        .args(["export", "--parquet"])
        .arg(&failed)
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(!failed.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `export --parquet db --force db` once destroyed a database: an output that is the input is
/// refused (exit status 3), and the database is as it was.
#[test]
fn an_export_into_its_input_is_refused() {
    let dir = std::env::temp_dir().join(format!("profcodec-tables-self-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let db = testdata("hpctoolkit/demo.d");
    let copy = dir.join("db");
    std::fs::create_dir_all(&copy).unwrap();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&db).unwrap() {
        let entry = entry.unwrap();
        if entry.path().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
            names.push(entry.file_name());
        }
    }
    let listing = |p: &Path| {
        let mut n: Vec<_> = std::fs::read_dir(p)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        n.sort();
        n
    };
    let before = listing(&copy);
    let out = profcodec()
        .args(["export", "--parquet"])
        .arg(&copy)
        .arg("--force")
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is the input"), "{stderr}");
    assert_eq!(listing(&copy), before);
    assert!(!names.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `profcodec sql QUERY hello.nytprof.out` with `args` before the query: status, stdout,
/// stderr, and how long it ran.
fn sql_on_hello(args: &[&str], query: &str) -> (Option<i32>, String, String, Duration) {
    let start = Instant::now();
    let out = profcodec()
        .arg("sql")
        .args(args)
        .arg(query)
        .arg(testdata("nytprof/hello.nytprof.out"))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    )
}

/// SQL is read-only: COPY TO, CREATE EXTERNAL TABLE, INSERT and other statements that write
/// or change something are refused with status 2, and no file or folder is made.
#[test]
fn sql_refuses_what_writes_and_makes_no_file() {
    let dir = std::env::temp_dir().join(format!("profcodec-sql-readonly-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let target = dir.join("new/out.csv");
    let existing = dir.join("existing.csv");
    std::fs::write(&existing, "keep\n").unwrap();
    for (query, what) in [
        (
            format!(
                "COPY (SELECT * FROM nytprof.lines) TO '{}' STORED AS CSV",
                target.display()
            ),
            "COPY is refused",
        ),
        (
            format!("COPY (SELECT 1) TO '{}' STORED AS CSV", existing.display()),
            "COPY is refused",
        ),
        (
            format!(
                "CREATE EXTERNAL TABLE t STORED AS CSV LOCATION '{}'",
                existing.display()
            ),
            "CREATE EXTERNAL TABLE is refused",
        ),
        (
            "INSERT INTO inputs SELECT * FROM inputs".to_owned(),
            "INSERT INTO is refused",
        ),
        (
            "CREATE TABLE t AS SELECT 1".to_owned(),
            "CREATE TABLE is refused",
        ),
        ("DROP TABLE inputs".to_owned(), "DROP TABLE is refused"),
    ] {
        let (status, stdout, stderr, _) = sql_on_hello(&[], &query);
        assert_eq!(status, Some(2), "{query}: {stderr}");
        assert!(stderr.contains(what), "{query}: {stderr}");
        assert!(stderr.contains("only reads"), "{query}: {stderr}");
        assert!(stdout.is_empty(), "{query}: {stdout}");
    }
    assert!(!dir.join("new").exists(), "no folder made");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep\n");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A query over `--memory-limit` stops with a worded error and status 2, not an abort.
#[test]
fn sql_over_the_memory_limit_fails_saying_so() {
    let query =
        "SELECT length(string_agg(CAST(value AS VARCHAR), ',')) FROM generate_series(1, 1000000)";
    let (status, _, stderr, took) = sql_on_hello(&["--memory-limit", "1M"], query);
    assert_eq!(status, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "profcodec: the query needs more than 1 MiB of memory; --memory-limit raises it"
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Raised, it runs.
    let (status, stdout, stderr, _) = sql_on_hello(&["--memory-limit", "256MiB"], query);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("6888895"), "{stdout}");
    // A size that is none is refused by the argument parser.
    let (status, _, stderr, _) = sql_on_hello(&["--memory-limit", "lots"], "SELECT 1");
    assert_eq!(status, Some(2));
    assert!(stderr.contains("is no size"), "{stderr}");
}

/// `--timeout` cancels a query still running (a cross join of a trillion rows) with a worded
/// error and status 124 (as `timeout(1)`), at once.
#[test]
fn sql_timeout_cancels_a_long_query() {
    let query = "SELECT COUNT(*) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b";
    let (status, stdout, stderr, took) = sql_on_hello(&["--timeout", "1"], query);
    assert_eq!(status, Some(124), "{stderr}");
    assert!(
        stderr.contains("the query was cancelled after running 1 s; --timeout"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "{stdout}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    // Streamed rows stop at the timeout too.
    let (status, _, _, took) = sql_on_hello(
        &["--timeout", "1", "--format", "csv"],
        "SELECT a.value FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b",
    );
    assert_eq!(status, Some(124));
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// The table format keeps its first 1,000 rows and counts the others; csv prints them all; an
/// empty result prints its header and `0 rows`.
#[test]
fn sql_table_is_bounded_and_says_what_it_left_out() {
    let (status, stdout, stderr, _) =
        sql_on_hello(&[], "SELECT value FROM generate_series(1, 100000)");
    assert_eq!(status, Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // 3 header lines, 1,000 rows, the bottom border and the count.
    assert_eq!(lines.len(), 1005, "{}", lines.len());
    assert_eq!(lines[3].trim(), "| 1     |");
    assert_eq!(lines[1002].trim(), "| 1000  |");
    assert_eq!(
        lines[1004],
        "... and 99,000 more rows (use --format csv for all)"
    );
    let (status, stdout, _, _) = sql_on_hello(
        &["--format", "csv"],
        "SELECT value FROM generate_series(1, 100000)",
    );
    assert_eq!(status, Some(0));
    assert_eq!(stdout.lines().count(), 100001);
    // Exactly the cap: no count line.
    let (_, stdout, _, _) = sql_on_hello(&[], "SELECT value FROM generate_series(1, 1000)");
    assert!(stdout.trim_end().ends_with('+'), "{stdout}");

    let (status, stdout, stderr, _) =
        sql_on_hello(&[], "SELECT file, line FROM nytprof.lines WHERE line < 0");
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "+------+------+\n| file | line |\n+------+------+\n+------+------+\n0 rows\n"
    );
}

/// An unknown table is named with the tables the inputs have; no message names DataFusion's
/// catalog.
#[test]
fn sql_unknown_table_lists_the_inputs_tables() {
    let (status, _, stderr, _) = sql_on_hello(&[], "SELECT * FROM nope");
    assert_eq!(status, Some(2));
    assert!(
        stderr.starts_with("profcodec: no table nope in the inputs: they have inputs, nytprof.calls, nytprof.files, nytprof.lines, nytprof.subs, profile."),
        "{stderr}"
    );
    for query in [
        "SELECT * FROM nope",
        "SELECT * FROM public.nope",
        "SELECT nope FROM lines",
        "SELECT * FROM lines JOIN nytprof.nothing USING (file)",
    ] {
        let (status, _, stderr, _) = sql_on_hello(&[], query);
        assert_eq!(status, Some(2), "{query}");
        assert!(!stderr.contains("datafusion."), "{query}: {stderr}");
    }
}
