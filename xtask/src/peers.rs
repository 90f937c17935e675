//! `cargo xtask bench-peers <format>`: the `profcodec` command timed as a whole process against
//! the real tool's reader on the same files, the code every format shares.
//!
//! Each format module makes its workload files and names, per file, the `profcodec` command line
//! and the peer's; [`compare`] runs them interleaved (`profcodec`, peer, then peer, `profcodec` on
//! the next round, so that a change of load hits both alike), after one untimed run of each to
//! fill the page cache, and prints a Markdown table of the medians. Each run is one whole process
//! (start-up, mapping, page faults included): its wall-clock time, user and system CPU time come
//! from bash's `time` keyword (`TIMEFORMAT`, millisecond resolution), whose own start-up is not
//! counted. The load average before and after is printed with the table, as BENCHMARKS.md wants.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{Workspace, run};

/// Timed runs of each command, unless `--runs N` says otherwise.
pub(crate) const DEFAULT_RUNS: usize = 7;

/// A command line: a program and its arguments, with the environment variables and the folder
/// it runs in, and what is removed before each run.
#[derive(Debug, Clone)]
pub(crate) struct CommandLine {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
    fresh: Option<PathBuf>,
}

impl CommandLine {
    pub(crate) fn new(program: impl AsRef<OsStr>) -> Self {
        CommandLine {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
            fresh: None,
        }
    }

    #[must_use]
    pub(crate) fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Sets an environment variable for the command.
    #[must_use]
    pub(crate) fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Runs the command in `dir`, for a tool that writes its output to a fixed place below the
    /// current folder.
    #[must_use]
    pub(crate) fn in_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.dir = Some(dir.into());
        self
    }

    /// Removes `path` (a file or a folder) before each run, outside the time measured: the
    /// output of a tool that will not write over its last one, or would merge with it.
    #[must_use]
    pub(crate) fn fresh(mut self, path: impl Into<PathBuf>) -> Self {
        self.fresh = Some(path.into());
        self
    }

    /// The command, to run it other than timed (what [`CommandLine::fresh`] names is left as it
    /// is).
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args);
        self.set_context(&mut cmd);
        cmd
    }

    /// `WRAPPER WRAPPER_ARGS... PROGRAM ARGS...` with the command's environment and folder, for a
    /// wrapper that runs the command (`time`, a shell); what [`CommandLine::fresh`] names is
    /// removed first.
    pub(crate) fn wrapped(&self, wrapper: &OsStr, wrapper_args: &[&OsStr]) -> Result<Command> {
        if let Some(path) = &self.fresh {
            let removed = if path.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            if let Err(e) = removed
                && e.kind() != std::io::ErrorKind::NotFound
            {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
        }
        let mut cmd = Command::new(wrapper);
        cmd.args(wrapper_args).arg(&self.program).args(&self.args);
        self.set_context(&mut cmd);
        Ok(cmd)
    }

    fn set_context(&self, cmd: &mut Command) {
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
    }

    /// The command line as a user would type it (for the table's notes).
    pub(crate) fn display(&self) -> String {
        let mut words = Vec::new();
        if let Some(dir) = &self.dir {
            words.push(format!("cd {} &&", dir.display()));
        }
        for (k, v) in &self.envs {
            words.push(format!("{}={}", k.to_string_lossy(), v.to_string_lossy()));
        }
        words.push(self.program.to_string_lossy().into_owned());
        for a in &self.args {
            let a = a.to_string_lossy();
            if a.contains([' ', '$', '(', ')', '>', '{', '}', ';', '\'']) {
                words.push(format!("'{a}'"));
            } else {
                words.push(a.into_owned());
            }
        }
        words.join(" ")
    }
}

/// One row of the table: a workload file and the two command lines that read it.
#[derive(Debug)]
pub(crate) struct Row {
    /// What the workload is, for the table.
    pub(crate) workload: String,
    /// The file (or folder) read, whose size the table gives.
    pub(crate) input: PathBuf,
    /// `profcodec validate INPUT` (or another verb).
    pub(crate) ours: CommandLine,
    /// The real tool's reader on the same input, when there is one to run.
    pub(crate) peer: Option<CommandLine>,
    /// The peer's name, for the table (or why there is none).
    pub(crate) peer_name: String,
    /// The ratio (peer wall time over ours) the project aims for.
    pub(crate) target: f64,
}

/// One timed run: wall-clock, user and system seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    pub(crate) wall: f64,
    pub(crate) cpu: f64,
}

/// Runs `cmd` once as a whole process under bash's `time` keyword, its output discarded.
pub(crate) fn time_once(cmd: &CommandLine) -> Result<Sample> {
    let mut bash = cmd.wrapped(
        OsStr::new("bash"),
        &[
            OsStr::new("-c"),
            OsStr::new(
                "TIMEFORMAT='%3R %3U %3S'; { time \"$@\" > /dev/null 2> \"$ERR\"; } 2>&1 \
                 || { cat \"$ERR\" >&2; exit 1; }",
            ),
            OsStr::new("bench"),
        ],
    )?;
    bash.stdin(Stdio::null());
    let err = std::env::temp_dir().join(format!("xtask-bench-peers-{}.err", std::process::id()));
    bash.env("ERR", &err);
    let out = bash
        .output()
        .with_context(|| format!("could not start bash for {}", cmd.display()))?;
    if !out.status.success() {
        bail!(
            "{} failed: {}{}",
            cmd.display(),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&err).unwrap_or_default()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<f64> = text
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .with_context(|| format!("unexpected `time` output {text:?}"))?;
    let [wall, user, system] = fields[..] else {
        bail!("unexpected `time` output {text:?}");
    };
    Ok(Sample {
        wall,
        cpu: user + system,
    })
}

/// The median of `values` (the mean of the two middle ones for an even count).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Size of a file, or of every file below a folder.
pub(crate) fn size_of(path: &Path) -> u64 {
    if path.is_dir() {
        std::fs::read_dir(path)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| size_of(&e.path()))
            .sum()
    } else {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }
}

pub(crate) fn human_size(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} kB", bytes as f64 / 1e3)
    }
}

pub(crate) fn seconds(s: f64) -> String {
    if s < 0.1 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

/// Times every row's two commands `runs` times each, interleaved, and prints the table of the
/// medians (Markdown), the load average before and after, and the command lines.
pub(crate) fn compare(rows: &[Row], runs: usize) -> Result<()> {
    let runs = runs.max(1);
    let load_before = load_average();
    // One untimed run of each: the page cache holds the inputs and the programs from here on.
    for row in rows {
        time_once(&row.ours)?;
        if let Some(peer) = &row.peer {
            time_once(peer)?;
        }
    }
    let mut samples: Vec<(Vec<Sample>, Vec<Sample>)> = vec![(Vec::new(), Vec::new()); rows.len()];
    for round in 0..runs {
        for (row, (ours, peer)) in rows.iter().zip(&mut samples) {
            let peer_cmd = row.peer.as_ref().filter(|_| round % 2 == 1);
            if let Some(cmd) = peer_cmd {
                peer.push(time_once(cmd)?);
            }
            ours.push(time_once(&row.ours)?);
            if let Some(cmd) = row.peer.as_ref().filter(|_| round % 2 == 0) {
                peer.push(time_once(cmd)?);
            }
        }
        eprintln!("xtask: round {} of {runs} done", round + 1);
    }
    let load_after = load_average();
    println!(
        "| workload | size | `profcodec validate`, wall (median of {runs}) | real reader | real reader, wall | ratio, wall | target | `profcodec`, CPU | real reader, CPU | ratio, CPU |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for (row, (ours, peer)) in rows.iter().zip(&samples) {
        let wall = |s: &[Sample]| median(&mut s.iter().map(|s| s.wall).collect::<Vec<_>>());
        let cpu = |s: &[Sample]| median(&mut s.iter().map(|s| s.cpu).collect::<Vec<_>>());
        let (ours_wall, ours_cpu) = (wall(ours), cpu(ours));
        let size = human_size(size_of(&row.input));
        if peer.is_empty() {
            println!(
                "| {} | {size} | {} | {} | | | | {} | | |",
                row.workload,
                seconds(ours_wall),
                row.peer_name,
                seconds(ours_cpu),
            );
            continue;
        }
        let (peer_wall, peer_cpu) = (wall(peer), cpu(peer));
        let ratio = peer_wall / ours_wall.max(0.0005);
        println!(
            "| {} | {size} | {} | {} | {} | **{:.1}x** | {:.0}x ({}) | {} | {} | {:.1}x |",
            row.workload,
            seconds(ours_wall),
            row.peer_name,
            seconds(peer_wall),
            ratio,
            row.target,
            if ratio >= row.target {
                "met"
            } else {
                "not met"
            },
            seconds(ours_cpu),
            seconds(peer_cpu),
            peer_cpu / ours_cpu.max(0.0005),
        );
    }
    println!();
    println!("Load average (1, 5, 15 min): {load_before} before, {load_after} after.");
    println!();
    for row in rows {
        println!("- `{}`", row.ours.display());
        if let Some(peer) = &row.peer {
            println!("- `{}`", peer.display());
        }
    }
    Ok(())
}

/// Builds the release `profcodec` binary and returns its path.
pub(crate) fn profcodec(ws: &Workspace) -> Result<PathBuf> {
    run(&mut ws.cargo(&[
        "build",
        "--release",
        "--quiet",
        "-p",
        "profcodec-cli",
        "--bin",
        "profcodec",
    ]))?;
    Ok(ws.target().join("release").join("profcodec"))
}

/// [`profcodec`], with the release `profcodec-sql` beside it that its `sql` and `export` run.
pub(crate) fn profcodec_with_sql(ws: &Workspace) -> Result<PathBuf> {
    run(&mut ws.cargo(&["build", "--release", "--quiet", "-p", "profcodec-sql"]))?;
    profcodec(ws)
}

/// `profcodec validate INPUT`.
pub(crate) fn validate(profcodec: &Path, input: &Path) -> CommandLine {
    CommandLine::new(profcodec).arg("validate").arg(input)
}

/// The options every `bench-peers` command takes: `--runs N` and `--peer PATH`; the other
/// arguments are returned in order.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub(crate) runs: Option<usize>,
    pub(crate) peer: Option<PathBuf>,
    pub(crate) rest: Vec<String>,
}

impl Options {
    pub(crate) fn parse(args: &[String]) -> Result<Self> {
        let mut options = Options::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--runs" => {
                    let n = it.next().context("--runs needs a number")?;
                    options.runs = Some(n.parse().with_context(|| format!("--runs {n}"))?);
                }
                "--peer" => {
                    options.peer = Some(it.next().context("--peer needs a path")?.into());
                }
                _ => options.rest.push(arg.clone()),
            }
        }
        Ok(options)
    }

    pub(crate) fn runs(&self) -> usize {
        self.runs.unwrap_or(DEFAULT_RUNS)
    }

    /// The `--peer` path, which must exist; `how` says how to make it when it is missing.
    pub(crate) fn peer(&self, how: &str) -> Result<PathBuf> {
        match &self.peer {
            Some(p) if p.exists() => Ok(p.clone()),
            Some(p) => bail!("--peer {} does not exist; {how}", p.display()),
            None => bail!("this comparison needs --peer PATH; {how}"),
        }
    }
}

/// True when `out` is missing or older than any of `sources`: a workload made from them is made
/// again.
pub(crate) fn stale(out: &Path, sources: &[&Path]) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match modified(out) {
        None => true,
        Some(made) => sources
            .iter()
            .any(|s| modified(s).is_some_and(|changed| changed > made)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_command_runs_in_its_folder_with_its_environment_after_removing_its_output()
    -> Result<()> {
        let dir = std::env::temp_dir().join(format!("xtask-peers-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("out/sub"))?;
        std::fs::write(dir.join("out/sub/old"), "left from the last run")?;
        let cmd = CommandLine::new("sh")
            .arg("-c")
            .arg("test ! -e out && mkdir out && echo \"$XTASK_TEST\" > out/new")
            .env("XTASK_TEST", "set")
            .in_dir(&dir)
            .fresh(dir.join("out"));
        let status = cmd.wrapped(OsStr::new("env"), &[])?.status()?;
        let written = std::fs::read_to_string(dir.join("out/new"));
        let old_gone = !dir.join("out/sub").exists();
        let display = cmd.display();
        std::fs::remove_dir_all(&dir)?;
        assert!(status.success());
        assert_eq!(written?, "set\n");
        assert!(old_gone);
        assert!(display.starts_with(&format!("cd {} && XTASK_TEST=set sh -c ", dir.display())));
        Ok(())
    }

    #[test]
    fn a_missing_output_to_remove_is_no_error() -> Result<()> {
        let missing = std::env::temp_dir().join(format!("xtask-peers-none-{}", std::process::id()));
        let cmd = CommandLine::new("true").fresh(&missing);
        assert!(cmd.wrapped(OsStr::new("env"), &[])?.status()?.success());
        Ok(())
    }
}
