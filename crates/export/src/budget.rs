//! The output budget: exporters whose output can grow faster than the profile (folded stacks
//! and speedscope's sampled stacks repeat every call path in full; pprof's samples list every
//! location of their stack) project their size from the call tree before writing a byte, and
//! refuse when it is over [`ExportOptions::max_output`](crate::ExportOptions::max_output).

use std::path::Path;

use crate::ExportError;

/// The budget of an export of `input_bytes` of input when none is asked for: 100 times the
/// input plus 64 MiB. What `profcodec convert` applies unless `--max-output` says otherwise.
pub fn default_output_budget(input_bytes: u64) -> u64 {
    input_bytes.saturating_mul(100).saturating_add(64 << 20)
}

/// The bytes of the files at `paths`: a file's length, a folder's files' lengths (walked
/// without following links to folders). Unreadable entries count 0.
pub fn input_bytes<P: AsRef<Path>>(paths: &[P]) -> u64 {
    paths.iter().map(|p| path_bytes(p.as_ref(), true)).sum()
}

fn path_bytes(path: &Path, follow: bool) -> u64 {
    let meta = if follow {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    let Ok(meta) = meta else { return 0 };
    if meta.is_file() {
        return meta.len();
    }
    if meta.is_symlink() {
        // A link inside a folder: counted when it names a file, not walked when a folder.
        return std::fs::metadata(path)
            .ok()
            .filter(std::fs::Metadata::is_file)
            .map_or(0, |m| m.len());
    }
    if !meta.is_dir() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| path_bytes(&e.path(), false))
        .fold(0u64, u64::saturating_add)
}

/// A size as `--max-output` takes it: bytes, or a number with a binary multiple `K`, `M`, `G`
/// or `T` (`KiB`, `MB`... alike: all are powers of 1024), possibly with a fraction (`1.5G`);
/// `unlimited` for no budget (`u64::MAX`).
///
/// # Errors
///
/// A message saying what was not understood.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let s = text.trim();
    if s.eq_ignore_ascii_case("unlimited") || s.eq_ignore_ascii_case("none") {
        return Ok(u64::MAX);
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let shift = match unit.trim_end_matches('b').trim_end_matches('i') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => {
            return Err(format!(
                "{text:?}: not a size (bytes, or a number with K, M, G or T)"
            ));
        }
    };
    let bad = || format!("{text:?}: not a size (bytes, or a number with K, M, G or T)");
    if number.is_empty() {
        return Err(bad());
    }
    if !number.contains('.') {
        let n: u64 = number.parse().map_err(|_| bad())?;
        return n.checked_mul(1u64 << shift).ok_or_else(bad);
    }
    let x: f64 = number.parse().map_err(|_| bad())?;
    let bytes = x * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.ceil() as u64)
}

/// `bytes` in the largest binary unit that keeps it at 1 or more, with one decimal.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = bytes as f64;
    let mut unit = 0;
    while x >= 1024.0 && unit < UNITS.len() - 1 {
        x /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{x:.1} {}", UNITS[unit])
    }
}

/// A `--max-output` value that allows `projected` bytes: it rounded up to a whole number of
/// its unit.
pub(crate) fn suggestion(projected: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "K")] {
        if projected >= 1u64 << shift {
            return format!("{}{unit}", projected.div_ceil(1u64 << shift));
        }
    }
    projected.to_string()
}

/// Refuses an output of `projected` bytes over `budget` (`None`: no budget).
pub(crate) fn check(
    target: &'static str,
    projected: u64,
    budget: Option<u64>,
) -> Result<(), ExportError> {
    match budget {
        Some(budget) if projected > budget => Err(ExportError::OutputTooLarge {
            target,
            projected,
            budget,
        }),
        _ => Ok(()),
    }
}

/// The number of decimal digits of `x`.
pub(crate) fn decimal_len(x: u64) -> u64 {
    u64::from(x.checked_ilog10().unwrap_or(0)) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_multiples() {
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("2 MiB"), Ok(2 << 20));
        assert_eq!(parse_size("3g"), Ok(3 << 30));
        assert_eq!(parse_size("1.5G"), Ok(3 << 29));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("unlimited"), Ok(u64::MAX));
        assert!(parse_size("").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("12 apples").is_err());
        assert!(parse_size("99999999999T").is_err());
    }

    #[test]
    fn the_default_budget_is_100_times_the_input_plus_64_mib() {
        assert_eq!(default_output_budget(0), 64 << 20);
        assert_eq!(default_output_budget(1000), 100_000 + (64 << 20));
        assert_eq!(default_output_budget(u64::MAX), u64::MAX);
    }

    #[test]
    fn sizes_read_humanly() {
        assert_eq!(human(12), "12 B");
        assert_eq!(human(1536), "1.5 KiB");
        assert_eq!(human(1_792_192_000), "1.7 GiB");
        assert_eq!(suggestion(1_792_192_000), "2G");
        assert_eq!(suggestion(5000), "5K");
        assert_eq!(decimal_len(0), 1);
        assert_eq!(decimal_len(9), 1);
        assert_eq!(decimal_len(10), 2);
        assert_eq!(decimal_len(u64::MAX), 20);
    }
}

/// A writer that stops at a budget, for outputs whose size cannot be projected before they are
/// written (timelines, whose size follows the trace's samples): a write past `budget` bytes
/// fails with an [`io::Error`](std::io::Error) carrying [`OverBudget`] ([`over_budget`] finds it), so that an
/// atomic output is never placed. Whatever the input, the bytes written stay below the budget.
#[derive(Debug)]
pub struct BudgetWriter<W> {
    inner: W,
    written: u64,
    budget: u64,
}

impl<W: std::io::Write> BudgetWriter<W> {
    /// `inner`, stopped once `budget` bytes would be passed.
    pub fn new(inner: W, budget: u64) -> BudgetWriter<W> {
        BudgetWriter {
            inner,
            written: 0,
            budget,
        }
    }

    /// The bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

impl<W: std::io::Write> std::io::Write for BudgetWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.written.saturating_add(buf.len() as u64) > self.budget {
            return Err(std::io::Error::other(OverBudget {
                budget: self.budget,
            }));
        }
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What a [`BudgetWriter`] fails with once its budget would be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the output would be larger than its budget of {budget} bytes")]
pub struct OverBudget {
    /// The budget, in bytes.
    pub budget: u64,
}

/// The [`OverBudget`] behind `e`, when a [`BudgetWriter`] stopped the write.
pub fn over_budget(e: &std::io::Error) -> Option<OverBudget> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<OverBudget>())
        .copied()
}

#[cfg(test)]
mod writer_tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_budget_writer_stops_before_its_budget_and_says_so() {
        let mut out = BudgetWriter::new(Vec::new(), 10);
        out.write_all(b"0123456789").expect("within the budget");
        let err = out.write_all(b"x").expect_err("over the budget");
        assert_eq!(over_budget(&err), Some(OverBudget { budget: 10 }));
        assert_eq!(out.written(), 10);
        assert_eq!(over_budget(&std::io::Error::other("disk full")), None);
    }
}
