//! The large inputs of the exporter benches (`export`, `export_binary`) and how each is benched:
//! building its model from the input's bytes (what `profcodec convert` does first), then each
//! exporter writing that model into memory, its throughput in output bytes. The output buffer
//! is kept from one run to the next, as a file's buffer would be, so that the figures are the
//! exporter's and not the growth of a fresh buffer.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, Throughput};
use profcodec_benches::hpctoolkit::SyntheticConfig;
use profcodec_export::{ExportError, ExportOptions};
use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
use profcodec_profile::Profile;

/// One large input: its name, its size, and how its model is built from bytes the closure holds.
pub(crate) struct Input {
    pub(crate) name: String,
    /// The input's size on disk.
    pub(crate) bytes: u64,
    pub(crate) build: Box<dyn Fn() -> Profile>,
}

/// An exporter as the benches call it.
pub(crate) type Exporter = fn(&Profile, &ExportOptions, &mut Vec<u8>) -> Result<(), ExportError>;

/// A 40 MiB uncompressed NYTProf profile (`cargo xtask gen-nytprof`'s generator), with its
/// call stacks.
#[allow(dead_code, reason = "each bench uses its own inputs")]
pub(crate) fn nytprof() -> Input {
    let data = profcodec_benches::nytprof::file(40 << 20, None);
    Input {
        name: "nytprof-40MB".to_owned(),
        bytes: data.len() as u64,
        build: Box::new(move || profcodec_nytprof::to_profile::to_profile(&data).expect("model")),
    }
}

/// A 64 MiB synthetic hpcrun measurement (`profcodec_benches::hpcrun::file`): a deep call tree
/// with several metrics per node, one thread.
pub(crate) fn hpcrun() -> Input {
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

/// The 72 MB synthetic capture of the EasyProfiler bench (8 threads, 3.1 M blocks), as a call
/// tree, or with every block as a span (the timeline).
pub(crate) fn easyprofiler(spans: bool) -> Input {
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

/// A synthetic HPCToolkit database (8 thread profiles, 200,000 contexts, 2 metrics measured
/// self and inclusive) with every profile in the model, and hatchet's gamess database from the
/// corpus when present (65 profiles, 44 metrics).
#[allow(dead_code, reason = "each bench uses its own inputs")]
pub(crate) fn hpctoolkit() -> Vec<Input> {
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
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        inputs.push(hpctoolkit_database(
            "hatchet-gamess",
            root.join("hatchet-gamess"),
        ));
    }
    inputs
}

/// Benches building `input`'s model, then each of `exporters` on it, in the group `export`:
/// `model/INPUT`, `EXPORTER/INPUT`. An exporter named in `skip_with_spans` is left out for a
/// model with spans (pprof has no timeline).
pub(crate) fn bench_input(
    c: &mut Criterion,
    input: &Input,
    exporters: &[(&str, Exporter)],
    skip_with_spans: &[&str],
) {
    let profile = (input.build)();
    let with_spans = !profile.spans().is_empty();
    eprintln!(
        "{}: {} bytes in, {} nodes, {} node values, {} spans",
        input.name,
        input.bytes,
        profile.nodes().len(),
        profile.node_values().len(),
        profile.spans().len(),
    );
    let mut g = c.benchmark_group("export");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(input.bytes));
    g.bench_function(BenchmarkId::new("model", &input.name), |b| {
        b.iter(|| black_box((input.build)()).nodes().len())
    });
    let options = ExportOptions::default();
    let mut out = Vec::new();
    for &(exporter, write) in exporters {
        if with_spans && skip_with_spans.contains(&exporter) {
            continue;
        }
        out.clear();
        write(&profile, &options, &mut out).expect("export");
        eprintln!("{}: {exporter} writes {} bytes", input.name, out.len());
        g.throughput(Throughput::Bytes(out.len() as u64));
        g.bench_function(BenchmarkId::new(exporter, &input.name), |b| {
            b.iter(|| {
                out.clear();
                write(&profile, &options, &mut out).expect("export");
                out.len()
            })
        });
    }
    g.finish();
}
