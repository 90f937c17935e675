//! The report of crafted profiles (HOSTILE.md): a value at a huge line number with saved
//! source, deep chains of long names, each under an allocation cap; the flame graphs' tooltips
//! (values in their unit, a comparison's change as a percentage of the base); and the output
//! budget, refused before a byte is written.
//!
//! Every test holds one lock, so that no other test allocates while one is capped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;

use profcodec_profile::{
    Context, Frame, FrameKind, IdKind, Measured, Profile, ProfileBuilder, Unit,
};
use profcodec_report::{Input, Options, ReportError, write_report};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` with at most `cap` bytes allocatable; returns what it allocated in all.
fn capped<T>(cap: usize, f: impl FnOnce() -> T) -> (T, usize) {
    profcodec_testkit::hostile::capped(&A, cap, f)
}

/// A profile of one program: `main` (at line 1 of `prog.pl`) whose statement at `line` of the
/// same file took 5 ms, beside 1 ms of its own.
fn statement_at(line: u32) -> Profile {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let file = b.intern_string("prog.pl").unwrap();
    let name = b.intern_string("main").unwrap();
    let mut main = Frame::function(name);
    main.file = Some(file);
    main.line = Some(1);
    let main = b.intern_frame(main).unwrap();
    let mut statement = Frame::new(FrameKind::Line);
    statement.function = Some(name);
    statement.file = Some(file);
    statement.line = Some(line);
    let statement = b.intern_frame(statement).unwrap();
    b.add_sample(thread, [main, statement], time, 5e6).unwrap();
    b.add_sample(thread, [main], time, 1e6).unwrap();
    b.build()
}

fn source_rows(page: &str) -> Vec<u64> {
    page.split("<tr data-line=\"")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
        .collect()
}

#[test]
fn a_statement_at_a_huge_line_number_is_one_row() {
    let _one = one_at_a_time();
    for line in [4_000_000_000, i32::MAX as u32, u32::MAX, 1_000_000] {
        let profile = statement_at(line);
        let text: Vec<String> = (1..=3).map(|i| format!("statement {i};")).collect();
        let input = Input::new(&profile).embedded_source("prog.pl", text);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        // Rows per line number would take gigabytes (411 MB at line 10^6 before).
        let (written, allocated) = capped(32 << 20, || {
            write_report(&input, None, &Options::default(), &out)
        });
        written.unwrap_or_else(|e| panic!("line {line}: {e}"));
        assert!(
            allocated < 32 << 20,
            "line {line}: {allocated} bytes allocated"
        );
        // The file's source page.
        let page = std::fs::read_to_string(out.join("files/0.html")).unwrap();
        // The three lines of text, then the statement beyond them.
        assert_eq!(
            source_rows(&page),
            [1, 2, 3, u64::from(line)],
            "line {line}"
        );
    }
}

/// A chain `depth` deep of frames named `name(i)`, each with 1 µs of its own.
fn chain(depth: usize, name: impl Fn(usize) -> String) -> Profile {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let mut node = None;
    for i in 0..depth {
        let s = b.intern_string(&name(i)).unwrap();
        let frame = b.intern_frame(Frame::function(s)).unwrap();
        let id = b.intern_node(node, frame).unwrap();
        b.add_self(thread, id, time, 1000.0).unwrap();
        node = Some(id);
    }
    b.build()
}

#[test]
fn deep_chains_of_long_names_cost_their_size_not_its_square() {
    let _one = one_at_a_time();
    // 8,000 subs of 40-byte names (folded paths: 8,000^2 / 2 * 41 bytes = 1.3 GB, twice), and
    // 600 blocks sharing one 10 KB name (600^2 / 2 * 10 KB = 1.8 GB, twice).
    let cases = [
        (
            "subs",
            chain(8000, |i| format!("Some::Package::Name::sub_{i:020}")),
        ),
        ("blocks", chain(600, |_| "b".repeat(10_000))),
    ];
    for (what, profile) in &cases {
        let input = Input::new(profile);
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        // Nothing pruned: every frame is drawn.
        let options = Options::new().min_width(0.0);
        let (written, allocated) = capped(128 << 20, || write_report(&input, None, &options, &out));
        let written = written.unwrap_or_else(|e| panic!("{what}: {e}"));
        println!(
            "{what}: {allocated} bytes allocated, {} bytes written",
            written.bytes
        );
        assert!(allocated < 128 << 20, "{what}: {allocated} bytes allocated");
        let svg = std::fs::read_to_string(out.join("flame.svg")).unwrap();
        // Every frame of the chain is drawn (each is the whole width), and the "all" frame.
        assert_eq!(
            svg.matches("<g class=\"f\"").count(),
            profile.nodes().len() + 1,
            "{what}"
        );
    }
}

/// A profile of `main` (10 ms of its own) calling `work` (`work_ms` of its own).
fn work(work_ms: f64) -> Profile {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = b.intern_string("main").unwrap();
    let main = b.intern_frame(Frame::function(main)).unwrap();
    let w = b.intern_string("work").unwrap();
    let w = b.intern_frame(Frame::function(w)).unwrap();
    b.add_sample(thread, [main, w], time, work_ms * 1e6)
        .unwrap();
    b.add_sample(thread, [main], time, 10e6).unwrap();
    b.build()
}

/// The tooltip (`<title>`) of the frame named `name` in `svg`.
fn tooltip<'a>(svg: &'a str, name: &str) -> &'a str {
    let start = svg
        .find(&format!("<title>{name}\n"))
        .unwrap_or_else(|| panic!("no frame {name} in {svg:.2000}"));
    let rest = &svg[start + "<title>".len()..];
    &rest[..rest.find("</title>").unwrap()]
}

#[test]
fn tooltips_give_values_in_their_unit_and_changes_against_the_base() {
    let _one = one_at_a_time();
    let new = work(30.0);
    let base = work(20.0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    write_report(
        &Input::new(&new),
        Some(&Input::new(&base)),
        &Options::default(),
        &out,
    )
    .unwrap();
    let flame = std::fs::read_to_string(out.join("flame.svg")).unwrap();
    // As the tables show times: 30 ms of 40 ms.
    assert_eq!(
        tooltip(&flame, "work"),
        "work\n30.000 ms (75.00% of the total)"
    );
    assert_eq!(
        tooltip(&flame, "main"),
        "main\n40.000 ms (100.00% of the total)"
    );
    let diff = std::fs::read_to_string(out.join("diff.svg")).unwrap();
    // work grew from 20 ms to 30 ms: +10 ms, +50% of its base value.
    assert_eq!(
        tooltip(&diff, "work"),
        "work\n30.000 ms (75.00% of the total)\nbase 20.000 ms, change +10.000 ms (+50.00%)"
    );
    assert_eq!(
        tooltip(&diff, "main"),
        "main\n40.000 ms (100.00% of the total)\nbase 30.000 ms, change +10.000 ms (+33.33%)"
    );
    // The reverse comparison shrinks: -33.33%.
    let back = dir.path().join("back");
    write_report(
        &Input::new(&base),
        Some(&Input::new(&new)),
        &Options::default(),
        &back,
    )
    .unwrap();
    let diff = std::fs::read_to_string(back.join("diff.svg")).unwrap();
    assert!(
        tooltip(&diff, "work").ends_with("base 30.000 ms, change -10.000 ms (-33.33%)"),
        "{}",
        tooltip(&diff, "work")
    );
}

#[test]
fn a_report_over_its_budget_is_refused_before_a_byte_is_written() {
    let _one = one_at_a_time();
    let profile = work(30.0);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let input = Input::new(&profile);
    let err = write_report(&input, None, &Options::new().max_output(10_000), &out).unwrap_err();
    let ReportError::OutputTooLarge { projected, budget } = err else {
        panic!("{err}");
    };
    let err = ReportError::OutputTooLarge { projected, budget };
    assert_eq!(budget, 10_000);
    assert!(projected > budget);
    let message = err.to_string();
    assert!(
        message.contains("over the output budget") && message.contains("--max-output"),
        "{message}"
    );
    assert!(!out.exists(), "the folder was made");
    // With room for it, the same report is written, and takes what was projected.
    let written = write_report(&input, None, &Options::new().max_output(projected), &out).unwrap();
    assert_eq!(written.bytes, projected);
    // A huge page is refused while it is made (its files are counted, not kept, past the budget).
    let long = chain(2000, |i| format!("{i}{}", "x".repeat(2000)));
    let refused = write_report(
        &Input::new(&long),
        None,
        &Options::new().max_output(1 << 20),
        &dir.path().join("long"),
    );
    assert!(matches!(refused, Err(ReportError::OutputTooLarge { .. })));
    assert!(!dir.path().join("long").exists());
}

/// A source page over the per-page limit is left out before any page is made: the index and
/// `Written::sources` say so, and no link points to it.
#[test]
fn a_source_page_over_the_page_limit_is_left_out_and_said() {
    let _one = one_at_a_time();
    let profile = statement_at(2);
    // A long text: its page would be about 2 MB.
    let text: Vec<String> = (0..20_000)
        .map(|i| format!("statement {i}; # {}", "x".repeat(80)))
        .collect();
    let input = Input::new(&profile).embedded_source("prog.pl", text);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    let mut options = Options::default();
    options.max_page = 1 << 20;
    let written = write_report(&input, None, &options, &out).unwrap();
    assert!(
        !out.join("files").exists(),
        "a page over the limit was written"
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("over the limit of 1.0 MiB a page may take"),
        "{index:.2000}"
    );
    assert!(!index.contains("href=\"files"), "a link to a page left out");
    let said: Vec<String> = written.sources.iter().map(ToString::to_string).collect();
    assert!(
        said.iter()
            .any(|s| s.contains("prog.pl") && s.contains("has no page")),
        "{said:?}"
    );
    // Within the limit, the page is made and the function links to its line.
    options.max_page = 16 << 20;
    let out = dir.path().join("report-2");
    write_report(&input, None, &options, &out).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("href=\"files&#x2f;0.html#L1\""),
        "{}",
        &index[index.find("id=\"files\"").unwrap_or(0)..][..1000]
    );
    assert!(out.join("files/0.html").is_file());
}
