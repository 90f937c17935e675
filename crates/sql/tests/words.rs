//! What `profcodec sql` (the program `profcodec-sql`) says, on corpus files: an empty result
//! keeps its column headers in every output format, and a query that names a table the inputs
//! lack, or a bare name several sets have, is refused in words that list what to write, never
//! with DataFusion's internal catalog name.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;

use profcodec_testkit::corpus::corpus_subdir;

/// `profcodec sql` with `args`, then `query` and `inputs`: status, stdout, stderr.
fn sql(args: &[&str], query: &str, inputs: &[PathBuf]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profcodec-sql"))
        .arg("sql")
        .args(args)
        .arg(query)
        .args(inputs)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn nytprof() -> Option<PathBuf> {
    corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
        .map(|d| d.join("nested__default.nytprof.out"))
}

fn hpctoolkit() -> Option<PathBuf> {
    corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit").map(|d| d.join("dbase/small.d"))
}

/// An empty result prints its headers and `0 rows` as a table, its header line as CSV and an
/// empty array as JSON: never a bare border.
#[test]
fn empty_results_keep_their_headers() {
    let Some(input) = nytprof() else { return };
    let inputs = [input];
    let query = "SELECT file, line, time FROM nytprof.lines WHERE line < 0";
    let (status, stdout, stderr) = sql(&[], query, &inputs);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "+------+------+------+\n| file | line | time |\n+------+------+------+\n\
         +------+------+------+\n0 rows\n"
    );
    let (status, stdout, stderr) = sql(&["--format", "csv"], query, &inputs);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout, "file,line,time\n");
    let (status, stdout, stderr) = sql(&["--format", "json"], query, &inputs);
    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout, "[]\n");
    // A result with rows is no different from before: headers once, then the rows.
    let (status, stdout, _) = sql(
        &["--format", "csv"],
        "SELECT line FROM nytprof.lines ORDER BY line LIMIT 2",
        &inputs,
    );
    assert_eq!(status, Some(0));
    assert_eq!(stdout.lines().next(), Some("line"));
    assert_eq!(stdout.lines().count(), 3, "{stdout}");
}

/// A table no input has is named with the tables the inputs have, whichever way the query
/// names it; no message shows `datafusion.`.
#[test]
fn unknown_tables_list_the_inputs_tables() {
    let (Some(nyt), Some(db)) = (nytprof(), hpctoolkit()) else {
        return;
    };
    for (query, inputs, table, listed) in [
        (
            "SELECT * FROM nytprof.nosuch",
            vec![nyt.clone()],
            "nytprof.nosuch",
            "nytprof.lines",
        ),
        (
            "SELECT * FROM hpctoolkit.lines",
            vec![nyt.clone()],
            "hpctoolkit.lines",
            "nytprof.lines",
        ),
        (
            "SELECT * FROM lines",
            vec![db.clone()],
            "lines",
            "hpctoolkit.contexts",
        ),
        (
            "WITH t AS (SELECT * FROM metrcs) SELECT * FROM t",
            vec![db.clone()],
            "metrcs",
            "hpctoolkit.metrics",
        ),
        (
            "SELECT * FROM nytprof.subs s JOIN nytprof.sub_calls c ON s.name = c.name",
            vec![nyt.clone(), db.clone()],
            "nytprof.sub_calls",
            "hpctoolkit.values",
        ),
    ] {
        let (status, stdout, stderr) = sql(&[], query, &inputs);
        assert_eq!(status, Some(2), "{query}: {stderr}");
        assert!(stdout.is_empty(), "{query}: {stdout}");
        assert!(
            stderr.starts_with(&format!(
                "profcodec: no table {table} in the inputs: they have inputs, "
            )),
            "{query}: {stderr}"
        );
        assert!(stderr.contains(listed), "{query}: {stderr}");
        assert!(!stderr.contains("datafusion"), "{query}: {stderr}");
    }
}

/// A bare name that several sets have (an HPCToolkit database's `contexts`, and its profile
/// model's) is refused with the names to write; each of those runs.
#[test]
fn ambiguous_bare_names_say_which_to_write() {
    let Some(db) = hpctoolkit() else { return };
    let inputs = [db];
    let (status, _, stderr) = sql(&[], "SELECT count(*) FROM contexts", &inputs);
    assert_eq!(status, Some(2), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "profcodec: table contexts is in several sets of the inputs: write hpctoolkit.contexts, \
         profile.contexts"
    );
    for table in ["hpctoolkit.contexts", "profile.contexts"] {
        let (status, stdout, stderr) = sql(
            &["--format", "csv"],
            &format!("SELECT count(*) AS n FROM {table}"),
            &inputs,
        );
        assert_eq!(status, Some(0), "{stderr}");
        assert!(stdout.starts_with("n\n"), "{stdout}");
    }
}

/// Errors DataFusion words itself (an unknown column or function, a syntax error, a bad
/// cast) are its innermost message on one line: no kind prefix (`Schema error: `), no Rust
/// debug text (`ParserError("...")`), no internal catalog.
#[test]
fn other_errors_are_one_worded_line() {
    let (Some(nyt), Some(db)) = (nytprof(), hpctoolkit()) else {
        return;
    };
    for (query, inputs, says) in [
        (
            "SELECT nosuch FROM nytprof.lines",
            vec![nyt.clone()],
            "profcodec: No field named nosuch. Valid fields are nytprof.lines.fid, ",
        ),
        (
            "SELECT l.nosuch FROM nytprof.lines l",
            vec![nyt.clone()],
            "profcodec: No field named l.nosuch. Valid fields are l.fid, ",
        ),
        (
            "SELECT name FROM hpctoolkit.metrics WHERE nosuch(name)",
            vec![db.clone()],
            "profcodec: Invalid function 'nosuch'. Did you mean ",
        ),
        (
            "SELEC 1",
            vec![nyt.clone()],
            "profcodec: the query does not parse: Expected: an SQL statement, found: SELEC",
        ),
        (
            "SELECT 'x",
            vec![nyt.clone()],
            "profcodec: the query does not parse: Unterminated string literal",
        ),
        (
            "SELECT * FROM lines WHERE line = 'x'",
            vec![nyt.clone()],
            "profcodec: Cast error: Cannot cast string 'x' to value of UInt32 type",
        ),
    ] {
        let (status, stdout, stderr) = sql(&[], query, &inputs);
        assert_eq!(status, Some(2), "{query}: {stderr}");
        assert!(stdout.is_empty(), "{query}: {stdout}");
        assert!(stderr.starts_with(says), "{query}: {stderr}");
        for internal in [
            "datafusion",
            "Error during planning",
            "Schema error",
            "SQL error",
            "Arrow error",
            "Error(",
            "caused by",
        ] {
            assert!(!stderr.contains(internal), "{query}: {stderr}");
        }
        assert_eq!(stderr.lines().count(), 1, "{query}: {stderr}");
    }
}

/// A corpus profile cut short fails the query with status 1 and the input's own words: its
/// path, what is damaged and where.
#[test]
fn a_damaged_input_is_named_in_its_own_words() {
    let Some(input) = nytprof() else { return };
    let bytes = std::fs::read(&input).unwrap();
    let dir = std::env::temp_dir().join(format!("profcodec-sql-words-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cut = dir.join("cut.nytprof.out");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let (status, _, stderr) = sql(
        &[],
        "SELECT count(*) FROM nytprof.lines",
        std::slice::from_ref(&cut),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(status, Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("profcodec: {}: nytprof: ", cut.display())),
        "{stderr}"
    );
    assert!(stderr.contains("at byte 0x"), "{stderr}");
    assert!(!stderr.contains("External error"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
