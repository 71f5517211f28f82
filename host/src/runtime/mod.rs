//! The wasm side of the host: one [`Runtime`] (engine + linker for every
//! supported contract version) compiles and loads plugin components into a
//! [`PluginSet`] of [`WasmPlugin`]s, which implement the framework's
//! [`Plugin`](crate::framework::Plugin) trait.
//!
//! - `bindings` / `contract_v0_3`: the current contract, `wasched:scheduler@0.3.0`;
//! - `contract_v0_2`, `contract_v0_1`: components built against 0.2.0 and
//!   0.1.0, adapted to it (one module per contract version, named alike);
//! - `plugin`: loading, the sandbox (fuel, epochs, memory, log caps), traps;
//! - `calls`: each extension point through the component's contract;
//! - [`validate`]: checks on the file at load.

mod bindings;
pub mod cache;
mod calls;
mod contract_v0_1;
mod contract_v0_2;
mod contract_v0_3;
mod exports;
mod faults;
mod plugin;
mod state;
pub mod validate;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use crate::framework::Plugin as _;
use anyhow::{Context, Result, anyhow, bail};
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime::{Config, Engine};

pub use bindings::{PACKAGE, PACKAGE_VERSION};
pub use cache::{ComponentCache, Origin};
#[doc(hidden)]
pub use faults::{hold_next_host_call, inject_panic, release_held_call, wait_until_held};
pub use plugin::{SUPPORTED_VERSIONS, WasmPlugin};
pub use state::{HOST_FUEL_PER_ELEMENT, HostState};

use crate::config::PluginConfig;
use crate::framework::PluginSet;

/// How often the epoch advances; per-call wall-clock deadlines are counted
/// in these ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(1);

mod bundled {
    include!(concat!(env!("OUT_DIR"), "/bundled_plugins.rs"));
}

/// The plugin components built from `plugins/` and embedded in this binary,
/// as `(crate name, component bytes)`, sorted by name.
pub fn bundled_plugins() -> &'static [(&'static str, &'static [u8])] {
    bundled::BUNDLED
}

/// Where the build put the test fixture components built from
/// `testdata/plugins/` (`hostile.wasm`), for the tests of this crate and of
/// the crates built on it; not embedded.
pub const FIXTURE_DIR: &str = env!("WASCHED_TEST_PLUGINS");

/// The wasmtime engine, the linker that provides the `wasched:scheduler`
/// imports of every supported version, and the components compiled so far
/// (by content, in memory and in the on-disk [`ComponentCache`]), so that
/// loading the same bytes twice compiles once.
pub struct Runtime {
    engine: Engine,
    linker: Linker<HostState>,
    compiled: Mutex<HashMap<Vec<u8>, Component>>,
    cache: ComponentCache,
}

impl Runtime {
    /// [`Runtime::with_cache`] with the user's cache
    /// ([`ComponentCache::from_env`]).
    pub fn new() -> Result<Self> {
        Self::with_cache(ComponentCache::from_env())
    }

    /// Configures the engine and links the host side of the `cluster` and
    /// `log` interfaces. Nothing else (no WASI) is linked: a plugin that
    /// imports anything else is refused at load. Compiled components are
    /// kept in `cache`.
    pub fn with_cache(cache: ComponentCache) -> Result<Self> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        // Deterministic CPU bound: every call gets a fuel budget
        // (`PluginSettings::fuel`); running out traps with `OutOfFuel`.
        config.consume_fuel(true);
        // Wall-clock backstop: a ticker thread advances the epoch every
        // `EPOCH_TICK`; a call past its deadline traps with `Interrupt`.
        config.epoch_interruption(true);
        // Deep recursion traps with `StackOverflow` at this many bytes of
        // wasm stack (wasmtime's default, stated here as a bound we rely on).
        config.max_wasm_stack(512 << 10);
        // `WASCHED_PERF_MAP=1`: name the plugins' compiled functions in
        // `/tmp/perf-<pid>.map`, so that `perf report` shows them.
        if std::env::var_os("WASCHED_PERF_MAP").is_some_and(|v| v == "1") {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config)?;
        spawn_epoch_ticker(&engine);
        let mut linker = Linker::new(&engine);
        bindings::ExtensionHost::add_to_linker::<HostState, HasSelf<HostState>>(
            &mut linker,
            |state| state,
        )?;
        contract_v0_3::add_bounded_list_calls(&mut linker)?;
        contract_v0_2::add_to_linker(&mut linker)?;
        contract_v0_1::add_to_linker(&mut linker)?;
        Ok(Self {
            engine,
            linker,
            compiled: Mutex::new(HashMap::new()),
            cache,
        })
    }

    /// Compiles (or reuses) and loads one component under `config`;
    /// `source` names it in messages.
    pub fn load(&self, source: &str, bytes: &[u8], config: &PluginConfig) -> Result<WasmPlugin> {
        validate::binary_kind(bytes).map_err(|e| anyhow!("{source}: {e}"))?;
        let component = {
            let mut compiled = self.compiled.lock().unwrap_or_else(|e| e.into_inner());
            match compiled.get(bytes) {
                Some(component) => component.clone(),
                None => {
                    let (component, _) = self
                        .cache
                        .load(&self.engine, bytes)
                        .map_err(|e| anyhow!("{source}: corrupt or truncated component: {e}"))?;
                    compiled.insert(bytes.to_vec(), component.clone());
                    component
                }
            }
        };
        WasmPlugin::load(&self.engine, &self.linker, source, &component, config)
    }

    /// The plugins embedded in this binary, arranged by `config`: those
    /// [`BUNDLED`] has on by default unless the configuration says
    /// otherwise. A component that does not call itself what [`BUNDLED`]
    /// says is an error: the list and the components cannot drift.
    pub fn bundled(&self, config: &PluginConfig) -> Result<PluginSet> {
        let mut loaded: Vec<(Box<dyn crate::framework::Plugin>, bool)> = Vec::new();
        for (crate_name, bytes) in bundled_plugins() {
            let entry = BUNDLED
                .iter()
                .find(|b| b.crate_name == *crate_name)
                .ok_or_else(|| anyhow!("bundled crate {crate_name} has no entry in BUNDLED"))?;
            let plugin = self.load(&format!("bundled:{crate_name}"), bytes, config)?;
            if plugin.name() != entry.name {
                bail!(
                    "bundled crate {crate_name} calls itself {}, but BUNDLED says {}",
                    plugin.name(),
                    entry.name
                );
            }
            loaded.push((Box::new(plugin), entry.on_by_default));
        }
        assemble(config, loaded)
    }

    /// Every `*.wasm` file in `dir`, in file-name order, arranged by
    /// `config` (each on unless it says otherwise).
    pub fn from_dir(&self, dir: &Path, config: &PluginConfig) -> Result<PluginSet> {
        let entries = std::fs::read_dir(dir)
            .with_context(|| format!("{}: cannot read plugin directory", dir.display()))?;
        let mut files: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect();
        files.sort();
        if files.is_empty() {
            bail!(
                "{}: no *.wasm plugin components in this directory",
                dir.display()
            );
        }
        let mut loaded: Vec<(Box<dyn crate::framework::Plugin>, bool)> = Vec::new();
        for file in files {
            let bytes =
                std::fs::read(&file).with_context(|| format!("{}: cannot read", file.display()))?;
            let plugin = self.load(&file.display().to_string(), &bytes, config)?;
            loaded.push((Box::new(plugin), true));
        }
        assemble(config, loaded)
    }
}

/// One component embedded in this binary.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundledPlugin {
    /// The name its component calls itself (and configurations call it).
    pub name: &'static str,
    /// Its crate under `plugins/`.
    #[serde(rename = "crate")]
    pub crate_name: &'static str,
    /// Whether it runs unless the configuration disables it.
    pub on_by_default: bool,
}

/// The bundled plugins in load order (their crates' name order, as
/// [`bundled_plugins`]): the one list of their names and defaults, handed
/// to kube-scheduler through the C ABI (`wasched_bundled`). Off by
/// default: node plugins that change where pods go, and the
/// taint-toleration model plugin (the host runs those checks natively);
/// a configuration turns them on with `multiPoint.enabled`.
pub const BUNDLED: [BundledPlugin; 6] = [
    BundledPlugin {
        name: "WaschedGangScheduling",
        crate_name: "gang-permit",
        on_by_default: true,
    },
    BundledPlugin {
        name: "WaschedGpuBinPacking",
        crate_name: "gpu-binpack",
        on_by_default: false,
    },
    BundledPlugin {
        name: "WaschedTaintToleration",
        crate_name: "taint-toleration",
        on_by_default: false,
    },
    BundledPlugin {
        name: "WaschedTeamGpuIsolation",
        crate_name: "team-gpu-isolation",
        on_by_default: false,
    },
    BundledPlugin {
        name: "WaschedTopologyPlacement",
        crate_name: "topology-placement",
        on_by_default: true,
    },
    BundledPlugin {
        name: "WaschedWorkloadPreemption",
        crate_name: "workload-preemption",
        on_by_default: true,
    },
];

/// The set `config` arranges from `loaded`, with its notes.
fn assemble(
    config: &PluginConfig,
    loaded: Vec<(Box<dyn crate::framework::Plugin>, bool)>,
) -> Result<PluginSet> {
    let (mut set, notes) = config.assemble(loaded)?;
    for note in notes {
        set.note(note);
    }
    Ok(set)
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until the engine is dropped.
fn spawn_epoch_ticker(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("wasched-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch ticker thread");
}
