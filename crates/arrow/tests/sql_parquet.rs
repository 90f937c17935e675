//! The SQL session and the Parquet export on the workspace's test files: names resolve as
//! documented, a scan streams (an endless table under `LIMIT` ends), and the export's files read
//! back with the schemas, partitions and rows of the tables.
#![cfg(all(feature = "sql", feature = "parquet"))]
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::{Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array};
use profcodec::nytprof::tables::SET as NYTPROF;
use profcodec::tables::{Error, Input, SETS};
use profcodec_arrow::parquet::{ExportOptions, export};
use profcodec_arrow::sql::Session;
use profcodec_arrow::{Batches, InputTables, ProfileTables, ScanOptions, TableSet, Tables};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

/// The input at `path` with its format's tables alone.
fn format_tables(path: impl AsRef<Path>) -> InputTables {
    let input = Input::open(path).unwrap();
    InputTables::new(input.path().to_path_buf(), Arc::new(input))
}

fn rows(session: &Session, query: &str) -> Vec<RecordBatch> {
    session
        .query(query)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

fn count(session: &Session, query: &str) -> i64 {
    rows(session, query)[0]
        .column(0)
        .as_primitive::<Int64Type>()
        .value(0)
}

fn table_rows(tables: &dyn Tables, name: &str) -> usize {
    tables
        .batches(name, &ScanOptions::new())
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum()
}

/// Two inputs of two formats: qualified names, bare names where one set has them, the `input`
/// column and the `inputs` table.
#[test]
fn tables_are_named_by_set_and_bare_where_unambiguous() {
    let nytprof = testdata("nytprof/hello.nytprof.out");
    let hpctoolkit = testdata("hpctoolkit/demo.d");
    let inputs = vec![format_tables(&nytprof), format_tables(&hpctoolkit)];
    let session = Session::new(&inputs, SETS, &ScanOptions::new().batch_rows(7)).unwrap();
    let lines = table_rows(&Input::open(&nytprof).unwrap(), "lines") as i64;
    let values = table_rows(&Input::open(&hpctoolkit).unwrap(), "values") as i64;
    assert_eq!(count(&session, "SELECT COUNT(*) FROM nytprof.lines"), lines);
    assert_eq!(
        count(&session, "SELECT COUNT(*) FROM lines WHERE input = 0"),
        lines
    );
    assert_eq!(
        count(
            &session,
            "SELECT COUNT(*) FROM hpctoolkit.values WHERE input = 1"
        ),
        values
    );
    // `values` is an SQL keyword: quoted, the bare name works too.
    assert_eq!(count(&session, "SELECT COUNT(*) FROM \"values\""), values);
    let batch = &rows(&session, "SELECT set, path FROM inputs ORDER BY input")[0];
    let sets = batch.column(0).as_string::<i32>();
    assert_eq!((sets.value(0), sets.value(1)), ("nytprof", "hpctoolkit"));

    // With the profile tables of both, `contexts` is in two sets: qualified only.
    let with_profiles: Vec<InputTables> = inputs
        .into_iter()
        .map(|i| {
            let profile = profcodec_profile::ProfileBuilder::new().build();
            i.with(Arc::new(ProfileTables::new(profile)))
        })
        .collect();
    let session = Session::new(&with_profiles, SETS, &ScanOptions::new()).unwrap();
    assert!(session.query("SELECT * FROM contexts").is_err());
    assert_eq!(count(&session, "SELECT COUNT(*) FROM profile.contexts"), 0);
    assert!(count(&session, "SELECT COUNT(*) FROM hpctoolkit.contexts") > 0);
}

/// A `lines` table that never ends, counting the batches it made.
#[derive(Debug)]
struct Endless {
    made: Arc<AtomicUsize>,
}

impl Tables for Endless {
    fn set(&self) -> TableSet {
        NYTPROF
    }

    fn batches(&self, name: &str, options: &ScanOptions) -> Result<Batches<'_>, Error> {
        assert_eq!(name, "lines");
        let schema = NYTPROF.table("lines")?.schema();
        let n = options.batch_rows;
        let made = Arc::clone(&self.made);
        Ok(Box::new(std::iter::from_fn(move || {
            made.fetch_add(1, Ordering::SeqCst);
            let batch = RecordBatch::try_new(
                Arc::clone(&schema),
                vec![
                    Arc::new(UInt32Array::from(vec![1; n])),
                    Arc::new(StringArray::from(vec!["f.pl"; n])),
                    Arc::new(UInt32Array::from(vec![2; n])),
                    Arc::new(Float64Array::from(vec![0.5; n])),
                    Arc::new(Int64Array::from(vec![3; n])),
                ],
            );
            Some(batch.map_err(|source| Error::Arrow {
                table: "lines",
                source,
            }))
        })))
    }
}

/// A scan runs a bounded number of batches ahead of the query and stops when the query stops:
/// `LIMIT` over an endless table ends, having made a handful of batches.
#[test]
fn a_scan_streams_and_stops_with_the_query() {
    let made = Arc::new(AtomicUsize::new(0));
    let input = format_tables(testdata("nytprof/hello.nytprof.out")).with(Arc::new(Endless {
        made: Arc::clone(&made),
    }));
    let session = Session::new(&[input], SETS, &ScanOptions::new().batch_rows(100)).unwrap();
    let batches = rows(&session, "SELECT line, time FROM nytprof.lines LIMIT 250");
    assert_eq!(
        batches.iter().map(RecordBatch::num_rows).sum::<usize>(),
        250
    );
    drop(session);
    let made = made.load(Ordering::SeqCst);
    assert!((3..=10).contains(&made), "{made} batches made");
}

/// Every table of an input, in its partition folder, with its schema and rows; an empty table
/// still gets its file.
#[test]
fn the_export_reads_back_with_the_tables_schemas_and_rows() {
    let capture = testdata("easyprofiler/small_v210.prof");
    let out = std::env::temp_dir().join(format!("profcodec-arrow-export-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir(&out).unwrap();
    let inputs = vec![format_tables(&capture)];
    let written = export(&out, &inputs, &ExportOptions::new()).unwrap();
    let input = Input::open(&capture).unwrap();
    let set = profcodec::easyprofiler::tables::SET;
    assert_eq!(written.len(), 1 + set.tables().len());
    for table in set.tables() {
        let path = out.join(format!(
            "easyprofiler/{}/input=0/part-00000.parquet",
            table.name
        ));
        let file = std::fs::File::open(&path).unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file).unwrap();
        let schema = reader.schema().clone();
        assert_eq!(schema.fields(), table.schema().fields(), "{}", table.name);
        let description = schema.field(0).metadata().get("description").unwrap();
        assert!(!description.is_empty());
        let read: usize = reader.build().unwrap().map(|b| b.unwrap().num_rows()).sum();
        assert_eq!(read, table_rows(&input, table.name), "{}", table.name);
    }
    // Exporting again into the same folder refuses to replace a file.
    assert!(export(&out, &inputs, &ExportOptions::new()).is_err());
    std::fs::remove_dir_all(&out).unwrap();
}

/// Only the tables asked for, by `set.table`, `table` or `set`.
#[test]
fn the_export_writes_the_tables_asked_for() {
    let out = std::env::temp_dir().join(format!("profcodec-arrow-some-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir(&out).unwrap();
    let inputs = vec![format_tables(testdata("hpctoolkit/demo.d"))];
    let options = ExportOptions::new().tables(vec!["hpctoolkit.values".into(), "metrics".into()]);
    let written = export(&out, &inputs, &options).unwrap();
    let mut names: Vec<String> = written
        .iter()
        .map(|w| {
            w.path
                .strip_prefix(&out)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "hpctoolkit/metrics/input=0/part-00000.parquet",
            "hpctoolkit/values/input=0/part-00000.parquet",
            "inputs/part-00000.parquet"
        ]
    );
    assert!(written.iter().all(|w| w.rows > 0));
    std::fs::remove_dir_all(&out).unwrap();
}
