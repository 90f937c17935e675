//! Hostile input: every corpus and testdata capture, cut at every truncation point and
//! with single-bit flips, read in both modes through every entry point, gives `Ok` or a typed
//! error, never a panic. A mutant that reads gives back its own bytes when written again. The
//! walk (`CaptureView::walk`) gives the tree's error or the tree's blocks: the same threads,
//! oddities (but the depth limit, which the tolerant walk does not check), profile, and nesting
//! in time order.

use std::path::{Path, PathBuf};

use profcodec_easyprofiler::{CaptureView, Mode, Oddity, ProfileOptions, Step, parse_with};
use profcodec_testkit::corpus::{corpus_subdir, files_below};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

fn files() -> Vec<PathBuf> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/easyprofiler");
    let mut all = files_below(&testdata);
    if let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler") {
        all.extend(files_below(&dir));
    }
    all.retain(|p| p.extension().is_some_and(|e| e == "prof"));
    assert!(all.len() >= 6);
    all
}

/// The walk gives what the tree gives.
fn walk_as_tree(view: &CaptureView<'_>) {
    let (tree, walk) = match (view.tree(), view.walk()) {
        (Ok(tree), Ok(walk)) => (tree, walk),
        (Err(a), Err(b)) => return assert_eq!(a, b),
        (a, b) => panic!("tree {:?}, walk {:?}", a.err(), b.err()),
    };
    let mut oddities = tree.oddities.clone();
    if view.mode() == Mode::Tolerant {
        oddities.retain(|o| !matches!(o, Oddity::DepthLimit { .. }));
    }
    assert_eq!(walk.oddities, oddities);
    assert_eq!(walk.blocks_kept, tree.blocks_kept);
    assert_eq!(walk.threads.len(), tree.threads.len());
    let spans = ProfileOptions::new().spans(true);
    assert_eq!(walk.to_profile_with(spans), tree.to_profile_with(spans));
    for (w, t) in walk.threads.iter().zip(&tree.threads) {
        assert_eq!(
            (w.id, w.name, w.blocks),
            (t.id, t.name, t.nodes.len() as u64)
        );
        let switches: Vec<_> = walk.context_switches(w).collect();
        assert_eq!(switches, t.context_switches);
        // The tree's pre-order, by node: entered, its children, left.
        let mut expected = Vec::new();
        let mut todo: Vec<(u32, bool)> = t.roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((i, entered)) = todo.pop() {
            let n = t.nodes[i as usize];
            expected.push((!entered, n.begin, n.end, n.descriptor));
            if !entered {
                todo.push((i, true));
                todo.extend(t.children_rev(i).map(|c| (c, false)));
            }
        }
        let steps: Vec<_> = walk
            .pre_order(w)
            .map(|s| match s {
                Step::Enter(b) => (true, b.begin, b.end, b.descriptor),
                Step::Exit(b) => (false, b.begin, b.end, b.descriptor),
            })
            .collect();
        assert_eq!(steps, expected);
    }
}

/// Every entry point, in both modes; errors are fine, panics are not.
fn read_everything(data: &[u8]) {
    // Strict mode shares the walkers; what differs is the refusal of oddities by `tree`.
    if let Ok(view) = parse_with(data, Mode::Strict) {
        walk_as_tree(&view);
    }
    let Ok(view) = parse_with(data, Mode::Tolerant) else {
        return;
    };
    walk_as_tree(&view);
    for t in view.threads() {
        let Ok(t) = t else { break };
        for cs in t.context_switches() {
            let _ = cs.map(|c| c.begin);
        }
        for r in t.records().flatten() {
            let _ = view.decode_record(&r);
            let _ = r.runtime_name();
        }
    }
    if let Ok(tree) = view.tree() {
        for th in &tree.threads {
            for i in 0..th.nodes.len() as u32 {
                let _ = th.block_index(i);
                let _ = th.children_rev(i).count();
            }
            let records: Vec<_> = tree.node_records(&view, th).collect();
            assert_eq!(records.len(), th.nodes.len());
            for r in records {
                assert!(view.record_at(r.offset).is_ok());
            }
        }
    }
    if let Ok(model) = view.to_model() {
        assert_eq!(model.to_bytes().expect("a model read is writable"), data);
    }
}

#[test]
fn truncations_give_typed_errors() {
    // The testdata files of 1.0.0, 1.3.0, 2.0.1 and 2.1.0 share their layouts with the corpus
    // files; the 1.2.0 and GUI ones add what the corpus lacks.
    for path in files() {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("small_") && !name.contains("v120") && !name.contains("gui") {
            continue;
        }
        let data = std::fs::read(&path).expect("read");
        for cut in truncation_points(data.len()) {
            read_everything(&data[..cut]);
        }
    }
}

#[test]
fn bit_flips_give_typed_errors() {
    for path in files() {
        let data = std::fs::read(&path).expect("read");
        for mutant in bit_flips(&data, 1000) {
            read_everything(&mutant);
        }
    }
}

#[test]
fn truncated_files_keep_the_records_before_the_cut() {
    for path in files() {
        let data = std::fs::read(&path).expect("read");
        let full = parse_with(&data, Mode::Tolerant).expect("parse");
        let first = full.threads().next().expect("a thread").expect("thread");
        let all: Vec<u64> = first.records().map(|r| r.expect("record").offset).collect();
        // Cut in the middle of the first thread's records: the records that end before the cut
        // come out, then one error.
        let Some(&mid) = all.get(all.len() / 2) else {
            continue;
        };
        let cut = &data[..mid as usize + 5];
        let view = parse_with(cut, Mode::Tolerant).expect("header intact");
        let t = view
            .threads()
            .next()
            .expect("a thread")
            .expect("thread head intact");
        let got: Vec<_> = t.records().collect();
        let ok = got.iter().take_while(|r| r.is_ok()).count();
        assert_eq!(ok, all.len() / 2, "{}", path.display());
        assert!(got[ok].is_err());
        assert_eq!(got.len(), ok + 1);
    }
}
