//! Allocation bound under hostile counts. One test in its own binary, so nothing else
//! allocates while it measures.
//!
//! The only counts in a NYTProf file are string lengths (varints) and, in the Pynytprof layout,
//! chunk lengths (u32). Each is patched to `u32::MAX` in turn (in a plain file, and in a
//! compressed one by patching the inflated stream and deflating it again), and every decoder
//! runs on the result. Strings are borrowed, never copied by the record readers, and every
//! length is checked against the remaining input before use, so the growth stays under
//! `allocation_limit(len, 24)`: the factor covers the model (a 4-byte statement record can
//! become a ~40-byte map entry) and, for a compressed file, the inflated stream (about 5x the
//! compressed bytes for real profiles, doubled while its vector grows).
#![allow(clippy::unwrap_used)]

use std::alloc::System;
use std::path::Path;

use cap::Cap;
use profcodec_nytprof::{Profile, Reader, Record, parse, pynytprof, write};
use profcodec_testkit::hostile::allocation_limit;

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

const FACTOR: usize = 24;

fn run_decoders(data: &[u8]) {
    if let Ok(file) = parse(data) {
        for r in file.records() {
            if r.is_err() {
                break;
            }
        }
    }
    let _ = Profile::from_bytes_partial(data);
    if let Ok(mut reader) = Reader::new(data) {
        while let Some(r) = reader.next_record() {
            if r.is_err() {
                break;
            }
        }
    }
    let _ = Profile::from_reader(data);
    let _ = pynytprof::parse(data).map(|p| pynytprof::to_profile(&p));
}

fn check(data: &[u8], what: &str) {
    let before = ALLOC.total_allocated();
    run_decoders(data);
    let used = ALLOC.total_allocated() - before;
    // Five decoders ran; each must stay within the bound.
    let limit = 5 * allocation_limit(data.len(), FACTOR);
    assert!(
        used <= limit,
        "{what}: allocated {used} bytes for {} input bytes (limit {limit})",
        data.len()
    );
}

/// Offsets and widths of every string length varint in a plain record stream.
fn string_length_fields(data: &[u8]) -> Vec<(usize, usize)> {
    let file = parse(data).unwrap();
    let mut fields = Vec::new();
    let mut it = file.records();
    loop {
        let start = it.offset() as usize;
        let Some(Ok(r)) = it.next() else { break };
        let end = it.offset() as usize;
        let strings: Vec<&[u8]> = match r {
            Record::NewFid { name, .. }
            | Record::SubInfo { name, .. }
            | Record::SubReturn { name, .. } => {
                vec![name.bytes]
            }
            Record::SrcLine { text, .. } => vec![text.bytes],
            Record::SubCallers { caller, called, .. } => vec![caller.bytes, called.bytes],
            _ => continue,
        };
        // Find each string's tag byte: the string ends at a known place inside the record.
        let rec = &data[start..end];
        let mut search_from = 0;
        for s in strings {
            let pos = rec[search_from..]
                .windows(s.len().max(1))
                .position(|w| s.is_empty() || w == s)
                .map(|p| p + search_from)
                .unwrap_or(0);
            let len_bytes = profcodec_nytprof::raw::encode_u32(s.len() as u32).1;
            if pos > len_bytes {
                fields.push((start + pos - len_bytes, len_bytes));
            }
            search_from = pos + s.len();
        }
    }
    fields
}

#[test]
fn hostile_counts_stay_bounded() {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof");
    let hello = std::fs::read(testdata.join("hello.nytprof.out")).unwrap();
    let fields = string_length_fields(&hello);
    assert!(fields.len() > 50, "found {} string lengths", fields.len());
    let huge = [0xff, 0xff, 0xff, 0xff, 0xff];
    // Debug-mode budget: about 150 of the fields, spread over the file.
    let step = (fields.len() / 150).max(1);
    for (i, &(at, width)) in fields.iter().enumerate().step_by(step) {
        let mut patched = hello[..at].to_vec();
        patched.extend_from_slice(&huge);
        patched.extend_from_slice(&hello[at + width..]);
        check(&patched, &format!("string length #{i} at {at:#x}"));
        if i % (16 * step) == 0 {
            // The same damage inside a compressed stream.
            let file = parse(&patched).unwrap();
            let mut body = Vec::new();
            let mut it = file.records();
            while let Some(Ok(r)) = it.next() {
                write::encode_record(&mut body, &r);
            }
            // Deflate the damaged tail too (the part the record reader stopped at).
            let consumed = it.offset() as usize;
            body.extend_from_slice(&patched[consumed.min(patched.len())..]);
            let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(6));
            std::io::Write::write_all(&mut enc, &body).unwrap();
            let mut compressed = patched[..file.header().line.len()].to_vec();
            compressed.push(b'z');
            compressed.extend_from_slice(&enc.finish().unwrap());
            check(&compressed, &format!("compressed, string length #{i}"));
        }
    }
    // Pynytprof chunk lengths.
    let py = std::fs::read(testdata.join("pynytprof.out")).unwrap();
    let mut at = py.windows(2).position(|w| w == b"\n\n").unwrap() + 2;
    while at + 5 <= py.len() {
        let len = u32::from_le_bytes(py[at + 1..at + 5].try_into().unwrap()) as usize;
        let mut patched = py.clone();
        patched[at + 1..at + 5].copy_from_slice(&u32::MAX.to_le_bytes());
        check(&patched, &format!("pynytprof chunk at {at:#x}"));
        at += 5 + len;
    }
}
