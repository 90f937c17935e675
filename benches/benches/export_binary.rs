//! Criterion benches of the pprof and Firefox Profiler exporters (`profcodec-export`) on large
//! inputs, each beside the cost of building the model they export:
//!
//! - hpcrun: a 64 MiB synthetic measurement (`profcodec_benches::hpcrun::file`): a deep call
//!   tree with several metrics per node, one thread;
//! - HPCToolkit: a synthetic database (8 thread profiles, 200,000 contexts, 2 metrics measured
//!   self and inclusive) with every profile in the model, and hatchet's gamess database from the
//!   corpus when present (65 profiles, 44 metrics);
//! - EasyProfiler: the 72 MB synthetic capture of its own bench (8 threads, 3.1 M blocks), as a
//!   call tree, and for the Firefox Profiler also with every block as a span (the timeline).
//!
//! `model` is the input's bytes to the model (what `profcodec convert` does first); `pprof` and
//! `firefox` are the model to the output in memory, their throughput in output bytes.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use profcodec_benches::hpctoolkit::SyntheticConfig;
use profcodec_export::ExportOptions;
use profcodec_export::firefox::write_firefox;
use profcodec_export::pprof::write_pprof;
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_profile::Profile;

/// One large input: its name, and how its model is built from bytes held in the closure.
struct Input {
    name: String,
    /// The input's size on disk.
    bytes: u64,
    build: Box<dyn Fn() -> Profile>,
}

fn hpcrun() -> Input {
    let data = profcodec_benches::hpcrun::file(64 << 20, 1);
    Input {
        name: "hpcrun-64MB".to_owned(),
        bytes: data.len() as u64,
        build: Box::new(move || {
            profcodec_hpcrun::read_measurement(&data)
                .expect("the synthetic measurement reads")
                .to_profile()
                .expect("model")
        }),
    }
}

fn hpctoolkit_database(name: &str, dir: PathBuf) -> Input {
    let db = Database::open(&dir).expect("database");
    let bytes = [
        db.meta().data().len(),
        db.profile().map_or(0, |p| p.data().len()),
    ]
    .iter()
    .sum::<usize>() as u64;
    let meta = db.meta().data().to_vec();
    let profile = db.profile().map(|p| p.data().to_vec());
    Input {
        name: name.to_owned(),
        bytes,
        build: Box::new(move || {
            let db = Database::from_parts(meta.as_slice(), profile.as_deref(), None, None)
                .expect("parse");
            db.to_profile(&ProfileOptions::new().profiles(Profiles::All))
                .expect("model")
        }),
    }
}

fn hpctoolkit() -> Vec<Input> {
    let config = SyntheticConfig {
        profiles: 8,
        contexts: 200_000,
        metrics: 2,
        trace_elems: 0,
        ..SyntheticConfig::default()
    };
    let dir = std::env::temp_dir().join(format!(
        "profcodec-export-bench-{}-{}-{}",
        config.profiles, config.contexts, config.metrics
    ));
    if !dir.join("done").exists() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("bench folder");
        profcodec_benches::hpctoolkit::generate(&dir, config).expect("synthetic database");
        std::fs::write(dir.join("done"), b"").expect("marker");
    }
    let mut inputs = vec![hpctoolkit_database("hpctoolkit-synthetic-8p", dir)];
    if let Some(root) =
        profcodec_common::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        inputs.push(hpctoolkit_database(
            "hatchet-gamess",
            root.join("hatchet-gamess"),
        ));
    }
    inputs
}

fn easyprofiler(spans: bool) -> Input {
    let data = profcodec_benches::easyprofiler::large(72 << 20, 3_100_000, 8)
        .to_bytes()
        .expect("write the generated capture");
    Input {
        name: if spans {
            "easyprofiler-72MB-spans"
        } else {
            "easyprofiler-72MB"
        }
        .to_owned(),
        bytes: data.len() as u64,
        build: Box::new(move || {
            let view = profcodec_easyprofiler::parse(&data).expect("parse");
            let tree = view.tree().expect("tree");
            tree.to_profile_with(profcodec_easyprofiler::ProfileOptions::new().spans(spans))
                .expect("model")
        }),
    }
}

fn pprof(profile: &Profile) -> Vec<u8> {
    let mut out = Vec::new();
    write_pprof(profile, &ExportOptions::default(), &mut out).expect("pprof");
    out
}

fn firefox(profile: &Profile) -> Vec<u8> {
    let mut out = Vec::new();
    write_firefox(profile, &ExportOptions::default(), &mut out).expect("firefox");
    out
}

fn benches(c: &mut Criterion) {
    let mut inputs = vec![hpcrun()];
    inputs.extend(hpctoolkit());
    inputs.push(easyprofiler(false));
    inputs.push(easyprofiler(true));
    for input in &inputs {
        let profile = (input.build)();
        let with_spans = !profile.spans().is_empty();
        let pprof_len = (!with_spans).then(|| pprof(&profile).len() as u64);
        let firefox_len = firefox(&profile).len() as u64;
        eprintln!(
            "{}: {} bytes in, {} nodes, {} node values, {} spans; pprof {:?} bytes, firefox {} bytes",
            input.name,
            input.bytes,
            profile.nodes().len(),
            profile.node_values().len(),
            profile.spans().len(),
            pprof_len,
            firefox_len
        );
        let mut g = c.benchmark_group("export");
        g.sample_size(10);
        g.throughput(Throughput::Bytes(input.bytes));
        g.bench_function(BenchmarkId::new("model", &input.name), |b| {
            b.iter(|| black_box((input.build)()))
        });
        if let Some(len) = pprof_len {
            g.throughput(Throughput::Bytes(len));
            g.bench_function(BenchmarkId::new("pprof", &input.name), |b| {
                b.iter(|| black_box(pprof(&profile)))
            });
        }
        g.throughput(Throughput::Bytes(firefox_len));
        g.bench_function(BenchmarkId::new("firefox", &input.name), |b| {
            b.iter(|| black_box(firefox(&profile)))
        });
        g.finish();
    }
}

criterion_group!(group, benches);
criterion_main!(group);
