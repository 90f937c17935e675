//! `metrics/default.yaml`: how hpcviewer shows each metric (hpcprof's `METRICS.yaml` schema).

use std::fmt::Write;

use profcodec_hpctoolkit::model::Meta;

/// The text of `metrics/default.yaml` for the metrics of `meta`: each metric's sum, inclusive
/// from its `execution` scope, exclusive from `function` (and `lex_aware` where hpcviewer
/// prefers it), as hpcprof writes them.
pub fn metrics_yaml(meta: &Meta) -> String {
    let mut out = String::from("version: 0\ninputs:\n");
    let anchor = |name: &str, scope: &str| {
        let mut a = String::new();
        for c in name.chars() {
            if c.is_ascii_alphanumeric() {
                a.push(c);
            } else {
                let _ = write!(a, "x{:x}_", u32::from(c));
            }
        }
        format!("{a}-sum-x5b_0x0x5d_-{scope}")
    };
    for m in &meta.metrics {
        for scope in ["execution", "lex_aware", "function"] {
            let _ = write!(
                out,
                "  - &{}\n    metric: {}\n    scope: {scope}\n    formula: $$\n    combine: sum\n",
                anchor(&m.name, scope),
                quoted(&m.name)
            );
        }
    }
    out.push_str("roots:\n");
    for m in &meta.metrics {
        let _ = write!(
            out,
            "  - name: {name}\n    description: {name}\n    variants:\n      Sum:\n        \
             render: [number, percent]\n        formula:\n          inclusive:\n            \
             standard: *{inc}\n          exclusive:\n            custom: *{lex}\n            \
             standard: *{exc}\n",
            name = quoted(&m.name),
            inc = anchor(&m.name, "execution"),
            lex = anchor(&m.name, "lex_aware"),
            exc = anchor(&m.name, "function"),
        );
    }
    out
}

/// A YAML scalar for a metric name: plain when it is safe, else double-quoted.
fn quoted(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " ()_-./".contains(c))
        && !s.starts_with(['-', ' '])
        && !s.ends_with(' ');
    if plain {
        return s.to_owned();
    }
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(q, "\\u{:04x}", u32::from(c));
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}
