//! Native programs built in a test with Debian's `gcc`/`g++`, and binutils' view of them
//! (`objdump -d`, `nm`, `addr2line -f -i -C`): the reference the symbolization tests compare with.
//!
//! Without the tools, [`tools_present`] says so loudly and the test returns early; in CI (`CI`
//! set) a missing tool fails the test instead.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small C program: `main` calls `middle` calls `leaf`, whose loop inlines `square`
/// (`always_inline`: inlined at `-O0` too).
pub const C_PROGRAM: &str = r#"
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

/// A small C++ program whose names are long template instantiations (`sim::Grid<double, 64>::
/// sweep(std::map<std::string, double> const&)`); `main` calls `sweep` on line 20.
pub const CPP_PROGRAM: &str = r#"
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

/// Whether every tool in `tools` runs; `false` (after a loud message) when one does not,
/// outside CI. In CI a missing tool fails the test.
pub fn tools_present(tools: &[&str]) -> bool {
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
        "!!!!! SKIPPED: {missing:?} not installed; these native-code tests did not run !!!!!"
    );
    false
}

/// Builds `source` (written to `dir/name`) with `compiler` and `flags`; the binary is
/// `dir/<name without its extension>`.
pub fn build(dir: &Path, name: &str, source: &str, compiler: &str, flags: &[&str]) -> PathBuf {
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

/// One function as `objdump -d` shows it.
#[derive(Debug, Clone, Default)]
pub struct Function {
    /// The address of every instruction, in order.
    pub instructions: Vec<u64>,
    /// The return addresses of its calls (the instruction after each `call`).
    pub returns: Vec<u64>,
    /// The text of every instruction (mnemonic and operands), beside `instructions`.
    pub text: Vec<String>,
}

/// `objdump -d`'s instructions of the function whose symbol is `name` (as `nm` prints it).
pub fn disassemble(bin: &Path, name: &str) -> Function {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(bin)
        .output()
        .expect("run objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let header = format!("<{name}>:");
    let mut inside = false;
    let mut f = Function::default();
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
        let insn = insn.trim();
        after_call = insn.starts_with("call");
        f.instructions.push(addr);
        f.text.push(insn.to_owned());
    }
    assert!(!f.instructions.is_empty(), "{name} in objdump's output");
    f
}

/// The first symbol `nm` lists whose name contains `contains`.
pub fn nm_name(bin: &Path, contains: &str) -> String {
    let out = Command::new("nm").arg(bin).output().expect("run nm");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|n| n.contains(contains))
        .expect("symbol")
        .to_owned()
}

/// `nm -S --defined-only`'s defined text symbols: (address, size, name), sized ones only.
pub fn nm_functions(bin: &Path) -> Vec<(u64, u64, String)> {
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

/// One frame `addr2line -f -i -C` prints: `None` where it prints `??` (or line 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The function, demangled.
    pub function: Option<String>,
    /// The source file.
    pub file: Option<String>,
    /// The line.
    pub line: Option<u32>,
}

/// binutils' frames of `address` in `bin`, outermost first (`addr2line -f -i -C` prints the
/// innermost first), discriminators left out.
pub fn addr2line(bin: &Path, address: u64) -> Vec<Located> {
    let out = Command::new("addr2line")
        .args(["-f", "-i", "-C", "-e"])
        .arg(bin)
        .arg(format!("0x{address:x}"))
        .output()
        .expect("run addr2line");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let mut frames: Vec<Located> = lines
        .chunks(2)
        .map(|pair| {
            let function = pair[0];
            let location = pair.get(1).copied().unwrap_or("??:0");
            let location = location.split(" (discriminator").next().unwrap_or(location);
            let (file, line) = location.rsplit_once(':').unwrap_or((location, "0"));
            Located {
                function: (function != "??").then(|| function.to_owned()),
                file: (file != "??").then(|| file.to_owned()),
                line: line.parse().ok().filter(|&l| l > 0),
            }
        })
        .collect();
    frames.reverse();
    frames
}
