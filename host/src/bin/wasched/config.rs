//! `wasched config`: configuration files.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Subcommand;

#[derive(Subcommand)]
/// The `config` subcommands.
pub enum Command {
    /// Print the KubeSchedulerConfiguration equivalent to a configuration
    /// in wasched's former format (`defaults:` and `plugins:`).
    Migrate {
        /// The former configuration file.
        file: PathBuf,
    },
}

/// Runs `wasched config`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Migrate { file } = command;
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("{}: cannot read config", file.display()))?;
    let names: Vec<&str> = wasched::runtime::BUNDLED.iter().map(|b| b.name).collect();
    let migrated = wasched::config::migrate::migrate(&text, &names)
        .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))?;
    print!("{migrated}");
    Ok(ExitCode::SUCCESS)
}
