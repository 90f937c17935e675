//! Replaying every fuzz target's corpus on stable Rust.
//!
//! The fuzz crate (`fuzz/`, cargo-fuzz layout, its own workspace) builds on stable: libfuzzer-sys
//! links libFuzzer without coverage instrumentation, which is enough to run given inputs. Each
//! target binary is handed the files of `fuzz/corpus/<target>/` (seeds) and
//! `fuzz/regressions/<target>/` (every crash, hang or out-of-memory found so far), one run each;
//! a panic, abort or timeout fails the replay.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::{Workspace, run};

/// The `[[bin]]` names declared in `fuzz/Cargo.toml`.
fn targets(fuzz: &Path) -> Result<Vec<String>> {
    let manifest = std::fs::read_to_string(fuzz.join("Cargo.toml"))?;
    let mut names = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(value) = line.strip_prefix("name") {
            let value = value
                .trim_start()
                .trim_start_matches('=')
                .trim()
                .trim_matches('"');
            names.push(value.to_owned());
        }
    }
    Ok(names)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && !is_hidden(p))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

pub(crate) fn replay(ws: &Workspace) -> Result<()> {
    let fuzz = ws.root.join("fuzz");
    let target_dir = ws.target().join("fuzz-replay");
    run(ws
        .cargo(&["build", "--release", "--bins", "--manifest-path"])
        .arg(fuzz.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir))?;
    let mut total = 0usize;
    for target in targets(&fuzz)? {
        let mut inputs = files_in(&fuzz.join("corpus").join(&target));
        inputs.extend(files_in(&fuzz.join("regressions").join(&target)));
        if inputs.is_empty() {
            eprintln!("xtask: fuzz target {target}: no corpus yet");
            continue;
        }
        let exe = target_dir.join("release").join(&target);
        // libFuzzer runs each file argument once; -timeout makes a hang a failure.
        for chunk in inputs.chunks(500) {
            let output = Command::new(&exe)
                .arg("-timeout=10")
                .arg("-rss_limit_mb=2048")
                .args(chunk)
                .output()
                .with_context(|| format!("could not start {}", exe.display()))?;
            if !output.status.success() {
                let log = String::from_utf8_lossy(&output.stderr);
                let tail: Vec<&str> = log.lines().rev().take(40).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                bail!(
                    "fuzz target {target} failed on its corpus:\n{}",
                    tail.join("\n")
                );
            }
        }
        eprintln!(
            "xtask: fuzz target {target}: replayed {} inputs",
            inputs.len()
        );
        total += inputs.len();
    }
    println!("fuzz replay: {total} passed, 0 failed");
    Ok(())
}

/// `.keep` and other dotfiles hold folders in git; they are not inputs.
fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.'))
}
