//! The functions that cost the most in an HPCToolkit database, as hpcviewer's flat view counts
//! them (exclusive: the `function` scope; inclusive: the `execution` scope, recursion once):
//! `cargo run -p profcodec-hpctoolkit --example top_functions [DATABASE] [METRIC]`
//! (defaults: `testdata/hpctoolkit/demo.d`, the database's time metric).

use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::profile::ProfileOptions;
use profcodec_profile::Query;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/hpctoolkit/demo.d"
        )
        .to_owned()
    });
    let mut options = ProfileOptions::new();
    let mut query = Query::new().limit(10);
    if let Some(metric) = args.next() {
        options = options.metric(&metric);
        // "CPUTIME (sec)" and "CPUTIME" both name the metric; the model calls it "CPUTIME".
        let base = metric.split(" (").next().unwrap_or(&metric).to_owned();
        query = query.value_type(base);
    }
    let profile = Database::open(&dir)?.to_profile(&options)?;
    let top = profile.top(&query)?;
    println!(
        "{:>14}  {:>14}  function ({}, {})",
        "self", "inclusive", top.value_type, top.unit
    );
    for row in &top.rows {
        let inclusive = row.inclusive.unwrap_or(f64::NAN);
        println!("{:14.6}  {inclusive:14.6}  {}", row.self_value, row.name);
    }
    println!("{:14.6}  {:>14}  total", top.total.self_value, "");
    Ok(())
}
