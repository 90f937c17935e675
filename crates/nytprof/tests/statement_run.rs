//! The loader reads the runs of `+`, `-` and `<` records of an input in memory in one loop, with
//! the seconds of small tick counts from a table and its totals in locals; the streaming reader
//! takes them one record at a time through the general path. Both must build the same model,
//! bit for bit: tick counts on both sides of the table's end, negative ones (a tick count past
//! `i32::MAX`), discounts, a tick rate changed halfway, and records cut by the input's end.
#![allow(clippy::unwrap_used)]

use profcodec_nytprof::write::encode_record;
use profcodec_nytprof::{Error, Profile, Record, Str};

fn rec(out: &mut Vec<u8>, r: Record<'_>) {
    encode_record(out, &r);
}

fn new_fid(out: &mut Vec<u8>, fid: u32) {
    rec(
        out,
        Record::NewFid {
            fid,
            eval_fid: 0,
            eval_line: 0,
            flags: 0,
            size: 0,
            mtime: 0,
            name: Str::bytes(b"t.pl"),
        },
    );
}

fn statements(out: &mut Vec<u8>, x: &mut u64, n: usize) {
    for _ in 0..n {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        let ticks = match *x % 7 {
            0 => 2047,
            1 => 2048,
            2 => (*x >> 20) as i32,
            3 => -((*x % 5000) as i32),
            _ => (*x % 300) as i32,
        };
        if x.is_multiple_of(5) {
            rec(out, Record::Discount);
        }
        if x.is_multiple_of(13) {
            rec(
                out,
                Record::SubReturn {
                    depth: (*x % 4) as u32 + 1,
                    incl_ticks: (*x % 1000) as f64,
                    excl_ticks: (*x % 100) as f64,
                    name: Str::bytes(b"main::f"),
                },
            );
        }
        rec(
            out,
            Record::TimeLine {
                ticks,
                fid: 1 + (*x % 3) as u32,
                line: (*x % 70) as u32,
            },
        );
    }
}

fn profile() -> Vec<u8> {
    let mut data = b"NYTProf 5 0\n:nv_size=8\n:ticks_per_sec=10000000\n".to_vec();
    for fid in 1..=3 {
        new_fid(&mut data, fid);
    }
    let mut x = 0x2545_f491_4f6c_dd1du64;
    statements(&mut data, &mut x, 20_000);
    // A new tick rate: the table of seconds is made again.
    data.extend_from_slice(b":ticks_per_sec=3000\n");
    statements(&mut data, &mut x, 20_000);
    data
}

#[test]
fn the_loop_over_statement_runs_sums_as_the_general_path() {
    let data = profile();
    let in_memory = Profile::from_bytes(&data).unwrap();
    let streamed = Profile::from_reader(&data[..]).unwrap();
    assert_eq!(in_memory.totals, streamed.totals);
    assert_eq!(in_memory.line_times, streamed.line_times);
    assert_eq!(in_memory, streamed);
    assert!(in_memory.totals.stmts_discounted > 0);
    // Every prefix ends the same way (records cut anywhere in the last few, where the loop
    // leaves them to the general decoder).
    for cut in (data.len() - 64..data.len()).step_by(3) {
        let (a, ea) = Profile::from_bytes_partial(&data[..cut]);
        let b = Profile::from_reader(&data[..cut]);
        match (ea, b) {
            (None, Ok(b)) => assert_eq!(a, b, "cut at {cut}"),
            (Some(ea), Err(eb)) => assert_eq!(ea, eb, "cut at {cut}"),
            (ea, b) => panic!("cut at {cut}: {ea:?} against {:?}", b.err()),
        }
    }
}

#[test]
fn an_undefined_fid_in_a_run_is_an_error_at_its_record() {
    let mut data = b"NYTProf 5 0\n:nv_size=8\n:ticks_per_sec=10000000\n".to_vec();
    for fid in 1..=3 {
        new_fid(&mut data, fid);
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    statements(&mut data, &mut x, 50);
    let at = data.len() as u64;
    rec(
        &mut data,
        Record::TimeLine {
            ticks: 3,
            fid: 9,
            line: 1,
        },
    );
    statements(&mut data, &mut x, 50);
    let (p, e) = Profile::from_bytes_partial(&data);
    let expected = Error::UndefinedFid {
        offset: at,
        what: "TIME_LINE",
        fid: 9,
    };
    assert_eq!(e, Some(expected));
    assert_eq!(Profile::from_reader(&data[..]).err(), Some(expected));
    // What came before is kept.
    let (before, _) = Profile::from_bytes_partial(&data[..at as usize]);
    assert_eq!(p.totals, before.totals);
}

/// Source lines that are not kept are skipped without being decoded, but only those of a file
/// the profile defined: a line of an undefined fid is the same error whether the source is kept
/// or not, in memory and streaming.
#[test]
fn a_source_line_of_an_undefined_fid_is_an_error_kept_or_not() {
    let mut data = b"NYTProf 5 0\n:nv_size=8\n:ticks_per_sec=10000000\n".to_vec();
    new_fid(&mut data, 1);
    for line in 1..=40 {
        let text = format!("my $x{line} = {line};\n");
        let text = Str::bytes(text.as_bytes());
        rec(&mut data, Record::SrcLine { fid: 1, line, text });
    }
    let at = data.len() as u64;
    let text = Str::bytes(b"print 1;\n");
    rec(
        &mut data,
        Record::SrcLine {
            fid: 7,
            line: 1,
            text,
        },
    );
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    statements(&mut data, &mut x, 20);
    let expected = Error::UndefinedFid {
        offset: at,
        what: "SRC_LINE",
        fid: 7,
    };
    for keep in [true, false] {
        let options = profcodec_nytprof::ModelOptions::new().keep_source(keep);
        let (p, e) = Profile::from_bytes_partial_with(&data, options);
        assert_eq!(e, Some(expected), "keep_source {keep}");
        assert_eq!(
            p.source.get(&1).map(|lines| lines.len()),
            keep.then_some(40)
        );
        let streamed = Profile::from_reader_with(&data[..], options).err();
        assert_eq!(streamed, Some(expected), "keep_source {keep}");
    }
}
