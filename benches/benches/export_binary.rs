//! Criterion benches of the pprof and Firefox Profiler exporters (`profcodec-export`) on large
//! inputs, each beside the cost of building the model they export (see `export_inputs` for what
//! is measured):
//!
//! - hpcrun: a 64 MiB synthetic measurement: a deep call tree with several metrics per node,
//!   one thread;
//! - HPCToolkit: a synthetic database (8 thread profiles, 200,000 contexts, 2 metrics measured
//!   self and inclusive) with every profile in the model, and hatchet's gamess database from the
//!   corpus when present (65 profiles, 44 metrics);
//! - EasyProfiler: the 72 MB synthetic capture of its own bench (8 threads, 3.1 M blocks), as a
//!   call tree, and for the Firefox Profiler also with every block as a span (its markers).

use criterion::{Criterion, criterion_group, criterion_main};
use profcodec_export::firefox::write_firefox;
use profcodec_export::pprof::write_pprof;

mod export_inputs;

use export_inputs::{Exporter, bench_input};

const EXPORTERS: &[(&str, Exporter)] = &[
    ("pprof", |p, o, w| write_pprof(p, o, w)),
    ("firefox", |p, o, w| write_firefox(p, o, w)),
];

fn benches(c: &mut Criterion) {
    let mut inputs = vec![export_inputs::hpcrun()];
    inputs.extend(export_inputs::hpctoolkit());
    inputs.push(export_inputs::easyprofiler(false));
    inputs.push(export_inputs::easyprofiler(true));
    for input in &inputs {
        // pprof has no timeline: the spans add nothing to it.
        bench_input(c, input, EXPORTERS, &["pprof"]);
    }
}

criterion_group!(group, benches);
criterion_main!(group);
