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
}
