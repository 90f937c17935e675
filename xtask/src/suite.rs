//! `cargo xtask bench-peers nytprof-suite [--runs N] [--peer-runs N] [--dist NAME]
//! [--profiles N]`: many NYTProf profiles of a real test suite merged by `profcodec` and by
//! Devel::NYTProf's own tools, timed as whole processes, with the per-sub totals compared.
//!
//! The workload is what a CPAN distribution's test suite leaves: Debian's source package of the
//! distribution (`apt-get source NAME`, default `libmoo-perl`; a `deb-src` line for the
//! machine's release is added when apt has none) is run with `prove -l -r t`, every test process
//! under `-d:NYTProf` with a profile of its own (`NYTPROF=addpid=1`), again and again until
//! there are `--profiles` of them (default 1,000; the ones past that are removed, so the inputs
//! are exactly those). The binary package is installed first for the suite's dependencies.
//!
//! Cache, under `target/nytprof-suite/NAME/`: the source package and its unpacked folder (a few
//! MB), `profiles-N/runNNN/nytprof.out.PID` with a `complete` marker (for `libmoo-perl`, 1,000
//! profiles of about 310 kB each, 0.3 GB in all: delete the folder to free it), and `out/`, the
//! merged files and reports of one run, removed when the task ends.
//!
//! Timed with `hyperfine` (release build of `profcodec-cli`, the inputs as the shell's glob
//! `profiles-N/run*/nytprof.out.*`, in the same order for every tool):
//! - `profcodec merge -o out/m.out INPUTS && profcodec top out/m.out`;
//! - `profcodec top INPUTS`;
//! - the peer, `nytprofmerge -o out/theirs.out INPUTS && nytprofcsv --file out/theirs.out`.
//!
//! Then checked: Devel::NYTProf::Data's per-sub calls, inclusive and exclusive times of
//! `profcodec merge`'s file equal those of `nytprofmerge`'s; `nytprofcsv`'s per-line reports of
//! the two files are equal (times to nytprofcsv's microsecond); and `profcodec top`'s rows of the
//! inputs, and of the merged file, have the same calls, inclusive and self times as Data.pm's
//! subs of `nytprofmerge`'s file. A difference fails the task.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

use crate::{Workspace, apt_install, nytprof, peers, run, succeeds};

/// Profiles made and merged, unless `--profiles N` says otherwise.
const DEFAULT_PROFILES: usize = 1000;
/// Timed runs of the peer, unless `--peer-runs N` says otherwise (each takes minutes).
const DEFAULT_PEER_RUNS: usize = 3;
/// The inputs of `profiles-N`, as the shell expands them in the distribution's folder.
fn inputs(count: usize) -> String {
    format!("profiles-{count}/run*/nytprof.out.*")
}

/// Devel::NYTProf::Data's per-sub totals of a file: `name TAB calls TAB incl TAB excl`, one
/// line per sub that was called, sorted by name.
const SUB_TOTALS: &str = r#"
my $p = Devel::NYTProf::Data->new({ filename => $ARGV[0], quiet => 1 });
for my $si (sort { $a->subname cmp $b->subname } values %{ $p->{sub_subinfo} }) {
    next unless $si->calls;
    printf "%s\t%d\t%.9g\t%.9g\n", $si->subname, $si->calls, $si->incl_time, $si->excl_time;
}
"#;

pub(crate) fn bench(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let mut dist = "libmoo-perl".to_owned();
    let mut count = DEFAULT_PROFILES;
    let mut peer_runs = DEFAULT_PEER_RUNS;
    let mut rest = options.rest.iter();
    while let Some(arg) = rest.next() {
        let mut value = || rest.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--dist" => dist = value()?.clone(),
            "--profiles" => count = value()?.parse().context("--profiles")?,
            "--peer-runs" => peer_runs = value()?.parse().context("--peer-runs")?,
            other => bail!(
                "unknown argument {other}; usage: cargo xtask bench-peers nytprof-suite \
                 [--runs N] [--peer-runs N] [--dist NAME] [--profiles N]"
            ),
        }
    }
    ensure!(count >= 2, "--profiles must be at least 2");
    ensure!(
        dist.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '+')),
        "--dist {dist:?} is not a Debian package name"
    );
    nytprof::prepare(ws)?;
    if !succeeds(Command::new("hyperfine").arg("--version")) {
        apt_install(&["hyperfine"])?;
    }
    let dir = ws.target().join("nytprof-suite").join(&dist);
    let source = source(&dir, &dist)?;
    let tests = test_files(&source.join("t"));
    let made = profiles(&dir, &source, count)?;
    let profcodec = peers::profcodec(ws)?;
    let out = dir.join("out");
    if out.exists() {
        std::fs::remove_dir_all(&out)?;
    }
    std::fs::create_dir_all(&out)?;
    let result = time_and_check(&dir, &profcodec, &inputs(count), &options, peer_runs);
    std::fs::remove_dir_all(&out)?;
    let (ours, peer) = result?;
    println!();
    println!(
        "Workload: {dist} ({} test files), {made} runs of its suite under -d:NYTProf, {count} \
         profiles, {} in all.",
        tests,
        peers::human_size(peers::size_of(&dir.join(format!("profiles-{count}"))))
    );
    let ratio = |name: &str, ours: f64| {
        println!(
            "- {name}: {} against {} for nytprofmerge + nytprofcsv: {:.1}x",
            peers::seconds(ours),
            peers::seconds(peer),
            peer / ours
        );
    };
    ratio("profcodec merge + top of the merged file", ours.0);
    ratio("profcodec top of the inputs", ours.1);
    Ok(())
}

/// The unpacked source package of `dist` under `dir`, fetched when missing; the binary package
/// is installed for the test suite's dependencies.
fn source(dir: &Path, dist: &str) -> Result<PathBuf> {
    if !succeeds(Command::new("dpkg").args(["-s", dist])) {
        apt_install(&[dist])?;
    }
    if !succeeds(Command::new("dpkg-source").arg("--help")) {
        apt_install(&["dpkg-dev"])?;
    }
    std::fs::create_dir_all(dir)?;
    if let Some(found) = unpacked(dir, dist)? {
        return Ok(found);
    }
    add_deb_src()?;
    run(Command::new("apt-get")
        .args(["source", "-qq", dist])
        .current_dir(dir))
    .with_context(|| format!("fetching Debian's source package {dist}"))?;
    unpacked(dir, dist)?.with_context(|| format!("apt-get source {dist} unpacked no folder"))
}

/// The folder `DIST-VERSION` with a `t` folder under `dir`, if there is one.
fn unpacked(dir: &Path, dist: &str) -> Result<Option<PathBuf>> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with(&format!("{dist}-")) && path.join("t").is_dir() {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

/// Adds a `deb-src` source for the machine's Debian release when apt has none.
fn add_deb_src() -> Result<()> {
    let has_src = |path: &Path| {
        std::fs::read_to_string(path).is_ok_and(|text| {
            text.lines()
                .any(|l| l.trim_start().starts_with("deb-src") || l.contains("Types: deb-src"))
        })
    };
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        files.extend(dir.flatten().map(|e| e.path()));
    }
    if files.iter().any(|f| has_src(f)) {
        return Ok(());
    }
    let release = std::fs::read_to_string("/etc/os-release")?
        .lines()
        .find_map(|l| l.strip_prefix("VERSION_CODENAME=").map(str::to_owned))
        .context("/etc/os-release names no VERSION_CODENAME")?;
    let path = "/etc/apt/sources.list.d/profcodec-deb-src.sources";
    std::fs::write(
        path,
        format!(
            "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: {release} \
             {release}-updates\nComponents: main\n\
             Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        ),
    )
    .with_context(|| format!("writing {path}"))?;
    eprintln!("xtask: added {path} for apt-get source");
    run(Command::new("apt-get").args(["update", "-qq"]))
}

/// Number of `.t` files below `dir`.
fn test_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| {
            let path = e.path();
            if path.is_dir() {
                test_files(&path)
            } else {
                usize::from(path.extension().is_some_and(|x| x == "t"))
            }
        })
        .sum()
}

/// The profiles below `runs` (`runNN/nytprof.out.PID`), in the shell glob's order.
fn listed(runs: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if !runs.is_dir() {
        return Ok(files);
    }
    for run in std::fs::read_dir(runs)? {
        let run = run?.path();
        if !run.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&run)? {
            let file = file?.path();
            let name = file.file_name().unwrap_or_default().to_string_lossy();
            if name.starts_with("nytprof.out.") {
                files.push(file);
            }
        }
    }
    // ASCII names: the shell's glob order in the C locale and in others alike.
    files.sort();
    Ok(files)
}

/// Runs the suite in `source` under Devel::NYTProf until `dir/profiles-COUNT` holds `count`
/// profiles (kept when an earlier run made them). Returns how many runs of the suite they took.
fn profiles(dir: &Path, source: &Path, count: usize) -> Result<usize> {
    let runs = dir.join(format!("profiles-{count}"));
    let marker = runs.join("complete");
    if std::fs::read_to_string(&marker).is_ok_and(|m| m.starts_with(&format!("{count} "))) {
        let made = std::fs::read_to_string(&marker)?;
        return made
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .context("target/nytprof-suite: damaged `complete` marker; delete the folder");
    }
    if runs.exists() {
        std::fs::remove_dir_all(&runs)?;
    }
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut made = 0;
    while listed(&runs)?.len() < count {
        made += 1;
        ensure!(
            made <= count,
            "{} runs of the suite made only {} profiles",
            made - 1,
            listed(&runs)?.len()
        );
        let run_dir = runs.join(format!("run{made:03}"));
        std::fs::create_dir_all(&run_dir)?;
        let out = Command::new("prove")
            .args(["-l", "-r", "-j", &jobs.to_string(), "t"])
            .current_dir(source)
            .env("HARNESS_PERL_SWITCHES", "-d:NYTProf")
            .env(
                "NYTPROF",
                format!("addpid=1:file={}", run_dir.join("nytprof.out").display()),
            )
            .output()
            .context("running prove (Debian's perl)")?;
        if !out.status.success() {
            eprintln!(
                "xtask: warning: run {made} of the suite failed (its profiles are kept):\n{}",
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .rev()
                    .take(5)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        eprintln!(
            "xtask: run {made} of the suite: {} profiles so far",
            listed(&runs)?.len()
        );
    }
    for extra in &listed(&runs)?[count..] {
        std::fs::remove_file(extra)?;
    }
    std::fs::write(&marker, format!("{count} {made}\n"))?;
    Ok(made)
}

/// Times the three command lines with hyperfine in `dir` and checks their outputs; returns the
/// mean seconds of profcodec's two (merge + top, top) and of the peer.
fn time_and_check(
    dir: &Path,
    profcodec: &Path,
    inputs: &str,
    options: &peers::Options,
    peer_runs: usize,
) -> Result<((f64, f64), f64)> {
    let p = profcodec.display();
    let merge_top = format!("{p} merge --force -o out/m.out {inputs} && {p} top out/m.out");
    let top = format!("{p} top {inputs}");
    let peer = format!(
        "nytprofmerge -o out/theirs.out {inputs} && nytprofcsv --file out/theirs.out --out out/csv"
    );
    println!(
        "Load average (1, 5, 15 min) before: {}",
        peers::load_average()
    );
    let ours = hyperfine(
        dir,
        "ours",
        options.runs.unwrap_or(10),
        &["--warmup", "1"],
        &[&merge_top, &top],
    )?;
    let theirs = hyperfine(
        dir,
        "peer",
        peer_runs,
        // The page cache holds the inputs already (profcodec's runs read them): no warm-up.
        &[
            "--warmup",
            "0",
            "--prepare",
            "rm -rf out/theirs.out out/csv",
        ],
        &[&peer],
    )?;
    println!(
        "Load average (1, 5, 15 min) after: {}",
        peers::load_average()
    );
    check(dir, profcodec, inputs)?;
    Ok(((ours[0], ours[1]), theirs[0]))
}

/// Runs hyperfine on `commands` in `dir` (its report printed), returning each one's mean
/// seconds.
fn hyperfine(
    dir: &Path,
    name: &str,
    runs: usize,
    extra: &[&str],
    commands: &[&str],
) -> Result<Vec<f64>> {
    let json = dir.join("out").join(format!("{name}.json"));
    let markdown = dir.join("out").join(format!("{name}.md"));
    run(Command::new("hyperfine")
        .current_dir(dir)
        .args(["--style", "basic", "--runs"])
        .arg(runs.max(1).to_string())
        .args(extra)
        .arg("--export-json")
        .arg(&json)
        .arg("--export-markdown")
        .arg(&markdown)
        .args(commands))?;
    println!("{}", std::fs::read_to_string(&markdown)?);
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json)?)?;
    report["results"]
        .as_array()
        .context("hyperfine's JSON has no results")?
        .iter()
        .map(|r| r["mean"].as_f64().context("hyperfine's JSON has no mean"))
        .collect()
}

/// Per-sub calls, inclusive and exclusive seconds, by name.
type SubTotals = BTreeMap<String, (u64, f64, f64)>;

/// Devel::NYTProf::Data's per-sub totals of `file`.
fn data_totals(dir: &Path, file: &str) -> Result<SubTotals> {
    let out = Command::new("perl")
        .current_dir(dir)
        .args(["-MDevel::NYTProf::Data", "-e", SUB_TOTALS, file])
        .output()?;
    ensure!(
        out.status.success(),
        "Devel::NYTProf::Data cannot load {file}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut totals = SubTotals::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [name, calls, incl, excl] = f[..] else {
            bail!("unexpected line {line:?} of the per-sub totals of {file}");
        };
        totals.insert(
            name.to_owned(),
            (calls.parse()?, incl.parse()?, excl.parse()?),
        );
    }
    Ok(totals)
}

/// `profcodec top -n 0 --json`'s rows of `inputs` (shell words) as per-sub totals.
fn top_totals(dir: &Path, profcodec: &Path, inputs: &str) -> Result<SubTotals> {
    let out = Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "{} top -n 0 --full-names --json {inputs}",
            profcodec.display()
        ))
        .output()?;
    ensure!(
        out.status.success(),
        "profcodec top {inputs}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    let mut totals = SubTotals::new();
    for row in rows.as_array().context("top --json printed no array")? {
        let name = row["name"].as_str().context("a row without a name")?;
        let number = |key: &str| row[key].as_f64().with_context(|| format!("{name}: {key}"));
        let calls = row["calls"].as_u64().unwrap_or(0);
        // Rows are functions of one file each: a sub name that several inputs define in
        // different files (each test's `main::BEGIN@3`) is several rows, one sub for Data.pm.
        let (incl, own) = (number("inclusive")?, number("self")?);
        let total = totals.entry(name.to_owned()).or_default();
        total.0 += calls;
        total.1 += incl;
        total.2 += own;
    }
    Ok(totals)
}

/// The subs whose totals differ between `a` and `b` (calls exactly, seconds to `tolerance`
/// relative, at least a microsecond), at most a few named.
fn differences(a: &SubTotals, b: &SubTotals, tolerance: f64) -> Vec<String> {
    let close = |x: f64, y: f64| (x - y).abs() <= (tolerance * x.abs().max(y.abs())).max(1e-6);
    let mut diffs = Vec::new();
    for name in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        match (a.get(name), b.get(name)) {
            (Some(x), Some(y)) if x.0 == y.0 && close(x.1, y.1) && close(x.2, y.2) => {}
            (x, y) => diffs.push(format!("{name}: {x:?} against {y:?}")),
        }
    }
    diffs
}

/// One row of a `nytprofcsv` report: time, count, time per call, code.
type CsvRow = (f64, u64, f64, String);

/// `nytprofcsv`'s per-line report of `file` into `out`: per report file (named after the source
/// file and its fid), its rows.
fn csv(dir: &Path, file: &str, out: &str) -> Result<BTreeMap<String, Vec<CsvRow>>> {
    let out_dir = dir.join(out);
    if !out_dir.exists() {
        run(Command::new("nytprofcsv")
            .current_dir(dir)
            .args(["--file", file, "--out", out])
            .stdout(std::process::Stdio::null()))?;
    }
    let mut report = BTreeMap::new();
    for entry in std::fs::read_dir(&out_dir)? {
        let path = entry?.path();
        let text = std::fs::read_to_string(&path)?;
        let mut rows = Vec::new();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let mut fields = line.splitn(4, ',');
            let mut number = || fields.next().and_then(|f| f.parse::<f64>().ok());
            let (time, count, per_call) = (number(), number(), number());
            let (Some(time), Some(count), Some(per_call)) = (time, count, per_call) else {
                // A note without fields (a file whose source was not saved).
                rows.push((0.0, 0, 0.0, line.to_owned()));
                continue;
            };
            let code = line.splitn(4, ',').nth(3).unwrap_or("").to_owned();
            rows.push((time, count as u64, per_call, code));
        }
        report.insert(
            path.file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into(),
            rows,
        );
    }
    Ok(report)
}

/// The rows of two `nytprofcsv` reports that differ: count or code, or a time or time per call
/// by more than nytprofcsv's printed microsecond (a time on a half microsecond may print either
/// way after float rounding). Rows past the end of the shorter report that are empty (no
/// statement, no code) are counted apart in the second value: they say only how far the file
/// extends.
fn csv_differences(
    a: &BTreeMap<String, Vec<CsvRow>>,
    b: &BTreeMap<String, Vec<CsvRow>>,
) -> (Vec<String>, usize, usize) {
    let mut diffs = Vec::new();
    let (mut empty_tail, mut lines) = (0, 0);
    for file in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
        let (Some(x), Some(y)) = (a.get(file), b.get(file)) else {
            diffs.push(format!("{file} is in one report only"));
            continue;
        };
        for (i, (r1, r2)) in x.iter().zip(y).enumerate() {
            let close = |p: f64, q: f64| (p - q).abs() <= 1.0001e-6;
            if r1.1 != r2.1 || r1.3 != r2.3 || !close(r1.0, r2.0) || !close(r1.2, r2.2) {
                diffs.push(format!("{file} line {}: {r1:?} against {r2:?}", i + 1));
            }
        }
        lines += x.len().min(y.len());
        let tail = if x.len() > y.len() {
            &x[y.len()..]
        } else {
            &y[x.len()..]
        };
        for row in tail {
            if row.1 == 0 && row.0 == 0.0 && row.3.is_empty() {
                empty_tail += 1;
            } else {
                diffs.push(format!("{file}: a row in one report only: {row:?}"));
            }
        }
    }
    (diffs, empty_tail, lines)
}

/// Checks what the timed commands left in `dir/out` (see the module's documentation).
fn check(dir: &Path, profcodec: &Path, inputs: &str) -> Result<()> {
    let theirs = data_totals(dir, "out/theirs.out")?;
    let ours = data_totals(dir, "out/m.out")?;
    // Every check runs and prints its outcome; the task fails at the end if one failed.
    let mut failed = 0;
    let mut report = |what: &str, diffs: &[String]| -> Result<()> {
        if diffs.is_empty() {
            println!("- checked: {what}");
        } else {
            failed += 1;
            println!(
                "- FAILED: {what}: {} differences, for example:\n  {}",
                diffs.len(),
                diffs[..diffs.len().min(10)].join("\n  ")
            );
        }
        Ok(())
    };
    report(
        &format!(
            "Devel::NYTProf::Data's per-sub calls, inclusive and exclusive times of `profcodec \
             merge`'s file equal those of nytprofmerge's ({} subs)",
            theirs.len()
        ),
        &differences(&ours, &theirs, 1e-9),
    )?;

    let (a, b) = (
        csv(dir, "out/m.out", "out/csv-ours")?,
        csv(dir, "out/theirs.out", "out/csv")?,
    );
    let (diffs, empty_tail, lines) = csv_differences(&a, &b);
    report(
        &format!(
            "nytprofcsv's reports of the two merged files have the same time, calls, time per \
             call and code on every line ({} files, {lines} lines; {empty_tail} empty rows past \
             the end of a file in one report only)",
            a.len()
        ),
        &diffs,
    )?;

    // top's rows are functions as profcodec's model names them, which for NYTProf are the sub
    // names; subs never called are no row.
    for (what, inputs) in [
        ("of the inputs", inputs),
        ("of `profcodec merge`'s file", "out/m.out"),
    ] {
        let top = top_totals(dir, profcodec, inputs)?;
        report(
            &format!(
                "`profcodec top` {what}: per-sub calls, inclusive and self times equal \
                 Devel::NYTProf::Data's of nytprofmerge's file ({} rows)",
                top.len()
            ),
            &differences(&top, &theirs, 1e-6),
        )?;
    }
    ensure!(failed == 0, "{failed} of the checks failed (see above)");
    Ok(())
}
