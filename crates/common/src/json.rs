//! JSON for a terminal as much as for a program (feature `json`): every JSON document profcodec
//! prints (`dump`, `info --json`, `top --json`, `diff --json`) is written here, so that no
//! character a terminal obeys is written raw.
//!
//! `serde_json` escapes C0 controls but writes C1 controls (U+0080 to U+009F) and bidi controls
//! as they are; a terminal showing the document would act on them. This writer escapes every
//! character [`terminal::is_unsafe`](crate::terminal::is_unsafe) as `\uXXXX` too: a JSON
//! reader gets the same string back.
//!
//! ```
//! let mut out = Vec::new();
//! profcodec_common::json::to_writer(&mut out, &"a\u{9b}2J\u{202e}b", false).unwrap();
//! assert_eq!(String::from_utf8(out).unwrap(), r#""a\u009b2J\u202eb""#);
//! ```

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};

use crate::terminal::escape_json;

/// Writes `value` as JSON into `out`, indented when `pretty`, with the characters a terminal
/// obeys escaped (see the [module](self)).
pub fn to_writer<W: Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        let mut ser = serde_json::Serializer::with_formatter(out, Escaping(PrettyFormatter::new()));
        value.serialize(&mut ser)
    } else {
        let mut ser = serde_json::Serializer::with_formatter(out, Escaping(CompactFormatter));
        value.serialize(&mut ser)
    }
}

/// A formatter that writes as `F` does, with the string fragments `serde_json` leaves raw
/// escaped where a character [`is_unsafe`](crate::terminal::is_unsafe) ([`escape_json`]).
struct Escaping<F>(F);

impl<F: Formatter> Formatter for Escaping<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // serde_json has escaped the C0 controls of the fragment already.
        writer.write_all(escape_json(fragment).as_bytes())
    }

    // The layout is `F`'s.
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::is_unsafe;

    fn json(value: &serde_json::Value, pretty: bool) -> String {
        let mut out = Vec::new();
        to_writer(&mut out, value, pretty).unwrap_or_default();
        String::from_utf8(out).unwrap_or_default()
    }

    #[test]
    fn c1_and_bidi_are_escaped_and_read_back_the_same() {
        let name = "x\x1b]52;c;cm0=\x07\u{85}\u{9b}2J\u{202e}\u{2066}\u{61c}é関";
        let value = serde_json::json!({ name: [name, 1] });
        for pretty in [false, true] {
            let text = json(&value, pretty);
            assert!(
                !text.contains(|c: char| c != '\n' && is_unsafe(c)),
                "{text}"
            );
            assert!(
                text.contains(r"\u0085\u009b2J\u202e\u2066\u061cé関"),
                "{text}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
            assert_eq!(back, value);
        }
        // The layout is serde_json's own.
        let plain = serde_json::json!({"a": [1, {"b": "c"}]});
        assert_eq!(
            json(&plain, false),
            serde_json::to_string(&plain).unwrap_or_default()
        );
        assert_eq!(
            json(&plain, true),
            serde_json::to_string_pretty(&plain).unwrap_or_default()
        );
    }
}
