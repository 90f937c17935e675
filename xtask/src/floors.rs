//! `cargo xtask floors`: the shape of the workspace that `ARCHITECTURE.md` draws, checked.
//!
//! 1. **One room per format.** Outside its own crate, a format is named (as its crate,
//!    `profcodec_<format>` or `profcodec-<format>`) only by the umbrella's dispatch: the library
//!    sources of every other crate under `crates/` name no format crate. Tests, benches, fuzz
//!    targets and the xtask are left out, as the issue that drew the rule leaves them out.
//!    [`NAMING_ALLOWED`] lists the files outside the umbrella that may still name one, each with
//!    its reason; a new one fails the check.
//! 2. **No import circles between files.** Within each crate, no source file imports (by a
//!    `crate::` or `super::` path) a file that imports it back, directly or around a longer
//!    loop. A module and its own submodules are one unit (a parent re-exporting its children,
//!    and children using their parent's items, is how Rust modules are built), so edges between
//!    a module and its descendants are not counted.
//! 3. **Test support is not published.** `profcodec-common` has no features beyond `inspect`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::Workspace;

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// The format crates, by their crate names.
const FORMAT_CRATES: &[&str] = &[
    "hpctoolkit",
    "hpcrun",
    "nytprof",
    "easyprofiler",
    "statprofiler",
    "hpcprof",
];

/// Crates of the formats' floor that join format crates, with the formats each may name and
/// why: `hpcprof` reads measurements (hpcrun) and writes databases (hpctoolkit), the two ends
/// of HPCToolkit's pipeline.
const JOINS: &[(&str, &[&str], &str)] = &[(
    "hpcprof",
    &["hpcrun", "hpctoolkit"],
    "turns hpcrun measurements into HPCToolkit databases",
)];

/// True when crate `name` may name the format crate `format`: its own, or one it joins.
fn may_name(name: &str, format: &str) -> bool {
    name == format
        || JOINS
            .iter()
            .any(|(joiner, formats, _)| *joiner == name && formats.contains(&format))
}

/// Files outside the umbrella and the format's own crate that may name a format crate, with
/// why. Paths are relative to the workspace root.
const NAMING_ALLOWED: &[(&str, &str)] = &[];

/// Runs every check; the error lists every breach.
pub(crate) fn check(ws: &Workspace) -> Result<()> {
    let crates = ws.root.join("crates");
    let mut breaches = Vec::new();
    let mut named = 0usize;
    for dir in sorted_dirs(&crates)? {
        let name = file_name(&dir);
        let src = dir.join("src");
        if !src.is_dir() {
            continue;
        }
        let files = rust_files(&src)?;
        if name != "profcodec" && name != "testkit" {
            for file in &files {
                let text = read(file)?;
                let rel = file.strip_prefix(&ws.root).unwrap_or(file);
                for format in FORMAT_CRATES {
                    if may_name(&name, format) || !names_crate(&text, format) {
                        continue;
                    }
                    named += 1;
                    let rel_text = rel.to_string_lossy();
                    if !NAMING_ALLOWED.iter().any(|(p, _)| *p == rel_text) {
                        breaches.push(format!(
                            "{}: names the format crate profcodec-{format}; only the umbrella \
                             crates/profcodec dispatches over formats (ARCHITECTURE.md)",
                            rel.display()
                        ));
                    }
                }
            }
        }
        if name != "profcodec" && !FORMAT_CRATES.contains(&name.as_str()) {
            for format in format_dependencies(&read(&dir.join("Cargo.toml"))?) {
                breaches.push(format!(
                    "crates/{name}/Cargo.toml: depends on profcodec-{format}; only the umbrella \
                     depends on format crates (dev-dependencies aside)"
                ));
            }
        }
        breaches.extend(circles(&ws.root, &src, &files)?);
    }
    let common = read(&crates.join("common/Cargo.toml"))?;
    if common.contains("test-support") {
        breaches.push("crates/common/Cargo.toml: a test-support feature; test helpers live in the unpublished crates/testkit".to_owned());
    }
    if !breaches.is_empty() {
        bail!(
            "the floors of the workspace are broken:\n  {}",
            breaches.join("\n  ")
        );
    }
    eprintln!(
        "xtask floors: no format named outside the umbrella ({named} allowed use(s)), no file import circle"
    );
    Ok(())
}

/// True when `text` names the crate `profcodec-<format>` (as a path or a dependency).
fn names_crate(text: &str, format: &str) -> bool {
    [format!("profcodec_{format}"), format!("profcodec-{format}")]
        .iter()
        .any(|needle| {
            text.match_indices(needle.as_str()).any(|(i, _)| {
                // Not a longer identifier (`profcodec_hpcrun` inside `profcodec_hpcrunx`).
                let next = text[i + needle.len()..].chars().next();
                !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        })
}

/// The format crates a manifest's `[dependencies]` (not its dev-dependencies) name.
fn format_dependencies(manifest: &str) -> Vec<&'static str> {
    let mut section = "";
    let mut out = Vec::new();
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line;
            continue;
        }
        if !(section == "[dependencies]" || section.ends_with(".dependencies]")) {
            continue;
        }
        for format in FORMAT_CRATES {
            let key = format!("profcodec-{format}");
            if line.starts_with(&key) && line[key.len()..].trim_start().starts_with(['=', '.']) {
                out.push(*format);
            }
        }
    }
    out
}

/// The module path of a source file below `src` (`read/stream.rs` is `read::stream`,
/// `read/mod.rs` is `read`, `lib.rs` and `main.rs` are the root).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// The file-level import graph of one crate, and its circles as messages.
fn circles(root: &Path, src: &Path, files: &[PathBuf]) -> Result<Vec<String>> {
    let modules: BTreeMap<Vec<String>, &PathBuf> =
        files.iter().map(|f| (module_of(src, f), f)).collect();
    let mut edges: BTreeMap<&Vec<String>, BTreeSet<&Vec<String>>> = BTreeMap::new();
    for (module, file) in &modules {
        let text = strip_comments(&read(file)?);
        for path in paths_in(&text, module) {
            // The longest module that the path names (the rest is an item in it).
            let Some(target) = (1..=path.len())
                .rev()
                .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
            else {
                continue;
            };
            let related = target.starts_with(module) || module.starts_with(target);
            if !related {
                edges.entry(module).or_default().insert(target);
            }
        }
    }
    // A circle is an edge whose target reaches its source again.
    let mut found = BTreeSet::new();
    let mut messages = Vec::new();
    for (from, tos) in &edges {
        for to in tos {
            let Some(back) = reach(&edges, to, from) else {
                continue;
            };
            let mut cycle: Vec<&Vec<String>> = vec![from];
            cycle.extend(back);
            let names: Vec<String> = cycle
                .iter()
                .map(|m| {
                    let f = modules[*m];
                    f.strip_prefix(root).unwrap_or(f).display().to_string()
                })
                .collect();
            // One message per circle, whichever of its files it was found from.
            let key: BTreeSet<String> = names.iter().cloned().collect();
            if found.insert(key) {
                messages.push(format!(
                    "files import each other in a circle: {}",
                    names.join(" -> ")
                ));
            }
        }
    }
    Ok(messages)
}

/// The path from `from` to `to` along `edges` (excluding `from`, including `to`), if any.
fn reach<'a>(
    edges: &BTreeMap<&'a Vec<String>, BTreeSet<&'a Vec<String>>>,
    from: &'a Vec<String>,
    to: &'a Vec<String>,
) -> Option<Vec<&'a Vec<String>>> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![(from, vec![from])];
    while let Some((at, path)) = stack.pop() {
        if at == to {
            return Some(path);
        }
        if !seen.insert(at) {
            continue;
        }
        for next in edges.get(at).into_iter().flatten() {
            let mut p = path.clone();
            p.push(next);
            stack.push((next, p));
        }
    }
    None
}

/// Every `crate::a::b` and `super::a` path in `text`, resolved to absolute module paths from
/// `module` (a `use` group `crate::a::{b, c}` gives `a::b` and `a::c`).
fn paths_in(text: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts_word = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'_'
                || bytes[i - 1] == b':');
        let (base, skip) = if starts_word && rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if starts_word && rest.starts_with("super::") {
            let mut base = module.to_vec();
            let mut skip = 0;
            while text[i + skip..].starts_with("super::") {
                base.pop();
                skip += "super::".len();
            }
            (base, skip)
        } else {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let tail = &text[i + skip..];
        let mut path = base;
        let mut group = None;
        for segment in tail.split("::") {
            let ident: String = segment
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if segment.starts_with('{') {
                group = Some(segment);
                break;
            }
            if ident.is_empty() {
                break;
            }
            path.push(ident.clone());
            if ident.len() != segment.len() {
                break;
            }
        }
        if let Some(group) = group {
            let inner = group.trim_start_matches('{');
            let inner = &inner[..inner.find('}').unwrap_or(inner.len())];
            for item in inner.split(',') {
                let first: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !first.is_empty() {
                    let mut p = path.clone();
                    p.push(first);
                    out.push(p);
                }
            }
        }
        out.push(path);
        i += skip;
    }
    out
}

/// `text` without `//` comments (doc comments included: intra-doc links are not imports).
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn sorted_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    Ok(dirs)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every `.rs` file below `dir`, sorted.
fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(parts: &[&str]) -> Vec<String> {
        parts.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn paths_resolve_groups_and_super() {
        let paths = paths_in(
            "use crate::read::{ahead, stream::Stream};\nuse super::model::X;",
            &m(&["read", "tail"]),
        );
        assert!(paths.contains(&m(&["read", "ahead"])));
        assert!(paths.contains(&m(&["read", "stream"])));
        assert!(paths.contains(&m(&["read", "model", "X"])));
    }

    #[test]
    fn crate_names_are_matched_whole() {
        assert!(names_crate("use profcodec_hpcrun::X;", "hpcrun"));
        assert!(!names_crate("use profcodec_hpcrunx::X;", "hpcrun"));
        assert!(names_crate("profcodec-nytprof = { path }", "nytprof"));
    }
}
