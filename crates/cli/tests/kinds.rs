//! What a row of `top` stands for (issue 44: 3, 7): EasyProfiler's values and events are not
//! functions and stay out of the rows, with a note naming the verb that shows them; the
//! anonymous subs and BEGIN blocks of different StatProfiler string evals are different rows.
#![allow(clippy::unwrap_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Record, RecordBody, Thread, Value, Version,
};
use profcodec_testkit::corpus::corpus_subdir;

mod common;
use common::{run_ok, stderr};

const FRAME: u32 = 0;
const TICK: u32 = 1;
const FPS: u32 = 2;

/// A capture of one thread of `frames` frame blocks, each holding one event (`tick`) and one
/// value (`fps`, a u32), stored in post-order as the library stores them.
fn capture(dir: &Path, frames: u64) -> PathBuf {
    let descriptor = |id: u32, block_type: u8, name: &str| {
        Some(Box::new(Descriptor {
            id,
            line: 10 + id as i32,
            color: 0,
            block_type,
            status: 1,
            name: name.as_bytes().to_vec(),
            file: b"game.cpp".to_vec(),
        }))
    };
    let mut records = Vec::new();
    for k in 0..frames {
        let t = 1000 + k * 100;
        records.push(Record {
            begin: t + 10,
            end: t + 10,
            descriptor: TICK,
            body: RecordBody::Named(Vec::new()),
        });
        records.push(Record {
            begin: t + 20,
            end: t + 20,
            descriptor: FPS,
            body: RecordBody::Value(Value {
                stub: [0, 0],
                // DataType::Uint32
                data_type: 7,
                is_array: 0,
                value_id: 0x1000,
                data: (60 + k as u32).to_le_bytes().to_vec(),
            }),
        });
        records.push(Record {
            begin: t,
            end: t + 50,
            descriptor: FRAME,
            body: RecordBody::Named(Vec::new()),
        });
    }
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 1000,
        end_time: 1000 + frames * 100,
        descriptors: vec![
            descriptor(FRAME, 1, "frame"),
            descriptor(TICK, 0, "tick"),
            descriptor(FPS, 2, "fps"),
        ],
        threads: vec![Thread {
            id: 7,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    let path = dir.join("game.prof");
    std::fs::write(&path, c.to_bytes().unwrap()).unwrap();
    path
}

/// The calls cell of the row named `name` (the cell before the name).
fn calls_of(table: &str, name: &str) -> Option<u64> {
    table.lines().find_map(|line| {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let at = cells.iter().position(|c| *c == name)?;
        cells[at - 1].replace(',', "").parse().ok()
    })
}

fn top(args: &[&OsStr]) -> (String, String) {
    let out = run_ok([OsStr::new("top")].iter().chain(args));
    (String::from_utf8(out.stdout.clone()).unwrap(), stderr(&out))
}

/// A crafted capture: the frame block is the one row, its calls the blocks only; the event and
/// the value are left out with one note; `--metric calls` totals the blocks.
#[test]
fn values_and_events_are_not_rows_of_top() {
    let dir = tempfile::tempdir().unwrap();
    let path = capture(dir.path(), 50);
    let (table, err) = top(&[OsStr::new("-n"), OsStr::new("0"), path.as_os_str()]);
    assert_eq!(calls_of(&table, "frame"), Some(50), "{table}");
    assert!(!table.contains("tick") && !table.contains("fps"), "{table}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("left out")).collect();
    assert_eq!(
        notes,
        [
            "profcodec: 1 value and 1 event left out of the rows: they are counters and \
          instants, not functions (profcodec convert --to perfetto shows them on a timeline)"
        ],
        "{err}"
    );
    // Counted by calls, the total is the blocks': no event or value adds to it.
    let (by_calls, _) = top(&[
        OsStr::new("--metric"),
        OsStr::new("calls"),
        OsStr::new("--by"),
        OsStr::new("inclusive"),
        path.as_os_str(),
    ]);
    let total = by_calls
        .lines()
        .find(|l| l.trim_end().ends_with("total"))
        .unwrap();
    let cells: Vec<&str> = total.split_whitespace().collect();
    assert_eq!(cells[0], "50", "{by_calls}");
    assert_eq!(cells[2], "50", "{by_calls}");
    // Every grouping leaves them out.
    for group in ["line", "path", "module"] {
        let (table, err) = top(&[OsStr::new("--group"), OsStr::new(group), path.as_os_str()]);
        assert!(
            !table.contains("tick") && !table.contains("fps") && !table.contains(":11"),
            "{group}: {table}"
        );
        assert!(
            err.contains("1 value and 1 event left out"),
            "{group}: {err}"
        );
    }
}

/// `diff` says what it left out of each side, and lists no event or value.
#[test]
fn values_and_events_are_not_rows_of_diff() {
    let dir = tempfile::tempdir().unwrap();
    let path = capture(dir.path(), 20);
    let out = run_ok([OsStr::new("diff"), path.as_os_str(), path.as_os_str()]);
    let table = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        table.contains("frame") && !table.contains("tick"),
        "{table}"
    );
    assert!(
        stderr(&out).contains(
            "1 value and 1 event in the base, 1 value and 1 event in the new profile left out"
        ),
        "{}",
        stderr(&out)
    );
}

/// The verb the note names shows them: the value as a counter, the event as instants.
#[test]
fn the_timeline_shows_values_as_counters_and_events_as_instants() {
    let dir = tempfile::tempdir().unwrap();
    let path = capture(dir.path(), 5);
    let out = dir.path().join("trace.json");
    run_ok([
        OsStr::new("convert"),
        OsStr::new("--to"),
        OsStr::new("chrome"),
        OsStr::new("-o"),
        out.as_os_str(),
        path.as_os_str(),
    ]);
    let trace: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let phases = |name: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["name"] == name)
            .map(|e| e["ph"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(phases("fps"), ["C"; 5], "{trace}");
    assert!(
        phases("tick").len() == 5 && phases("tick").iter().all(|p| p == "i" || p == "I"),
        "{trace}"
    );
}

/// The corpus capture of easy_profiler's own sample: six blocks are rows, their calls are the
/// capture's 110 blocks, and its 10 values and 3 events (16 event and 180 value records) are
/// left out.
#[test]
fn the_corpus_sample_lists_its_blocks_only() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler") else {
        return;
    };
    let path = dir.join("sample_v210_rdtsc.prof");
    let (table, err) = top(&[OsStr::new("-n"), OsStr::new("0"), path.as_os_str()]);
    let rows: Vec<&str> = table
        .lines()
        .skip(2)
        .filter(|l| !l.trim_end().ends_with("total"))
        .collect();
    assert_eq!(rows.len(), 6, "{table}");
    let calls: u64 = [
        "main block",
        "leaf",
        "frame",
        "nonscoped",
        "stage_1",
        "stage_0",
    ]
    .iter()
    .map(|name| calls_of(&table, name.split(' ').next().unwrap()).unwrap())
    .sum();
    assert_eq!(calls, 110, "{table}");
    for name in ["ThreadFinished", "leaf_i", "frame_no", "stage1 event"] {
        assert!(!table.contains(name), "{name}: {table}");
    }
    assert!(err.contains("10 values and 3 events left out"), "{err}");
}

/// A StatProfiler file of 16 string evals, each defining an anonymous sub at its line 1 and a
/// BEGIN block: 32 rows, each named after its eval, as the report keys its subs by file.
#[test]
fn anonymous_subs_of_different_evals_are_different_rows() {
    use profcodec_statprofiler::{Container, Event, Frame, Header, PerlStr, Writer};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("evals.statprof");
    let header = Header {
        tick_duration_us: Some(1000),
        ..Header::default()
    };
    let mut w = Writer::new(Vec::new(), &header, Container::Snappy).unwrap();
    for n in 0..16u32 {
        let eval = format!("(eval {})", 10 + n);
        for name in ["__ANON__", "BEGIN"] {
            w.write(&Event::SampleStart {
                weight: 1 + n,
                op_name: PerlStr::bytes(b"add"),
            })
            .unwrap();
            for frame in [
                Frame::Sub {
                    package: PerlStr::bytes(b"main"),
                    name: PerlStr::bytes(name.as_bytes()),
                    file: PerlStr::bytes(eval.as_bytes()),
                    line: 1,
                    first_line: 1,
                },
                Frame::Main {
                    file: PerlStr::bytes(b"app.pl"),
                    line: 7,
                },
            ] {
                w.write(&Event::Frame(frame)).unwrap();
            }
            w.write(&Event::SampleEnd { skipped: &[] }).unwrap();
        }
    }
    w.write(&Event::StreamEnd).unwrap();
    std::fs::write(&path, w.finish().unwrap()).unwrap();
    let (table, _) = top(&[
        OsStr::new("-n"),
        OsStr::new("0"),
        OsStr::new("--full-names"),
        path.as_os_str(),
    ]);
    for n in 0..16 {
        for name in ["__ANON__", "BEGIN"] {
            let row = format!("main::{name}@(eval {}):1", 10 + n);
            assert_eq!(
                table.lines().filter(|l| l.contains(&row)).count(),
                1,
                "{row}: {table}"
            );
        }
    }
    assert!(!table.contains("main::__ANON__@1 "), "{table}");
}

/// The corpus file of evals: its BEGIN block inside an eval is named after that eval.
#[test]
fn the_corpus_evals_name_their_begin_block_after_its_eval() {
    let Some(dir) = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler") else {
        return;
    };
    let path = std::fs::read_dir(dir.join("evals"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_none_or(|e| e != "txt"))
        .unwrap();
    let (table, _) = top(&[
        OsStr::new("-n"),
        OsStr::new("0"),
        OsStr::new("--full-names"),
        path.as_os_str(),
    ]);
    assert!(table.contains("main::BEGIN@(eval 182):1"), "{table}");
}
