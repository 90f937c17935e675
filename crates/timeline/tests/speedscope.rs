//! The Chrome JSON output of every corpus timeline loads in the real speedscope app (npm
//! `speedscope`, in headless Chromium), which imports Chrome's trace-event format.
//!
//! The browser harness is the one the exporters' tests use (`profcodec_testkit::speedscope`):
//! `cargo xtask test` installs the app and Chromium and names them in the environment. Outside
//! the xtask this test writes the outputs, checks that they are JSON, and says the browser
//! check was not run.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_timeline::{Filter, Format, TimelineWriter};

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
        w.add_path(&input).unwrap();
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
