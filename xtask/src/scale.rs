//! `cargo xtask bench-scale [FORMAT...] [--base SIZE] [--limit SIZE] [--scales 1,4,16] [--keep]`:
//! each verb of the release `profcodec`, timed at three sizes of input (1x, 4x and 16x of
//! `--base`, 256M by default, so the largest is 4 GiB; `--scales` picks some of them), each run a
//! whole process in a memory cgroup limited to `--limit` (512M by default) and again unlimited,
//! with both outputs compared.
//!
//! Memory is what the cgroup measures ([`cgroup::run`]): the anonymous peak (the program's own
//! memory; the mapped input's pages are file pages, which the kernel reclaims under the limit) and
//! the cgroup's peak (which includes the page cache it was charged for). A row says whether the
//! limited run succeeded with the unlimited run's output ([`cgroup::fingerprint`] for outputs
//! under [`WHOLE_FINGERPRINT`], a hash of the bytes in order above it; `validate` writes nothing,
//! so its exit status is compared).
//!
//! The formats, in the order run when none is named:
//! - `nytprof`: `testdata/nytprof/workload.pl` profiled by the real Devel::NYTProf, uncompressed
//!   (`NYTPROF=...:compress=0`), its iterations scaled to each size;
//! - `easyprofiler`: 4 threads of frames of nested blocks as easy_profiler's API records them
//!   (`gen-easyprofiler frames`), also converted to Perfetto;
//! - `statprofiler`: a session of 4 processes (`gen-statprofiler`, BRANCHING 1: the call paths
//!   stay few however many samples);
//! - `nytprof-zlib`: `workload.pl` under Devel::NYTProf's default compression, at 4x only (1 GiB);
//! - `hpctoolkit`: `export --parquet` of a synthetic database of 625, 2,500 and 10,000 profiles
//!   (`gen-hpctoolkit`; the size option does not apply), through `profcodec-sql` (the release
//!   build when there is one, else the debug build, which the table says).
//!
//! Inputs are made under `target/scale/<format>/` (reused when there, a partial one never), and
//! removed after each format unless `--keep`; before a format starts, the disk must have 3 times
//! its largest input free.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::cgroup::{self, Ending, Outcome};
use crate::peers::{CommandLine, size_of};
use crate::{Workspace, easyprofiler, nytprof, run as run_cmd};

const USAGE: &str = "usage: cargo xtask bench-scale [nytprof|easyprofiler|statprofiler|nytprof-zlib|\
                     hpctoolkit ...] [--base SIZE] [--limit SIZE] [--scales 1,4,16] [--keep]";

const ALL: &[&str] = &[
    "nytprof",
    "easyprofiler",
    "statprofiler",
    "nytprof-zlib",
    "hpctoolkit",
];

/// Outputs up to this size are compared with [`cgroup::fingerprint`] (which reads them whole);
/// larger ones by a hash of their bytes read in order.
const WHOLE_FINGERPRINT: u64 = 256 << 20;

/// The longest a single run may take.
const BOUND: Duration = Duration::from_secs(3600);

/// Bytes of `workload.pl` per iteration under Devel::NYTProf (measured: 101,887,049 bytes for
/// 200,000 iterations uncompressed; 994,286,141 for 17,602,325 with zlib), with 3% to spare
/// (which made 1,003,134,861 bytes of zlib at 19,522,579 iterations).
const NYTPROF_PLAIN_PER_ITERATION: u64 = 494;
const NYTPROF_ZLIB_PER_ITERATION: u64 = 55;

/// Bytes per sample of the StatProfiler session (1,089,051,849 bytes for 40 M samples).
const STATPROFILER_PER_SAMPLE: u64 = 26;

/// The profiles of the HPCToolkit database at 1x; 16x is the 10,000.
const HPCTOOLKIT_PROFILES: u64 = 625;

struct Options {
    formats: Vec<String>,
    base: u64,
    limit: u64,
    /// Only these multiples of the base (all of the format's by default).
    scales: Option<Vec<u64>>,
    keep: bool,
}

fn parse_size(s: &str) -> Result<u64> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits
        .parse()
        .with_context(|| format!("{s} is not a size"))?;
    let shift = match unit
        .to_ascii_uppercase()
        .trim_end_matches("IB")
        .trim_end_matches('B')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => bail!("{s} is not a size (a number with K, M or G)"),
    };
    Ok(n << shift)
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        formats: Vec::new(),
        base: 256 << 20,
        limit: 512 << 20,
        scales: None,
        keep: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--base" => o.base = parse_size(it.next().context(USAGE)?)?,
            "--limit" => o.limit = parse_size(it.next().context(USAGE)?)?,
            "--keep" => o.keep = true,
            "--scales" => {
                let list = it.next().context(USAGE)?;
                let scales = list
                    .split(',')
                    .map(|n| {
                        n.parse()
                            .with_context(|| format!("{list}: not a list of numbers"))
                    })
                    .collect::<Result<Vec<u64>>>()?;
                o.scales = Some(scales);
            }
            f if ALL.contains(&f) => o.formats.push(f.to_owned()),
            other => bail!("{other}: unknown argument\n{USAGE}"),
        }
    }
    if o.formats.is_empty() {
        o.formats = ALL.iter().map(|f| (*f).to_owned()).collect();
    }
    Ok(o)
}

/// One verb at one size.
struct Row {
    format: String,
    size: String,
    input_bytes: u64,
    verb: String,
    limited: Outcome,
    unlimited: Outcome,
    same: String,
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

fn gb(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
    }
}

fn ending(o: &Outcome) -> String {
    match o.ending {
        Ending::Success => format!("{:.1} s", o.wall.as_secs_f64()),
        ref e => cgroup::describe(e),
    }
}

impl Row {
    fn line(&self) -> String {
        format!(
            "| {} | {} ({}) | `{}` | {} | {} | {} | {} / {} | {} |",
            self.format,
            self.size,
            gb(self.input_bytes),
            self.verb,
            ending(&self.limited),
            mib(self.limited.anon_peak),
            mib(self.limited.cgroup_peak),
            ending(&self.unlimited),
            mib(self.unlimited.anon_peak),
            self.same,
        )
    }
}

fn header(limit: u64) -> String {
    format!(
        "| format | size (input) | verb | time, {} limit | anonymous peak | cgroup peak | \
         unlimited: time / anonymous peak | same as unlimited |\n|---|---|---|---|---|---|---|---|",
        mib(limit)
    )
}

/// Free bytes on the file system of `dir` (`df`).
fn free_space(dir: &Path) -> Result<u64> {
    let out = std::process::Command::new("df")
        .args(["-B1", "--output=avail"])
        .arg(dir)
        .output()
        .context("running df")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .with_context(|| format!("df gave no free space for {}", dir.display()))
}

/// What a run wrote, to compare a limited run with the unlimited one.
fn fingerprint(output: Option<&Path>) -> Result<String> {
    let Some(path) = output else {
        return Ok("no output".into());
    };
    let bytes = size_of(path);
    if path.is_file() && bytes > WHOLE_FINGERPRINT {
        use std::hash::{DefaultHasher, Hasher};
        let mut hasher = DefaultHasher::new();
        let mut file = fs::File::open(path)?;
        let mut buf = vec![0; 1 << 20];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.write(&buf[..n]);
        }
        return Ok(format!("{bytes} bytes, {:x}", hasher.finish()));
    }
    Ok(format!(
        "{bytes} bytes, {:?}",
        cgroup::fingerprint(path, &|_| false)?
    ))
}

fn remove(path: &Path) -> Result<()> {
    let r = if path.is_dir() {
        fs::remove_dir_all(path)
    } else {
        fs::remove_file(path)
    };
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// A verb: its name in the table, and the command writing into `out`.
struct Verb {
    name: &'static str,
    args: &'static [&'static str],
    /// Whether it writes `-o OUT` (else its standard output is sent to OUT, or it has none).
    output: Output,
}

#[derive(Clone, Copy, PartialEq)]
enum Output {
    None,
    Stdout,
    File,
    Folder,
}

const VALIDATE: Verb = Verb {
    name: "validate",
    args: &["validate"],
    output: Output::None,
};
const TOP: Verb = Verb {
    name: "top",
    args: &["top"],
    output: Output::Stdout,
};
const FOLDED: Verb = Verb {
    name: "convert --to folded",
    args: &["convert", "--to", "folded"],
    output: Output::File,
};
const PPROF: Verb = Verb {
    name: "convert --to pprof",
    args: &["convert", "--to", "pprof"],
    output: Output::File,
};
const PERFETTO: Verb = Verb {
    name: "convert --to perfetto",
    args: &["convert", "--to", "perfetto", "--max-output", "unlimited"],
    output: Output::File,
};
const EXPORT: Verb = Verb {
    name: "export --parquet",
    args: &["export", "--parquet"],
    output: Output::Folder,
};

fn command(profcodec: &Path, verb: &Verb, input: &Path, out: &Path, path_env: &str) -> CommandLine {
    let mut cmd = match verb.output {
        // `top` prints its table: the shell sends it to OUT, then becomes profcodec.
        Output::Stdout => CommandLine::new("sh")
            .arg("-c")
            .arg("out=$1; shift; exec \"$@\" > \"$out\"")
            .arg("sh")
            .arg(out)
            .arg(profcodec),
        _ => CommandLine::new(profcodec),
    };
    for a in verb.args {
        cmd = cmd.arg(a);
    }
    cmd = match verb.output {
        Output::File => cmd.arg("-o").arg(out),
        Output::Folder => cmd.arg(out),
        Output::None | Output::Stdout => cmd,
    };
    cmd.arg(input).env("PATH", path_env)
}

struct Bench<'a> {
    profcodec: PathBuf,
    path_env: String,
    limit: u64,
    dir: &'a Path,
    rows: Vec<Row>,
}

impl Bench<'_> {
    /// Runs `verb` on `input` unlimited, then limited, and keeps the row.
    fn measure(&mut self, format: &str, size: &str, input: &Path, verb: &Verb) -> Result<()> {
        let out = self.dir.join("out");
        let output = (verb.output != Output::None).then_some(out.as_path());
        let cmd = command(&self.profcodec, verb, input, &out, &self.path_env);
        let outcome = |limit| -> Result<(Outcome, String)> {
            remove(&out)?;
            let o = cgroup::run(&cmd, limit, BOUND)?;
            let print = match o.ending {
                Ending::Success => fingerprint(output)?,
                _ => String::new(),
            };
            remove(&out)?;
            Ok((o, print))
        };
        let (unlimited, expected) = outcome(None)?;
        let (limited, got) = outcome(Some(self.limit))?;
        let same = match (&unlimited.ending, &limited.ending) {
            (Ending::Success, Ending::Success) if got == expected => "yes".to_owned(),
            (Ending::Success, Ending::Success) => format!("**no** ({got} against {expected})"),
            (Ending::Success, _) => "**no** (the limited run failed)".to_owned(),
            _ => "the unlimited run failed".to_owned(),
        };
        let row = Row {
            format: format.to_owned(),
            size: size.to_owned(),
            input_bytes: size_of(input),
            verb: verb.name.to_owned(),
            limited,
            unlimited,
            same,
        };
        eprintln!("xtask: {}", row.line());
        self.rows.push(row);
        Ok(())
    }
}

/// Makes `path` with `make` (writing to `partial`), unless it is there from an earlier run.
fn cached(path: &Path, make: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    if path.exists() {
        eprintln!("xtask: reusing {}", path.display());
        return Ok(());
    }
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    remove(&partial)?;
    let started = std::time::Instant::now();
    make(&partial)?;
    fs::rename(&partial, path)?;
    eprintln!(
        "xtask: made {} ({} bytes) in {:.0?}",
        path.display(),
        size_of(path),
        started.elapsed()
    );
    Ok(())
}

/// Makes the input of `format` at `bytes` (for HPCToolkit, `scale` times the 1x profiles).
fn make_input(ws: &Workspace, format: &str, dir: &Path, bytes: u64, scale: u64) -> Result<PathBuf> {
    let path = dir.join(format!("input-{scale}x"));
    cached(&path, |partial| {
        match format {
            "nytprof" | "nytprof-zlib" => {
                let (per, options) = if format == "nytprof" {
                    (NYTPROF_PLAIN_PER_ITERATION, ":compress=0")
                } else {
                    (NYTPROF_ZLIB_PER_ITERATION, "")
                };
                let name = partial.file_name().context("no file name")?;
                nytprof::profile(
                    ws,
                    dir,
                    &name.to_string_lossy(),
                    options,
                    bytes.div_ceil(per),
                )?;
            }
            "easyprofiler" => {
                let threads = 4;
                let frames = bytes.div_ceil(threads * easyprofiler::FRAME_BYTES);
                easyprofiler::write_frames(partial, threads as u32, u32::try_from(frames)?)?;
            }
            "statprofiler" => {
                fs::create_dir_all(partial)?;
                let spec = profcodec_benches::statprofiler::SessionSpec {
                    samples: bytes.div_ceil(STATPROFILER_PER_SAMPLE),
                    processes: 4,
                    branching: 1,
                    ..Default::default()
                };
                profcodec_benches::statprofiler::write_session(&partial.join("statprof.out"), spec)
                    .context("writing the StatProfiler session")?;
            }
            "hpctoolkit" => {
                fs::create_dir_all(partial)?;
                let profiles = (HPCTOOLKIT_PROFILES * scale).to_string();
                let args: Vec<String> = [
                    "--profiles",
                    &profiles,
                    "--contexts",
                    "2000",
                    "--metrics",
                    "2",
                    "--trace-elems",
                    "0",
                ]
                .iter()
                .map(|s| (*s).to_owned())
                .chain([partial.to_string_lossy().into_owned()])
                .collect();
                crate::hpctoolkit::generate(&args)?;
            }
            _ => bail!("{format}: unknown format"),
        }
        Ok(())
    })?;
    Ok(path)
}

/// `cargo xtask bench-scale ...` (module docs).
pub(crate) fn bench_scale(ws: &Workspace, args: &[String]) -> Result<()> {
    let o = parse(args)?;
    cgroup::available()?;
    run_cmd(&mut ws.cargo(&["build", "--release", "-p", "profcodec-cli"]))?;
    let release = ws.target().join("release");
    let profcodec = release.join("profcodec");
    // export --parquet runs profcodec-sql, looked for beside profcodec and on PATH.
    let debug_sql = ws.target().join("debug").join("profcodec-sql");
    let sql_note = if release.join("profcodec-sql").exists() {
        "release"
    } else if debug_sql.exists() {
        "debug"
    } else {
        "missing"
    };
    let path_env = format!(
        "{}:{}",
        ws.target().join("debug").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = ws.target().join("scale");
    fs::create_dir_all(&root)?;
    let mut rows = Vec::new();
    for format in &o.formats {
        let dir = root.join(format);
        fs::create_dir_all(&dir)?;
        let (scales, verbs): (&[u64], Vec<&Verb>) = match format.as_str() {
            "easyprofiler" => (
                &[1, 4, 16],
                vec![&VALIDATE, &TOP, &FOLDED, &PPROF, &PERFETTO],
            ),
            "nytprof-zlib" => (&[4], vec![&VALIDATE, &TOP, &FOLDED, &PPROF]),
            "hpctoolkit" => {
                if sql_note == "missing" {
                    bail!("export --parquet needs profcodec-sql: cargo build -p profcodec-sql");
                }
                (&[1, 4, 16], vec![&EXPORT])
            }
            _ => (&[1, 4, 16], vec![&VALIDATE, &TOP, &FOLDED, &PPROF]),
        };
        let scales: Vec<u64> = match &o.scales {
            Some(only) => scales
                .iter()
                .copied()
                .filter(|s| only.contains(s))
                .collect(),
            None => scales.to_vec(),
        };
        let largest = o.base * scales.iter().max().copied().unwrap_or(1);
        let free = free_space(&dir)?;
        if format != "hpctoolkit" && free < 3 * largest {
            bail!(
                "{format}: {} free on the disk of {}, under 3 times the largest input ({}): \
                 free space, or lower --base",
                gb(free),
                dir.display(),
                gb(largest)
            );
        }
        let mut bench = Bench {
            profcodec: profcodec.clone(),
            path_env: path_env.clone(),
            limit: o.limit,
            dir: &dir,
            rows: Vec::new(),
        };
        for &scale in &scales {
            let input = make_input(ws, format, &dir, o.base * scale, scale)?;
            let size = if format == "hpctoolkit" {
                format!(
                    "{scale}x, {} profiles, profcodec-sql {sql_note}",
                    HPCTOOLKIT_PROFILES * scale
                )
            } else {
                format!("{scale}x")
            };
            for verb in &verbs {
                bench.measure(format, &size, &input, verb)?;
            }
            if !o.keep {
                remove(&input)?;
            }
        }
        rows.append(&mut bench.rows);
        if !o.keep {
            remove(&dir)?;
        }
    }
    println!("{}", header(o.limit));
    for row in &rows {
        println!("{}", row.line());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("256M").unwrap(), 256 << 20);
        assert_eq!(parse_size("4G").unwrap(), 4 << 30);
        assert_eq!(parse_size("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert!(parse_size("4T").is_err());
        assert!(parse_size("M").is_err());
    }

    #[test]
    fn arguments_name_formats_and_options() {
        let args: Vec<String> = ["easyprofiler", "--base", "1M", "--keep", "--scales", "4,16"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let o = parse(&args).unwrap();
        assert_eq!(o.formats, ["easyprofiler"]);
        assert_eq!((o.base, o.limit, o.keep), (1 << 20, 512 << 20, true));
        assert_eq!(o.scales, Some(vec![4, 16]));
        assert_eq!(parse(&[]).unwrap().formats.len(), ALL.len());
        assert!(parse(&["pdf".to_owned()]).is_err());
    }
}
