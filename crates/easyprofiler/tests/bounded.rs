//! Memory bounded by the answer, not by the blocks: the profile model (`Walk::to_profile`, what
//! `profcodec top` and `convert` read), the walk in time order (`Walk::pre_order`) and the
//! Perfetto and Chrome timelines (`timeline::write_timeline`) of a capture run under the same
//! allocation cap, 4 MiB over what is allocated before each conversion starts (the input),
//! whether the capture holds 170,000 or 680,000 blocks; holding one node per block (a block tree
//! takes 24 bytes a block: 16 MB for the larger) cannot pass. Going over the cap makes the
//! allocation fail, which aborts this test binary. Each conversion allocates under 3 MB in all
//! at both sizes (printed with `--nocapture`).
//!
//! The captures are the worst shape for a reader that nests blocks as it reads: every frame
//! (a frame block over 3 stages of 4 leaves, and a value) of the first thread lies inside one
//! block that spans the thread and is stored last, so no frame's nesting is known before the
//! thread's end. The inspection verbs (`validate`, `info`, `dump` in both layouts) and every
//! table (batches of 8192 rows) run under the same cap at both sizes. The verbs allocate under
//! 3 MB in all; a table allocates each batch afresh, so its total grows with its rows while it
//! holds one batch at a time.
//!
//! The tests of this binary run one at a time (the cap is one process-wide limit), in their
//! own binary, so no other test allocates meanwhile.

use std::path::Path;

use profcodec_common::Source;
use profcodec_common::inspect::{Dump, DumpLayout, DumpOptions};
use profcodec_easyprofiler::inspect;
use profcodec_easyprofiler::profcodec_profile::Query;
use profcodec_easyprofiler::tables::{SET, TableReader};
use profcodec_easyprofiler::timeline::write_timeline;
use profcodec_easyprofiler::{
    Capture, ContextSwitch, Convention, DataType, Descriptor, Record, RecordBody, Step, Thread,
    Value, Version, parse,
};
use profcodec_tables::{ScanOptions, SourceTables};
use profcodec_timeline::{Filter, Format, TimelineWriter};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// What a conversion may allocate beyond its input, at its peak.
const CAP: usize = 4 << 20;

const FRAME: u32 = 0;
const STAGE: u32 = 1;
const LEAF: u32 = 2;
const MAIN: u32 = 3;
const VALUE: u32 = 4;

fn descriptor(id: u32, block_type: u8, name: &str) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line: 10 + id as i32,
        block_type,
        name: name.as_bytes().to_vec(),
        file: b"game.cpp".to_vec(),
        ..Descriptor::default()
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

/// Two threads of `frames` frames each; the first thread's frames inside one spanning block.
fn capture(frames: u64) -> Vec<u8> {
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 7,
        cpu_frequency: 0,
        begin_time: 0,
        descriptors: vec![
            descriptor(FRAME, 1, "frame"),
            descriptor(STAGE, 1, "stage"),
            descriptor(LEAF, 1, "leaf"),
            descriptor(MAIN, 1, "main loop"),
            descriptor(VALUE, 2, "frame_no"),
        ],
        ..Capture::default()
    };
    for id in 1..=2u64 {
        let mut records = Vec::new();
        let mut t = 10;
        for f in 0..frames {
            let frame = t;
            t += 1;
            for _ in 0..3 {
                let stage = t;
                t += 1;
                for _ in 0..4 {
                    records.push(block(t, t + 5, LEAF));
                    t += 6;
                }
                records.push(block(stage, t, STAGE));
                t += 1;
            }
            records.push(Record {
                begin: t,
                end: t,
                descriptor: VALUE,
                body: RecordBody::Value(Value {
                    stub: [0, 0],
                    data_type: DataType::Uint64 as u8,
                    is_array: 0,
                    value_id: 1,
                    data: f.to_le_bytes().to_vec(),
                }),
            });
            t += 1;
            records.push(block(frame, t, FRAME));
            t += 2;
        }
        if id == 1 {
            records.push(block(5, t, MAIN));
        }
        c.end_time = c.end_time.max(t + 1);
        c.threads.push(Thread {
            id,
            name: Some(format!("worker {id}").into_bytes()),
            context_switches: (0..frames / 100)
                .map(|k| ContextSwitch {
                    begin: k * 5000,
                    end: k * 5000 + 10,
                    target_tid: 99,
                    name: b"other".to_vec(),
                })
                .collect(),
            records,
        });
    }
    c.update_counters(Convention::Runtime);
    c.to_bytes().expect("writable")
}

/// Runs `f` under this binary's allocation cap ([`CAP`] beyond what is allocated now).
fn capped<T>(f: impl FnOnce() -> T) -> (T, usize) {
    profcodec_testkit::hostile::capped(&A, CAP, f)
}

/// Held by each test for its whole run: the cap is process-wide, so no other test may allocate
/// meanwhile.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn conversions_stay_under_one_cap_whatever_the_block_count() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut nodes = Vec::new();
    for frames in [5_000u64, 20_000] {
        let data = capture(frames);
        let blocks = frames * 17 * 2 + 1;
        let view = parse(&data).expect("parse");

        let (rows, total) = capped(|| {
            let walk = view.walk().expect("walk");
            let profile = walk.to_profile().expect("profile");
            let top = profile.top(&Query::new()).expect("top");
            (profile.nodes().len(), top.rows.len())
        });
        println!("{blocks} blocks: profile and top allocated {total} bytes in all");
        nodes.push(rows);

        let (steps, total) = capped(|| {
            let walk = view.walk().expect("walk");
            let mut steps = 0u64;
            for th in &walk.threads {
                for step in walk.pre_order(th) {
                    if let Step::Enter(_) = step {
                        steps += 1;
                    }
                }
            }
            steps
        });
        println!("{blocks} blocks: the walk in time order allocated {total} bytes in all");
        assert_eq!(steps, blocks);

        for format in [Format::Perfetto, Format::Chrome] {
            let (summary, total) = capped(|| {
                let mut w = TimelineWriter::new(std::io::sink(), format, Filter::new());
                let source = Source::file(Path::new("capture.prof"), &data);
                let summary = write_timeline(&source, &mut w.timeline()).expect("timeline");
                w.finish().expect("finish");
                summary
            });
            println!("{blocks} blocks: {format:?} allocated {total} bytes in all");
            // Values are counters; every other block, every context switch and the capture
            // are slices.
            let switches = 2 * (frames / 100);
            assert_eq!(
                summary.slices + summary.counter_values,
                blocks + switches + 1
            );
        }
    }
    // The same call paths at both sizes.
    assert_eq!(nodes[0], nodes[1]);
}

/// Runs the inspection verbs and reads every table of `data` under the cap; gives what each
/// allocated in all.
fn inspect_and_tables(data: &[u8], blocks: u64) -> Vec<(String, usize)> {
    let mut totals = Vec::new();
    let source = Source::file(Path::new("capture.prof"), data);

    let (validated, total) = capped(|| inspect::validate(&source).expect("validate"));
    assert!(validated.findings.is_empty(), "{validated:?}");
    totals.push(("validate".to_owned(), total));

    let (info, total) = capped(|| inspect::info(&source).expect("info"));
    let counted = ["blocks", "events", "values"]
        .iter()
        .map(|k| info.details[*k].as_u64().expect("a count"))
        .sum::<u64>();
    assert_eq!(counted, blocks);
    totals.push(("info".to_owned(), total));

    for layout in [DumpLayout::Ndjson, DumpLayout::Json] {
        let (records, total) = capped(|| {
            let mut out = Counted(0);
            let options = DumpOptions {
                layout,
                pretty: false,
            };
            let mut dump = Dump::new(&mut out, options);
            inspect::dump(&source, &mut dump).expect("dump");
            dump.finish().expect("finish");
            out.0
        });
        // Each block's record names its parent.
        assert!(records > blocks, "{records} lines");
        totals.push((format!("dump {layout:?}"), total));
    }

    let reader = TableReader::open(&source).expect("open");
    // The batch size bounds the rows held at once (arrow builders of 8192 rows, about 400 kB).
    let options = ScanOptions::new().batch_rows(8192);
    for def in SET.tables() {
        let (rows, total) = capped(|| {
            let mut rows = 0;
            for batch in reader.batches(source, def.name, &options).expect("batches") {
                rows += batch.expect("batch").num_rows() as u64;
            }
            rows
        });
        if def.name == "blocks" {
            assert_eq!(rows, blocks);
        }
        totals.push((format!("table {}", def.name), total));
    }
    totals
}

/// A sink that counts the records (lines and commas) written into it.
struct Counted(u64);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.iter().filter(|&&b| b == b'\n' || b == b'{').count() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn inspection_and_tables_stay_under_one_cap_whatever_the_block_count() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    for frames in [5_000u64, 20_000] {
        let data = capture(frames);
        let blocks = frames * 17 * 2 + 1;
        for (what, total) in inspect_and_tables(&data, blocks) {
            println!("{blocks} blocks: {what} allocated {total} bytes in all");
        }
    }
}
