//! `profcodec convert --to firefox` on every corpus input of every format: the output is the
//! Firefox Profiler's processed format (the structure fxprof-processed-profile writes, every
//! table's columns as long as the table and every index inside its table), and its samples say
//! what `profcodec top` says: per function, the weight of the samples whose innermost function
//! it is equals top's self value, the weight of the samples it is on equals top's inclusive
//! value, and the weights add up to top's total; EasyProfiler's blocks are interval markers, as
//! many per block name as top's `calls`, the outermost lasting as long as top's total self time.
#![allow(clippy::unwrap_used)]

mod corpus_inputs;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use corpus_inputs::{corpus_inputs, label, profcodec, run_ok, top_rows};
use serde_json::Value;

/// The categories of frames that own their loops and lines (as `top` groups by function).
const FUNCTION_LIKE: [&str; 4] = ["Function", "Inlined", "Block", "Other"];

fn array<'v>(value: &'v Value, what: &str) -> &'v Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{what} is no array: {value}"))
}

fn index(value: &Value, len: usize, what: &str) -> usize {
    let i = value
        .as_u64()
        .unwrap_or_else(|| panic!("{what} is no index: {value}")) as usize;
    assert!(i < len, "{what} {i} is past the end ({len})");
    i
}

/// One thread's samples as (weight, stack as (function name, category) leaf first).
fn thread_samples(thread: &Value, categories: &[String]) -> Vec<(f64, Vec<(String, String)>)> {
    let strings = array(&thread["stringArray"], "stringArray");
    let table = |name: &str| {
        let t = &thread[name];
        let len = t["length"].as_u64().unwrap() as usize;
        (t, len)
    };
    let (funcs, func_len) = table("funcTable");
    let (frames, frame_len) = table("frameTable");
    let (stacks, stack_len) = table("stackTable");
    let (samples, sample_len) = table("samples");
    for (t, len, columns) in [
        (
            funcs,
            func_len,
            &["name", "isJS", "resource", "fileName"][..],
        ),
        (
            frames,
            frame_len,
            &["func", "category", "address", "line"][..],
        ),
        (stacks, stack_len, &["frame", "prefix"][..]),
        (samples, sample_len, &["stack", "weight", "timeDeltas"][..]),
    ] {
        for column in columns {
            assert_eq!(array(&t[column], column).len(), len, "column {column}");
        }
    }
    assert_eq!(samples["weightType"], "samples");
    let frame_of = |stack: usize| {
        let frame = index(&stacks["frame"][stack], frame_len, "stack frame");
        let func = index(&frames["func"][frame], func_len, "frame func");
        let name = index(&funcs["name"][func], strings.len(), "func name");
        let category = index(&frames["category"][frame], categories.len(), "category");
        (
            strings[name].as_str().unwrap().to_owned(),
            categories[category].clone(),
        )
    };
    (0..sample_len)
        .map(|s| {
            let weight = samples["weight"][s].as_f64().unwrap();
            let mut stack = Vec::new();
            let mut at = samples["stack"][s].as_u64().map(|i| i as usize);
            while let Some(i) = at {
                assert!(i < stack_len, "sample stack {i} past {stack_len}");
                stack.push(frame_of(i));
                at = stacks["prefix"][i].as_u64().map(|p| {
                    assert!((p as usize) < i, "a prefix comes before its stack");
                    p as usize
                });
            }
            (weight, stack)
        })
        .collect()
}

/// The factor from top's unit to the output's: milliseconds of `interval` per weight for time.
fn per_weight(unit: &str, interval_ms: f64) -> f64 {
    let ms = match unit {
        "seconds" => 1e3,
        "microseconds" => 1e-3,
        "nanoseconds" => 1e-6,
        // Counts: a weight is one count where every sample fits 32 bits, as in the corpus.
        _ => return 1.0,
    };
    interval_ms / ms
}

fn close(a: f64, b: f64, samples: usize) -> bool {
    (a - b).abs() <= 0.5 * samples as f64 + 1e-9 * a.abs().max(b.abs())
}

/// Converts `input` with `--metric` (or the default), checks the structure and judges the
/// samples against `top`. Returns the number of functions compared.
fn judge(input: &Path, metric: Option<&str>, dir: &Path) -> usize {
    let file = dir.join(format!("{}.json", label(input)));
    let mut args = vec!["convert", "--to", "firefox", "--force", "-o"];
    let file_arg = file.to_str().unwrap();
    args.push(file_arg);
    if let Some(metric) = metric {
        args.extend(["--metric", metric]);
    }
    args.push(input.to_str().unwrap());
    run_ok(&args);
    let profile: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let meta = &profile["meta"];
    assert!(meta["preprocessedProfileVersion"].as_u64().unwrap() > 0);
    let interval = meta["interval"].as_f64().unwrap();
    assert!(interval > 0.0);
    let categories: Vec<String> = array(&meta["categories"], "categories")
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    let threads = array(&profile["threads"], "threads");
    assert!(!threads.is_empty(), "{}: no thread", input.display());

    if metric.is_none() {
        judge_markers(input, &profile, &categories);
    }

    let top_metric = match metric {
        Some(m) => m.to_owned(),
        None => {
            // The default metric is the first of top's default table.
            let out = run_ok(["top", "--json", "-n", "1", input.to_str().unwrap()]);
            let rows: Vec<Value> = serde_json::from_slice(&out).unwrap();
            match rows.first() {
                Some(row) => row["metric"].as_str().unwrap().to_owned(),
                None => return 0,
            }
        }
    };
    let rows = top_rows(&[input], &top_metric);
    let Some(unit) = rows.first().map(|r| r["unit"].as_str().unwrap().to_owned()) else {
        return 0;
    };
    let scale = per_weight(&unit, interval);

    let mut own: HashMap<String, f64> = HashMap::new();
    let mut on_stack: HashMap<String, f64> = HashMap::new();
    let mut total = 0.0;
    let mut samples = 0;
    let mut names = HashSet::new();
    for thread in threads {
        let name = thread["name"].as_str().unwrap();
        assert!(names.insert(name.to_owned()), "thread {name} twice");
        for (weight, stack) in thread_samples(thread, &categories) {
            // EasyProfiler's values and events are counters and instants, which top leaves
            // out of its rows with whatever is below them.
            if stack
                .iter()
                .any(|(_, category)| category == "Value" || category == "Event")
            {
                continue;
            }
            samples += 1;
            total += weight;
            let owner = stack
                .iter()
                .find(|(_, category)| FUNCTION_LIKE.contains(&category.as_str()));
            if let Some((function, _)) = owner {
                *own.entry(function.clone()).or_default() += weight;
            }
            let functions: HashSet<&String> = stack
                .iter()
                .filter(|(_, category)| FUNCTION_LIKE.contains(&category.as_str()))
                .map(|(function, _)| function)
                .collect();
            for function in functions {
                *on_stack.entry(function.clone()).or_default() += weight;
            }
        }
    }
    let what = format!("{} metric {top_metric}", input.display());
    let top_total: f64 = rows.iter().map(|r| r["self"].as_f64().unwrap()).sum();
    assert!(
        close(total, top_total / scale, samples),
        "{what}: weights add up to {total}, top's total is {}",
        top_total / scale
    );
    let mut by_name: HashMap<&str, Vec<&Value>> = HashMap::new();
    for row in &rows {
        by_name
            .entry(row["name"].as_str().unwrap())
            .or_default()
            .push(row);
    }
    for (name, group) in &by_name {
        let expected: f64 = group.iter().map(|r| r["self"].as_f64().unwrap()).sum();
        let got = own.get(*name).copied().unwrap_or_default();
        assert!(
            close(got, expected / scale, samples),
            "{what}: {name}: self weight {got}, top's self {}",
            expected / scale
        );
        if let (1, Some(inclusive)) = (group.len(), group[0]["inclusive"].as_f64()) {
            let got = on_stack.get(*name).copied().unwrap_or_default();
            assert!(
                close(got, inclusive / scale, samples),
                "{what}: {name}: running weight {got}, top's inclusive {}",
                inclusive / scale
            );
        }
    }
    by_name.len()
}

/// The interval markers of the timed blocks (EasyProfiler's) against what `top` says of the
/// model: per block name, as many markers as `calls`; per thread, the outermost markers last
/// as long as the blocks' total self time. A profile without spans has no markers.
fn judge_markers(input: &Path, profile: &Value, categories: &[String]) {
    let mut counts: HashMap<String, f64> = HashMap::new();
    let mut outermost_ms = 0.0;
    let mut markers = 0;
    for thread in array(&profile["threads"], "threads") {
        let strings = array(&thread["stringArray"], "stringArray");
        let table = &thread["markers"];
        let len = table["length"].as_u64().unwrap() as usize;
        let mut spans = Vec::with_capacity(len);
        for i in 0..len {
            let name = index(&table["name"][i], strings.len(), "marker name");
            let category = index(&table["category"][i], categories.len(), "marker category");
            assert_eq!(categories[category], "Block", "{}", input.display());
            let name = strings[name].as_str().unwrap().to_owned();
            *counts.entry(name).or_default() += 1.0;
            let (start, end) = (
                table["startTime"][i].as_f64().unwrap(),
                table["endTime"][i].as_f64().unwrap(),
            );
            assert!(start <= end, "{}: marker {i}", input.display());
            spans.push((start, end));
        }
        markers += len;
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut covered_to = f64::NEG_INFINITY;
        for (start, end) in spans {
            if start >= covered_to {
                outermost_ms += end - start;
            }
            covered_to = covered_to.max(end);
        }
    }
    let is_capture = input.extension().is_some_and(|e| e == "prof");
    assert_eq!(
        markers > 0,
        is_capture,
        "{}: {markers} markers",
        input.display()
    );
    if !is_capture {
        return;
    }
    let what = input.display();
    for row in top_rows(&[input], "calls") {
        let name = row["name"].as_str().unwrap();
        let calls = row["self"].as_f64().unwrap();
        assert_eq!(counts.get(name), Some(&calls), "{what}: markers of {name}");
    }
    let time = top_rows(&[input], "time");
    assert_eq!(time[0]["unit"], "nanoseconds");
    let self_ns: f64 = time.iter().map(|r| r["self"].as_f64().unwrap()).sum();
    assert!(
        (outermost_ms * 1e6 - self_ns).abs() <= 1e-6 * self_ns + 1.0,
        "{what}: the outermost markers last {outermost_ms} ms, the blocks' self time is \
         {self_ns} ns"
    );
}

#[test]
fn every_corpus_input_converts_to_the_processed_format_as_top_reads_it() {
    let inputs = corpus_inputs();
    let dir = tempfile::tempdir().unwrap();
    let mut compared = 0;
    for input in &inputs {
        compared += judge(input, None, dir.path());
        // A count metric too, where the format has one.
        for metric in ["calls", "samples"] {
            let known = profcodec()
                .args(["top", "-n", "1", "--metric", metric])
                .arg(input)
                .output()
                .unwrap()
                .status
                .success();
            if known {
                compared += judge(input, Some(metric), dir.path());
            }
        }
    }
    println!(
        "{} inputs, {compared} (metric, function) rows equal in the Firefox Profiler's samples \
         and profcodec top",
        inputs.len()
    );
}

#[test]
fn an_unknown_metric_is_a_usage_error_naming_the_known_ones() {
    let input =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof/hello.nytprof.out");
    let out = profcodec()
        .args(["convert", "--to", "firefox", "--metric", "cycles"])
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cycles") && stderr.contains("time"),
        "{stderr}"
    );
}
