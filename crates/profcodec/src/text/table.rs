//! Aligned text tables: value columns right-aligned, text columns left-aligned, and the last two
//! columns (a name and its file) cut with a visible `…` to keep a table within a width.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::terminal::escape;

/// The narrowest a cut name or file column gets.
const MIN_TEXT_WIDTH: usize = 16;

/// `cell` cut to `width` characters with a visible `…`: its end cut (a name), or its start (a
/// file path, whose end says most; cut after a `/` where the file's name then fits whole).
fn cut(cell: &str, width: usize, keep_end: bool) -> String {
    let n = cell.chars().count();
    if n <= width {
        return cell.to_owned();
    }
    let keep = width.saturating_sub(1);
    if keep_end {
        let tail: String = cell.chars().skip(n - keep).collect();
        let at_separator = tail
            .find(['/', '\\'])
            .filter(|&i| i > 0 && i + 1 < tail.len());
        let tail = at_separator.map_or(&tail[..], |i| &tail[i..]);
        format!("…{tail}")
    } else {
        let mut s: String = cell.chars().take(keep).collect();
        s.push('…');
        s
    }
}

/// `cells` (a column of names) cut to `width` characters with [`cut`], but for names that
/// differ and would be cut alike at their end: those keep the part that tells them apart,
/// their end (`…ForTypes<>>::exec<…>(…)`) or a window around where they differ, between two
/// marks. Call paths (`keep_end`) keep their end, the function the row is about, as [`cut`]
/// does. Sorting finds, for each name, where it differs from the names nearest to it, so the
/// cost stays within the column's length times the logarithm of its rows.
fn cut_distinct(cells: &[&str], width: usize, keep_end: bool) -> Vec<String> {
    let mut cut_cells: Vec<String> = cells.iter().map(|c| cut(c, width, keep_end)).collect();
    if keep_end {
        return cut_cells;
    }
    let mut by_cut: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in cut_cells.iter().enumerate() {
        by_cut.entry(c.as_str()).or_default().push(i);
    }
    let alike: Vec<Vec<usize>> = by_cut.into_values().filter(|g| g.len() > 1).collect();
    let keep = width.saturating_sub(1);
    for mut group in alike {
        group.sort_by_key(|&i| cells[i]);
        group.dedup_by_key(|i| cells[*i]);
        if group.len() < 2 {
            continue;
        }
        let chars: Vec<Vec<char>> = group.iter().map(|&i| cells[i].chars().collect()).collect();
        let common = |a: &[char], b: &[char]| a.iter().zip(b).take_while(|(x, y)| x == y).count();
        for (k, &i) in group.iter().enumerate() {
            let c = &chars[k];
            let before = k.checked_sub(1).map_or(0, |p| common(&chars[p], c));
            let after = chars.get(k + 1).map_or(0, |q| common(c, q));
            let n = c.len();
            // Where the name differs from its nearest.
            let differs = before.max(after).min(n.saturating_sub(1));
            let text = |r: std::ops::Range<usize>| c[r].iter().collect::<String>();
            cut_cells[i] = if n.saturating_sub(keep) <= differs {
                format!("…{}", text(n - keep..n))
            } else {
                let inner = width.saturating_sub(2).max(1);
                let start = differs
                    .saturating_sub(inner / 2)
                    .min(n.saturating_sub(inner));
                format!("…{}…", text(start..(start + inner).min(n)))
            };
        }
    }
    cut_cells
}

/// The widths of the last two columns (the name and its file) that keep a table within `max`
/// characters: the name first, leaving the file at least its widest file name (`file_name`,
/// the path's last part) after a mark, within [`MIN_TEXT_WIDTH`] and two fifths of the room;
/// the file then gets what the name leaves. Never below [`MIN_TEXT_WIDTH`] (a table of many
/// value columns on a narrow terminal may still wrap).
fn fit(widths: &[usize], file_name: usize, max: usize) -> Option<(usize, usize)> {
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
    if *file == 0 {
        return Some(((*name).min(room.max(MIN_TEXT_WIDTH)), 0));
    }
    let readable = (file_name + 2).clamp(MIN_TEXT_WIDTH, (room * 2 / 5).max(MIN_TEXT_WIDTH));
    let file_least = (*file).min(readable);
    let name_w = (*name).min(room.saturating_sub(file_least).max(MIN_TEXT_WIDTH));
    let file_w = (*file).min(room.saturating_sub(name_w).max(file_least));
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
    let file_name = rows
        .iter()
        .filter(|r| r.len() == columns)
        .filter_map(|r| r.last())
        .map(|f| f.rsplit(['/', '\\']).next().unwrap_or(f).chars().count())
        .max()
        .unwrap_or(0);
    let Some((name_w, file_w)) = max.and_then(|m| fit(&widths, file_name, m)) else {
        return write_table(out, rows, left);
    };
    let name_cells: Vec<&str> = rows
        .iter()
        .map(|r| r.get(columns.saturating_sub(2)).map_or("", String::as_str))
        .collect();
    let names = cut_distinct(&name_cells, name_w, names_keep_end);
    let cut_rows: Vec<Vec<String>> = rows
        .iter()
        .zip(names)
        .map(|(r, name)| {
            let mut name = Some(name);
            r.iter()
                .enumerate()
                .map(|(c, cell)| match columns - c {
                    2 => name.take().unwrap_or_default(),
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
        // A path keeps its end: the file name, after a mark where its start was cut, at a
        // separator rather than within a folder's name.
        assert!(text.contains("…/f.c"), "{text}");
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

    /// Names that differ but would be cut alike keep the part that tells them apart; the
    /// name column takes its width before the file column, which keeps its file names whole.
    #[test]
    fn names_cut_alike_keep_what_tells_them_apart() {
        let row = |name: &str, file: &str| vec!["1".to_owned(), name.to_owned(), file.to_owned()];
        let long = "void RAJA::internal::StatementExecutor<…, RAJA::internal::ForTypes";
        let middle = |x: &str| format!("ns::Executor<…>::run<{x}>(…) const and some more text");
        let rows = vec![
            row("name", "file"),
            row(
                &format!("{long}<>>::exec<…>(…)"),
                "/usr/src/raja/internal/List.hpp",
            ),
            row(
                &format!("{long}<…>>::exec<…>(…)"),
                "/usr/src/raja/internal/List.hpp",
            ),
            row(&middle("Alpha"), "/usr/src/kripke/Kernel.cpp"),
            row(&middle("Beta"), "/usr/src/kripke/Kernel.cpp"),
            row("main", "/usr/src/kripke/main.cpp"),
        ];
        let mut out = Vec::new();
        write_table_within(&mut out, &rows, &[false, true, true], Some(50)).unwrap_or_default();
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<&str> = text.lines().collect();
        let names: Vec<&str> = lines[1..5]
            .iter()
            .map(|l| l[3..].split("  ").next().unwrap_or(""))
            .collect();
        let unique: std::collections::HashSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), 4, "{text}");
        assert!(lines[1].contains("ForTypes<>>::exec<…>(…)"), "{text}");
        assert!(
            lines[3].contains("Alpha") && lines[4].contains("Beta"),
            "{text}"
        );
        // The files keep their names whole after a mark.
        for (line, file) in lines[1..].iter().zip([
            "List.hpp",
            "List.hpp",
            "Kernel.cpp",
            "Kernel.cpp",
            "main.cpp",
        ]) {
            assert!(line.ends_with(&format!("…/{file}")), "{text}");
        }
        for line in &lines {
            assert!(line.chars().count() <= 50, "{text}");
        }
    }
}
