//! Every `profcodec` command the documentation shows runs, and does what it says: the shell
//! blocks of the repository's README (which run as written from the repository's root) and of
//! this crate's README, and the examples that end each subcommand's `--help`. The CLI README and
//! the help examples name files as a user would (`nytprof.out`, `db.d`, `capture.prof`); the test
//! lays such names out in a temporary folder, as links to the project's testdata and the corpus.
//!
//! `sql` and `export --parquet` are run by `profcodec-sql`; `crates/sql/tests` runs the READMEs'
//! commands of those two.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const MANIFEST: &str = env!("CARGO_MANIFEST_DIR");

fn repo() -> PathBuf {
    Path::new(MANIFEST).join("../..").canonicalize().unwrap()
}

/// The commands of a markdown file's shell blocks that start with `profcodec` (a quoted
/// argument may run over several lines).
fn readme_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_shell = false;
    let mut pending: Option<String> = None;
    for line in markdown.lines() {
        if let Some(info) = line.strip_prefix("```") {
            in_shell = !in_shell && matches!(info.trim(), "sh" | "shell" | "bash" | "console");
            continue;
        }
        if !in_shell {
            continue;
        }
        let line = line.trim_start_matches("$ ");
        let command = match pending.take() {
            Some(open) => open + "\n" + line,
            None if line.starts_with("profcodec ") => line.to_owned(),
            // The README's main command, as `cargo run` would run it.
            None => match line.strip_prefix("cargo run --release -p profcodec-cli -- ") {
                Some(rest) => format!("profcodec {rest}"),
                None => continue,
            },
        };
        if command.matches('"').count() % 2 == 1 {
            pending = Some(command);
        } else {
            commands.push(command);
        }
    }
    assert!(pending.is_none(), "an unclosed quote in a shell block");
    commands
}

/// The examples at the end of `profcodec SUBCOMMAND --help`.
fn help_examples() -> Vec<String> {
    let help = profcodec_output(&["--help"]);
    let subcommands: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    assert!(subcommands.len() >= 10, "{help}");
    let mut examples = Vec::new();
    for sub in &subcommands {
        let help = profcodec_output(&[sub, "--help"]);
        let these: Vec<String> = help
            .lines()
            .skip_while(|l| l.trim() != "Examples:")
            .filter_map(|l| {
                l.trim()
                    .strip_prefix("profcodec ")
                    .map(|c| format!("profcodec {c}"))
            })
            .collect();
        assert!(
            (2..=3).contains(&these.len()),
            "`profcodec {sub} --help` ends with {} examples:\n{help}",
            these.len()
        );
        examples.extend(these);
    }
    examples
}

fn profcodec_output(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_profcodec"))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "profcodec {args:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// A folder where the names the CLI README and the help examples use are real inputs.
fn user_folder(corpus: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let testdata = repo().join("testdata");
    let link = |name: &str, target: PathBuf| {
        assert!(target.exists(), "{}", target.display());
        std::os::unix::fs::symlink(target, dir.path().join(name)).unwrap();
    };
    link("testdata", testdata.clone());
    link("nytprof.out", testdata.join("nytprof/hello.nytprof.out"));
    link(
        "before.out",
        testdata.join("nytprof/workload-100.nytprof.out"),
    );
    link(
        "after.out",
        testdata.join("nytprof/workload-300.nytprof.out"),
    );
    link("db.d", testdata.join("hpctoolkit/demo.d"));
    link("database.d", testdata.join("hpctoolkit/demo.d"));
    link("base.d", corpus.join("hpctoolkit/dbase/small.nostruct.d"));
    link("new.d", corpus.join("hpctoolkit/dbase/small.d"));
    link("run.m", corpus.join("hpctoolkit/meas/small.m"));
    link("demo.m", testdata.join("hpcprof/demo.m"));
    // A test suite's runs (`nytprof.out.<pid>`), beside the input and in a folder of their own.
    link(
        "nytprof.out.101",
        testdata.join("nytprof/hello.nytprof.out"),
    );
    link(
        "nytprof.out.102",
        testdata.join("nytprof/hello.nytprof.out"),
    );
    fs::create_dir(dir.path().join("profiles")).unwrap();
    for run in ["nytprof.out.101", "nytprof.out.102"] {
        std::os::unix::fs::symlink(
            testdata.join("nytprof/hello.nytprof.out"),
            dir.path().join("profiles").join(run),
        )
        .unwrap();
    }
    link(
        "capture.prof",
        testdata.join("easyprofiler/small_v210.prof"),
    );
    link("old.hpcrun", testdata.join("hpcrun/demo-03.00b.hpcrun"));
    link("session", corpus.join("statprofiler/evals"));
    // A capture cut short, for `dump --partial`.
    let capture = fs::read(testdata.join("easyprofiler/small_v210.prof")).unwrap();
    fs::write(
        dir.path().join("damaged.prof"),
        &capture[..capture.len() * 2 / 3],
    )
    .unwrap();
    dir
}

/// Runs `command` as a user's shell would, in `dir`, with the built `profcodec` first on `PATH`.
/// A pipe or `&&` into a program this machine lacks (`inferno-flamegraph`, `kcachegrind`, `go`)
/// is cut there, and what `profcodec` wrote is checked instead (folded stacks are drawn with
/// inferno's library). Returns what the command printed.
fn run_as_documented(command: &str, dir: &Path) -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_profcodec"));
    let path = std::env::join_paths(std::iter::once(bin.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let has = |program: &str| std::env::split_paths(&path).any(|d| d.join(program).is_file());
    let mut runnable = command.to_owned();
    let mut drawn_by_inferno = false;
    for sep in [" | ", " && "] {
        if let Some((head, tail)) = runnable.split_once(sep) {
            let program = tail.split_whitespace().next().unwrap_or_default();
            if program != "head" && !has(program) {
                drawn_by_inferno = program == "inferno-flamegraph";
                runnable = head.to_owned();
            }
        }
    }
    let out = Command::new("sh")
        .arg("-c")
        .arg(&runnable)
        .current_dir(dir)
        .env("PATH", &path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let partial = runnable.contains("--partial");
    // `dump --partial` of damaged input prints what was read and says what is wrong (status 1).
    assert!(
        out.status.success() || (partial && out.status.code() == Some(1)),
        "`{command}` failed ({}):\n{stderr}",
        out.status
    );
    if drawn_by_inferno {
        let mut svg = Vec::new();
        inferno::flamegraph::from_reader(
            &mut inferno::flamegraph::Options::default(),
            stdout.as_bytes(),
            &mut svg,
        )
        .unwrap_or_else(|e| panic!("`{command}`: inferno draws no flame graph: {e}"));
        assert!(svg.starts_with(b"<?xml"), "`{command}`");
    }
    stdout
}

/// What a documented command must have produced: its output file, or something on stdout.
fn check_output(command: &str, stdout: &str, dir: &Path) {
    let words: Vec<&str> = command.split_whitespace().collect();
    let written = words
        .windows(2)
        .find(|w| w[0] == "-o")
        .map(|w| w[1])
        .or_else(|| (words[1] == "rewrite").then(|| *words.last().unwrap()));
    match written {
        Some(out) => {
            let out = dir.join(out);
            let size = if out.is_dir() {
                fs::read_dir(&out).unwrap().count() as u64
            } else {
                fs::metadata(&out)
                    .unwrap_or_else(|e| panic!("`{command}` wrote no {}: {e}", out.display()))
                    .len()
            };
            assert!(size > 0, "`{command}` wrote an empty {}", out.display());
        }
        None => assert!(!stdout.trim().is_empty(), "`{command}` printed nothing"),
    }
    // Tables end with their total; JSON parses.
    if matches!(words[1], "top" | "diff") {
        if command.contains("--json") {
            serde_json::from_str::<serde_json::Value>(stdout)
                .unwrap_or_else(|e| panic!("`{command}`: {e}"));
        } else {
            assert!(stdout.contains("total"), "`{command}`:\n{stdout}");
        }
    }
}

fn runs_by_profcodec_sql(command: &str) -> bool {
    command.starts_with("profcodec sql ") || command.starts_with("profcodec export ")
}

#[test]
fn the_readme_commands_run_from_the_repository_root() {
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let commands = readme_commands(&readme);
    assert!(commands.len() >= 12, "{commands:?}");
    // Outputs land in a scratch folder holding the repository's testdata.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo().join("testdata"), dir.path().join("testdata")).unwrap();
    for command in commands.iter().filter(|c| !runs_by_profcodec_sql(c)) {
        eprintln!("README.md: {command}");
        let stdout = run_as_documented(command, dir.path());
        check_output(command, &stdout, dir.path());
    }
    // What the README says these commands show.
    let top = run_as_documented(&commands[1], dir.path());
    assert!(top.contains("main::fib"), "{top}");
}

#[test]
fn the_cli_readme_commands_and_help_examples_run_on_real_files() {
    let Some(corpus) = profcodec_testkit::corpus::corpus_dir(MANIFEST) else {
        eprintln!("skipped: no corpus (PROFCODEC_CORPUS)");
        return;
    };
    let readme = fs::read_to_string(Path::new(MANIFEST).join("README.md")).unwrap();
    let mut commands = readme_commands(&readme);
    commands.extend(help_examples());
    for command in commands.iter().filter(|c| !runs_by_profcodec_sql(c)) {
        // Each in a folder of its own: examples reuse output names (`-o report`).
        let dir = user_folder(&corpus);
        eprintln!("documented: {command}");
        let stdout = run_as_documented(command, dir.path());
        if !command.contains("--partial") {
            check_output(command, &stdout, dir.path());
        }
        let _ = std::io::stderr().flush();
    }
}

#[test]
fn a_quoted_argument_may_span_lines() {
    let md = "```sh\nprofcodec sql \"SELECT 1\n  FROM t\" a.out\nls\n```\n```text\nprofcodec top x\n```\n";
    assert_eq!(
        readme_commands(md),
        ["profcodec sql \"SELECT 1\n  FROM t\" a.out"]
    );
}
