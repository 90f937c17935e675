//! The companion files a measurement names (`structs/`, `vdso/`, `gpubins/`,
//! `kernel_symbols/`): read under the one rule of [`profcodec_common::named`], only inside the
//! measurement folder, only regular files up to a size, and every refusal said in words.

use std::path::{Path, PathBuf};

use profcodec_common::named::{Allowed, Refusal};

/// The rule that allows a measurement folder's files, as a refusal names it.
const RULE: &str = "the measurement folder";

/// The files of `folder` that may be read.
pub(crate) fn allowed(folder: &Path) -> Allowed {
    let mut allowed = Allowed::new();
    allowed.allow(folder, RULE);
    allowed
}

/// `path` resolved when `allowed` lets it be read and it holds at most `limit` bytes (for the
/// readers that stream a file rather than take its bytes); else the refusal in words, the path
/// first.
pub(crate) fn checked(allowed: &Allowed, path: &Path, limit: u64) -> Result<PathBuf, String> {
    let refused = |r: Refusal| r.explain(path);
    let resolved = allowed.check(path).map_err(refused)?;
    let bytes = std::fs::metadata(&resolved)
        .map_err(|e| {
            refused(Refusal::Unreadable {
                resolved: resolved.clone(),
                error: e.to_string(),
            })
        })?
        .len();
    if bytes > limit {
        return Err(refused(Refusal::TooLarge {
            resolved,
            bytes,
            limit,
        }));
    }
    Ok(resolved)
}

/// The bytes of `path` when `allowed` lets it be read and it holds at most `limit` bytes; else
/// the refusal in words, the path first.
pub(crate) fn read(allowed: &Allowed, path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    allowed
        .read(path, limit)
        .map(|named| named.bytes)
        .map_err(|r| r.explain(path))
}
