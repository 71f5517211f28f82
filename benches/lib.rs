//! Shared set-up for the criterion benchmarks in this directory.
//!
//! Run them with `cargo bench -p wasched-benches`; each benchmark names what
//! it prices, and pairs a wasm-component measurement with its native
//! baseline in the same run so that ratios survive a noisy machine.

use anyhow::Result;
use wasched::framework::ExtensionPoint;
use wasched::generate::{Options, Shape};
use wasched::{PluginSet, Runtime, Snapshot};

/// The large generated cluster the benchmarks use: 5,000 nodes with 10,000
/// pending pods (scheduler_perf's standard size).
pub const LARGE: Options = Options {
    nodes: 5000,
    pending_pods: 10_000,
    seed: 1,
    shape: Shape::Gpu,
};

/// Reads manifest text (YAML or JSON) into an indexed snapshot, as
/// `wasched simulate` does for one file.
pub fn snapshot_from(file: &str, text: &str) -> Result<Snapshot> {
    let mut manifests = wasched::manifest::Manifests::default();
    wasched::manifest::load_str(&mut manifests, file, text)?;
    Snapshot::build(&manifests)
}

/// The [`LARGE`] cluster, indexed.
pub fn large_snapshot() -> Result<Snapshot> {
    snapshot_from("generated.json", &wasched::generate::generate_json(&LARGE)?)
}

/// The bundled default snapshot, indexed.
pub fn default_snapshot() -> Result<Snapshot> {
    wasched::read_snapshot(&[])
}

/// The bundled plugins, loaded into a fresh runtime.
pub fn bundled_plugins() -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::new()?;
    let plugins = runtime.bundled(&wasched::PluginConfig::default())?;
    Ok((runtime, plugins))
}

/// Index of the first gang PodGroup in `snapshot` and its `minCount`.
pub fn first_gang(snapshot: &Snapshot) -> (u32, u32) {
    snapshot
        .groups
        .iter()
        .enumerate()
        .find_map(|(i, g)| g.min_count().map(|m| (i as u32, m)))
        .expect("the default snapshot has a gang")
}

/// Whether `plugins` has a permit plugin (sanity check for the benches).
pub fn has_permit(plugins: &PluginSet) -> bool {
    plugins.any_at(ExtensionPoint::Permit)
}
