//! Criterion benches of profcodec-easyprofiler (filled in by the easyprofiler work).

use criterion::{Criterion, criterion_group, criterion_main};

fn benches(_c: &mut Criterion) {}

criterion_group!(group, benches);
criterion_main!(group);
