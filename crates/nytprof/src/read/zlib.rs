//! What both readers of the zlib stream after `z` know of it ([`super::Reader`], which inflates
//! inline, and [`super::ahead`], which inflates on a second thread): the words for zlib's
//! errors, and how the bytes after the stream are kept and told apart from the profiler's
//! trailer text.

/// How many bytes after the zlib stream are kept to recognise the profiler's trailer text.
pub(crate) const TRAILER_KEEP: usize = 4096;

/// The words for what zlib reported.
pub(crate) fn zlib_problem(e: &flate2::DecompressError) -> &'static str {
    match e.message() {
        Some("incorrect header check") => "an incorrect header check",
        Some("invalid stored block lengths") => "invalid stored block lengths",
        Some("incorrect data check") => "an incorrect data check",
        _ => "corrupt deflate data",
    }
}

/// How many leading bytes of `after` are the profiler's trailer text: whole lines starting
/// with `#` (FileHandle.xs writes `#\n# Compressed N bytes to M, ratio …\n`).
pub(crate) fn trailer_text_len(after: &[u8]) -> usize {
    let mut at = 0;
    while after.get(at) == Some(&b'#') {
        match after[at..].iter().position(|&b| b == b'\n') {
            Some(nl) => at += nl + 1,
            None => break,
        }
    }
    at
}
