//! Criterion benches of profcodec-statprofiler on a synthetic session written by its own writer
//! (`profcodec_benches::statprofiler`, >= 35 MB on disk, >= 1.5 M samples, >= 14 M frames):
//! every sample and frame read as the real reader returns them (on one thread, and with the
//! Snappy decompression on a second one), every record, and the Snappy decompression alone (the
//! floor under the single-threaded reads); and the session in the profile model with its top 20
//! functions (`profcodec top`), beside the full decode it builds on (the target: at most twice
//! its time).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_benches::statprofiler::{SessionSpec, write_session};
use profcodec_profile::Query;
use profcodec_statprofiler::read::packets::{PacketDecoder, Packets, StreamSource};
use profcodec_statprofiler::read::with_threaded_reader;
use profcodec_statprofiler::{Error, Frame, ProfileConverter, Reader, TraceReader};

/// The session's files, generated once into the temp folder (kept between runs).
fn session() -> Vec<Vec<u8>> {
    let spec = SessionSpec::default();
    let dir = std::env::temp_dir().join(format!(
        "profcodec-statprofiler-bench-{}-{}-{}",
        spec.seed, spec.samples, spec.min_depth
    ));
    let done = dir.join("done");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("bench folder");
        let stats = write_session(&dir.join("statprof.out"), spec).expect("writing the session");
        eprintln!(
            "statprofiler bench session: {} files, {} bytes on disk, {} samples, {} frames",
            stats.files.len(),
            stats.bytes,
            stats.samples,
            stats.frames
        );
        std::fs::write(&done, b"").expect("marker");
    }
    session_files(&dir)
}

/// Reads every trace and frame, touching every string, as a flame-graph builder would.
fn read_traces(files: &[Vec<u8>]) -> (u64, u64, u64) {
    let mut total = (0u64, 0u64, 0u64);
    for file in files {
        visit(
            &mut TraceReader::new(Reader::from_slice(file).expect("header")),
            &mut total,
        )
        .expect("trace");
    }
    total
}

/// [`read_traces`] with the session's files shared out between the machine's cores: each file
/// starts with its own prologue and header (statprofiler.md, "Rotation"), so a user reading a
/// session can hand whole files to threads, one `TraceReader` each.
fn read_traces_file_parallel(files: &[Vec<u8>]) -> (u64, u64, u64) {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(2, usize::from);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut total = (0u64, 0u64, 0u64);
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(file) = files.get(i) else {
                            return total;
                        };
                        let reader = Reader::from_slice(file).expect("header");
                        visit(&mut TraceReader::new(reader), &mut total).expect("trace");
                    }
                })
            })
            .collect();
        workers.into_iter().fold((0, 0, 0), |acc, w| {
            let t = w.join().expect("worker");
            (acc.0 + t.0, acc.1 + t.1, acc.2 + t.2)
        })
    })
}

/// [`read_traces`] with each file's packets decompressed ahead on a second thread.
fn read_traces_threaded(files: &[Vec<u8>]) -> (u64, u64, u64) {
    let mut total = (0u64, 0u64, 0u64);
    for file in files {
        with_threaded_reader(file, |r| visit(&mut TraceReader::new(r), &mut total)).expect("trace");
    }
    total
}

/// Every trace and frame of one file: samples, frames and a sum over every field.
fn visit<S: StreamSource>(
    t: &mut TraceReader<S>,
    (samples, frames, bytes): &mut (u64, u64, u64),
) -> Result<(), Error> {
    while let Some(trace) = t.next_trace()? {
        *samples += u64::from(trace.weight > 0);
        *bytes += trace.op_name.bytes.len() as u64;
        for f in trace.frames() {
            *frames += 1;
            *bytes += match f {
                Frame::Sub {
                    package,
                    name,
                    file,
                    line,
                    ..
                } => {
                    (package.bytes.len() + name.bytes.len() + file.bytes.len()) as u64 + line as u64
                }
                Frame::Xsub { package, name } => (package.bytes.len() + name.bytes.len()) as u64,
                Frame::Eval { file, line } | Frame::Main { file, line } => {
                    file.bytes.len() as u64 + line as u64
                }
            };
        }
    }
    Ok(())
}

fn read_events(files: &[Vec<u8>]) -> u64 {
    let mut n = 0u64;
    for file in files {
        let mut r = Reader::from_slice(file).expect("header");
        while let Some(e) = r.next_event().expect("event") {
            black_box(&e);
            n += 1;
        }
    }
    n
}

/// Every packet decompressed into one reused buffer, as the reader does: the floor under it.
fn decompress_only(files: &[Vec<u8>]) -> u64 {
    let mut decoder = PacketDecoder::new();
    let mut n = 0u64;
    for file in files {
        for p in Packets::new(file).expect("prologue") {
            n += decoder
                .decompress(&p.expect("packet"))
                .expect("block")
                .len() as u64;
        }
    }
    n
}

/// Distinct call paths of [`pooled_session`].
const POOL: usize = 20_000;

/// A session shaped like a long run of a real program: 1.55 M samples (as many as
/// [`session`]'s) drawn from a pool of 20,000 distinct stacks of 5 to 16 frames (300 subs in 30
/// packages, each calling three others at fixed call sites, the innermost frame at one of 8
/// lines), visited with locality (each sample a neighbour of the one before, now and then a jump
/// to a hot stack). [`session`]'s random walk makes nearly every sample a new call path (2.3 M
/// distinct paths for 1.55 M samples), which no sampled program does; both are measured.
fn pooled_session() -> Vec<Vec<u8>> {
    use profcodec_benches::Rng;
    use profcodec_statprofiler::{
        Container, Event, Genealogy, Header, PerlStr, PerlVersion, ProcessId, SessionWriter,
    };
    const SAMPLES: usize = 1_550_000;
    let dir = std::env::temp_dir().join(format!("profcodec-statprofiler-bench-pooled-{POOL}"));
    let done = dir.join("done");
    if !done.exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("bench folder");
        let mut rng = Rng::new(7);
        let sub = |i: usize| {
            (
                format!("App::M{}", i / 10),
                format!("f{}", i % 10),
                format!("lib/App/M{}.pm", i / 10),
                10 + 30 * (i % 10) as i32,
            )
        };
        let subs: Vec<_> = (0..300).map(sub).collect();
        // Paths as sub indexes, outermost first; each keeps a prefix of the one before.
        let mut path: Vec<usize> = Vec::new();
        let pool: Vec<(Vec<usize>, i32)> = (0..POOL)
            .map(|_| {
                let keep = rng.below(path.len() as u64 + 1) as usize;
                path.truncate(keep.max(1).min(path.len()));
                let depth = 4 + rng.below(12) as usize;
                while path.len() < depth {
                    let next = match path.last() {
                        None => rng.below(300) as usize,
                        Some(&p) => (p * 7 + rng.below(3) as usize * 13 + 1) % 300,
                    };
                    path.push(next);
                }
                (path.clone(), rng.below(8) as i32)
            })
            .collect();
        let header = Header {
            perl_version: Some(PerlVersion {
                revision: 5,
                version: 36,
                subversion: 0,
            }),
            tick_duration_us: Some(1000),
            stack_depth: Some(20),
            genealogy: None,
            metadata: vec![],
        };
        let genealogy = Genealogy {
            ordinal: 1,
            parent_ordinal: 0,
            id: ProcessId::from_words([0x7e38, 2, 3, 4, 5, 6]),
            parent_id: ProcessId::default(),
        };
        let mut w = SessionWriter::new(
            dir.join("statprof.out"),
            &header,
            genealogy,
            Container::Snappy,
            profcodec_benches::statprofiler::DEFAULT_MAX_SIZE,
        )
        .expect("session");
        let mut at = 0usize;
        for i in 0..SAMPLES {
            at = if i % 50 == 0 {
                let r = rng.below(140) as usize;
                r * r % POOL
            } else {
                (at + POOL + rng.below(7) as usize - 3) % POOL
            };
            let (path, leaf_line) = &pool[at];
            w.write(&Event::SampleStart {
                weight: 1 + rng.below(3) as u32,
                op_name: PerlStr::bytes(if i % 40 == 0 { b"sort" } else { b"add" }),
            })
            .expect("write");
            for (depth, &s) in path.iter().enumerate().rev() {
                let (package, name, file, first_line) = &subs[s];
                let line = match path.get(depth + 1) {
                    Some(&callee) => first_line + 1 + (callee % 7) as i32,
                    None => first_line + leaf_line,
                };
                w.write(&Event::Frame(Frame::Sub {
                    package: PerlStr::bytes(package.as_bytes()),
                    name: PerlStr::bytes(name.as_bytes()),
                    file: PerlStr::bytes(file.as_bytes()),
                    line,
                    first_line: *first_line,
                }))
                .expect("write");
            }
            w.write(&Event::Frame(Frame::Main {
                file: PerlStr::bytes(b"bin/service.pl"),
                line: 100 + (path[0] % 20) as i32,
            }))
            .expect("write");
            w.write(&Event::SampleEnd { skipped: &[] }).expect("write");
        }
        w.finish().expect("session");
        std::fs::write(&done, b"").expect("marker");
    }
    session_files(&dir)
}

/// The session in the profile model (one context per process), then the top 20 functions by
/// self time of the whole run: what `profcodec top` does.
fn model_and_top20(files: &[Vec<u8>]) -> (usize, f64) {
    let mut converter = ProfileConverter::new();
    for file in files {
        converter.add_file(file).expect("file");
    }
    let profile = converter.finish();
    let top = profile.top(&Query::new().limit(20)).expect("top");
    (top.rows.len(), top.total.self_value)
}

fn benches(c: &mut Criterion) {
    let files = session();
    let disk: u64 = files.iter().map(|f| f.len() as u64).sum();
    let totals = read_traces(&files);
    assert_eq!(
        read_traces_file_parallel(&files),
        totals,
        "same traces in parallel"
    );
    let (samples, frames, _) = totals;
    let logical = decompress_only(&files);
    eprintln!(
        "statprofiler session: {} files, {disk} bytes on disk, {logical} bytes of logical stream, \
         {samples} samples, {frames} frames",
        files.len()
    );
    let mut g = c.benchmark_group("statprofiler_session");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(disk));
    g.bench_function("traces_every_frame", |b| {
        b.iter(|| black_box(read_traces(&files)))
    });
    g.bench_function("traces_every_frame_threaded", |b| {
        b.iter(|| black_box(read_traces_threaded(&files)))
    });
    g.bench_function("traces_every_frame_files_in_parallel", |b| {
        b.iter(|| black_box(read_traces_file_parallel(&files)))
    });
    g.bench_function("events", |b| b.iter(|| black_box(read_events(&files))));
    g.bench_function("snappy_decompress_only", |b| {
        b.iter(|| black_box(decompress_only(&files)))
    });
    g.finish();
}

fn profile_benches(c: &mut Criterion) {
    for (group, files) in [
        ("statprofiler_profile_pooled", pooled_session()),
        ("statprofiler_profile", session()),
    ] {
        let disk: u64 = files.iter().map(|f| f.len() as u64).sum();
        let (samples, frames, _) = read_traces(&files);
        let mut converter = ProfileConverter::new();
        for file in &files {
            converter.add_file(file).expect("file");
        }
        let profile = converter.finish();
        eprintln!(
            "{group}: {} files, {disk} bytes, {samples} samples, {frames} frames; in the profile \
             model {} frames, {} nodes, {} node values",
            files.len(),
            profile.frames().len(),
            profile.nodes().len(),
            profile.node_values().len(),
        );
        // Side by side, so that the ratio is measured under the same load.
        let mut g = c.benchmark_group(group);
        g.sample_size(10);
        g.throughput(Throughput::Bytes(disk));
        g.bench_function("traces_every_frame", |b| {
            b.iter(|| black_box(read_traces(&files)))
        });
        g.bench_function("model_and_top20", |b| {
            b.iter(|| black_box(model_and_top20(&files)))
        });
        g.finish();
    }
}

/// The bytes of every session file in a bench folder (all but its `done` marker), in name order.
fn session_files(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("bench folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "done"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("session file"))
        .collect()
}

criterion_group!(group, benches, profile_benches);
criterion_main!(group);
