//! The Chrome JSON output of every corpus timeline loads in the real speedscope app (npm
//! `speedscope`, in headless Chromium), which imports Chrome's trace-event format.
//!
//! The browser harness is shared with the exporters' tests: it is a command taking one file
//! and exiting 0 when speedscope imported it, named by `PROFCODEC_SPEEDSCOPE_CHECK` (set by
//! `cargo xtask test` once the harness is installed). Without it this test writes the outputs,
//! checks that they are JSON, and prints one line.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};

use profcodec_timeline::{Filter, Format, TimelineWriter};

fn inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs = vec![
        root.join("testdata/hpctoolkit/demo.d"),
        root.join("testdata/easyprofiler/small_v210.prof"),
    ];
    if let Some(c) = profcodec_common::corpus::corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        for p in profcodec_common::corpus::files_below(&c) {
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
    let check = std::env::var_os("PROFCODEC_SPEEDSCOPE_CHECK");
    let dir = std::env::temp_dir().join(format!(
        "profcodec-timeline-speedscope-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    for (i, input) in inputs().iter().enumerate() {
        let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
        w.add_path(input).unwrap();
        let json = w.finish().unwrap();
        serde_json::from_slice::<serde_json::Value>(&json).unwrap();
        let file = dir.join(format!("{i}.json"));
        std::fs::write(&file, &json).unwrap();
        if let Some(check) = &check {
            let status = std::process::Command::new(check)
                .arg(&file)
                .status()
                .unwrap();
            assert!(
                status.success(),
                "{}: speedscope did not import it",
                input.display()
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    if check.is_none() {
        println!(
            "PROFCODEC_SPEEDSCOPE_CHECK is not set; speedscope import of the Chrome output not run"
        );
    }
}
