//! Times reading a measurement folder of many rank files of one program, with and without
//! symbolization: `cargo run --release -p profcodec-hpcrun --features symbolize --example
//! symbolize_ranks -- [RANKS]` (needs gcc and objdump). Each binary is read once however many
//! files name it.

use std::process::Command;
use std::time::Instant;

use profcodec_hpcrun::{
    MeasurementBuilder, MeasurementFolder, MetricValue, SearchPath, ValueFormat, Version,
    write_measurement,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ranks: usize = std::env::args().nth(1).map_or(Ok(1000), |a| a.parse())?;
    let dir = tempfile::tempdir()?;
    let src = dir.path().join("prog.c");
    std::fs::write(
        &src,
        "int leaf(int n) { volatile int s = 0; for (int i = 0; i < n; i++) s += i * i; return s; }\n\
         int main(int argc, char **argv) { (void)argv; return leaf(argc); }\n",
    )?;
    let bin = dir.path().join("prog");
    assert!(
        Command::new("gcc")
            .args(["-g", "-O0", "-o"])
            .arg(&bin)
            .arg(&src)
            .status()?
            .success()
    );
    let dump = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(&bin)
        .output()?;
    let text = String::from_utf8_lossy(&dump.stdout);
    // Every instruction address of leaf, and the return address of main's call.
    let mut leaf = Vec::new();
    let mut call_return = None;
    let mut section = "";
    let mut after_call = false;
    for line in text.lines() {
        if let Some(name) = line.strip_suffix(">:") {
            section = if name.ends_with("<leaf") {
                "leaf"
            } else if name.ends_with("<main") {
                "main"
            } else {
                ""
            };
            continue;
        }
        let Some((addr, insn)) = line.trim().split_once(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr.trim(), 16) else {
            continue;
        };
        if section == "main" && after_call && call_return.is_none() {
            call_return = Some(addr);
        }
        after_call = insn.trim_start().starts_with("call");
        if section == "leaf" {
            leaf.push(addr);
        }
    }
    let folder = dir.path().join("hpctoolkit-prog-measurements");
    std::fs::create_dir(&folder)?;
    for rank in 0..ranks {
        let mut b = MeasurementBuilder::new(Version::V0400B);
        b.header("program-name", "prog")
            .header("mpi-rank", rank.to_string())
            .header("thread-id", "0");
        let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
        let exe = b.load_module(bin.to_string_lossy().into_owned());
        let main = b.node(None, exe, call_return.expect("main calls leaf"));
        for &ip in &leaf {
            let n = b.node(Some(main), exe, ip);
            b.add(n, time, MetricValue::Real(0.001));
        }
        let name = format!("prog-{rank:06}-000-a8c00270-{}-0.hpcrun", 1000 + rank);
        std::fs::write(folder.join(name), write_measurement(&b.build())?)?;
    }
    let folder = MeasurementFolder::open(&folder)?;
    let start = Instant::now();
    let plain = folder.to_profile()?;
    let plain_time = start.elapsed();
    let start = Instant::now();
    let (named, reports) =
        folder.to_profile_with_symbols(SearchPath::new([dir.path().to_owned()]))?;
    let named_time = start.elapsed();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].resolved, ranks);
    println!(
        "{ranks} rank files, {} nodes each: to_profile {:.1} ms, to_profile_with_symbols {:.1} ms \
         ({} frames named, 1 binary read)",
        leaf.len() + 1,
        plain_time.as_secs_f64() * 1e3,
        named_time.as_secs_f64() * 1e3,
        named.frames().filter(|(_, f)| f.function.is_some()).count(),
    );
    let _ = plain;
    Ok(())
}
