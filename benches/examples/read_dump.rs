//! Reads one dump into a snapshot, as `wasched simulate` does before
//! scheduling, and prints one line: the read time, what was read and the
//! process's peak resident memory — the figure a criterion bench cannot
//! give (its own process holds the generated text).
//!
//! ```sh
//! wasched generate --nodes 2000 --pending-pods 60000 --as-stored -o json > dump.json
//! cargo run --release -p wasched-benches --example read_dump -- dump.json
//! ```

use anyhow::{Result, bail};
use std::time::Instant;

fn main() -> Result<()> {
    let args: Vec<std::path::PathBuf> = std::env::args_os().skip(1).map(Into::into).collect();
    let [file] = args.as_slice() else {
        bail!("usage: read_dump <dump file>");
    };
    let size = std::fs::metadata(file)?.len();
    let before = wasched_benches::peak_rss_mib();
    let clock = Instant::now();
    let snapshot = wasched::read_snapshot(std::slice::from_ref(file))?;
    let took = clock.elapsed();
    println!(
        "{}: {:.1} MB read in {:.2} s: {} nodes, {} pods; peak RSS {:.0} MiB (before reading: {before:.0} MiB)",
        file.display(),
        size as f64 / 1e6,
        took.as_secs_f64(),
        snapshot.nodes.len(),
        snapshot.pods.len(),
        wasched_benches::peak_rss_mib(),
    );
    Ok(())
}
