//! The real files of `shared/corpus/nytprof`: every record decodes, rewriting keeps the bytes (or
//! the inflated stream), and the model matches Devel::NYTProf's own `dump_profile_data`.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use profcodec_nytprof::{ModelOptions, Profile, Reader, Record, parse, write};

fn corpus_files() -> Vec<PathBuf> {
    let Some(dir) = profcodec_testkit::corpus::corpus_subdir(env!("CARGO_MANIFEST_DIR"), "nytprof")
    else {
        return Vec::new();
    };
    let files: Vec<PathBuf> = profcodec_testkit::corpus::files_below(&dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".nytprof.out"))
        .collect();
    assert!(
        files.len() >= 6,
        "expected the corpus profiles in {}",
        dir.display()
    );
    files
}

fn inflated_stream(bytes: &[u8]) -> Vec<u8> {
    // The uncompressed record stream: records re-encoded without the `z` switch.
    let file = parse(bytes).unwrap();
    let mut out = file.header().line.to_vec();
    for r in file.records() {
        write::encode_record(&mut out, &r.unwrap());
    }
    out
}

#[test]
fn every_record_decodes_and_streams_alike() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let file = parse(&bytes).unwrap();
        let records: Vec<Record<'_>> = file.records().map(|r| r.unwrap()).collect();
        assert!(
            matches!(records.last(), Some(Record::PidEnd { .. })),
            "{}",
            path.display()
        );
        // The streaming reader, fed in small pieces, sees the same records.
        let mut reader = Reader::new(std::io::BufReader::with_capacity(7, &bytes[..])).unwrap();
        let mut i = 0;
        while let Some(r) = reader.next_record() {
            assert_eq!(r.unwrap(), records[i], "{} record {i}", path.display());
            i += 1;
        }
        assert_eq!(i, records.len());
    }
}

#[test]
fn rewrite_keeps_bytes_or_inflated_stream() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let file = parse(&bytes).unwrap();
        let out = write::rewrite(&file, 6).unwrap();
        if let Some((_, trailer)) = file.compressed_part() {
            assert_eq!(
                inflated_stream(&out),
                inflated_stream(&bytes),
                "{}",
                path.display()
            );
            assert!(out.ends_with(trailer) && !trailer.is_empty());
        } else {
            assert!(out == bytes, "{} rewrite differs", path.display());
        }
    }
}

/// Removes the @INC prefixes Debian's perl 5.36 uses, as `filename_without_inc` does.
fn strip_inc(name: &str) -> String {
    const INC: &[&str] = &[
        "/etc/perl/",
        "/usr/local/lib/x86_64-linux-gnu/perl/5.36.0/",
        "/usr/local/share/perl/5.36.0/",
        "/usr/lib/x86_64-linux-gnu/perl5/5.36/",
        "/usr/share/perl5/",
        "/usr/lib/x86_64-linux-gnu/perl-base/",
        "/usr/lib/x86_64-linux-gnu/perl/5.36/",
        "/usr/share/perl/5.36/",
        "/usr/local/lib/site_perl/",
    ];
    let mut out = name.to_owned();
    for inc in INC {
        out = out.replace(inc, "");
    }
    out
}

fn check_against_dump(path: &std::path::Path, profile: &Profile) {
    let dump_path = PathBuf::from(path.to_string_lossy().replace(".nytprof.out", ".dump.txt"));
    let expected = std::fs::read_to_string(&dump_path).unwrap();
    let mine = profile.dump_profile_data();
    let (exp, got): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), mine.lines().collect());
    for (i, (e, g)) in exp.iter().zip(&got).enumerate() {
        if e == g {
            continue;
        }
        // File names: the Perl dump strips the @INC prefix of the perl that dumped it.
        let ok = e.starts_with("fid_fileinfo") && e.ends_with(" ]") && {
            let (ep, et) = e.split_once("\t[ ").unwrap();
            let (gp, gt) = g.split_once("\t[ ").unwrap();
            let tail = |t: &str| {
                t.rsplitn(7, ' ')
                    .take(6)
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            };
            let ename = et.rsplitn(7, ' ').nth(6).unwrap_or("").to_owned();
            let gname = gt.rsplitn(7, ' ').nth(6).unwrap_or("").to_owned();
            ep == gp && tail(et) == tail(gt) && strip_inc(&gname) == ename
        };
        assert!(
            ok,
            "{} line {}:\n  perl: {e}\n  ours: {g}",
            path.display(),
            i + 1
        );
    }
    assert_eq!(exp.len(), got.len(), "{}: line count", path.display());
}

#[test]
fn model_matches_dump_profile_data() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        // The dumps were made by `Devel::NYTProf::Data->new` with its defaults, so with evals
        // collapsed: so is the default model.
        let profile = Profile::from_bytes(&bytes).unwrap();
        check_against_dump(&path, &profile);
        // The streaming loader builds the same model, collapsed or raw.
        let streamed = Profile::from_reader(&bytes[..]).unwrap();
        assert_eq!(profile, streamed);
        let raw = Profile::from_bytes_with(&bytes, ModelOptions::raw()).unwrap();
        let raw_streamed = Profile::from_reader_with(&bytes[..], ModelOptions::raw()).unwrap();
        assert_eq!(raw, raw_streamed);
        // The corpus programs run each eval once: nothing to collapse.
        assert_eq!(raw, profile, "{}", path.display());
    }
}

#[test]
fn model_writer_round_trips_the_corpus() {
    for path in corpus_files() {
        let bytes = std::fs::read(&path).unwrap();
        let profile = Profile::from_bytes_with(&bytes, ModelOptions::raw()).unwrap();
        for level in [None, Some(6)] {
            let mut out = Vec::new();
            profile.write_with(&mut out, level).unwrap();
            let back = Profile::from_bytes_with(&out, ModelOptions::raw()).unwrap();
            assert_eq!(back.files, profile.files);
            assert_eq!(back.subs.len(), profile.subs.len());
            assert_eq!(back.attributes, profile.attributes);
            for (fid, lines) in &profile.line_times {
                for (line, lt) in lines {
                    let b = back.line_times[fid][line];
                    assert_eq!(b.count, lt.count);
                    assert!((b.time - lt.time).abs() <= 1e-9 * lt.time.abs().max(1e-6));
                }
            }
        }
    }
}

#[test]
fn forked_child_merges_into_parent() {
    let files = corpus_files();
    let Some(parent) = files
        .iter()
        .find(|p| p.ends_with("fork__compress0.nytprof.out"))
    else {
        return;
    };
    let child = files
        .iter()
        .find(|p| p.to_string_lossy().contains("fork__compress0.3"))
        .unwrap();
    let mut merged = Profile::from_bytes(&std::fs::read(parent).unwrap()).unwrap();
    let c = Profile::from_bytes(&std::fs::read(child).unwrap()).unwrap();
    let before = merged.subs["main::work"].calls;
    merged.merge(&c);
    assert_eq!(merged.pids.len(), 2);
    assert_eq!(
        merged.subs["main::work"].calls,
        before + c.subs["main::work"].calls
    );
    assert_eq!(
        merged.files.len(),
        Profile::from_bytes(&std::fs::read(parent).unwrap())
            .unwrap()
            .files
            .len()
            .max(c.files.len())
    );
}
