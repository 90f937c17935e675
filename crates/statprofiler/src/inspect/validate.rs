//! `validate`: one counting pass per file, making the real reader's checks.

use profcodec_common::inspect::{Error, Finding, Source, Validated};

use super::{each_named_file, invalid};
use crate::{Reader, Summary, Warning, check};

pub(super) fn validate(input: &Source<'_>) -> Result<Validated, Error> {
    let mut out = Validated::default();
    each_named_file(input, |_, bytes| {
        let mut reader = Reader::from_slice(bytes).map_err(invalid)?;
        let mut summary = Summary::default();
        check(&mut reader, &mut summary).map_err(invalid)?;
        findings(&summary, &mut out.findings);
        Ok(())
    })?;
    Ok(out)
}

/// A file's warnings as findings; the caller fails on trailing data unless told otherwise.
fn findings(summary: &Summary, out: &mut Vec<Finding>) {
    for w in &summary.warnings {
        if let Warning::TrailingData(t) = w {
            out.push(Finding::TrailingData {
                offset: t.offset,
                size: t.size,
            });
        }
    }
}
