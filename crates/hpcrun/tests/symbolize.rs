//! hpcrun measurements whose load maps point into programs built here (`gcc`/`g++ -g -O0`),
//! written with this crate's writer: every resolved address names the function, file and line
//! binutils' `addr2line -f -i -C` gives for it (a calling frame's return address minus one).
//!
//! Without gcc, g++ or binutils the tests say so loudly and pass, except in CI (`CI` set).

use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_hpcrun::{
    LoadModuleId, MeasurementBuilder, MeasurementFolder, MetricValue, ModuleReport,
    ProfileConverter, SearchPath, ValueFormat, Version, read_measurement, write_measurement,
};
use profcodec_profile::{FrameKind, NodeId, Profile};

const C_PROGRAM: &str = r#"
static inline __attribute__((always_inline)) int square(int x) {
  return x * x;
}
int leaf(int n) {
  volatile int s = 0;
  for (int i = 0; i < n; i++)
    s += square(i);
  return s;
}
int middle(int n) { return leaf(n) + 1; }
int main(int argc, char **argv) {
  (void)argv;
  return middle(argc * 1000) == 3;
}
"#;

const CPP_PROGRAM: &str = r#"
#include <vector>
#include <map>
#include <string>
namespace sim {
template <typename T, int N>
struct Grid {
  std::vector<T> cells;
  Grid() : cells(N, T{}) {}
  T sweep(const std::map<std::string, T> &weights) {
    T sum{};
    for (int i = 0; i < N; i++) sum += cells[i] * weights.size();
    return sum;
  }
};
}  // namespace sim
int main() {
  sim::Grid<double, 64> g;
  std::map<std::string, double> w{{"a", 1.0}};
  return g.sweep(w) > 1.0;
}
"#;

fn tools_present(tools: &[&str]) -> bool {
    let missing: Vec<&str> = tools
        .iter()
        .copied()
        .filter(|t| Command::new(t).arg("--version").output().is_err())
        .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "{missing:?} missing in CI: install gcc, g++ and binutils"
    );
    eprintln!(
        "!!!!! SKIPPED: {missing:?} not installed; hpcrun symbolization tests did not run !!!!!"
    );
    false
}

fn build(dir: &Path, name: &str, source: &str, compiler: &str) -> PathBuf {
    let src = dir.join(name);
    std::fs::write(&src, source).expect("write source");
    let bin = dir.join(name.split('.').next().unwrap_or("prog"));
    let ok = Command::new(compiler)
        .args(["-g", "-O0", "-o"])
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("run compiler")
        .success();
    assert!(ok, "{compiler} failed");
    bin
}

/// `objdump -d`'s instructions of function `name` (nm's mangled name), and the return
/// addresses of its calls.
struct Function {
    instructions: Vec<u64>,
    returns: Vec<u64>,
}

fn disassemble(bin: &Path, name: &str) -> Function {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(bin)
        .output()
        .expect("run objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let header = format!("<{name}>:");
    let mut inside = false;
    let mut f = Function {
        instructions: Vec::new(),
        returns: Vec::new(),
    };
    let mut after_call = false;
    for line in text.lines() {
        if line.ends_with(&header) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        let Some((addr, insn)) = line.trim().split_once(':') else {
            break;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            break;
        };
        if after_call {
            f.returns.push(addr);
        }
        after_call = insn.trim_start().starts_with("call");
        f.instructions.push(addr);
    }
    assert!(!f.instructions.is_empty(), "{name} in objdump's output");
    f
}

fn nm_name(bin: &Path, contains: &str) -> String {
    let out = Command::new("nm").arg(bin).output().expect("run nm");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|n| n.contains(contains))
        .expect("symbol")
        .to_owned()
}

/// binutils' (function, file, line) frames of `address`, outermost first.
fn addr2line(bin: &Path, address: u64) -> Vec<(String, String, u32)> {
    let out = Command::new("addr2line")
        .args(["-f", "-i", "-C", "-e"])
        .arg(bin)
        .arg(format!("0x{address:x}"))
        .output()
        .expect("run addr2line");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let mut frames: Vec<(String, String, u32)> = lines
        .chunks(2)
        .map(|p| {
            let loc = p.get(1).copied().unwrap_or("??:0");
            let loc = loc.split(" (discriminator").next().unwrap_or(loc);
            let (file, line) = loc.rsplit_once(':').unwrap_or((loc, "0"));
            (p[0].to_owned(), file.to_owned(), line.parse().unwrap_or(0))
        })
        .collect();
    frames.reverse();
    frames
}

/// The (function, file, line) frames the model gives CCT node `node` whose address is `ip`:
/// the node's frame and its ancestors' of the same address, outermost first.
fn model_frames(profile: &Profile, node: NodeId, ip: u64) -> Vec<(String, String, u32)> {
    let mut frames = Vec::new();
    let mut at = Some(node);
    while let Some(n) = at {
        let frame = profile.frame(profile.node(n).frame);
        if frame.address != Some(ip) {
            break;
        }
        let s = |id: Option<profcodec_profile::StringId>| id.map(|i| profile.string(i).to_owned());
        frames.push((
            s(frame.function).unwrap_or_default(),
            s(frame.file).unwrap_or_default(),
            frame.line.unwrap_or(0),
        ));
        let done = frame.kind == FrameKind::Function;
        at = profile.node(n).parent;
        if done {
            break;
        }
    }
    frames.reverse();
    frames
}

/// A measurement of `bin` (recorded as `recorded`): main calls middle calls leaf, sampled at
/// every instruction of leaf; also the nodes' (id, ip, is a calling frame).
fn c_measurement(bin: &Path, recorded: &str) -> (Vec<u8>, Vec<(u64, bool)>) {
    let main = disassemble(bin, "main");
    let middle = disassemble(bin, "middle");
    let leaf = disassemble(bin, "leaf");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    b.header("program-name", "prog")
        .header("mpi-rank", "0")
        .header("thread-id", "0");
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    b.load_module("/usr/lib/x86_64-linux-gnu/libc.so.6-not-used");
    let exe: LoadModuleId = b.load_module(recorded);
    let m = b.node(None, exe, main.returns[0]);
    let mid = b.node(Some(m), exe, middle.returns[0]);
    let mut probes = vec![(main.returns[0], true), (middle.returns[0], true)];
    for &ip in &leaf.instructions {
        let n = b.node(Some(mid), exe, ip);
        b.add(n, time, MetricValue::Real(0.01));
        probes.push((ip, false));
    }
    (write_measurement(&b.build()).expect("write"), probes)
}

fn check_against_addr2line(
    profile: &Profile,
    nodes: &[(i32, NodeId)],
    m: &profcodec_hpcrun::Measurement,
    bin: &Path,
) -> usize {
    let mut checked = 0;
    for node in &m.epochs[0].cct {
        let Some(&(_, model)) = nodes.iter().find(|(id, _)| *id == node.id) else {
            continue;
        };
        let calls = m.epochs[0].cct.iter().any(|c| c.parent == node.id);
        let probe = if calls { node.ip - 1 } else { node.ip };
        let ours = model_frames(profile, model, node.ip);
        assert_eq!(ours, addr2line(bin, probe), "ip 0x{:x}", node.ip);
        checked += 1;
    }
    checked
}

#[test]
fn c_addresses_resolve_as_addr2line_does() {
    if !tools_present(&["gcc", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let (bytes, probes) = c_measurement(&bin, &bin.to_string_lossy());
    let m = read_measurement(&bytes).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::default());
    let (_, nodes) = converter.add_with_nodes(&m, None).expect("convert");
    let reports = converter.module_reports();
    let profile = converter.finish();
    let checked = check_against_addr2line(&profile, &nodes, &m, &bin);
    assert_eq!(checked, probes.len());
    // leaf's loop inlines square: some samples have two frames.
    assert!(profile.frames().any(|(_, f)| f.kind == FrameKind::Inlined
        && f.function.is_some_and(|s| profile.string(s) == "square")));
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].resolved, 1);
    assert_eq!(reports[0].binary.as_deref(), Some(bin.as_path()));
}

#[test]
fn cpp_names_resolve_demangled() {
    if !tools_present(&["g++", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "grid.cpp", CPP_PROGRAM, "g++");
    let sweep = disassemble(&bin, &nm_name(&bin, "5sweep"));
    let main = disassemble(&bin, "main");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    let exe = b.load_module(bin.to_string_lossy().into_owned());
    let call = main
        .returns
        .iter()
        .copied()
        .find(|&r| addr2line(&bin, r - 1)[0].0 == "main" && addr2line(&bin, r - 1)[0].2 == 20)
        .expect("the call of sweep");
    let m = b.node(None, exe, call);
    for &ip in &sweep.instructions {
        let n = b.node(Some(m), exe, ip);
        b.add(n, time, MetricValue::Real(0.5));
    }
    let m = read_measurement(&write_measurement(&b.build()).expect("write")).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::default());
    let (_, nodes) = converter.add_with_nodes(&m, None).expect("convert");
    let profile = converter.finish();
    let checked = check_against_addr2line(&profile, &nodes, &m, &bin);
    assert_eq!(checked, sweep.instructions.len() + 1);
    assert!(profile.frames().any(|(_, f)| f.function.is_some_and(|s| {
        profile
            .string(s)
            .starts_with("sim::Grid<double, 64>::sweep(std::map<std::__cxx11::basic_string<char")
    })));
}

#[test]
fn binaries_are_found_through_the_search_path_and_missing_ones_reported() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    // Recorded where it ran, elsewhere: found by file name in the search path.
    let (bytes, _) = c_measurement(&bin, "/gone/build/prog");
    let m = read_measurement(&bytes).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    converter.add(&m, None).expect("convert");
    let reports = converter.module_reports();
    let profile = converter.finish();
    assert_eq!(reports[0].resolved, 1, "{reports:?}");
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
    // Without the search path: not found, said, and every address keeps its address form.
    let mut converter = ProfileConverter::with_symbols(SearchPath::default());
    converter.add(&m, None).expect("convert");
    let reports: Vec<ModuleReport> = converter.module_reports();
    let profile = converter.finish();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].is_unresolved());
    let why = reports[0].unresolved.as_ref().expect("why").to_string();
    assert!(
        why.starts_with("not found (tried /gone/build/prog"),
        "{why}"
    );
    assert!(
        profile
            .frames()
            .all(|(_, f)| f.function.is_none() && f.address.is_some())
    );
}

#[test]
fn a_folder_of_ranks_reads_each_binary_once() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let (bytes, _) = c_measurement(&bin, &bin.to_string_lossy());
    let folder = dir.path().join("hpctoolkit-prog-measurements");
    std::fs::create_dir(&folder).expect("mkdir");
    for rank in 0..50 {
        let name = format!("prog-{rank:06}-000-a8c00270-{}-0.hpcrun", 1000 + rank);
        std::fs::write(folder.join(name), &bytes).expect("write");
    }
    let folder = MeasurementFolder::open(&folder).expect("open");
    let mut converter = ProfileConverter::with_symbols(SearchPath::default());
    converter.look_in_folder(folder.path());
    folder.add_to(&mut converter).expect("convert");
    assert_eq!(converter.binaries_read(), 1);
    let reports = converter.module_reports();
    assert_eq!((reports[0].files, reports[0].resolved), (50, 50));
    let (profile, _) = folder
        .to_profile_with_symbols(SearchPath::default())
        .expect("convert");
    // Every file says rank 0, thread 0: one context, fifty files' values.
    assert_eq!(folder.threads().len(), 50);
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
}
