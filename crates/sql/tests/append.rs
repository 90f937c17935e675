//! `profcodec export --parquet OUT --append INPUT...`: inputs added to a dataset profcodec wrote.
//!
//! - An export of A followed by an append of B (and of A again) has the files of an export of
//!   A, B and A at once, byte for byte, but for the `inputs` table, which gains a part with the
//!   same rows; no file that was there changes (bytes and modification time).
//! - Folders profcodec did not write, files, `--force` with `--append`, and datasets whose
//!   `inputs` table or partition folders are damaged or number inputs out of range are refused
//!   in words, and nothing is added; a failing input leaves nothing new either.
//! - DuckDB (PyPI `duckdb`) reads the grown dataset as `profcodec sql` reads its inputs. It is
//!   the Python of `PROFCODEC_DUCKDB_PYTHON`, else the venv `cargo xtask test` makes
//!   (target/tables-venv); without either the test says so and passes, unless
//!   `PROFCODEC_REQUIRE_DUCKDB` is set.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use arrow_array::{Array, RecordBatch, StringArray, UInt32Array};
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// A fresh scratch folder of this test process, removed first if a run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profcodec-append-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}

fn export(args: &[&str], out: &Path, inputs: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
        .arg("export")
        .args(args)
        .arg("--parquet")
        .arg(out)
        .args(inputs)
        .output()
        .unwrap()
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file below `dir`, relative, with its bytes and modification time.
fn files(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    fn walk(
        root: &Path,
        dir: &Path,
        all: &mut BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>,
    ) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, all);
            } else {
                let meta = std::fs::metadata(&path).unwrap();
                all.insert(
                    path.strip_prefix(root).unwrap().to_path_buf(),
                    (std::fs::read(&path).unwrap(), meta.modified().unwrap()),
                );
            }
        }
    }
    let mut all = BTreeMap::new();
    walk(dir, dir, &mut all);
    all
}

/// The rows (input, path, set) of every part of the `inputs` table of `out`.
fn inputs_rows(out: &Path) -> Vec<(u32, String, String)> {
    let mut rows = Vec::new();
    for part in std::fs::read_dir(out.join("inputs")).unwrap() {
        let file = std::fs::File::open(part.unwrap().path()).unwrap();
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
        {
            let batch = batch.unwrap();
            let col = |name: &str| batch.column_by_name(name).unwrap().clone();
            let input = col("input");
            let input = input.as_any().downcast_ref::<UInt32Array>().unwrap();
            let (path, set) = (col("path"), col("set"));
            let path = path.as_any().downcast_ref::<StringArray>().unwrap();
            let set = set.as_any().downcast_ref::<StringArray>().unwrap();
            for i in 0..batch.num_rows() {
                rows.push((
                    input.value(i),
                    path.value(i).to_owned(),
                    set.value(i).to_owned(),
                ));
            }
        }
    }
    rows.sort();
    rows
}

/// Writes an `inputs` table part at `path` with these input numbers.
fn write_inputs_part(path: &Path, numbers: &[u32]) {
    let schema = Arc::new(Schema::new(vec![
        Field::new("input", DataType::UInt32, false),
        Field::new("path", DataType::Utf8, false),
        Field::new("set", DataType::Utf8, false),
    ]));
    let batch = RecordBatch::try_new(
        Arc::clone(&schema),
        vec![
            Arc::new(UInt32Array::from(numbers.to_vec())),
            Arc::new(StringArray::from(vec!["crafted"; numbers.len()])),
            Arc::new(StringArray::from(vec!["nytprof"; numbers.len()])),
        ],
    )
    .unwrap();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

fn partitions(out: &Path, table: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(out.join(table))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_append_writes_what_one_export_writes_and_changes_no_file() {
    let dir = scratch("same");
    let (a, b) = (
        testdata("nytprof/hello.nytprof.out"),
        testdata("hpctoolkit/demo.d"),
    );
    let grown = dir.join("grown");
    ok(export(&[], &grown, std::slice::from_ref(&a)));
    let before = files(&grown);
    // B brings a set the dataset lacks; A again is a run profiled again, noted.
    let added = ok(export(&["--append"], &grown, &[b.clone(), a.clone()]));
    let note = stderr(&added);
    assert!(
        note.contains("already (input 0); it is added again as input 2"),
        "{note}"
    );
    let after = files(&grown);
    for (path, (bytes, mtime)) in &before {
        let (now, now_mtime) = &after[path];
        assert!(
            now == bytes && now_mtime == mtime,
            "{} changed",
            path.display()
        );
    }
    assert!(after.contains_key(Path::new("inputs/part-00001.parquet")));

    let fresh = dir.join("fresh");
    ok(export(&[], &fresh, &[a.clone(), b.clone(), a.clone()]));
    let fresh_files = files(&fresh);
    type Files = BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)>;
    let tables = |files: &Files| -> BTreeMap<PathBuf, Vec<u8>> {
        files
            .iter()
            .filter(|(p, _)| !p.starts_with("inputs"))
            .map(|(p, (bytes, _))| (p.clone(), bytes.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    // The same partitions, files and bytes: the input number is only in the folder names.
    assert_eq!(
        tables(&after).keys().collect::<Vec<_>>(),
        tables(&fresh_files).keys().collect::<Vec<_>>()
    );
    assert!(tables(&after) == tables(&fresh_files));
    assert_eq!(inputs_rows(&grown), inputs_rows(&fresh));
    assert_eq!(inputs_rows(&grown).len(), 3);
    assert_eq!(partitions(&grown, "nytprof/lines"), ["input=0", "input=2"]);
    // No staging is left beside the dataset.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 2, "{left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_missing_folder_becomes_a_new_dataset() {
    let dir = scratch("new");
    let out = dir.join("ds");
    ok(export(
        &["--append"],
        &out,
        &[testdata("nytprof/hello.nytprof.out")],
    ));
    assert!(out.join(".profcodec-output").is_file());
    assert!(out.join("inputs/part-00000.parquet").is_file());
    assert_eq!(partitions(&out, "nytprof/lines"), ["input=0"]);
    // Its folder must exist: a typo makes nothing.
    let typo = export(
        &["--append"],
        &dir.join("no/ds"),
        &[testdata("nytprof/hello.nytprof.out")],
    );
    assert_eq!(typo.status.code(), Some(3), "{}", stderr(&typo));
    assert!(
        stderr(&typo).contains("does not exist"),
        "{}",
        stderr(&typo)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn appends_to_what_profcodec_did_not_write_are_refused() {
    let dir = scratch("refused");
    let input = [testdata("nytprof/hello.nytprof.out")];
    // A folder of someone else's files.
    let theirs = dir.join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    let out = export(&["--append"], &theirs, &input);
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("which profcodec did not write and never adds to"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 1);
    // A file.
    let file = dir.join("file.parquet");
    std::fs::write(&file, "data").unwrap();
    let out = export(&["--append"], &file, &input);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("is a file"), "{}", stderr(&out));
    assert_eq!(std::fs::read(&file).unwrap(), b"data");
    // --force replaces; --append adds: not both.
    let ds = dir.join("ds");
    ok(export(&[], &ds, &input));
    let out = export(&["--append", "--force"], &ds, &input);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    // An output inside an input is refused as for an export.
    let out = export(&["--append"], &ds, std::slice::from_ref(&ds));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A dataset whose `inputs` table or partition folders are damaged, or number inputs up to the
/// column's end, takes no input and is left as it was; numbers out of order are fine.
#[test]
fn damaged_or_exhausted_datasets_are_refused_and_left_as_they_were() {
    let dir = scratch("hostile");
    let input = [testdata("nytprof/hello.nytprof.out")];
    let fresh = |name: &str| {
        let ds = dir.join(name);
        ok(export(&[], &ds, &input));
        ds
    };
    let refused = |ds: &Path, words: &str| {
        let before = files(ds);
        let out = export(&["--append"], ds, &input);
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(stderr(&out).contains(words), "{words}: {}", stderr(&out));
        assert!(files(ds) == before, "{} changed", ds.display());
    };
    let part = |ds: &Path| ds.join("inputs/part-00000.parquet");

    let ds = fresh("garbage");
    std::fs::write(part(&ds), b"not parquet at all").unwrap();
    refused(&ds, "the inputs table does not read");

    // A footer that claims metadata far larger than the file: refused, not allocated.
    let ds = fresh("footer");
    let mut bytes = b"PAR1".to_vec();
    bytes.extend_from_slice(&[0; 16]);
    bytes.extend_from_slice(&u32::MAX.to_le_bytes());
    bytes.extend_from_slice(b"PAR1");
    std::fs::write(part(&ds), bytes).unwrap();
    refused(&ds, "the inputs table does not read");

    // A valid file with other columns.
    let ds = fresh("columns");
    std::fs::remove_file(part(&ds)).unwrap();
    std::fs::copy(
        ds.join("nytprof/lines/input=0/part-00000.parquet"),
        part(&ds),
    )
    .unwrap();
    refused(&ds, "has no column \"input\"");

    // Input numbers at the column's end.
    let ds = fresh("huge");
    write_inputs_part(&ds.join("inputs/part-00007.parquet"), &[u32::MAX, 3]);
    refused(&ds, "an input numbered 4294967295, the highest there is");

    // A partition folder whose number is no u32.
    let ds = fresh("folder");
    std::fs::create_dir(ds.join("nytprof/lines/input=99999999999")).unwrap();
    refused(&ds, "names no input number");

    // Room for one more input, not two.
    let ds = fresh("full");
    write_inputs_part(&ds.join("inputs/part-00001.parquet"), &[u32::MAX - 1]);
    let out = export(&["--append"], &ds, &[input[0].clone(), input[0].clone()]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("do not fit"), "{}", stderr(&out));
    ok(export(&["--append"], &ds, &input));
    assert!(
        ds.join(format!("nytprof/lines/input={}", u32::MAX))
            .is_dir()
    );

    // Numbers out of order: the new input comes after the highest.
    let ds = fresh("order");
    write_inputs_part(&ds.join("inputs/part-00003.parquet"), &[9, 4, 6]);
    ok(export(&["--append"], &ds, &input));
    assert_eq!(partitions(&ds, "nytprof/lines"), ["input=0", "input=10"]);
    assert!(ds.join("inputs/part-00004.parquet").is_file());

    // An input that fails to read: nothing new is left, nor any staging.
    let ds = fresh("failing");
    let cut = dir.join("cut.nytprof.out");
    let whole = std::fs::read(&input[0]).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let before = files(&ds);
    let out = export(
        &["--append"],
        &ds,
        &[testdata("hpctoolkit/demo.d"), cut.clone()],
    );
    assert!(!out.status.success());
    assert!(files(&ds) == before, "{}", stderr(&out));
    assert!(
        std::fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with('.')),
        "staging left behind"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Python with duckdb: `PROFCODEC_DUCKDB_PYTHON`, else the venv `cargo xtask test` makes.
fn duckdb_python() -> Option<PathBuf> {
    let python = std::env::var_os("PROFCODEC_DUCKDB_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            let venv = root().join("target/tables-venv/bin/python");
            venv.is_file().then_some(venv)
        });
    if python.is_none() {
        assert!(
            std::env::var_os("PROFCODEC_REQUIRE_DUCKDB").is_none(),
            "PROFCODEC_REQUIRE_DUCKDB is set, and no Python with duckdb was found \
             (PROFCODEC_DUCKDB_PYTHON, target/tables-venv)"
        );
        println!("no Python with duckdb: DuckDB test of an appended dataset not run");
    }
    python
}

/// Rows per input of each query, as DuckDB reads the dataset: one line of JSON per query.
const DUCKDB: &str = r#"
import duckdb, json, sys
out = sys.argv[1]
con = duckdb.connect()
for table in sys.argv[2:]:
    rows = con.execute(f"""SELECT input, count(*) AS n FROM read_parquet('{out}/{table}/**/*.parquet',
        hive_partitioning = true) GROUP BY input ORDER BY input""").fetchall()
    print(json.dumps([[int(k), int(n)] for k, n in rows]))
rows = con.execute(f"""SELECT input, path FROM read_parquet('{out}/inputs/*.parquet')
    ORDER BY input""").fetchall()
print(json.dumps([[int(k), p] for k, p in rows]))
"#;

#[test]
fn duckdb_reads_an_appended_dataset_as_profcodec_sql_reads_its_inputs() {
    let Some(python) = duckdb_python() else {
        return;
    };
    let dir = scratch("duckdb");
    let inputs = [
        testdata("nytprof/hello.nytprof.out"),
        testdata("hpctoolkit/demo.d"),
        testdata("nytprof/workload-100.nytprof.out"),
    ];
    let ds = dir.join("ds");
    ok(export(&[], &ds, &inputs[..1]));
    ok(export(&["--append"], &ds, &inputs[1..2]));
    ok(export(
        &["--append", "--compression", "snappy"],
        &ds,
        &inputs[2..],
    ));
    let tables = ["nytprof/lines", "hpctoolkit/values", "profile/frames"];
    let out = ok(Command::new(&python)
        .arg("-c")
        .arg(DUCKDB)
        .arg(&ds)
        .args(tables)
        .output()
        .unwrap());
    let answers: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (table, duck) in tables.iter().zip(&answers) {
        let query = format!(
            "SELECT input, count(*) AS n FROM {} GROUP BY input ORDER BY input",
            table.replace('/', ".")
        );
        let ours = ok(Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
            .args(["sql", "--format", "csv", &query])
            .args(&inputs)
            .output()
            .unwrap());
        let ours: Vec<serde_json::Value> = String::from_utf8(ours.stdout)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| {
                let (k, n) = l.split_once(',').unwrap();
                serde_json::json!([k.parse::<u64>().unwrap(), n.parse::<u64>().unwrap()])
            })
            .collect();
        assert_eq!(duck, &serde_json::Value::Array(ours), "{table}");
    }
    // The `inputs` table, its parts read as one: every input, in order.
    let paths: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(k, p)| serde_json::json!([k, p.to_string_lossy()]))
        .collect();
    assert_eq!(answers[3], serde_json::Value::Array(paths));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An append killed at any of its renames (`kill -9`: no handler runs) leaves the dataset as
/// it was or as the append makes it, never a mix: its inputs table lists the old inputs, or
/// all of them, each with every partition. The next append removes what the killed one left
/// (saying so) and adds its inputs as if nothing had happened.
#[cfg(unix)]
#[test]
fn an_append_killed_at_any_step_commits_whole_or_not_at_all() {
    let dir = scratch("killed");
    let (a, b, c) = (
        testdata("nytprof/hello.nytprof.out"),
        testdata("hpctoolkit/demo.d"),
        testdata("nytprof/hello.nytprof.out"),
    );
    type Tables = BTreeMap<PathBuf, Vec<u8>>;
    let tables = |ds: &Path| -> Tables {
        files(ds)
            .into_iter()
            .filter(|(p, _)| !p.starts_with("inputs") && !p.starts_with(".profcodec-output"))
            .map(|(p, (bytes, _))| (p, bytes))
            .collect()
    };
    let partition_inputs = |t: &Tables| -> std::collections::BTreeSet<String> {
        t.keys()
            .filter_map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .find(|c| c.starts_with("input="))
            })
            .collect()
    };
    let (old, new, old_then_c, new_then_c) = (
        dir.join("old"),
        dir.join("new"),
        dir.join("old-c"),
        dir.join("new-c"),
    );
    ok(export(&[], &old, std::slice::from_ref(&a)));
    ok(export(&[], &new, &[a.clone(), b.clone()]));
    ok(export(&[], &old_then_c, &[a.clone(), c.clone()]));
    ok(export(&[], &new_then_c, &[a.clone(), b.clone(), c.clone()]));
    let (old_rows, new_rows) = (inputs_rows(&old), inputs_rows(&new));
    let mut step = 0;
    loop {
        let run = dir.join(format!("run-{step}"));
        std::fs::create_dir(&run).unwrap();
        let ds = run.join("ds");
        ok(export(&[], &ds, std::slice::from_ref(&a)));
        let killed = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
            .env("PROFCODEC_TEST_ABORT_AFTER_RENAMES", step.to_string())
            .args(["export", "--append", "--parquet"])
            .arg(&ds)
            .arg(&b)
            .output()
            .unwrap();
        let done = killed.status.success();
        // Old or new, by its inputs table, and each input it lists whole.
        let rows = inputs_rows(&ds);
        let committed = rows.len() == new_rows.len();
        assert!(
            rows == old_rows || rows == new_rows,
            "step {step}: {rows:?}"
        );
        let now = tables(&ds);
        let whole = if committed {
            tables(&new)
        } else {
            tables(&old)
        };
        for (path, bytes) in &whole {
            assert!(
                now.get(path) == Some(bytes),
                "step {step}: {} missing",
                path.display()
            );
        }
        // Partitions of no listed input: the killed append's leftovers, and nothing else.
        for extra in now.keys().filter(|p| !whole.contains_key(*p)) {
            assert!(
                !committed,
                "step {step}: {} after the commit",
                extra.display()
            );
            assert!(
                partition_inputs(&now).contains("input=1"),
                "step {step}: {}",
                extra.display()
            );
        }
        // The next append repairs and adds.
        let next = ok(export(&["--append"], &ds, std::slice::from_ref(&c)));
        let expected = if committed { &new_then_c } else { &old_then_c };
        assert!(
            tables(&ds) == tables(expected),
            "step {step}: {}",
            stderr(&next)
        );
        assert_eq!(inputs_rows(&ds).len(), inputs_rows(expected).len());
        let left_over = now.len() > whole.len();
        assert_eq!(
            stderr(&next).contains("left by an append that did not complete"),
            left_over,
            "step {step}: {}",
            stderr(&next)
        );
        // No staging is left beside the dataset either.
        assert_eq!(
            std::fs::read_dir(&run).unwrap().count(),
            1,
            "step {step}: staging left"
        );
        if done {
            break;
        }
        step += 1;
        assert!(step < 200, "the append never completed");
    }
    assert!(step > 2, "only {step} renames");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A leftover partition that holds a file profcodec does not write is not removed: the append
/// is refused, naming it, and nothing changes.
#[cfg(unix)]
#[test]
fn a_leftover_holding_foreign_files_is_refused_by_name() {
    let dir = scratch("foreign");
    let ds = dir.join("ds");
    let input = [testdata("nytprof/hello.nytprof.out")];
    ok(export(&[], &ds, &input));
    let leftover = ds.join("nytprof/lines/input=5");
    std::fs::create_dir(&leftover).unwrap();
    std::fs::write(leftover.join("notes.txt"), "mine").unwrap();
    let before = files(&ds);
    let out = export(&["--append"], &ds, &input);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("input=5") && stderr(&out).contains("\"notes.txt\""),
        "{}",
        stderr(&out)
    );
    assert!(files(&ds) == before);
    std::fs::remove_dir_all(&dir).unwrap();
}
