#![no_main]
//! NYTProf v5 files, plain and compressed: the slice reader, the streaming reader, the model
//! loader (evals collapsed as Data.pm does, and raw) and, when the records read cleanly, the
//! record rewrite (which must read back to the same records) and the model writer (whose output
//! must load).
use profcodec_nytprof::{ModelOptions, Profile, Reader, parse, write};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(file) = parse(data) else {
        return;
    };
    let mut n = 0usize;
    let mut clean = true;
    for r in file.records() {
        match r {
            Ok(_) => n += 1,
            Err(e) => {
                let _ = (e.to_string(), e.offset());
                clean = false;
            }
        }
    }
    if let Ok(mut reader) = Reader::new(data) {
        let mut m = 0usize;
        while let Some(r) = reader.next_record() {
            if r.is_ok() {
                m += 1;
            }
        }
        assert_eq!(m, n, "streaming and slice readers agree");
    }
    let (collapsed, _) = Profile::from_bytes_partial(data);
    let _ = collapsed.dump_profile_data();
    let (profile, err) = Profile::from_bytes_partial_with(data, ModelOptions::raw());
    if clean {
        let out = write::rewrite(&file, 1).expect("clean records rewrite");
        let back = parse(&out).expect("rewrite parses");
        assert_eq!(back.records().count(), n);
        // The model writer spells a line count out as that many statement records: skip models
        // whose counts would make one execution write millions of records.
        let statements: i64 = profile
            .line_times
            .values()
            .flat_map(|l| l.values())
            .map(|t| t.count.unsigned_abs().min(1 << 40) as i64)
            .sum();
        if err.is_none() && statements <= 256 {
            let mut bytes = Vec::new();
            if profile.write(&mut bytes).is_ok() {
                Profile::from_bytes(&bytes).expect("the model writer's output loads");
            }
        }
    }
});
