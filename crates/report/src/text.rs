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
    /// The one time unit every value is shown in ([`Style::fixed`]), else each value's own.
    fixed: Option<TimeUnit>,
}

/// A unit a time is shown in: seconds per unit, its symbol, and the decimals shown.
type TimeUnit = (f64, &'static str, usize);

/// The units times are shown in, largest first.
const TIME_UNITS: [TimeUnit; 4] = [
    (1.0, "s", 3),
    (1e-3, "ms", 3),
    (1e-6, "µs", 3),
    (1e-9, "ns", 0),
];

/// The unit that keeps a time of `seconds` readable: the largest it is at least one of.
fn time_unit(seconds: f64) -> TimeUnit {
    let a = seconds.abs();
    TIME_UNITS
        .into_iter()
        .find(|&(per, _, _)| a >= per)
        .unwrap_or(TIME_UNITS[3])
}

impl Style {
    pub(crate) fn of(unit: Unit) -> Style {
        Style {
            seconds: (unit.quantity() == Quantity::Time)
                .then(|| unit.seconds())
                .flatten(),
            fixed: None,
        }
    }

    /// This style with every time in the one unit that keeps `largest` (the largest value of a
    /// column) readable, so that the column's heading can name the unit its cells show.
    pub(crate) fn fixed(self, largest: f64) -> Style {
        Style {
            fixed: self.seconds.map(|seconds| {
                let largest = if largest.is_finite() { largest } else { 0.0 };
                time_unit(largest * seconds)
            }),
            ..self
        }
    }

    /// `label` as the heading of a column of this style: with the time unit its cells show
    /// when [`Style::fixed`], else with `unit` (the value type's unit name) unless that is a
    /// plain count.
    pub(crate) fn heading(self, label: &str, unit: &str) -> String {
        match self.fixed {
            Some((_, symbol, _)) => format!("{label} ({symbol})"),
            // `samples (samples)` says nothing more than `samples`.
            None if unit.is_empty() || unit == "count" || label.starts_with(unit) => {
                label.to_owned()
            }
            None => format!("{label} ({unit})"),
        }
    }

    /// A count (calls).
    pub(crate) fn count() -> Style {
        Style {
            seconds: None,
            fixed: None,
        }
    }

    pub(crate) fn show(self, value: f64) -> String {
        match (self.seconds, self.fixed) {
            (Some(seconds), Some(unit)) => time_in(value * seconds, unit),
            (Some(seconds), None) => time(value * seconds),
            _ => grouped(value),
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
    time_in(s, time_unit(s))
}

/// A time in seconds, in `unit`.
fn time_in(s: f64, (per, symbol, decimals): TimeUnit) -> String {
    if s == 0.0 {
        "0".to_owned()
    } else {
        format!("{:.*} {symbol}", decimals, s / per)
    }
}

/// `n` and the noun that agrees with it ([`profcodec_common::words::count`]), the number
/// grouped as [`grouped`] groups it: `1 track`, `12,345 slices`.
pub(crate) fn counted(n: u64, one: &str, many: &str) -> String {
    let said = profcodec_common::words::count(n, one, many);
    let noun = said.split_once(' ').map_or(many, |(_, noun)| noun);
    format!("{} {noun}", grouped(n as f64))
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
        assert_eq!(time(2e-9), "2 ns");
        let ms = Style::of(Unit::Seconds).fixed(0.5);
        assert_eq!(ms.heading("self", "seconds"), "self (ms)");
        assert_eq!(ms.show(2e-6), "0.002 ms");
        assert_eq!(ms.show(0.25), "250.000 ms");
        assert_eq!(
            Style::count().fixed(3.0).heading("n", "samples"),
            "n (samples)"
        );
        assert_eq!(Style::count().heading("statements", "count"), "statements");
        assert_eq!(raw(0.1), "0.1");
        assert_eq!(raw(3.0), "3.0");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(12), "12 bytes");
        assert_eq!(counted(1, "track", "tracks"), "1 track");
        assert_eq!(counted(12345, "track", "tracks"), "12,345 tracks");
    }
}
