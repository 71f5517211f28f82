//! Shared set-up for the criterion benchmarks in this directory.
//!
//! Run them with `cargo bench -p wasched-benches`; each benchmark names what
//! it prices, and pairs a wasm-component measurement with its native
//! baseline in the same run so that ratios survive a noisy machine.

use anyhow::Result;
use wasched::runtime::ExtensionPoint;
use wasched::{PluginSet, Runtime, Snapshot};

/// The bundled default snapshot, indexed.
pub fn default_snapshot() -> Result<Snapshot> {
    wasched::read_snapshot(&[])
}

/// The bundled plugins, loaded into a fresh runtime.
pub fn bundled_plugins() -> Result<(Runtime, PluginSet)> {
    let runtime = Runtime::new()?;
    let plugins = PluginSet::bundled(&runtime, &wasched::PluginConfig::default())?;
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
