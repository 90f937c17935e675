//! xtask support for `profcodec convert`'s exporters (crates/export): the real consumers their
//! tests are judged by.
//!
//! - Debian: `valgrind` (`callgrind_annotate`), `libdevel-nytprof-perl` (`nytprofcalls`,
//!   `nytprofcg`), `chromium` (headless, for the speedscope app), `nodejs` and `npm`;
//! - npm, into `target/export-tools/`: `speedscope` (its `file-format-schema.json` and the app as
//!   static files) and `ajv` (the JSON-schema validator the schema test runs);
//! - crates.io: inferno, as a dev-dependency of the CLI's tests.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, anyhow};

use crate::{TestEnv, Workspace, apt_install, run, succeeds};

/// The npm packages, pinned so that every run judges by the same app and schema.
const NPM_PACKAGES: &[&str] = &["speedscope@1.25.0", "ajv@8.20.0"];

/// Installs what the exporters' tests need when it is missing, and returns
/// `PROFCODEC_SPEEDSCOPE` (the app's folder), `PROFCODEC_CHROMIUM`, `PROFCODEC_NODE_PATH` (the
/// npm packages) and `PROFCODEC_EXPORT_CONSUMERS=1` (the consumers are installed: the tests run
/// them rather than skip).
pub(crate) fn prepare(ws: &Workspace) -> Result<TestEnv> {
    let mut debian = Vec::new();
    // callgrind_annotate --version exits 255: its presence is what counts.
    if which("callgrind_annotate").is_err() {
        debian.push("valgrind");
    }
    if !succeeds(Command::new("perl").args(["-MDevel::NYTProf::Data", "-e1"])) {
        debian.push("libdevel-nytprof-perl");
    }
    if !succeeds(Command::new("chromium").arg("--version")) {
        debian.push("chromium");
    }
    if !succeeds(Command::new("npm").arg("--version")) {
        debian.extend(["nodejs", "npm"]);
    }
    if !debian.is_empty() {
        apt_install(&debian)?;
    }
    let tools = ws.target().join("export-tools");
    let modules = tools.join("node_modules");
    let app = modules.join("speedscope").join("dist").join("release");
    let installed = |package: &str| {
        let (name, version) = package.rsplit_once('@').unwrap_or((package, ""));
        std::fs::read_to_string(modules.join(name).join("package.json"))
            .is_ok_and(|p| p.contains(&format!("\"version\": \"{version}\"")))
    };
    if !NPM_PACKAGES.iter().all(|p| installed(p)) {
        std::fs::create_dir_all(&tools)?;
        run(Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&tools)
            .args(NPM_PACKAGES))
        .context("installing speedscope and ajv from npm")?;
    }
    let chromium = which("chromium")?;
    Ok(vec![
        ("PROFCODEC_SPEEDSCOPE".to_owned(), utf8(&app)?),
        ("PROFCODEC_CHROMIUM".to_owned(), chromium),
        ("PROFCODEC_NODE_PATH".to_owned(), utf8(&modules)?),
        ("PROFCODEC_EXPORT_CONSUMERS".to_owned(), "1".to_owned()),
    ])
}

fn utf8(path: &Path) -> Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow!("{} is not UTF-8", path.display()))
}

/// The full path of a program on `PATH`.
fn which(program: &str) -> Result<String> {
    let path = std::env::var_os("PATH").context("PATH is unset")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow!("{program} is not on PATH"))
        .and_then(|p| utf8(&p))
}
