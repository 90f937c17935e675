//! The loaders from memory inflate the zlib stream on a second thread ahead of the parser (where
//! the machine has two cores); `Reader::new` inflates on the thread that parses. On a stream of
//! many pieces, with records across piece boundaries, records longer than a piece's headroom and
//! than a whole piece, both give the same records, the same model, and, cut or damaged anywhere,
//! the same error.
#![allow(clippy::unwrap_used)]

use profcodec_nytprof::read::Line;
use profcodec_nytprof::{Error, ModelOptions, Profile, Reader, Record, Str, Writer, parse};

/// A compressed profile inflating to about 1.5 MiB (a dozen 128 KiB pieces).
fn profile() -> Vec<u8> {
    let mut w = Writer::new(Vec::new()).compression_level(6);
    w.header(5, 0).unwrap();
    for line in [&b"ticks_per_sec=10000000"[..], b"nv_size=8"] {
        w.record(&Record::Attribute(Line { text: line })).unwrap();
    }
    w.record(&Record::StartDeflate).unwrap();
    w.record(&Record::PidStart {
        pid: 7,
        ppid: 1,
        time: 10.0,
    })
    .unwrap();
    for fid in 1..=3u32 {
        let name = format!("/tmp/ahead{fid}.pl");
        w.record(&Record::NewFid {
            fid,
            eval_fid: 0,
            eval_line: 0,
            flags: 0x12,
            size: 0,
            mtime: 0,
            name: Str {
                bytes: name.as_bytes(),
                utf8: false,
            },
        })
        .unwrap();
    }
    // A pseudo-random walk, so the stream does not deflate to nothing.
    let mut x = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let long_text = |n: usize, seed: u64| -> Vec<u8> {
        let mut t: Vec<u8> = (0..n)
            .map(|i| b'a' + ((seed as usize + i * 7) % 26) as u8)
            .collect();
        t.push(b'\n');
        t
    };
    let short = long_text(6 * 1024, 1);
    let whole_piece = long_text(300 * 1024, 2);
    for i in 0..200_000u32 {
        let r = next();
        if r % 5 == 0 {
            w.record(&Record::Discount).unwrap();
        }
        w.record(&Record::TimeLine {
            ticks: (r % 5000) as i32,
            fid: 1 + (r >> 8) as u32 % 3,
            line: 1 + (r >> 16) as u32 % 400,
        })
        .unwrap();
        // Source lines longer than a piece's headroom, and one longer than a whole piece.
        let text = match i {
            50_000 | 150_000 => Some(&short),
            100_000 => Some(&whole_piece),
            _ => None,
        };
        if let Some(text) = text {
            w.record(&Record::SrcLine {
                fid: 1,
                line: i,
                text: Str {
                    bytes: text,
                    utf8: false,
                },
            })
            .unwrap();
        }
    }
    w.record(&Record::PidEnd { pid: 7, time: 11.0 }).unwrap();
    w.finish().unwrap()
}

/// Every record of `reader` (as text), then its error.
fn streaming(data: &[u8]) -> (Vec<String>, Option<Error>) {
    let mut out = Vec::new();
    let Ok(mut reader) = Reader::new(data) else {
        return (out, None);
    };
    while let Some(r) = reader.next_record() {
        match r {
            Ok(r) => out.push(format!("{r:?}")),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

/// The same through `File::records`, whose zlib stream is inflated ahead.
fn in_memory(data: &[u8]) -> (Vec<String>, Option<Error>) {
    let mut out = Vec::new();
    let Ok(file) = parse(data) else {
        return (out, None);
    };
    for r in file.records() {
        match r {
            Ok(r) => out.push(format!("{r:?}")),
            Err(e) => return (out, Some(e)),
        }
    }
    (out, None)
}

#[test]
fn inflating_ahead_gives_what_inflating_inline_gives() {
    let data = profile();
    // The stream starts after the plain header records, as the profiler writes it.
    let file = parse(&data).unwrap();
    let last = file.plain_records().last();
    assert!(matches!(last, Some(Ok(Record::StartDeflate))));
    let (records, error) = in_memory(&data);
    assert_eq!(error, None);
    assert!(records.len() > 220_000, "{}", records.len());
    assert_eq!((records, error), streaming(&data));
    let ahead = Profile::from_bytes_with(&data, ModelOptions::raw()).unwrap();
    let inline = Profile::from_reader_with(&data[..], ModelOptions::raw()).unwrap();
    assert_eq!(ahead, inline);
    assert_eq!(ahead.totals.stmts_measured, 200_000);
    // Without the second thread (a merge's pool), the same model.
    let one_thread = ModelOptions::raw().second_thread(false);
    assert_eq!(Profile::from_bytes_with(&data, one_thread).unwrap(), ahead);
    // Source lines nobody keeps are skipped undecoded, and the rest of the model is the same.
    let lean = Profile::from_bytes_with(&data, one_thread.keep_source(false)).unwrap();
    assert!(!ahead.source.is_empty());
    assert!(lean.source.is_empty());
    let mut without_source = ahead.clone();
    without_source.source.clear();
    assert_eq!(lean, without_source);

    // Cut, or one byte changed, at points spread over the compressed stream.
    for k in 1..12 {
        let at = 40 + (data.len() - 40) * k / 12;
        let cut = &data[..at];
        let (a, b) = (in_memory(cut), streaming(cut));
        assert!(a.1.is_some(), "cut at {at}");
        assert_eq!(a, b, "cut at {at}");
        let mut damaged = data.clone();
        damaged[at] ^= 0x55;
        assert_eq!(
            in_memory(&damaged),
            streaming(&damaged),
            "byte {at} changed"
        );
        let (_, ahead_error) = Profile::from_bytes_partial(&damaged);
        let inline_error = Profile::from_reader(&damaged[..]).err();
        assert_eq!(ahead_error, inline_error, "byte {at} changed");
        let (_, one_thread_error) = Profile::from_bytes_partial_with(&damaged, one_thread);
        assert_eq!(one_thread_error, inline_error, "byte {at} changed");
    }
}
