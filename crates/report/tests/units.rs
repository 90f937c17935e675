//! Column headings name the unit their cells show, and counts agree with their nouns.
#![allow(clippy::unwrap_used)]

use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Unit};
use profcodec_report::{Input, Options, write_report};

/// The text of each cell of column `col` on `page`.
fn cells<'a>(page: &'a str, col: &str) -> Vec<&'a str> {
    let open = format!(r#"<td class="num" data-col="{col}" data-value="#);
    page.match_indices(&open)
        .map(|(i, _)| {
            let cell = &page[i..];
            let start = cell.find('>').unwrap() + 1;
            &cell[start..cell.find("</td>").unwrap()]
        })
        .collect()
}

#[test]
fn headings_name_the_unit_of_their_cells() {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Seconds, Measured::SelfOnly)
        .unwrap();
    let file = b.intern_string("main.c").unwrap();
    let mut at = |name: &str, line: u32| {
        let name = b.intern_string(name).unwrap();
        let mut frame = Frame::function(name);
        frame.file = Some(file);
        frame.line = Some(line);
        b.intern_frame(frame).unwrap()
    };
    let (main, work, tiny) = (at("main", 1), at("work", 5), at("tiny", 9));
    b.add_sample(thread, [main, work], time, 0.3).unwrap();
    b.add_sample(thread, [main, tiny], time, 0.000_002).unwrap();
    b.add_sample(thread, [main], time, 0.1).unwrap();
    let profile = b.build();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    write_report(&Input::new(&profile), None, &Options::new(), &out).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(index.contains(">time self (ms)</th>"), "{index}");
    assert!(index.contains(">time inclusive (ms)</th>"), "{index}");
    let shown = cells(&index, "self:time");
    assert!(shown.len() >= 3, "{shown:?}");
    assert!(
        shown.iter().all(|c| *c == "0" || c.ends_with(" ms")),
        "{shown:?}"
    );
    assert!(shown.contains(&"0.002 ms"), "{shown:?}");
    // One thread is one context, not `1 contexts`.
    assert!(index.contains("1 thread, 1 context in all"), "{index}");
    assert!(!index.contains("1 contexts") && !index.contains("1 threads"));
    assert!(index.contains("3 of 3 functions"), "{index}");

    let page = std::fs::read_to_string(out.join("files/0.html")).unwrap();
    assert!(
        page.contains(r#"<th data-col="time">time (ms)</th>"#),
        "{page}"
    );
    let open = r#"data-col="time" data-value="#;
    let lines: Vec<&str> = page
        .match_indices(open)
        .map(|(i, _)| {
            let cell = &page[i..];
            &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()]
        })
        .collect();
    assert!(lines.len() >= 3, "{page}");
    assert!(lines.iter().all(|c| c.ends_with(" ms")), "{lines:?}");
}
