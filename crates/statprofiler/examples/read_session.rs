//! Reads every file of a session (a folder or a `-template` prefix) and prints what it holds:
//! `cargo run --release --example read_session -- PATH [traces|events|snappy] [REPEAT]`.
//! With a mode, only that pass runs (for timing with `time`).

use std::path::PathBuf;

use profcodec_statprofiler::read::packets::{PacketDecoder, Packets};
use profcodec_statprofiler::session::open_session;
use profcodec_statprofiler::{Reader, TraceReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(
        args.next()
            .ok_or("usage: read_session PATH [MODE] [REPEAT]")?,
    );
    let mode = args.next().unwrap_or_else(|| "traces".into());
    let repeat: u32 = args.next().map_or(Ok(1), |r| r.parse())?;
    let processes = open_session(&path)?;
    let mut files = Vec::new();
    for p in &processes {
        for f in &p.files {
            files.push(std::fs::read(&f.path)?);
        }
    }
    let start = std::time::Instant::now();
    let (mut samples, mut frames, mut bytes) = (0u64, 0u64, 0u64);
    for _ in 0..repeat {
        for data in &files {
            match mode.as_str() {
                "traces" => {
                    let mut t = TraceReader::new(Reader::from_slice(data)?);
                    while let Some(trace) = t.next_trace()? {
                        samples += 1;
                        bytes += trace.op_name.bytes.len() as u64;
                        for f in trace.frames() {
                            frames += 1;
                            bytes += f.file().map_or(0, |s| s.bytes.len() as u64);
                        }
                    }
                }
                "samples" => {
                    let mut t = TraceReader::new(Reader::from_slice(data)?);
                    while let Some(trace) = t.next_trace()? {
                        samples += 1;
                        frames += trace.frame_count() as u64;
                    }
                }
                "events" => {
                    let mut r = Reader::from_slice(data)?;
                    while let Some(e) = r.next_event()? {
                        std::hint::black_box(&e);
                        frames += 1;
                    }
                }
                _ => {
                    let mut decoder = PacketDecoder::new();
                    for p in Packets::new(data)? {
                        bytes += decoder.decompress(&p?)?.len() as u64;
                    }
                }
            }
        }
    }
    println!(
        "{} processes, {} files; {mode} x{repeat}: {samples} samples, {frames} frames/records, {bytes} bytes; {:.3} s wall",
        processes.len(),
        files.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}
