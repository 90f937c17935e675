//! A sample whose frame records repeat an earlier sample's takes that sample's stack without
//! walking its frames: the model must be the one the frame by frame walk makes. The reference
//! is the same samples with an eval source record inside each, which the trace reader reads
//! record by record (no frame records in one piece, so no stack is looked up by its bytes).
#![cfg(feature = "profile")]
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_statprofiler::{
    Event, Frame, PerlStr,
    profcodec_profile::{GroupBy, Profile, Query},
    to_profile,
};

/// Samples over a few stacks: ops that add a `CORE::` frame and ops that do not, an eval frame
/// after a `BEGIN` frame (which the reader drops), an eval STRING file, and stacks that differ
/// only in a line.
fn file(eval_source_in_each_sample: bool) -> Vec<u8> {
    common::file_of_events((0u32..600).flat_map(|s| {
        let op: &[u8] = match s % 4 {
            0 => b"readline",
            1 => b"print",
            _ => b"add",
        };
        let mut frames = Vec::new();
        if eval_source_in_each_sample {
            frames.push(Event::EvalSource {
                seq: s % 5,
                source: PerlStr::bytes(b"1 + 1"),
            });
        }
        let shape = s % 7;
        let file: &[u8] = if shape == 3 {
            b"(eval 7)"
        } else {
            b"lib/App.pm"
        };
        for depth in 0..(1 + shape % 4) {
            frames.push(Event::Frame(Frame::Sub {
                package: PerlStr::bytes(b"App"),
                name: PerlStr::bytes(NAMES[((shape + depth) % 5) as usize]),
                file: PerlStr::bytes(file),
                line: 10 + depth as i32 + i32::from(s % 11 == 0),
                first_line: 5,
            }));
        }
        if shape == 5 {
            frames.push(Event::Frame(Frame::Sub {
                package: PerlStr::bytes(b"App"),
                name: PerlStr::bytes(b"BEGIN"),
                file: PerlStr::bytes(b"lib/App.pm"),
                line: 2,
                first_line: 1,
            }));
            frames.push(Event::Frame(Frame::Eval {
                file: PerlStr::bytes(b"lib/App.pm"),
                line: 1,
            }));
        }
        common::sample_in_main(1 + s % 3, op, frames)
    }))
}

const NAMES: [&[u8]; 5] = [b"f0", b"f1", b"f2", b"f3", b"f4"];

fn rows(profile: &Profile, group: GroupBy) -> Vec<(String, f64, Option<f64>)> {
    let table = profile
        .top(&Query::new().value_type("samples").group(group))
        .unwrap();
    let mut rows: Vec<_> = table
        .rows
        .into_iter()
        .map(|r| (r.name, r.self_value, r.inclusive))
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows
}

#[test]
fn repeated_stacks_give_the_model_of_the_frame_walk() {
    let cached = to_profile(&file(false)).unwrap();
    let walked = to_profile(&file(true)).unwrap();
    assert_eq!(cached.nodes().len(), walked.nodes().len());
    for group in [GroupBy::Function, GroupBy::Line] {
        let rows = rows(&cached, group);
        assert!(rows.iter().any(|r| r.0.starts_with("CORE::")), "{rows:?}");
        assert_eq!(rows, self::rows(&walked, group), "{group:?}");
    }
}
