//! Aligned text tables: value columns right-aligned, text columns left-aligned, and the last two
//! columns (a name and its file) cut with a visible `…` to keep a table within a width.

use std::io::{self, Write};

use crate::terminal::escape;

/// The narrowest a cut name or file column gets.
const MIN_TEXT_WIDTH: usize = 16;

/// `cell` cut to `width` characters with a visible `…`: its end cut (a name), or its start (a
/// file path, whose end says most).
fn cut(cell: &str, width: usize, keep_end: bool) -> String {
    let n = cell.chars().count();
    if n <= width {
        return cell.to_owned();
    }
    let keep = width.saturating_sub(1);
    if keep_end {
        let mut s = String::from("…");
        s.extend(cell.chars().skip(n - keep));
        s
    } else {
        let mut s: String = cell.chars().take(keep).collect();
        s.push('…');
        s
    }
}

/// The widths of the last two columns (the name and its file) that keep a table within `max`
/// characters: the file cut first to two fifths of the room, then the name; never below
/// [`MIN_TEXT_WIDTH`] (a table of many value columns on a narrow terminal may still wrap).
fn fit(widths: &[usize], max: usize) -> Option<(usize, usize)> {
    let [values @ .., name, file] = widths else {
        return None;
    };
    let fixed: usize = values.iter().map(|w| w + 2).sum();
    let room = max.saturating_sub(fixed);
    let sep = if *file > 0 { 2 } else { 0 };
    if name + sep + file <= room {
        return None;
    }
    let room = room.saturating_sub(sep);
    let file_w = if *file == 0 {
        0
    } else {
        (*file).min(
            room.saturating_sub(*name)
                .max(room * 2 / 5)
                .max(MIN_TEXT_WIDTH),
        )
    };
    let name_w = (*name).min(room.saturating_sub(file_w).max(MIN_TEXT_WIDTH));
    Some((name_w, file_w))
}

/// [`write_table`] within `max` characters a line when given: the second-to-last column (names)
/// cut at its end and the last (files) cut at its start, each with a visible `…` and never below
/// 16 characters; the value columns stay whole (so many value columns on a narrow terminal may
/// still wrap).
pub fn write_table_within(
    out: &mut dyn Write,
    rows: &[Vec<String>],
    left: &[bool],
    max: Option<usize>,
) -> io::Result<()> {
    write_table_cut(out, rows, left, max, false)
}

/// [`write_table_within`], with names cut at their start instead when `names_keep_end` (call
/// paths, whose end is the function the row is about).
pub(crate) fn write_table_cut(
    out: &mut dyn Write,
    rows: &[Vec<String>],
    left: &[bool],
    max: Option<usize>,
    names_keep_end: bool,
) -> io::Result<()> {
    let escaped = escape_rows(rows);
    let rows = escaped.as_deref().unwrap_or(rows);
    let widths = column_widths(rows);
    let columns = widths.len();
    let Some((name_w, file_w)) = max.and_then(|m| fit(&widths, m)) else {
        return write_table(out, rows, left);
    };
    let cut_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .enumerate()
                .map(|(c, cell)| match columns - c {
                    2 => cut(cell, name_w, names_keep_end),
                    1 => cut(cell, file_w, true),
                    _ => cell.clone(),
                })
                .collect()
        })
        .collect();
    write_table(out, &cut_rows, left)
}

/// `rows` with every cell [`escape`]d for the terminal, when any cell needs it: a name from an
/// input may hold control characters, escape sequences or bidi controls, and a tab or newline
/// would break its row. Escaped before the widths are measured, so that columns align on what
/// is printed.
fn escape_rows(rows: &[Vec<String>]) -> Option<Vec<Vec<String>>> {
    let unsafe_cell = |cell: &String| cell.contains(crate::terminal::is_unsafe);
    rows.iter().flatten().any(unsafe_cell).then(|| {
        rows.iter()
            .map(|r| r.iter().map(|cell| escape(cell).into_owned()).collect())
            .collect()
    })
}

/// The width of each column of `rows`, in characters: its widest cell.
fn column_widths(rows: &[Vec<String>]) -> Vec<usize> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Writes `rows` (each a list of cells) with right-aligned value columns and left-aligned text
/// columns (`left[i]`), two spaces apart, without trailing blanks. Cells are printed
/// [`escape`]d: control characters and bidi controls of a name show as `\x1b`, `\u{202e}`.
///
/// ```
/// let rows = vec![
///     vec!["self".to_owned(), "name".to_owned()],
///     vec!["1,000".to_owned(), "main".to_owned()],
/// ];
/// let mut out = Vec::new();
/// profcodec::text::write_table(&mut out, &rows, &[false, true])?;
/// assert_eq!(String::from_utf8_lossy(&out), " self  name\n1,000  main\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn write_table(out: &mut dyn Write, rows: &[Vec<String>], left: &[bool]) -> io::Result<()> {
    let escaped = escape_rows(rows);
    let rows = escaped.as_deref().unwrap_or(rows);
    let widths = column_widths(rows);
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - cell.chars().count();
            if left.get(c).copied().unwrap_or(false) {
                line.push_str(cell);
                line.extend(std::iter::repeat_n(' ', pad));
            } else {
                line.extend(std::iter::repeat_n(' ', pad));
                line.push_str(cell);
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_tables_are_cut_with_a_mark() {
        let long = "n".repeat(300);
        let rows = vec![
            vec!["self".to_owned(), "name".to_owned(), "file".to_owned()],
            vec![
                "1".to_owned(),
                long,
                format!("/very/long/{}/f.c", "d".repeat(100)),
            ],
        ];
        let mut out = Vec::new();
        write_table_within(&mut out, &rows, &[false, true, true], Some(80)).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{line}");
        }
        assert!(text.contains("n…"), "{text}");
        // A path keeps its end: the file name, after a mark where its start was cut.
        assert!(text.contains("…dd") && text.contains("d/f.c"), "{text}");
        assert!(!text.contains("/very/long"), "{text}");
    }

    /// A name's control characters and bidi controls are printed escaped, and the columns
    /// align on the escaped text.
    #[test]
    fn cells_are_escaped_and_aligned_on_what_is_printed() {
        let rows = vec![
            vec!["self".to_owned(), "name".to_owned(), "file".to_owned()],
            vec![
                "1".to_owned(),
                "a\x1b]52;c;cm0=\x07\tb".to_owned(),
                "x.c".to_owned(),
            ],
            vec![
                "2".to_owned(),
                "\u{202e}cba".to_owned(),
                "\u{9b}2J".to_owned(),
            ],
        ];
        for max in [None, Some(30)] {
            let mut out = Vec::new();
            write_table_within(&mut out, &rows, &[false, true, true], max).unwrap_or_default();
            let text = String::from_utf8_lossy(&out);
            assert!(!text.contains(|c: char| c != '\n' && crate::terminal::is_unsafe(c)));
            assert_eq!(text.lines().count(), 3, "{text}");
            if max.is_none() {
                assert_eq!(
                    text,
                    "self  name                    file\n   \
                     1  a\\x1b]52;c;cm0=\\x07\\tb  x.c\n   \
                     2  \\u{202e}cba             \\u{9b}2J\n"
                );
            }
        }
    }

    #[test]
    fn tables_align_values_right_and_names_left() {
        let rows = vec![
            vec!["self".to_owned(), "name".to_owned()],
            vec!["1,000".to_owned(), "a".to_owned()],
            vec!["5".to_owned(), "longer".to_owned()],
        ];
        let mut out = Vec::new();
        write_table(&mut out, &rows, &[false, true]).unwrap_or_default();
        assert_eq!(
            String::from_utf8_lossy(&out),
            " self  name\n1,000  a\n    5  longer\n"
        );
    }
}
