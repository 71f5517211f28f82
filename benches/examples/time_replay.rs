//! Times one `wasched replay` of a generated trace on a generated GPU
//! cluster through the bundled components, and prints one line: pod
//! starts and scheduling attempts per second of wall time, the
//! virtual-time speed-up, GPU allocation, pending jobs and the peak
//! resident memory.
//!
//! ```sh
//! cargo run --release -p wasched-benches --example time_replay -- NODES JOBS MEAN_GAP_S MAX_WORKERS [UNTIL_S] [--without=REUSE,...]
//! ```
//!
//! `--without` turns off some of what the cycle reuses, for a baseline in
//! the same session: `node-scores`, `short-nodes`, `misfits`,
//! `running-units`, `permit-verdicts`, `placements`, `across-runs`;
//! `--without=` (nothing) runs the same path with every reuse on.
//!
//! A long mean gap keeps the cluster below saturation; a short one keeps
//! hundreds of jobs pending. The trace is made as it arrives, so its
//! length does not show in the memory.

use anyhow::{Context, Result, bail};
use std::time::Duration;
use wasched::scheduler::ablation::Reuse;
use wasched_benches::replay_run::{cluster, replay_generated};

fn main() -> Result<()> {
    let (without, args): (Vec<String>, Vec<String>) = std::env::args()
        .skip(1)
        .partition(|a| a.starts_with("--without="));
    let reuse = match without.as_slice() {
        [] => None,
        [list] => Some(reuse_without(&list["--without=".len()..])?),
        _ => bail!("--without: once"),
    };
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
        reuse,
    )?;
    println!("{nodes} nodes, {}", timed.line());
    Ok(())
}

/// Every reuse but those listed (comma-separated).
fn reuse_without(list: &str) -> Result<Reuse> {
    let mut reuse = Reuse::default();
    for name in list.split(',').filter(|name| !name.is_empty()) {
        let flag = match name {
            "node-scores" => &mut reuse.node_scores,
            "short-nodes" => &mut reuse.short_nodes,
            "misfits" => &mut reuse.misfits,
            "running-units" => &mut reuse.running_units,
            "permit-verdicts" => &mut reuse.permit_verdicts,
            "placements" => &mut reuse.placements,
            "across-runs" => &mut reuse.across_runs,
            other => bail!("--without: no reuse named {other:?}"),
        };
        *flag = false;
    }
    Ok(reuse)
}
