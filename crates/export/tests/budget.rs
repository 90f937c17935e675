//! The output budget and folded names, on profiles crafted in memory: the deep call
//! chains (16,000 and 64,000 deep; 400 deep with a 10 kB name) refused with the size projected
//! and the flag that allows it, nothing written; the projection equal to what is written;
//! speedscope's call trees written evented (linear) where sampled stacks would be quadratic,
//! with the same weights per stack; folded lines of names holding line breaks and `;`; and
//! NYTProf's folded stacks equal to `nytprofcalls`' on a profile with string evals.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use profcodec_export::{
    ExportError, ExportOptions, default_output_budget, write_folded, write_speedscope,
};
use profcodec_profile::{Context, Frame, FrameId, IdKind, Measured, Profile, ProfileBuilder, Unit};
use serde_json::Value;

/// One function called from itself `depth` deep, 1 µs of self time on every level.
fn chain(depth: usize, name: &str) -> Profile {
    let mut b = ProfileBuilder::new();
    let t = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let f = function(&mut b, name);
    let mut node = None;
    for _ in 0..depth {
        let n = b.intern_stack(node, [f]).unwrap();
        b.add_self(t, n, time, 1000.0).unwrap();
        node = Some(n);
    }
    b.build()
}

fn function(b: &mut ProfileBuilder, name: &str) -> FrameId {
    let name = b.intern_string(name).unwrap();
    b.intern_frame(Frame::function(name)).unwrap()
}

/// The error of an export refused for its size: (target, projected, budget), checking that
/// nothing was written and that the message names the flag.
fn refused(result: Result<(), ExportError>, out: &[u8]) -> (&'static str, u64, u64) {
    assert!(out.is_empty(), "{} bytes written", out.len());
    let err = result.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("--max-output"), "{message}");
    match err {
        ExportError::OutputTooLarge {
            target,
            projected,
            budget,
        } => {
            assert!(projected > budget);
            assert!(message.contains(&projected.to_string()), "{message}");
            (target, projected, budget)
        }
        other => panic!("not refused for its size: {other}"),
    }
}

#[test]
fn a_deep_chain_is_refused_by_folded_with_its_size_and_the_flag() {
    // The NYTProf chain: 496 kB of input, 16,000 deep.
    let profile = chain(16_000, "main::recurse");
    let options = ExportOptions::new().max_output(default_output_budget(496_000));
    let mut out = Vec::new();
    let (target, projected, _) = refused(write_folded(&profile, &options, &mut out), &out);
    assert_eq!(target, "folded");
    // Depth d: a path of 14d - 1 bytes, a space, "1000" and a line break.
    let n = 16_000u64;
    assert_eq!(projected, 7 * n * (n + 1) + 5 * n);
    let err = write_folded(&profile, &options, Vec::new()).unwrap_err();
    assert!(
        err.to_string().contains("--max-output 2G allows it"),
        "{err}"
    );
}

#[test]
fn a_long_name_400_deep_is_refused_by_folded() {
    // The EasyProfiler capture: 19 kB, 400 deep with a 10 kB name.
    let profile = chain(400, &"x".repeat(10_000));
    let options = ExportOptions::new().max_output(default_output_budget(19_000));
    let mut out = Vec::new();
    let (_, projected, _) = refused(write_folded(&profile, &options, &mut out), &out);
    assert_eq!(projected, 802_082_200);
}

#[test]
fn the_folded_projection_is_the_size_written() {
    let profile = chain(2_000, "f\nx;y");
    let mut out = Vec::new();
    let options = ExportOptions::new().max_output(1);
    let (_, projected, _) = refused(write_folded(&profile, &options, &mut out), &out);
    let exact = ExportOptions::new().max_output(projected);
    write_folded(&profile, &exact, &mut out).unwrap();
    assert_eq!(out.len() as u64, projected);
    assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 2_000);
}

/// Each line of folded output: (frames, value), checking that it has exactly one value.
fn folded_lines(text: &str) -> Vec<(Vec<&str>, u64)> {
    text.lines()
        .map(|line| {
            let (stack, value) = line.rsplit_once(' ').unwrap();
            let value: u64 = value
                .parse()
                .unwrap_or_else(|_| panic!("{line:?}: no value"));
            (stack.split(';').collect(), value)
        })
        .collect()
}

#[test]
fn folded_names_holding_line_breaks_and_semicolons_stay_one_frame_each() {
    let mut b = ProfileBuilder::new();
    let t = b.intern_context(Context::default()).unwrap();
    let n = b
        .intern_value_type("n", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let main = function(&mut b, "main");
    // Perl allows any string as a sub name: a line break, a `;`, a tab, a carriage return.
    let odd = function(&mut b, "odd\nroot;x\ty\r\u{2028}z");
    let eval = function(&mut b, "main::__ANON__[(eval 12)[t.pl:3]:1]");
    let leaf = function(&mut b, "leaf 7");
    b.add_sample(t, [main], n, 1.0).unwrap();
    b.add_sample(t, [main, odd], n, 2.0).unwrap();
    b.add_sample(t, [main, odd, eval], n, 3.0).unwrap();
    b.add_sample(t, [main, odd, eval, leaf], n, 4.0).unwrap();
    let profile = b.build();
    fn nytprofcalls_name(label: &str) -> std::borrow::Cow<'_, str> {
        profcodec_nytprof::calls::nytprofcalls_name(label)
    }
    for options in [
        ExportOptions::new(),
        ExportOptions::new().folded_names(nytprofcalls_name),
    ] {
        let mut out = Vec::new();
        write_folded(&profile, &options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines = folded_lines(&text);
        assert_eq!(lines.len(), 4, "{text}");
        for (i, (frames, value)) in lines.iter().enumerate() {
            // No invented root: every path starts at main, and is as deep as its sample.
            assert_eq!(frames[0], "main", "{text}");
            assert_eq!(frames.len(), i + 1, "{text}");
            assert_eq!(*value, i as u64 + 1, "{text}");
        }
        assert_eq!(lines[1].0[1], "odd root:x y  z");
        assert_eq!(lines[3].0[3], "leaf 7");
        let eval_name = lines[2].0[2];
        if options.folded_names.is_some() {
            // As nytprofcalls prints it: the space kept.
            assert_eq!(eval_name, "main::__ANON__[(eval 0)[t.pl:3]:1]");
        } else {
            assert_eq!(eval_name, "main::__ANON__[(eval 12)[t.pl:3]:1]");
        }
    }
}

fn speedscope(profile: &Profile, options: &ExportOptions) -> Value {
    let mut out = Vec::new();
    write_speedscope(profile, options, &mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// Each stack's weight in a speedscope file (root first, by frame names): sampled profiles'
/// weights, or evented profiles replayed (the time between two events goes to the stack open
/// then), checking that events nest and go forward in time.
fn weights_by_stack(file: &Value) -> BTreeMap<(String, Vec<String>), f64> {
    let frames: Vec<String> = file["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap().to_owned())
        .collect();
    let mut weights = BTreeMap::new();
    for p in file["profiles"].as_array().unwrap() {
        let name = p["name"].as_str().unwrap().to_owned();
        let mut add = |stack: &[String], w: f64| {
            if w != 0.0 {
                *weights.entry((name.clone(), stack.to_vec())).or_insert(0.0) += w;
            }
        };
        if p["type"] == "sampled" {
            let samples = p["samples"].as_array().unwrap();
            let ws = p["weights"].as_array().unwrap();
            for (s, w) in samples.iter().zip(ws) {
                let stack: Vec<String> = s
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|i| frames[i.as_u64().unwrap() as usize].clone())
                    .collect();
                add(&stack, w.as_f64().unwrap());
            }
            continue;
        }
        let mut stack: Vec<String> = Vec::new();
        let mut last = 0.0;
        for e in p["events"].as_array().unwrap() {
            let at = e["at"].as_f64().unwrap();
            assert!(at >= last, "events go back in time");
            add(&stack, at - last);
            last = at;
            let frame = frames[e["frame"].as_u64().unwrap() as usize].clone();
            if e["type"] == "O" {
                stack.push(frame);
            } else {
                assert_eq!(stack.pop(), Some(frame), "events do not nest");
            }
        }
        assert!(stack.is_empty());
        assert_eq!(p["endValue"].as_f64().unwrap(), last);
    }
    weights
}

#[test]
fn a_deep_chain_goes_to_speedscope_evented_in_linear_size() {
    // The 2 MB NYTProf chain, 64,000 deep: 4.1 GB of sampled stacks.
    let depth = 64_000;
    let profile = chain(depth, "main::recurse");
    let options = ExportOptions::new().max_output(default_output_budget(2_000_000));
    let mut out = Vec::new();
    write_speedscope(&profile, &options, &mut out).unwrap();
    assert!(
        out.len() < 100 * depth,
        "{} bytes for {depth} nodes",
        out.len()
    );
    let file: Value = serde_json::from_slice(&out).unwrap();
    let p = &file["profiles"][0];
    assert_eq!(p["type"], "evented");
    assert_eq!(p["events"].as_array().unwrap().len(), 2 * depth);
    // Replayed: every level spends its 1000 ns with the chain open down to it.
    let mut open = 0usize;
    let mut last = 0.0;
    let mut by_depth = vec![0.0; depth + 1];
    for e in p["events"].as_array().unwrap() {
        let at = e["at"].as_f64().unwrap();
        assert!(at >= last);
        by_depth[open] += at - last;
        last = at;
        if e["type"] == "O" {
            open += 1;
        } else {
            open -= 1;
        }
    }
    assert_eq!(open, 0);
    assert_eq!(by_depth[0], 0.0);
    assert!(by_depth[1..].iter().all(|&w| w == 1000.0));
    assert_eq!(p["endValue"].as_f64().unwrap(), last);
    // Without a budget too: sampled stacks would be over 64 MiB and 16 times the events.
    let unbudgeted = speedscope(&profile, &ExportOptions::new());
    assert_eq!(unbudgeted["profiles"][0]["type"], "evented");
}

#[test]
fn speedscope_refuses_what_not_even_events_fit() {
    let profile = chain(64_000, "main::recurse");
    let mut out = Vec::new();
    let options = ExportOptions::new().max_output(1 << 20);
    let (target, projected, _) = refused(write_speedscope(&profile, &options, &mut out), &out);
    assert_eq!(target, "speedscope");
    // The evented form's projection, linear: about a hundred bytes a node.
    assert!(projected < 200 * 64_000, "{projected}");
}

/// A comb: a chain `depth` deep whose every level also calls a leaf, on two threads, the
/// values on the leaves and every other level.
fn comb(depth: usize) -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("time", Unit::Microseconds, Measured::SelfOnly)
        .unwrap();
    let spine = function(&mut b, "spine");
    let leaf = function(&mut b, "leaf");
    let other = function(&mut b, "other");
    for thread in 0..2 {
        let t = b
            .intern_context(Context::new([(IdKind::Thread, thread)]))
            .unwrap();
        let mut node = None;
        for level in 0..depth {
            let n = b.intern_stack(node, [spine]).unwrap();
            if level % 2 == 0 {
                b.add_self(t, n, time, 0.5 + level as f64).unwrap();
            }
            let l = b.intern_stack(Some(n), [leaf]).unwrap();
            b.add_self(t, l, time, (thread + 1) as f64 * 3.0).unwrap();
            if thread == 1 && level == depth / 2 {
                let o = b.intern_stack(Some(n), [other]).unwrap();
                b.add_self(t, o, time, 7.0).unwrap();
            }
            node = Some(n);
        }
    }
    b.build()
}

#[test]
fn evented_call_trees_carry_the_weights_of_the_sampled_stacks() {
    let profile = comb(300);
    let sampled = speedscope(&profile, &ExportOptions::new());
    assert_eq!(sampled["profiles"][0]["type"], "sampled");
    let sampled_size = serde_json::to_vec(&sampled).unwrap().len() as u64;
    // A budget below the sampled stacks and above their events.
    let options = ExportOptions::new().max_output(sampled_size / 2);
    let evented = speedscope(&profile, &options);
    let profiles = evented["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 2);
    assert!(profiles.iter().all(|p| p["type"] == "evented"));
    assert_eq!(weights_by_stack(&evented), weights_by_stack(&sampled));
}

/// The lines `nytprofcalls FILE` prints, as a multiset.
fn nytprofcalls(file: &Path) -> Option<BTreeMap<String, usize>> {
    let out = Command::new("nytprofcalls").arg(file).output().ok()?;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(multiset(&String::from_utf8(out.stdout).unwrap()))
}

fn multiset(text: &str) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for line in text.lines() {
        *m.entry(line.to_owned()).or_insert(0) += 1;
    }
    m
}

#[test]
fn nytprof_string_evals_fold_as_nytprofcalls_prints_them() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/nytprof/evals_small.nytprof.out");
    let Some(theirs) = nytprofcalls(&file) else {
        println!("nytprofcalls is not installed: not compared (cargo xtask test installs it)");
        return;
    };
    let profile =
        profcodec_nytprof::to_profile::to_profile(&std::fs::read(&file).unwrap()).unwrap();
    fn nytprofcalls_name(label: &str) -> std::borrow::Cow<'_, str> {
        profcodec_nytprof::calls::nytprofcalls_name(label)
    }
    let options = ExportOptions::new().folded_names(nytprofcalls_name);
    let mut out = Vec::new();
    write_folded(&profile, &options, &mut out).unwrap();
    let ours = multiset(&String::from_utf8(out).unwrap());
    assert!(
        ours.keys().any(|l| l.contains("(eval 0)[")),
        "no string eval: {ours:?}"
    );
    assert_eq!(ours, theirs);
}

#[cfg(feature = "pprof")]
#[test]
fn a_deep_chain_is_refused_by_pprof_before_anything_is_written() {
    // The 2 MB chain, 64,000 deep: 17 s and 767 MB before.
    let profile = chain(64_000, "main::recurse");
    let options = ExportOptions::new().max_output(default_output_budget(2_000_000));
    let mut out = Vec::new();
    let result = profcodec_export::pprof::write_pprof(&profile, &options, &mut out);
    let (target, projected, _) = refused(result, &out);
    assert!(target.starts_with("pprof"), "{target}");
    // 64,000²/2 location ids (one location: a byte each).
    assert!(projected > 2_048_000_000, "{projected}");
    // A shallower chain under a raised budget is written.
    let profile = chain(2_000, "main::recurse");
    let options = ExportOptions::new().max_output(8 << 20);
    profcodec_export::pprof::write_pprof(&profile, &options, &mut out).unwrap();
    assert_eq!(&out[..2], [0x1f, 0x8b]);
}
