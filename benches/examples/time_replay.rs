//! Times one `wasched replay` of a generated trace on a generated GPU
//! cluster through the bundled components, and prints one line: pod
//! starts and scheduling attempts per second of wall time, the
//! virtual-time speed-up, GPU allocation, pending jobs and the peak
//! resident memory.
//!
//! ```sh
//! cargo run --release -p wasched-benches --example time_replay -- NODES JOBS MEAN_GAP_S MAX_WORKERS [UNTIL_S]
//! ```
//!
//! A long mean gap keeps the cluster below saturation; a short one keeps
//! hundreds of jobs pending. The trace is made as it arrives, so its
//! length does not show in the memory.

use anyhow::{Context, Result, bail};
use std::time::Duration;
use wasched_benches::replay_run::{cluster, replay_generated};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (nodes, jobs, gap, max_workers, until) = match args.as_slice() {
        [n, j, g, w] => (n, j, g, w, None),
        [n, j, g, w, u] => (n, j, g, w, Some(u)),
        _ => bail!("usage: time_replay NODES JOBS MEAN_GAP_S MAX_WORKERS [UNTIL_S]"),
    };
    let nodes: usize = nodes.parse().context("NODES: a number")?;
    let jobs: usize = jobs.parse().context("JOBS: a number")?;
    let gap: f64 = gap.parse().context("MEAN_GAP_S: a number")?;
    let max_workers: u32 = max_workers.parse().context("MAX_WORKERS: a number")?;
    let until = until
        .map(|u| u.parse::<f64>().context("UNTIL_S: a number"))
        .transpose()?
        .map(Duration::from_secs_f64);
    let cluster = cluster(nodes)?;
    let (_runtime, mut plugins) = wasched_benches::bundled_plugins()?;
    let timed = replay_generated(
        &cluster,
        &mut plugins,
        jobs,
        Duration::from_secs_f64(gap),
        max_workers,
        until,
    )?;
    println!("{nodes} nodes, {}", timed.line());
    Ok(())
}
