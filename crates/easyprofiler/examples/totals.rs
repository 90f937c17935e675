//! Per-block totals of an EasyProfiler capture: calls, self and total time per block name,
//! costliest first: `cargo run -p profcodec-easyprofiler --example totals -- FILE.prof`.

use profcodec_profile::Query;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: totals FILE")?;
    let bytes = std::fs::read(path)?;
    let profile = profcodec_easyprofiler::parse(&bytes)?
        .tree()?
        .to_profile()?;
    for row in profile.top(&Query::new().limit(20))?.rows {
        let (calls, total) = (row.calls.unwrap_or(0.0), row.inclusive.unwrap_or(0.0));
        println!(
            "{calls:>8} calls {:>12} ns self {total:>12} ns  {}",
            row.self_value, row.name
        );
    }
    Ok(())
}
