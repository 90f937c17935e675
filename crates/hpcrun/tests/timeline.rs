//! Every measurement folder with traces converts into a timeline, and what the output holds is
//! judged against hpcviewer's depth rule computed naively, sample by sample, from the reader's
//! traces and profiles (`profcodec_testkit::timeline::reference`): the Chrome output parsed as
//! JSON, the Perfetto output decoded by Perfetto's own generated classes when
//! `PROFCODEC_PERFETTO_PYTHON` names a Python with `perfetto` installed (`cargo xtask test` sets
//! it). Tracks, slices, names, nesting and timestamps must be equal.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::PathBuf;

use profcodec_common::Source;
use profcodec_hpcrun::timeline::write_timeline;
use profcodec_hpcrun::{MeasurementFolder, ProfileConverter};
use profcodec_profile::NodeId;
use profcodec_testkit::timeline::{check_sampled, reference};

fn corpus() -> Option<PathBuf> {
    profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn hpcrun_traces_are_hpcviewer_depth_slices() {
    let Some(c) = corpus() else { return };
    let mut folders: Vec<PathBuf> = std::fs::read_dir(c.join("hpctoolkit/meas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            std::fs::read_dir(p).unwrap().any(|f| {
                f.unwrap()
                    .path()
                    .extension()
                    .is_some_and(|e| e == "hpctrace")
            })
        })
        .collect();
    folders.sort();
    assert!(folders.len() >= 6);
    for dir in folders {
        let folder = MeasurementFolder::open(&dir).unwrap();
        let mut expected = Vec::new();
        let mut tracks = 0;
        let mut ranks = std::collections::BTreeSet::new();
        for thread in folder.threads() {
            let Some(trace) = thread.read_trace() else {
                continue;
            };
            let trace = trace.unwrap();
            let m = thread.read_profile().unwrap().unwrap();
            let mut converter = ProfileConverter::new();
            let (context, nodes) = converter.add_with_nodes(&m, Some(thread)).unwrap();
            let profile = converter.finish();
            let ids = &profile.context(context).ids;
            ranks.insert(
                ids.iter()
                    .find(|(k, _)| *k == profcodec_profile::IdKind::Rank)
                    .map_or(0, |i| i.1),
            );
            let label = ids
                .iter()
                .map(|&(k, v)| format!("{} {v}", k.name().unwrap().replace('_', "").to_uppercase()))
                .collect::<Vec<_>>()
                .join(" / ");
            let node = |ctx: u32| {
                nodes
                    .binary_search_by_key(&(ctx as i32), |e| e.0)
                    .ok()
                    .map(|i| nodes[i].1)
            };
            let samples: Vec<(u64, Option<NodeId>)> = trace
                .records
                .iter()
                .map(|r| (r.time, node(r.ctx)))
                .collect();
            let last = samples.last().map_or(0, |s| s.0);
            let end = m
                .header_value("trace-max-time")
                .and_then(|v| v.to_string_lossy().parse::<u64>().ok())
                .unwrap_or(last)
                .max(last);
            expected.extend(reference(&label, &profile, &samples, end));
            tracks += 1;
        }
        expected.sort();
        check_sampled(
            &dir.display().to_string(),
            |timeline| write_timeline(&Source::file(&dir, &[]), timeline),
            &expected,
            tracks + ranks.len(),
        );
    }
}
