//! The flame graphs, drawn straight from the call tree.
//!
//! The tree's nodes are merged by call path and frame label (as folded stacks merge them), the
//! frames narrower than the pruning threshold are dropped, and each frame left is one SVG
//! group. No call path is ever spelled out as text: time and memory are linear in the nodes
//! and their labels, whatever the depth (a folded stack per node holds its whole path, so a
//! deep chain of long names costs depth squared times the names). Every loop is flat: no
//! recursion on the tree's depth.
//!
//! Each frame's tooltip carries its value in the unit and precision of the tables and its
//! share of the total; in a differential graph also the base's value and the change, in the
//! unit and as a percentage of the base's value.

use std::collections::HashMap;
use std::io::{self, Write};

use profcodec_profile::{ContextFilter, NodeTotals, Profile, ValueTypeId};

use crate::text::Style;

/// No parent: the merged node is a root.
const ROOT: u32 = u32::MAX;

/// Frame labels shared by the graphs of one page (a comparison matches frames by label).
#[derive(Debug, Default)]
pub(crate) struct Labels {
    ids: HashMap<String, u32>,
    names: Vec<String>,
}

impl Labels {
    fn intern(&mut self, label: String) -> u32 {
        if let Some(&id) = self.ids.get(&label) {
            return id;
        }
        let id = u32::try_from(self.names.len()).unwrap_or(ROOT - 1);
        self.names.push(label.clone());
        self.ids.insert(label, id);
        id
    }

    fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }
}

/// The call tree of one value type, merged by path and label, with what is drawn of it.
#[derive(Debug, Default)]
pub(crate) struct Graph {
    parent: Vec<u32>,
    label: Vec<u32>,
    value: Vec<f64>,
    depth: Vec<u32>,
    /// (parent, label) -> merged node.
    children: HashMap<(u32, u32), u32>,
    kept: Vec<bool>,
    /// Where each kept frame starts, in value from the left edge.
    x: Vec<f64>,
    /// Its drawn width, in value (its value, clipped to its parent's room).
    width: Vec<f64>,
    total: f64,
    /// The frames drawn and the merged nodes pruned.
    pub(crate) kept_count: usize,
    pub(crate) pruned: usize,
}

/// A value a graph can draw: finite and positive, else nothing.
fn drawable(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 { v } else { 0.0 }
}

/// The graph of `totals` over `profile`, without the frames narrower than `min_share` of the
/// total: a pruned frame's value stays in its parent, so the parent keeps its width.
pub(crate) fn graph(
    profile: &Profile,
    totals: &NodeTotals,
    labels: &mut Labels,
    min_share: f64,
) -> Graph {
    let frame_labels: Vec<u32> = profile
        .frames()
        .map(|(id, _)| labels.intern(profile.frame_label(id).replace(['\n', '\r', '\t'], " ")))
        .collect();
    let mut g = Graph::default();
    let mut merged_of: Vec<u32> = Vec::with_capacity(profile.nodes().len());
    // The nodes of values and events and below them: moments, not code that ran, are drawn
    // by no frame (as `top` leaves them out of its rows).
    let mut marker: Vec<bool> = Vec::with_capacity(profile.nodes().len());
    for (id, node) in profile.nodes() {
        let left_out = profile.frame(node.frame).kind.is_marker()
            || node
                .parent
                .is_some_and(|p| marker.get(p.index()).copied().unwrap_or(false));
        marker.push(left_out);
        if left_out {
            merged_of.push(ROOT);
            continue;
        }
        // Parents come before their children, so the parent's merged node is known.
        let parent = node
            .parent
            .and_then(|p| merged_of.get(p.index()).copied())
            .unwrap_or(ROOT);
        let label = frame_labels.get(node.frame.index()).copied().unwrap_or(0);
        let next = u32::try_from(g.parent.len()).unwrap_or(ROOT - 1);
        let m = *g.children.entry((parent, label)).or_insert(next);
        if m == next && g.parent.len() == next as usize {
            g.parent.push(parent);
            g.label.push(label);
            g.value.push(0.0);
            g.depth.push(if parent == ROOT {
                1
            } else {
                g.depth[parent as usize].saturating_add(1)
            });
        }
        g.value[m as usize] += drawable(totals.inclusive.get(id.index()).copied().unwrap_or(0.0));
        merged_of.push(m);
    }
    let n = g.parent.len();
    g.total = (0..n)
        .filter(|&m| g.parent[m] == ROOT)
        .map(|m| g.value[m])
        .sum();
    let share = if min_share.is_finite() {
        min_share.max(0.0)
    } else {
        0.0
    };
    let threshold = g.total * share;
    g.kept = vec![false; n];
    for m in 0..n {
        let p = g.parent[m];
        let parent_kept = p == ROOT || g.kept[p as usize];
        if parent_kept && g.value[m] > 0.0 && g.value[m] >= threshold {
            g.kept[m] = true;
            g.kept_count += 1;
        } else {
            g.pruned += 1;
        }
    }
    layout(&mut g);
    g
}

/// Places each kept frame beside its siblings (the widest first) inside its parent.
fn layout(g: &mut Graph) {
    let n = g.parent.len();
    g.x = vec![0.0; n];
    g.width = vec![0.0; n];
    let mut order: Vec<u32> = (0..n as u32).filter(|&m| g.kept[m as usize]).collect();
    // Roots first (ROOT + 1 wraps to 0), then each parent's children, a parent always placed
    // before its own children (its id is smaller).
    order.sort_by(|&a, &b| {
        let (pa, pb) = (g.parent[a as usize], g.parent[b as usize]);
        pa.wrapping_add(1)
            .cmp(&pb.wrapping_add(1))
            .then(g.value[b as usize].total_cmp(&g.value[a as usize]))
            .then(a.cmp(&b))
    });
    // Where the next child of each node starts; the roots' at the left edge.
    let mut cursor: Vec<f64> = vec![f64::NAN; n];
    let mut root_cursor = 0.0;
    for m in order {
        let m = m as usize;
        let p = g.parent[m];
        let (start, end) = if p == ROOT {
            (root_cursor, g.total)
        } else {
            let p = p as usize;
            if cursor[p].is_nan() {
                cursor[p] = g.x[p];
            }
            (cursor[p], g.x[p] + g.width[p])
        };
        // A measured inclusive value may exceed its parent's: clipped to the room left.
        let width = g.value[m].min(end - start).max(0.0);
        g.x[m] = start;
        g.width[m] = width;
        if p == ROOT {
            root_cursor = start + width;
        } else {
            cursor[p as usize] = start + width;
        }
    }
}

/// The node totals of `value_type` over the whole program.
pub(crate) fn totals(profile: &Profile, value_type: ValueTypeId) -> Option<NodeTotals> {
    profile
        .node_totals(value_type, &ContextFilter::Whole)
        .ok()
        .filter(|t| t.measured.iter().any(|&m| m))
}

/// `s` as XML text or attribute value: markup escaped, and the characters XML 1.0 cannot hold
/// at all (C0 controls but tab and line breaks, unpaired surrogates cannot occur in a `str`)
/// replaced.
pub(crate) fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// The part of `name` that fits `chars` characters: whole, or cut with `..`.
fn fitted(name: &str, chars: usize) -> &str {
    match name.char_indices().nth(chars.saturating_sub(2)) {
        Some((cut, _)) if name.char_indices().nth(chars).is_some() => &name[..cut],
        _ => name,
    }
}

/// A warm colour chosen by the label's hash (flamegraph.pl's "hot" palette).
fn hot(label: &str) -> (u8, u8, u8) {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let v = |shift: u32| ((h >> shift) & 0xff) as f64 / 255.0;
    (
        (205.0 + 50.0 * v(0)) as u8,
        (230.0 * v(8)) as u8,
        (55.0 * v(16)) as u8,
    )
}

/// Red where a frame grew, blue where it shrank, paler the smaller the change.
fn change_colour(delta: f64, max: f64) -> (u8, u8, u8) {
    let strength = if max > 0.0 {
        (delta.abs() / max).min(1.0)
    } else {
        0.0
    };
    let pale = (255.0 - 190.0 * strength) as u8;
    if delta > 0.0 {
        (255, pale, pale)
    } else if delta < 0.0 {
        (pale, pale, 255)
    } else {
        (235, 235, 235)
    }
}

const WIDTH: f64 = 1200.0;
const PAD: f64 = 10.0;
const FRAME: u64 = 16;
const TOP: u64 = 50;
const BOTTOM: u64 = 30;
const FONT: f64 = 12.0;
/// The width of a character in font sizes, for fitting names (as flamegraph.pl's).
const CHAR: f64 = 0.59;
const SCRIPT: &str = include_str!("../templates/flame.js");

/// A signed amount in `style`, `+` before a growth.
fn signed(style: Style, v: f64) -> String {
    let text = style.show(v);
    if v > 0.0 { format!("+{text}") } else { text }
}

/// Draws `graph` as an interactive SVG (click a frame to zoom, Ctrl-F or Search to search)
/// into `out`: `title` above it, each value shown as `style` shows it. With `base` (the
/// base profile's graph, labelled by the same [`Labels`]), each frame is coloured and titled by
/// its change from the base's frame of the same path.
pub(crate) fn svg(
    out: &mut dyn Write,
    graph: &Graph,
    labels: &Labels,
    title: &str,
    style: Style,
    base: Option<&Graph>,
) -> io::Result<()> {
    let n = graph.parent.len();
    // The labels drawn: shortened as the tables shorten names, told apart, cut at the end;
    // the full name is in `data-name` and the tooltip.
    let shown = crate::names::short_labels(&labels.names);
    // The base's merged node of each node's path.
    let base_of: Vec<Option<u32>> = match base {
        Some(base) => {
            let mut of = Vec::with_capacity(n);
            for m in 0..n {
                let p = graph.parent[m];
                let parent = if p == ROOT {
                    Some(ROOT)
                } else {
                    of[p as usize]
                };
                of.push(parent.and_then(|bp| base.children.get(&(bp, graph.label[m])).copied()));
            }
            of
        }
        None => Vec::new(),
    };
    let base_value = |m: usize| -> f64 {
        match (base, base_of.get(m).copied().flatten()) {
            (Some(b), Some(bm)) => b.value[bm as usize],
            _ => 0.0,
        }
    };
    let max_change = (0..n)
        .filter(|&m| graph.kept[m] && base.is_some())
        .map(|m| (graph.value[m] - base_value(m)).abs())
        .fold(0.0f64, f64::max);
    let depth = (0..n)
        .filter(|&m| graph.kept[m])
        .map(|m| u64::from(graph.depth[m]))
        .max()
        .unwrap_or(0);
    let height = (depth + 1) * FRAME + TOP + BOTTOM;
    let inner = WIDTH - 2.0 * PAD;
    let total = graph.total;
    let share = |v: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    writeln!(
        out,
        r##"<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg" data-inner="{inner}" data-pad="{PAD}" data-font="{FONT}" data-char="{CHAR}">
<style>text {{ font-family: Verdana, sans-serif; font-size: {FONT}px; fill: #000; }} g.f:hover rect {{ stroke: #000; stroke-width: 0.5; cursor: pointer; }} #details, #matched, #search, #unzoom {{ font-size: {FONT}px; }} #search, #unzoom {{ cursor: pointer; }} .hidden {{ display: none; }}</style>
<script type="text/ecmascript"><![CDATA[{SCRIPT}]]></script>
<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#f8f8f0"/>
<text x="{}" y="24" text-anchor="middle" style="font-size: 17px">{}</text>
<text id="unzoom" x="{PAD}" y="24" class="hidden">Reset Zoom</text>
<text id="search" x="{}" y="24" text-anchor="end">Search</text>
<text id="matched" x="{}" y="{}" text-anchor="end"></text>
<text id="details" x="{PAD}" y="{}"> </text>"##,
        WIDTH / 2.0,
        xml(title),
        WIDTH - PAD,
        WIDTH - PAD,
        height - 10,
        height - 10,
    )?;
    writeln!(out, r#"<g id="frames">"#)?;
    let y_of = |d: u64| height - BOTTOM - (d + 1) * FRAME;
    let frame = |out: &mut dyn Write,
                 d: u64,
                 x: f64,
                 w: f64,
                 (name, label): (&str, &str),
                 tip: &str,
                 (r, gr, b): (u8, u8, u8)|
     -> io::Result<()> {
        let (fx, fw) = if total > 0.0 {
            (x / total, w / total)
        } else {
            (0.0, 1.0)
        };
        let px = PAD + fx * inner;
        let pw = fw * inner;
        let chars = (pw / (FONT * CHAR)) as usize;
        let fits = if chars >= 3 { fitted(label, chars) } else { "" };
        let dots = if fits.len() < label.len() && !fits.is_empty() {
            ".."
        } else {
            ""
        };
        writeln!(
            out,
            r#"<g class="f" data-x="{fx:.9}" data-w="{fw:.9}" data-d="{d}" data-name="{}" data-label="{}"><title>{}</title><rect x="{px:.2}" y="{}" width="{pw:.2}" height="{}" rx="2" fill="rgb({r},{gr},{b})"/><text x="{:.2}" y="{}">{}{dots}</text></g>"#,
            xml(name),
            xml(label),
            xml(tip),
            y_of(d),
            FRAME - 1,
            px + 3.0,
            y_of(d) + FRAME - 4,
            xml(fits),
        )
    };
    let all_tip = format!("all\n{} (100%)", style.show(total));
    frame(
        out,
        0,
        0.0,
        total,
        ("all", "all"),
        &all_tip,
        (250, 200, 150),
    )?;
    for m in 0..n {
        if !graph.kept[m] || graph.width[m] <= 0.0 {
            continue;
        }
        let name = labels.name(graph.label[m]);
        let value = graph.value[m];
        let mut tip = format!(
            "{name}\n{} ({:.2}% of the total)",
            style.show(value),
            share(value)
        );
        let colour = match base {
            Some(_) => {
                let before = base_value(m);
                let delta = value - before;
                let change = if before > 0.0 {
                    format!("{:+.2}%", 100.0 * delta / before)
                } else {
                    "new".to_owned()
                };
                tip.push_str(&format!(
                    "\nbase {}, change {} ({change})",
                    style.show(before),
                    signed(style, delta)
                ));
                change_colour(delta, max_change)
            }
            None => hot(name),
        };
        frame(
            out,
            u64::from(graph.depth[m]),
            graph.x[m],
            graph.width[m],
            (
                name,
                shown
                    .get(graph.label[m] as usize)
                    .map_or(name, String::as_str),
            ),
            &tip,
            colour,
        )?;
    }
    writeln!(out, "</g>\n</svg>")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_their_frames() {
        assert_eq!(fitted("main", 10), "main");
        assert_eq!(fitted("abcdefghij", 6), "abcd");
        assert_eq!(fitted("abc", 3), "abc");
        assert_eq!(fitted("ünïcödé", 5), "ünï");
    }

    #[test]
    fn markup_and_controls_are_escaped() {
        assert_eq!(
            xml("<a href=\"x\">&'\u{1b}"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;\u{fffd}"
        );
    }
}
