//! `cargo xtask corpus-outputs --bin PROFCODEC OUT_DIR`: everything a `profcodec` binary
//! prints and writes for every input of the shared corpus and of `testdata/`, one folder per
//! input, so that `diff -r BEFORE AFTER` of two binaries' folders shows any change of
//! behaviour (a refactoring's outputs must stay byte-identical).
//!
//! For each input, `OUT_DIR/<input>/<verb>.out` holds the command, its standard output and
//! error and its exit status, for the read-only verbs: `info`, `info --json`, `validate`,
//! `dump`, `top`, and `convert --to` every target the binary lists (the timelines' too, and a
//! shallow timeline); a conversion's file is `OUT_DIR/<input>/<verb>.data`. The commands run
//! in the input's output folder with relative output names, so no message names `OUT_DIR`. A
//! flag the binary does not have is skipped (an older binary compares with a newer one on
//! what both do). Last, `OUT_DIR/split/` holds one `convert --split` of several inputs (the
//! names it gives the outputs).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::Workspace;

/// Files beside the inputs that are no input: notes, licenses, programs, reference dumps.
const NOT_INPUTS: &[&str] = &[
    ".md",
    ".txt",
    ".json",
    ".pl",
    ".yaml",
    ".license",
    ".png",
    ".original-path",
];

/// Runs `cargo xtask corpus-outputs ARGS`.
pub(crate) fn run(ws: &Workspace, args: &[String]) -> Result<()> {
    let (bin, out) = match args {
        [flag, bin, out] if flag == "--bin" => (PathBuf::from(bin), PathBuf::from(out)),
        _ => bail!("usage: cargo xtask corpus-outputs --bin PROFCODEC_BINARY OUT_DIR"),
    };
    let bin = std::fs::canonicalize(&bin).with_context(|| format!("{}", bin.display()))?;
    if out.exists() {
        bail!(
            "{} exists: corpus-outputs writes a new folder (remove the old one first)",
            out.display()
        );
    }
    std::fs::create_dir_all(&out).with_context(|| format!("making {}", out.display()))?;
    let profcodec = Binary::new(bin)?;
    let mut inputs = Vec::new();
    for (tree, root) in [
        ("corpus", ws.corpus()),
        ("testdata", ws.root.join("testdata")),
    ] {
        let root = std::fs::canonicalize(&root)
            .with_context(|| format!("{tree} at {} is missing", root.display()))?;
        let mut found = Vec::new();
        walk(&root, &mut found)?;
        for path in found {
            let relative = path.strip_prefix(&root).unwrap_or(&path);
            let name = format!("{tree}+{}", relative.to_string_lossy().replace('/', "+"));
            inputs.push((name, path));
        }
    }
    eprintln!("xtask: {} inputs", inputs.len());
    for (i, (name, input)) in inputs.iter().enumerate() {
        eprintln!("xtask: [{}/{}] {name}", i + 1, inputs.len());
        let folder = out.join(name);
        std::fs::create_dir(&folder)?;
        for (verb, args) in profcodec.verbs(input) {
            profcodec.record(&folder, &verb, &args)?;
        }
    }
    // Several inputs split into one folder: the outputs' names (the same file twice, and
    // files of one name in different folders).
    let files: Vec<&PathBuf> = inputs
        .iter()
        .map(|(_, p)| p)
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "prof" || e == "out"))
        .collect();
    let split = out.join("split");
    std::fs::create_dir(&split)?;
    if let Some(&first) = files.first()
        && profcodec.has("convert", "--split")
    {
        let mut args: Vec<OsString> = ["convert", "--to", "folded", "--split", "-o", "outputs"]
            .map(OsString::from)
            .into();
        args.extend(files.iter().map(|p| p.as_os_str().to_owned()));
        args.push(first.as_os_str().to_owned());
        profcodec.record(&split, "split", &args)?;
    }
    eprintln!("xtask: wrote {}", out.display());
    Ok(())
}

/// The inputs under `dir`, sorted: HPCToolkit databases (and their `.db` files), measurement
/// folders and StatProfiler sessions (and their files), and every other file that is no note.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    entries.sort();
    if entries.iter().any(|p| p.ends_with("meta.db")) {
        found.push(dir.to_owned());
        found.extend(
            entries
                .into_iter()
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "db")),
        );
        return Ok(());
    }
    let measurement = entries
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "hpcrun"));
    let session = entries.iter().any(|p| starts_with(p, b"=statprofiler"));
    if measurement || session {
        found.push(dir.to_owned());
    }
    for entry in entries {
        let name = entry
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if entry.is_dir() {
            walk(&entry, found)?;
        } else if entry.is_file()
            && !name.starts_with("LICENSE")
            && !NOT_INPUTS.iter().any(|s| name.ends_with(s))
        {
            found.push(entry);
        }
    }
    Ok(())
}

/// Whether the file at `path` starts with `magic`.
fn starts_with(path: &Path, magic: &[u8]) -> bool {
    use std::io::Read;
    let mut head = vec![0; magic.len()];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == magic)
}

/// A `profcodec` binary, and the flags of its subcommands.
struct Binary {
    path: PathBuf,
    /// Each subcommand's `--help`.
    help: HashMap<&'static str, String>,
    /// The targets of `convert --to`.
    targets: Vec<String>,
}

impl Binary {
    fn new(path: PathBuf) -> Result<Binary> {
        let mut help = HashMap::new();
        for verb in ["info", "validate", "dump", "top", "convert"] {
            let out = Command::new(&path)
                .args([verb, "--help"])
                .output()
                .with_context(|| format!("running {}", path.display()))?;
            help.insert(verb, String::from_utf8_lossy(&out.stdout).into_owned());
        }
        // `-h` lists the values on one line: `[possible values: folded, pprof, ...]`.
        let short = Command::new(&path).args(["convert", "-h"]).output()?;
        let short = String::from_utf8_lossy(&short.stdout).into_owned();
        let targets = short
            .lines()
            .find(|l| l.trim_start().starts_with("--to"))
            .and_then(|l| l.split("[possible values: ").nth(1))
            .map(|v| {
                v.trim_end_matches(']')
                    .split(", ")
                    .map(str::to_owned)
                    .collect()
            })
            .context("convert -h lists no targets of --to")?;
        Ok(Binary {
            path,
            help,
            targets,
        })
    }

    /// Whether `verb` has `flag`.
    fn has(&self, verb: &str, flag: &str) -> bool {
        self.help.get(verb).is_some_and(|h| {
            h.split(|c: char| c.is_whitespace() || c == ',')
                .any(|w| w == flag)
        })
    }

    /// The commands run for `input`, each with its name, the flags this binary lacks left out.
    fn verbs(&self, input: &Path) -> Vec<(String, Vec<OsString>)> {
        let mut verbs: Vec<(String, Vec<&str>)> = vec![
            ("info".into(), vec!["info"]),
            ("info-json".into(), vec!["info", "--json"]),
            ("validate".into(), vec!["validate"]),
            ("dump".into(), vec!["dump"]),
            ("top".into(), vec!["top"]),
        ];
        let mut names = Vec::new();
        for target in &self.targets {
            names.push((format!("convert-{target}"), target.as_str()));
        }
        for (name, target) in &names {
            verbs.push((name.clone(), vec!["convert", "--to", target]));
        }
        // A shallow timeline: the filter of the timeline writers.
        if self.targets.iter().any(|t| t == "chrome") {
            verbs.push((
                "convert-chrome-depth".into(),
                vec!["convert", "--to", "chrome", "--depth", "2"],
            ));
        }
        verbs
            .into_iter()
            .filter(|(_, args)| {
                let verb = args[0];
                args[1..]
                    .iter()
                    .filter(|a| a.starts_with("--"))
                    .all(|flag| self.has(verb, flag))
            })
            .map(|(name, args)| {
                let mut args: Vec<OsString> = args.into_iter().map(OsString::from).collect();
                if args[0] == "convert" {
                    args.push("-o".into());
                    args.push(format!("{name}.data").into());
                }
                args.push(input.as_os_str().to_owned());
                (name, args)
            })
            .collect()
    }

    /// Runs this binary with `args` in `folder`, and writes `folder/<name>.out`: the command,
    /// its standard output and error, and its exit status.
    fn record(&self, folder: &Path, name: &str, args: &[OsString]) -> Result<()> {
        let out = Command::new(&self.path)
            .args(args)
            .current_dir(folder)
            .output()
            .with_context(|| format!("running {} {args:?}", self.path.display()))?;
        let mut text = format!(
            "$ profcodec {}\n--- stdout\n",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ")
        )
        .into_bytes();
        text.extend_from_slice(&out.stdout);
        text.extend_from_slice(b"\n--- stderr\n");
        text.extend_from_slice(&out.stderr);
        let status = match out.status.code() {
            Some(code) => code.to_string(),
            None => format!("{}", out.status),
        };
        text.extend_from_slice(format!("\n--- exit status: {status}\n").as_bytes());
        std::fs::write(folder.join(format!("{name}.out")), text)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_finds_folders_and_files_and_leaves_out_notes() -> Result<()> {
        let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata");
        let mut found = Vec::new();
        walk(&testdata, &mut found)?;
        let found: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(&testdata).unwrap_or(p).display().to_string())
            .collect();
        for input in [
            "hpctoolkit/demo.d",
            "hpctoolkit/demo.d/meta.db",
            "statprofiler/session",
            "statprofiler/features.statprof",
            "nytprof/hello.nytprof.out",
        ] {
            assert!(found.iter().any(|f| f == input), "{input} not in {found:?}");
        }
        assert!(
            !found
                .iter()
                .any(|f| f.ends_with(".md") || f.ends_with(".png"))
        );
        Ok(())
    }
}
