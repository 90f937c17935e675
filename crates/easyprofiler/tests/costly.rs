//! Inputs that cost far more than their size, each held by a count of allocated bytes
//! (the counting allocator), never a timer. The tests share the allocator, so they take turns.
//!
//! - 4 million empty descriptor slots (2 bytes each): the strict tree, which `profcodec validate`
//!   builds, allocates about 2 bytes per input byte (a 4-byte index per empty slot).
//! - A 65,000-byte descriptor name under 2,000 tiny blocks: reading it allocates nothing per block
//!   for the name; the dump writes it once, in its descriptor (the CLI's tests hold the output).
//! - The same slots in the owned model (what `rewrite --to` converts): 8 bytes each.
//! - 500,000 flat blocks: the tree and its flat form (parent and depth of every block, what the
//!   dump streams) take about 2 bytes per input byte.
//! - 200,000 empty threads (18 bytes each): about 12 bytes per input byte, the thread trees and
//!   the map that merges sections of one thread id.
//! - Nesting of 256 blocks: refused by the strict mode, read by the tolerant one.

use std::sync::Mutex;

use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Error, Mode, Oddity, Record, RecordBody, Thread, Version,
    parse_with,
};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

static TURN: Mutex<()> = Mutex::new(());

fn descriptor(id: u32, name: Vec<u8>) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line: 1,
        color: 0xff00_ff00,
        block_type: 1,
        status: 1,
        name,
        file: b"f.cpp".to_vec(),
    }))
}

fn block(begin: u64, end: u64, descriptor: u32) -> Record {
    Record {
        begin,
        end,
        descriptor,
        body: RecordBody::Named(Vec::new()),
    }
}

fn capture(descriptors: Vec<Option<Box<Descriptor>>>, records: Vec<Record>) -> Vec<u8> {
    let end = records.iter().map(|r| r.end).max().unwrap_or(0) + 1;
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: end,
        descriptors,
        threads: vec![Thread {
            id: 7,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    c.to_bytes().expect("writable")
}

/// Bytes allocated while `f` runs (printed with `--nocapture`).
fn allocated(f: impl FnOnce()) -> usize {
    let before = A.total_allocated();
    f();
    A.total_allocated() - before
}

fn report(case: &str, used: usize, input: usize) {
    println!(
        "{case}: {used} bytes allocated for {input} bytes of input ({:.2} x)",
        used as f64 / input as f64
    );
}

#[test]
fn empty_descriptor_slots_cost_four_bytes_each() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    const SLOTS: usize = 4_000_000;
    let mut descriptors = vec![None; SLOTS];
    descriptors.push(descriptor(SLOTS as u32, b"b".to_vec()));
    let data = capture(descriptors, vec![block(1, 2, SLOTS as u32)]);
    let used = allocated(|| {
        let view = parse_with(&data, Mode::Strict).expect("parse");
        let tree = view.tree().expect("strict tree");
        assert_eq!(tree.descriptors_len(), SLOTS + 1);
        assert_eq!(view.descriptors().present().len(), 1);
        assert_eq!(tree.totals().len(), 1);
    });
    report("empty slots", used, data.len());
    // The slot index: 4 bytes per 2-byte slot.
    assert!(
        used <= 2 * data.len() + (1 << 20),
        "{used} bytes allocated for {} bytes of input",
        data.len()
    );
}

#[test]
fn the_owned_model_holds_an_empty_slot_in_eight_bytes() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    const SLOTS: usize = 2_000_000;
    let mut descriptors = vec![None; SLOTS];
    descriptors.push(descriptor(SLOTS as u32, b"b".to_vec()));
    let data = capture(descriptors, vec![block(1, 2, SLOTS as u32)]);
    let used = allocated(|| {
        let model = parse_with(&data, Mode::Tolerant)
            .and_then(|v| v.to_model())
            .expect("model");
        assert_eq!(model.descriptors.len(), SLOTS + 1);
    });
    report("empty slots, owned model", used, data.len());
    // The view's slot index (2 x) and the model's boxes (4 x).
    assert!(
        used <= 6 * data.len() + (1 << 20),
        "{used} bytes allocated for {} bytes of input",
        data.len()
    );
}

#[test]
fn a_long_name_is_read_once_however_many_blocks_use_it() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let name = vec![b'n'; 65_000];
    let records = (0..2_000u64).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
    let data = capture(vec![descriptor(0, name)], records);
    assert!(data.len() < 120_000);
    let mut names = 0usize;
    let used = allocated(|| {
        let view = parse_with(&data, Mode::Strict).expect("parse");
        let tree = view.tree().expect("tree");
        for th in &tree.threads {
            for (flat, raw) in th.flat().zip(tree.node_records(&view, th)) {
                view.decode_record(&raw).expect("record");
                names += tree
                    .descriptor(flat.node.descriptor)
                    .expect("d")
                    .name()
                    .len();
            }
        }
    });
    assert_eq!(names, 2_000 * 65_000, "every block sees the name");
    report("long name", used, data.len());
    assert!(used <= 2 * data.len(), "{used} bytes allocated");
}

#[test]
fn flat_blocks_cost_a_small_multiple_of_the_input() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    const BLOCKS: u64 = 500_000;
    let records = (0..BLOCKS).map(|i| block(2 * i, 2 * i + 1, 0)).collect();
    let data = capture(vec![descriptor(0, b"flat".to_vec())], records);
    let mut seen = 0u64;
    let used = allocated(|| {
        let view = parse_with(&data, Mode::Strict).expect("parse");
        let tree = view.tree().expect("tree");
        for th in &tree.threads {
            for (flat, raw) in th.flat().zip(tree.node_records(&view, th)) {
                assert_eq!((flat.parent, flat.depth), (None, 0));
                view.decode_record(&raw).expect("record");
                seen += 1;
            }
        }
    });
    assert_eq!(seen, BLOCKS);
    report("flat blocks", used, data.len());
    // 24 bytes a node, the roots and their depths while building (vectors that double), then 8
    // bytes a node for the flat form; a record takes 23 bytes on disk.
    assert!(
        used <= 3 * data.len(),
        "{used} bytes allocated for {} bytes of input",
        data.len()
    );
}

#[test]
fn many_empty_threads_cost_a_bounded_multiple() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // 200,000 thread sections of 18 bytes (id, empty name, no context switch, no record).
    const THREADS: u64 = 200_000;
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        end_time: 10,
        descriptors: vec![descriptor(0, b"b".to_vec())],
        threads: (0..THREADS)
            .map(|id| Thread {
                id,
                name: None,
                context_switches: Vec::new(),
                records: Vec::new(),
            })
            .collect(),
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    let data = c.to_bytes().expect("writable");
    drop(c);
    let used = allocated(|| {
        let view = parse_with(&data, Mode::Tolerant).expect("parse");
        let tree = view.tree().expect("tree");
        assert_eq!(tree.threads.len(), THREADS as usize);
    });
    report("empty threads", used, data.len());
    // A thread's tree (144 bytes), its one section and its entry in the id map, for 18 bytes
    // of input; the 2.1 thread count sizes the list and the map once.
    assert!(
        used <= 12 * data.len(),
        "{used} bytes allocated for {} bytes of input",
        data.len()
    );
}

#[test]
fn nesting_beyond_the_cpp_limit_is_refused_when_strict() {
    let _turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    // Innermost first: block k spans (k, 1000 - k); 256 levels give the outermost block 255
    // levels below it, one more than the C++ reader takes.
    let nest = |levels: u64| {
        let records = (0..levels)
            .rev()
            .map(|k| block(k + 1, 1000 - k, 0))
            .collect();
        capture(vec![descriptor(0, b"b".to_vec())], records)
    };
    let ok = nest(255);
    let tree = parse_with(&ok, Mode::Strict)
        .and_then(|v| v.tree())
        .expect("255 levels read");
    let deepest = tree.threads[0].flat().map(|f| f.depth).max();
    assert_eq!(deepest, Some(254));
    let deep = nest(256);
    assert!(matches!(
        parse_with(&deep, Mode::Strict).and_then(|v| v.tree()),
        Err(Error::Refused(Oddity::DepthLimit { .. }))
    ));
    let tree = parse_with(&deep, Mode::Tolerant)
        .and_then(|v| v.tree())
        .expect("tolerant");
    assert!(
        tree.oddities
            .iter()
            .any(|o| matches!(o, Oddity::DepthLimit { .. }))
    );
}
