//! `profcodec top --group line` and `--group path` on the corpus:
//!
//! - by line, NYTProf's statement counts and times are Data.pm's (the corpus's `.dump.txt`),
//!   the table has a `statements` column and no column that no row fills, and a note says why
//!   its total is not the total by function;
//! - by call path (`--group path`, or `context`), the rows partition the call tree: their self
//!   values add up, per function, to the rows by function, each path ends with its function,
//!   and long paths are cut at their start;
//! - JSON rows keep their fields; call-path rows add `path`, line rows `statements`.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use profcodec_profile::short_name;
use profcodec_testkit::corpus::corpus_subdir;
use serde_json::Value;

mod common;
use common::{run, stdout};

/// `top --json` with `args` before the input: its rows.
fn json_rows(args: &[&str], input: &Path) -> Vec<Value> {
    let text = stdout(args.iter().map(OsStr::new).chain([
        OsStr::new("--json"),
        OsStr::new("-n"),
        OsStr::new("0"),
        input.as_os_str(),
    ]));
    serde_json::from_str::<Vec<Value>>(&text).unwrap()
}

fn number(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} of {row}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The corpus NYTProf profiles and their Data.pm dumps.
fn nytprof_cases() -> Vec<(PathBuf, PathBuf)> {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof") else {
        return Vec::new();
    };
    ["nested__default", "multi__default"]
        .iter()
        .map(|case| {
            (
                dir.join(format!("{case}.nytprof.out")),
                dir.join(format!("{case}.dump.txt")),
            )
        })
        .collect()
}

/// A file's name with every path cut to its last part: Data.pm names a module by its path in
/// @INC (`warnings.pm`, `(eval 1)[Carp.pm:21]`), profcodec by where it was found.
fn base_names(file: &str) -> String {
    file.split('[')
        .map(|part| part.rsplit('/').next().unwrap())
        .collect::<Vec<_>>()
        .join("[")
}

/// Data.pm's line table of a `.dump.txt`: (file, line) -> (seconds, statements).
fn dump_lines(dump: &Path) -> BTreeMap<(String, u64), (f64, u64)> {
    let text = std::fs::read_to_string(dump).unwrap();
    let mut files: HashMap<&str, String> = HashMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if let ["fid_fileinfo", fid, info] = fields.as_slice()
            && let Some(rest) = info.strip_prefix("[ ")
        {
            // The name (which may hold spaces: `(eval 3)[Carp.pm:170]`), then six fields
            // (the eval's fid and line, empty for a file; the fid, flags, size, mtime).
            let words: Vec<&str> = rest.trim_end_matches(" ]").split(' ').collect();
            files.insert(fid, words[..words.len() - 6].join(" "));
        }
    }
    let mut lines = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        if let ["fid_line_time", fid, number, values] = fields.as_slice() {
            let values: Vec<&str> = values
                .trim_matches(|c| c == '[' || c == ']' || c == ' ')
                .split(' ')
                .collect();
            lines.insert(
                (base_names(&files[fid]), number.parse().unwrap()),
                (values[0].parse().unwrap(), values[1].parse().unwrap()),
            );
        }
    }
    lines
}

/// By line, NYTProf's rows carry Data.pm's time and statement count of every line.
#[test]
fn nytprof_lines_have_data_pm_statement_counts() {
    for (input, dump) in nytprof_cases() {
        let expected = dump_lines(&dump);
        assert!(!expected.is_empty(), "{}", dump.display());
        let rows = json_rows(&["top", "--group", "line"], &input);
        let mut seen = BTreeMap::new();
        for row in &rows {
            let key = (
                row["file"].as_str().unwrap().to_owned(),
                row["line"].as_u64().unwrap(),
            );
            // Counts are JSON integers.
            let statements = row["statements"].as_u64().unwrap();
            seen.insert(key, (number(row, "self"), statements));
        }
        // Every line with a statement or a time is a row (lines of neither are left out).
        let expected: BTreeMap<_, _> = expected
            .into_iter()
            .filter(|(_, (time, count))| *time != 0.0 || *count != 0)
            .collect();
        assert_eq!(seen.len(), expected.len(), "{}", input.display());
        for ((file, line), (time, count)) in &expected {
            let found = seen
                .iter()
                .find(|((f, l), _)| l == line && base_names(f) == *file);
            let Some((_, &(self_value, statements))) = found else {
                panic!("{}: no row for {file}:{line}", input.display());
            };
            assert_eq!(statements, *count, "{file}:{line}");
            assert!(
                close(self_value, *time),
                "{file}:{line}: {self_value} {time}"
            );
        }
    }
}

/// By line, the table shows statements, leaves out the empty inclusive and calls columns, and
/// says why its total is not the total by function.
#[test]
fn nytprof_line_table_has_statements_and_no_empty_columns() {
    for (input, _) in nytprof_cases() {
        let text = stdout([
            OsStr::new("top"),
            OsStr::new("--group"),
            OsStr::new("line"),
            input.as_os_str(),
        ]);
        let header = text.lines().nth(1).unwrap();
        let columns: Vec<&str> = header.split_whitespace().collect();
        assert_eq!(columns, ["self", "%", "statements", "name"], "{text}");
        let line_total: f64 = json_rows(&["top", "--group", "line"], &input)
            .iter()
            .map(|r| number(r, "self"))
            .sum();
        let function_total: f64 = json_rows(&["top", "--group", "function"], &input)
            .iter()
            .map(|r| number(r, "self"))
            .sum();
        let note = text.lines().last().unwrap();
        if close(line_total, function_total) {
            assert!(!note.starts_with("note:"), "{text}");
        } else {
            // NYTProf's lines count the script's top-level code, its subs' exclusive times do
            // not.
            assert!(line_total > function_total, "{line_total} {function_total}");
            assert!(
                note.starts_with("note: the total by function is ")
                    && note.contains("statements outside any function"),
                "{text}"
            );
        }
        // The function table keeps its inclusive and calls columns.
        let text = stdout([OsStr::new("top"), input.as_os_str()]);
        let header = text.lines().nth(1).unwrap();
        assert!(
            header.contains("inclusive") && header.contains("calls"),
            "{text}"
        );
        assert!(!header.contains("statements"), "{text}");
    }
}

/// JSON rows by function keep exactly their fields: the new ones appear only where they mean
/// something.
#[test]
fn function_rows_keep_their_json_fields() {
    for (input, _) in nytprof_cases() {
        for row in json_rows(&["top"], &input) {
            let keys: Vec<&str> = row
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.as_str())
                .collect();
            for key in [
                "name",
                "self",
                "inclusive",
                "calls",
                "self_share",
                "metric",
                "unit",
            ] {
                assert!(keys.contains(&key), "{row}");
            }
            assert!(
                !keys.contains(&"path") && !keys.contains(&"statements"),
                "{row}"
            );
        }
    }
}

/// The corpus HPCToolkit databases with a call tree to rank.
fn hpctoolkit_databases() -> Vec<PathBuf> {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit") else {
        return Vec::new();
    };
    vec![
        dir.join("dbase/small.d"),
        dir.join("dbase/loops-cputime-t.d"),
        dir.join("dbase/recursion-cuda-nvidiapc-t.d"),
        dir.join("hatchet-gamess"),
    ]
}

/// A function row's identity, as call-path rows name their last function.
fn function_key(row: &Value) -> String {
    format!(
        "{}|{}|{}",
        row["name"].as_str().unwrap(),
        row["file"].as_str().unwrap_or(""),
        row["module"].as_str().unwrap_or("")
    )
}

/// Call-path rows partition the call tree: each ends with its function, their self values
/// add up per function to the rows by function, and none is inclusive of less than its self.
fn check_paths(input: &Path, metric: Option<&str>) {
    let mut args = vec!["top"];
    if let Some(metric) = metric {
        args.extend(["--metric", metric]);
    }
    let functions = json_rows(&args, input);
    args.extend(["--group", "path"]);
    let paths = json_rows(&args, input);
    assert!(!paths.is_empty(), "{}", input.display());
    let mut by_function: HashMap<String, f64> = HashMap::new();
    for row in &paths {
        let path: Vec<&str> = row["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert!(!path.is_empty(), "{row}");
        assert_eq!(row["name"].as_str().unwrap(), path.join(" > "), "{row}");
        let leaf = path.last().unwrap();
        if let Some(function) = row["function"].as_str() {
            assert_eq!(function, *leaf, "{row}");
        }
        let (self_value, inclusive) = (number(row, "self"), number(row, "inclusive"));
        assert!(
            inclusive >= self_value - 1e-9 * self_value.abs().max(1.0),
            "{row}"
        );
        let key = format!(
            "{leaf}|{}|{}",
            row["file"].as_str().unwrap_or(""),
            row["module"].as_str().unwrap_or("")
        );
        *by_function.entry(key).or_default() += self_value;
    }
    for row in &functions {
        let self_value = number(row, "self");
        let summed = by_function.remove(&function_key(row)).unwrap_or(0.0);
        assert!(
            close(summed, self_value),
            "{}: {row}: paths {summed}",
            input.display()
        );
    }
    // Paths of functions with no self value of their own have no function row.
    assert!(
        by_function.values().all(|v| close(*v, 0.0)),
        "{by_function:?}"
    );
    // By inclusive value, a root comes first: every path is below one.
    let mut args = args.clone();
    args.extend(["--by", "inclusive"]);
    let first = &json_rows(&args, input)[0];
    assert_eq!(first["path"].as_array().unwrap().len(), 1, "{first}");
}

#[test]
fn hpctoolkit_call_paths_partition_the_tree() {
    for db in hpctoolkit_databases() {
        check_paths(&db, None);
    }
    if let Some(db) = hpctoolkit_databases().last() {
        check_paths(db, Some("REALTIME"));
    }
}

/// Call paths of sampled profiles (StatProfiler, EasyProfiler's block stacks) too.
#[test]
fn sampled_call_paths_partition_the_tree() {
    if let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") {
        for case in ["nested", "recursion", "xsubs"] {
            check_paths(&dir.join(case), None);
        }
    }
    if let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler") {
        check_paths(&dir.join("sample_v210_rdtsc.prof"), None);
    }
}

/// `--group context` is `--group path`; the table names paths leaf last, cut at their start
/// to fit, with the last function's file.
#[test]
fn path_table_names_paths_leaf_last() {
    let Some(db) = hpctoolkit_databases().pop() else {
        return;
    };
    let path = stdout([
        OsStr::new("top"),
        OsStr::new("--group"),
        OsStr::new("path"),
        OsStr::new("-n"),
        OsStr::new("40"),
        db.as_os_str(),
    ]);
    let context = stdout([
        OsStr::new("top"),
        OsStr::new("--group"),
        OsStr::new("context"),
        OsStr::new("-n"),
        OsStr::new("40"),
        db.as_os_str(),
    ]);
    assert_eq!(path, context);
    let mut lines = path.lines();
    assert!(
        lines.next().unwrap().contains("grouped by call path"),
        "{path}"
    );
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["self", "%", "inclusive", "%", "name", "file"],
        "{path}"
    );
    let rows = json_rows(&["top", "--group", "path"], &db);
    // Off a terminal, lines are cut at 200 characters: a path longer than its room keeps its
    // end (the function the row is about) after a `…`.
    let mut cut = 0;
    let listed = path.lines().skip(2).filter(|l| !l.ends_with("  total"));
    for (line, row) in listed.zip(&rows) {
        assert!(line.chars().count() <= 200, "{line}");
        let shown: Vec<String> = row["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| short_name(f.as_str().unwrap()).into_owned())
            .collect();
        let shown = shown.join(" > ");
        if line.contains(&format!("  {shown}  ")) || line.ends_with(&format!("  {shown}")) {
            continue;
        }
        let (_, kept) = line.split_once('…').unwrap_or_else(|| panic!("{line}"));
        let kept = kept.split("  ").next().unwrap();
        assert!(shown.ends_with(kept), "{line}\n{shown}");
        cut += 1;
    }
    assert!(cut > 0, "{path}");
}

/// A profile without a call tree has no call paths: said in words, status 2.
#[test]
fn flat_profiles_have_no_call_paths() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof") else {
        return;
    };
    for entry in std::fs::read_dir(&dir).unwrap() {
        let input = entry.unwrap().path();
        if !input.to_string_lossy().ends_with(".nytprof.out") {
            continue;
        }
        let out = run([
            OsStr::new("top"),
            OsStr::new("--group"),
            OsStr::new("path"),
            input.as_os_str(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(0) => assert!(
                String::from_utf8_lossy(&out.stdout).contains("grouped by call path"),
                "{}",
                input.display()
            ),
            Some(2) => assert!(stderr.contains("no call paths"), "{stderr}"),
            other => panic!("{}: {other:?} {stderr}", input.display()),
        }
    }
}
