//! The functions that cost the most in an HPCToolkit database, by self (exclusive) time:
//! `cargo run -p profcodec-hpctoolkit --example top_functions [DATABASE] [METRIC]`
//! (defaults: `testdata/hpctoolkit/demo.d`, `CPUTIME`).

use std::collections::HashMap;

use profcodec_hpctoolkit::Database;
use profcodec_hpctoolkit::read::ContextNode;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/hpctoolkit/demo.d"
        )
        .to_owned()
    });
    let metric = args.next().unwrap_or_else(|| "CPUTIME".to_owned());
    let db = Database::open(&dir)?;
    db.validate()?;
    let costs = db
        .context_costs(&metric)?
        .ok_or_else(|| format!("no metric {metric} (or no profile.db) in {dir}"))?;
    let mut by_function = HashMap::new();
    for cost in costs {
        if let Some(Ok(ContextNode::Context(c))) = db.context(cost.ctx_id)
            && let Some(f) = c.function
        {
            *by_function.entry(f).or_insert(0.0) += cost.exclusive;
        }
    }
    let mut top: Vec<_> = by_function.into_iter().collect();
    top.sort_by(|a, b| b.1.total_cmp(&a.1));
    for (f, value) in top.iter().take(10) {
        let name = db.meta().function(*f)?.name.unwrap_or("<unknown>");
        println!("{value:14.6}  {name}");
    }
    Ok(())
}
