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
        /// The plugin directory the file configured (`--plugins DIR` of
        /// the runs that read it): its plugins take the file's `defaults`
        /// (default: the bundled plugins).
        #[arg(long, value_name = "DIR")]
        plugins: Option<PathBuf>,
    },
}

/// Runs `wasched config`.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Migrate { file, plugins } = command;
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("{}: cannot read config", file.display()))?;
    let (loaded, over): (Vec<(String, bool)>, String) = match &plugins {
        None => (
            wasched::runtime::BUNDLED
                .iter()
                .map(|b| (b.name.to_string(), b.on_by_default))
                .collect(),
            "the bundled plugins".to_string(),
        ),
        Some(dir) => {
            let set = wasched::Runtime::new()?.from_dir(dir, &wasched::PluginConfig::default())?;
            (
                set.names().iter().map(|n| (n.to_string(), true)).collect(),
                format!("the plugins of {}", dir.display()),
            )
        }
    };
    let loaded: Vec<(&str, bool)> = loaded.iter().map(|(n, on)| (n.as_str(), *on)).collect();
    let migrated = wasched::config::migrate::migrate(&text, &loaded, &over)
        .map_err(|e| anyhow::anyhow!("{}: {e:#}", file.display()))?;
    print!("{migrated}");
    Ok(ExitCode::SUCCESS)
}
