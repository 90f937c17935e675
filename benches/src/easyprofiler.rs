//! Captures for the easyprofiler format, written with `profcodec-easyprofiler`'s own writer:
//! large ones for the bench (`benches/benches/easyprofiler.rs`, `cargo xtask gen-easyprofiler
//! large`) and the small ones of `testdata/easyprofiler/` (`cargo xtask gen-easyprofiler
//! testdata`).
//!
//! The shape follows the corpus program (gen_sample.cpp): per thread, frames holding stages
//! (half of them runtime-named `stage_N`), leaves, events inside leaves and one value per stage,
//! stored in post-order as the library stores them; a few context switches per thread.

use profcodec_easyprofiler::{
    Bookmark, Capture, ContextSwitch, Convention, Descriptor, Record, RecordBody, Thread, Value,
    Version,
};

use crate::Rng;

const FRAME: u32 = 0;
const STAGE: u32 = 1;
const LEAF: u32 = 2;
const EVENT: u32 = 3;
const VALUE: u32 = 4;
const TEXT: u32 = 5;

fn descriptor(
    id: u32,
    block_type: u8,
    name: &str,
    line: i32,
    color: u32,
) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line,
        color,
        block_type,
        status: 1,
        name: name.as_bytes().to_vec(),
        file: b"gen/gen_bench.cpp".to_vec(),
    }))
}

fn block(begin: u64, end: u64, descriptor: u32, name: &[u8]) -> Record {
    Record {
        begin,
        end,
        descriptor,
        body: RecordBody::Named(name.to_vec()),
    }
}

fn value(t: u64, descriptor: u32, data_type: u8, is_array: u8, data: Vec<u8>) -> Record {
    Record {
        begin: t,
        end: t,
        descriptor,
        body: RecordBody::Value(Value {
            stub: [0, 0],
            data_type,
            is_array,
            value_id: 0x7f00_0000_1000 + u64::from(descriptor) * 8,
            data,
        }),
    }
}

/// Appends one frame's records (post-order) starting at tick `t`; returns the tick after it.
fn frame(rng: &mut Rng, values: bool, records: &mut Vec<Record>, mut t: u64) -> u64 {
    let frame_begin = t;
    t += 3;
    for s in 0..4u32 {
        let stage_begin = t;
        t += 2;
        for _ in 0..6 {
            let leaf_begin = t;
            if rng.below(2) == 0 {
                let e = t + 1 + rng.below(4);
                records.push(block(e, e, EVENT, b""));
            }
            t += 8 + rng.below(8);
            records.push(block(leaf_begin, t, LEAF, b""));
            t += 1;
        }
        if values {
            let v = (rng.next_u64() as u32).to_le_bytes().to_vec();
            records.push(value(t, VALUE, 7, 0, v));
        }
        t += 2;
        let name: &[u8] = match s {
            0 => b"stage_0",
            1 => b"stage_1",
            _ => b"",
        };
        records.push(block(stage_begin, t, STAGE, name));
        t += 1;
    }
    t += 2;
    records.push(block(frame_begin, t, FRAME, b""));
    t + 5
}

fn descriptors(values: bool) -> Vec<Option<Box<Descriptor>>> {
    let mut d = vec![
        descriptor(FRAME, 1, "frame", 39, 0xffe0_40fb),
        descriptor(STAGE, 1, "gen/gen_bench.cpp:27", 27, 0xffff_9800),
        descriptor(LEAF, 1, "leaf", 21, 0xff4c_af50),
        descriptor(EVENT, 0, "stage event", 29, 0xfff4_4336),
    ];
    if values {
        d.push(descriptor(VALUE, 2, "frame_no", 40, 0xffff_ecb3));
        d.push(descriptor(TEXT, 2, "msg", 48, 0xffff_ecb3));
    }
    d
}

/// A runtime-writer capture (2.1.0, rdtsc ticks at 2.6 GHz) of at least `min_bytes` bytes and
/// `min_records` records, spread over `threads` threads.
pub fn large(min_bytes: u64, min_records: u64, threads: u32) -> Capture {
    let mut rng = Rng::new(0x00ea_5e9f);
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 4242,
        cpu_frequency: 2_600_000_000,
        begin_time: 1_000_000,
        descriptors: descriptors(true),
        ..Capture::default()
    };
    let threads = threads.max(1);
    let per_thread_bytes = min_bytes / u64::from(threads) + 1;
    let per_thread_records = min_records / u64::from(threads) + 1;
    let mut end = 0;
    for i in 0..threads {
        let mut records = Vec::new();
        let mut bytes = 0u64;
        let mut t = c.begin_time + u64::from(i) * 7;
        while bytes < per_thread_bytes || (records.len() as u64) < per_thread_records {
            let before = records.len();
            t = frame(&mut rng, true, &mut records, t);
            bytes += records[before..]
                .iter()
                .map(|r| 2 + r.encoded_size() as u64)
                .sum::<u64>();
        }
        let context_switches = (0..100u64)
            .map(|k| ContextSwitch {
                begin: c.begin_time + k * 10_000,
                end: c.begin_time + k * 10_000 + 500,
                target_tid: 9000 + k % 3,
                name: b"other_task".to_vec(),
            })
            .collect();
        end = end.max(t);
        c.threads.push(Thread {
            id: 1000 + u64::from(i),
            name: Some(format!("Worker {i}").into_bytes()),
            context_switches,
            records,
        });
    }
    c.end_time = end;
    c.update_counters(Convention::Runtime);
    c
}

/// The capture `cargo xtask bench-peers easyprofiler` reads: `threads` threads of `frames` frames,
/// each frame one frame block holding 10 middle blocks of 4 leaf blocks each and one value
/// (runtime writer 2.1.0, rdtsc ticks at 2.6 GHz, no names given at run time, as
/// `EASY_BLOCK("name")` writes them), so 51 blocks and one value per frame.
pub fn frames(threads: u32, frames: u32) -> Capture {
    let mut rng = Rng::new(0x00f7_a3e5);
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 4242,
        cpu_frequency: 2_600_000_000,
        begin_time: 1_000_000,
        descriptors: descriptors(true),
        ..Capture::default()
    };
    let mut end = 0;
    for i in 0..threads {
        let mut records = Vec::new();
        let mut t = c.begin_time + u64::from(i) * 7;
        for _ in 0..frames {
            let frame_begin = t;
            t += 3;
            for _ in 0..10 {
                let middle_begin = t;
                t += 2;
                for _ in 0..4 {
                    let leaf_begin = t;
                    t += 8 + rng.below(8);
                    records.push(block(leaf_begin, t, LEAF, b""));
                    t += 1;
                }
                t += 2;
                records.push(block(middle_begin, t, STAGE, b""));
                t += 1;
            }
            let v = (rng.next_u64() as u32).to_le_bytes().to_vec();
            records.push(value(t, VALUE, 7, 0, v));
            t += 2;
            records.push(block(frame_begin, t, FRAME, b""));
            t += 5;
        }
        end = end.max(t);
        c.threads.push(Thread {
            id: 1000 + u64::from(i),
            name: Some(format!("Worker {i}").into_bytes()),
            context_switches: Vec::new(),
            records,
        });
    }
    c.end_time = end;
    c.update_counters(Convention::Runtime);
    c
}

/// A small capture of `version` (every version the writer supports: 1.0.0, 1.2.0, 1.3.0, 2.0.1,
/// 2.1.0): two threads of two frames, context switches, runtime-named blocks, events, and from
/// 2.0 values of several types (scalar, array, text with and without its NUL).
pub fn small(version: Version) -> Capture {
    let layout = version.layout();
    let values = layout.has_values();
    let mut rng = Rng::new(7);
    let mut c = Capture {
        version,
        pid: if layout == profcodec_easyprofiler::Layout::V1NoPid {
            0
        } else {
            31337
        },
        cpu_frequency: 2_600_000_000,
        begin_time: 10_000,
        descriptors: descriptors(values),
        ..Capture::default()
    };
    let mut t = 10_100;
    for i in 0..2u64 {
        let mut records = Vec::new();
        for _ in 0..2 {
            t = frame(&mut rng, values, &mut records, t);
        }
        if values {
            records.push(value(t, TEXT, 12, 1, b"hello\0".to_vec()));
            records.push(value(t + 1, TEXT, 12, 1, b"no nul".to_vec()));
            let arr = [1i32, -2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
            records.push(value(t + 2, VALUE, 6, 1, arr));
            records.push(value(t + 3, VALUE, 11, 0, 2.5f64.to_le_bytes().to_vec()));
            t += 4;
        }
        c.threads.push(Thread {
            id: 1481 + i,
            name: Some(if i == 0 {
                b"Main".to_vec()
            } else {
                b"Worker".to_vec()
            }),
            context_switches: vec![ContextSwitch {
                begin: 10_200 + i * 50,
                end: 10_230 + i * 50,
                target_tid: 1490 + i,
                name: b"other_task".to_vec(),
            }],
            records,
        });
    }
    c.end_time = t + 10;
    c.update_counters(Convention::Runtime);
    c
}

/// [`small`] 2.1.0 saved the GUI's way (ns, cpu_frequency 0, descriptor sizes with prefixes)
/// with two bookmarks.
pub fn small_gui() -> Capture {
    let mut c = small(Version::V2_1_0).to_gui_convention();
    c.bookmarks = vec![
        Bookmark {
            position: c.begin_time + 100,
            color: 0xff00_ff00,
            text: b"first frame".to_vec(),
        },
        Bookmark {
            position: c.begin_time + 200,
            color: 0xffff_0000,
            text: Vec::new(),
        },
    ];
    c.update_counters(Convention::Gui);
    c
}

/// The files of `testdata/easyprofiler/`: (file name, capture).
pub fn testdata() -> Vec<(&'static str, Capture)> {
    vec![
        ("small_v100.prof", small(Version::V1_0_0)),
        ("small_v120.prof", small(Version::V1_2_0)),
        ("small_v130.prof", small(Version::V1_3_0)),
        ("small_v201.prof", small(Version::V2_0_1)),
        ("small_v210.prof", small(Version::V2_1_0)),
        ("small_v210_gui_bookmarks.prof", small_gui()),
    ]
}

/// The hostile shapes (inputs that cost far more than their size), as `cargo xtask gen-easyprofiler hostile KIND OUT [N]` writes
/// them for measuring the `profcodec` command (`/usr/bin/time -v`) and as fuzz seeds; N sizes each
/// shape:
/// - `empty-slots`: N empty descriptor slots (default 4,000,000; 2 bytes each), then one
///   descriptor and one block using it;
/// - `long-name`: one descriptor with a name of `name_len` bytes (default 65,000) used by N tiny
///   blocks (default 2,000);
/// - `flat`: N flat blocks (default 500,000);
/// - `deep`: N blocks nested in one another (default 256, one level more than the C++ reader
///   takes).
pub fn hostile(kind: &str, n: Option<u64>, name_len: Option<usize>) -> Option<Capture> {
    let named = |id: u32, name: Vec<u8>| Descriptor {
        id,
        line: 1,
        color: 0xff00_ff00,
        block_type: 1,
        status: 1,
        name,
        file: b"hostile.cpp".to_vec(),
    };
    let (descriptors, records): (Vec<Option<Box<Descriptor>>>, Vec<Record>) = match kind {
        "empty-slots" => {
            let n = n.unwrap_or(4_000_000) as usize;
            let mut d = vec![None; n];
            d.push(Some(Box::new(named(n as u32, b"b".to_vec()))));
            (d, vec![block(1, 2, n as u32, b"")])
        }
        "long-name" => {
            let n = n.unwrap_or(2_000);
            let d = vec![Some(Box::new(named(
                0,
                vec![b'n'; name_len.unwrap_or(65_000)],
            )))];
            (d, (0..n).map(|i| block(2 * i, 2 * i + 1, 0, b"")).collect())
        }
        "flat" => {
            let n = n.unwrap_or(500_000);
            let d = vec![Some(Box::new(named(0, b"flat".to_vec())))];
            (d, (0..n).map(|i| block(2 * i, 2 * i + 1, 0, b"")).collect())
        }
        "deep" => {
            let n = n.unwrap_or(256);
            let d = vec![Some(Box::new(named(0, b"nested".to_vec())))];
            let r = (0..n).rev().map(|k| block(k + 1, 2 * n + 2 - k, 0, b""));
            (d, r.collect())
        }
        _ => return None,
    };
    let end = records.iter().map(|r| r.end).max().unwrap_or(0) + 1;
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: end,
        descriptors,
        threads: vec![Thread {
            id: 1,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    Some(c)
}
