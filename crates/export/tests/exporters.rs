//! The exporters on small profiles built in memory, where every line of the output is known:
//! recursion, loops and lines inside functions, values measured inclusive only, renamed frames,
//! flat profiles, the profile's time resolution, and spans that touch or outlast their parent.
//! (The real consumers judge the outputs of every corpus file in the CLI's tests.)
#![allow(clippy::unwrap_used)]

use std::borrow::Cow;

use profcodec_export::{
    ExportError, ExportOptions, write_callgrind, write_folded, write_speedscope,
};
use profcodec_profile::{
    Context, Frame, FrameId, FrameKind, IdKind, Measured, Profile, ProfileBuilder, Unit,
};

fn folded(profile: &Profile, options: &ExportOptions) -> String {
    let mut out = Vec::new();
    write_folded(profile, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn callgrind(profile: &Profile, options: &ExportOptions) -> String {
    let mut out = Vec::new();
    write_callgrind(profile, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn speedscope(profile: &Profile) -> serde_json::Value {
    let mut out = Vec::new();
    write_speedscope(profile, &ExportOptions::new(), &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

fn function(b: &mut ProfileBuilder, name: &str, line: u32) -> FrameId {
    let file = b.intern_string("app.c").unwrap();
    let name = b.intern_string(name).unwrap();
    b.intern_frame(Frame::function(name).with_file(file).with_line(line))
        .unwrap()
}

/// main calls fib at line 5, fib calls itself at line 12 (a loop at line 11 around it): samples
/// in seconds on two threads.
fn recursive() -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("cpu time", Unit::Seconds, Measured::SelfOnly)
        .unwrap();
    let main = function(&mut b, "main", 1);
    let fib = function(&mut b, "fib", 10);
    let file = b.intern_string("app.c").unwrap();
    let site = b
        .intern_frame(Frame::new(FrameKind::Line).with_file(file).with_line(5))
        .unwrap();
    let inner = b
        .intern_frame(Frame::new(FrameKind::Line).with_file(file).with_line(12))
        .unwrap();
    for thread in 0..2 {
        let t = b
            .intern_context(Context::new([(IdKind::Thread, thread)]))
            .unwrap();
        b.add_sample(t, [main], time, 0.25).unwrap();
        b.add_sample(t, [main, site, fib], time, 0.5).unwrap();
        b.add_sample(t, [main, site, fib, inner, fib], time, 1.0)
            .unwrap();
    }
    b.build()
}

#[test]
fn folded_writes_one_line_per_path_in_microseconds() {
    let text = folded(&recursive(), &ExportOptions::new());
    assert_eq!(
        text,
        "main 500000\n\
         main;line at app.c:5;fib 1000000\n\
         main;line at app.c:5;fib;line at app.c:12;fib 2000000\n"
    );
}

#[test]
fn folded_merges_frames_renamed_alike_and_writes_ticks() {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Seconds, Measured::SelfAndInclusive)
        .unwrap();
    b.set_time_resolution(Unit::Ticks {
        per_second: Some(10_000_000),
    })
    .unwrap();
    let t = b
        .intern_context(Context::new([(IdKind::Process, 1)]))
        .unwrap();
    let main = function(&mut b, "main::RUNTIME", 1);
    let a = function(&mut b, "main::__ANON__[(eval 1)[x.pl:3]:1]", 1);
    let c = function(&mut b, "main::__ANON__[(eval 2)[x.pl:3]:1]", 1);
    let n1 = b.intern_stack(None, [main, a]).unwrap();
    let n2 = b.intern_stack(None, [main, c]).unwrap();
    b.add_self(t, n1, time, 3e-7).unwrap();
    b.add_self(t, n2, time, 4e-7).unwrap();
    let profile = b.build();
    fn evals_as_zero(label: &str) -> Cow<'_, str> {
        Cow::Owned(
            label
                .replace("(eval 1)", "(eval 0)")
                .replace("(eval 2)", "(eval 0)"),
        )
    }
    let text = folded(&profile, &ExportOptions::new().folded_names(evals_as_zero));
    // Spaces kept, as nytprofcalls prints them.
    assert_eq!(text, "main::RUNTIME;main::__ANON__[(eval 0)[x.pl:3]:1] 7\n");
}

#[test]
fn folded_of_a_flat_profile_is_one_line_per_function() {
    let mut b = ProfileBuilder::new();
    let calls = b
        .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let t = b.intern_context(Context::default()).unwrap();
    let f = function(&mut b, "a;b", 1);
    b.add_flat_self(t, f, calls, 3.0).unwrap();
    let text = folded(&b.build(), &ExportOptions::new());
    assert_eq!(text, "a:b 3\n");
}

#[test]
fn an_unknown_metric_names_the_known_ones() {
    let err = write_folded(
        &recursive(),
        &ExportOptions::new().metric("wall"),
        std::io::sink(),
    )
    .unwrap_err();
    assert!(matches!(err, ExportError::UnknownMetric { .. }));
    assert!(err.to_string().contains("cpu time"), "{err}");
}

#[test]
fn callgrind_has_self_costs_by_line_and_inclusive_calls() {
    let text = callgrind(&recursive(), &ExportOptions::new());
    assert!(text.contains("positions: line\n"), "{text}");
    assert!(
        text.contains("event: cpu_time : cpu time (microseconds)\nevents: cpu_time\n"),
        "{text}"
    );
    // main: its own cost at its first line, and a call to fib from line 5 costing fib's
    // inclusive time (both threads; the profile counts no calls: one per call path).
    assert!(
        text.contains("fn=(1) main\n1 500000\ncfl=(1)\ncfn=(2) fib\ncalls=1 10\n5 3000000\n"),
        "{text}"
    );
    // fib: its own cost (the recursive calls' too) at its first line, and the recursive call
    // from line 12.
    assert!(
        text.contains("fn=(2)\n10 3000000\ncfl=(1)\ncfn=(2)\ncalls=1 10\n12 2000000\n"),
        "{text}"
    );
    assert!(text.ends_with("\n\ntotals: 3500000\n"), "{text}");
}

#[test]
fn callgrind_computes_self_costs_of_values_measured_inclusive_only() {
    let mut b = ProfileBuilder::new();
    let cycles = b
        .intern_value_type("cycles", Unit::Count, Measured::InclusiveOnly)
        .unwrap();
    let t = b.intern_context(Context::default()).unwrap();
    let main = function(&mut b, "main", 1);
    let work = function(&mut b, "work", 7);
    let root = b.intern_stack(None, [main]).unwrap();
    let leaf = b.intern_stack(None, [main, work]).unwrap();
    b.add_inclusive(t, root, cycles, 100.0).unwrap();
    b.add_inclusive(t, leaf, cycles, 60.0).unwrap();
    let text = callgrind(&b.build(), &ExportOptions::new());
    assert!(text.contains("fn=(1) main\n1 40\n"), "{text}");
    assert!(text.contains("calls=1 7\n1 60\n"), "{text}");
    assert!(text.contains("fn=(2)\n7 60\n"), "{text}");
    assert!(text.ends_with("totals: 100\n"), "{text}");
}

#[test]
fn speedscope_writes_a_sampled_profile_per_thread() {
    let v = speedscope(&recursive());
    let profiles = v["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    assert_eq!(profiles[0]["type"], "sampled");
    assert_eq!(profiles[0]["name"], "thread 0");
    assert_eq!(profiles[0]["unit"], "seconds");
    assert_eq!(profiles[0]["weights"], serde_json::json!([0.25, 0.5, 1]));
    assert_eq!(profiles[0]["endValue"], 1.75);
    let frames = v["shared"]["frames"].as_array().unwrap();
    let last = profiles[0]["samples"][2].as_array().unwrap();
    let names: Vec<&str> = last
        .iter()
        .map(|i| {
            frames[i.as_u64().unwrap() as usize]["name"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(
        names,
        ["main", "line at app.c:5", "fib", "line at app.c:12", "fib"]
    );
    assert_eq!(frames[0]["file"], "app.c");
    assert_eq!(frames[0]["line"], 1);
}

/// Checks that `events` open and close as a stack, in time order, and returns the frames
/// opened, in order.
fn well_nested(events: &[serde_json::Value]) -> Vec<u64> {
    let mut open = Vec::new();
    let mut opened = Vec::new();
    let mut last = f64::MIN;
    for e in events {
        let at = e["at"].as_f64().unwrap();
        assert!(at >= last, "time goes back at {e}");
        last = at;
        let frame = e["frame"].as_u64().unwrap();
        match e["type"].as_str().unwrap() {
            "O" => {
                open.push(frame);
                opened.push(frame);
            }
            "C" => assert_eq!(open.pop(), Some(frame), "closing {e}"),
            other => panic!("event type {other}"),
        }
    }
    assert!(open.is_empty());
    opened
}

#[test]
fn speedscope_nests_spans_that_touch_or_outlast_their_parent() {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfAndInclusive)
        .unwrap();
    b.set_default_value_type(time).unwrap();
    b.set_span_unit(Unit::Nanoseconds).unwrap();
    let t = b
        .intern_context(Context::new([(IdKind::Thread, 7)]))
        .unwrap();
    let frame = function(&mut b, "frame", 1);
    let work = function(&mut b, "work", 2);
    let mark = function(&mut b, "mark", 3);
    let frame_node = b.intern_stack(None, [frame]).unwrap();
    let work_node = b.intern_stack(None, [frame, work]).unwrap();
    let mark_node = b.intern_stack(None, [frame, mark]).unwrap();
    // Two frames back to back; the first holds work that outlasts it and an instant mark at its
    // very end.
    b.add_span(t, frame_node, 1000, 2000).unwrap();
    b.add_span(t, frame_node, 2000, 3000).unwrap();
    b.add_span(t, work_node, 1500, 2500).unwrap();
    b.add_span(t, mark_node, 2000, 2000).unwrap();
    let v = speedscope(&b.build());
    let p = &v["profiles"][0];
    assert_eq!(p["type"], "evented");
    assert_eq!(p["name"], "thread 7");
    assert_eq!(p["startValue"], 0);
    assert_eq!(p["endValue"], 2000);
    let frames = v["shared"]["frames"].as_array().unwrap();
    let names: Vec<&str> = well_nested(p["events"].as_array().unwrap())
        .into_iter()
        .map(|i| frames[i as usize]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["frame", "work", "mark", "frame"]);
}
