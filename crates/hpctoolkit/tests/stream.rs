//! Streaming reads ([`FileHead`], [`TraceReader`]) give exactly what the whole-file views give,
//! on every corpus database with a trace and on damaged copies.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use profcodec_hpctoolkit::read::{FileHead, TraceReader};
use profcodec_hpctoolkit::{Error, FileKind, ProfileDb, TraceDb};

fn databases() -> Vec<PathBuf> {
    let mut dirs =
        vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d")];
    if let Some(root) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "hpctoolkit")
    {
        dirs.extend(
            profcodec_testkit::corpus::files_below(&root)
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n == "trace.db"))
                .filter_map(|p| p.parent().map(Path::to_path_buf)),
        );
    }
    dirs
}

/// Each line's profIndex and (timestamp, ctxId) elements.
type Lines = Vec<(u32, Vec<(u64, u32)>)>;

/// Every element of every line, streamed.
fn streamed(bytes: &[u8]) -> Result<Lines, Error> {
    let mut reader = TraceReader::new(Cursor::new(bytes))?;
    let mut out = Vec::new();
    for i in 0..reader.view().trace_count() {
        let mut line = reader.line(i)?;
        let mut elems = Vec::new();
        while let Some(chunk) = line.next_chunk()? {
            elems.extend(chunk.iter().map(|e| (e.timestamp(), e.ctx_id())));
        }
        out.push((line.prof_index(), elems));
    }
    Ok(out)
}

#[test]
fn streamed_lines_equal_the_whole_file_view() {
    let dbs = databases();
    assert!(dbs.len() > 1 || std::env::var_os("PROFCODEC_CORPUS").is_none());
    for dir in dbs {
        let bytes = std::fs::read(dir.join("trace.db")).expect("trace.db");
        let whole = TraceDb::parse(&bytes).expect("parses");
        let expected: Lines = whole
            .traces()
            .map(|t| {
                let t = t.expect("trace");
                let elems = t
                    .elems
                    .iter()
                    .map(|e| (e.timestamp(), e.ctx_id()))
                    .collect();
                (t.prof_index, elems)
            })
            .collect();
        assert_eq!(
            streamed(&bytes).expect("streams"),
            expected,
            "{}",
            dir.display()
        );
    }
}

#[test]
fn a_profile_head_gives_the_identifier_tuples_and_refuses_value_blocks() {
    for dir in databases() {
        let bytes = std::fs::read(dir.join("profile.db")).expect("profile.db");
        let whole = ProfileDb::parse(&bytes).expect("parses");
        let head = FileHead::read(FileKind::Profile, &mut Cursor::new(&bytes)).expect("head");
        assert!(head.data().len() < bytes.len(), "{}", dir.display());
        let view = ProfileDb::from_head(&head).expect("head parses");
        assert_eq!(view.profile_count(), whole.profile_count());
        let mut refused = false;
        for i in 0..whole.profile_count() {
            let p = whole.profile(i).expect("profile");
            let (flags, tuple) = view.info(i).expect("info");
            assert_eq!(flags, p.flags);
            assert_eq!(tuple.map(|t| t.ids), p.id_tuple.map(|t| t.ids));
            if !p.values.is_empty() {
                refused |= matches!(view.profile(i), Err(Error::NotRead { .. }));
            }
        }
        assert!(refused, "{}: no value block was refused", dir.display());
    }
}

#[test]
fn damaged_traces_fail_with_the_field_and_offset() {
    let bytes = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d/trace.db"),
    )
    .expect("demo trace.db");
    let whole = TraceDb::parse(&bytes).expect("parses");
    let (p_start, count) = whole.line_extent(0).expect("extent");
    assert!(count >= 2);

    // Two elements swapped: out of order, at the second one's offset.
    let mut swapped = bytes.clone();
    let a = p_start as usize;
    let (x, y) = (
        swapped[a..a + 12].to_vec(),
        swapped[a + 12..a + 24].to_vec(),
    );
    if x[..8] != y[..8] {
        swapped[a..a + 12].copy_from_slice(&y);
        swapped[a + 12..a + 24].copy_from_slice(&x);
        match streamed(&swapped) {
            Err(Error::Unsorted { offset, .. }) => assert_eq!(offset, p_start + 12),
            other => panic!("expected Unsorted, got {other:?}"),
        }
    }

    // Cut inside the elements, footer kept: the line's pointer leaves the file.
    let mut cut = bytes[..a + 6].to_vec();
    cut.extend_from_slice(&bytes[bytes.len() - 8..]);
    assert!(matches!(
        streamed(&cut),
        Err(Error::OutOfBounds { .. } | Error::BadFooter { .. } | Error::NotRead { .. })
    ));

    // Every prefix fails cleanly or reads a consistent head, and never panics.
    for n in (0..bytes.len()).step_by(7) {
        let _ = streamed(&bytes[..n]);
    }
}
