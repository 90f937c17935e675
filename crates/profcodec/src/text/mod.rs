//! Text for people, as every face prints it (the `profcodec` and `profcodec-sql` commands, the
//! Python package, a report): numbers with thousands separators ([`grouped`]), aligned tables cut
//! to a width ([`write_table`], [`write_table_within`]), the tables of `top` and `diff` and their
//! JSON rows (feature `profile`: [`write_top`], [`write_diff`]), and `info`'s details (feature
//! `inspect`: [`write_details`]).
//!
//! Text output keeps what a reader needs: values in human units, rounded; the JSON forms keep
//! full precision in the model's own unit.

#[cfg(feature = "inspect")]
mod info;
mod table;
#[cfg(feature = "profile")]
mod top;

#[cfg(feature = "inspect")]
pub use info::{inline, round, write_details};
pub use table::{write_table, write_table_within};
#[cfg(feature = "profile")]
pub use top::{TableOptions, write_diff, write_diff_json, write_top, write_top_json};

/// `x` with `decimals` decimals and a comma between each group of three integer digits; a
/// value that rounds to zero has no minus sign.
///
/// ```
/// assert_eq!(profcodec::text::grouped(1234567.0, 0), "1,234,567");
/// assert_eq!(profcodec::text::grouped(-1234.5, 2), "-1,234.50");
/// ```
pub fn grouped(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text.split_at(text.find('.').unwrap_or(text.len()));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    if x < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(frac);
    out
}

#[cfg(test)]
mod tests {
    use super::grouped;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(1234567.0, 0), "1,234,567");
        assert_eq!(grouped(-1234.5, 2), "-1,234.50");
        assert_eq!(grouped(999.0, 0), "999");
        assert_eq!(grouped(-0.0001, 2), "0.00");
        assert_eq!(grouped(0.0, 3), "0.000");
        assert_eq!(grouped(f64::INFINITY, 0), "inf");
    }
}
