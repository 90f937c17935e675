//! Rows by call path ([`GroupBy::Path`]) and the statement counts of rows by line, on crafted
//! profiles: call sites of one caller merge, loops and lines stay in their function's path,
//! recursion makes deeper paths, deep paths are bounded, and flat line tables carry their
//! statements and the total by function.
#![allow(clippy::unwrap_used)]

use profcodec_profile::{
    Context, Frame, FrameKind, GroupBy, IdKind, Measured, Order, PATH_HEAD, PATH_SHOWN, Profile,
    ProfileBuilder, Query, QueryError, Row, Unit, diff,
};

fn function(b: &mut ProfileBuilder, name: &str) -> profcodec_profile::FrameId {
    let name = b.intern_string(name).unwrap();
    b.intern_frame(Frame::function(name)).unwrap()
}

fn line(b: &mut ProfileBuilder, line: u32) -> profcodec_profile::FrameId {
    let file = b.intern_string("main.c").unwrap();
    b.intern_frame(Frame::new(FrameKind::Line).with_file(file).with_line(line))
        .unwrap()
}

/// main calls work from two lines (two call-site nodes) and through a loop; work recurses
/// once.
fn sampled() -> Profile {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = function(&mut b, "main");
    let work = function(&mut b, "work");
    let (l10, l20) = (line(&mut b, 10), line(&mut b, 20));
    let looped = b.intern_frame(Frame::new(FrameKind::Loop)).unwrap();
    b.add_sample(thread, [main], time, 1.0).unwrap();
    b.add_sample(thread, [main, l10], time, 2.0).unwrap();
    b.add_sample(thread, [main, l10, work], time, 10.0).unwrap();
    b.add_sample(thread, [main, l20, work], time, 20.0).unwrap();
    b.add_sample(thread, [main, looped, l20, work], time, 40.0)
        .unwrap();
    b.add_sample(thread, [main, l10, work, work], time, 5.0)
        .unwrap();
    b.build()
}

fn path(row: &Row) -> Vec<&str> {
    row.path
        .as_ref()
        .unwrap()
        .iter()
        .map(String::as_str)
        .collect()
}

#[test]
fn call_sites_of_one_caller_make_one_path() {
    let p = sampled();
    let table = p.top(&Query::new().group(GroupBy::Path)).unwrap();
    let rows: Vec<(Vec<&str>, f64, Option<f64>)> = table
        .rows
        .iter()
        .map(|r| (path(r), r.self_value, r.inclusive))
        .collect();
    assert_eq!(
        rows,
        [
            (vec!["main", "work"], 70.0, Some(75.0)),
            (vec!["main", "work", "work"], 5.0, Some(5.0)),
            // main's own lines and loop are main's.
            (vec!["main"], 3.0, Some(78.0)),
        ]
    );
    assert_eq!(table.rows[0].name, "main > work");
    assert_eq!(table.rows[0].function.as_deref(), Some("work"));
    assert_eq!(table.total.self_value, 78.0);
    assert_eq!(table.total.inclusive, Some(78.0));
    // Self values add up per function to the rows by function.
    let functions = p.top(&Query::new()).unwrap();
    let work = functions.rows.iter().find(|r| r.name == "work").unwrap();
    assert_eq!(work.self_value, 75.0);
    // By inclusive value the root comes first.
    let by_inclusive = p
        .top(&Query::new().group(GroupBy::Path).by(Order::Inclusive))
        .unwrap();
    assert_eq!(path(&by_inclusive.rows[0]), ["main"]);
    // Other groupings have no path.
    assert!(functions.rows.iter().all(|r| r.path.is_none()));
}

#[test]
fn a_diff_by_path_matches_paths_not_functions() {
    let p = sampled();
    let d = diff(&p, &p, &Query::new().group(GroupBy::Path)).unwrap();
    assert_eq!(d.rows.len(), 3);
    for row in &d.rows {
        assert_eq!(row.self_change, 0.0, "{}", row.name);
        assert!(row.base.is_some() && row.new.is_some(), "{}", row.name);
        assert!(row.path.is_some());
    }
}

#[test]
fn deep_paths_keep_their_ends() {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = function(&mut b, "main");
    let f = function(&mut b, "f");
    let leaf = function(&mut b, "leaf");
    let depth = 10_000;
    let mut stack = vec![main];
    stack.extend(std::iter::repeat_n(f, depth));
    stack.push(leaf);
    b.add_sample(thread, stack.iter().copied(), time, 1.0)
        .unwrap();
    b.add_sample(thread, stack[..depth / 2].iter().copied(), time, 1.0)
        .unwrap();
    let p = b.build();
    let table = p.top(&Query::new().group(GroupBy::Path)).unwrap();
    // A row per depth: each has an inclusive value.
    assert_eq!(table.rows.len(), depth + 2);
    assert!(table.rows.iter().all(|r| path(r).len() <= PATH_SHOWN));
    let deepest = table
        .rows
        .iter()
        .find(|r| r.function.as_deref() == Some("leaf"))
        .unwrap();
    let elements = path(deepest);
    assert_eq!(elements.len(), PATH_SHOWN);
    assert_eq!(elements[0], "main");
    assert_eq!(*elements.last().unwrap(), "leaf");
    let left_out = depth + 2 - (PATH_SHOWN - 1);
    assert_eq!(elements[PATH_HEAD], format!("[{left_out} more]"));
    assert!(deepest.name.ends_with("f > f > leaf"));
    assert_eq!(table.total.self_value, 2.0);
}

#[test]
fn flat_profiles_have_no_call_paths() {
    let mut b = ProfileBuilder::new();
    let ctx = b.intern_context(Context::new([])).unwrap();
    let time = b
        .intern_value_type("time", Unit::Seconds, Measured::SelfAndInclusive)
        .unwrap();
    let main = function(&mut b, "main");
    b.add_flat_self(ctx, main, time, 1.0).unwrap();
    let p = b.build();
    let e = p.top(&Query::new().group(GroupBy::Path)).unwrap_err();
    assert_eq!(e, QueryError::NoCallTree);
    assert!(e.to_string().starts_with("no call paths: "), "{e}");
}

/// A NYTProf-like flat profile: subs with exclusive times, lines with times and statement
/// counts, and top-level code (line 1) outside any sub.
fn flat_lines() -> Profile {
    let mut b = ProfileBuilder::new();
    let ctx = b.intern_context(Context::new([])).unwrap();
    let time = b
        .intern_value_type("time", Unit::Seconds, Measured::SelfAndInclusive)
        .unwrap();
    let calls = b
        .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
        .unwrap();
    let statements = b
        .intern_value_type("statements", Unit::Count, Measured::SelfOnly)
        .unwrap();
    b.set_default_value_type(time).unwrap();
    b.set_calls_value_type(calls).unwrap();
    b.set_statements_value_type(statements).unwrap();
    let sub = function(&mut b, "main::work");
    b.add_flat_self(ctx, sub, time, 3.0).unwrap();
    b.add_flat_inclusive(ctx, sub, time, 3.0).unwrap();
    b.add_flat_self(ctx, sub, calls, 7.0).unwrap();
    for (n, t, count) in [(1, 1.0, 1.0), (5, 2.0, 70.0), (6, 1.0, 7.0)] {
        let l = line(&mut b, n);
        b.add_flat_self(ctx, l, time, t).unwrap();
        b.add_flat_self(ctx, l, statements, count).unwrap();
    }
    b.build()
}

#[test]
fn flat_lines_carry_statements_and_the_total_by_function() {
    let p = flat_lines();
    assert!(p.statements_value_type().is_some());
    let lines = p.top(&Query::new().group(GroupBy::Line)).unwrap();
    let rows: Vec<(&str, f64, Option<f64>, Option<f64>)> = lines
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.self_value, r.statements, r.calls))
        .collect();
    assert_eq!(
        rows,
        [
            ("main.c:5", 2.0, Some(70.0), None),
            ("main.c:1", 1.0, Some(1.0), None),
            ("main.c:6", 1.0, Some(7.0), None),
        ]
    );
    assert_eq!(lines.total.self_value, 4.0);
    assert_eq!(lines.total.functions, Some(3.0));
    // By function: calls, no statements, no second total.
    let functions = p.top(&Query::new()).unwrap();
    assert_eq!(functions.rows[0].calls, Some(7.0));
    assert_eq!(functions.rows[0].statements, None);
    assert_eq!(functions.total.functions, None);
    // The statement counts themselves as the metric: no column of themselves.
    let counted = p
        .top(&Query::new().value_type("statements").group(GroupBy::Line))
        .unwrap();
    assert!(counted.rows.iter().all(|r| r.statements.is_none()));
    assert_eq!(counted.total.self_value, 78.0);
    // A merged profile keeps the statements value type.
    let merged = Profile::merge([&p, &p]).unwrap();
    let lines = merged.top(&Query::new().group(GroupBy::Line)).unwrap();
    assert_eq!(lines.rows[0].statements, Some(140.0));
}
