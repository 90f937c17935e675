//! A command run inside a fresh memory cgroup, as BENCHMARKS.md measures memory: under a limit
//! that reclaims file pages, not by the resident set alone (which counts the page cache of a
//! mapped input as the process's own).
//!
//! The cgroup is made below the one this process is in (so whatever limit and accounting the
//! machine puts on this process still covers the command), for one run, and removed afterwards.
//! cgroup v2 is used when `/sys/fs/cgroup/cgroup.controllers` exists (a child with the memory
//! controller needs it enabled in the parent's `cgroup.subtree_control`; when the parent holds
//! processes, v2 forbids that, and the child is made below the root instead), else v1's memory
//! hierarchy at `/sys/fs/cgroup/memory`. Swap is limited too (v1 `memory.memsw.limit_in_bytes`,
//! v2 `memory.swap.max`), so the limit cannot be dodged by swapping.
//!
//! The command is started through `sh`, which writes its own process id into `cgroup.procs`
//! before it `exec`s the command, so every page the command touches, and its children's, is
//! charged to the cgroup from its first instruction. While it runs, `memory.stat` is polled every
//! [`POLL`]: the anonymous memory (v1 `total_rss`, v2 `anon`; file pages and the kernel's own are
//! left out) at its highest is the command's working memory. The cgroup's own peak (v1
//! `memory.max_usage_in_bytes`, v2 `memory.peak` or the highest `memory.current` polled)
//! includes the page cache it was charged for.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::peers::CommandLine;

/// How often `memory.stat` is read while the command runs.
pub(crate) const POLL: Duration = Duration::from_millis(3);

/// Which cgroup interface the machine has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Exit status 0.
    Success,
    /// The kernel's OOM killer killed a process of the cgroup (its `oom_kill` count rose).
    OomKilled,
    /// Still running when the time bound passed; its processes were killed.
    TimedOut,
    /// Any other failure: the exit status and the end of its standard error.
    Failed(String),
}

/// One run inside a memory cgroup.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    pub(crate) ending: Ending,
    /// The highest anonymous memory of the cgroup seen while polling, in bytes.
    pub(crate) anon_peak: u64,
    /// The cgroup's own peak charge (anonymous, page cache, kernel), in bytes.
    pub(crate) cgroup_peak: u64,
    pub(crate) wall: Duration,
}

/// A cgroup made for one run; removed when dropped.
#[derive(Debug)]
struct Group {
    version: Version,
    dir: PathBuf,
}

static SERIAL: AtomicUsize = AtomicUsize::new(0);

impl Group {
    /// Makes a fresh memory cgroup below this process's own, with `limit` bytes (no limit when
    /// `None`).
    fn create(limit: Option<u64>) -> Result<Group> {
        let version = if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
            Version::V2
        } else {
            Version::V1
        };
        let name = format!(
            "xtask-bench-{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let group = match version {
            Version::V1 => {
                let root = Path::new("/sys/fs/cgroup/memory");
                if !root.join("memory.stat").exists() {
                    bail!("no cgroup v1 memory hierarchy at {}", root.display());
                }
                let own = own_cgroup(version)?;
                Group::make(version, root.join(own.trim_start_matches('/')).join(&name))?
            }
            Version::V2 => {
                let root = Path::new("/sys/fs/cgroup");
                let own = root.join(own_cgroup(version)?.trim_start_matches('/'));
                // Enabling the controller for our own children fails when our cgroup holds
                // processes (v2's "no internal processes" rule); the root is exempt.
                let parent = if enable_memory(&own).is_ok() {
                    own
                } else {
                    enable_memory(root).with_context(|| {
                        format!(
                            "the memory controller cannot be enabled below {} nor below {}",
                            own.display(),
                            root.display()
                        )
                    })?;
                    root.to_owned()
                };
                Group::make(version, parent.join(&name))?
            }
        };
        if let Some(limit) = limit {
            group.limit(limit)?;
        }
        Ok(group)
    }

    fn make(version: Version, dir: PathBuf) -> Result<Group> {
        fs::create_dir(&dir).with_context(|| {
            format!(
                "could not make the cgroup {} (root is needed)",
                dir.display()
            )
        })?;
        let group = Group { version, dir };
        if !group.file("memory.stat").exists() {
            bail!("{} has no memory controller", group.dir.display());
        }
        Ok(group)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn write(&self, name: &str, value: &str) -> Result<()> {
        fs::write(self.file(name), value)
            .with_context(|| format!("writing {value} to {}", self.file(name).display()))
    }

    fn limit(&self, bytes: u64) -> Result<()> {
        match self.version {
            Version::V1 => {
                self.write("memory.limit_in_bytes", &bytes.to_string())?;
                // Present only when the kernel accounts swap; memory+swap must not be below the
                // memory limit, so it is written second.
                if self.file("memory.memsw.limit_in_bytes").exists() {
                    self.write("memory.memsw.limit_in_bytes", &bytes.to_string())?;
                }
            }
            Version::V2 => {
                self.write("memory.max", &bytes.to_string())?;
                if self.file("memory.swap.max").exists() {
                    self.write("memory.swap.max", "0")?;
                }
            }
        }
        Ok(())
    }

    /// One field of `memory.stat` (bytes); 0 when absent.
    fn stat(&self, field: &str) -> u64 {
        let text = fs::read_to_string(self.file("memory.stat")).unwrap_or_default();
        text.lines()
            .filter_map(|line| line.split_once(' '))
            .find(|(key, _)| *key == field)
            .and_then(|(_, value)| value.trim().parse().ok())
            .unwrap_or(0)
    }

    fn anon(&self) -> u64 {
        match self.version {
            // `total_rss` counts the cgroup and its descendants (hierarchical accounting), and
            // includes transparent huge pages.
            Version::V1 => self.stat("total_rss"),
            Version::V2 => self.stat("anon"),
        }
    }

    /// The cgroup's charge now.
    fn current(&self) -> u64 {
        let name = match self.version {
            Version::V1 => "memory.usage_in_bytes",
            Version::V2 => "memory.current",
        };
        read_number(&self.file(name)).unwrap_or(0)
    }

    /// The cgroup's peak charge as the kernel kept it, when it keeps one.
    fn peak(&self) -> Option<u64> {
        let name = match self.version {
            Version::V1 => "memory.max_usage_in_bytes",
            Version::V2 => "memory.peak",
        };
        read_number(&self.file(name))
    }

    /// How many processes the OOM killer has killed in the cgroup.
    fn oom_kills(&self) -> u64 {
        let name = match self.version {
            Version::V1 => "memory.oom_control",
            Version::V2 => "memory.events",
        };
        fs::read_to_string(self.file(name))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.split_once(' '))
            .find(|(key, _)| *key == "oom_kill")
            .and_then(|(_, value)| value.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The processes still in the cgroup (all started by [`run`]).
    fn processes(&self) -> Vec<String> {
        fs::read_to_string(self.file("cgroup.procs"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    }

    /// Kills every process left in the cgroup: only the command's own descendants are there.
    fn kill_all(&self) {
        for pid in self.processes() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(&pid)
                .stderr(Stdio::null())
                .status();
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // A process that was just killed leaves the cgroup a moment later; the removal is retried
        // for a few seconds. The page cache still charged to it moves to the parent.
        for _ in 0..500 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return,
                Err(e) if e.kind() == ErrorKind::NotFound => return,
                Err(_) => {
                    self.kill_all();
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        }
        eprintln!("xtask: could not remove the cgroup {}", self.dir.display());
    }
}

/// This process's cgroup path (relative to the hierarchy's mount), from `/proc/self/cgroup`.
fn own_cgroup(version: Version) -> Result<String> {
    let text = fs::read_to_string("/proc/self/cgroup").context("reading /proc/self/cgroup")?;
    for line in text.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let found = match version {
            Version::V1 => controllers.split(',').any(|c| c == "memory"),
            Version::V2 => id == "0" && controllers.is_empty(),
        };
        if found {
            return Ok(path.to_owned());
        }
    }
    bail!("/proc/self/cgroup names no memory cgroup for this process")
}

/// Makes the memory controller available to the children of the v2 cgroup `dir`.
fn enable_memory(dir: &Path) -> Result<()> {
    let control = dir.join("cgroup.subtree_control");
    let enabled = fs::read_to_string(&control).unwrap_or_default();
    if enabled.split_whitespace().any(|c| c == "memory") {
        return Ok(());
    }
    fs::write(&control, "+memory")
        .with_context(|| format!("enabling memory in {}", control.display()))
}

fn read_number(path: &Path) -> Option<u64> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Runs `cmd` (standard output and error discarded but for the error's end on failure) in a
/// fresh memory cgroup limited to `limit` bytes (none when `None`), killing it after `bound`.
pub(crate) fn run(cmd: &CommandLine, limit: Option<u64>, bound: Duration) -> Result<Outcome> {
    let group = Group::create(limit)?;
    let err_path = std::env::temp_dir().join(format!(
        "xtask-cgroup-{}-{}.err",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    ));
    let err_file = fs::File::create(&err_path)?;
    let procs = group.file("cgroup.procs");
    let mut sh = cmd.wrapped(
        "sh".as_ref(),
        &[
            "-c".as_ref(),
            "echo $$ > \"$0\" && exec \"$@\"".as_ref(),
            procs.as_os_str(),
        ],
    )?;
    let started = Instant::now();
    let mut child = sh
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(err_file)
        .spawn()
        .with_context(|| format!("could not start {}", cmd.display()))?;
    let mut anon_peak = 0u64;
    let mut current_peak = 0u64;
    let mut timed_out = false;
    let status: ExitStatus = loop {
        anon_peak = anon_peak.max(group.anon());
        current_peak = current_peak.max(group.current());
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > bound {
            timed_out = true;
            group.kill_all();
            let _ = child.kill();
            break child.wait()?;
        }
        std::thread::sleep(POLL);
    };
    let wall = started.elapsed();
    // Children the command left behind are the command's too: wait for them to end (bounded).
    let deadline = Instant::now() + Duration::from_secs(10);
    while !group.processes().is_empty() && Instant::now() < deadline {
        anon_peak = anon_peak.max(group.anon());
        std::thread::sleep(POLL);
    }
    let cgroup_peak = group.peak().unwrap_or(0).max(current_peak);
    let oom = group.oom_kills() > 0;
    let stderr = fs::read_to_string(&err_path).unwrap_or_default();
    let _ = fs::remove_file(&err_path);
    drop(group);
    let ending = if timed_out {
        Ending::TimedOut
    } else if oom {
        Ending::OomKilled
    } else if status.success() {
        Ending::Success
    } else {
        let tail: String = {
            let chars: Vec<char> = stderr.trim_end().chars().collect();
            chars[chars.len().saturating_sub(300)..].iter().collect()
        };
        Ending::Failed(format!("{status}: {tail}"))
    };
    Ok(Outcome {
        ending,
        anon_peak,
        cgroup_peak,
        wall,
    })
}

/// What [`fingerprint`] gives: each file's path below the output and a hash of its content.
pub(crate) type Fingerprint = Vec<(PathBuf, u64)>;

/// A fingerprint of a file or of every file below a folder, to check that a run under a limit
/// wrote what the unlimited run wrote: per file, its path and a hash of the multiset of its
/// fragments (the text split at line ends and at `<`), leaving out the fragments `volatile`
/// names. The order of fragments is left out because some tools (Perl's, whose hash order is
/// randomised per process) write the same rows in another order on every run; `volatile` leaves
/// out what changes by design, such as the time a report was made.
pub(crate) fn fingerprint(path: &Path, volatile: &dyn Fn(&str) -> bool) -> Result<Fingerprint> {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut out = Vec::new();
    let mut stack = vec![path.to_owned()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            for entry in fs::read_dir(&p).with_context(|| format!("reading {}", p.display()))? {
                stack.push(entry?.path());
            }
        } else {
            let bytes = fs::read(&p).with_context(|| format!("reading {}", p.display()))?;
            let text = String::from_utf8_lossy(&bytes);
            let mut fragments: Vec<u64> = text
                .split(['\n', '<'])
                .filter(|f| !volatile(f))
                .map(|f| {
                    let mut hasher = DefaultHasher::new();
                    f.hash(&mut hasher);
                    hasher.finish()
                })
                .collect();
            fragments.sort_unstable();
            let mut hasher = DefaultHasher::new();
            fragments.hash(&mut hasher);
            let relative = p.strip_prefix(path).unwrap_or(&p).to_owned();
            out.push((relative, hasher.finish()));
        }
    }
    out.sort();
    Ok(out)
}

/// MiB, for limits.
pub(crate) const MIB: u64 = 1 << 20;

/// The limits tried, lowest first, by [`lowest_limit`].
pub(crate) const LADDER_MIB: [u64; 11] = [16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024];

/// The result of [`lowest_limit`].
#[derive(Debug)]
pub(crate) struct Lowest {
    /// The lowest limit of the ladder under which the command succeeded with the same output,
    /// in bytes, and that run; `None` when none did.
    pub(crate) passed: Option<(u64, Outcome)>,
    /// The limits tried below it and how each ended.
    pub(crate) failed: Vec<(u64, Ending)>,
}

/// Tries `cmd` under each limit of [`LADDER_MIB`], lowest first, and stops at the first under
/// which it succeeds and writes `output` exactly as `expected` (the unlimited run's
/// [`fingerprint`] with the same `volatile`). A run is bounded at `bound`.
pub(crate) fn lowest_limit(
    cmd: &CommandLine,
    output: &Path,
    expected: &[(PathBuf, u64)],
    volatile: &dyn Fn(&str) -> bool,
    bound: Duration,
) -> Result<Lowest> {
    let mut failed = Vec::new();
    for mib in LADDER_MIB {
        let limit = mib * MIB;
        let outcome = run(cmd, Some(limit), bound)?;
        let ending = match &outcome.ending {
            Ending::Success if fingerprint(output, volatile)? == expected => {
                return Ok(Lowest {
                    passed: Some((limit, outcome)),
                    failed,
                });
            }
            Ending::Success => Ending::Failed("a different output".into()),
            other => other.clone(),
        };
        eprintln!(
            "xtask: {} under {mib} MiB: {}",
            cmd.display(),
            describe(&ending)
        );
        failed.push((limit, ending));
    }
    Ok(Lowest {
        passed: None,
        failed,
    })
}

/// A few words for an [`Ending`].
pub(crate) fn describe(ending: &Ending) -> String {
    match ending {
        Ending::Success => "succeeded".into(),
        Ending::OomKilled => "killed by the OOM killer".into(),
        Ending::TimedOut => "timed out".into(),
        Ending::Failed(why) => format!("failed ({why})"),
    }
}

/// Checks that a cgroup can be made here, for a clear message before a long benchmark.
pub(crate) fn available() -> Result<()> {
    Group::create(None).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_sees_a_changed_byte_but_not_the_order_of_lines() -> Result<()> {
        let dir = std::env::temp_dir().join(format!("xtask-cgroup-test-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub"))?;
        let volatile = |f: &str| f.starts_with("made at");
        fs::write(dir.join("sub/a"), "one\ntwo<b>three\nmade at 10:01")?;
        fs::write(dir.join("b"), "two")?;
        let first = fingerprint(&dir, &volatile)?;
        fs::write(dir.join("sub/a"), "b>three\none\ntwo<made at 10:02")?;
        let reordered = fingerprint(&dir, &volatile)?;
        fs::write(dir.join("sub/a"), "one\ntwo<b>thref\nmade at 10:01")?;
        let changed = fingerprint(&dir, &volatile)?;
        fs::remove_file(dir.join("b"))?;
        let missing = fingerprint(&dir, &volatile)?;
        fs::remove_dir_all(&dir)?;
        assert_eq!(first.len(), 2);
        assert_eq!(first, reordered);
        assert_ne!(first, changed);
        assert_ne!(first, missing);
        Ok(())
    }
}
