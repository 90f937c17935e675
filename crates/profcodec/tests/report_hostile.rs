//! The umbrella's report of crafted profile files, end to end (HOSTILE.md; #39: 3 and 4): the
//! bytes opened, read into the model with the source beside them, and the page written, each
//! under an allocation cap.
//!
//! - a NYTProf statement at line 4,000,000,000 of a file beside the profile: one source row for
//!   it beside the file's three lines, never a row per line number;
//! - `testdata/hostile/easyprofiler_deep_600.prof`: 600 blocks nested in one another, all of
//!   one 10 KB name (24 KB), whose flame graph costs its size, not depth squared times the name.
//!   The file is `profcodec_benches::hostile::easyprofiler_deep(600, 10_000)`; this test checks
//!   it is current, and `PROFCODEC_BLESS=1 cargo test -p profcodec --test report_hostile`
//!   writes it again.
//!
//! Every test holds one lock, so that no other test allocates while one is capped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

fn deep_capture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hostile/easyprofiler_deep_600.prof")
}

#[test]
fn the_deep_easyprofiler_capture_is_current() {
    let bytes = profcodec_benches::hostile::easyprofiler_deep(600, 10_000);
    let path = deep_capture();
    if std::env::var_os("PROFCODEC_BLESS").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    assert!(
        std::fs::read(&path).unwrap() == bytes,
        "{} is not easyprofiler_deep(600, 10_000): PROFCODEC_BLESS=1 writes it again",
        path.display()
    );
}

#[cfg(feature = "report")]
mod reports {
    use std::path::Path;
    use std::sync::Mutex;

    use profcodec::output::{OutputPath, Overwrite};
    use profcodec::report::{Error, Input, Options, SourceUse, Written, report};

    use super::deep_capture;

    #[global_allocator]
    static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The report of the file `input` into `out`, with at most `cap` bytes allocatable; returns
    /// what was written and what it allocated in all.
    fn capped_report(input: &Path, out: &Path, cap: usize) -> (Written, usize) {
        let checked = OutputPath::folder(out)
            .overwrite(Overwrite::Never)
            .input(input)
            .check()
            .unwrap();
        let (written, allocated) = profcodec_testkit::hostile::capped(&A, cap, || {
            report::<Error>(
                &[Input::Path(input)],
                None,
                &Options::new(),
                checked,
                &mut |_| {},
            )
        });
        let written = written.unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        (written, allocated)
    }

    /// NYTProf's varint: the length in the first byte's prefix bits, big-endian after.
    fn varint(v: u32) -> Vec<u8> {
        match v {
            0..0x80 => vec![v as u8],
            0x80..0x4000 => vec![0x80 | (v >> 8) as u8, v as u8],
            0x4000..0x20_0000 => vec![0xC0 | (v >> 16) as u8, (v >> 8) as u8, v as u8],
            0x20_0000..0x1000_0000 => {
                vec![
                    0xE0 | (v >> 24) as u8,
                    (v >> 16) as u8,
                    (v >> 8) as u8,
                    v as u8,
                ]
            }
            _ => [&[0xFF][..], &v.to_be_bytes()].concat(),
        }
    }

    /// A NYTProf profile whose one timed statement lies at `line` of the file `name`.
    fn statement_at(name: &str, line: u32) -> Vec<u8> {
        let mut out = b"NYTProf 5 0\n:ticks_per_sec=10000000\n:nv_size=8\n".to_vec();
        out.push(b'P');
        out.extend(varint(7));
        out.extend(varint(1));
        out.extend(1.0f64.to_le_bytes());
        out.push(b'@');
        for v in [1, 0, 0, 0x2, 0, 0] {
            out.extend(varint(v));
        }
        out.push(b'\'');
        out.extend(varint(name.len() as u32));
        out.extend(name.as_bytes());
        out.push(b'+');
        for v in [5000, 1, line] {
            out.extend(varint(v));
        }
        out.push(b'p');
        out.extend(varint(7));
        out.extend(2.0f64.to_le_bytes());
        out
    }

    fn source_rows(page: &str) -> Vec<u64> {
        page.split("<tr data-line=\"")
            .skip(1)
            .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
            .collect()
    }

    #[test]
    fn a_nytprof_statement_at_line_4_000_000_000_is_one_row() {
        let _one = one_at_a_time();
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("prog.pl");
        std::fs::write(&program, "my $x = 1;\nmy $y = 2;\nprint $x + $y;\n").unwrap();
        let input = dir.path().join("nytprof.out");
        std::fs::write(
            &input,
            statement_at(program.to_str().unwrap(), 4_000_000_000),
        )
        .unwrap();
        let out = dir.path().join("report");
        // A row per line number took 411 MB at line 10^6 and aborted beyond.
        let (written, allocated) = capped_report(&input, &out, 32 << 20);
        assert!(allocated < 32 << 20, "{allocated} bytes allocated");
        assert!(
            matches!(&written.sources[..], [SourceUse::Embedded { from, .. }] if Path::new(from) == program),
            "{:?}",
            written.sources
        );
        // The source rows, on whichever page of the report shows the file.
        let rows: Vec<u64> = profcodec_testkit::corpus::files_below(&out)
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "html"))
            .flat_map(|f| source_rows(&std::fs::read_to_string(f).unwrap()))
            .collect();
        assert_eq!(rows, [1, 2, 3, 4_000_000_000]);
        assert!(written.bytes < 4 << 20, "{} bytes written", written.bytes);
    }

    #[test]
    fn six_hundred_nested_blocks_of_a_10_kb_name_cost_their_size() {
        let _one = one_at_a_time();
        let input = deep_capture();
        let size = std::fs::metadata(&input).unwrap().len();
        assert!(size < 32 << 10, "{size} bytes");
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("report");
        // Every node's whole folded path (twice) was 600 x 600 x 10 KB = 3.6 GB, and aborted.
        let (written, allocated) = capped_report(&input, &out, 128 << 20);
        assert!(allocated < 128 << 20, "{allocated} bytes allocated");
        assert!(written.bytes < 64 << 20, "{} bytes written", written.bytes);
        let page = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(page.contains(&"n".repeat(10_000)));
    }
}
