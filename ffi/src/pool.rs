//! One plugin component and its pool of instances.
//!
//! kube-scheduler calls plugins from several goroutines at once (the queue's
//! PreEnqueue beside the scheduling cycle, Filter and Score on parallel
//! workers). A wasmtime store is used by one thread at a time, so each call
//! takes an instance from the pool (making one when all are busy, up to
//! the plugin's `poolSize`, [`DEFAULT_POOL_SIZE`] unless configured) and
//! puts it back after; no store is ever shared. Each instance holds its
//! own linear memory, so the pool's size times the component's memory is
//! what the plugin may hold: a CPython or SpiderMonkey component holds
//! tens of MiB per instance.
//! Every instance runs under the plugin's bounds, and one that failed is
//! re-created by the runtime before its next call.

use std::sync::{Condvar, Mutex};

use anyhow::{Result, anyhow, bail};
use serde::Deserialize;
use wasched::framework::{ExtensionPoint, FailurePolicy};
use wasched::{PluginConfig, PluginSet, Runtime};

use crate::breaker::Breaker;

/// The most instances of one plugin alive at once unless its `poolSize`
/// says otherwise; a call beyond waits.
pub use wasched::config::DEFAULT_POOL_SIZE;

/// How the caller asks for a plugin: the `args` of its `pluginConfig`
/// entry in a `KubeSchedulerConfiguration` (wasched's plugin entry: bounds,
/// failure policy, args), plus where the component is.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Spec {
    /// The name kube-scheduler's configuration gives the plugin; the
    /// component must call itself this. Empty: whatever it calls itself
    /// (to learn a component file's name; a bundled one needs its name).
    #[serde(default)]
    pub name: String,
    /// A component file; absent: the bundled component of that name.
    #[serde(default)]
    pub component: Option<String>,
    /// The `pluginConfig` args (bounds, failure policy, `args`).
    #[serde(default)]
    pub config: serde_json::Value,
}

/// A loaded plugin (see the module documentation).
pub struct Plugin {
    name: String,
    source: String,
    version: String,
    points: Vec<ExtensionPoint>,
    policy: FailurePolicy,
    bytes: Vec<u8>,
    config: PluginConfig,
    idle: Mutex<Pool>,
    freed: Condvar,
    breaker: Breaker,
    pool_size: usize,
}

struct Pool {
    idle: Vec<PluginSet>,
    alive: usize,
}

impl Plugin {
    /// Loads the component `spec` names with its configuration; the first
    /// instance is made now, so a bad file or bad args fail here.
    pub fn load(runtime: &Runtime, spec: Spec) -> Result<Plugin> {
        if spec.name.is_empty() && !spec.config.is_null() {
            bail!("a plugin spec with a configuration must name the plugin");
        }
        let label = if spec.name.is_empty() {
            spec.component.clone().unwrap_or_default()
        } else {
            spec.name.clone()
        };
        let config = PluginConfig::from_plugin_args(
            &spec.name,
            spec.config,
            &format!("pluginConfig[{label}]"),
        )?;
        let (source, bytes) = match &spec.component {
            Some(path) => (
                path.clone(),
                std::fs::read(path).map_err(|e| anyhow!("{path}: cannot read: {e}"))?,
            ),
            None => bundled(&spec.name)?,
        };
        let first = runtime.load(&source, &bytes, &config)?;
        use wasched::framework::Plugin as _;
        if !spec.name.is_empty() && first.name() != spec.name {
            bail!(
                "{source}: the component calls itself {}, but the configuration loads it as {}",
                first.name(),
                spec.name
            );
        }
        let name = first.name().to_string();
        let version = first.version().to_string();
        let points = first.points().to_vec();
        let policy = first.failure_policy();
        let breaker = Breaker::new(first.settings().breaker);
        let pool_size = first.settings().pool_size;
        let mut set = PluginSet::new();
        set.add(Box::new(first))?;
        Ok(Plugin {
            name,
            source,
            version,
            points,
            policy,
            bytes,
            config,
            idle: Mutex::new(Pool {
                idle: vec![set],
                alive: 1,
            }),
            freed: Condvar::new(),
            breaker,
            pool_size,
        })
    }

    /// What the caller needs to know to wire it: name, source, contract
    /// version, extension points, failure policy; and its pool: instances
    /// alive and idle (equal when no call is in flight).
    pub fn info(&self) -> serde_json::Value {
        let (alive, idle) = {
            let pool = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            (pool.alive, pool.idle.len())
        };
        serde_json::json!({
            "instances": {"alive": alive, "idle": idle},
            "name": self.name,
            "source": self.source,
            "contract": self.version,
            "points": self.points.iter().map(|p| p.interface()).collect::<Vec<_>>(),
            "failurePolicy": match self.policy {
                FailurePolicy::Fail => "Fail",
                FailurePolicy::Ignore => "Ignore",
            },
        })
    }

    /// The plugin's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether it implements `point`.
    pub fn implements(&self, point: ExtensionPoint) -> bool {
        self.points.contains(&point)
    }

    /// Its failure policy.
    pub fn policy(&self) -> FailurePolicy {
        self.policy
    }

    /// Its circuit breaker.
    pub fn breaker(&self) -> &Breaker {
        &self.breaker
    }

    /// Runs `call` with an instance of its own. The instance goes back to
    /// the pool on every exit; one whose call unwound (a panic) is
    /// discarded instead, as its store may be half-way through a call, and
    /// its slot freed.
    pub fn with_instance<T>(
        &self,
        runtime: &Runtime,
        call: impl FnOnce(&mut PluginSet) -> T,
    ) -> Result<T> {
        let mut lease = Lease {
            plugin: self,
            set: Some(self.take(runtime)?),
        };
        let set = lease.set.as_mut().expect("a lease holds its instance");
        Ok(call(set))
    }

    fn take(&self, runtime: &Runtime) -> Result<PluginSet> {
        let mut pool = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(set) = pool.idle.pop() {
                return Ok(set);
            }
            if pool.alive < self.pool_size {
                pool.alive += 1;
                drop(pool);
                // The slot is given back unless an instance is made: on an
                // error, and on a panic while instantiating.
                let mut slot = Slot {
                    plugin: self,
                    kept: false,
                };
                let set = runtime
                    .load(&self.source, &self.bytes, &self.config)
                    .and_then(|plugin| {
                        let mut set = PluginSet::new();
                        set.add(Box::new(plugin))?;
                        Ok(set)
                    })?;
                slot.kept = true;
                return Ok(set);
            }
            pool = self.freed.wait(pool).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A slot of a plugin's pool reserved for an instance being made; dropped
/// without `kept`, it is freed.
struct Slot<'p> {
    plugin: &'p Plugin,
    kept: bool,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.kept {
            let mut pool = self.plugin.idle.lock().unwrap_or_else(|e| e.into_inner());
            pool.alive -= 1;
            self.plugin.freed.notify_one();
        }
    }
}

/// An instance taken from a plugin's pool; dropping it returns it.
struct Lease<'p> {
    plugin: &'p Plugin,
    set: Option<PluginSet>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut pool = self.plugin.idle.lock().unwrap_or_else(|e| e.into_inner());
        match self.set.take() {
            Some(set) if !std::thread::panicking() => pool.idle.push(set),
            _ => pool.alive -= 1,
        }
        self.plugin.freed.notify_one();
    }
}

/// The bundled component that calls itself `name`.
fn bundled(name: &str) -> Result<(String, Vec<u8>)> {
    let crate_name = wasched::runtime::BUNDLED
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.crate_name)
        .ok_or_else(|| {
            let names: Vec<&str> = wasched::runtime::BUNDLED.iter().map(|b| b.name).collect();
            anyhow!(
                "no bundled component is called {name} (bundled: {}); give its file as `component`",
                names.join(", ")
            )
        })?;
    let (_, bytes) = wasched::runtime::bundled_plugins()
        .iter()
        .find(|(c, _)| *c == crate_name)
        .ok_or_else(|| anyhow!("bundled component {crate_name} is missing from this build"))?;
    Ok((format!("bundled:{crate_name}"), bytes.to_vec()))
}
