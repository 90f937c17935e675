//! `info`: the capture's summary, from the walk (no node per block).

use profcodec_common::inspect::{Error, Info};
use serde_json::{Map, json};

use super::invalid;
use crate::parse;

/// A duration in ns in the largest unit that keeps it at 1 or more, with 4 significant digits.
fn human_ns(ns: u64) -> String {
    let x = ns as f64;
    let (value, unit) = if ns >= 1_000_000_000 {
        (x / 1e9, "s")
    } else if ns >= 1_000_000 {
        (x / 1e6, "ms")
    } else if ns >= 1_000 {
        (x / 1e3, "µs")
    } else {
        return format!("{ns} ns");
    };
    let decimals = if value >= 100.0 {
        1
    } else if value >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} {unit}")
}

pub(super) fn info(bytes: &[u8]) -> Result<Info, Error> {
    // Tolerant: `info` describes what the C++ reader would refuse too, with its oddities. The
    // walk gives what the tree would, in memory that does not grow with the blocks.
    let view = parse(bytes).map_err(invalid)?;
    let walk = view.walk().map_err(invalid)?;
    let h = view.header();
    let mut d = Map::new();
    let span = walk.end_time.saturating_sub(walk.begin_time);
    d.insert("time_span".into(), json!(human_ns(span)));
    d.insert("threads".into(), json!(walk.threads.len()));
    // Names of the first threads; a hostile file may have very many.
    const SHOWN: usize = 16;
    let mut names: Vec<String> = walk
        .threads
        .iter()
        .take(SHOWN)
        .map(|t| {
            if t.name.is_empty() {
                format!("unnamed (tid {})", t.id)
            } else {
                format!("{} (tid {})", t.name, t.id)
            }
        })
        .collect();
    if walk.threads.len() > SHOWN {
        names.push(format!("and {} more", walk.threads.len() - SHOWN));
    }
    d.insert("thread_names".into(), json!(names.join(", ")));
    // Per descriptor: how many blocks name it, and its totals.
    let mut totals = walk.totals();
    let (mut blocks, mut events, mut values) = (0u64, 0u64, 0u64);
    for t in &totals {
        match walk
            .descriptor(t.descriptor)
            .map(|d| d.descriptor.block_type)
        {
            Some(0) => events += t.count,
            Some(2) => values += t.count,
            _ => blocks += t.count,
        }
    }
    d.insert("blocks".into(), json!(blocks));
    d.insert("events".into(), json!(events));
    d.insert("values".into(), json!(values));
    let cs: u64 = walk.threads.iter().map(|t| t.context_switches).sum();
    d.insert("context_switches".into(), json!(cs));
    d.insert(
        "descriptors".into(),
        json!(view.descriptors().present().len()),
    );
    d.insert(
        "runtime_names".into(),
        json!(walk.runtime_descriptors().len()),
    );
    d.insert("bookmarks".into(), json!(walk.tail().bookmarks.len()));
    // The blocks that cost the most, as a newcomer asks first.
    totals.sort_unstable_by_key(|t| std::cmp::Reverse(t.self_time));
    let top: Vec<String> = totals
        .iter()
        .take(5)
        .filter_map(|t| {
            let name = walk.descriptor(t.descriptor)?.name();
            Some(format!(
                "{name}: {} self, {} total, {} calls",
                human_ns(t.self_time),
                human_ns(t.total),
                t.count
            ))
        })
        .collect();
    d.insert("top_blocks_by_self_time".into(), json!(top.join("; ")));
    d.insert("time_span_ns".into(), json!(span));
    d.insert("begin_time_ns".into(), json!(walk.begin_time));
    d.insert("end_time_ns".into(), json!(walk.end_time));
    d.insert("pid".into(), json!(h.pid));
    d.insert("cpu_frequency_hz".into(), json!(h.cpu_frequency));
    d.insert("descriptor_slots".into(), json!(view.descriptors().len()));
    let odd: Vec<String> = walk.oddities.iter().map(ToString::to_string).collect();
    d.insert("oddities".into(), json!(odd));
    Ok(Info::new(h.version.to_string(), d))
}

#[cfg(test)]
mod tests {
    use super::human_ns;

    #[test]
    fn durations_in_the_largest_unit() {
        assert_eq!(human_ns(1_234_567_890), "1.235 s");
        assert_eq!(human_ns(814_942), "814.9 µs");
    }
}
