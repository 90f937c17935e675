//! Text from an input made safe for a terminal: the one escaping every printer of profcodec uses
//! (tables, `info`, warnings, errors), so that a name someone else put in a profile cannot drive
//! the reader's terminal.
//!
//! A terminal obeys control characters and escape sequences: OSC 52 writes the clipboard, OSC 0
//! the window title, CSI 2J clears the screen, and C1 controls (U+0080 to U+009F) act as ESC
//! sequences on many terminals. Bidirectional overrides and isolates reorder what is shown, so
//! that a name reads as something it is not. [`escape`] turns each such character into visible
//! text:
//!
//! | character | printed as |
//! |---|---|
//! | tab, newline, carriage return | `\t`, `\n`, `\r` |
//! | other C0 controls, DEL | `\x00` to `\x1f`, `\x7f` |
//! | C1 controls (U+0080 to U+009F) | `\u{80}` to `\u{9f}` |
//! | bidi marks, embeddings, overrides and isolates (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069); line and paragraph separators (U+2028, U+2029) | `\u{61c}`, `\u{202e}`, ... |
//!
//! Every other character is kept, letters of any script included (`é`, `関数`). A backslash
//! is kept as it is (paths and messages that quote escaped text read as before), so escaping is
//! idempotent: escaped text escapes to itself.
//!
//! ```
//! use profcodec_common::terminal::escape;
//! assert_eq!(escape("main::work"), "main::work");
//! assert_eq!(escape("a\x1b]52;c;cm0gLXJmIH4=\x07b"), r"a\x1b]52;c;cm0gLXJmIH4=\x07b");
//! assert_eq!(escape("x\u{202e}gpj.exe"), r"x\u{202e}gpj.exe");
//! assert_eq!(escape("café 関数"), "café 関数");
//! ```

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` is escaped by [`escape`]: a C0 or C1 control, DEL, or a character that reorders
/// or breaks the text around it (bidi controls, line and paragraph separators).
pub fn is_unsafe(c: char) -> bool {
    matches!(
        c,
        '\0'..='\x1f'
            | '\x7f'..='\u{9f}'
            | '\u{061c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

/// `text` with every character [`is_unsafe`] replaced by its visible escape (the table of the
/// [module](self)); borrowed when nothing needed escaping.
pub fn escape(text: &str) -> Cow<'_, str> {
    let Some(first) = text.find(is_unsafe) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// Appends `c` to `out`, escaped when it [`is_unsafe`].
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\0'..='\x1f' | '\x7f' => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if is_unsafe(c) => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
        c => out.push(c),
    }
}

/// `json` (a JSON document) with every character [`is_unsafe`] but JSON's whitespace (tab,
/// newline, carriage return) written as a `\uXXXX` escape: the C1 and bidi controls a JSON
/// writer leaves raw inside strings. A valid document stays valid and reads back the same (a
/// raw C0 control can only be whitespace there, and every escaped character is in the Basic
/// Multilingual Plane: one `\uXXXX` each).
///
/// ```
/// use profcodec_common::terminal::escape_json;
/// assert_eq!(escape_json("[\"a\u{9b}2J\u{202e}b\"]\n"), "[\"a\\u009b2J\\u202eb\"]\n");
/// ```
pub fn escape_json(json: &str) -> Cow<'_, str> {
    let unsafe_in_json = |c: char| is_unsafe(c) && !matches!(c, '\t' | '\n' | '\r');
    let Some(first) = json.find(unsafe_in_json) else {
        return Cow::Borrowed(json);
    };
    let mut out = String::with_capacity(json.len() + 8);
    out.push_str(&json[..first]);
    for c in json[first..].chars() {
        if unsafe_in_json(c) {
            let _ = write!(out, "\\u{:04x}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A writer that passes text on to a terminal escaped: [`EscapingWriter::lines`] as [`escape`]
/// shows it, with the newlines that end lines kept; [`EscapingWriter::json`] as
/// [`escape_json`]. Bytes that are no UTF-8 show as `\xNN`; a character split between two
/// writes is held until its end arrives. It is meant for standard output when that is a
/// terminal: a pipe or a file gets the exact bytes ([`EscapingWriter::lines_on_terminal`]).
///
/// ```
/// use std::io::Write;
/// use profcodec_common::terminal::EscapingWriter;
/// let mut out = EscapingWriter::lines(Vec::new());
/// out.write_all(b"main;\x1b]52;c;eA==\x07 1\nmain;caf\xc3").unwrap();
/// out.write_all(b"\xa9\xff 2\n").unwrap();
/// let out = out.finish().unwrap();
/// assert_eq!(out, b"main;\\x1b]52;c;eA==\\x07 1\nmain;caf\xc3\xa9\\xff 2\n");
/// ```
#[derive(Debug)]
pub struct EscapingWriter<W: std::io::Write> {
    inner: W,
    /// The start of a character whose other bytes have not been written yet.
    pending: Vec<u8>,
    mode: Mode,
}

/// What an [`EscapingWriter`] escapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing: the bytes as they are.
    Exact,
    /// Lines, as [`escape`] escapes.
    Lines,
    /// A JSON document, as [`escape_json`] escapes.
    Json,
}

impl<W: std::io::Write> EscapingWriter<W> {
    /// Lines of text: each escaped as [`escape`] does, the newlines between them kept.
    pub fn lines(inner: W) -> Self {
        EscapingWriter {
            inner,
            pending: Vec::new(),
            mode: Mode::Lines,
        }
    }

    /// [`EscapingWriter::lines`] when `terminal` (standard output is one:
    /// `std::io::IsTerminal`); the exact bytes otherwise, for a pipe or a file.
    pub fn lines_on_terminal(inner: W, terminal: bool) -> Self {
        EscapingWriter {
            inner,
            pending: Vec::new(),
            mode: if terminal { Mode::Lines } else { Mode::Exact },
        }
    }

    /// A JSON document, escaped as [`escape_json`] does.
    pub fn json(inner: W) -> Self {
        EscapingWriter {
            inner,
            pending: Vec::new(),
            mode: Mode::Json,
        }
    }

    /// Writes what is held (the start of a character that never ended, as `\xNN`), flushes,
    /// and returns the writer written to.
    pub fn finish(mut self) -> std::io::Result<W> {
        let mut out = String::new();
        for b in std::mem::take(&mut self.pending) {
            let _ = write!(out, "\\x{b:02x}");
        }
        self.inner.write_all(out.as_bytes())?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// Appends `text`, escaped, to `out`.
    fn push_text(&self, out: &mut String, text: &str) {
        if self.mode == Mode::Json {
            out.push_str(&escape_json(text));
            return;
        }
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&escape(line));
        }
    }
}

impl<W: std::io::Write> std::io::Write for EscapingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.mode == Mode::Exact {
            return self.inner.write(buf);
        }
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(buf);
        let mut out = String::with_capacity(bytes.len() + 8);
        let mut rest = &bytes[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(text) => {
                    self.push_text(&mut out, text);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    self.push_text(&mut out, std::str::from_utf8(valid).unwrap_or_default());
                    let Some(bad) = e.error_len() else {
                        // A character that the next write may complete.
                        rest = after;
                        break;
                    };
                    for b in &after[..bad] {
                        let _ = write!(out, "\\x{b:02x}");
                    }
                    rest = &after[bad..];
                }
            }
        }
        self.pending = rest.to_vec();
        self.inner.write_all(out.as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// [`escape`] of `message`'s text: for a whole message (an error, a warning) that may quote
/// names and paths from an input, escaped once where it is printed.
pub fn escape_display(message: &impl std::fmt::Display) -> String {
    let text = message.to_string();
    match escape(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(escaped) => escaped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_are_escaped_and_letters_kept() {
        assert_eq!(escape("\x1b[2J"), r"\x1b[2J");
        assert_eq!(escape("\x1b]0;pwned\x07"), r"\x1b]0;pwned\x07");
        assert_eq!(escape("a\tb\nc\rd\0\x7f"), r"a\tb\nc\rd\x00\x7f");
        assert_eq!(escape("\u{9b}2J\u{85}"), r"\u{9b}2J\u{85}");
        assert_eq!(
            escape("\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}"),
            r"\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}"
        );
        assert_eq!(
            escape("\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{61c}"),
            r"\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{61c}"
        );
        assert_eq!(escape("\u{2028}\u{2029}"), r"\u{2028}\u{2029}");
        assert_eq!(escape("é ß 関数 Ж \u{a0}"), "é ß 関数 Ж \u{a0}");
        assert!(matches!(escape("plain::name"), Cow::Borrowed(_)));
    }

    #[test]
    fn escaping_is_idempotent_and_leaves_nothing_unsafe() {
        let all: String = (0u32..0x2100).filter_map(char::from_u32).collect();
        let once = escape(&all).into_owned();
        assert!(!once.contains(is_unsafe));
        assert_eq!(escape(&once), once);
        assert_eq!(escape_display(&"\x1bx"), r"\x1bx");
    }

    #[test]
    fn the_writer_escapes_across_writes_and_keeps_lines() {
        use std::io::Write as _;
        let text = "a\x1b[2J\u{202e}é\n\u{9b}b\tc\n";
        let mut out = EscapingWriter::lines(Vec::new());
        // One byte at a time: every character is cut between writes.
        for b in text.as_bytes() {
            out.write_all(&[*b]).unwrap_or_default();
        }
        let out = out.finish().unwrap_or_default();
        assert_eq!(
            String::from_utf8(out).unwrap_or_default(),
            "a\\x1b[2J\\u{202e}é\n\\u{9b}b\\tc\n"
        );
        let mut json = EscapingWriter::json(Vec::new());
        let doc = "[\"x\u{85}\u{2066}\\u001b\"]\n";
        for b in doc.as_bytes() {
            json.write_all(&[*b]).unwrap_or_default();
        }
        let json = json.finish().unwrap_or_default();
        assert_eq!(
            String::from_utf8(json).unwrap_or_default(),
            "[\"x\\u0085\\u2066\\u001b\"]\n"
        );
        // A character that never ends shows its bytes.
        let mut cut = EscapingWriter::lines(Vec::new());
        cut.write_all(b"x\xe9\x96").unwrap_or_default();
        assert_eq!(cut.finish().unwrap_or_default(), b"x\\xe9\\x96");
        // Not on a terminal: the exact bytes.
        let mut exact = EscapingWriter::lines_on_terminal(Vec::new(), false);
        exact.write_all(b"\x1b]0;t\x07\xe9").unwrap_or_default();
        assert_eq!(exact.finish().unwrap_or_default(), b"\x1b]0;t\x07\xe9");
    }
}
