//! The epoch versions: 02.00l, 01.98b, 02.00b (both layouts) and 03.00b (`crate::format`, sections
//! "02.00l", "02.00b (release-2018.09)", "03.00b"; 01.98b from hpcrun-fmt.c at 3e304bf29).
//!
//! A file is its header (magic, nvpairs) followed by epochs up to the end of the file.

use profcodec_common::checked_capacity;

use super::Rd;
use crate::Error;
use crate::model::*;
use crate::raw::{self, EpochFixedNew, EpochFixedOld};

/// Reads the header and the epochs that follow it, up to the first bytes that do not start an
/// epoch; returns the measurement and where its last epoch ends.
pub(super) fn read_prefix(data: &[u8], version: Version) -> Result<(Measurement, u64), Error> {
    match read_partial(data, version) {
        (Some(m), None, end) => Ok((m, end)),
        (_, Some(e), _) => Err(e),
        (None, None, _) => Err(super::bad_magic(data)),
    }
}

/// Reads the header and every complete epoch; stops at the first damage and returns it too. The
/// epochs end where the next bytes do not start with the epoch tag (hpcrun writes nothing after
/// the last epoch); the offset returned is that end.
pub(super) fn read_partial(
    data: &[u8],
    version: Version,
) -> (Option<Measurement>, Option<Error>, u64) {
    let mut rd = Rd::new(data, 0, version.is_little_endian());
    if let Err(e) = rd.c.skip(version.magic().len(), "magic") {
        return (None, Some(e.into()), 0);
    }
    let header = match rd.nvpairs("header nvpair count") {
        Ok(h) => h,
        Err(e) => return (None, Some(e), rd.c.offset()),
    };
    let mut m = Measurement {
        version,
        header,
        ..Measurement::default()
    };
    while starts_epoch(rd.c.rest()) {
        match epoch(&mut rd, version) {
            Ok(e) => m.epochs.push(e),
            Err(e) => return (Some(m), Some(e), rd.c.offset()),
        }
    }
    (Some(m), None, rd.c.offset())
}

/// True when `rest` starts with the epoch tag, or is a cut-short start of it (so that reading
/// the epoch reports the truncation): anything else is not an epoch.
fn starts_epoch(rest: &[u8]) -> bool {
    !rest.is_empty() && raw::EPOCH_TAG.starts_with(&rest[..rest.len().min(8)])
}

fn epoch(rd: &mut Rd<'_>, version: Version) -> Result<Epoch, Error> {
    let at = rd.c.offset();
    let tag = rd.c.bytes(8, "epoch tag")?;
    if tag != raw::EPOCH_TAG {
        let mut word = [0u8; 8];
        word.copy_from_slice(tag);
        return Err(Error::bad(
            at,
            "epoch tag",
            "\"EPOCH___\"",
            u64::from_be_bytes(word),
        ));
    }
    let (flags, ra_distance, granularity) = if version.is_legacy() {
        let f: EpochFixedOld = rd.fixed(20, "epoch header")?;
        (f.flags, f.ra_distance, f.granularity)
    } else {
        let f: EpochFixedNew = rd.fixed(20, "epoch header")?;
        (f.flags, f.ra_distance, f.granularity)
    };
    let nvpairs = rd.nvpairs("epoch nvpair count")?;
    let header = EpochHeader {
        flags,
        ra_distance,
        granularity,
        nvpairs,
    };
    let metrics = rd.metric_table(version)?;
    let loadmap = rd.loadmap(version)?;

    // CCT: u64 count, then nodes (`crate::format`; the given spec's u32 count is wrong).
    let lush = version == Version::V0200L || header.is_logical_unwind();
    let node_size = 8 + if lush { 20 } else { 0 } + if version.is_legacy() { 8 } else { 10 };
    let record = node_size + 8 * metrics.len();
    let at = rd.c.offset();
    let n = rd.u64("cct node count")?;
    let cap = checked_capacity(n, record, rd.c.remaining(), at, "cct node count")?;
    let mut cct = Vec::with_capacity(cap);
    let mut values = Vec::with_capacity(cap * metrics.len());
    for _ in 0..n {
        let id = rd.u32("cct node id")? as i32;
        let parent = rd.u32("cct node parent")? as i32;
        let assoc = if lush {
            rd.u32("cct node lush assoc")?
        } else {
            0
        };
        let lm_id = if version.is_legacy() {
            0
        } else {
            rd.u16("cct node lm id")?
        };
        let ip = rd.u64("cct node ip")?;
        let node_lush = if lush {
            let lip = [rd.u64("cct node lip")?, rd.u64("cct node lip")?];
            Some(Lush { assoc, lip })
        } else {
            None
        };
        for _ in 0..metrics.len() {
            values.push(rd.u64("cct node metric value")?);
        }
        cct.push(CctNode {
            id,
            parent,
            lm_id,
            ip,
            lush: node_lush,
            flags: 0,
        });
    }
    Ok(Epoch {
        header: Some(header),
        metrics,
        loadmap,
        cct,
        values,
    })
}
