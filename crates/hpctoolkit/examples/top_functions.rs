//! Which functions cost the most in an HPCToolkit database (hpcviewer's flat view: self is the
//! `function` scope, inclusive the `execution` scope, recursion counted once):
//! `cargo run -p profcodec-hpctoolkit --example top_functions -- DATABASE`.

use profcodec_hpctoolkit::{Database, profile::ProfileOptions};
use profcodec_profile::Query;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: top_functions DATABASE")?;
    let profile = Database::open(&dir)?.to_profile(&ProfileOptions::new())?;
    let top = profile.top(&Query::new().limit(10))?;
    for row in &top.rows {
        let inclusive = row.inclusive.unwrap_or(f64::NAN);
        println!(
            "{:12.6} {inclusive:12.6} {}  {}",
            row.self_value, top.unit, row.name
        );
    }
    Ok(())
}
