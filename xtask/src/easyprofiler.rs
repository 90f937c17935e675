//! xtask support for the easyprofiler format: test prerequisites and generators.
//!
//! - `cargo xtask gen-easyprofiler large OUT [MB] [MRECORDS]`: a runtime-writer 2.1.0 capture of
//!   at least MB megabytes (default 70) and MRECORDS million records (default 3), as the bench
//!   uses.
//! - `cargo xtask gen-easyprofiler frames OUT THREADS FRAMES`: THREADS threads of FRAMES frames of
//!   nested blocks ([`easyprofiler::frames`]' shape), written as it goes in bounded memory
//!   ([`write_frames`]), for inputs of several GB (`cargo xtask bench-scale`).
//! - `cargo xtask gen-easyprofiler testdata [DIR]`: the small captures of
//!   `testdata/easyprofiler/` (DIR defaults to that folder).
//! - `cargo xtask gen-easyprofiler hostile KIND OUT [N]`: a hostile shape (an input that costs far more than its size)
//!   (`empty-slots`, `long-name`, `flat`, `deep`; see `profcodec_benches::easyprofiler::hostile`),
//!   optionally followed by `--trailing BYTES` zero bytes; `--name BYTES` sets the long name's
//!   length.
//! - `cargo xtask bench-peers easyprofiler --peer PATH [--runs N]`: `profcodec validate` against
//!   the library's own reader (`fillTreesFromFile`) on 4 threads x 15000 frames; PATH is a program
//!   built locally against yse/easy_profiler that calls `fillTreesFromFile` on its argument (the
//!   library is on no registry; BENCHMARKS.md tells how the figures were made).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use profcodec_benches::easyprofiler;

use crate::{FormatTasks, TestEnv, Workspace, peers};

pub(crate) const TASKS: FormatTasks = FormatTasks {
    name: "easyprofiler",
    prepare,
    run,
};

/// Installs what the easyprofiler tests need: nothing (the C++ library is on no registry).
fn prepare(_ws: &Workspace) -> Result<TestEnv> {
    Ok(Vec::new())
}

/// `cargo xtask bench-peers easyprofiler --peer PATH [--runs N]`: writes the capture of
/// [`easyprofiler::frames`] (4 threads x 15000 frames of 51 blocks and one value) and times
/// `profcodec validate FILE` against `PATH FILE`, each a whole process.
fn bench_peers(ws: &Workspace, args: &[String]) -> Result<()> {
    let options = peers::Options::parse(args)?;
    let peer = options.peer(
        "build yse/easy_profiler (CMake, -DEASY_PROFILER_NO_GUI=ON) and a program calling \
         fillTreesFromFile on its argument, as BENCHMARKS.md (\"Whole-process comparison with the \
         real readers\") tells, and pass its path",
    )?;
    let dir = ws.target().join("easyprofiler-bench-peers");
    std::fs::create_dir_all(&dir)?;
    let (threads, frames) = (4, 15_000);
    let file = dir.join(format!("frames-{threads}x{frames}.prof"));
    // Written every time: the generator may have changed since.
    std::fs::write(&file, easyprofiler::frames(threads, frames).to_bytes()?)
        .with_context(|| format!("writing {}", file.display()))?;
    let profcodec = peers::profcodec(ws)?;
    let rows = [peers::Row {
        workload: format!(
            "EasyProfiler, {threads} threads x {frames} frames (1 frame, 10 middle, 40 leaf blocks, 1 value)"
        ),
        input: file.clone(),
        ours: peers::validate(&profcodec, &file),
        peer: Some(peers::CommandLine::new(&peer).arg(&file)),
        peer_name: "`fillTreesFromFile` (easy_profiler 2.1.0)".into(),
        target: 3.0,
    }];
    peers::compare(&rows, options.runs())
}

fn run(ws: &Workspace, cmd: &str, args: &[String]) -> Result<()> {
    match cmd {
        "gen" => generate(ws, args),
        "bench-peers" => bench_peers(ws, args),
        _ => bail!("{cmd} is not implemented for easyprofiler"),
    }
}

fn generate(ws: &Workspace, args: &[String]) -> Result<()> {
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
        Some("frames") => {
            let usage = "usage: gen-easyprofiler frames OUT THREADS FRAMES";
            let (Some(out), Some(threads), Some(frames)) = (args.get(1), args.get(2), args.get(3))
            else {
                bail!(usage);
            };
            let bytes = write_frames(Path::new(out), threads.parse()?, frames.parse()?)?;
            eprintln!("wrote {out}: {bytes} bytes");
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
            "usage: gen-easyprofiler large OUT [MB] [MRECORDS] | frames OUT THREADS FRAMES | \
             testdata [DIR] | hostile KIND OUT [N]"
        ),
    }
}

/// Frames encoded once and repeated by [`write_frames`].
const FRAMES_CHUNK: u32 = 1000;

/// The bytes of one frame of [`easyprofiler::frames`] (51 blocks of 23 bytes, a value of 40).
pub(crate) const FRAME_BYTES: u64 = 51 * 23 + 40;

/// Writes a capture of [`easyprofiler::frames`]' shape with `frames` frames a thread (rounded up
/// to a whole number of chunks of up to [`FRAMES_CHUNK`] frames) to `path`, in memory bounded by
/// one chunk: a capture of several GB would need twice its size as a model. Returns its size.
pub(crate) fn write_frames(path: &Path, threads: u32, frames: u32) -> Result<u64> {
    let file =
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let bytes = write_frames_chunked(&mut out, threads, frames, FRAMES_CHUNK)?;
    out.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(bytes)
}

/// [`write_frames`] into `out`, repeating chunks of `chunk` frames a thread. Every byte comes from
/// the crate's own writer: one chunk's capture is encoded, and its records are written again with
/// their times moved on by the chunk's span. What is read from the encoding: the header and
/// descriptors do not depend on the threads (their counters are set to the whole file's), a thread's
/// records follow its u32 record count, a record is a u16 size and then its begin and end ticks
/// (u64 each), and the file ends with the threads' 4-byte end signature.
fn write_frames_chunked(
    out: &mut impl Write,
    threads: u32,
    frames: u32,
    chunk: u32,
) -> Result<u64> {
    ensure!(
        threads > 0 && frames > 0,
        "THREADS and FRAMES must be at least 1"
    );
    let chunk = chunk.min(frames);
    let reps = u64::from(frames.div_ceil(chunk));
    let capture = easyprofiler::frames(threads, chunk);
    let whole = capture.to_bytes()?;
    let span = capture.end_time - capture.begin_time;
    let blocks = u64::from(capture.counters.blocks_count) * reps;
    let mut head = capture.clone();
    head.counters.blocks_count =
        u32::try_from(blocks).context("more blocks than the header's u32 counts")?;
    head.counters.memory_size = capture.counters.memory_size * reps;
    head.end_time = capture.end_time + (reps - 1) * span;
    head.threads.clear();
    head.tail.missing_threads_end_mark = true;
    let head = head.to_bytes()?;
    let mut written = 0u64;
    let mut put = |out: &mut dyn Write, bytes: &[u8]| -> Result<()> {
        out.write_all(bytes)?;
        written += bytes.len() as u64;
        Ok(())
    };
    put(out, &head)?;
    let mut records = Vec::new();
    for thread in &capture.threads {
        let mut one = capture.clone();
        one.threads = vec![thread.clone()];
        one.counters.threads_count = 1;
        let bytes = one.to_bytes()?;
        let records_len: usize = thread.records.iter().map(|r| 2 + r.encoded_size()).sum();
        ensure!(
            bytes.len() >= head.len() + records_len + 8,
            "the encoding is not header, thread, signature"
        );
        let section = &bytes[head.len()..bytes.len() - 4];
        let (prefix, chunk_records) = section.split_at(section.len() - records_len);
        let count = u32::try_from(thread.records.len() as u64 * reps)
            .context("more records in a thread than a u32 counts")?;
        let mut prefix = prefix.to_vec();
        let at = prefix.len() - 4;
        prefix[at..].copy_from_slice(&count.to_le_bytes());
        put(out, &prefix)?;
        for rep in 0..reps {
            records.clear();
            records.extend_from_slice(chunk_records);
            let shift = rep * span;
            let mut p = 0;
            while p < records.len() {
                let size = usize::from(u16::from_le_bytes([records[p], records[p + 1]]));
                for field in [p + 2, p + 10] {
                    let tick = u64::from_le_bytes(records[field..field + 8].try_into()?);
                    records[field..field + 8].copy_from_slice(&(tick + shift).to_le_bytes());
                }
                p += 2 + size;
            }
            put(out, &records)?;
        }
    }
    put(out, &whole[whole.len() - 4..])?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chunk_is_the_generators_capture_byte_for_byte() {
        let mut out = Vec::new();
        write_frames_chunked(&mut out, 3, 5, 8).unwrap();
        assert_eq!(out, easyprofiler::frames(3, 5).to_bytes().unwrap());
    }

    #[test]
    fn repeated_chunks_have_the_size_and_counts_of_the_whole_capture() {
        let mut out = Vec::new();
        let written = write_frames_chunked(&mut out, 2, 12, 4).unwrap();
        let whole = easyprofiler::frames(2, 12).to_bytes().unwrap();
        // The same layout, but for the random leaf lengths the chunks repeat.
        assert_eq!(out.len(), whole.len());
        assert_eq!(written, out.len() as u64);
        let per_frame = (whole.len() - easyprofiler::frames(2, 1).to_bytes().unwrap().len()) / 22;
        assert_eq!(per_frame as u64, FRAME_BYTES);
    }
}
