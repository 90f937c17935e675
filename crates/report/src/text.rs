//! Numbers for people, and the cells that carry them with their raw values.

use profcodec_profile::{Quantity, Unit};
use serde::Serialize;

/// One table cell: the text shown, the raw value (`data-value`) and the column it belongs to.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Cell {
    pub(crate) col: String,
    /// The raw value as Rust prints an `f64` (shortest round trip), empty when unknown.
    pub(crate) raw: String,
    pub(crate) text: String,
}

/// How the values of one unit are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    /// Seconds per unit, for time.
    seconds: Option<f64>,
}

impl Style {
    pub(crate) fn of(unit: Unit) -> Style {
        Style {
            seconds: (unit.quantity() == Quantity::Time)
                .then(|| unit.seconds())
                .flatten(),
        }
    }

    /// A count (calls).
    pub(crate) fn count() -> Style {
        Style { seconds: None }
    }

    pub(crate) fn show(self, value: f64) -> String {
        match self.seconds {
            Some(seconds) => time(value * seconds),
            None => grouped(value),
        }
    }

    pub(crate) fn cell(self, col: &str, value: Option<f64>) -> Cell {
        match value {
            Some(v) => Cell {
                col: col.to_owned(),
                raw: raw(v),
                text: self.show(v),
            },
            None => Cell {
                col: col.to_owned(),
                raw: String::new(),
                text: String::new(),
            },
        }
    }
}

/// The raw value of a `data-value` attribute.
pub(crate) fn raw(v: f64) -> String {
    format!("{v:?}")
}

/// A time in seconds, in the unit that keeps it readable.
pub(crate) fn time(s: f64) -> String {
    let a = s.abs();
    if a == 0.0 {
        "0".to_owned()
    } else if a >= 1.0 {
        format!("{s:.3} s")
    } else if a >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else if a >= 1e-6 {
        format!("{:.3} µs", s * 1e6)
    } else {
        format!("{:.0} ns", s * 1e9)
    }
}

/// A size in bytes, in the unit that keeps it readable.
pub(crate) fn bytes(n: u64) -> String {
    let x = n as f64;
    if x >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", x / (1u64 << 30) as f64)
    } else if x >= (1u64 << 20) as f64 {
        format!("{:.1} MiB", x / (1u64 << 20) as f64)
    } else if x >= 1024.0 {
        format!("{:.1} KiB", x / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

/// A count with thousands separators (two decimals when not whole).
pub(crate) fn grouped(x: f64) -> String {
    if !x.is_finite() {
        return x.to_string();
    }
    let decimals = if x.fract() == 0.0 { 0 } else { 2 };
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = text.split_at(text.find('.').unwrap_or(text.len()));
    let mut out = String::with_capacity(text.len() + int.len() / 3 + 1);
    if x < 0.0 {
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
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(grouped(1234567.0), "1,234,567");
        assert_eq!(grouped(-1234.5), "-1,234.50");
        assert_eq!(time(0.0123), "12.300 ms");
        assert_eq!(time(2.0), "2.000 s");
        assert_eq!(raw(0.1), "0.1");
        assert_eq!(raw(3.0), "3.0");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12), "12 bytes");
    }
}
