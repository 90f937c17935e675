//! Hostile input: every truncation point and many bit flips of every corpus and
//! testdata file, in the container and in the logical stream, give `Ok` or a typed error; a
//! truncated file yields every record complete before the cut, then the error.
#![allow(clippy::unwrap_used)]

mod common;

use profcodec_statprofiler::{Event, OwnedRecord, Profile, Reader, TraceReader, text, validate};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

/// Every record the streaming reader yields, and whether it ended in an error.
fn stream(data: &[u8]) -> (Vec<OwnedRecord>, bool) {
    let Ok(mut r) = Reader::from_slice(data) else {
        return (Vec::new(), true);
    };
    let mut out = Vec::new();
    loop {
        match r.next_event() {
            Ok(Some(e)) => out.push(Event::to_owned(&e)),
            Ok(None) => return (out, false),
            Err(e) => {
                // Typed errors know where the damage is.
                assert!(e.offset().is_some());
                assert!(!e.to_string().is_empty());
                return (out, true);
            }
        }
    }
}

fn everything(data: &[u8]) {
    let _ = Profile::parse(data);
    let _ = validate(data);
    if let Ok(r) = Reader::new(data) {
        let mut t = TraceReader::new(r);
        while let Ok(Some(tr)) = t.next_trace() {
            for f in tr.frames() {
                std::hint::black_box(f);
            }
        }
    }
}

/// `truncation_points`, thinned to about 400 for files whose logical stream is large (each cut
/// decodes the whole stream again), always keeping the first 256 bytes and every packet boundary
/// with its neighbours.
fn cut_points(data: &[u8], boundaries: &[(usize, u64)]) -> Vec<usize> {
    let all = truncation_points(data.len());
    let stride = (all.len() / 400).max(1);
    let mut points: Vec<usize> = all
        .iter()
        .enumerate()
        .filter(|(i, p)| **p < 256 || i % stride == 0)
        .map(|(_, p)| *p)
        .collect();
    for (end, _) in boundaries {
        points.extend((end.saturating_sub(2)..end + 3).filter(|p| *p < data.len()));
    }
    points.sort_unstable();
    points.dedup();
    points
}

#[test]
fn truncation_keeps_every_complete_record() {
    for (path, data) in common::inputs() {
        let (full, failed) = stream(&data);
        assert!(!failed, "{}", path.display());
        let (logical, sizes) = common::logical(&data);
        let starts = common::record_starts(&data);
        let ends: Vec<u64> = starts
            .iter()
            .skip(1)
            .copied()
            .chain([logical.len() as u64])
            .collect();
        // File offsets of packet ends, with the logical bytes complete at each.
        let plain = data[14..].first().is_some_and(|b| *b > 0x91);
        let mut boundaries = vec![(14usize, 0u64)];
        if !plain {
            let mut at = 14usize;
            let mut done = 0u64;
            for (i, p) in profcodec_statprofiler::read::packets::Packets::new(&data)
                .unwrap()
                .enumerate()
            {
                let p = p.unwrap();
                at = p.offset as usize + 2 + p.block.len();
                done += sizes[i] as u64;
                boundaries.push((at, done));
            }
            assert_eq!(at, data.len());
        }
        for cut in cut_points(&data, &boundaries) {
            let prefix = &data[..cut];
            let _ = validate(prefix);
            let (got, _) = stream(prefix);
            assert!(
                got.len() <= full.len() && got[..] == full[..got.len()],
                "{} cut at {cut}: not a prefix",
                path.display()
            );
            let complete = if plain {
                (cut.saturating_sub(14)) as u64
            } else {
                boundaries
                    .iter()
                    .filter(|(end, _)| *end <= cut)
                    .map(|(_, done)| *done)
                    .max()
                    .unwrap_or(0)
            };
            let want = ends.iter().filter(|e| **e <= complete).count();
            let header_ok = Reader::from_slice(prefix).is_ok();
            if header_ok {
                assert!(
                    got.len() >= want,
                    "{} cut at {cut}: {} records, {want} complete",
                    path.display(),
                    got.len()
                );
            }
        }
    }
}

#[test]
fn bit_flips_give_ok_or_typed_errors() {
    for (_, data) in common::inputs() {
        // Each mutant decodes the whole stream three times: fewer flips for the large ones.
        let (logical, _) = common::logical(&data);
        let flips = if logical.len() > 64 << 10 { 120 } else { 400 };
        for mutant in bit_flips(&data, flips) {
            everything(&mutant);
        }
        // The logical stream (its first 24000 bytes), flipped and packed again, reaches the
        // record parser.
        let logical = &logical[..logical.len().min(24000)];
        let mut file = b"=statprofiler\x01".to_vec();
        let base = file.len();
        file.extend_from_slice(logical);
        for mutant in bit_flips(logical, 300) {
            let packed = common::packetize(&mutant);
            everything(&packed);
            file.truncate(base);
            file.extend_from_slice(&mutant);
            everything(&file);
        }
    }
}

#[test]
fn text_survives_flips_and_cuts() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/statprofiler");
    let data = std::fs::read(dir.join("features.txt")).unwrap();
    for cut in truncation_points(data.len()) {
        let _ = text::parse_text(&data[..cut]);
    }
    for m in bit_flips(&data, 2000) {
        let _ = text::parse_text(&m);
    }
}

#[test]
fn specific_damage_is_reported_where_it_is() {
    let (_, data) = common::inputs().into_iter().next().unwrap();
    // Wrong magic, wrong version.
    let mut bad = data.clone();
    bad[0] = b'-';
    assert!(matches!(
        Reader::from_slice(&bad).unwrap_err(),
        profcodec_statprofiler::Error::BadMagic { .. }
    ));
    bad = data.clone();
    bad[13] = 2;
    assert_eq!(Reader::from_slice(&bad).unwrap_err().offset(), Some(13));
    // A packet stating more than 32000 bytes.
    let mut big = b"=statprofiler\x01".to_vec();
    big.extend_from_slice(&[0, 5, 0x81, 0xfa, 0x01, 0, 0]);
    let err = Reader::from_slice(&big).unwrap_err();
    assert_eq!(err.offset(), Some(14), "{err}");
    // A stray frame: the real reader croaks.
    let stray = common::packetize(b"\xfe\x06\x06\x00\x04a.pl\x01");
    let err = validate(&stray).unwrap_err();
    assert_eq!(err.stream_offset(), Some(1), "{err}");
    assert!(Profile::parse(&stray).is_ok());
    // A varint of six bytes.
    let long = common::packetize(b"\xfe\x01\x80\x80\x80\x80\x80\x01");
    assert!(matches!(
        Profile::parse(&long).unwrap_err(),
        profcodec_statprofiler::Error::VarintTooLong { .. }
    ));
}

/// The counts of one pass of `check` equal those of the real reader's view ([`TraceReader`]),
/// and both stop on the same error, on every input, cut and flipped: `validate` proves what
/// reading the traces proves (up to the end of the stream, after which `check` stops).
#[test]
fn check_counts_what_the_trace_reader_reads() {
    use profcodec_statprofiler::{Summary, Warning, check};
    let compare = |data: &[u8]| {
        let Ok(mut reader) = Reader::from_slice(data) else {
            return;
        };
        let mut summary = Summary::default();
        let checked = check(&mut reader, &mut summary);
        if summary
            .warnings
            .iter()
            .any(|w| matches!(w, Warning::TrailingData(_)))
        {
            return;
        }
        let mut traces = TraceReader::new(Reader::from_slice(data).unwrap());
        let (mut n, mut frames, mut weight) = (0u64, 0u64, 0u64);
        let read = loop {
            match traces.next_trace() {
                Ok(Some(t)) => {
                    n += 1;
                    frames += t.frame_count() as u64;
                    weight += u64::from(t.weight);
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        assert_eq!(checked, read);
        assert_eq!(
            (summary.traces, summary.frames, summary.total_weight),
            (n, frames, weight)
        );
        if read.is_ok() {
            assert_eq!(summary.eval_sources, traces.source_code().len() as u64);
            assert_eq!(
                (summary.file_ended, summary.stream_ended),
                (traces.file_ended(), traces.stream_ended())
            );
        }
    };
    for (_, data) in common::inputs() {
        compare(&data);
        let (logical, _) = common::logical(&data);
        // Cut and flipped: the small inputs (each comparison decodes the whole input twice).
        if logical.len() > 16 << 10 {
            continue;
        }
        let mut plain = b"=statprofiler\x01".to_vec();
        plain.extend_from_slice(&logical);
        for cut in truncation_points(plain.len()) {
            compare(&plain[..cut]);
        }
        for flipped in bit_flips(&plain, 100) {
            compare(&flipped);
        }
    }
}
