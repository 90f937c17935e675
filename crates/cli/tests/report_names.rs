//! `profcodec report` names functions as `profcodec top` does: C++ names shortened, functions
//! that would look alike told apart, cut at the end, the full name in `data-name` and `title`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{run_ok, testdata};

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

/// The value of attribute `name` in the start tag `tag`, unescaped.
fn attr(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    let end = tag[start..].find('"')? + start;
    Some(unescape(&tag[start..end]))
}

/// The text of an element's content, its tags taken out, unescaped.
fn text(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    unescape(&out)
}

fn report(input: &Path, out: &Path) {
    run_ok([
        "report".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        input.as_os_str(),
    ]);
}

#[test]
fn cpp_names_are_shortened_told_apart_and_cut_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    report(&testdata("hpctoolkit/kripke-names.d"), &out);
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let table = &index[index.find(r#"id="top-all""#).unwrap()..];
    let table = &table[..table.find("</table>").unwrap()];
    let mut shown: HashMap<String, String> = HashMap::new();
    let mut rows = 0;
    for row in table.split("<tr data-name=").skip(1) {
        let tag = format!("<tr data-name={}", &row[..row.find('>').unwrap()]);
        let full = attr(&tag, "data-name").unwrap();
        let cell = &row[row.find(r#"<td class="name">"#).unwrap()..];
        let cell = &cell[..cell.find("</td>").unwrap()];
        let name = text(cell);
        assert!(!name.starts_with(".."), "{name:?} is cut at its start");
        assert!(name.chars().count() <= 121, "{name:?} is not cut");
        assert_eq!(
            attr(cell, "title").as_deref(),
            Some(full.as_str()),
            "the full name of {name:?} is not its title"
        );
        if full.contains('<') {
            assert!(name.contains('…'), "{full:?} is shown whole");
        }
        if let Some(other) = shown.insert(name.clone(), full.clone()) {
            panic!("{other:?} and {full:?} are both shown as {name:?}");
        }
        rows += 1;
    }
    assert!(rows >= 3, "{rows} rows");

    let svg = std::fs::read_to_string(out.join("flame.svg")).unwrap();
    let mut by_depth: HashMap<(String, String), String> = HashMap::new();
    let mut frames = 0;
    for frame in svg.split(r#"<g class="f" "#).skip(1) {
        let tag = format!("<g {}", &frame[..frame.find('>').unwrap()]);
        let (full, label, depth) = (
            attr(&tag, "data-name").unwrap(),
            attr(&tag, "data-label").unwrap(),
            attr(&tag, "data-d").unwrap(),
        );
        let drawn = &frame[frame.find("<text").unwrap()..];
        let drawn = text(&drawn[..drawn.find("</text>").unwrap()]);
        assert!(!drawn.starts_with(".."), "{drawn:?} is cut at its start");
        assert!(
            label.starts_with(drawn.trim_end_matches("..")),
            "{drawn:?} is not the start of {label:?}"
        );
        let title = &frame[frame.find("<title>").unwrap() + 7..];
        assert!(
            unescape(title).starts_with(&full),
            "the tooltip lacks {full:?}"
        );
        if let Some(other) = by_depth.insert((depth.clone(), label.clone()), full.clone()) {
            assert_eq!(other, full, "two functions at depth {depth} read {label:?}");
        }
        frames += 1;
    }
    assert!(frames >= 4, "{frames} frames");
}
