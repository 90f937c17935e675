//! Criterion benches of profcodec-hpctoolkit's reading half:
//!
//! - `validate`: `Database::from_parts` + `Database::validate` of all four files (every pointer,
//!   string, sort order and cross-file reference), as bytes per second;
//! - `lookup`: a point lookup (profile, ctx, metric) from the database, including the {PI} read,
//!   over 2^20 pseudo-random stored keys (DRAM-latency bound on large databases), over 64 of them
//!   (cache-resident), and on profiles opened beforehand; besides criterion's figures (medians of
//!   batch means), the bench times 65,536 single random lookups and prints their p50/p90/p99,
//!   and prints the machine's memory latency (a dependent random walk over 256 MiB), the floor
//!   under any lookup whose lines are not cached;
//! - `trace`: a pass over every trace element (timestamps and ctxIds folded) against a `memcpy` of
//!   the same bytes, measured in the same bench;
//! - `model`: the database in the format-neutral profile model (`Database::to_profile` from the
//!   bytes in memory, meta.db and profile.db parsed as `validate` parses them) and its top 20
//!   functions, for the summary profile only (the CLI's choice on large databases) and for every
//!   profile, to set against `validate` (the target is at most twice its time).
//!
//! Inputs: the largest corpus database (hatchet-gamess, when the corpus is around) and two synthetic
//! databases from the writer's generator (`profcodec_benches::hpctoolkit`: 16 thread profiles,
//! and the same with one), generated once into `target/bench-data/hpctoolkit-read/` (or
//! `$PROFCODEC_BENCH_DIR/hpctoolkit-read`) and reused.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use profcodec_benches::hpctoolkit::{SyntheticConfig, generate};
use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_hpctoolkit::{Database, FileKind};
use profcodec_profile::Query;

/// The synthetic database: 16 profiles of > 1e6 values each, 2 M trace elements per profile.
const SYNTHETIC: SyntheticConfig = SyntheticConfig {
    profiles: 16,
    contexts: 400_000,
    metrics: 2,
    trace_elems: 2_000_000,
    trace_run: 1,
    samples: 200_000,
    seed: 11,
};

fn bench_dir() -> PathBuf {
    let base = std::env::var_os("PROFCODEC_BENCH_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/bench-data"),
        PathBuf::from,
    );
    base.join("hpctoolkit-read")
}

/// The same shape with a single thread profile (1.29 million values; about 17 MB of profile.db
/// in play): the smallest database the lookup target allows.
const SYNTHETIC_ONE: SyntheticConfig = SyntheticConfig {
    profiles: 1,
    ..SYNTHETIC
};

fn synthetic(name: &str, config: SyntheticConfig) -> PathBuf {
    let dir = bench_dir().join(name);
    if !dir.join("trace.db").is_file() {
        std::fs::create_dir_all(&dir).expect("bench data folder");
        let sizes = generate(&dir, config).expect("generate the synthetic database");
        eprintln!("generated {}: {sizes:?}", dir.display());
    }
    dir
}

fn databases() -> Vec<(String, Database)> {
    let mut out = Vec::new();
    if let Some(root) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        let dir = root.join("hatchet-gamess");
        out.push((
            "hatchet-gamess".to_owned(),
            Database::open(dir).expect("corpus database"),
        ));
    }
    for (name, config) in [("synthetic", SYNTHETIC), ("synthetic-1p", SYNTHETIC_ONE)] {
        let dir = synthetic(name, config);
        out.push((
            name.to_owned(),
            Database::open(dir).expect("synthetic database"),
        ));
    }
    out
}

/// Nanoseconds per access of a dependent random walk over 256 MiB (a single cycle through every
/// slot, so neither caches nor prefetchers help): what one uncached line costs on this machine.
fn memory_latency_ns() -> f64 {
    let n = 32usize << 20;
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let mut next = vec![0u32; n];
    for w in 0..n {
        next[order[w] as usize] = order[(w + 1) % n];
    }
    let mut at = 0u32;
    let steps = 2_000_000;
    let t = Instant::now();
    for _ in 0..steps {
        at = next[at as usize];
    }
    let ns = t.elapsed().as_nanos() as f64 / f64::from(steps);
    black_box(at);
    ns
}

/// p50, p90 and p99 of single lookups, each timed on its own (`Instant` costs about 20 ns of it).
fn single_lookup_percentiles(db: &Database, keys: &[(u32, u32, u16)]) -> [u64; 3] {
    let mut ns: Vec<u64> = Vec::with_capacity(keys.len());
    for &(p, ctx, m) in keys {
        let t = Instant::now();
        black_box(
            db.value(black_box(p), black_box(ctx), black_box(m))
                .expect("lookup"),
        );
        ns.push(t.elapsed().as_nanos() as u64);
    }
    ns.sort_unstable();
    let at = |q: usize| ns[(ns.len() * q / 100).min(ns.len() - 1)];
    [at(50), at(90), at(99)]
}

fn total_bytes(db: &Database) -> u64 {
    let mut n = db.meta().data().len();
    n += db.profile().map_or(0, |p| p.data().len());
    n += db.cct().map_or(0, |c| c.data().len());
    n += db.trace().map_or(0, |t| t.data().len());
    n as u64
}

/// A fixed pseudo-random sample of stored (profIndex, ctxId, metricId) keys.
fn lookup_keys(db: &Database, n: usize) -> Vec<(u32, u32, u16)> {
    let p = db.profile().expect("profile.db");
    let mut keys = Vec::with_capacity(n);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    while keys.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let prof = 1 + (x % u64::from(p.profile_count() - 1)) as u32;
        let profile = p.profile(prof).expect("profile");
        if profile.ctx_indices.is_empty() {
            continue;
        }
        let i = ((x >> 20) % profile.ctx_indices.len() as u64) as usize;
        let ctx = profile.ctx_indices[i].ctx_id();
        let vals = profile.metrics_of(ctx);
        if let Some(v) = vals.get(((x >> 40) % vals.len().max(1) as u64) as usize) {
            keys.push((prof, ctx, v.metric_id()));
        }
    }
    keys
}

fn benches(c: &mut Criterion) {
    eprintln!(
        "memory latency (dependent random walk over 256 MiB): {:.0} ns",
        memory_latency_ns()
    );
    let dbs = databases();
    for (name, db) in &dbs {
        let bytes = total_bytes(db);
        eprintln!("{name}: {bytes} bytes in all files");
        if let Some(p) = db.profile() {
            let values: u64 = p
                .profiles()
                .map(|x| x.expect("profile").values.len() as u64)
                .sum();
            eprintln!("{name}: {} profiles, {values} values", p.profile_count());
        }
        let mut g = c.benchmark_group("hpctoolkit-read/validate");
        g.throughput(Throughput::Bytes(bytes));
        g.sample_size(10);
        let parts = [
            FileKind::Meta,
            FileKind::Profile,
            FileKind::Cct,
            FileKind::Trace,
        ];
        let data: Vec<Option<&[u8]>> = parts
            .iter()
            .map(|k| match k {
                FileKind::Meta => Some(db.meta().data()),
                FileKind::Profile => db.profile().map(|p| p.data()),
                FileKind::Cct => db.cct().map(|c| c.data()),
                FileKind::Trace => db.trace().map(|t| t.data()),
            })
            .collect();
        g.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| {
                let db = Database::from_parts(data[0].expect("meta.db"), data[1], data[2], data[3])
                    .expect("parse");
                db.validate().expect("valid");
            })
        });
        g.finish();

        let mut g = c.benchmark_group("hpctoolkit-read/model");
        g.throughput(Throughput::Bytes(bytes));
        g.sample_size(10);
        for (label, profiles) in [("summary", Profiles::SummaryOnly), ("all", Profiles::All)] {
            let options = ProfileOptions::new().profiles(profiles);
            g.bench_function(BenchmarkId::new(label, name), |b| {
                b.iter(|| {
                    let db = Database::from_parts(data[0].expect("meta.db"), data[1], None, None)
                        .expect("parse");
                    let profile = db.to_profile(&options).expect("model");
                    black_box(profile.top(&Query::new().limit(20)).expect("top"))
                })
            });
        }
        g.finish();

        // 2^20 keys: the lines a pass over them touches (about 6 per lookup) are far more than
        // the caches hold, so criterion's repeated passes stay cold (a few thousand keys would
        // be cache-resident after the first pass and flatter the figure).
        let keys = lookup_keys(db, 1 << 20);
        let [p50, p90, p99] = single_lookup_percentiles(db, &keys[..1 << 16]);
        eprintln!("{name}: 65536 single random lookups: p50 {p50} ns, p90 {p90} ns, p99 {p99} ns");
        let keys = &keys[..];
        let mut g = c.benchmark_group("hpctoolkit-read/lookup");
        g.throughput(Throughput::Elements(1));
        // 2^20 keys spread over the database, then 64 of them only, so that the touched cache
        // lines stay resident (the cost of the code rather than of DRAM latency).
        for (label, keys) in [("database", keys), ("database-hot64", &keys[..64])] {
            let mut k = 0usize;
            g.bench_function(BenchmarkId::new(label, name), |b| {
                b.iter(|| {
                    let (p, ctx, m) = keys[k % keys.len()];
                    k += 1;
                    black_box(
                        db.value(black_box(p), black_box(ctx), black_box(m))
                            .expect("lookup"),
                    )
                })
            });
        }
        let p = db.profile().expect("profile.db");
        let profiles: Vec<_> = (0..p.profile_count())
            .map(|i| p.profile(i).expect("profile"))
            .collect();
        let mut k = 0usize;
        g.bench_function(BenchmarkId::new("open-profile", name), |b| {
            b.iter(|| {
                let (p, ctx, m) = keys[k % keys.len()];
                k += 1;
                black_box(profiles[p as usize].value(black_box(ctx), black_box(m)))
            })
        });
        g.finish();

        if let Some(t) = db.trace() {
            let lines: Vec<_> = t.traces().map(|x| x.expect("trace")).collect();
            let elems: usize = lines.iter().map(|l| l.elems.len()).sum();
            let line_bytes = (elems * 12) as u64;
            let mut g = c.benchmark_group("hpctoolkit-read/trace");
            g.throughput(Throughput::Bytes(line_bytes));
            g.sample_size(10);
            g.bench_function(BenchmarkId::new("pass", name), |b| {
                b.iter(|| {
                    let mut acc = 0u64;
                    for l in &lines {
                        for e in l.elems {
                            acc = acc.wrapping_add(e.timestamp() ^ u64::from(e.ctx_id()));
                        }
                    }
                    black_box(acc)
                })
            });
            let sources: Vec<&[u8]> = lines
                .iter()
                .map(|l| &t.data()[l.p_start as usize..l.p_start as usize + l.elems.len() * 12])
                .collect();
            let mut dst = vec![0u8; line_bytes as usize];
            g.bench_function(BenchmarkId::new("memcpy", name), |b| {
                b.iter(|| {
                    let mut at = 0;
                    for s in &sources {
                        dst[at..at + s.len()].copy_from_slice(s);
                        at += s.len();
                    }
                    black_box(&dst);
                })
            });
            g.finish();
        }
    }
}

criterion_group!(group, benches);
criterion_main!(group);
