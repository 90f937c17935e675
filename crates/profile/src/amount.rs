//! An amount given by a person for a metric of any unit ([`Amount`]): a bare number in the
//! metric's own unit, or a time with its unit (`2ms`), converted to the metric's.

use std::str::FromStr;

use crate::model::Unit;

/// An amount of a metric, as a person writes it: `0.5` is in the metric's own unit (the unit of
/// its `--json` values), `2ms`, `250us` (or `µs`), `10ns` and `1.5s` are times, for a metric of
/// time whose unit has a known length.
///
/// ```
/// use profcodec_profile::{Amount, Unit};
/// let two_ms: Amount = "2ms".parse().unwrap();
/// assert_eq!(two_ms.in_unit(Unit::Microseconds), Some(2000.0));
/// assert_eq!(two_ms.in_unit(Unit::Samples), None);
/// let plain: Amount = "3".parse().unwrap();
/// assert_eq!(plain.in_unit(Unit::Samples), Some(3.0));
/// assert!("2 parsecs".parse::<Amount>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Amount {
    /// A number in the metric's own unit.
    Plain(f64),
    /// A time: `value` times 10 to the `exponent` seconds (`2ms`: 2 and -3). Kept in the
    /// decimal unit it was written in, so that `0.1ms` is exactly 100 microseconds.
    Time {
        /// The number written.
        value: f64,
        /// The power of ten of its unit, in seconds.
        exponent: i32,
    },
}

/// The time units an [`Amount`] may carry, and their length in seconds as a power of ten.
const TIME_UNITS: [(&str, i32); 5] = [("ns", -9), ("us", -6), ("µs", -6), ("ms", -3), ("s", 0)];

impl Amount {
    /// This amount in `unit`; `None` for a time and a unit that is not a time of known length.
    pub fn in_unit(self, unit: Unit) -> Option<f64> {
        let (value, exponent) = match self {
            Amount::Plain(x) => return Some(x),
            Amount::Time { value, exponent } => (value, exponent),
        };
        let (value, exponent) = match unit {
            Unit::Nanoseconds => (value, exponent + 9),
            Unit::Microseconds => (value, exponent + 6),
            Unit::Seconds => (value, exponent),
            Unit::Ticks {
                per_second: Some(rate),
            } if rate > 0 => (value * rate as f64, exponent),
            _ => return None,
        };
        // Dividing by an exact power of ten rounds once, where multiplying by its inverse
        // (not exact in binary) would round twice.
        Some(if exponent >= 0 {
            value * 10f64.powi(exponent)
        } else {
            value / 10f64.powi(-exponent)
        })
    }
}

/// Why a text is not an [`Amount`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not an amount: {0:?}: expected a number not below 0, alone (in the metric's unit) or followed by ns, us, ms or s"
)]
pub struct AmountError(String);

impl FromStr for Amount {
    type Err = AmountError;

    fn from_str(text: &str) -> Result<Amount, AmountError> {
        let error = || AmountError(text.to_owned());
        let trimmed = text.trim();
        let (number, exponent) = TIME_UNITS
            .iter()
            .find_map(|&(suffix, exponent)| {
                trimmed
                    .strip_suffix(suffix)
                    .map(|n| (n.trim_end(), Some(exponent)))
            })
            .unwrap_or((trimmed, None));
        let x: f64 = number.parse().map_err(|_| error())?;
        if !x.is_finite() || x < 0.0 {
            return Err(error());
        }
        Ok(match exponent {
            Some(exponent) => Amount::Time { value: x, exponent },
            None => Amount::Plain(x),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_parse_with_and_without_a_time_unit() {
        let time = |value, exponent| Ok(Amount::Time { value, exponent });
        assert_eq!("0.5".parse(), Ok(Amount::Plain(0.5)));
        assert_eq!("2ms".parse(), time(2.0, -3));
        assert_eq!("2 ms".parse(), time(2.0, -3));
        assert_eq!("250us".parse(), time(250.0, -6));
        assert_eq!("250µs".parse(), time(250.0, -6));
        assert_eq!("10ns".parse(), time(10.0, -9));
        assert_eq!("1.5s".parse(), time(1.5, 0));
        for bad in ["", "ms", "-1", "1h", "NaN", "inf"] {
            assert!(bad.parse::<Amount>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_time_converts_to_a_time_unit_only() {
        let ms = Amount::Time {
            value: 1.0,
            exponent: -3,
        };
        assert_eq!(ms.in_unit(Unit::Seconds), Some(1e-3));
        assert_eq!(ms.in_unit(Unit::Nanoseconds), Some(1e6));
        assert_eq!(
            ms.in_unit(Unit::Ticks {
                per_second: Some(10_000_000)
            }),
            Some(10_000.0)
        );
        // Written in one unit, exact in another.
        let tenth: Amount = "0.1ms".parse().unwrap();
        assert_eq!(tenth.in_unit(Unit::Microseconds), Some(100.0));
        let us: Amount = "2000000us".parse().unwrap();
        assert_eq!(us.in_unit(Unit::Seconds), Some(2.0));
        assert_eq!(ms.in_unit(Unit::Ticks { per_second: None }), None);
        assert_eq!(ms.in_unit(Unit::Count), None);
    }
}
