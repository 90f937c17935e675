//! What a query may do in a session: only read (a statement that would write or change
//! anything is refused before any of it runs), within the memory limit (over it, a worded error
//! instead of an abort) and the timeout (a query still running is cancelled); an unknown table
//! is named with the tables the inputs have, and no message names DataFusion's own catalog.
#![cfg(feature = "sql")]
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use profcodec::tables::{Input, SETS};
use profcodec_arrow::sql::{Limits, Session};
use profcodec_arrow::{Error, InputTables, ScanOptions};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn open_session(limits: Limits) -> Session {
    let input = Input::open(testdata("nytprof/hello.nytprof.out")).unwrap();
    let input = InputTables::new(input.path().to_path_buf(), std::sync::Arc::new(input));
    Session::with_limits(&[input], SETS, &ScanOptions::new(), &limits).unwrap()
}

/// The error of a query, whether planning or its rows failed.
fn error_of(session: &Session, sql: &str) -> Error {
    match session.query(sql) {
        Err(e) => e,
        Ok(mut rows) => rows
            .find_map(Result::err)
            .unwrap_or_else(|| panic!("{sql}: no error")),
    }
}

fn rows_of(session: &Session, sql: &str) -> usize {
    session
        .query(sql)
        .unwrap()
        .map(|b| b.unwrap().num_rows())
        .sum()
}

#[test]
fn statements_that_write_or_change_anything_are_refused_and_nothing_is_written() {
    let dir = std::env::temp_dir().join(format!("profcodec-arrow-readonly-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    let session = open_session(Limits::new());
    let copy_to = dir.join("made/out.csv");
    let external = dir.join("external.csv");
    std::fs::write(&external, "a\n1\n").unwrap();
    let refused = [
        (
            format!(
                "COPY (SELECT * FROM nytprof.lines) TO '{}' STORED AS CSV",
                copy_to.display()
            ),
            "COPY",
        ),
        (
            format!(
                "EXPLAIN ANALYZE COPY (SELECT 1) TO '{}' STORED AS CSV",
                copy_to.display()
            ),
            "COPY",
        ),
        (
            format!(
                "CREATE EXTERNAL TABLE ext STORED AS CSV LOCATION '{}'",
                external.display()
            ),
            "CREATE EXTERNAL TABLE",
        ),
        (
            "INSERT INTO inputs SELECT * FROM inputs".to_owned(),
            "INSERT",
        ),
        ("CREATE TABLE t AS SELECT 1".to_owned(), "CREATE TABLE"),
        ("CREATE VIEW v AS SELECT 1".to_owned(), "CREATE VIEW"),
        ("DROP TABLE inputs".to_owned(), "DROP TABLE"),
        ("DELETE FROM inputs".to_owned(), "DELETE"),
        ("SET datafusion.execution.batch_size = 1".to_owned(), "SET"),
        ("SELECT 1 AS a INTO t".to_owned(), "CreateMemoryTable"),
    ];
    for (sql, what) in &refused {
        let e = error_of(&session, sql);
        assert!(
            matches!(&e, Error::ReadOnly { what: w } if w.starts_with(what)),
            "{sql}: {e:?}"
        );
        assert!(e.to_string().contains("refused"), "{sql}: {e}");
    }
    assert!(!dir.join("made").exists(), "COPY made no folder");
    // Nothing changed in the session: the tables are all there, and nothing new.
    assert_eq!(rows_of(&session, "SELECT * FROM inputs"), 1);
    for table in ["ext", "t", "v"] {
        assert!(matches!(
            error_of(&session, &format!("SELECT * FROM {table}")),
            Error::NoSuchTable { .. }
        ));
    }
    // What only reads still runs.
    for sql in [
        "SELECT COUNT(*) FROM nytprof.lines",
        "WITH l AS (SELECT * FROM lines) SELECT * FROM l",
        "EXPLAIN SELECT * FROM nytprof.lines",
        "SHOW TABLES",
        "DESCRIBE nytprof.lines",
        "SELECT * FROM generate_series(1, 3)",
    ] {
        assert!(rows_of(&session, sql) > 0, "{sql}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_query_over_the_memory_limit_fails_saying_so() {
    let session = open_session(Limits::new().memory(Some(1 << 20)));
    let e = error_of(
        &session,
        "SELECT length(string_agg(CAST(value AS VARCHAR), ',')) FROM generate_series(1, 1000000)",
    );
    assert!(
        matches!(e, Error::MemoryLimit { limit, .. } if limit == 1 << 20),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "the query needs more than 1 MiB of memory");
    // The same query fits in the default limit.
    let session = open_session(Limits::new());
    assert_eq!(
        rows_of(
            &session,
            "SELECT length(string_agg(CAST(value AS VARCHAR), ',')) FROM generate_series(1, 100000)"
        ),
        1
    );
}

#[test]
fn a_query_still_running_at_the_timeout_is_cancelled() {
    let session = open_session(Limits::new().timeout(Some(Duration::from_millis(500))));
    let start = Instant::now();
    // A trillion rows: hours of work.
    let e = error_of(
        &session,
        "SELECT COUNT(*) FROM generate_series(1, 1000000) a, generate_series(1, 1000000) b",
    );
    let took = start.elapsed();
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    assert_eq!(e.to_string(), "the query was cancelled after running 0.5 s");
    assert!(took < Duration::from_secs(10), "{took:?}");
    drop(session);
    assert!(start.elapsed() < Duration::from_secs(10), "dropped at once");
    // A query that ends in time is not touched.
    let session = open_session(Limits::new().timeout(Some(Duration::from_secs(60))));
    assert_eq!(rows_of(&session, "SELECT * FROM nytprof.lines LIMIT 3"), 3);
}

#[test]
fn an_unknown_table_is_named_with_the_tables_the_inputs_have() {
    let session = open_session(Limits::new());
    for (sql, table) in [
        ("SELECT * FROM nope", "nope"),
        ("SELECT * FROM nytprof.nothing", "nytprof.nothing"),
        ("SELECT * FROM lines JOIN nope ON true", "nope"),
    ] {
        let e = error_of(&session, sql);
        let Error::NoSuchTable { table: t, known } = &e else {
            panic!("{sql}: {e:?}");
        };
        assert_eq!(t, table);
        assert!(known.contains("nytprof.lines") && known.contains("inputs"));
        assert!(known.contains("profile.frames") || !known.contains("profile"));
        let message = e.to_string();
        assert!(
            message.starts_with(&format!("no table {table} in the inputs: they have ")),
            "{message}"
        );
        assert!(!message.contains("datafusion."), "{message}");
    }
    // Other planning errors name the tables as the query does.
    for sql in [
        "SELECT nope FROM lines",
        "SELECT nope FROM nytprof.lines",
        "SELECT * FROM lines WHERE",
    ] {
        let message = error_of(&session, sql).to_string();
        assert!(!message.contains("datafusion."), "{sql}: {message}");
    }
}

#[test]
fn every_session_has_a_timeout_and_a_spill_limit_by_default() {
    use profcodec_arrow::sql::{DEFAULT_MEMORY_LIMIT, DEFAULT_SPILL_LIMIT, DEFAULT_TIMEOUT};
    let limits = Limits::new();
    assert_eq!(limits.memory, Some(DEFAULT_MEMORY_LIMIT));
    assert_eq!(limits.timeout, Some(DEFAULT_TIMEOUT));
    assert_eq!(limits.spill, Some(DEFAULT_SPILL_LIMIT));
    assert_eq!(DEFAULT_TIMEOUT, Duration::from_secs(600));
    assert_eq!(DEFAULT_SPILL_LIMIT, 2 << 30);
    assert_eq!(Limits::default(), limits);
}

#[test]
fn an_endless_recursive_query_is_cancelled_at_the_timeout() {
    let session = open_session(Limits::new().timeout(Some(Duration::from_millis(500))));
    let start = Instant::now();
    let e = error_of(
        &session,
        "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
    );
    assert!(matches!(e, Error::Timeout { .. }), "{e:?}");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_sort_past_the_spill_limit_fails_saying_so() {
    let session = open_session(Limits::new().memory(Some(32 << 20)).spill(Some(1 << 20)));
    let e = error_of(
        &session,
        "SELECT value, repeat('x', 50) AS pad FROM generate_series(1, 2000000) \
         ORDER BY value DESC",
    );
    assert!(
        matches!(e, Error::SpillLimit { limit, .. } if limit == 1 << 20),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "the query needs more than 1 MiB of temporary files to spill its sorts and aggregations to"
    );
}

#[test]
fn count_star_over_a_recursive_query_counts_its_rows() {
    let session = open_session(Limits::new());
    let rows = session
        .query(
            "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 10) \
             SELECT count(*) AS c FROM r",
        )
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let count = rows[0]
        .column(0)
        .as_any()
        .downcast_ref::<arrow_array::Int64Array>()
        .unwrap()
        .value(0);
    assert_eq!(count, 10);
}
