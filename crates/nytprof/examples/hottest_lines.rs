//! The hottest source lines of a NYTProf profile (statement time per line):
//! `cargo run -p profcodec-nytprof --example hottest_lines -- nytprof.out`.

use profcodec_profile::{GroupBy, Query};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: hottest_lines FILE")?;
    let profile = profcodec_nytprof::to_profile::to_profile(&std::fs::read(path)?)?;
    let lines = profile.top(&Query::new().group(GroupBy::Line).limit(10))?;
    for row in &lines.rows {
        println!("{:10.6} {}  {}", row.self_value, lines.unit, row.name);
    }
    Ok(())
}
