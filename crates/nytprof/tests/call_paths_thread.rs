//! The call paths of a large uncompressed profile are built on a second thread while the rest
//! is decoded: they must be those of the `<` records added one by one, in the order read, the
//! last record (which the fast path leaves to the general decoder) included.
#![allow(clippy::unwrap_used)]

use profcodec_nytprof::write::encode_record;
use profcodec_nytprof::{CallPaths, ModelOptions, Profile, Record, Str};

/// Every path with its exclusive and inclusive ticks and returns, sorted.
fn paths(calls: &CallPaths) -> Vec<(String, f64, f64, u64)> {
    let mut out = Vec::new();
    calls.for_each_path(|path, v| {
        out.push((path.join(";"), v.excl_ticks, v.incl_ticks, v.returns));
    });
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn call_paths_on_a_second_thread_are_those_of_one_thread() {
    let mut data = b"NYTProf 5 0\n:application=t.pl\n:nv_size=8\n:ticks_per_sec=1000000\n".to_vec();
    // Post-order returns of a tree drawn by a small generator: deep and shallow calls, names
    // recurring at many depths (recursion), a few in UTF-8.
    let mut returns: Vec<(u32, f64, f64, String, bool)> = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut depth = 1u32;
    while returns.len() < 120_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x.is_multiple_of(3) && depth < 40 {
            depth += 1;
            continue;
        }
        let name = format!("main::s{}", x % 97);
        let utf8 = x.is_multiple_of(11);
        returns.push((depth, (x % 100) as f64, (x % 10) as f64, name, utf8));
        depth = depth.saturating_sub(u32::from(x.is_multiple_of(2))).max(1);
    }
    for (depth, incl, excl, name, utf8) in &returns {
        let name = Str {
            bytes: name.as_bytes(),
            utf8: *utf8,
        };
        encode_record(
            &mut data,
            &Record::SubReturn {
                depth: *depth,
                incl_ticks: *incl,
                excl_ticks: *excl,
                name,
            },
        );
    }
    assert!(
        data.len() > 2 << 20,
        "{} bytes: below the threaded size",
        data.len()
    );
    let (_, threaded, _, e) = Profile::from_bytes_with_call_paths(&data, ModelOptions::default());
    assert!(e.is_none(), "{e:?}");
    let mut one = CallPaths::new();
    for (depth, incl, excl, name, utf8) in &returns {
        one.add_return_raw(*depth, *incl, *excl, name.as_bytes(), *utf8);
    }
    one.finish();
    assert_eq!(threaded.returns(), returns.len() as u64);
    assert_eq!(paths(&threaded), paths(&one));
}
