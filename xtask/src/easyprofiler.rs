//! xtask support for the easyprofiler format: test prerequisites and generators.
//!
//! - `cargo xtask gen-easyprofiler large OUT [MB] [MRECORDS]`: a runtime-writer 2.1.0 capture of
//!   at least MB megabytes (default 70) and MRECORDS million records (default 3), as the bench
//!   uses.
//! - `cargo xtask gen-easyprofiler testdata [DIR]`: the small captures of
//!   `testdata/easyprofiler/` (DIR defaults to that folder).
//! - `cargo xtask gen-easyprofiler hostile KIND OUT [N]`: a hostile shape of issue 20
//!   (`empty-slots`, `long-name`, `flat`, `deep`; see `profcodec_benches::easyprofiler::hostile`),
//!   optionally followed by `--trailing BYTES` zero bytes; `--name BYTES` sets the long name's
//!   length.

use anyhow::{Context, Result, bail};
use profcodec_benches::easyprofiler;

use crate::{FormatTasks, TestEnv, Workspace};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "easyprofiler",
    prepare,
    run,
};

/// Installs what the easyprofiler tests need: nothing (the C++ library is on no registry).
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    if cmd != "gen" {
        bail!("{cmd} is not implemented for easyprofiler");
    }
    match args.first().map(String::as_str) {
        Some("large") => {
            let out = args
                .get(1)
                .context("usage: gen-easyprofiler large OUT [MB] [MRECORDS]")?;
            let mb: u64 = args.get(2).map_or(Ok(70), |s| s.parse())?;
            let mrec: u64 = args.get(3).map_or(Ok(3), |s| s.parse())?;
            let c = easyprofiler::large(mb << 20, mrec * 1_000_000, 8);
            let bytes = c.to_bytes()?;
            std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;
            let records: usize = c.threads.iter().map(|t| t.records.len()).sum();
            eprintln!("wrote {out}: {} bytes, {records} records", bytes.len());
            Ok(())
        }
        Some("testdata") => {
            let dir = args
                .get(1)
                .map_or_else(|| ws.root.join("testdata/easyprofiler"), Into::into);
            std::fs::create_dir_all(&dir)?;
            for (name, c) in easyprofiler::testdata() {
                let path = dir.join(name);
                std::fs::write(&path, c.to_bytes()?)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
            Ok(())
        }
        Some("hostile") => {
            let usage = "usage: gen-easyprofiler hostile empty-slots|long-name|flat|deep OUT [N] \
                         [--trailing BYTES] [--name BYTES]";
            let (Some(kind), Some(out)) = (args.get(1), args.get(2)) else {
                bail!(usage);
            };
            let mut n = None;
            let mut trailing = 0usize;
            let mut name_len = None;
            let mut rest = args[3..].iter();
            while let Some(a) = rest.next() {
                match a.as_str() {
                    "--trailing" => trailing = rest.next().context(usage)?.parse()?,
                    "--name" => name_len = Some(rest.next().context(usage)?.parse()?),
                    a => n = Some(a.parse()?),
                }
            }
            let c = easyprofiler::hostile(kind, n, name_len).context(usage)?;
            let mut bytes = c.to_bytes()?;
            bytes.resize(bytes.len() + trailing, 0);
            std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;
            eprintln!("wrote {out}: {} bytes", bytes.len());
            Ok(())
        }
        _ => bail!(
            "usage: gen-easyprofiler large OUT [MB] [MRECORDS] | testdata [DIR] | hostile KIND OUT [N]"
        ),
    }
}
