//! `profcodec sql` against the queries of HOSTILE.md's class 11 (a query that never ends, a
//! sort that would fill the temporary folder) and the papercuts of its output: each ends with
//! a worded error within its stated limit, or quietly.
#![allow(clippy::unwrap_used)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn hello() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof/hello.nytprof.out")
}

/// `profcodec-sql sql ARGS... QUERY hello.nytprof.out`: status, stdout, stderr, time taken.
fn sql(args: &[&str], query: &str) -> (Option<i32>, String, String, Duration) {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
        .arg("sql")
        .args(args)
        .arg(query)
        .arg(hello())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        start.elapsed(),
    )
}

/// A recursive query that never stops.
const ENDLESS: &str =
    "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r) SELECT count(n) FROM r";

/// The help states the default timeout and spill limit, with the flags that change them.
#[test]
fn help_states_the_default_timeout_and_spill_limit() {
    let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
        .args(["sql", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--timeout <SECONDS>"), "{help}");
    assert!(help.contains("[default: 600]"), "{help}");
    assert!(help.contains("--spill-limit <SIZE>"), "{help}");
    assert!(help.contains("[default: 2G]"), "{help}");
}

/// An endless `WITH RECURSIVE` query is cancelled at the timeout with a worded error and status
/// 124, every output format alike.
#[test]
fn an_endless_recursive_query_ends_at_the_timeout() {
    for format in ["table", "csv", "json"] {
        let (status, stdout, stderr, took) = sql(&["--timeout", "1", "--format", format], ENDLESS);
        assert_eq!(status, Some(124), "{format}: {stderr}");
        assert_eq!(
            stderr.trim_end(),
            "profcodec: the query was cancelled after running 1 s; --timeout sets how long a \
             query may run",
            "{format}"
        );
        assert!(stdout.len() < 100, "{format}: {stdout}");
        assert!(took < Duration::from_secs(15), "{format}: {took:?}");
    }
}

/// A sort over the memory limit spills to the temporary folder up to `--spill-limit`, then
/// stops with a worded error and status 2; with room to spill, the same query runs.
#[test]
fn a_large_sort_stops_at_the_spill_limit() {
    let tmp = std::env::temp_dir().join(format!("profcodec-sql-spill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir(&tmp).unwrap();
    let query = "SELECT value, repeat('x', 50) AS pad FROM generate_series(1, 2000000) \
                 ORDER BY value DESC";
    let run = |spill: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
            .args(["sql", "--memory-limit", "32M", "--spill-limit", spill])
            .arg(query)
            .arg(hello())
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (status, stdout, stderr) = run("1M");
    assert_eq!(status, Some(2), "{stdout}{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "profcodec: the query needs more than 1 MiB of temporary files to spill its sorts and \
         aggregations to; --spill-limit raises it (or --memory-limit, to spill less)"
    );
    // Its temporary files are gone.
    let left: Vec<_> = walk(&tmp);
    assert!(left.is_empty(), "{left:?}");
    let (status, stdout, stderr) = run("none");
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stdout.contains("2000000"), "{stdout}");
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// Every file below `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A reader that closes its end of the pipe after the first bytes (`| head -c 1`) ends every
/// format quietly, with status 0, as the other verbs do.
#[test]
fn a_closed_standard_output_ends_every_format_quietly() {
    for format in ["csv", "json", "table"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
            .args(["sql", "--format", format])
            .arg("SELECT value FROM generate_series(1, 1000000)")
            .arg(hello())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let mut first = [0u8; 1];
        stdout.read_exact(&mut first).unwrap();
        drop(stdout);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{format}: {stderr}");
        assert!(stderr.is_empty(), "{format}: {stderr}");
    }
}

/// `count(*)` over a recursive query counts its rows (DataFusion's projection pruning made it a
/// schema error), at the top level and inside a subquery.
#[test]
fn count_star_over_a_recursive_query_counts_its_rows() {
    let ten = "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 10)";
    for (query, count) in [
        (format!("{ten} SELECT count(*) AS c FROM r"), "10"),
        (format!("{ten} SELECT count(1) AS c FROM r"), "10"),
        (
            format!("SELECT (SELECT count(*) FROM ({ten} SELECT * FROM r)) AS c"),
            "10",
        ),
        (
            "WITH RECURSIVE r AS (SELECT fid, 0 AS d FROM nytprof.files \
             UNION ALL SELECT fid, d + 1 FROM r WHERE d < 2) SELECT count(*) AS c FROM r"
                .to_owned(),
            "9",
        ),
    ] {
        let (status, stdout, stderr, _) = sql(&["--format", "csv"], &query);
        assert_eq!(status, Some(0), "{query}: {stderr}");
        assert_eq!(stdout, format!("c\n{count}\n"), "{query}");
    }
}

/// hello.nytprof.out with its sub `main::fib` renamed, byte for byte, to a name that carries
/// CSI 2J (clear the screen) and the C1 CSI (byte 0x9b, which a name without Perl's UTF-8 flag
/// reads as U+009B): every length in the file stays right.
fn hostile_names(dir: &Path) -> PathBuf {
    let bytes = std::fs::read(hello()).unwrap();
    let (from, to): (&[u8], &[u8]) = (b"main::fib", b"m\x1b[2J\x9bxxx");
    assert_eq!(from.len(), to.len());
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = &bytes[..];
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    let path = dir.join("hostile.nytprof.out");
    std::fs::write(&path, out).unwrap();
    path
}

/// Names from a profile reach no terminal raw (HOSTILE.md class 2): the table prints them
/// escaped, and JSON as `\uXXXX` escapes that read back as the same name; CSV into a pipe
/// keeps the exact text, as a file of data must.
#[test]
fn names_from_the_inputs_are_escaped_in_the_table_and_json() {
    let dir = std::env::temp_dir().join(format!("profcodec-sql-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = hostile_names(&dir);
    let run = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
            .args(["sql", "--format", format])
            .arg("SELECT name FROM nytprof.subs WHERE name LIKE 'm%xxx'")
            .arg(&input)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let table = run("table");
    assert!(!table.contains(['\x1b', '\u{9b}']), "{table:?}");
    assert!(table.contains(r"m\x1b[2J\u{9b}xxx"), "{table}");
    let json = run("json");
    assert!(!json.contains(['\x1b', '\u{9b}']), "{json:?}");
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(rows[0]["name"], "m\x1b[2J\u{9b}xxx");
    let csv = run("csv");
    assert!(csv.contains("m\x1b[2J\u{9b}xxx"), "{csv:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
