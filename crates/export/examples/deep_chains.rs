//! The deep call chains, built in memory, through every exporter: output bytes and
//! time of each (`cargo run --release -p profcodec-export --all-features --example
//! deep_chains`). A chain of one recursive function 16,000 and 64,000 deep (NYTProf's
//! `main::recurse`, a value on every level), and 400 levels of one function with a 10 kB name
//! (EasyProfiler's). Each under the default budget of the input files (496 kB, 2 MB,
//! 19 kB), then with no budget (`unlimited` as the argument: only the latter). `speedscope
//! FILE` writes the 16,000-deep chain's speedscope file (evented) to FILE, for the viewers.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::io::{self, Write};
use std::time::Instant;

use profcodec_export::{ExportOptions, Target, default_output_budget};
use profcodec_profile::{Context, Frame, IdKind, Measured, Profile, ProfileBuilder, Unit};

/// A writer that counts the bytes and keeps none.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One function called from itself `depth` deep, 1 µs of self time on every level.
fn chain(depth: usize, name: &str) -> Profile {
    let mut b = ProfileBuilder::new();
    let t = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let name = b.intern_string(name).unwrap();
    let f = b.intern_frame(Frame::function(name)).unwrap();
    let mut node = None;
    for _ in 0..depth {
        let n = b.intern_stack(node, [f]).unwrap();
        b.add_self(t, n, time, 1000.0).unwrap();
        node = Some(n);
    }
    b.build()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [what, file] = args.as_slice()
        && what == "speedscope"
    {
        let out = io::BufWriter::new(std::fs::File::create(file).unwrap());
        let options = ExportOptions::new().max_output(default_output_budget(496_000));
        Target::Speedscope
            .write(&chain(16_000, "main::recurse"), &options, &mut { out })
            .unwrap();
        return;
    }
    let unlimited = args.first().is_some_and(|a| a == "unlimited");
    let long = "x".repeat(10_000);
    let cases: [(&str, Profile, u64); 3] = [
        ("chain 16,000 deep", chain(16_000, "main::recurse"), 496_000),
        (
            "chain 64,000 deep",
            chain(64_000, "main::recurse"),
            2_000_000,
        ),
        ("10 kB name 400 deep", chain(400, &long), 19_000),
    ];
    for (what, profile, input) in &cases {
        for &target in Target::ALL {
            let mut options = ExportOptions::new();
            if !unlimited {
                options = options.max_output(default_output_budget(*input));
            }
            let start = Instant::now();
            let mut out = Count(0);
            let result = target.write(profile, &options, &mut out);
            let took = start.elapsed();
            let outcome = match result {
                Ok(()) => "written".to_owned(),
                Err(e) => format!("refused: {e}"),
            };
            println!(
                "{what:>20} {target:>10}: {:>14} bytes in {:>8.3} s, {outcome}",
                out.0,
                took.as_secs_f64()
            );
        }
    }
}
