//! The `wasched` command line.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};

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
    Simulate {
        /// Manifest files (YAML or JSON, as `kubectl get -o yaml|json`
        /// prints). Without any, the bundled default snapshot is used.
        files: Vec<PathBuf>,
        /// Load every `*.wasm` plugin component in this directory instead of
        /// the bundled plugins.
        #[arg(long, value_name = "DIR")]
        plugins: Option<PathBuf>,
        /// Output format.
        #[arg(long, short, value_enum, default_value_t = Format::Table)]
        output: Format,
        /// Plugin configuration (YAML or JSON): per-plugin failure policy,
        /// CPU and memory bounds, and args. See the README.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Also write the run's metrics (Prometheus text format) to FILE.
        #[arg(long, value_name = "FILE")]
        metrics: Option<PathBuf>,
        /// Map a topology policy name of the early CompositePodGroup dialect
        /// to a node label key, e.g. `LowLatencyNetwork=network.topology.nvidia.com/leaf`.
        #[arg(long, value_name = "NAME=KEY", value_parser = parse_alias)]
        topology_alias: Vec<(String, String)>,
        /// Print the plugins' log lines to stderr.
        #[arg(long, short)]
        verbose: bool,
        /// Print where the time went to stderr after the decisions: reading,
        /// loading, scheduling (pods/s), node checks, and per plugin and
        /// extension point the calls, total, mean and max time.
        #[arg(long)]
        stats: bool,
    },
    /// Print a deterministic synthetic snapshot (YAML) of a cluster in zones,
    /// blocks and racks with background load and pending gang jobs.
    Generate {
        /// Number of nodes.
        #[arg(long, default_value_t = 100)]
        nodes: usize,
        /// Number of pending pods.
        #[arg(long, default_value_t = 200)]
        pending_pods: usize,
        /// Random seed: the same arguments print the same snapshot.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Node mix.
        #[arg(long, value_enum, default_value_t = wasched::generate::Shape::Gpu)]
        shape: wasched::generate::Shape,
        /// Output format (JSON reads back several times faster).
        #[arg(long, short, value_enum, default_value_t = SnapshotFormat::Yaml)]
        output: SnapshotFormat,
    },
}

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `generate`.
enum SnapshotFormat {
    Yaml,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `simulate`.
enum Format {
    Table,
    Json,
    Yaml,
}

fn parse_alias(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, key)) if !name.is_empty() && !key.is_empty() => Ok((name.into(), key.into())),
        _ => Err(format!("expected NAME=KEY, got {text:?}")),
    }
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("wasched: internal error: {info}");
    }));
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wasched: {}", format!("{e:#}").replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Generate {
            nodes,
            pending_pods,
            seed,
            shape,
            output,
        } => {
            let options = wasched::generate::Options {
                nodes,
                pending_pods,
                seed,
                shape,
            };
            let text = match output {
                SnapshotFormat::Yaml => wasched::generate::generate_yaml(&options)?,
                SnapshotFormat::Json => wasched::generate::generate_json(&options)?,
            };
            print!("{text}");
            Ok(())
        }
        Command::Simulate {
            files,
            plugins,
            output,
            config,
            metrics,
            topology_alias,
            verbose,
            stats,
        } => {
            let simulation = wasched::Simulation {
                files,
                read: wasched::ReadOptions {
                    topology_aliases: topology_alias.into_iter().collect(),
                },
                plugins,
                config: match config {
                    Some(path) => wasched::PluginConfig::from_file(&path)?,
                    None => wasched::PluginConfig::default(),
                },
            };
            let simulated = simulation.run(&wasched::Runtime::new()?)?;
            let outcome = &simulated.outcome;
            if verbose {
                for (plugin, line) in &simulated.logs {
                    eprintln!("[{plugin}] {:?}: {}", line.level, line.message);
                }
            }
            let text = match output {
                Format::Table => outcome.to_table(),
                Format::Json => outcome.to_json() + "\n",
                Format::Yaml => outcome.to_yaml(),
            };
            if let Some(path) = metrics {
                std::fs::write(&path, wasched::metrics::encode_text(outcome))
                    .with_context(|| format!("{}: cannot write metrics", path.display()))?;
            }
            print!("{text}");
            if stats {
                eprint!("{}", simulated.stats.to_table());
            }
            Ok(())
        }
    }
}
