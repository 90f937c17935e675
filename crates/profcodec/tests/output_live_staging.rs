//! `remove_live_staging`, what a front end's signal handler calls, in a test binary of its own:
//! it removes every staging folder of the process, so no other test may write meanwhile.
#![allow(clippy::unwrap_used)]

use profcodec::output::{OutputPath, WriteError, remove_live_staging};

#[test]
fn live_staging_is_removed_on_request() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = OutputPath::file(&out)
        .check()
        .unwrap()
        .write_file(|out| {
            out.write_all(b"partial")?;
            // What a front end's SIGINT handler does before it exits.
            assert_eq!(remove_live_staging(), 1);
            Err::<(), _>(std::io::Error::other("interrupted"))
        })
        .unwrap_err();
    assert!(matches!(err, WriteError::Write(_)), "{err:?}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    assert_eq!(remove_live_staging(), 0);
}
