#![no_main]
//! The report from an arbitrary profile model: frames with any names, files and line numbers
//! (up to `u32::MAX`), call paths of any depth, flat values, saved source text, a base to compare
//! with, and any pruning width and output budget. Whatever the builder accepts, the report is
//! written into a temporary folder or refused with an error: never a panic, and never memory in
//! proportion to a line number or to a path's depth times its names.
use arbitrary::Arbitrary;
use profcodec_profile::{
    Context, Frame, FrameKind, IdKind, Measured, Profile, ProfileBuilder, Unit,
};
use profcodec_report::{Input, Options, write_report};

#[derive(Debug, Arbitrary)]
struct FrameSpec {
    kind: u8,
    name: u8,
    file: Option<u8>,
    line: Option<u32>,
}

#[derive(Debug, Arbitrary)]
struct Sample {
    thread: u8,
    value_type: u8,
    /// Frames by index, outermost first; `repeat` times over, so that short inputs make deep
    /// chains.
    stack: Vec<u8>,
    repeat: u8,
    weight: f64,
}

#[derive(Debug, Arbitrary)]
struct Flat {
    thread: u8,
    frame: u8,
    value_type: u8,
    self_value: Option<f64>,
    inclusive: Option<f64>,
}

#[derive(Debug, Arbitrary)]
struct Side {
    names: Vec<String>,
    frames: Vec<FrameSpec>,
    units: Vec<u8>,
    samples: Vec<Sample>,
    flat: Vec<Flat>,
    calls: Option<u8>,
}

#[derive(Debug, Arbitrary)]
struct Case {
    side: Side,
    base: Option<Side>,
    sources: Vec<(u8, Vec<String>)>,
    min_width: f64,
    metric: Option<u8>,
    max_output: Option<u32>,
}

const UNITS: [Unit; 6] = [
    Unit::Nanoseconds,
    Unit::Microseconds,
    Unit::Seconds,
    Unit::Ticks {
        per_second: Some(1_000_000),
    },
    Unit::Samples,
    Unit::Count,
];

const KINDS: [FrameKind; 7] = [
    FrameKind::Function,
    FrameKind::Inlined,
    FrameKind::Block,
    FrameKind::Loop,
    FrameKind::Line,
    FrameKind::Instruction,
    FrameKind::Unknown,
];

fn pick<T>(items: &[T], i: u8) -> Option<&T> {
    (!items.is_empty()).then(|| &items[usize::from(i) % items.len()])
}

/// The profile of `side`, or `None` where the builder refuses it.
fn build(side: &Side) -> Option<Profile> {
    let mut b = ProfileBuilder::new();
    let names: Vec<_> = side
        .names
        .iter()
        .map(|n| b.intern_string(n))
        .collect::<Result<_, _>>()
        .ok()?;
    let mut frames = Vec::new();
    for f in &side.frames {
        let mut frame = Frame::new(KINDS[usize::from(f.kind) % KINDS.len()]);
        frame.function = pick(&names, f.name).copied();
        frame.file = f.file.and_then(|i| pick(&names, i).copied());
        frame.line = f.line;
        frames.push(b.intern_frame(frame).ok()?);
    }
    let mut value_types = Vec::new();
    for (i, &u) in side.units.iter().take(4).enumerate() {
        let unit = UNITS[usize::from(u) % UNITS.len()];
        value_types.push(
            b.intern_value_type(&format!("v{i}"), unit, Measured::SelfOnly)
                .ok()?,
        );
    }
    if let Some(c) = side.calls.and_then(|c| pick(&value_types, c).copied()) {
        b.set_calls_value_type(c).ok()?;
    }
    let mut threads = Vec::new();
    for t in 0..4u64 {
        threads.push(b.intern_context(Context::new([(IdKind::Thread, t)])).ok()?);
    }
    for s in &side.samples {
        let (Some(&vt), Some(&ctx)) = (pick(&value_types, s.value_type), pick(&threads, s.thread))
        else {
            continue;
        };
        let stack: Vec<_> = s.stack.iter().filter_map(|&i| pick(&frames, i).copied()).collect();
        let repeat = usize::from(s.repeat).max(1);
        let deep = stack.iter().copied().cycle().take(stack.len() * repeat);
        let _ = b.add_sample(ctx, deep, vt, s.weight);
    }
    for f in &side.flat {
        let (Some(&vt), Some(&ctx), Some(&frame)) = (
            pick(&value_types, f.value_type),
            pick(&threads, f.thread),
            pick(&frames, f.frame),
        ) else {
            continue;
        };
        if let Some(v) = f.self_value {
            let _ = b.add_flat_self(ctx, frame, vt, v);
        }
        if let Some(v) = f.inclusive {
            let _ = b.add_flat_inclusive(ctx, frame, vt, v);
        }
    }
    Some(b.build())
}

libfuzzer_sys::fuzz_target!(|case: Case| {
    let Some(profile) = build(&case.side) else {
        return;
    };
    let base = case.base.as_ref().and_then(build);
    let mut input = Input::new(&profile).format("fuzz");
    for (file, lines) in &case.sources {
        if let Some(name) = pick(&case.side.names, *file) {
            input = input.embedded_source(name.clone(), lines.clone());
        }
    }
    let base_input = base.as_ref().map(Input::new);
    let mut options = Options::new().min_width(case.min_width);
    options.metric = case
        .metric
        .and_then(|m| pick(&case.side.units, m).map(|_| format!("v{}", m % 4)));
    options.max_output = case.max_output.map(u64::from);
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let out = dir.path().join("report");
    if let Ok(written) = write_report(&input, base_input.as_ref(), &options, &out) {
        let on_disk: u64 = written
            .files
            .iter()
            .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
            .sum();
        assert_eq!(on_disk, written.bytes);
        if let Some(budget) = options.max_output {
            assert!(written.bytes <= budget, "{} bytes over {budget}", written.bytes);
        }
    }
});
