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
        // The model writer spells a line count out as that many statement records: a fixed
        // 64 KiB buffer bounds each execution (the writer's error on a full buffer is fine).
        if err.is_none() {
            let mut buf = vec![0u8; 1 << 16];
            let mut out = std::io::Cursor::new(&mut buf[..]);
            if profile.write(&mut out).is_ok() {
                let len = out.position() as usize;
                Profile::from_bytes(&buf[..len]).expect("the model writer's output loads");
            }
        }
    }
});
