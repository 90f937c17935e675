//! Criterion benches of profcodec-hpctoolkit (filled in by the hpctoolkit work).

use criterion::{Criterion, criterion_group, criterion_main};

fn benches(_c: &mut Criterion) {}

criterion_group!(group, benches);
criterion_main!(group);
