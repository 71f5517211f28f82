//! wasched: workload-aware Kubernetes scheduling (gang admission, topology
//! placement, workload-aware preemption) as WebAssembly components, and the
//! host that runs them over cluster snapshots.
//!
//! Data flow: [`manifest`] reads Kubernetes manifests into k8s-openapi types;
//! [`snapshot`] indexes them; [`cycle`] runs the scheduling cycle, calling the
//! plugin components loaded by [`runtime`] at their extension points and the
//! native per-node checks of [`node_checks`]; [`outcome`] is what it decided.

pub mod builder;
pub mod config;
pub mod cycle;
pub mod generate;
pub mod manifest;
pub mod metrics;
pub mod node_checks;
pub mod outcome;
pub mod runtime;
pub mod snapshot;

use std::path::{Path, PathBuf};

use anyhow::Result;

pub use config::PluginConfig;
pub use outcome::Outcome;
pub use runtime::{PluginSet, Runtime};
pub use snapshot::Snapshot;

/// The bundled default snapshot: a small GPU cluster with competing gangs.
pub const DEFAULT_SNAPSHOT: &str = include_str!("../../testdata/default/cluster.yaml");
/// How the bundled default snapshot is named in messages.
pub const DEFAULT_SNAPSHOT_NAME: &str = "testdata/default/cluster.yaml (bundled)";

/// How to read manifests.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Topology policy names of the early CompositePodGroup dialect mapped
    /// to node label keys (`LowLatencyNetwork` → `network.topology.nvidia.com/leaf`).
    pub topology_aliases: std::collections::BTreeMap<String, String>,
}

/// Reads a snapshot from files and directories, or the bundled default if
/// `files` is empty.
pub fn read_snapshot(files: &[PathBuf]) -> Result<Snapshot> {
    read_snapshot_with(files, &ReadOptions::default())
}

/// [`read_snapshot`] with options.
pub fn read_snapshot_with(files: &[PathBuf], options: &ReadOptions) -> Result<Snapshot> {
    let mut manifests = manifest::Manifests::default();
    manifests.dialects.topology_aliases = options.topology_aliases.clone();
    if files.is_empty() {
        manifest::load_str(&mut manifests, DEFAULT_SNAPSHOT_NAME, DEFAULT_SNAPSHOT)?;
    } else {
        manifest::load_files(&mut manifests, files)?;
    }
    manifest::expand_jobs(&mut manifests)?;
    Snapshot::build(&manifests)
}

/// Loads the bundled plugins, or every component in `dir`, under `config`.
pub fn load_plugins(
    runtime: &Runtime,
    dir: Option<&Path>,
    config: &PluginConfig,
) -> Result<PluginSet> {
    match dir {
        Some(dir) => PluginSet::from_dir(runtime, dir, config),
        None => PluginSet::bundled(runtime, config),
    }
}

/// Reads the snapshot, loads the plugins (bundled, or from `plugins`) with
/// default settings and runs the scheduling cycle.
pub fn simulate(files: &[PathBuf], plugins: Option<&Path>) -> Result<Outcome> {
    let mut snapshot = read_snapshot(files)?;
    let runtime = Runtime::new()?;
    let mut plugins = load_plugins(&runtime, plugins, &PluginConfig::default())?;
    Ok(cycle::run(&mut snapshot, &mut plugins))
}
