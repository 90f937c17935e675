//! Allocation bound: hostile lengths patched into every length field of valid files
//! keep the decoders' total allocation under `hostile::allocation_limit(input_len, FACTOR)`.
//! One test in its own binary, so nothing else allocates concurrently.
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_statprofiler::raw::{decode_varint, tag};
use profcodec_statprofiler::{Reader, TraceReader, validate};
use profcodec_testkit::hostile::allocation_limit;

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The streaming decoders keep a window of the logical stream: the unread rest of a packet plus
/// what one record needs (a hostile length makes the reader decompress until the file ends, never
/// allocate the stated length). Snappy expands at most about 21 times (a 3-byte copy element
/// yields 64 bytes), and the window's `Vec` may double once more: 64 times the input bounds it.
const FACTOR: usize = 64;

const HUGE: [u8; 5] = [0x8f, 0xff, 0xff, 0xff, 0x7f];

/// `stream` with the varint at `at` replaced by u32::MAX.
fn patched(stream: &[u8], at: usize) -> Option<Vec<u8>> {
    let (_, n) = decode_varint(&stream[at..])?;
    let mut out = stream[..at].to_vec();
    out.extend_from_slice(&HUGE);
    out.extend_from_slice(&stream[at + n..]);
    Some(out)
}

fn decode_all(data: &[u8]) {
    let _ = validate(data);
    if let Ok(mut r) = Reader::from_slice(data) {
        while let Ok(Some(_)) = r.next_event() {}
    }
    if let Ok(r) = Reader::new(data) {
        let mut t = TraceReader::new(r);
        while let Ok(Some(_)) = t.next_trace() {}
    }
}

#[test]
fn hostile_lengths_stay_within_the_allocation_limit() {
    let mut worst = 0usize;
    let mut cases = 0;
    for (path, data) in common::inputs() {
        let (logical, _) = common::logical(&data);
        let starts = common::record_starts(&data);
        let mut mutants = Vec::new();
        // Every snappy block's own length, set to u32::MAX (little-endian varint).
        let mut at = 14;
        while at + 2 <= data.len() && data[14] <= 0x91 {
            let n = u16::from_be_bytes([data[at], data[at + 1]]) as usize;
            let block = &data[at + 2..at + 2 + n];
            let mut len_end = 0;
            while len_end < block.len() && block[len_end] & 0x80 != 0 {
                len_end += 1;
            }
            let mut m = data[..at].to_vec();
            let mut nb = vec![0xff, 0xff, 0xff, 0xff, 0x0f];
            nb.extend_from_slice(&block[(len_end + 1).min(block.len())..]);
            m.extend_from_slice(&(nb.len() as u16).to_be_bytes());
            m.extend_from_slice(&nb);
            m.extend_from_slice(&data[at + 2 + n..]);
            mutants.push(m);
            at += 2 + n;
        }
        // Every record's length field, and the first string length of each record.
        // (About 120 records per file, spread over it: each mutant decodes the whole file.)
        let step = (starts.len() / 120).max(1);
        for &s in starts.iter().step_by(step) {
            let s = s as usize;
            let t = logical[s];
            let Some((_, len_n)) = decode_varint(&logical[s + 1..]) else {
                continue;
            };
            mutants.extend(patched(&logical, s + 1).map(|m| common::packetize(&m)));
            let first_string = match t {
                tag::SUB_FRAME
                | tag::XSUB_FRAME
                | tag::EVAL_FRAME
                | tag::MAIN_FRAME
                | tag::EVAL_SEQ
                | tag::SECTION_START
                | tag::SECTION_END
                | tag::CUSTOM_META => Some(s + 1 + len_n + 1),
                tag::SAMPLE_START => {
                    decode_varint(&logical[s + 1 + len_n..]).map(|(_, w)| s + 1 + len_n + w + 1)
                }
                _ => None,
            };
            if let Some(at) = first_string {
                mutants.extend(patched(&logical, at).map(|m| common::packetize(&m)));
            }
        }
        for m in &mutants {
            let before = A.total_allocated();
            decode_all(m);
            let used = A.total_allocated() - before;
            let limit = allocation_limit(m.len(), FACTOR);
            assert!(
                used <= limit,
                "{}: {used} bytes allocated for a {} byte input (limit {limit})",
                path.display(),
                m.len()
            );
            worst = worst.max(used);
            cases += 1;
        }
    }
    println!("{cases} hostile inputs, at most {worst} bytes allocated by one");
}
