//! Addresses of a small C and a small C++ program, built here with `gcc`/`g++ -g -O0` (and one
//! inlining `-O2` build), resolved as binutils' `addr2line -f -i -C` and `nm` resolve them.
//!
//! Without gcc, g++ or binutils the tests say so loudly and pass, except in CI (`CI` set),
//! where they fail.

use std::path::{Path, PathBuf};
use std::process::Command;

use profcodec_symbolize::{
    Binary, Probe, Rejection, Resolution, SearchPath, SourceFrame, Symbolizer,
};

const C_PROGRAM: &str = r#"
#include <stdlib.h>
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
  return middle(argc * 1000) == 3 ? EXIT_SUCCESS : EXIT_FAILURE;
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

/// Whether the tools exist; `false` (after a loud message) when they do not, outside CI.
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
        "!!!!! SKIPPED: {missing:?} not installed; these symbolization tests did not run !!!!!"
    );
    false
}

/// Builds `source` (file name `name`) in `dir` with `compiler` and `flags`; the binary's path.
fn build(dir: &Path, name: &str, source: &str, compiler: &str, flags: &[&str]) -> PathBuf {
    let src = dir.join(name);
    std::fs::write(&src, source).expect("write source");
    let bin = dir.join(name.split('.').next().unwrap_or("prog"));
    let status = Command::new(compiler)
        .args(flags)
        .arg("-o")
        .arg(&bin)
        .arg(&src)
        .status()
        .expect("run compiler");
    assert!(status.success(), "{compiler} failed");
    bin
}

/// `nm`'s defined text symbols of `bin`: (address, size, name), sized ones only.
fn nm_functions(bin: &Path) -> Vec<(u64, u64, String)> {
    let out = Command::new("nm")
        .args(["-S", "--defined-only"])
        .arg(bin)
        .output()
        .expect("run nm");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [a, s, t, name] if ["t", "T", "w", "W"].contains(t) => Some((
                    u64::from_str_radix(a, 16).ok()?,
                    u64::from_str_radix(s, 16).ok()?,
                    (*name).to_owned(),
                )),
                _ => None,
            }
        })
        .collect()
}

/// binutils' frames of `address`, outermost first, as [`SourceFrame`]s.
fn binutils_frames(bin: &Path, address: u64) -> Vec<SourceFrame> {
    let out = Command::new("addr2line")
        .args(["-f", "-i", "-C", "-e"])
        .arg(bin)
        .arg(format!("0x{address:x}"))
        .output()
        .expect("run addr2line");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let mut frames: Vec<SourceFrame> = lines
        .chunks(2)
        .map(|pair| {
            let function = pair[0];
            let location = pair.get(1).copied().unwrap_or("??:0");
            let location = location.split(" (discriminator").next().unwrap_or(location);
            let (file, line) = location.rsplit_once(':').unwrap_or((location, "0"));
            SourceFrame {
                function: (function != "??").then(|| function.to_owned()),
                file: (file != "??").then(|| file.to_owned()),
                line: line.parse().ok().filter(|&l| l > 0),
            }
        })
        .collect();
    frames.reverse();
    frames
}

/// Every few bytes of every function nm lists: our frames equal binutils'.
fn compare_all(bin: &Path, only: impl Fn(&str) -> bool) -> usize {
    let mut binary = Binary::open(bin).expect("open binary");
    assert!(binary.has_debug_info());
    let mut compared = 0;
    for (start, size, name) in nm_functions(bin) {
        if !only(&name) {
            continue;
        }
        for address in (start..start + size).step_by(3) {
            let ours = binary.lookup(Probe::leaf(address));
            let theirs = binutils_frames(bin, address);
            assert_eq!(&*ours, &theirs[..], "{name} at 0x{address:x}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn c_functions_and_lines_match_addr2line() {
    if !tools_present(&["gcc", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let n = compare_all(&bin, |n| ["leaf", "middle", "main", "square"].contains(&n));
    assert!(n > 30, "{n} addresses compared");
}

#[test]
fn inlined_calls_match_addr2line() {
    if !tools_present(&["gcc", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O2"]);
    let n = compare_all(&bin, |n| ["leaf", "middle", "main"].contains(&n));
    assert!(n > 5, "{n} addresses compared");
    // Somewhere in leaf, square is inlined: two frames.
    let mut binary = Binary::open(&bin).expect("open");
    let (start, size, _) = nm_functions(&bin)
        .into_iter()
        .find(|f| f.2 == "leaf")
        .expect("leaf");
    let inlined = (start..start + size).any(|a| {
        let frames = binary.lookup(Probe::leaf(a));
        frames.len() == 2 && frames[1].function.as_deref() == Some("square")
    });
    assert!(inlined, "square inlined into leaf");
}

#[test]
fn cpp_names_are_demangled_as_addr2line_does() {
    if !tools_present(&["g++", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "grid.cpp", CPP_PROGRAM, "g++", &["-g", "-O0"]);
    let n = compare_all(&bin, |n| n.contains("sim") || n == "main");
    assert!(n > 30, "{n} addresses compared");
    let mut binary = Binary::open(&bin).expect("open");
    let (start, ..) = nm_functions(&bin)
        .into_iter()
        .find(|f| f.2.contains("sweep"))
        .expect("sweep");
    let frames = binary.lookup(Probe::leaf(start));
    assert_eq!(
        frames[0].function.as_deref(),
        Some(
            "sim::Grid<double, 64>::sweep(std::map<std::__cxx11::basic_string<char, \
             std::char_traits<char>, std::allocator<char> >, double, \
             std::less<std::__cxx11::basic_string<char, std::char_traits<char>, \
             std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, \
             std::char_traits<char>, std::allocator<char> > const, double> > > const&)"
        )
    );
}

#[test]
fn another_binary_of_the_same_name_is_rejected() {
    if !tools_present(&["gcc", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ran = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    // The addresses of the program that ran: return addresses in main and middle, a leaf in leaf.
    let functions = nm_functions(&ran);
    let f = |name: &str| {
        functions
            .iter()
            .find(|f| f.2 == name)
            .expect("function")
            .clone()
    };
    let mut binary = Binary::open(&ran).expect("open");
    let call_after = |b: &mut Binary, (start, size, _): (u64, u64, String)| {
        (start + 1..=start + size)
            .find(|&a| b.check(&[Probe::ret(a)], None).is_ok())
            .expect("a call")
    };
    let probes = vec![
        Probe::ret(call_after(&mut binary, f("main"))),
        Probe::ret(call_after(&mut binary, f("middle"))),
        Probe::leaf(f("leaf").0 + 8),
    ];
    // Another program under the same name, somewhere else.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).expect("mkdir");
    let other_src = C_PROGRAM.replace(
        "s += square(i);",
        "s += square(i) * 7 + n / (i + 1) - 3 * i;",
    );
    let other = build(
        &other_dir,
        "prog.c",
        &format!("int pad[4096];\nvoid a(void) {{}}\nvoid b(void) {{ a(); a(); }}\n{other_src}"),
        "gcc",
        &["-g", "-O0"],
    );
    let mut symbolizer = Symbolizer::new(SearchPath::new([other_dir.clone()]));
    let recorded = ran.to_string_lossy().into_owned();
    match symbolizer.resolve(&recorded, &probes, None) {
        Resolution::Resolved { path, .. } => {
            assert_eq!(path, ran, "the right one, after the wrong one")
        }
        other => panic!("{other}"),
    }
    // With the right one gone, nothing is resolved, and the report says why.
    std::fs::remove_file(&ran).expect("rm");
    let mut symbolizer = Symbolizer::new(SearchPath::new([other_dir]));
    match symbolizer.resolve(&recorded, &probes, None) {
        Resolution::Rejected { candidates } => {
            assert_eq!(candidates.len(), 1);
            assert!(
                matches!(
                    candidates[0].1,
                    Rejection::NotCallSites { .. } | Rejection::OutsideCode { .. }
                ),
                "{:?}",
                candidates[0]
            );
        }
        other => panic!("{other}"),
    }
    let _ = other;
}

#[test]
fn a_missing_binary_is_not_found() {
    let mut symbolizer = Symbolizer::new(SearchPath::default());
    let r = symbolizer.resolve("/nonexistent/prog", &[Probe::leaf(0x1000)], None);
    assert!(matches!(r, Resolution::NotFound { .. }), "{r}");
}
