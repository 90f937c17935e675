//! Timelines of any input (`profcodec::timeline`):
//!
//! - the Chrome JSON output of every corpus timeline, whatever its format, loads in the real
//!   speedscope app (npm `speedscope`, in headless Chromium), which imports Chrome's trace-event
//!   format;
//! - an input that would cost far more output than its size is refused with `validate`'s error:
//!   an HPCToolkit trace.db whose lines all point at one line's samples (50,904 bytes were
//!   4.85 GB of Chrome JSON), by both writers before any event.
//!
//! The browser harness is the one the exporters' tests use (`profcodec_testkit::speedscope`):
//! `cargo xtask test` installs the app and Chromium and names them in the environment. Outside
//! the xtask this test writes the outputs, checks that they are JSON, and says the browser
//! check was not run.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec::timeline::{Error, Filter, Format, TimelineWriter, add_path};

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = vec![
        root.join("testdata/hpctoolkit/demo.d"),
        root.join("testdata/easyprofiler/small_v210.prof"),
    ];
    if let Some(c) = profcodec_testkit::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        for p in profcodec_testkit::corpus::files_below(&c) {
            let Some(dir) = p.parent() else { continue };
            match p.extension().and_then(|e| e.to_str()) {
                Some("prof") => inputs.push(p.clone()),
                Some("db") if p.file_name().is_some_and(|n| n == "trace.db") => {
                    inputs.push(dir.to_path_buf())
                }
                Some("hpctrace") if !inputs.iter().any(|i| i == dir) => {
                    inputs.push(dir.to_path_buf())
                }
                _ => {}
            }
        }
    }
    inputs
}

#[test]
fn chrome_output_loads_in_speedscope() {
    use profcodec_testkit::speedscope::{IMPORTED_NAME, Speedscope};
    let speedscope = Speedscope::from_env();
    assert!(
        speedscope.is_some() || std::env::var_os("PROFCODEC_EXPORT_CONSUMERS").is_none(),
        "the speedscope app is not named under the xtask"
    );
    let tmp = tempfile::tempdir().unwrap();
    for input in inputs() {
        let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
        add_path(&mut w, &input).unwrap();
        let json = w.finish().unwrap();
        serde_json::from_slice::<serde_json::Value>(&json).unwrap();
        let Some(speedscope) = &speedscope else {
            continue;
        };
        let file = tmp.path().join("trace.json");
        std::fs::write(&file, &json).unwrap();
        let rendered = speedscope.load(&file, tmp.path()).unwrap();
        // speedscope names an imported Chrome trace after the URL it was served from.
        assert!(
            rendered.shows(IMPORTED_NAME),
            "{}: speedscope shows {:?}",
            input.display(),
            rendered.title
        );
    }
}

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn temp_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("profcodec-timeline-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn aliased_trace_lines_are_refused_by_both_writers() {
    let demo = testdata("hpctoolkit/demo.d");
    let dir = temp_dir("aliased-trace");
    profcodec_benches::hostile::write_hpctoolkit_aliased_database(&demo, &dir, 1000).unwrap();
    let bytes = std::fs::read(dir.join("trace.db")).unwrap();
    let expected = profcodec::hpctoolkit::Database::open(&dir)
        .unwrap()
        .validate()
        .expect_err("validate refuses aliased lines")
        .to_string();
    assert!(
        expected.starts_with("data used twice: trace.db CTH.pStart"),
        "{expected}"
    );
    let at = profcodec::hpctoolkit::TraceDb::parse(&bytes)
        .unwrap()
        .trace(1)
        .unwrap()
        .offset
        + 8;
    assert!(expected.contains(&format!("at byte {at:#x}")), "{expected}");

    for format in [Format::Chrome, Format::Perfetto] {
        let mut w = TimelineWriter::new(Vec::new(), format, Filter::new());
        let e = add_path(&mut w, &dir).expect_err("aliased lines");
        assert!(
            matches!(&e, Error::Input { source, .. } if source.is::<profcodec::hpctoolkit::Error>()),
            "{e:?}"
        );
        assert_eq!(e.to_string(), format!("{}: {expected}", dir.display()));
        // Nothing was written before the error: the finished trace is an empty one.
        let out = w.finish().unwrap();
        let empty = TimelineWriter::new(Vec::new(), format, Filter::new())
            .finish()
            .unwrap();
        assert_eq!(out, empty, "{format:?}");
    }
    // demo.d's own trace.db converts.
    std::fs::copy(demo.join("trace.db"), dir.join("trace.db")).unwrap();
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    assert!(add_path(&mut w, &dir).unwrap().slices > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}
