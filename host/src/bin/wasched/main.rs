//! The `wasched` command line: one module per subcommand.

mod args;
mod cluster;
mod compare;
mod config;
mod estimate;
mod generate;
mod io;
mod replay;
mod shadow;
mod simulate;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, Ordering};

use clap::{Parser, Subcommand};

/// mimalloc: the run allocates many small, short-lived objects (manifest
/// values, per-call answers), where glibc's allocator spent a fifth of the
/// time (`perf`). Built without transparent huge pages (fewer, smaller
/// page faults, 40 MB less peak memory).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t`,
/// mimalloc.h; the Rust bindings name no constant for it).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Hands freed memory back to the system after 1 ms rather than mimalloc's
/// default delays: the parsed manifests are freed while the snapshot is
/// built, and returning them promptly keeps the peak of the 5,000-node /
/// 10,000-pod run at 146 MB instead of 159 MB (a few percent more time, in
/// the noise of this machine). `MIMALLOC_PURGE_DELAY` in the environment
/// still decides when set.
fn tune_allocator() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one integer option; valid at any time.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 1) };
    }
}

/// Workload-aware Kubernetes scheduling as WebAssembly components.
#[derive(Parser)]
#[command(name = "wasched", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Schedule a snapshot (Kubernetes manifests) and print what the
    /// scheduler would do: placements, pods left pending and why, PodGroup
    /// verdicts.
    Simulate(simulate::Args),
    /// Watch a live cluster, read-only, and report what the plugins would
    /// decide for its pending pods and groups, and where its scheduler's
    /// decisions differ (metrics, `/decisions`, `/differences`), until
    /// SIGINT or SIGTERM.
    Shadow(shadow::Args),
    /// What if: schedule one snapshot with two plugin sets or configurations
    /// and print only what differs. Exits 0 when nothing differs, 1 when
    /// something does, 2 on error (like `diff`).
    Compare(compare::Args),
    /// Configuration files.
    Config {
        #[command(subcommand)]
        command: config::Command,
    },
    /// A real Kubernetes v1.37.2 control plane on this machine.
    Cluster {
        #[command(subcommand)]
        command: cluster::Command,
    },
    /// Replay a workload trace over a cluster in virtual time: each job
    /// arrives at its submit time, is scheduled by the same cycle and
    /// plugins through kube-scheduler's queue, runs for its duration and
    /// ends; prints one row per job as it ends, then wait and completion
    /// times, utilisation and preemption figures.
    Replay(replay::Args),
    /// Print a deterministic synthetic snapshot (YAML) of a cluster in zones,
    /// blocks and racks with background load and pending gang jobs.
    Generate(generate::Args),
}

/// The exit status of a failure: 1, or 2 for `compare` (as `diff`); also
/// what a panic exits with.
static ERROR_STATUS: AtomicU8 = AtomicU8::new(1);

fn main() -> ExitCode {
    tune_allocator();
    std::panic::set_hook(Box::new(|info| {
        eprintln!("wasched: internal error: {info}");
        std::process::exit(i32::from(ERROR_STATUS.load(Ordering::Relaxed)));
    }));
    let cli = Cli::parse();
    if let Command::Compare(_) = cli.command {
        ERROR_STATUS.store(2, Ordering::Relaxed);
    }
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("wasched: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::from(ERROR_STATUS.load(Ordering::Relaxed))
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Simulate(args) => simulate::run(args),
        Command::Shadow(args) => shadow::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Config { command } => config::run(command),
        Command::Cluster { command } => cluster::run(command),
        Command::Generate(args) => generate::run(args),
        Command::Replay(args) => replay::run(args),
    }
}
