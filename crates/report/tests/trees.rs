//! The top-down and bottom-up trees: nodes nest as calls nest, carry their self and inclusive
//! values, open along the hot path, and stay within the node budget, however deep or wide
//! the call tree.
#![allow(clippy::unwrap_used)]

use profcodec_profile::{Context, Frame, IdKind, Measured, Profile, ProfileBuilder, Unit};
use profcodec_report::{Input, Options, write_report};

/// A node as the page shows it: its path of names from its root, whether it is open, and its
/// self and inclusive values.
#[derive(Debug)]
struct Node {
    path: Vec<String>,
    open: bool,
    self_value: f64,
    inclusive: f64,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[start..].find('"')? + start;
    Some(
        tag[start..end]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&"),
    )
}

fn value(summary: &str, col: &str) -> f64 {
    let at = summary
        .find(&format!(r#"data-col="{col}" data-value=""#))
        .unwrap();
    let tag = &summary[at.saturating_sub(1)..];
    attr(tag, "data-value").unwrap().parse().unwrap()
}

/// The nodes of the tree `view` on `index`, read by their nesting in the page.
fn tree(index: &str, view: &str) -> Vec<Node> {
    let start = index.find(&format!(r#"data-view="{view}""#)).unwrap();
    let html = &index[start..];
    let html = &html[..html.find("</div>").unwrap()];
    let mut stack: Vec<String> = Vec::new();
    let mut nodes = Vec::new();
    let mut rest = html;
    loop {
        let open = rest.find("<details ");
        let close = rest.find("</details>");
        match (open, close) {
            (Some(o), c) if c.is_none_or(|c| o < c) => {
                let tag = &rest[o..o + rest[o..].find('>').unwrap()];
                let summary = &rest[o..o + rest[o..].find("</summary>").unwrap()];
                stack.push(attr(tag, "data-name").unwrap());
                nodes.push(Node {
                    path: stack.clone(),
                    open: tag.ends_with(" open"),
                    self_value: value(summary, "self"),
                    inclusive: value(summary, "inclusive"),
                });
                rest = &rest[o + 9..];
            }
            (_, Some(c)) => {
                stack.pop().unwrap();
                rest = &rest[c + 10..];
            }
            _ => break,
        }
    }
    assert!(stack.is_empty(), "unbalanced tree {view}");
    nodes
}

fn report(profile: &Profile) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    write_report(&Input::new(profile), None, &Options::new(), &out).unwrap();
    std::fs::read_to_string(out.join("index.html")).unwrap()
}

fn find<'a>(nodes: &'a [Node], path: &[&str]) -> &'a Node {
    nodes
        .iter()
        .find(|n| n.path == path)
        .unwrap_or_else(|| panic!("no node {path:?} in {nodes:#?}"))
}

#[test]
fn trees_nest_as_calls_and_open_along_the_hot_path() {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let mut f = |name: &str| {
        let name = b.intern_string(name).unwrap();
        b.intern_frame(Frame::function(name)).unwrap()
    };
    let (main, solve, kernel, io) = (f("main"), f("solve"), f("kernel"), f("io"));
    b.add_sample(thread, [main, solve, kernel], time, 60.0)
        .unwrap();
    b.add_sample(thread, [main, io, kernel], time, 10.0)
        .unwrap();
    b.add_sample(thread, [main, solve], time, 5.0).unwrap();
    b.add_sample(thread, [main, io], time, 20.0).unwrap();
    b.add_sample(thread, [main], time, 5.0).unwrap();
    let index = report(&b.build());

    let down = tree(&index, "top-down");
    let root = find(&down, &["main"]);
    assert_eq!(
        (root.self_value, root.inclusive, root.open),
        (5.0, 100.0, true)
    );
    let hot = find(&down, &["main", "solve"]);
    assert_eq!((hot.self_value, hot.inclusive, hot.open), (5.0, 65.0, true));
    let cold = find(&down, &["main", "io"]);
    assert_eq!((cold.inclusive, cold.open), (30.0, false));
    assert_eq!(find(&down, &["main", "io", "kernel"]).self_value, 10.0);
    assert_eq!(find(&down, &["main", "solve", "kernel"]).inclusive, 60.0);

    let up = tree(&index, "bottom-up");
    let kernel = find(&up, &["kernel"]);
    assert_eq!(
        (kernel.self_value, kernel.inclusive, kernel.open),
        (70.0, 70.0, true)
    );
    assert_eq!(find(&up, &["kernel", "solve"]).self_value, 60.0);
    assert_eq!(find(&up, &["kernel", "io", "main"]).self_value, 10.0);
    assert_eq!(find(&up, &["io"]).self_value, 20.0);
}

#[test]
fn a_deep_and_wide_call_tree_stays_within_the_node_budget() {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    // A chain 100,000 calls deep (no recursion on the depth may survive it) and 20,000
    // callees of one function, each as wide as the others.
    let mut frame = |name: String| {
        let name = b.intern_string(&name).unwrap();
        b.intern_frame(Frame::function(name)).unwrap()
    };
    let chain: Vec<_> = (0..100_000)
        .map(|i| frame(format!("deep{}", i % 7)))
        .collect();
    let wide: Vec<_> = (0..20_000).map(|i| frame(format!("wide{i}"))).collect();
    let main = frame("main".to_owned());
    b.add_sample(thread, chain.iter().copied(), time, 1000.0)
        .unwrap();
    for &w in &wide {
        b.add_sample(thread, [main, w], time, 1.0).unwrap();
    }
    let index = report(&b.build());
    for view in ["top-down", "bottom-up"] {
        let nodes = tree(&index, view);
        assert!(
            !nodes.is_empty() && nodes.len() <= 2000,
            "{view}: {} nodes",
            nodes.len()
        );
    }
}
