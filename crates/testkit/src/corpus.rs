//! Locating the shared test corpus (ARCHITECTURE.md, "Tests that read the shared corpus").
//!
//! - `PROFCODEC_CORPUS` set: that folder must exist; a test that asks for it panics otherwise, so
//!   CI cannot pass by silently skipping the real files.
//! - unset: `../shared/corpus` beside the workspace is used when present; when absent the caller
//!   gets `None` and prints one line saying the corpus tests were not run (a crates.io user has no
//!   corpus).

use std::path::{Path, PathBuf};

/// The environment variable naming the corpus folder.
pub const ENV: &str = "PROFCODEC_CORPUS";

/// Returns the corpus folder, or `None` (after printing why) when it is not available.
///
/// `manifest_dir` is the calling crate's `CARGO_MANIFEST_DIR`; the workspace root is found by
/// walking up from it to the first folder holding a `Cargo.toml` with a `[workspace]` table.
///
/// # Panics
/// When `PROFCODEC_CORPUS` is set but does not name a folder: a configured corpus that is missing
/// is a failure, not a skip.
pub fn corpus_dir(manifest_dir: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(ENV) {
        let dir = PathBuf::from(dir);
        assert!(
            dir.is_dir(),
            "{ENV}={} is set but is not a folder",
            dir.display()
        );
        return Some(dir);
    }
    let root = workspace_root(Path::new(manifest_dir))?;
    let dir = root.join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "corpus tests not run: {ENV} is unset and {} is absent",
            dir.display()
        );
        None
    }
}

/// The corpus subfolder `sub` (for example `"nytprof"`), following the rules of [`corpus_dir`].
///
/// # Panics
/// When the corpus is configured or present but `sub` is missing from it.
pub fn corpus_subdir(manifest_dir: &str, sub: &str) -> Option<PathBuf> {
    let dir = corpus_dir(manifest_dir)?.join(sub);
    assert!(dir.is_dir(), "corpus folder {} is missing", dir.display());
    Some(dir)
}

fn workspace_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().find_map(|dir| {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
        manifest.contains("[workspace]").then(|| dir.to_path_buf())
    })
}

/// Every file below `dir` (recursively), sorted, for tests that sweep a whole corpus folder.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
