//! Criterion benches of profcodec-easyprofiler on a large capture generated with the crate's own
//! writer (`profcodec_benches::easyprofiler::large`): a 2.1.0 runtime-writer capture of at least
//! 70 MiB and 3 million records over 8 threads.
//!
//! - `raw record scan`: parse, walk every thread and every record through the zero-copy
//!   iterators, reading begin, end and descriptor id.
//! - `full tree build`: parse and build every thread's block tree as the C++ reader does
//!   (ticks to ns, runtime names, adoption, counters checked).
//! - `tree build, reused buffers`: the same, in the node memory of the previous build
//!   (`CaptureView::tree_with`), without the page faults of fresh memory.
//! - `flat form and totals`: on a built tree, every node's parent and depth
//!   (`ThreadTree::flat`, what `profcodec dump` streams) and the per-descriptor totals.
//! - `to_model` and `write`: the owned model and back.
//! - `profile model + top-20`: parse, build the tree, convert it into the format-neutral profile
//!   model (`BlockTree::to_profile`, no spans) and rank the top 20 blocks by self time: what
//!   `profcodec top` does, to compare with `full tree build` (the target is at most 2x).
//! - `to_profile + top-20, built tree`: the conversion and the query alone.
//! - `walk: profile model + top-20`: what `profcodec top` does since the blocks are walked from
//!   the file instead of held in a tree: parse, the forward pass (`CaptureView::walk`), the walk
//!   back over every thread into the profile model (`Walk::to_profile`) and the top 20.
//! - `walk: pre-order`: the forward pass and every thread's blocks in time order
//!   (`Walk::pre_order`), what `profcodec convert --to perfetto` reads.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use profcodec_easyprofiler::parse;
use profcodec_easyprofiler::profcodec_profile::Query;

fn benches(c: &mut Criterion) {
    let capture = profcodec_benches::easyprofiler::large(72 << 20, 3_100_000, 8);
    let data = capture.to_bytes().expect("write the generated capture");
    let records: usize = capture.threads.iter().map(|t| t.records.len()).sum();
    eprintln!(
        "easyprofiler bench input: {} bytes, {records} records",
        data.len()
    );
    let mut g = c.benchmark_group("easyprofiler");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("raw record scan", |b| {
        b.iter(|| {
            let view = parse(&data).expect("parse");
            let mut acc = 0u64;
            for t in view.threads() {
                for r in t.expect("thread").records() {
                    let r = r.expect("record");
                    acc = acc.wrapping_add(r.begin() ^ r.end() ^ u64::from(r.descriptor()));
                }
            }
            acc
        })
    });
    g.bench_function("full tree build", |b| {
        b.iter(|| {
            let tree = parse(&data).expect("parse").tree().expect("tree");
            tree.blocks_kept
        })
    });
    let mut buffers = Some(
        parse(&data)
            .expect("parse")
            .tree()
            .expect("tree")
            .into_buffers(),
    );
    g.bench_function("tree build, reused buffers", |b| {
        b.iter(|| {
            let view = parse(&data).expect("parse");
            let tree = view
                .tree_with(buffers.take().unwrap_or_default())
                .expect("tree");
            let kept = tree.blocks_kept;
            buffers = Some(tree.into_buffers());
            kept
        })
    });
    let view = parse(&data).expect("parse");
    let tree = view.tree().expect("tree");
    g.bench_function("flat form and totals", |b| {
        b.iter(|| {
            let mut depth = 0u64;
            for th in &tree.threads {
                depth += th.flat().map(|f| u64::from(f.depth)).sum::<u64>();
            }
            (depth, tree.totals().len())
        })
    });
    let top20 = Query::new().limit(20);
    let profile = tree.to_profile().expect("profile");
    eprintln!(
        "easyprofiler profile model: {} call-tree nodes, {} node values",
        profile.nodes().len(),
        profile.node_values().len()
    );
    g.bench_function("profile model + top-20", |b| {
        b.iter(|| {
            let tree = parse(&data).expect("parse").tree().expect("tree");
            let profile = tree.to_profile().expect("profile");
            profile.top(&top20).expect("top").rows.len()
        })
    });
    g.bench_function("to_profile + top-20, built tree", |b| {
        b.iter(|| {
            let profile = tree.to_profile().expect("profile");
            profile.top(&top20).expect("top").rows.len()
        })
    });
    g.bench_function("walk: profile model + top-20", |b| {
        b.iter(|| {
            let walk = parse(&data).expect("parse").walk().expect("walk");
            let profile = walk.to_profile().expect("profile");
            profile.top(&top20).expect("top").rows.len()
        })
    });
    g.bench_function("walk: pre-order", |b| {
        b.iter(|| {
            let walk = parse(&data).expect("parse").walk().expect("walk");
            let mut acc = 0u64;
            for th in &walk.threads {
                for step in walk.pre_order(th) {
                    if let profcodec_easyprofiler::Step::Enter(b) = step {
                        acc = acc.wrapping_add(b.begin);
                    }
                }
            }
            acc
        })
    });
    g.bench_function("to_model", |b| {
        b.iter(|| parse(&data).expect("parse").to_model().expect("model"))
    });
    g.bench_function("write", |b| b.iter(|| capture.to_bytes().expect("write")));
    g.finish();
}

criterion_group!(group, benches);
criterion_main!(group);
