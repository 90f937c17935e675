//! Criterion benches of profcodec-hpcrun on a synthetic 04.00b file of `HPCRUN_BENCH_MB` MiB
//! (default 512) made by the crate's writer in the setup, and on a 64 MiB one: the owned model's
//! inclusive sums, and the file in the format-neutral profile model with its top 20 functions
//! (`hpcrun-profile`: `read_measurement` + `to_profile` + `Profile::top`, what `profcodec top`
//! does), beside the full decode it builds on (`read_measurement`, every node and value into the
//! owned model; the target is at most twice its time).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_hpcrun::{
    MetricValue, V4View, ValueFormat, read_measurement, read_trace, write_trace,
};
use profcodec_profile::Query;

fn size() -> u64 {
    std::env::var("HPCRUN_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
        << 20
}

fn benches(c: &mut Criterion) {
    let data = profcodec_benches::hpcrun::file(size(), 1);
    let mut g = c.benchmark_group("hpcrun-04.00b");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function(format!("parse+validate {} MB", data.len() >> 20), |b| {
        b.iter(|| {
            let v = V4View::parse(black_box(&data)).expect("parses");
            v.validate().expect("validates");
            v.values.len()
        })
    });
    g.bench_function(
        format!("parse+validate+typed sum {} MB", data.len() >> 20),
        |b| {
            b.iter(|| {
                let v = V4View::parse(black_box(&data)).expect("parses");
                v.validate().expect("validates");
                let formats: Vec<ValueFormat> =
                    v.metrics.iter().map(|m| m.value_format()).collect();
                let mut sums = vec![0.0f64; formats.len()];
                for r in v.values {
                    let m = r.metric.get() as usize;
                    sums[m] += MetricValue::from_bits(r.value.get(), formats[m]).as_f64();
                }
                sums
            })
        },
    );
    g.finish();

    // Every node's inclusive value of one metric, on the owned model of a 64 MiB file: one
    // walk of the tree (a subtree walk per node would be quadratic).
    let small = profcodec_benches::hpcrun::measurement(64 << 20, 2);
    let nodes = small.epochs[0].cct.len();
    let mut g = c.benchmark_group("hpcrun-model");
    g.throughput(Throughput::Elements(nodes as u64));
    g.sample_size(10);
    g.bench_function(format!("inclusive_sums of {nodes} nodes"), |b| {
        b.iter(|| black_box(&small).inclusive_sums(0, 0).len())
    });
    g.finish();

    // The same 64 MiB file from its bytes: the full decode, and the profile model with its
    // top 20 on top of it, side by side so that both see the same load.
    let small_file = profcodec_hpcrun::write_measurement(&small).expect("writes");
    drop(small);
    let mut g = c.benchmark_group("hpcrun-profile");
    g.throughput(Throughput::Bytes(small_file.len() as u64));
    g.sample_size(10);
    g.bench_function("read_measurement", |b| {
        b.iter(|| {
            read_measurement(black_box(&small_file))
                .expect("reads")
                .epochs
                .len()
        })
    });
    g.bench_function("model_and_top20", |b| {
        b.iter(|| {
            let m = read_measurement(black_box(&small_file)).expect("reads");
            let profile = m.to_profile().expect("converts");
            drop(m);
            let top = profile.top(&Query::new().limit(20)).expect("top");
            (top.rows.len(), top.total.self_value)
        })
    });
    // What any model that keeps its own values and interns its frames and nodes must do at
    // least, measured alone after the same decode: each value copied into a column per metric
    // (node, value), and each CCT node's frame and node looked up in hash tables. Their sum
    // against `read_measurement` bounds the ratio `model_and_top20` can reach.
    let decoded = read_measurement(&small_file).expect("reads");
    g.bench_function("floor: values into columns", |b| {
        b.iter(|| value_columns(black_box(&decoded)))
    });
    g.bench_function("floor: frames and nodes hashed", |b| {
        b.iter(|| interned_nodes(black_box(&decoded)))
    });
    drop(decoded);
    g.finish();

    // A 64 MiB trace.
    let trace = profcodec_hpcrun::Trace {
        records: (0..(64u64 << 20) / 12)
            .map(|i| profcodec_hpcrun::TraceRecord {
                time: i * 1000,
                ctx: (i % 4099) as u32,
                metric: None,
            })
            .collect(),
        ..Default::default()
    };
    let bytes = write_trace(&trace);
    let mut g = c.benchmark_group("hpctrace-01.01b");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("read to model 64 MB", |b| {
        b.iter(|| read_trace(black_box(&bytes)).expect("reads").records.len())
    });
    g.bench_function("view + sum of ctx ids 64 MB", |b| {
        b.iter(|| {
            let v = profcodec_hpcrun::TraceView::parse(black_box(&bytes)).expect("parses");
            v.validate().expect("whole records");
            match v.records {
                profcodec_hpcrun::TraceRecords::Plain(r) => {
                    r.iter().map(|r| u64::from(r.ctx.get())).sum::<u64>()
                }
                profcodec_hpcrun::TraceRecords::DataCentric(r) => {
                    r.iter().map(|r| u64::from(r.ctx.get())).sum::<u64>()
                }
            }
        })
    });
    g.finish();
}

/// Every sparse value of `m` appended to the (node, value) column of its metric.
fn value_columns(m: &profcodec_hpcrun::Measurement) -> usize {
    let Some(sparse) = &m.sparse else { return 0 };
    let mut columns: Vec<(Vec<u32>, Vec<f64>)> = Vec::new();
    for (i, context) in sparse.contexts.iter().enumerate() {
        let end = sparse
            .contexts
            .get(i + 1)
            .map_or(sparse.values.len() as u64, |next| next.start);
        for v in &sparse.values[context.start as usize..end as usize] {
            let metric = usize::from(v.metric);
            if columns.len() <= metric {
                columns.resize_with(metric + 1, Default::default);
            }
            columns[metric].0.push(i as u32);
            columns[metric].1.push(v.value as f64);
        }
    }
    black_box(&columns).len()
}

/// Each CCT node's frame (load module, address) and node (parent node, frame) found or added
/// in a hash table, as the model's builder interns them.
fn interned_nodes(m: &profcodec_hpcrun::Measurement) -> usize {
    let cct = &m.epochs[0].cct;
    let hasher = foldhash::fast::RandomState::default();
    let mut frames: hashbrown::HashMap<(u16, u64), u32, _> =
        hashbrown::HashMap::with_capacity_and_hasher(cct.len(), hasher.clone());
    let mut nodes: hashbrown::HashMap<(u32, u32), u32, _> =
        hashbrown::HashMap::with_capacity_and_hasher(cct.len(), hasher);
    let mut by_position = vec![0u32; cct.len()];
    // The generator numbers nodes 1.. in file order: a parent's position is its id - 1.
    for (i, node) in cct.iter().enumerate() {
        let count = frames.len() as u32;
        let frame = *frames.entry((node.lm_id, node.ip)).or_insert(count);
        let parent = usize::try_from(node.parent - 1)
            .ok()
            .and_then(|p| by_position.get(p).copied())
            .unwrap_or(u32::MAX);
        let count = nodes.len() as u32;
        by_position[i] = *nodes.entry((parent, frame)).or_insert(count);
    }
    black_box(&by_position).len()
}

criterion_group!(group, benches);
criterion_main!(group);
