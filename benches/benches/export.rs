//! Criterion benches of the text exporters of profcodec-export (folded stacks, callgrind,
//! speedscope) on the large synthetic inputs of the format benches, each beside the cost of
//! building the model they export (see `export_inputs` for what is measured):
//!
//! - NYTProf: a 40 MiB uncompressed profile, with its call stacks;
//! - EasyProfiler: a 72 MiB capture of 3.1 M blocks over 8 threads, converted with spans (the
//!   timeline speedscope's evented profiles show);
//! - hpcrun: a 64 MiB measurement (a large CCT with several metrics).

use criterion::{Criterion, criterion_group, criterion_main};
use profcodec_export::{write_callgrind, write_folded, write_speedscope};

mod export_inputs;

use export_inputs::{Exporter, bench_input};

const EXPORTERS: &[(&str, Exporter)] = &[
    ("folded", |p, o, w| write_folded(p, o, w)),
    ("callgrind", |p, o, w| write_callgrind(p, o, w)),
    ("speedscope", |p, o, w| write_speedscope(p, o, w)),
];

fn benches(c: &mut Criterion) {
    for input in [
        export_inputs::nytprof(),
        export_inputs::easyprofiler(true),
        export_inputs::hpcrun(),
    ] {
        bench_input(c, &input, EXPORTERS, &[]);
    }
}

criterion_group!(group, benches);
criterion_main!(group);
