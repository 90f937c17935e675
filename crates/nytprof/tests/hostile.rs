//! Hostile input: every truncation point and many single-bit flips of every corpus and
//! testdata file give `Ok` or a typed error, never a panic; a cut file yields every complete
//! record before the cut, then the error.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use profcodec_nytprof::{Error, ModelOptions, Profile, Reader, parse, pynytprof};
use profcodec_testkit::hostile::{bit_flips, truncation_points};

fn inputs() -> Vec<PathBuf> {
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/nytprof");
    let mut files = vec![
        testdata.join("hello.nytprof.out"),
        testdata.join("evals_small.nytprof.out"),
        testdata.join("pynytprof.out"),
    ];
    if let Some(dir) =
        profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
    {
        files.extend(
            profcodec_testkit::corpus::files_below(&dir)
                .into_iter()
                .filter(|p| p.to_string_lossy().ends_with(".nytprof.out")),
        );
    }
    files
}

/// Runs every decoder over `data`; returns how many records the slice reader yielded.
fn decode_all(data: &[u8], deep: bool) -> (usize, Option<Error>) {
    let mut n = 0;
    let mut err = None;
    if let Ok(file) = parse(data) {
        for r in file.records() {
            match r {
                Ok(_) => n += 1,
                Err(e) => {
                    let _ = e.to_string();
                    let _ = e.offset();
                    err = Some(e);
                }
            }
        }
    }
    if deep {
        // Evals collapsed (the default), then the dump, which reads the collapsed views.
        let (p, e) = Profile::from_bytes_partial(data);
        let _ = p.dump_profile_data();
        if let Some(e) = e {
            let _ = e.to_string();
        }
        // The slice reader's zlib stream is inflated on a second thread ahead of the parsing
        // (where there are two cores); the streaming one inflates as it parses: the same records,
        // then the same error.
        if let Ok(mut reader) = Reader::new(data) {
            let mut m = 0;
            let mut streaming_err = None;
            while let Some(r) = reader.next_record() {
                match r {
                    Ok(_) => m += 1,
                    Err(e) => streaming_err = Some(e),
                }
            }
            assert_eq!(m, n, "the streaming reader and the slice reader agree");
            assert_eq!(
                streaming_err, err,
                "the two readers stop at the same damage"
            );
        }
        let _ = pynytprof::parse(data).map(|p| pynytprof::to_profile(&p));
        // The call paths of the `<` records, built in the same pass, and what was read before
        // any damage converted into the profile model.
        let (p, calls, _, _) = Profile::from_bytes_with_call_paths(data, ModelOptions::default());
        let mut returns = 0;
        calls.for_each_path(|_, v| returns += v.returns);
        assert_eq!(returns, calls.returns(), "every return is on one path");
        #[cfg(feature = "profile")]
        p.to_profile(Some(&calls)).unwrap();
        #[cfg(not(feature = "profile"))]
        drop(p);
    }
    (n, err)
}

#[test]
fn truncation_keeps_complete_records() {
    for path in inputs() {
        let data = std::fs::read(&path).unwrap();
        // Record end offsets of the plain (uncompressed) part.
        let file = parse(&data).ok();
        let mut ends = Vec::new();
        if let Some(file) = &file {
            let mut it = file.records();
            while let Some(Ok(_)) = it.next() {
                if it.is_compressed() {
                    break;
                }
                ends.push(it.offset() as usize);
            }
        }
        // Debug-mode budget: a dense sample for the larger corpus files (every point of the first
        // 256 and last 64 bytes, every 8th of the shared sample elsewhere).
        let len = data.len();
        let points: Vec<usize> = truncation_points(len)
            .into_iter()
            .enumerate()
            .filter(|&(i, cut)| len <= 16384 || cut < 256 || cut + 64 >= len || i % 8 == 0)
            .map(|(_, cut)| cut)
            .collect();
        for (i, &cut) in points.iter().enumerate() {
            let (n, err) = decode_all(&data[..cut], i % 16 == 0);
            if file.is_some() && cut >= ends.first().copied().unwrap_or(usize::MAX) {
                let complete = ends.iter().filter(|&&e| e <= cut).count();
                if ends.last().is_some_and(|&last| cut <= last) {
                    // Cut inside the plain part: every record before the cut, then an error
                    // unless the cut falls on a record boundary.
                    assert_eq!(n, complete, "{} cut at {cut}", path.display());
                    assert_eq!(
                        err.is_some(),
                        !ends.contains(&cut),
                        "{} cut at {cut}",
                        path.display()
                    );
                }
            }
        }
    }
}

#[test]
fn bit_flips_never_panic() {
    for path in inputs() {
        let data = std::fs::read(&path).unwrap();
        let count = if data.len() > 16384 { 60 } else { 300 };
        for mutant in bit_flips(&data, count) {
            decode_all(&mutant, true);
        }
    }
}

#[test]
fn rejections_are_typed() {
    let base = b"NYTProf 5 0\n:ticks_per_sec=10000000\n:nv_size=8\n".to_vec();
    let with = |tail: &[u8]| {
        let mut v = base.clone();
        v.extend_from_slice(tail);
        v
    };
    assert!(matches!(
        parse(b"NYTProf x y\n"),
        Err(Error::BadHeader { .. })
    ));
    assert!(matches!(
        parse(b"NYTProf 6 0\n"),
        Err(Error::UnsupportedVersion { major: 6, .. })
    ));
    assert!(parse(b"NYTProf 5 1\r\n").is_ok(), "minor > 0 and CRLF load");
    let first_err = |d: &[u8]| parse(d).unwrap().records().find_map(Result::err);
    assert!(matches!(
        first_err(b"NYTProf 5 0\n:nv_size=4\n"),
        Some(Error::UnsupportedNvSize { found: 4, .. })
    ));
    assert!(matches!(
        first_err(&with(b"X")),
        Some(Error::UnknownTag { tag: b'X', .. })
    ));
    assert!(matches!(
        first_err(&with(b"@\x01\0\0\0\0\0X\x01a")),
        Some(Error::BadStringTag { tag: b'X', .. })
    ));
    assert!(matches!(
        first_err(&with(b"P\x01\x01\0\0")),
        Some(Error::Truncated(_))
    ));
    assert!(matches!(
        first_err(&with(b"z\x01\x02\x03")),
        Some(Error::Inflate { .. })
    ));
    let mut gz = with(b"z");
    gz.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
    assert!(matches!(first_err(&gz), Some(Error::Inflate { .. })));
    // No tick rate: Data.pm dies dividing by it.
    assert!(matches!(
        Profile::from_bytes(b"NYTProf 5 0\n"),
        Err(Error::MissingTicksPerSec { offset: 12 })
    ));
    // A malformed attribute line is skipped, as the real reader does.
    assert!(Profile::from_bytes(&with(b":novalue\n")).is_ok());
    // A missing `p` loads, as incomplete.
    let p = Profile::from_bytes(&with(b"P\x01\x01\0\0\0\0\0\0\0\0")).unwrap();
    assert!(!p.complete());
    // `s` for an undefined fid (SIGSEGV in the real reader) and a `c` likewise.
    assert!(matches!(
        Profile::from_bytes(&with(b"s\x07'\x03m::f\x01\x02")),
        Err(Error::UndefinedFid {
            fid: 7,
            what: "SUB_INFO",
            ..
        })
    ));
    assert!(matches!(
        Profile::from_bytes(&with(
            b"c\x07\x01'\x00\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x00'\x01f"
        )),
        Err(Error::UndefinedFid { fid: 7, .. })
    ));
    // The script at fid 0.
    assert!(matches!(
        Profile::from_bytes(&with(b"@\0\0\0\0\0\0'\x01a")),
        Err(Error::ReservedFid { .. })
    ));
    // What was read before the damage is kept.
    let (p, e) = Profile::from_bytes_partial(&with(b"@\x01\0\0\0\0\0'\x01aX"));
    assert!(e.is_some() && p.files.contains_key(&1));
}

#[test]
fn fuzz_regressions_decode() {
    // Inputs the fuzzers once crashed or hung on (fuzz/regressions), under overflow checks.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    for target in ["nytprof", "nytprof_pynytprof"] {
        for path in profcodec_testkit::corpus::files_below(&root.join(target)) {
            let data = std::fs::read(&path).unwrap();
            decode_all(&data, true);
        }
    }
}

#[test]
fn writer_refuses_attributes_the_reader_would_not_see() {
    // Found by the `nytprof_model` fuzz target (fuzz/regressions/nytprof_model/): the writer cuts
    // a text line at a newline, so a `ticks_per_sec` of "\n9" reached the reader empty, and a
    // key holding `=` replaces another key. The writer's check looks at what the reader will see.
    let mut p = Profile::default();
    p.attributes.insert("ticks_per_sec".into(), "\n9".into());
    assert!(matches!(
        p.check_writable(),
        Err(Error::MissingTicksPerSec { .. })
    ));
    p.attributes.insert("ticks_per_sec".into(), "100".into());
    p.check_writable().unwrap();
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    assert_eq!(Profile::from_bytes(&out).unwrap().ticks_per_sec(), 100);
    p.attributes.insert("ticks_per_sec=0".into(), String::new());
    assert!(matches!(
        p.check_writable(),
        Err(Error::MissingTicksPerSec { .. })
    ));
}

/// A profile written with the crate's own record encoder: the tick rate, a script at fid 1,
/// then the files `fids` define, each `(fid, eval_fid, name)`; with where each NEW_FID record
/// starts.
fn profile_of_files(fids: &[(u32, u32, &str)]) -> (Vec<u8>, Vec<u64>) {
    use profcodec_nytprof::write::encode_record;
    use profcodec_nytprof::{Line, Record, Str};
    let mut out = b"NYTProf 5 0\n".to_vec();
    for text in [&b"ticks_per_sec=10000000"[..], b"nv_size=8"] {
        encode_record(&mut out, &Record::Attribute(Line { text }));
    }
    let mut offsets = Vec::new();
    for &(fid, eval_fid, name) in [(1, 0, "/app/a.pl")].iter().chain(fids) {
        offsets.push(out.len() as u64);
        let record = Record::NewFid {
            fid,
            eval_fid,
            eval_line: u32::from(eval_fid != 0),
            flags: 0,
            size: 0,
            mtime: 0,
            name: Str::bytes(name.as_bytes()),
        };
        encode_record(&mut out, &record);
    }
    (out, offsets)
}

/// A string eval that names as the file it ran in a fid the profile never defines: NYTProf.xs
/// warns "Eval '(eval 1)[/app/a.pl:1]' (fid 2, flags:) has unknown invoking fid 9" and
/// Devel::NYTProf::Data then dies: `Can't call method "fid" on an undefined value at
/// Devel/NYTProf/Data.pm line 296` (tests/interop.rs runs it). Refused with the eval's record.
#[test]
fn an_eval_of_a_file_never_defined_is_refused() {
    let (bytes, offsets) = profile_of_files(&[(2, 9, "(eval 1)[/app/a.pl:1]")]);
    let expected = Error::UndefinedEvalFid {
        offset: offsets[1],
        what: "NEW_FID eval_fid",
        fid: 2,
        eval_fid: 9,
    };
    let err = Profile::from_bytes(&bytes).unwrap_err();
    assert_eq!(err, expected);
    assert_eq!(err.offset(), Some(offsets[1]));
    assert_eq!(
        err.to_string(),
        format!(
            "a string eval names a file the profile never defines as the file it ran in, which \
             Devel::NYTProf cannot load: NEW_FID eval_fid: at byte {:#x}: expected a fid some \
             NEW_FID defines but found fid 9",
            offsets[1]
        )
    );
    // The streaming reader, and the load that keeps what came before the damage, agree.
    assert_eq!(Profile::from_reader(&bytes[..]).unwrap_err(), expected);
    let (partial, e) = Profile::from_bytes_partial(&bytes);
    assert_eq!(e, Some(expected));
    assert!(partial.files.contains_key(&2));

    // An invoking file defined later loads, the eval read as a plain file, as the real reader
    // reads it.
    let (later, _) = profile_of_files(&[(2, 3, "(eval 1)[/app/b.pl:1]"), (3, 0, "/app/b.pl")]);
    let p = Profile::from_bytes(&later).unwrap();
    assert_eq!(p.files[&2].eval, None);

    // The writer refuses a model with such an eval, rather than write what no reader loads.
    let mut model = Profile::from_bytes(&later).unwrap();
    model.files.get_mut(&2).unwrap().eval =
        Some(profcodec_nytprof::model::EvalParent { fid: 9, line: 1 });
    assert_eq!(
        model.check_writable(),
        Err(Error::UndefinedEvalFid {
            offset: 0,
            what: "eval fid",
            fid: 2,
            eval_fid: 9
        })
    );
}
