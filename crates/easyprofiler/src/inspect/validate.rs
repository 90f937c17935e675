//! `validate`: the strict walk over every byte.

use profcodec_common::inspect::{Error, Finding, Validated};

use super::invalid;
use crate::{Mode, Oddity, parse_with};

pub(super) fn validate(bytes: &[u8]) -> Result<Validated, Error> {
    // One pass: the strict walk checks every byte (header, descriptors, every record and
    // context switch, the nesting as the C++ reader limits it, the counters and the tail) and
    // refuses what the C++ reader refuses, the same as the strict tree, without a node per block.
    let view = parse_with(bytes, Mode::Strict).map_err(invalid)?;
    let walk = view.walk().map_err(invalid)?;
    let findings = walk
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
