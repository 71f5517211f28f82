//! The wasm side of the host: one [`Runtime`] (engine + linker) loads plugin
//! components; a [`PluginSet`] holds them in configuration order and calls
//! them at their extension points.

mod bindings;
mod calls;
mod plugin;
mod state;
pub mod validate;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine};

pub use bindings::types::{Code, Status};
pub use bindings::{PACKAGE, PACKAGE_VERSION};
pub use plugin::{ExtensionPoint, FailureCause, Plugin, PluginError};
pub use state::{HostState, LogLine};
pub use validate::{NodeRejection, Placement};

use crate::config::PluginConfig;

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

/// The wasmtime engine and the linker that provides the `wasched:scheduler`
/// imports; one per process.
pub struct Runtime {
    engine: Engine,
    linker: Linker<HostState>,
}

impl Runtime {
    /// Configures the engine and links the host side of the `cluster` and
    /// `log` interfaces. Nothing else (no WASI) is linked: a plugin that
    /// imports anything else is refused at load.
    pub fn new() -> Result<Self> {
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
        let engine = Engine::new(&config)?;
        spawn_epoch_ticker(&engine);
        let mut linker = Linker::new(&engine);
        bindings::ExtensionHost::add_to_linker::<HostState, HasSelf<HostState>>(
            &mut linker,
            |state| state,
        )?;
        Ok(Self { engine, linker })
    }

    /// Loads one component under `config`; `source` names it in messages.
    pub fn load(&self, source: &str, bytes: &[u8], config: &PluginConfig) -> Result<Plugin> {
        Plugin::load(&self.engine, &self.linker, source, bytes, config)
    }
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

/// Loaded plugins in configuration order.
#[derive(Debug, Default)]
pub struct PluginSet {
    plugins: Vec<Plugin>,
}

impl PluginSet {
    /// The plugins embedded in this binary.
    pub fn bundled(runtime: &Runtime, config: &PluginConfig) -> Result<Self> {
        let mut set = Self::default();
        for (name, bytes) in bundled_plugins() {
            set.add(runtime.load(&format!("bundled:{name}"), bytes, config)?)?;
        }
        set.check_config(config)?;
        Ok(set)
    }

    /// Every `*.wasm` file in `dir`, in file-name order.
    pub fn from_dir(runtime: &Runtime, dir: &Path, config: &PluginConfig) -> Result<Self> {
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
        let mut set = Self::default();
        for file in files {
            let bytes =
                std::fs::read(&file).with_context(|| format!("{}: cannot read", file.display()))?;
            set.add(runtime.load(&file.display().to_string(), &bytes, config)?)?;
        }
        set.check_config(config)?;
        Ok(set)
    }

    /// Every plugin the configuration names must be loaded: a typo must not
    /// silently leave a plugin under default settings.
    fn check_config(&self, config: &PluginConfig) -> Result<()> {
        for name in config.configured_names() {
            if !self.plugins.iter().any(|p| p.name() == name) {
                let loaded: Vec<&str> = self.plugins.iter().map(Plugin::name).collect();
                bail!(
                    "the configuration names plugin {name}, but no loaded plugin has that name (loaded: {})",
                    loaded.join(", ")
                );
            }
        }
        Ok(())
    }

    /// Appends a plugin; names must be unique.
    pub fn add(&mut self, plugin: Plugin) -> Result<()> {
        if let Some(other) = self.plugins.iter().find(|p| p.name() == plugin.name()) {
            bail!(
                "{}: plugin name {} is already used by {}",
                plugin.source(),
                plugin.name(),
                other.source()
            );
        }
        self.plugins.push(plugin);
        Ok(())
    }

    /// All plugins, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Plugin> {
        self.plugins.iter()
    }

    /// Mutable access to the plugins implementing `point`, in order.
    pub fn at(&mut self, point: ExtensionPoint) -> impl Iterator<Item = &mut Plugin> {
        self.plugins.iter_mut().filter(move |p| p.implements(point))
    }

    /// Whether any plugin implements `point`.
    pub fn any_at(&self, point: ExtensionPoint) -> bool {
        self.plugins.iter().any(|p| p.implements(point))
    }

    /// Takes every plugin's log lines, prefixed with the plugin's name.
    pub fn drain_logs(&mut self) -> Vec<(String, LogLine)> {
        let mut lines = Vec::new();
        for plugin in &mut self.plugins {
            let name = plugin.name().to_string();
            lines.extend(plugin.drain_logs().into_iter().map(|l| (name.clone(), l)));
        }
        lines
    }
}
