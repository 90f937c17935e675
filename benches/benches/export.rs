//! Criterion benches of profcodec-export on the large synthetic inputs of the format benches:
//! for each input, building the profile model from the file's bytes (what `profcodec convert`
//! does before exporting), then each exporter writing that model to memory. Throughput is the
//! output's size for the exporters and the input's size for the model.
//!
//! - NYTProf: a 40 MiB uncompressed profile (`cargo xtask gen-nytprof`'s generator), with its
//!   call stacks;
//! - EasyProfiler: a 72 MiB capture of 3.1 M blocks over 8 threads, converted with spans (the
//!   timeline speedscope's evented profiles show);
//! - hpcrun: a 64 MiB measurement (a large CCT with several metrics).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_export::{ExportOptions, write_callgrind, write_folded, write_speedscope};
use profcodec_profile::Profile;

type Exporter =
    fn(&Profile, &ExportOptions, &mut Vec<u8>) -> Result<(), profcodec_export::ExportError>;

const EXPORTERS: &[(&str, Exporter)] = &[
    ("folded", |p, o, w| write_folded(p, o, w)),
    ("callgrind", |p, o, w| write_callgrind(p, o, w)),
    ("speedscope", |p, o, w| write_speedscope(p, o, w)),
];

fn bench_input(c: &mut Criterion, name: &str, bytes: &[u8], model: fn(&[u8]) -> Profile) {
    let profile = model(bytes);
    eprintln!(
        "export bench {name}: {} input bytes, {} nodes, {} node values, {} spans",
        bytes.len(),
        profile.nodes().len(),
        profile.node_values().len(),
        profile.spans().len()
    );
    let mut g = c.benchmark_group(format!("export {name}"));
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("model from the file", |b| {
        b.iter(|| black_box(model(bytes)).nodes().len())
    });
    let options = ExportOptions::default();
    let mut out = Vec::new();
    for &(exporter, write) in EXPORTERS {
        out.clear();
        write(&profile, &options, &mut out).expect("export");
        eprintln!("export bench {name}: {exporter} writes {} bytes", out.len());
        g.throughput(Throughput::Bytes(out.len() as u64));
        g.bench_function(exporter, |b| {
            b.iter(|| {
                out.clear();
                write(&profile, &options, &mut out).expect("export");
                out.len()
            })
        });
    }
    g.finish();
}

fn benches(c: &mut Criterion) {
    let nytprof = profcodec_benches::nytprof::file(40 << 20, None);
    bench_input(c, "nytprof", &nytprof, |b| {
        profcodec_nytprof::to_profile::to_profile(b).expect("model")
    });
    drop(nytprof);
    let capture = profcodec_benches::easyprofiler::large(72 << 20, 3_100_000, 8)
        .to_bytes()
        .expect("capture");
    bench_input(c, "easyprofiler", &capture, |b| {
        let tree = profcodec_easyprofiler::parse(b)
            .expect("parse")
            .tree()
            .expect("tree");
        tree.to_profile_with(profcodec_easyprofiler::ProfileOptions::new().spans(true))
            .expect("model")
    });
    drop(capture);
    let hpcrun = profcodec_benches::hpcrun::file(64 << 20, 1);
    bench_input(c, "hpcrun", &hpcrun, |b| {
        profcodec_hpcrun::read_measurement_prefix(b)
            .expect("measurement")
            .0
            .to_profile()
            .expect("model")
    });
}

criterion_group!(group, benches);
criterion_main!(group);
