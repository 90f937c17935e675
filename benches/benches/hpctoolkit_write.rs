//! Criterion benches of profcodec-hpctoolkit's writing half: profile.db and trace.db writing
//! throughput (into memory, so the figure is the writer's, not the disk's), and context-major
//! transposition of a profile.db of at least 1 GB into cct.db under a memory budget, with the
//! process's peak resident memory during the transposition.
//!
//! Inputs are synthetic (`profcodec_benches::hpctoolkit`); the 1 GB profile.db is generated once
//! into `target/bench-data/hpctoolkit-transpose/` (or `$PROFCODEC_BENCH_DIR`) and reused.

use std::fs::File;
use std::hint::black_box;
use std::io::{BufReader, BufWriter, Cursor, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_benches::hpctoolkit::{Synthetic, SyntheticConfig};
use profcodec_hpctoolkit::model::{Identifier, ProfileValues, TraceElement};
use profcodec_hpctoolkit::write::{
    ProfileDbWriter, ProfileInfo, TraceDbWriter, TransposeOptions, transpose,
};

/// Writes `profiles` into memory with the streaming writer; returns the bytes' length.
fn write_profiles(
    infos: &[ProfileInfo<'_>],
    profiles: &[ProfileValues],
    buf: &mut Vec<u8>,
) -> usize {
    let mut out = Cursor::new(std::mem::take(buf));
    out.get_mut().clear();
    let mut w = ProfileDbWriter::new(out, infos).expect("header");
    for (i, p) in profiles.iter().enumerate() {
        w.write_profile(i as u32 + 1, &p.contexts, &p.values)
            .expect("profile");
    }
    *buf = w.finish().expect("finish").into_inner();
    buf.len()
}

fn profile_db(c: &mut Criterion) {
    let config = SyntheticConfig {
        profiles: 24,
        contexts: 400_000,
        metrics: 2,
        trace_elems: 0,
        trace_run: 1,
        samples: 200_000,
        seed: 3,
    };
    let synthetic = Synthetic::new(config);
    let profiles: Vec<ProfileValues> = (1..=config.profiles)
        .map(|p| synthetic.profile_values(p))
        .collect();
    let tuples: Vec<Vec<Identifier>> = (1..=config.profiles)
        .map(|p| synthetic.id_tuple(p))
        .collect();
    let mut infos = vec![ProfileInfo {
        flags: 1,
        id_tuple: None,
    }];
    infos.extend(tuples.iter().map(|t| ProfileInfo {
        flags: 0,
        id_tuple: Some(t),
    }));
    let mut buf = Vec::new();
    let size = write_profiles(&infos, &profiles, &mut buf);
    let mut group = c.benchmark_group("hpctoolkit_write");
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function(format!("profile.db ({} MB)", size >> 20), |b| {
        b.iter(|| black_box(write_profiles(&infos, &profiles, &mut buf)))
    });
    group.finish();
}

fn trace_db(c: &mut Criterion) {
    let (lines, per_line) = (8u32, 1_000_000u64);
    let mut t = 1_700_000_000_000_000_000u64;
    let line: Vec<TraceElement> = (0..per_line)
        .map(|i| {
            t += 1000 + i % 977;
            TraceElement {
                timestamp: t,
                ctx_id: (i % 5000) as u32 + 1,
            }
        })
        .collect();
    let heads: Vec<(u32, u64)> = (1..=lines).map(|p| (p, per_line)).collect();
    let mut buf = Vec::new();
    let write = |buf: &mut Vec<u8>| {
        let mut out = Cursor::new(std::mem::take(buf));
        out.get_mut().clear();
        let mut w = TraceDbWriter::new(out, &heads).expect("header");
        for i in 0..lines {
            // Appended in pieces, as a streaming producer would.
            for chunk in line.chunks(64 * 1024) {
                w.append(i, chunk).expect("append");
            }
        }
        *buf = w.finish().expect("finish").into_inner();
        buf.len()
    };
    let size = write(&mut buf);
    let mut group = c.benchmark_group("hpctoolkit_write");
    group.throughput(Throughput::Bytes(size as u64));
    group.bench_function(format!("trace.db ({} MB)", size >> 20), |b| {
        b.iter(|| black_box(write(&mut buf)))
    });
    group.finish();
}

/// Peak resident set size of this process (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets VmHWM to the current RSS (Linux >= 4.0), so the next peak is the transposition's.
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn bench_dir() -> PathBuf {
    std::env::var_os("PROFCODEC_BENCH_DIR").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../target/bench-data/hpctoolkit-transpose")
        },
        PathBuf::from,
    )
}

fn transposition(c: &mut Criterion) {
    // About 1.6 GB of profile.db: 360 profiles of ~4.5 MB each.
    let config = SyntheticConfig {
        profiles: 360,
        contexts: 200_000,
        metrics: 1,
        trace_elems: 0,
        trace_run: 1,
        samples: 60_000,
        seed: 11,
    };
    let mut group = c.benchmark_group("hpctoolkit_write");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    // Generation and the memory measurement happen inside the bench, so that a filter that
    // leaves this bench out skips them.
    let mut measured = false;
    group.bench_function("transposition (>= 1 GB in, budget 1/8 of it)", |b| {
        let dir = bench_dir();
        std::fs::create_dir_all(&dir).expect("bench dir");
        let input = dir.join(format!(
            "profile-{}-{}-{}-{}.db",
            config.profiles, config.contexts, config.samples, config.seed
        ));
        let synthetic = Synthetic::new(config);
        if !input.exists() {
            let started = Instant::now();
            let out = BufWriter::with_capacity(1 << 20, File::create(&input).expect("create"));
            let mut out = synthetic.write_profile_db(out).expect("profile.db");
            out.flush().expect("flush");
            eprintln!("generated {} in {:?}", input.display(), started.elapsed());
        }
        let size = std::fs::metadata(&input).expect("input").len();
        let budget = (size / 8) as usize;
        let output = dir.join("cct.db");
        let run = || {
            let options = TransposeOptions {
                memory_budget: budget,
                n_ctxs: Some(synthetic.n_ctxs()),
            };
            let r = BufReader::with_capacity(1 << 20, File::open(&input).expect("open"));
            let w = BufWriter::with_capacity(1 << 20, File::create(&output).expect("create"));
            let (mut w, stats) = transpose(r, w, &options).expect("transpose");
            w.flush().expect("flush");
            stats
        };
        b.iter(|| black_box(run()));
        if measured {
            return;
        }
        measured = true;
        // One more run, alone, for the memory figure.
        let before = peak_rss();
        reset_peak_rss();
        let started = Instant::now();
        let stats = run();
        let elapsed = started.elapsed();
        let peak = peak_rss();
        let out_size = std::fs::metadata(&output).map_or(0, |m| m.len());
        eprintln!(
            "transposition: profile.db {:.2} GB -> cct.db {:.2} GB in {elapsed:.2?} ({:.0} MB/s; \
             {} passes, {} values, budget {} MB, values held at most {} MB); peak RSS {} MB = \
             {:.1}% of the input (process peak before: {} MB)",
            size as f64 / 1e9,
            out_size as f64 / 1e9,
            size as f64 / 1e6 / elapsed.as_secs_f64(),
            stats.passes,
            stats.n_values,
            budget >> 20,
            (stats.max_values_held * 16) >> 20,
            peak >> 20,
            peak as f64 * 100.0 / size as f64,
            before >> 20,
        );
        let _ = std::fs::remove_file(&output);
    });
    group.finish();
}

criterion_group!(group, profile_db, trace_db, transposition);
criterion_main!(group);
