//! `info`'s details for people (feature `inspect`): aligned `key: value` lines, numbers rounded.
//!
//! The JSON form keeps full precision; the text form rounds floating-point numbers to four
//! significant digits, since `0.009432699999999855` tells a reader nothing `0.009433` does not.

use std::io::{self, Write};

use serde_json::{Map, Value};

use crate::terminal::escape;

/// Significant digits of a rounded floating-point number.
const SIGNIFICANT_DIGITS: i32 = 4;

/// Nesting below this depth is printed inline as compact JSON rather than as more lines.
const MAX_NESTED_LINES: usize = 2;

/// `x` rounded to four significant digits, without trailing zeros; in scientific notation
/// below 1e-4 and from 1e15.
///
/// ```
/// assert_eq!(profcodec::text::round(0.009432699999999855), "0.009433");
/// assert_eq!(profcodec::text::round(1e-9), "1.000e-9");
/// ```
pub fn round(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let magnitude = x.abs().log10().floor() as i32;
    if !(-4..15).contains(&magnitude) {
        return format!("{:.*e}", (SIGNIFICANT_DIGITS - 1) as usize, x);
    }
    let decimals = (SIGNIFICANT_DIGITS - 1 - magnitude).max(0) as usize;
    let text = format!("{x:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// One value of `info`'s details on one line: strings bare, floats [`round`]ed, arrays of
/// scalars joined by `, `, arrays of flat objects (a "top five" list) as one entry per object
/// joined by `; `, each entry its `name` then its other fields as `key value` (`main::work:
/// exclusive_seconds 0.001144, calls 1`), anything else as compact JSON.
pub fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => n.as_f64().map_or_else(|| n.to_string(), round),
        Value::Array(items) if items.iter().all(is_scalar) => {
            items.iter().map(inline).collect::<Vec<_>>().join(", ")
        }
        Value::Array(items) if items.iter().all(is_flat_object) => items
            .iter()
            .filter_map(Value::as_object)
            .map(entry)
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}

fn is_scalar(v: &Value) -> bool {
    !v.is_array() && !v.is_object()
}

fn is_flat_object(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|fields| fields.values().all(is_scalar))
}

/// A flat object of a list on one line: its string `name`, if any, then `: `, then its other
/// fields as `key value`, joined by `, `.
fn entry(fields: &Map<String, Value>) -> String {
    let name = fields.get("name").and_then(Value::as_str);
    let rest: Vec<String> = fields
        .iter()
        .filter(|(key, _)| name.is_none() || key.as_str() != "name")
        .map(|(key, value)| format!("{key} {}", inline(value)))
        .collect();
    match name {
        Some(name) if rest.is_empty() => name.to_owned(),
        Some(name) => format!("{name}: {}", rest.join(", ")),
        None => rest.join(", "),
    }
}

/// Writes `details` (an [`Info`](crate::Info)'s) as `key  value` lines indented by `depth`
/// levels of two spaces, keys aligned; a nested map gets a `key:` line and its own lines one
/// level deeper, down to the second level, and is [`inline`]d below that. Keys and values are
/// printed [`escape`]d for the terminal.
pub fn write_details(
    out: &mut dyn Write,
    details: &Map<String, Value>,
    depth: usize,
) -> io::Result<()> {
    // Keys and values may be names from the input: printed escaped, aligned on the escaped
    // keys.
    let width = details
        .keys()
        .map(|k| escape(k).chars().count())
        .max()
        .unwrap_or(0);
    let indent = "  ".repeat(depth);
    for (key, value) in details {
        let key = escape(key);
        match value {
            Value::Object(inner) if depth < MAX_NESTED_LINES && !inner.is_empty() => {
                writeln!(out, "{indent}{key}:")?;
                write_details(out, inner, depth + 1)?;
            }
            _ => writeln!(out, "{indent}{key:width$}  {}", escape(&inline(value)))?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_keep_four_significant_digits() {
        assert_eq!(round(0.009432699999999855), "0.009433");
        assert_eq!(round(1234.5678), "1235");
        assert_eq!(round(2.5), "2.5");
        assert_eq!(round(1e-9), "1.000e-9");
        assert_eq!(
            inline(&serde_json::json!([1, "a", 0.12345])),
            "1, a, 0.1235"
        );
    }

    /// A list of objects (NYTProf's top subs) reads as text: one entry per object, its name
    /// first, its numbers rounded; no JSON punctuation.
    #[test]
    fn lists_of_objects_are_text() {
        let top = serde_json::json!([
            {"name": "main::BEGIN@1.1", "exclusive_seconds": 0.0011435000000000001, "calls": 1},
            {"name": "main::inner", "exclusive_seconds": 0.0000335, "calls": 210},
        ]);
        assert_eq!(
            inline(&top),
            "main::BEGIN@1.1: exclusive_seconds 0.001144, calls 1; \
             main::inner: exclusive_seconds 3.350e-5, calls 210"
        );
        assert_eq!(
            inline(&serde_json::json!([{"a": 1}, {"b": "x"}])),
            "a 1; b x"
        );
        assert_eq!(
            inline(&serde_json::json!([{"a": [1]}])),
            "[{\"a\":[1]}]",
            "nested deeper: JSON"
        );
    }

    /// A name in the details (a top sub, a thread name) is printed escaped: no control
    /// character or bidi control of the input reaches the terminal, and a newline in it
    /// breaks no line.
    #[test]
    fn details_are_escaped() {
        let details = serde_json::json!({
            "title": "run\x1b]0;owned\x07\n\u{202e}",
            "top_subs": [{"name": "main::\u{9b}2J", "calls": 1}],
            "k\x1b[2J": 1,
        });
        let mut out = Vec::new();
        write_details(&mut out, details.as_object().unwrap(), 0).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "title     run\\x1b]0;owned\\x07\\n\\u{202e}\n\
             top_subs  main::\\u{9b}2J: calls 1\n\
             k\\x1b[2J  1\n"
        );
    }

    #[test]
    fn nested_details_are_indented_and_aligned() {
        let details = serde_json::json!({"a": 1, "longer": {"x": 0.5, "deep": {"y": {"z": 1}}}});
        let mut out = Vec::new();
        write_details(&mut out, details.as_object().unwrap(), 1).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "  a       1\n  longer:\n    x     0.5\n    deep  {\"y\":{\"z\":1}}\n"
        );
    }
}
