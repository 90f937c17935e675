//! Inputs that would cost far more output than their size: the output is held to a linear
//! bound.
//!
//! - An EasyProfiler capture with a 65,000-byte block name under 16,000 blocks (433 kB were
//!   1.04 GB of Chrome JSON): the Chrome output spells the name once whole, in a `long_name`
//!   metadata event, and caps it in every slice.
//!
//! (An HPCToolkit trace.db whose lines all point at one line's samples is refused before any
//! event: `crates/profcodec/tests/timeline.rs`.)
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::Path;

use profcodec_common::Source;
use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Record, RecordBody, Thread, Version,
};
use profcodec_timeline::{Filter, Format, TimelineWriter};
use serde_json::Value;

/// The events of a Chrome trace.
fn chrome_events(bytes: &[u8]) -> Vec<Value> {
    let v: Value = serde_json::from_slice(bytes).unwrap();
    v["traceEvents"].as_array().unwrap().clone()
}

/// A capture of one thread with `blocks` blocks of one descriptor named `name`, each with a
/// nested block of a short-named descriptor every tenth time.
fn capture(name: &[u8], blocks: u64) -> Vec<u8> {
    let descriptor = |id: u32, name: &[u8]| {
        Some(Box::new(Descriptor {
            id,
            line: 1,
            color: 0xff00_ff00,
            block_type: 1,
            status: 1,
            name: name.to_vec(),
            file: b"f.cpp".to_vec(),
        }))
    };
    let mut records = Vec::new();
    for i in 0..blocks {
        records.push(Record {
            begin: i * 10,
            end: i * 10 + 9,
            descriptor: 0,
            body: RecordBody::Named(Vec::new()),
        });
        if i % 10 == 0 {
            records.push(Record {
                begin: i * 10 + 1,
                end: i * 10 + 2,
                descriptor: 1,
                body: RecordBody::Named(Vec::new()),
            });
        }
    }
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: blocks * 10 + 1,
        descriptors: vec![descriptor(0, name), descriptor(1, b"short")],
        threads: vec![Thread {
            id: 7,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    c.to_bytes().unwrap()
}

fn convert_capture(data: &[u8], format: Format) -> Vec<u8> {
    let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
    let capture = Source::file(Path::new("long-name.prof"), data);
    profcodec_easyprofiler::timeline::write_timeline(&capture, &mut w.timeline()).unwrap();
    w.finish().unwrap()
}

#[test]
fn a_long_block_name_is_written_once_in_chrome_json() {
    // The case: 65,000 bytes of name (with a multi-byte character across the cap).
    let mut name = "é".repeat(32_500).into_bytes();
    name.insert(0, b'x');
    let name_text = String::from_utf8(name.clone()).unwrap();
    let data = capture(&name, 16_000);
    let start = std::time::Instant::now();
    let chrome = convert_capture(&data, Format::Chrome);
    let chrome_time = start.elapsed();
    let perfetto = convert_capture(&data, Format::Perfetto);
    println!(
        "input {} bytes: Chrome JSON {} bytes ({:.1} x) in {chrome_time:?}, Perfetto {} bytes",
        data.len(),
        chrome.len(),
        chrome.len() as f64 / data.len() as f64,
        perfetto.len()
    );
    // Linear: about 400 bytes of JSON per block (the capped name, the begin and the end).
    assert!(
        chrome.len() < 20 * data.len(),
        "{} bytes of JSON from {} bytes",
        chrome.len(),
        data.len()
    );

    let events = chrome_events(&chrome);
    let long: Vec<&Value> = events
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "long_name")
        .collect();
    assert_eq!(long.len(), 1, "the long name is written whole once");
    assert_eq!(long[0]["args"]["name"].as_str().unwrap(), name_text);
    let id = long[0]["args"]["id"].as_u64().unwrap();
    let capped = format!(
        "{}… [long name {id}]",
        &name_text[..name_text.floor_char_boundary_255()]
    );
    let begins: Vec<&Value> = events.iter().filter(|e| e["ph"] == "B").collect();
    // 16,000 blocks, 1,600 nested ones and the capture's span.
    assert_eq!(begins.len(), 16_000 + 1_600 + 1);
    assert_eq!(
        begins
            .iter()
            .filter(|e| e["name"] == capped.as_str())
            .count(),
        16_000
    );
    assert_eq!(
        begins.iter().filter(|e| e["name"] == "short").count(),
        1_600
    );
    assert_eq!(
        events.iter().filter(|e| e["ph"] == "E").count(),
        begins.len()
    );
}

/// The longest prefix of at most 256 bytes that ends at a character boundary (the writer's
/// cap), for a test name that starts with one ASCII byte and goes on with two-byte characters.
trait Cap {
    fn floor_char_boundary_255(&self) -> usize;
}

impl Cap for String {
    fn floor_char_boundary_255(&self) -> usize {
        (0..=256).rev().find(|&i| self.is_char_boundary(i)).unwrap()
    }
}
