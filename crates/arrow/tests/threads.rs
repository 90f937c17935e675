//! Threads divide the time of an export, they do not multiply its memory: the tables of one
//! input, written on several threads at once, share the one model each set makes (the profile
//! model, NYTProf's aggregated model), converted once whatever the number of threads.
#![cfg(feature = "parquet")]
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use profcodec::tables::Input;
use profcodec_arrow::parquet::{self, ExportOptions};
use profcodec_arrow::{InputTables, ProfileTables};
use profcodec_testkit::hostile::capped;

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The input at `path` with its NYTProf tables and `profile` tables that count how often the
/// input is converted into its profile model.
fn counted_input(path: &std::path::Path, conversions: &Arc<AtomicUsize>) -> InputTables {
    let count = Arc::clone(conversions);
    let opened = profcodec::open(path).unwrap();
    let profile = ProfileTables::lazy(move || {
        count.fetch_add(1, Ordering::SeqCst);
        Ok(profcodec::to_profile(&opened)?)
    });
    InputTables::new(path, Arc::new(Input::open(path).unwrap())).with(Arc::new(profile))
}

/// Exports the tables of the input at `path` on `threads` threads into a new folder of `dir`:
/// how often the input was converted, and the bytes allocated in all.
fn export(
    dir: &std::path::Path,
    path: &std::path::Path,
    threads: usize,
    cap: usize,
) -> (usize, usize) {
    let conversions = Arc::new(AtomicUsize::new(0));
    let out = dir.join(format!("threads-{threads}"));
    std::fs::create_dir(&out).unwrap();
    let inputs = [counted_input(path, &conversions)];
    let options = ExportOptions::new().threads(threads);
    let (written, allocated) = capped(&A, cap, || parquet::export(&out, &inputs, &options));
    assert!(written.unwrap().len() > 13, "every table written");
    (conversions.load(Ordering::SeqCst), allocated)
}

#[test]
fn an_export_on_many_threads_converts_its_input_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.nytprof.out");
    // About 2 MB of statements, lines and subs: a model of some MiB, which one copy per thread
    // would multiply.
    std::fs::write(&path, profcodec_benches::nytprof::file(2 << 20, None)).unwrap();
    let (once, one_thread) = export(dir.path(), &path, 1, usize::MAX / 2);
    assert_eq!(once, 1);
    // Four threads: the same one conversion, and the allocations of one thread within a
    // quarter (what the threads' own buffers and the scheduling of the tables change), under a
    // cap that a second copy of the models would break.
    let cap = one_thread + one_thread / 4;
    let (conversions, four_threads) = export(dir.path(), &path, 4, cap);
    eprintln!("allocated in all: {one_thread} bytes on 1 thread, {four_threads} on 4");
    assert_eq!(
        conversions, 1,
        "the input converted once, not once per thread"
    );
    assert!(
        four_threads <= cap,
        "{four_threads} bytes allocated on 4 threads, {one_thread} on one"
    );
}
