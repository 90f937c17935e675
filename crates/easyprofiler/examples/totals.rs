//! Per-block totals of an EasyProfiler capture: calls, self and total time per block name,
//! costliest first.
//!
//! `cargo run -p profcodec-easyprofiler --example totals -- FILE.prof`

use profcodec_easyprofiler::parse;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "testdata/easyprofiler/small_v210_gui_bookmarks.prof".into());
    let bytes = std::fs::read(&path)?;
    let view = parse(&bytes)?;
    let tree = view.tree()?;
    let mut totals = tree.totals();
    totals.sort_by_key(|t| std::cmp::Reverse(t.self_time));
    println!(
        "{:<32} {:>8} {:>14} {:>14}",
        "block", "calls", "self ns", "total ns"
    );
    for t in totals.iter().take(20) {
        let name = tree
            .descriptor(t.descriptor)
            .map(|d| d.name())
            .unwrap_or_default();
        println!(
            "{name:<32} {:>8} {:>14} {:>14}",
            t.count, t.self_time, t.total
        );
    }
    Ok(())
}
