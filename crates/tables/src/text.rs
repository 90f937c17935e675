//! Values spelled out as the tables show them.

use std::fmt::Write;

/// An identifier tuple (the ids of a profile's node, rank, thread, GPU stream... in an HPC
/// profiler's output) as text, `RANK 0 / THREAD 1`: each id's kind by the name the file gives
/// it (`KIND<k>` for a kind it names not) and its logical id.
pub fn id_tuple_text<N, K, L>(ids: impl IntoIterator<Item = (Option<N>, K, L)>) -> String
where
    N: std::fmt::Display,
    K: std::fmt::Display,
    L: std::fmt::Display,
{
    let mut text = String::new();
    for (name, kind, logical) in ids {
        if !text.is_empty() {
            text.push_str(" / ");
        }
        // Writing into a String does not fail.
        let _ = match name {
            Some(name) => write!(text, "{name} {logical}"),
            None => write!(text, "KIND{kind} {logical}"),
        };
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_named_or_numbered() {
        let ids = [(Some("RANK"), 2, 0), (None, 9, 1)];
        assert_eq!(id_tuple_text(ids), "RANK 0 / KIND9 1");
        assert_eq!(id_tuple_text(Vec::<(Option<&str>, u8, u8)>::new()), "");
    }
}
