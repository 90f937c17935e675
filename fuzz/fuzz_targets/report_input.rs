#![no_main]
//! The report of any format's bytes, as `profcodec report` makes it: the fuzz input is written
//! as a file (its format told by its magic, as a user's file is), opened and reported into a
//! temporary folder within a small output budget. A damaged or unknown input is an error;
//! whatever opens is reported or refused in words: never a panic, never memory in proportion
//! to a count or line number the input claims.
use profcodec::output::OutputPath;
use profcodec::report::{Input, Options, report};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let path = dir.path().join("input");
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let mut options = Options::new();
    options.max_output = Some(8 << 20);
    let Ok(output) = OutputPath::folder(dir.path().join("report")).check() else {
        return;
    };
    let inputs = [Input::Path(&path)];
    let _ = report::<profcodec::report::Error>(&inputs, None, &options, output, &mut |_| {});
});
