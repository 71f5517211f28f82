//! Times whole scheduling runs (`wasched::scheduler::run`) over one
//! snapshot file, through the bundled components or the same logic
//! compiled natively, and prints one line: the median, the fastest and
//! every run in milliseconds, and what the run decided.
//!
//! ```sh
//! cargo run --release -p wasched-benches --example time_simulate -- cluster.yaml component 3
//! ```
//!
//! It uses only what the benches' library has offered since contract 0.2.0
//! (`snapshot_from`, `bundled_plugins`, `native_plugins`), so
//! `same-run-baseline.sh` copies it into an older commit's tree and times
//! both commits one after the other on the same machine, on the same
//! file: the only fair way to compare with figures taken elsewhere.

use anyhow::{Context, Result, bail};
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, plugins, runs] = args.as_slice() else {
        bail!("usage: time_simulate <snapshot file> <component|native> <runs>");
    };
    let runs: usize = runs.parse().context("runs: a number")?;
    if runs == 0 {
        bail!("runs: at least 1");
    }
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {file}"))?;
    let snapshot = wasched_benches::snapshot_from(file, &text)?;
    let (_runtime, mut set) = match plugins.as_str() {
        "native" => (None, wasched_benches::native_plugins()),
        "component" => {
            let (runtime, set) = wasched_benches::bundled_plugins()?;
            (Some(runtime), set)
        }
        other => bail!("plugins: component or native, not {other}"),
    };
    let mut times = Vec::with_capacity(runs);
    let mut decided = (0, 0);
    for _ in 0..runs {
        let mut copy = snapshot.clone();
        let clock = Instant::now();
        let outcome = wasched::scheduler::run(
            &mut copy,
            &mut set,
            wasched::scheduler::RunOptions::default(),
        );
        times.push(clock.elapsed().as_secs_f64() * 1e3);
        decided = (outcome.placements.len(), outcome.unschedulable.len());
    }
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    let each: Vec<String> = times.iter().map(|t| format!("{t:.0}")).collect();
    println!(
        "{plugins}: median {:.0} ms, fastest {:.0} ms, runs [{}] ms; {} bound, {} unschedulable",
        sorted[runs / 2],
        sorted[0],
        each.join(", "),
        decided.0,
        decided.1,
    );
    Ok(())
}
