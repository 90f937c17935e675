//! `to_profile` of hpcrun inputs: a `.hpcrun` file is one thread's profile, a measurement folder
//! one profile with a context per thread; a trace alone holds no values.
#![cfg(all(feature = "hpcrun", feature = "profile"))]
#![allow(clippy::unwrap_used)] // a failure is the test's panic

use std::path::Path;

use profcodec::ReadError;

#[test]
fn a_file_or_a_folder_is_one_profile() {
    let demo =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpcrun/demo-04.00b.hpcrun");
    let profile = profcodec::to_profile(&profcodec::open(demo).unwrap()).unwrap();
    assert_eq!(profile.contexts().len(), 1);
    assert!(profile.nodes().len() > 1);
    let Some(corpus) = std::env::var_os("PROFCODEC_CORPUS") else {
        return;
    };
    let dir = Path::new(&corpus).join("hpctoolkit/meas/loops-cputime-t.m");
    let opened = profcodec::open(&dir).unwrap();
    let profile = profcodec::to_profile(&opened).unwrap();
    assert_eq!(profile.contexts().len(), 4);
    let top = profile
        .top(&profcodec::profile::Query::new().value_type("CPUTIME"))
        .unwrap();
    assert_eq!(top.unit, "seconds");
    assert_eq!(top.contexts, 4);
    // The four threads' CPU time (`profcodec info` and hpcprof's database agree on it).
    assert!(
        (top.total.self_value - 3.973308).abs() < 1e-6,
        "{}",
        top.total.self_value
    );
    let trace = dir.join("testmeas-loops-000000-000-11ac0300-4974-0.hpctrace");
    let trace = profcodec::open(&trace).unwrap();
    // What the command line reports as a usage error.
    assert!(matches!(
        profcodec::to_profile(&trace),
        Err(ReadError::Unsupported(_))
    ));
}
