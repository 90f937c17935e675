//! The Firefox Profiler export read back as the processed format it is (fxprof-processed-profile
//! serializes only, so the JSON is read as `serde_json::Value`), its threads, samples, stacks
//! and markers checked against the profile: synthetic profiles, and the EasyProfiler corpus
//! captures with their blocks as spans.
#![cfg(feature = "firefox")]
#![allow(clippy::unwrap_used)]

use std::collections::HashMap;

use profcodec_export::ExportOptions;
use profcodec_export::firefox::write_firefox;
use profcodec_profile::{
    Context, Frame, FrameKind, IdKind, Measured, Profile, ProfileBuilder, Query, Unit,
};
use serde_json::Value;

fn export(profile: &Profile) -> Value {
    let mut out = Vec::new();
    write_firefox(profile, &ExportOptions::default(), &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// A thread's samples as (time in ms, weight, stack of frame names, root first).
fn samples(thread: &Value) -> Vec<(f64, i64, Vec<String>)> {
    let strings = thread["stringArray"].as_array().unwrap();
    let (stacks, frames, funcs) = (
        &thread["stackTable"],
        &thread["frameTable"],
        &thread["funcTable"],
    );
    let samples = &thread["samples"];
    let mut time = 0.0;
    (0..samples["length"].as_u64().unwrap() as usize)
        .map(|i| {
            time += samples["timeDeltas"][i].as_f64().unwrap();
            let mut names = Vec::new();
            let mut at = samples["stack"][i].as_u64();
            while let Some(s) = at.map(|s| s as usize) {
                let frame = stacks["frame"][s].as_u64().unwrap() as usize;
                let func = frames["func"][frame].as_u64().unwrap() as usize;
                let name = funcs["name"][func].as_u64().unwrap() as usize;
                names.push(strings[name].as_str().unwrap().to_owned());
                at = stacks["prefix"][s].as_u64();
            }
            names.reverse();
            (time, samples["weight"][i].as_i64().unwrap(), names)
        })
        .collect()
}

fn thread_named<'v>(profile: &'v Value, name: &str) -> &'v Value {
    profile["threads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no thread {name} in {}", profile["threads"]))
}

#[test]
fn each_context_is_a_thread_and_each_node_a_sample_in_depth_first_order() {
    let mut b = ProfileBuilder::new();
    let main_name = b.intern_string("Main").unwrap();
    let t0 = b
        .intern_context(
            Context::new([(IdKind::Process, 40), (IdKind::Thread, 1)]).with_name(main_name),
        )
        .unwrap();
    let t1 = b
        .intern_context(Context::new([(IdKind::Process, 40), (IdKind::Thread, 2)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Microseconds, Measured::SelfOnly)
        .unwrap();
    let f = |b: &mut ProfileBuilder, name: &str| {
        let s = b.intern_string(name).unwrap();
        b.intern_frame(Frame::function(s)).unwrap()
    };
    let (main, a, c) = (f(&mut b, "main"), f(&mut b, "a"), f(&mut b, "c"));
    b.add_sample(t0, [main, a, c], time, 3.0).unwrap();
    b.add_sample(t0, [main, c], time, 2.5).unwrap();
    b.add_sample(t0, [main, a], time, 1.0).unwrap();
    b.add_sample(t1, [main], time, 7.0).unwrap();
    let out = export(&b.build());

    // Microseconds with fractions: weights in nanoseconds, the sampling interval.
    assert!((out["meta"]["interval"].as_f64().unwrap() - 1e-6).abs() < 1e-15);
    let threads = out["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    let main_thread = thread_named(&out, "process 40 thread 1 (Main)");
    assert_eq!(main_thread["tid"], "1");
    assert_eq!(main_thread["processName"], "process 40");
    let s = samples(main_thread);
    let stacks: Vec<(i64, Vec<&str>)> = s
        .iter()
        .map(|(_, w, names)| (*w, names.iter().map(String::as_str).collect()))
        .collect();
    // Depth first: main's children in the order they were made (a before c).
    assert_eq!(
        stacks,
        [
            (1000, vec!["main", "a"]),
            (3000, vec!["main", "a", "c"]),
            (2500, vec!["main", "c"]),
        ]
    );
    // Each sample lasts its weight: the next starts when it ends.
    let times: Vec<f64> = s.iter().map(|(t, ..)| *t).collect();
    assert_eq!(times, [0.0, 0.001, 0.004]);
    let other = thread_named(&out, "process 40 thread 2");
    assert_eq!(other["processName"], "process 40");
    assert_eq!(samples(other)[0].1, 7000);
}

#[test]
fn loops_are_frames_of_their_own_category_inside_their_function() {
    let mut b = ProfileBuilder::new();
    let all = b.intern_context(Context::new([])).unwrap();
    let cycles = b
        .intern_value_type("cycles", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let file = b.intern_string("a.c").unwrap();
    let main = b.intern_string("main").unwrap();
    let main_frame = b.intern_frame(Frame::function(main)).unwrap();
    let body = b
        .intern_frame(
            Frame::new(FrameKind::Loop)
                .with_file(file)
                .with_line(12)
                .with_function(main),
        )
        .unwrap();
    b.add_sample(all, [main_frame, body], cycles, 5.0).unwrap();
    let out = export(&b.build());
    let thread = &out["threads"][0];
    assert_eq!(
        samples(thread)[0].2,
        ["main", "loop at a.c:12 in main"],
        "{thread}"
    );
    let categories: Vec<&str> = out["meta"]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let frame_categories: Vec<&str> = thread["frameTable"]["category"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| categories[c.as_u64().unwrap() as usize])
        .collect();
    assert_eq!(frame_categories, ["Function", "Loop or line"]);
    // Counts: one weight a count.
    assert_eq!(samples(thread)[0].1, 5);
}

#[test]
fn spans_are_the_timeline_and_the_markers() {
    let mut b = ProfileBuilder::new();
    let t = b
        .intern_context(Context::new([(IdKind::Thread, 9)]))
        .unwrap();
    b.intern_value_type("time", Unit::Nanoseconds, Measured::SelfAndInclusive)
        .unwrap();
    b.set_span_unit(Unit::Nanoseconds).unwrap();
    let block = |b: &mut ProfileBuilder, name: &str| {
        let s = b.intern_string(name).unwrap();
        b.intern_frame(Frame::new(FrameKind::Block).with_function(s))
            .unwrap()
    };
    let (frame, work) = (block(&mut b, "frame"), block(&mut b, "work"));
    let outer = b.intern_stack(None, [frame]).unwrap();
    let inner = b.intern_stack(None, [frame, work]).unwrap();
    // frame 1000..2000 holding work 1200..1500 and 1500..1900; frame again 3000..3100.
    b.add_span(t, outer, 1000, 2000).unwrap();
    b.add_span(t, inner, 1200, 1500).unwrap();
    b.add_span(t, inner, 1500, 1900).unwrap();
    // An event: a block of no duration holds no time, but is a marker.
    b.add_span(t, inner, 1950, 1950).unwrap();
    b.add_span(t, outer, 3000, 3100).unwrap();
    let out = export(&b.build());
    let thread = &out["threads"][0];
    let got: Vec<(f64, i64, Vec<String>)> = samples(thread);
    let expected: Vec<(f64, i64, Vec<&str>)> = vec![
        (0.0, 200, vec!["frame"]),
        (0.0002, 300, vec!["frame", "work"]),
        (0.0005, 400, vec!["frame", "work"]),
        (0.0009, 50, vec!["frame"]),
        // The event begins and ends here: a sample, the same stack.
        (0.00095, 50, vec!["frame"]),
        (0.001, 0, vec![]),
        (0.002, 100, vec!["frame"]),
    ];
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((t, w, names), (et, ew, enames)) in got.iter().zip(&expected) {
        assert!((t - et).abs() < 1e-9, "{got:?}");
        assert_eq!(
            (w, names),
            (ew, &enames.iter().map(|s| s.to_string()).collect())
        );
    }
    let markers = &thread["markers"];
    assert_eq!(markers["length"], 5);
    let strings = thread["stringArray"].as_array().unwrap();
    let names: Vec<&str> = markers["name"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| strings[n.as_u64().unwrap() as usize].as_str().unwrap())
        .collect();
    assert_eq!(names, ["frame", "work", "work", "work", "frame"]);
    let starts: Vec<f64> = markers["startTime"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert_eq!(starts, [0.0, 0.0002, 0.0005, 0.00095, 0.002]);
}

#[test]
fn an_unknown_metric_names_the_known_ones() {
    let mut b = ProfileBuilder::new();
    b.intern_value_type("time", Unit::Seconds, Measured::SelfOnly)
        .unwrap();
    let mut options = ExportOptions::default();
    options.metric = Some("cycles".to_owned());
    let err = write_firefox(&b.build(), &options, Vec::new()).unwrap_err();
    assert!(
        err.to_string().contains("\"cycles\" is not one of time"),
        "{err}"
    );
}

/// Every EasyProfiler capture of the corpus with its blocks as spans: one marker per block on
/// its thread, the samples with a stack last as long as some block is open, and each block's
/// self time (the innermost open block's time) is `top`'s self value.
#[test]
fn easyprofiler_captures_with_spans_are_timelines() {
    let Some(dir) =
        profcodec_common::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")
    else {
        return;
    };
    let mut captures = 0;
    for path in profcodec_common::corpus::files_below(&dir) {
        if path.extension().is_none_or(|e| e != "prof") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let view = profcodec_easyprofiler::parse(&bytes).unwrap();
        let profile = view
            .tree()
            .unwrap()
            .to_profile_with(profcodec_easyprofiler::ProfileOptions::new().spans(true))
            .unwrap();
        let out = export(&profile);
        let threads = out["threads"].as_array().unwrap();
        assert_eq!(
            threads.len(),
            profile.contexts().len(),
            "{}",
            path.display()
        );
        let mut spans_per_thread: HashMap<String, u64> = HashMap::new();
        for span in profile.spans() {
            *spans_per_thread
                .entry(profile.context_label(span.context))
                .or_default() += 1;
        }
        let interval_ns = out["meta"]["interval"].as_f64().unwrap() * 1e6;
        let mut busy_ns = 0.0;
        let mut samples_seen = 0;
        let mut own: HashMap<String, f64> = HashMap::new();
        for thread in threads {
            let name = thread["name"].as_str().unwrap();
            let blocks = spans_per_thread.get(name).copied().unwrap_or(0);
            assert_eq!(
                thread["markers"]["length"],
                blocks,
                "{} {name}",
                path.display()
            );
            for (_, weight, stack) in samples(thread) {
                samples_seen += 1;
                if let Some(leaf) = stack.last() {
                    busy_ns += weight as f64 * interval_ns;
                    *own.entry(leaf.clone()).or_default() += weight as f64 * interval_ns;
                }
            }
        }
        // The time some block is open, thread by thread: the union of the spans.
        let mut by_context: HashMap<u32, Vec<(u64, u64)>> = HashMap::new();
        for span in profile.spans() {
            by_context
                .entry(span.context.index() as u32)
                .or_default()
                .push((span.begin, span.end));
        }
        let mut total = 0.0;
        for spans in by_context.values_mut() {
            spans.sort_unstable();
            let mut covered_to = 0;
            for &(begin, end) in spans.iter() {
                let from = begin.max(covered_to);
                if end > from {
                    total += (end - from) as f64;
                }
                covered_to = covered_to.max(end);
            }
        }
        let top = profile.top(&Query::new()).unwrap();
        let slack = 0.5 * interval_ns * samples_seen as f64 + 1e-9 * total;
        assert!(
            (busy_ns - total).abs() <= slack && (busy_ns - top.total.self_value).abs() <= slack,
            "{}: samples hold {busy_ns} ns, the spans cover {total} ns, top's total is {} ns",
            path.display(),
            top.total.self_value
        );
        for row in &top.rows {
            let got = own.get(&row.name).copied().unwrap_or_default();
            assert!(
                (got - row.self_value).abs() <= slack,
                "{}: {}: {got} ns in the samples, top's self is {} ns",
                path.display(),
                row.name,
                row.self_value
            );
        }
        captures += 1;
    }
    assert_eq!(captures, 4);
}
