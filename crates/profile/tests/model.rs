//! The model's behaviour on small profiles shaped like each format's data.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use profcodec_profile::{
    CallEdge, Combine, Context, ContextFilter, ContextId, Frame, FrameId, FrameKind, GroupBy,
    IdKind, Measured, ModelError, Order, Profile, ProfileBuilder, Query, QueryError, Row, Source,
    Unit, ValueTypeId, diff,
};

fn function(b: &mut ProfileBuilder, name: &str) -> FrameId {
    let name = b.intern_string(name).unwrap();
    b.intern_frame(Frame::function(name)).unwrap()
}

/// A builder with one context and one value type, as most tests start.
fn builder(
    context: Context,
    value_type: &str,
    unit: Unit,
    measured: Measured,
) -> (ProfileBuilder, ContextId, ValueTypeId) {
    let mut b = ProfileBuilder::new();
    let context = b.intern_context(context).unwrap();
    let value_type = b.intern_value_type(value_type, unit, measured).unwrap();
    (b, context, value_type)
}

fn row<'a>(rows: &'a [Row], name: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name} in {rows:#?}"))
}

/// Stacks with recursion, one thread: main -> a -> a -> a (30), main -> a -> b -> a (20),
/// main -> b (5), main (1).
fn recursive() -> Profile {
    let (mut b, ctx, time) = builder(
        Context::new([(IdKind::Thread, 1)]),
        "time",
        Unit::Nanoseconds,
        Measured::SelfOnly,
    );
    let (main, a, bb) = (
        function(&mut b, "main"),
        function(&mut b, "a"),
        function(&mut b, "b"),
    );
    b.add_sample(ctx, [main, a, a, a], time, 30.0).unwrap();
    b.add_sample(ctx, [main, a, bb, a], time, 20.0).unwrap();
    b.add_sample(ctx, [main, bb], time, 5.0).unwrap();
    b.add_sample(ctx, [main], time, 1.0).unwrap();
    b.build()
}

#[test]
fn recursion_counts_once_per_stack() {
    let p = recursive();
    let top = p.top(&Query::new().by(Order::Inclusive)).unwrap();
    assert_eq!(top.source, Source::Tree);
    assert_eq!(top.total.self_value, 56.0);
    assert_eq!(top.total.inclusive, Some(56.0));
    let main = row(&top.rows, "main");
    assert_eq!((main.self_value, main.inclusive), (1.0, Some(56.0)));
    let a = row(&top.rows, "a");
    assert_eq!((a.self_value, a.inclusive), (50.0, Some(50.0)));
    let b = row(&top.rows, "b");
    // b is on the stacks of 20 (below a) and 5; the a below b is not b's self.
    assert_eq!((b.self_value, b.inclusive), (5.0, Some(25.0)));
    assert_eq!(
        top.rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
        ["main", "a", "b"]
    );
    assert_eq!(main.unit, "nanoseconds");
    assert_eq!(main.value_type, "time");
    assert_eq!(main.calls, None);
}

#[test]
fn samples_share_nodes() {
    let (mut b, ctx, samples) = builder(
        Context::new([]),
        "samples",
        Unit::Samples,
        Measured::SelfOnly,
    );
    let frames: Vec<_> = (0..10)
        .map(|i| function(&mut b, &format!("f{i}")))
        .collect();
    for i in 0..10_000 {
        b.add_sample(ctx, frames[..1 + i % 10].iter().copied(), samples, 1.0)
            .unwrap();
    }
    let p = b.build();
    assert_eq!(p.nodes().len(), 10);
    assert_eq!(p.node_values().len(), 10);
    assert_eq!(p.string_count(), 11);
    let top = p.top(&Query::new()).unwrap();
    assert_eq!(top.total.self_value, 10_000.0);
    assert_eq!(row(&top.rows, "f0").inclusive, Some(10_000.0));
    assert_eq!(row(&top.rows, "f9").inclusive, Some(1_000.0));
}

/// An HPCToolkit-shaped tree: functions with loops and lines below them, exclusive values at
/// the lines, measured inclusive values everywhere, two ranks and a summary.
fn hpctoolkit_like() -> Profile {
    let mut b = ProfileBuilder::new();
    let time = b
        .intern_value_type("CPUTIME (sec)", Unit::Seconds, Measured::SelfAndInclusive)
        .unwrap();
    let module = b.intern_string("/bin/app").unwrap();
    let file = b.intern_string("app.c").unwrap();
    let main_name = b.intern_string("main").unwrap();
    let solve_name = b.intern_string("solve").unwrap();
    let main = b
        .intern_frame(
            Frame::function(main_name)
                .with_file(file)
                .with_module(module),
        )
        .unwrap();
    let solve = b
        .intern_frame(
            Frame::function(solve_name)
                .with_file(file)
                .with_module(module),
        )
        .unwrap();
    let loop_frame = b
        .intern_frame(Frame::new(FrameKind::Loop).with_file(file).with_line(12))
        .unwrap();
    let line = |b: &mut ProfileBuilder, l| {
        b.intern_frame(Frame::new(FrameKind::Line).with_file(file).with_line(l))
            .unwrap()
    };
    let (l5, l13, l20) = (line(&mut b, 5), line(&mut b, 13), line(&mut b, 20));
    let n_main = b.intern_node(None, main).unwrap();
    let n_l5 = b.intern_node(Some(n_main), l5).unwrap(); // call site of solve
    let n_solve = b.intern_node(Some(n_l5), solve).unwrap();
    let n_loop = b.intern_node(Some(n_solve), loop_frame).unwrap();
    let n_l13 = b.intern_node(Some(n_loop), l13).unwrap();
    let n_l20 = b.intern_node(Some(n_main), l20).unwrap();
    let summary = b.intern_context(Context::summary()).unwrap();
    for rank in 0..2u64 {
        let ctx = b
            .intern_context(Context::new([(IdKind::Rank, rank)]))
            .unwrap();
        let scale = (rank + 1) as f64;
        for (ctx, scale) in [(ctx, scale), (summary, scale)] {
            b.add_self(ctx, n_l13, time, 6.0 * scale).unwrap();
            b.add_self(ctx, n_l20, time, 1.0 * scale).unwrap();
            for (node, inclusive) in [
                (n_main, 7.0),
                (n_l5, 6.0),
                (n_solve, 6.0),
                (n_loop, 6.0),
                (n_l13, 6.0),
                (n_l20, 1.0),
            ] {
                b.add_inclusive(ctx, node, time, inclusive * scale).unwrap();
            }
        }
    }
    b.build()
}

#[test]
fn measured_inclusive_and_owning_functions() {
    let p = hpctoolkit_like();
    let top = p.top(&Query::new().value_type("CPUTIME (sec)")).unwrap();
    assert_eq!(top.contexts, 1, "the whole program is the summary context");
    assert_eq!(top.unit, "seconds");
    assert_eq!(top.total.self_value, 21.0);
    let solve = row(&top.rows, "solve");
    assert_eq!((solve.self_value, solve.inclusive), (18.0, Some(18.0)));
    assert_eq!(solve.module.as_deref(), Some("/bin/app"));
    let main = row(&top.rows, "main");
    assert_eq!((main.self_value, main.inclusive), (3.0, Some(21.0)));
    assert_eq!(top.rows.len(), 2);

    let lines = p.top(&Query::new().group(GroupBy::Line)).unwrap();
    assert_eq!(row(&lines.rows, "app.c:13").self_value, 18.0);
    // The call site line includes the callee.
    assert_eq!(row(&lines.rows, "app.c:5").inclusive, Some(18.0));
    let modules = p.top(&Query::new().group(GroupBy::Module)).unwrap();
    assert_eq!(modules.rows.len(), 1);
    assert_eq!(modules.rows[0].name, "/bin/app");
    assert_eq!(modules.rows[0].inclusive, Some(21.0));
}

#[test]
fn context_filters_and_mean() {
    let p = hpctoolkit_like();
    let all = p.top(&Query::new().contexts(ContextFilter::All)).unwrap();
    assert_eq!((all.contexts, all.total.self_value), (2, 21.0));
    let mean = p
        .top(
            &Query::new()
                .contexts(ContextFilter::All)
                .combine(Combine::Mean),
        )
        .unwrap();
    assert_eq!(mean.total.self_value, 10.5);
    assert_eq!(row(&mean.rows, "solve").inclusive, Some(9.0));
    let rank1 = p
        .top(&Query::new().contexts(ContextFilter::Matching(vec![(IdKind::Rank, 1)])))
        .unwrap();
    assert_eq!((rank1.contexts, rank1.total.self_value), (1, 14.0));
    let (rank0, _) = p
        .contexts()
        .find(|(_, c)| c.id(IdKind::Rank) == Some(0))
        .unwrap();
    assert_eq!(p.context_label(rank0), "rank 0");
    let by_id = p
        .top(&Query::new().contexts(ContextFilter::Ids(vec![rank0])))
        .unwrap();
    assert_eq!(by_id.total.self_value, 7.0);
    let (time, _) = p.value_types().next().unwrap();
    let totals = p.context_totals(time);
    assert_eq!(totals.len(), 3);
    assert_eq!(
        totals.iter().map(|&(_, t)| t).collect::<Vec<_>>(),
        [21.0, 7.0, 14.0]
    );
    let none = p
        .top(&Query::new().contexts(ContextFilter::Matching(vec![(IdKind::Thread, 9)])))
        .unwrap();
    assert_eq!((none.contexts, none.rows.len()), (0, 0));
}

#[test]
fn self_derived_from_inclusive_only() {
    let (mut b, ctx, v) = builder(
        Context::new([]),
        "cycles",
        Unit::Count,
        Measured::InclusiveOnly,
    );
    let (f, g) = (function(&mut b, "f"), function(&mut b, "g"));
    let nf = b.intern_node(None, f).unwrap();
    let ng = b.intern_node(Some(nf), g).unwrap();
    b.add_inclusive(ctx, nf, v, 10.0).unwrap();
    b.add_inclusive(ctx, ng, v, 4.0).unwrap();
    let top = b.build().top(&Query::new()).unwrap();
    assert_eq!(row(&top.rows, "f").self_value, 6.0);
    assert_eq!(row(&top.rows, "g").self_value, 4.0);
    assert_eq!(top.total.self_value, 10.0);
}

/// NYTProf-shaped: flat per-sub values as the tool computed them, lines, call edges, and the
/// stacks `nytprofcalls` prints.
#[test]
fn flat_values_win_in_auto() {
    let mut b = ProfileBuilder::new();
    let ctx = b
        .intern_context(Context::new([(IdKind::Process, 42)]))
        .unwrap();
    let ticks = Unit::Ticks {
        per_second: Some(10_000_000),
    };
    let time = b
        .intern_value_type("time", ticks, Measured::SelfAndInclusive)
        .unwrap();
    let calls = b
        .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let statements = b
        .intern_value_type("statements", Unit::Count, Measured::SelfOnly)
        .unwrap();
    b.set_calls_value_type(calls).unwrap();
    b.set_default_value_type(time).unwrap();
    let file = b.intern_string("x.pl").unwrap();
    let main = function(&mut b, "main::RUNTIME");
    let fib = function(&mut b, "main::fib");
    let line = b
        .intern_frame(Frame::new(FrameKind::Line).with_file(file).with_line(7))
        .unwrap();
    b.add_flat_self(ctx, fib, time, 90.0).unwrap();
    b.add_flat_inclusive(ctx, fib, time, 100.0).unwrap();
    b.add_flat_self(ctx, fib, calls, 177.0).unwrap();
    b.add_flat_self(ctx, main, time, 10.0).unwrap();
    b.add_flat_inclusive(ctx, main, time, 110.0).unwrap();
    b.add_flat_self(ctx, line, time, 55.0).unwrap();
    b.add_flat_self(ctx, line, statements, 3.0).unwrap();
    let edge = b
        .intern_call_edge(CallEdge {
            caller: main,
            site: Some(line),
            callee: fib,
        })
        .unwrap();
    b.add_edge_value(ctx, edge, calls, 1.0).unwrap();
    b.add_edge_value(ctx, edge, calls, 1.0).unwrap();
    // The stacks disagree on purpose: the flat values are what Auto reports.
    b.add_sample(ctx, [main, fib], time, 1.0).unwrap();
    let p = b.build();
    assert_eq!(p.edge_values().len(), 1);
    assert_eq!(p.edge_values()[0].value, 2.0);
    assert_eq!(p.call_edge(p.edge_values()[0].edge).callee, fib);

    let top = p.top(&Query::new()).unwrap();
    assert_eq!(top.source, Source::Flat);
    assert_eq!(top.unit, "ticks");
    assert_eq!(top.rows[0].name, "main::fib");
    assert_eq!(top.rows[0].inclusive, Some(100.0));
    assert_eq!(top.rows[0].calls, Some(177.0));
    assert_eq!(top.total.self_value, 100.0);
    let tree = p.top(&Query::new().source(Source::Tree)).unwrap();
    assert_eq!(tree.total.self_value, 1.0);
    let lines = p.top(&Query::new().group(GroupBy::Line)).unwrap();
    assert_eq!(lines.rows.len(), 1);
    assert_eq!(lines.rows[0].name, "x.pl:7");
    let counts = p
        .top(&Query::new().value_type("statements").group(GroupBy::Line))
        .unwrap();
    assert_eq!(counts.rows[0].self_value, 3.0);
}

#[test]
fn merge_matches_frames_and_contexts() {
    let a = recursive();
    let merged = Profile::merge([&a, &a]).unwrap();
    assert_eq!(merged.nodes().len(), a.nodes().len());
    assert_eq!(merged.contexts().len(), 1);
    let top = merged.top(&Query::new()).unwrap();
    assert_eq!(top.total.self_value, 112.0);

    // Same frames interned in another order, another thread.
    let (mut b, ctx, time) = builder(
        Context::new([(IdKind::Thread, 2)]),
        "time",
        Unit::Nanoseconds,
        Measured::SelfOnly,
    );
    let bb = function(&mut b, "b");
    let main = function(&mut b, "main");
    b.add_sample(ctx, [main, bb], time, 7.0).unwrap();
    let other = b.build();
    let merged = Profile::merge([&a, &other]).unwrap();
    assert_eq!(merged.nodes().len(), a.nodes().len());
    assert_eq!(merged.contexts().len(), 2);
    let top = merged.top(&Query::new()).unwrap();
    assert_eq!(row(&top.rows, "b").self_value, 12.0);
    let thread2 = merged
        .top(&Query::new().contexts(ContextFilter::Matching(vec![(IdKind::Thread, 2)])))
        .unwrap();
    assert_eq!(thread2.total.self_value, 7.0);
}

#[test]
fn diff_reports_changes() {
    let base = recursive();
    let mut b = ProfileBuilder::new();
    b.append(&base).unwrap();
    let ctx = b
        .intern_context(Context::new([(IdKind::Thread, 1)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = function(&mut b, "main");
    let c = function(&mut b, "c");
    b.add_sample(ctx, [main, c], time, 8.0).unwrap();
    let new = b.build();

    let d = diff(&base, &new, &Query::new()).unwrap();
    assert_eq!(d.rows[0].name, "c");
    assert_eq!(d.rows[0].base, None);
    assert_eq!(d.rows[0].self_change, 8.0);
    assert_eq!(d.rows[0].self_relative, None);
    assert_eq!(d.base_total.self_value, 56.0);
    assert_eq!(d.new_total.self_value, 64.0);
    let main = d.rows.iter().find(|r| r.name == "main").unwrap();
    assert_eq!(main.self_change, 0.0);
    assert_eq!(main.inclusive_change, Some(8.0));
    assert_eq!(main.inclusive_relative, Some(8.0 / 56.0));

    let back = diff(&new, &base, &Query::new().limit(1)).unwrap();
    assert_eq!(back.rows.len(), 1);
    assert_eq!(back.rows[0].new, None);
    assert_eq!(back.rows[0].self_relative, Some(-1.0));

    let same = diff(&base, &base, &Query::new()).unwrap();
    assert!(same.rows.iter().all(|r| r.self_change == 0.0));
}

#[test]
fn diff_refuses_other_units() {
    let base = recursive();
    let (mut b, ctx, time) = builder(Context::new([]), "time", Unit::Seconds, Measured::SelfOnly);
    let f = function(&mut b, "a");
    b.add_sample(ctx, [f], time, 1.0).unwrap();
    let err = diff(&base, &b.build(), &Query::new()).unwrap_err();
    assert!(matches!(err, QueryError::UnitMismatch { .. }), "{err}");
}

#[test]
fn unknown_value_type_names_the_known_ones() {
    let err = recursive()
        .top(&Query::new().value_type("cycles"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "no such metric: value type: \"cycles\" is not one of time"
    );
    assert_eq!(
        Profile::default().top(&Query::new()).unwrap_err(),
        QueryError::NoValueTypes
    );
}

#[test]
fn foreign_handles_are_errors() {
    let mut big = ProfileBuilder::new();
    for i in 0..5 {
        function(&mut big, &format!("f{i}"));
    }
    let foreign = function(&mut big, "g");
    let mut b = ProfileBuilder::new();
    let err = b.intern_node(None, foreign).unwrap_err();
    assert!(matches!(
        err,
        ModelError::InvalidId {
            table: "frames",
            index: 5,
            len: 0
        }
    ));
    assert_eq!(
        err.to_string(),
        "handle names no entry of this profile: frames: index 5 but the table holds 0"
    );
    assert_eq!(
        b.intern_stack(None, []).unwrap_err(),
        ModelError::EmptyStack
    );
    let own = function(&mut b, "own");
    let root = b.intern_node(None, own).unwrap();
    assert_eq!(
        b.intern_stack(Some(root), []).unwrap_err(),
        ModelError::EmptyStack
    );
    let below = b.intern_stack(Some(root), [own, own]).unwrap();
    // The same path from the roots reuses the nodes, through the cache of the last stack or not.
    assert_eq!(b.intern_stack(None, [own, own, own]).unwrap(), below);
    assert_eq!(b.intern_stack(None, [own]).unwrap(), root);
    assert_eq!(b.intern_stack(None, [own, own, own]).unwrap(), below);
    let ctx = big.intern_context(Context::new([])).unwrap();
    let vt = big
        .intern_value_type("t", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let node = big.intern_node(None, foreign).unwrap();
    assert!(b.add_self(ctx, node, vt, 1.0).is_err());
    assert!(b.add_span(ctx, node, 0, 1).is_err());
    assert!(b.set_default_value_type(vt).is_err());
}

#[test]
fn deep_tree_needs_no_deep_call_stack() {
    // A naive recursive walk would overflow the test thread's stack at this depth.
    let (mut b, ctx, v) = builder(
        Context::new([]),
        "samples",
        Unit::Samples,
        Measured::SelfOnly,
    );
    let f = function(&mut b, "f");
    let g = function(&mut b, "g");
    let depth = 100_000;
    let mut node = None;
    for i in 0..depth {
        node = Some(b.intern_node(node, if i % 2 == 0 { f } else { g }).unwrap());
    }
    b.add_self(ctx, node.unwrap(), v, 1.0).unwrap();
    // And a chain of distinct functions, on which looking up each node's ancestors for its own
    // function would be quadratic.
    let mut chain = None;
    for i in 0..depth {
        let frame = function(&mut b, &format!("h{i}"));
        chain = Some(b.intern_node(chain, frame).unwrap());
    }
    b.add_self(ctx, chain.unwrap(), v, 1.0).unwrap();
    let p = b.build();
    assert_eq!(p.stack(node.unwrap()).count(), depth);
    let top = p.top(&Query::new().by(Order::Inclusive)).unwrap();
    assert_eq!(top.rows.len(), 2 + depth);
    assert_eq!(top.total.self_value, 2.0);
    assert!(top.rows.iter().all(|r| r.inclusive == Some(1.0)));
}

#[test]
fn spans_and_labels() {
    let mut b = ProfileBuilder::new();
    let name = b.intern_string("Main thread").unwrap();
    let ctx = b
        .intern_context(Context::new([(IdKind::Thread, 7)]).with_name(name))
        .unwrap();
    b.set_span_unit(Unit::Nanoseconds).unwrap();
    let block_name = b.intern_string("update").unwrap();
    let file = b.intern_string("game.cpp").unwrap();
    let block = b
        .intern_frame(
            Frame::new(FrameKind::Block)
                .with_function(block_name)
                .with_file(file)
                .with_line(9),
        )
        .unwrap();
    let lp = b
        .intern_frame(Frame::new(FrameKind::Loop).with_file(file).with_line(12))
        .unwrap();
    let ins = b
        .intern_frame(Frame::new(FrameKind::Instruction).with_address(0x4010))
        .unwrap();
    let node = b.intern_node(None, block).unwrap();
    b.add_span(ctx, node, 100, 250).unwrap();
    let p = b.build();
    assert_eq!(p.spans().len(), 1);
    assert_eq!(p.span_unit(), Some(Unit::Nanoseconds));
    assert_eq!(p.context_label(ctx), "thread 7 (Main thread)");
    assert_eq!(p.frame_label(block), "update");
    assert_eq!(p.frame_label(lp), "loop at game.cpp:12");
    assert_eq!(p.frame_label(ins), "instruction at 0x4010");
    assert_eq!(
        Unit::Ticks { per_second: None }.quantity(),
        profcodec_profile::Quantity::Time
    );
}

#[cfg(feature = "serde")]
#[test]
fn serde_round_trip_and_checked() {
    let p = hpctoolkit_like();
    let json = serde_json::to_string(&p).unwrap();
    let back: Profile = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p);
    let table = p.top(&Query::new()).unwrap();
    let rows = serde_json::to_value(&table.rows).unwrap();
    assert_eq!(rows[0]["name"], "solve");
    assert_eq!(rows[0]["self"], 18.0);
    assert_eq!(rows[0]["unit"], "seconds");

    let mut value: serde_json::Value = serde_json::from_str(&json).unwrap();
    value["nodes"][1]["parent"] = serde_json::json!(5);
    let err = serde_json::from_value::<Profile>(value.clone()).unwrap_err();
    assert!(err.to_string().contains("call tree out of order"), "{err}");
    value["nodes"][1]["parent"] = serde_json::json!(0);
    value["node_values"][0]["value_type"] = serde_json::json!(99);
    let err = serde_json::from_value::<Profile>(value).unwrap_err();
    assert!(err.to_string().contains("value types: index 99"), "{err}");
}

/// hpcrun-shaped: functions known by address only in a load module, an inlined function, and
/// instructions below them.
#[test]
fn modules_addresses_and_inlined_frames() {
    let (mut b, ctx, cycles) = builder(
        Context::new([(IdKind::Rank, 0), (IdKind::Thread, 3)]),
        "CYCLES",
        Unit::Count,
        Measured::SelfOnly,
    );
    let libc = b.intern_string("libc.so.6").unwrap();
    let app = b.intern_string("app").unwrap();
    let unresolved = |b: &mut ProfileBuilder, address| {
        b.intern_frame(
            Frame::new(FrameKind::Function)
                .with_module(libc)
                .with_address(address),
        )
        .unwrap()
    };
    let (memcpy, memset) = (unresolved(&mut b, 0x1000), unresolved(&mut b, 0x2000));
    let main_name = b.intern_string("main").unwrap();
    let main = b
        .intern_frame(Frame::function(main_name).with_module(app))
        .unwrap();
    let inline_name = b.intern_string("helper").unwrap();
    let inlined = b
        .intern_frame(
            Frame::new(FrameKind::Inlined)
                .with_function(inline_name)
                .with_module(app),
        )
        .unwrap();
    let instruction = b
        .intern_frame(Frame::new(FrameKind::Instruction).with_address(0x4242))
        .unwrap();
    b.add_sample(ctx, [main, memcpy, instruction], cycles, 5.0)
        .unwrap();
    b.add_sample(ctx, [main, memset], cycles, 3.0).unwrap();
    b.add_sample(ctx, [main, inlined, instruction], cycles, 2.0)
        .unwrap();
    b.add_sample(ctx, [main, instruction], cycles, 1.0).unwrap();
    let p = b.build();
    assert_eq!(p.context_label(ctx), "rank 0 thread 3");

    let functions = p.top(&Query::new()).unwrap();
    assert_eq!(row(&functions.rows, "[0x1000]").self_value, 5.0);
    assert_eq!(row(&functions.rows, "[0x2000]").self_value, 3.0);
    assert_eq!(row(&functions.rows, "helper").self_value, 2.0);
    assert_eq!(row(&functions.rows, "main").self_value, 1.0);
    assert_eq!(row(&functions.rows, "main").inclusive, Some(11.0));
    // Names written into a reused buffer are the rows' names, whatever the buffer held.
    let mut scratch = String::from("left over");
    for frame in [memcpy, memset, main, inlined, instruction] {
        let name = p.function_name(frame).into_owned();
        assert_eq!(p.function_name_in(frame, &mut scratch), name);
    }
    assert_eq!(p.function_name_in(memcpy, &mut scratch), "[0x1000]");

    // The instructions carry no module: they count for their enclosing function's module.
    let modules = p.top(&Query::new().group(GroupBy::Module)).unwrap();
    assert_eq!(row(&modules.rows, "libc.so.6").self_value, 8.0);
    assert_eq!(row(&modules.rows, "app").self_value, 3.0);
    assert_eq!(row(&modules.rows, "app").inclusive, Some(11.0));
    assert_eq!(modules.rows.len(), 2);
}

#[test]
fn node_totals_complete_what_was_not_measured() {
    let (mut b, t, cycles) = builder(
        Context::new([(IdKind::Thread, 0)]),
        "cycles",
        Unit::Count,
        Measured::InclusiveOnly,
    );
    let main = function(&mut b, "main");
    let work = function(&mut b, "work");
    let root = b.intern_stack(None, [main]).unwrap();
    let leaf = b.intern_stack(None, [main, work]).unwrap();
    b.add_inclusive(t, root, cycles, 100.0).unwrap();
    b.add_inclusive(t, leaf, cycles, 60.0).unwrap();
    let p = b.build();
    let totals = p.node_totals(cycles, &ContextFilter::Whole).unwrap();
    assert_eq!(totals.self_values, [40.0, 60.0]);
    assert_eq!(totals.inclusive, [100.0, 60.0]);
    assert_eq!(totals.measured, [true, true]);
    assert_eq!(p.selected_contexts(&ContextFilter::All).unwrap(), [true]);
}

#[test]
fn time_resolution_survives_merging_only_when_every_input_agrees() {
    let ticks = Unit::Ticks {
        per_second: Some(10_000_000),
    };
    let with = |unit: Option<Unit>| {
        let mut b = ProfileBuilder::new();
        if let Some(unit) = unit {
            b.set_time_resolution(unit).unwrap();
        }
        b.build()
    };
    let a = with(Some(ticks));
    assert_eq!(a.time_resolution(), Some(ticks));
    assert_eq!(
        Profile::merge([&a, &with(Some(ticks))])
            .unwrap()
            .time_resolution(),
        Some(ticks)
    );
    assert_eq!(
        Profile::merge([&a, &with(None)]).unwrap().time_resolution(),
        None
    );
    assert_eq!(
        Profile::merge([&with(None), &a]).unwrap().time_resolution(),
        None
    );
}
