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

/// A thread's markers as (name, category name, start ms, end ms).
fn markers(profile: &Value, thread: &Value) -> Vec<(String, String, f64, f64)> {
    let strings = thread["stringArray"].as_array().unwrap();
    let categories = profile["meta"]["categories"].as_array().unwrap();
    let m = &thread["markers"];
    (0..m["length"].as_u64().unwrap() as usize)
        .map(|i| {
            let name = strings[m["name"][i].as_u64().unwrap() as usize].as_str();
            let category = &categories[m["category"][i].as_u64().unwrap() as usize]["name"];
            assert_eq!(m["phase"][i], 1, "an interval marker");
            (
                name.unwrap().to_owned(),
                category.as_str().unwrap().to_owned(),
                m["startTime"][i].as_f64().unwrap(),
                m["endTime"][i].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn spans_are_markers_beside_the_samples_of_the_metric() {
    let mut b = ProfileBuilder::new();
    let t = b
        .intern_context(Context::new([(IdKind::Thread, 9)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfAndInclusive)
        .unwrap();
    let calls = b
        .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
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
    // frame 1000..2000 holding work 1200..1500, 1500..1900 and an event at 1950; frame again
    // 3000..3100.
    for (node, begin, end) in [
        (outer, 1000, 2000),
        (inner, 1200, 1500),
        (inner, 1500, 1900),
        (inner, 1950, 1950),
        (outer, 3000, 3100),
    ] {
        b.add_span(t, node, begin, end).unwrap();
    }
    b.add_node_values(
        t,
        outer,
        [(time, Some(400.0), Some(1100.0)), (calls, Some(2.0), None)],
    )
    .unwrap();
    b.add_node_values(
        t,
        inner,
        [(time, Some(700.0), Some(700.0)), (calls, Some(3.0), None)],
    )
    .unwrap();
    let profile = b.build();
    let out = export(&profile);
    let thread = &out["threads"][0];
    let stacks: Vec<(i64, Vec<String>)> = samples(thread)
        .into_iter()
        .map(|(_, w, s)| (w, s))
        .collect();
    assert_eq!(
        stacks,
        [
            (400, vec!["frame".to_owned()]),
            (700, vec!["frame".to_owned(), "work".to_owned()]),
        ]
    );
    let got = markers(&out, thread);
    let expected = [
        ("frame", 0.0, 0.001),
        ("work", 0.0002, 0.0005),
        ("work", 0.0005, 0.0009),
        ("work", 0.00095, 0.00095),
        ("frame", 0.002, 0.0021),
    ];
    assert_eq!(got.len(), expected.len(), "{got:?}");
    for ((name, category, start, end), (en, es, ee)) in got.iter().zip(expected) {
        assert_eq!((name.as_str(), category.as_str()), (en, "Block"));
        assert!(
            (start - es).abs() < 1e-12 && (end - ee).abs() < 1e-12,
            "{got:?}"
        );
    }

    // Another metric: its samples, the same markers.
    let mut options = ExportOptions::default();
    options.metric = Some("calls".to_owned());
    let mut bytes = Vec::new();
    write_firefox(&profile, &options, &mut bytes).unwrap();
    let out: Value = serde_json::from_slice(&bytes).unwrap();
    let weights: Vec<i64> = samples(&out["threads"][0]).iter().map(|s| s.1).collect();
    assert_eq!(weights, [2, 3]);
    assert_eq!(markers(&out, &out["threads"][0]).len(), 5);
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
/// its thread, named by its block, whose count per name is the model's `calls` and whose
/// outermost markers last as long as the thread's total self time; the samples are the model's
/// self times, as `top` says.
#[test]
fn easyprofiler_captures_with_spans_have_a_marker_per_block() {
    let Some(dir) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "easyprofiler")
    else {
        return;
    };
    let mut captures = 0;
    for path in profcodec_testkit::corpus::files_below(&dir) {
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
        let interval_ns = out["meta"]["interval"].as_f64().unwrap() * 1e6;
        let (mut counts, mut own) = (HashMap::new(), HashMap::new());
        let (mut outermost_ns, mut sampled_ns, mut samples_seen) = (0.0, 0.0, 0);
        for thread in threads {
            let mut spans = markers(&out, thread);
            for (name, category, ..) in &spans {
                assert_eq!(category, "Block");
                *counts.entry(name.clone()).or_insert(0.0) += 1.0;
            }
            spans.sort_by(|a, b| a.2.total_cmp(&b.2).then(b.3.total_cmp(&a.3)));
            let mut covered_to = f64::NEG_INFINITY;
            for (.., start, end) in spans {
                if start >= covered_to {
                    outermost_ns += (end - start) * 1e6;
                }
                covered_to = covered_to.max(end);
            }
            for (_, weight, stack) in samples(thread) {
                samples_seen += 1;
                sampled_ns += weight as f64 * interval_ns;
                *own.entry(stack.last().unwrap().clone()).or_insert(0.0) +=
                    weight as f64 * interval_ns;
            }
        }
        let what = path.display();
        let calls = profile.top(&Query::new().value_type("calls")).unwrap();
        for row in &calls.rows {
            assert_eq!(
                counts.get(&row.name),
                Some(&row.self_value),
                "{what}: {}",
                row.name
            );
        }
        assert_eq!(counts.values().sum::<f64>(), profile.spans().len() as f64);
        let top = profile.top(&Query::new()).unwrap();
        let slack = 0.5 * interval_ns * samples_seen as f64 + 1e-6 * top.total.self_value;
        assert!(
            (sampled_ns - top.total.self_value).abs() <= slack
                && (outermost_ns - top.total.self_value).abs() <= 1e-6 * outermost_ns + 1.0,
            "{what}: samples hold {sampled_ns} ns, the outermost markers {outermost_ns} ns, \
             top's total is {} ns",
            top.total.self_value
        );
        for row in &top.rows {
            let got = own.get(&row.name).copied().unwrap_or_default();
            assert!(
                (got - row.self_value).abs() <= slack,
                "{what}: {}: {got} ns in the samples, top's self is {} ns",
                row.name,
                row.self_value
            );
        }
        captures += 1;
    }
    assert_eq!(captures, 4);
}
