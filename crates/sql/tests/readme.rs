//! Every `profcodec sql ...` command of the READMEs (README.md, crates/cli/README.md,
//! crates/sql/README.md) runs against the corpus and prints rows.
//!
//! The commands are taken from the READMEs' fenced code blocks as written (a query may span
//! several lines inside its quotes) and run by `sh`, with `profcodec` standing for this
//! package's `profcodec-sql` (which `profcodec sql` runs), in the workspace's root folder, so
//! that `testdata/...` paths are the checkout's. Inputs the READMEs name generically stand for
//! corpus files:
//!
//! - `nytprof.out`: the corpus NYTProf profile `nytprof/nested__default.nytprof.out`;
//! - `hpctoolkit-database`: the corpus HPCToolkit database `hpctoolkit/hatchet-gamess`.
//!
//! Each command must exit with status 0 and print at least one row: a table line below the
//! header (and no `0 rows`), a CSV line below the header, or a JSON array with an object.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_testkit::corpus::corpus_dir;

/// The workspace's root folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The READMEs whose commands run.
const READMES: [&str; 3] = ["README.md", "crates/cli/README.md", "crates/sql/README.md"];

/// The `profcodec sql` commands of `text`'s fenced code blocks, each whole (continued over
/// the lines its quotes span).
fn sql_commands(text: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut fenced = false;
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let command = line.trim().trim_start_matches("$ ");
        if !fenced || !command.starts_with("profcodec sql ") {
            continue;
        }
        let mut whole = command.to_owned();
        while open_quote(&whole) {
            let Some(next) = lines.next() else { break };
            whole.push('\n');
            whole.push_str(next);
        }
        commands.push(whole);
    }
    commands
}

/// Whether `command` ends inside a quoted string (single or double quotes, as `sh` reads
/// them).
fn open_quote(command: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in command.chars() {
        match (quote, c) {
            (_, _) if escaped => escaped = false,
            (Some('"') | None, '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
    }
    quote.is_some()
}

/// `command` with the READMEs' generic input names replaced by corpus files.
fn with_corpus_inputs(command: &str, corpus: &Path) -> String {
    let mut words: Vec<String> = command.split(' ').map(str::to_owned).collect();
    for word in &mut words {
        let file = match word.as_str() {
            "nytprof.out" => corpus.join("nytprof/nested__default.nytprof.out"),
            "hpctoolkit-database" => corpus.join("hpctoolkit/hatchet-gamess"),
            _ => continue,
        };
        assert!(file.exists(), "{}", file.display());
        *word = format!("'{}'", file.display());
    }
    words.join(" ")
}

/// How many rows `stdout` holds, in the format `command` asks for.
fn rows(command: &str, stdout: &str) -> usize {
    if command.contains("--format csv") {
        stdout.lines().count().saturating_sub(1)
    } else if command.contains("--format json") {
        serde_json::from_str::<Vec<serde_json::Value>>(stdout)
            .unwrap()
            .len()
    } else if stdout.ends_with("0 rows\n") {
        0
    } else {
        // The table's lines: a border, the header, a border, the rows, a border.
        stdout
            .lines()
            .filter(|l| l.starts_with('|'))
            .count()
            .saturating_sub(1)
    }
}

#[test]
fn every_sql_command_of_the_readmes_prints_rows() {
    let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) else {
        return;
    };
    let mut ran = 0;
    for readme in READMES {
        let text = std::fs::read_to_string(root().join(readme)).unwrap();
        let commands = sql_commands(&text);
        assert!(
            !commands.is_empty(),
            "{readme} shows no profcodec sql command"
        );
        for command in commands {
            let script = format!(
                "profcodec() {{ \"$PROFCODEC_SQL\" \"$@\"; }}\n{}",
                with_corpus_inputs(&command, &corpus)
            );
            let out = Command::new("sh")
                .arg("-c")
                .arg(&script)
                .current_dir(root())
                .env("PROFCODEC_SQL", env!("CARGO_BIN_EXE_profcodec-sql"))
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.success(),
                "{readme}: {command}\nexit {:?}: {stderr}",
                out.status.code()
            );
            assert!(
                rows(&command, &stdout) > 0,
                "{readme}: {command}\nprinted no rows:\n{stdout}{stderr}"
            );
            ran += 1;
        }
    }
    assert!(ran >= 4, "{ran} commands");
}

#[test]
fn commands_are_read_whole_across_lines() {
    let text = "text\n```sh\nprofcodec sql \"SELECT a\n  FROM t\" in.out\nprofcodec top x\n```\n\
                profcodec sql 'outside' x\n```sh\n$ profcodec sql 'it''s' y\n```\n";
    assert_eq!(
        sql_commands(text),
        [
            "profcodec sql \"SELECT a\n  FROM t\" in.out",
            "profcodec sql 'it''s' y"
        ]
    );
    assert!(open_quote("a \"b"));
    assert!(!open_quote("a \"b\\\"c\" 'd\\'"));
}
