//! The `wasched` command line.

use std::path::PathBuf;
use std::process::ExitCode;

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
        /// Print the plugins' log lines to stderr.
        #[arg(long, short)]
        verbose: bool,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Yaml,
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
        Command::Simulate {
            files,
            plugins,
            output,
            verbose,
        } => {
            let mut snapshot = wasched::read_snapshot(&files)?;
            let runtime = wasched::Runtime::new()?;
            let mut plugin_set = wasched::load_plugins(&runtime, plugins.as_deref())?;
            let outcome = wasched::cycle::run(&mut snapshot, &mut plugin_set);
            if verbose {
                for (plugin, line) in plugin_set.drain_logs() {
                    eprintln!("[{plugin}] {:?}: {}", line.level, line.message);
                }
            }
            let text = match output {
                Format::Table => outcome.to_table(),
                Format::Json => outcome.to_json() + "\n",
                Format::Yaml => outcome.to_yaml(),
            };
            print!("{text}");
            Ok(())
        }
    }
}
