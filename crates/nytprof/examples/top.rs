//! Prints the subs of a NYTProf profile with the most exclusive time, through the
//! format-neutral model: `cargo run --release -p profcodec-nytprof --example top -- FILE [N]`.

use profcodec_profile::Query;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args.next().ok_or("usage: top FILE [N]")?;
    let n: usize = args.next().map_or(Ok(20), |n| n.parse())?;
    let data = std::fs::read(&path)?;
    let model = profcodec_nytprof::to_profile::to_profile(&data)?;
    let top = model.top(&Query::new().limit(n))?;
    println!(
        "{:>12} {:>12} {:>10}  sub",
        "self s", "inclusive s", "calls"
    );
    for row in &top.rows {
        println!(
            "{:>12.6} {:>12.6} {:>10}  {}",
            row.self_value,
            row.inclusive.unwrap_or(0.0),
            row.calls.unwrap_or(0.0),
            row.name
        );
    }
    println!("{:>12.6} total", top.total.self_value);
    Ok(())
}
