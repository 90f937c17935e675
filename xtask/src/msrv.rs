//! The minimum supported Rust version: the workspace's `rust-version` is built in every
//! `cargo xtask test`.
//!
//! Where the toolchain that runs the tests is of the stated version, the test build is the MSRV
//! build and nothing more is compiled. Otherwise the toolchain of that version must be
//! installed (`rustup toolchain install <version>`), and the workspace is checked with it in a
//! target folder of its own; a missing one fails the run, so the stated version is never one
//! that nothing built.

use std::process::Command;

use anyhow::{Context, Result, anyhow, bail};

use crate::{Workspace, run};

/// The `rust-version` of the workspace's `Cargo.toml` (`[workspace.package]`).
fn stated(ws: &Workspace) -> Result<String> {
    let manifest = std::fs::read_to_string(ws.root.join("Cargo.toml"))?;
    manifest
        .lines()
        .find_map(|line| {
            let value = line.trim().strip_prefix("rust-version")?.trim_start();
            Some(value.strip_prefix('=')?.trim().trim_matches('"').to_owned())
        })
        .ok_or_else(|| anyhow!("the workspace's Cargo.toml states no rust-version"))
}

/// The version of `rustc` as cargo runs it (`1.95.0` of `rustc 1.95.0 (59807616e ...)`).
fn rustc_version(toolchain: Option<&str>) -> Result<String> {
    let mut cmd = Command::new("rustc");
    if let Some(toolchain) = toolchain {
        cmd.arg(format!("+{toolchain}"));
    }
    let out = cmd
        .arg("--version")
        .output()
        .context("could not run rustc")?;
    if !out.status.success() {
        bail!("{cmd:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .nth(1)
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("rustc printed no version: {text}"))
}

/// True when `version` (`1.95.0`) is the release `stated` names (`1.95` or `1.95.0`).
fn is_release(version: &str, stated: &str) -> bool {
    version == stated
        || version
            .strip_prefix(stated)
            .is_some_and(|r| r.starts_with('.'))
}

/// Builds the workspace with its stated minimum Rust version.
pub(crate) fn check(ws: &Workspace) -> Result<()> {
    let stated = stated(ws)?;
    let active = rustc_version(None)?;
    if is_release(&active, &stated) {
        eprintln!("xtask: the tests were built by rustc {active}, the stated rust-version");
        return Ok(());
    }
    let installed = rustc_version(Some(&stated)).with_context(|| {
        format!(
            "the workspace states rust-version {stated}, the tests run on rustc {active}, and \
             no {stated} toolchain is installed to build it (rustup toolchain install {stated})"
        )
    })?;
    if !is_release(&installed, &stated) {
        bail!("the toolchain +{stated} is rustc {installed}");
    }
    // Through rustup's proxy, which takes a `+toolchain` (the cargo that runs xtask does not).
    let mut cargo = Command::new("cargo");
    ws.build_env(&mut cargo);
    run(cargo
        .current_dir(&ws.root)
        .args([
            &format!("+{stated}"),
            "check",
            "--workspace",
            "--all-targets",
        ])
        .env("CARGO_TARGET_DIR", ws.target().join("msrv")))
}

#[cfg(test)]
mod tests {
    use super::is_release;

    #[test]
    fn a_release_is_its_patch_versions() {
        assert!(is_release("1.95.0", "1.95"));
        assert!(is_release("1.95.0", "1.95.0"));
        assert!(!is_release("1.95.0", "1.9"));
        assert!(!is_release("1.88.1", "1.88.0"));
    }
}
