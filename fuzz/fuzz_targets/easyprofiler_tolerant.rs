#![no_main]
//! EasyProfiler in tolerant mode: every entry point (header, thread and record iterators, the
//! block tree, the walk, the owned model). Whatever reads into the model must write back to its
//! own bytes; the walk must give the tree's error or the tree's profile.
use profcodec_easyprofiler::{Mode, parse_with};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(view) = parse_with(data, Mode::Tolerant) else {
        return;
    };
    for t in view.threads() {
        let Ok(t) = t else { break };
        for cs in t.context_switches() {
            let _ = cs;
        }
        for r in t.records().flatten() {
            let _ = view.decode_record(&r);
        }
    }
    if let Ok(tree) = view.tree() {
        for th in &tree.threads {
            for r in tree.node_records(&view, th) {
                let _ = view.record_at(r.offset);
            }
            for i in 0..th.nodes.len() as u32 {
                let _ = th.children_rev(i).count();
                let _ = th.block_index(i);
            }
        }
    }
    match (view.tree(), view.walk()) {
        (Ok(tree), Ok(walk)) => {
            assert_eq!(walk.to_profile().ok(), tree.to_profile().ok());
            for th in &walk.threads {
                let _ = walk.pre_order(th).count();
                let _ = walk.context_switches(th).count();
            }
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("tree {:?}, walk {:?}", a.err(), b.err()),
    }
    if let Ok(model) = view.to_model() {
        assert_eq!(model.to_bytes().expect("a model read is writable"), data);
    }
});
