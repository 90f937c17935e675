//! Criterion benches of profcodec-nytprof on a synthetic profile of `NYTPROF_BENCH_MB` MiB
//! (default 40) made by the crate's writer in the setup, uncompressed and compressed. Beside the
//! full decode (`model`: `Profile::from_bytes`, every record into the aggregated model), the
//! file in the format-neutral profile model with its top 20 subs (`profile model + top-20`:
//! `to_profile::to_profile`, which also builds the call paths of the `<` records, then
//! `Profile::top`, what `profcodec top` does; the target is at most twice the full decode).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_nytprof::{Profile, Reader, parse};
use profcodec_profile::Query;

fn size() -> u64 {
    std::env::var("NYTPROF_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40)
        << 20
}

fn benches(c: &mut Criterion) {
    for (label, level) in [("plain", None), ("zlib6", Some(6))] {
        let data = profcodec_benches::nytprof::file(size(), level);
        let mut g = c.benchmark_group(format!("nytprof-{label}"));
        g.throughput(Throughput::Bytes(data.len() as u64));
        g.sample_size(10);
        let mb = data.len() >> 20;
        g.bench_function(format!("records {mb} MB"), |b| {
            b.iter(|| {
                let f = parse(black_box(&data)).expect("parses");
                f.records().filter(|r| r.is_ok()).count()
            })
        });
        g.bench_function(format!("streaming records {mb} MB"), |b| {
            b.iter(|| {
                let mut r = Reader::new(black_box(&data[..])).expect("parses");
                let mut n = 0usize;
                while let Some(rec) = r.next_record() {
                    rec.expect("valid");
                    n += 1;
                }
                n
            })
        });
        g.bench_function(format!("model {mb} MB"), |b| {
            b.iter(|| {
                Profile::from_bytes(black_box(&data))
                    .expect("loads")
                    .subs
                    .len()
            })
        });
        g.bench_function(format!("profile model + top-20 {mb} MB"), |b| {
            b.iter(|| {
                let profile =
                    profcodec_nytprof::to_profile::to_profile(black_box(&data)).expect("converts");
                let top = profile.top(&Query::new().limit(20)).expect("top");
                (top.rows.len(), top.total.self_value)
            })
        });
        let model = Profile::from_bytes(&data).expect("loads");
        g.bench_function(format!("rewrite records {mb} MB"), |b| {
            b.iter(|| {
                let f = parse(black_box(&data)).expect("parses");
                profcodec_nytprof::write::rewrite(&f, 6)
                    .expect("rewrites")
                    .len()
            })
        });
        g.bench_function("write model", |b| {
            b.iter(|| {
                let mut out = Vec::new();
                model.write_with(&mut out, level).expect("writes");
                out.len()
            })
        });
        g.finish();
    }
}

criterion_group!(group, benches);
criterion_main!(group);
