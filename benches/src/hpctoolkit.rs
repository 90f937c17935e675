//! Large-input generator for HPCToolkit databases, shared by `benches/benches/hpctoolkit*.rs` and
//! `cargo xtask gen-hpctoolkit --profiles N --contexts M --metrics K --trace-elems T OUT_DIR`.
//!
//! The databases come from `profcodec_hpctoolkit::write::synthetic` (a context tree of functions,
//! loops, lines and instructions; `CPUTIME (sec)` with point, function and execution scopes and
//! summaries; CPU thread and GPU stream profiles; traces), streamed by the crate's own writers so
//! they can be larger than memory.

use std::io;
use std::path::Path;

pub use profcodec_hpctoolkit::write::synthetic::{Synthetic, SyntheticConfig, SyntheticSizes};

/// Memory budget for the cct.db transposition while generating.
pub const GENERATOR_BUDGET: usize = 256 << 20;

/// Writes a synthetic database of the given shape into `dir`.
pub fn generate(dir: &Path, config: SyntheticConfig) -> io::Result<SyntheticSizes> {
    Synthetic::new(config).write_dir(dir, GENERATOR_BUDGET)
}

/// The configuration of `cargo xtask gen-hpctoolkit` from its arguments
/// (`--profiles N --contexts M --metrics K --trace-elems T [--trace-run R] [--samples S]
/// [--seed X]`).
pub fn parse_args(args: &[String]) -> Result<(SyntheticConfig, &Path), String> {
    let mut config = SyntheticConfig::default();
    let mut out = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || -> Result<u64, String> {
            it.next()
                .ok_or_else(|| format!("{arg} needs a value"))?
                .parse::<u64>()
                .map_err(|e| format!("{arg}: {e}"))
        };
        let narrow = |v: u64| u32::try_from(v).map_err(|_| format!("{arg}: too large"));
        match arg.as_str() {
            "--profiles" => config.profiles = narrow(value()?)?,
            "--contexts" => config.contexts = narrow(value()?)?,
            "--metrics" => {
                config.metrics = u16::try_from(value()?).map_err(|_| format!("{arg}: too large"))?
            }
            "--trace-elems" => config.trace_elems = value()?,
            "--trace-run" => config.trace_run = narrow(value()?)?,
            "--samples" => config.samples = narrow(value()?)?,
            "--seed" => config.seed = value()?,
            _ if !arg.starts_with("--") && out.is_none() => out = Some(Path::new(arg)),
            _ => return Err(format!("unexpected argument {arg}")),
        }
    }
    Ok((config, out.ok_or("missing OUT_DIR")?))
}
