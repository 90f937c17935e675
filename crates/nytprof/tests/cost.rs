//! Input that would cost far more than its size: a zlib bomb, a string bomb, the
//! line table's fid pattern, sibling evals, statements on undefined fids, Pynytprof call counts,
//! and trailing bytes. Each case is built here at a size where a quadratic pass or a whole
//! inflation would take seconds or gigabytes, and asserts what was allocated (the counting
//! allocator) and what was found, never a time.
//!
//! One test function runs the cases in turn, so nothing else allocates while one is measured.
#![allow(clippy::unwrap_used)]

use std::alloc::System;

use cap::Cap;
use flate2::{Compress, Compression, FlushCompress};
use profcodec_nytprof::raw::{put_u32, tag};
use profcodec_nytprof::write::encode_record;
use profcodec_nytprof::{
    Error, ModelOptions, Profile, Reader, Record, Str, Trailing, parse, pynytprof,
};

#[global_allocator]
static ALLOC: Cap<System> = Cap::new(System, usize::MAX);

/// Bytes allocated (in total, not net) while `f` runs.
fn allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = ALLOC.total_allocated();
    let out = f();
    (out, ALLOC.total_allocated() - before)
}

const MIB: usize = 1 << 20;

/// A plain header as the profiler writes it, up to (not including) `z`.
fn header() -> Vec<u8> {
    b"NYTProf 5 0\n#Perl profile database.\n:application=bomb.pl\n:nv_size=8\n:ticks_per_sec=10000000\n!compress=6\n".to_vec()
}

fn rec(out: &mut Vec<u8>, r: Record<'_>) {
    encode_record(out, &r);
}

/// A zlib stream (without its end) of `mib` MiB of zeros, made of one sync-flushed deflate
/// block of 1 MiB of zeros repeated: each copy decodes to zeros again, since the window it may
/// look back into holds only zeros.
fn zeros_stream(mib: usize, tail: &[u8]) -> Vec<u8> {
    let mut block = Vec::with_capacity(4096);
    let mut c = Compress::new(Compression::best(), false);
    let zeros = vec![0u8; MIB];
    c.compress_vec(&zeros, &mut block, FlushCompress::Sync)
        .unwrap();
    assert_eq!(c.total_in() as usize, MIB);
    let mut out = vec![0x78, 0xda];
    // The bytes that come first (the start of a record), as a stored block.
    if !tail.is_empty() {
        let n = tail.len() as u16;
        out.push(0);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(tail);
    }
    for _ in 0..mib {
        out.extend_from_slice(&block);
    }
    // A final empty fixed-Huffman block; the Adler-32 check is never reached.
    out.extend_from_slice(&[0x03, 0x00, 0, 0, 0, 1]);
    out
}

fn bomb(mib: usize, record_start: &[u8]) -> (Vec<u8>, u64) {
    let mut data = header();
    data.push(tag::START_DEFLATE);
    let z_end = data.len() as u64;
    data.extend_from_slice(&zeros_stream(mib, record_start));
    (data, z_end)
}

/// The 2-GiB-zeros bomb: a real header, `z`, then 2 GiB of zeros in 2 MB of zlib. Zeros are no
/// record tag, so every reader stops at the first inflated byte, having inflated one window.
fn zlib_bomb() {
    let (data, z_end) = bomb(2048, b"");
    assert!(data.len() < 4 * MIB, "{} bytes", data.len());
    let (result, bytes) = allocated(|| Profile::from_bytes(&data));
    assert_eq!(
        result.unwrap_err(),
        Error::UnknownTag {
            offset: z_end,
            tag: 0
        }
    );
    assert!(bytes < 4 * MIB, "the model load allocated {bytes} bytes");
    let (first, bytes) = allocated(|| {
        let file = parse(&data).unwrap();
        file.records().find_map(Result::err)
    });
    assert!(matches!(first, Some(Error::UnknownTag { tag: 0, .. })));
    assert!(bytes < 4 * MIB, "File::records allocated {bytes} bytes");
    let (first, bytes) = allocated(|| {
        let mut reader = Reader::new(&data[..]).unwrap();
        let mut err = None;
        while let Some(r) = reader.next_record() {
            if let Err(e) = r {
                err = Some((e, reader.input_offset()));
            }
        }
        err
    });
    let (e, input_offset) = first.unwrap();
    assert_eq!(e.offset(), Some(z_end));
    assert!(input_offset > z_end && input_offset < data.len() as u64);
    assert!(bytes < 4 * MIB, "Reader allocated {bytes} bytes");
}

/// A source line whose length claims 4 GiB, then zeros: valid string bytes, but one record
/// inflating at 1000 to 1. Refused past 1 MiB, before the rest is inflated.
fn string_bomb() {
    let mut start = vec![tag::SRC_LINE, 1, 1, tag::STR_BYTES];
    put_u32(&mut start, u32::MAX - 16);
    let (data, z_end) = bomb(2048, &start);
    let (result, bytes) = allocated(|| Profile::from_bytes(&data));
    match result.unwrap_err() {
        Error::InflationRatio {
            offset, inflated, ..
        } => {
            assert_eq!(offset, z_end);
            assert!(inflated < 8 * MIB as u64, "{inflated}");
        }
        e => panic!("{e}"),
    }
    assert!(bytes < 32 * MIB, "the model load allocated {bytes} bytes");
    let (first, bytes) = allocated(|| {
        let file = parse(&data).unwrap();
        file.records().find_map(Result::err)
    });
    assert!(
        matches!(first, Some(Error::InflationRatio { .. })),
        "{first:?}"
    );
    assert!(bytes < 32 * MIB, "File::records allocated {bytes} bytes");
}

fn new_fid(out: &mut Vec<u8>, fid: u32, eval: Option<(u32, u32)>) {
    let (eval_fid, eval_line) = eval.unwrap_or((0, 0));
    rec(
        out,
        Record::NewFid {
            fid,
            eval_fid,
            eval_line,
            flags: 0,
            size: 0,
            mtime: 0,
            name: Str::bytes(b"f"),
        },
    );
}

fn time_line(out: &mut Vec<u8>, fid: u32, line: u32) {
    rec(
        out,
        Record::TimeLine {
            ticks: 1,
            fid,
            line,
        },
    );
}

/// Statements on 100,000 fids above 65535 (kept in the map), then on 20,000 new small fids
/// (dense vectors): each small fid moved the map's entries of its own fid only. The scan of the
/// whole map per new fid took 9.9 s at 2.4 MB.
fn line_table() {
    let mut data = header();
    for i in 0..100_000u32 {
        new_fid(&mut data, 70_000 + i, None);
        time_line(&mut data, 70_000 + i, 1);
    }
    for fid in 1..=20_000u32 {
        new_fid(&mut data, fid, None);
        time_line(&mut data, fid, 3);
    }
    let (p, bytes) = allocated(|| Profile::from_bytes_with(&data, ModelOptions::raw()).unwrap());
    assert_eq!(p.line_times.len(), 120_000);
    assert_eq!(p.totals.stmts_measured, 120_000);
    let per_byte = bytes / data.len();
    assert!(
        per_byte < 200,
        "{bytes} bytes for {} input bytes",
        data.len()
    );
}

/// 100,000 evals of fid 1, two per line, no source: 50,000 pairs collapse, and the parent's
/// list of evals is filtered once (it was filtered per pair: 6.6 s at 1.07 MB).
fn sibling_evals() {
    let mut data = header();
    new_fid(&mut data, 1, None);
    for i in 0..100_000u32 {
        new_fid(&mut data, 2 + i, Some((1, 1 + i / 2)));
    }
    let (p, bytes) = allocated(|| Profile::from_bytes(&data).unwrap());
    assert_eq!(p.files.len(), 1 + 50_000);
    assert_eq!(p.files[&2].merged_fids, [3]);
    let per_byte = bytes / data.len();
    assert!(
        per_byte < 200,
        "{bytes} bytes for {} input bytes",
        data.len()
    );
}

/// 1.6 M statements on distinct fids that no NEW_FID defined: the first is an error (they took
/// a table each: 510 MB for 9.6 MB), and what came before stays available.
fn undefined_fids() {
    let mut data = header();
    new_fid(&mut data, 1, None);
    time_line(&mut data, 1, 1);
    let first = data.len() as u64;
    for fid in 0..1_600_000u32 {
        time_line(&mut data, 100_000 + fid, 1);
    }
    let ((p, e), bytes) = allocated(|| Profile::from_bytes_partial(&data));
    assert_eq!(
        e,
        Some(Error::UndefinedFid {
            offset: first,
            what: "TIME_LINE",
            fid: 100_000
        })
    );
    assert_eq!(p.totals.stmts_measured, 1);
    assert!(bytes < MIB, "{bytes} bytes");
}

/// A Pynytprof file of 4 lines counting 2^24 statements each (268 MB of `+` records from 185
/// bytes) is refused before anything is built.
fn pynytprof_counts() {
    let mut data = b"NYTProf 5 0\n:ticks_per_sec=10000000\n\n".to_vec();
    let mut s = Vec::new();
    for line in 1..=4u32 {
        for v in [0u32, line, 1 << 24] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        s.extend_from_slice(&[0; 16]);
    }
    data.push(b'S');
    data.extend_from_slice(&(s.len() as u32).to_le_bytes());
    data.extend_from_slice(&s);
    data.extend_from_slice(b"E\0\0\0\0");
    let py = pynytprof::parse(&data).unwrap();
    let (result, bytes) = allocated(|| {
        let mut out = Vec::new();
        let r = pynytprof::convert(&py, data.len() as u64, &mut out);
        (r, out.len())
    });
    let (r, written) = result;
    assert!(matches!(r, Err(Error::OutputTooLarge { estimate, .. }) if estimate == 4 << 26));
    assert_eq!(written, 0);
    assert!(bytes < 64 * 1024, "{bytes} bytes");
}

/// Bytes after the profiler's trailer text are reported with their offset and size.
fn trailing_bytes() {
    let mut w = profcodec_nytprof::Writer::new(Vec::new());
    w.header(5, 0).unwrap();
    w.record(&Record::Attribute(profcodec_nytprof::Line {
        text: b"ticks_per_sec=10000000",
    }))
    .unwrap();
    w.record(&Record::StartDeflate).unwrap();
    w.record(&Record::Discount).unwrap();
    let mut data = w.finish().unwrap();
    let (_, report, e) = Profile::from_bytes_report(&data, ModelOptions::default());
    assert!(e.is_none());
    assert!(report.compressed);
    assert_eq!(
        report.trailing, None,
        "the profiler's trailer is not trailing data"
    );
    let end = data.len() as u64;
    data.extend_from_slice(&[0; 1000]);
    let (_, report, e) = Profile::from_bytes_report(&data, ModelOptions::default());
    assert!(e.is_none());
    assert_eq!(
        report.trailing,
        Some(Trailing {
            offset: end,
            size: 1000
        })
    );
}

#[test]
fn hostile_costs_stay_bounded() {
    zlib_bomb();
    string_bomb();
    line_table();
    sibling_evals();
    undefined_fids();
    pynytprof_counts();
    trailing_bytes();
    call_path_depths();
    call_path_merges();
}

/// `<` records claiming depths in the billions: `nytprofcalls` would pad its stack with that
/// many levels; the call paths store only the levels that hold something.
fn call_path_depths() {
    let mut data = header();
    data.truncate(data.len() - b"!compress=6\n".len());
    let n = 200_000u32;
    for i in 0..n {
        let name = format!("main::s{}", i % 1000);
        rec(
            &mut data,
            Record::SubReturn {
                depth: u32::MAX - (i % 7) * 100_000_000,
                incl_ticks: 1.0,
                excl_ticks: 1.0,
                name: Str::bytes(name.as_bytes()),
            },
        );
    }
    let ((_, calls, _, e), bytes) =
        allocated(|| Profile::from_bytes_with_call_paths(&data, ModelOptions::default()));
    assert!(e.is_none(), "{e:?}");
    assert_eq!(calls.returns(), u64::from(n));
    let mut excl = 0.0;
    calls.for_each_path(|_, v| excl += v.excl_ticks);
    assert_eq!(excl, f64::from(n));
    assert!(
        bytes < 16 * data.len(),
        "{bytes} bytes allocated for {} bytes of records",
        data.len()
    );
}

/// A call tree that makes a naive merge quadratic: at each of `depth` levels, a call whose
/// callees are the same chain of `w` calls as an earlier sibling's, with `width` distinct leaf
/// callees at the bottom. Merging the bottom node moves its `width` callees at every level
/// unless the smaller side moves.
fn call_path_merges() {
    let (depth, width) = (400usize, 100_000usize);
    // Post-order returns of: A(1); A(l) = w { chain(depth - l), A(l + 1) }; A(depth) = w {
    // x_1 .. x_width }; chain(m) = m nested w calls.
    let mut returns: Vec<(u32, String)> = Vec::new();
    fn chain(out: &mut Vec<(u32, String)>, at: usize, m: usize) {
        for d in (at..at + m).rev() {
            out.push((d as u32, "w".into()));
        }
    }
    fn level(out: &mut Vec<(u32, String)>, l: usize, depth: usize, width: usize) {
        if l == depth {
            for i in 0..width {
                out.push((l as u32 + 1, format!("x{i}")));
            }
        } else {
            chain(out, l + 1, depth - l);
            level(out, l + 1, depth, width);
        }
        out.push((l as u32, "w".into()));
    }
    level(&mut returns, 1, depth, width);
    let mut calls = profcodec_nytprof::CallPaths::new();
    for (d, name) in &returns {
        calls.add_return(*d, 1.0, 1.0, name);
    }
    calls.finish();
    let r = returns.len() as u64;
    assert_eq!(calls.returns(), r);
    assert!(
        calls.merge_steps() <= 2 * r,
        "{} merge steps for {r} returns",
        calls.merge_steps()
    );
    let mut total = 0.0;
    calls.for_each_path(|_, v| total += v.excl_ticks);
    assert_eq!(total, r as f64);
}
