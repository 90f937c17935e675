//! The output budget: every file of the report is made in memory, counted as it is made and
//! kept only while the files so far fit the budget, so that a report over it is refused before
//! a byte is written and its making never holds more than the budget.

use std::io::{self, Write};

use crate::ReportError;

/// What the report's files take, against the budget.
#[derive(Debug)]
pub(crate) struct Budget {
    limit: u64,
    used: u64,
}

impl Budget {
    /// A budget of `limit` bytes (`None`: none).
    pub(crate) fn new(limit: Option<u64>) -> Budget {
        Budget {
            limit: limit.unwrap_or(u64::MAX),
            used: 0,
        }
    }

    /// A file to make, with the room the files before it left.
    pub(crate) fn file(&self) -> Sink {
        Sink {
            bytes: Vec::new(),
            count: 0,
            room: self.limit.saturating_sub(self.used),
        }
    }

    /// The bytes the budget has left.
    pub(crate) fn room(&self) -> u64 {
        self.limit.saturating_sub(self.used)
    }

    /// Counts `sink`'s file in, and returns its bytes (empty once over the budget).
    pub(crate) fn take(&mut self, sink: Sink) -> Vec<u8> {
        self.used = self.used.saturating_add(sink.count);
        sink.bytes
    }

    /// Refuses the report when its files are over the budget.
    pub(crate) fn check(&self) -> Result<(), ReportError> {
        if self.used > self.limit {
            return Err(ReportError::OutputTooLarge {
                projected: self.used,
                budget: self.limit,
            });
        }
        Ok(())
    }
}

/// One file of the report as it is made: its bytes while they fit the room, and their count
/// in any case.
#[derive(Debug)]
pub(crate) struct Sink {
    bytes: Vec<u8>,
    count: u64,
    room: u64,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.count = self.count.saturating_add(buf.len() as u64);
        if self.count <= self.room {
            self.bytes.extend_from_slice(buf);
        } else if !self.bytes.is_empty() {
            // Over the budget: only the count goes on.
            self.bytes = Vec::new();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `--max-output` that allows `bytes`: in whole MiB above one, else in bytes.
pub(crate) fn suggestion(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{}M", bytes.div_ceil(1 << 20))
    } else {
        bytes.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_room_keeps_its_count_only() {
        let mut budget = Budget::new(Some(10));
        let mut a = budget.file();
        a.write_all(b"0123456").unwrap_or_default();
        assert_eq!(budget.take(a), b"0123456");
        let mut b = budget.file();
        b.write_all(b"7890").unwrap_or_default();
        assert!(budget.take(b).is_empty());
        assert!(matches!(
            budget.check(),
            Err(ReportError::OutputTooLarge {
                projected: 11,
                budget: 10
            })
        ));
        assert_eq!(suggestion(3 << 20), "3M");
        assert_eq!(suggestion(1000), "1000");
    }
}
