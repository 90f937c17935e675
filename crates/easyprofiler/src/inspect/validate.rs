//! `validate`: the strict tree over every byte.

use profcodec_common::inspect::{Error, Finding, Validated};

use super::invalid;
use crate::{Mode, Oddity, parse_with};

pub(super) fn validate(bytes: &[u8]) -> Result<Validated, Error> {
    // One pass: the strict tree walks and checks every byte (header, descriptors, every
    // record and context switch, the nesting as the C++ reader limits it, the counters and
    // the tail) and refuses what the C++ reader refuses.
    let view = parse_with(bytes, Mode::Strict).map_err(invalid)?;
    let tree = view.tree().map_err(invalid)?;
    let findings = tree
        .oddities
        .iter()
        .filter_map(|o| match *o {
            Oddity::TrailingBytes { offset, len } => {
                Some(Finding::TrailingData { offset, size: len })
            }
            _ => None,
        })
        .collect();
    Ok(Validated::new(findings))
}
