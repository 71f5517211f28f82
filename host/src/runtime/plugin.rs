//! One loaded plugin component: validated at load, instantiated once and
//! reused, re-instantiated after a trap.

use std::fmt;

use anyhow::{Context, Result, anyhow, bail};
use wasmtime::component::{Component, Instance, InstancePre, Linker, Resource};
use wasmtime::{Engine, Store};

use super::bindings::{PACKAGE, PACKAGE_VERSION, guest};
use super::state::{HostState, SnapshotHandle};
use super::{EPOCH_TICK, validate};
use crate::config::{FailurePolicy, PluginConfig, PluginSettings};
use crate::snapshot::Snapshot;

/// A kube-scheduler extension point a component can implement, named after
/// the WIT interface that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ExtensionPoint {
    /// `pre-enqueue`.
    PreEnqueue,
    /// `filter`.
    Filter,
    /// `score`.
    Score,
    /// `permit`.
    Permit,
    /// `placement-generate`.
    PlacementGenerate,
    /// `placement-score`.
    PlacementScore,
    /// `pod-group-post-filter`.
    PodGroupPostFilter,
}

impl ExtensionPoint {
    /// Every extension point, in cycle order.
    pub const ALL: [ExtensionPoint; 7] = [
        Self::PreEnqueue,
        Self::PlacementGenerate,
        Self::Filter,
        Self::Score,
        Self::Permit,
        Self::PlacementScore,
        Self::PodGroupPostFilter,
    ];

    /// The WIT interface name.
    pub fn interface(self) -> &'static str {
        match self {
            Self::PreEnqueue => "pre-enqueue",
            Self::Filter => "filter",
            Self::Score => "score",
            Self::Permit => "permit",
            Self::PlacementGenerate => "placement-generate",
            Self::PlacementScore => "placement-score",
            Self::PodGroupPostFilter => "pod-group-post-filter",
        }
    }
}

impl fmt::Display for ExtensionPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.interface())
    }
}

/// Why a plugin call did not return a usable answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FailureCause {
    /// Ran out of fuel (the deterministic CPU budget).
    Cpu,
    /// Passed its wall-clock deadline.
    Timeout,
    /// Tried to grow its memory past the limit.
    Memory,
    /// Overflowed the wasm call stack.
    Stack,
    /// Panicked or hit another trap.
    Trap,
    /// Returned an answer that breaks the contract (unknown node, bad score, ...).
    InvalidResult,
    /// Could not be re-instantiated after an earlier failure.
    Instantiation,
}

impl FailureCause {
    /// The `cause` label of `wasched_plugin_errors_total`.
    pub fn label(self) -> &'static str {
        match self {
            Self::Cpu => "cpu",
            Self::Timeout => "timeout",
            Self::Memory => "memory",
            Self::Stack => "stack",
            Self::Trap => "trap",
            Self::InvalidResult => "invalid-result",
            Self::Instantiation => "instantiation",
        }
    }
}

/// A plugin call that did not return a usable answer. A trapped instance is
/// discarded; the next call re-creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginError {
    /// The plugin's name.
    pub plugin: String,
    /// Where it failed.
    pub point: ExtensionPoint,
    /// The kind of failure.
    pub cause: FailureCause,
    /// What happened, for people (`exceeded its CPU budget of 1000 fuel`).
    pub message: String,
    /// The plugin's failure policy.
    pub policy: FailurePolicy,
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "plugin {}: {} in {}",
            self.plugin, self.message, self.point
        )
    }
}

/// Export lookups resolved once per component.
struct Indices {
    plugin: guest::plugin::GuestIndices,
    pre_enqueue: Option<guest::pre_enqueue::GuestIndices>,
    filter: Option<guest::filter::GuestIndices>,
    score: Option<guest::score::GuestIndices>,
    permit: Option<guest::permit::GuestIndices>,
    placement_generate: Option<guest::placement_generate::GuestIndices>,
    placement_score: Option<guest::placement_score::GuestIndices>,
    pod_group_post_filter: Option<guest::pod_group_post_filter::GuestIndices>,
}

/// The typed exports of one live instance.
pub struct Exports {
    /// `plugin`.
    pub plugin: guest::plugin::Guest,
    /// `pre-enqueue`, if exported.
    pub pre_enqueue: Option<guest::pre_enqueue::Guest>,
    /// `filter`, if exported.
    pub filter: Option<guest::filter::Guest>,
    /// `score`, if exported.
    pub score: Option<guest::score::Guest>,
    /// `permit`, if exported.
    pub permit: Option<guest::permit::Guest>,
    /// `placement-generate`, if exported.
    pub placement_generate: Option<guest::placement_generate::Guest>,
    /// `placement-score`, if exported.
    pub placement_score: Option<guest::placement_score::Guest>,
    /// `pod-group-post-filter`, if exported.
    pub pod_group_post_filter: Option<guest::pod_group_post_filter::Guest>,
}

struct Live {
    store: Store<HostState>,
    exports: Exports,
}

/// A plugin component ready to be called.
pub struct Plugin {
    name: String,
    source: String,
    points: Vec<ExtensionPoint>,
    settings: PluginSettings,
    pre: InstancePre<HostState>,
    indices: Indices,
    live: Option<Live>,
    logs: Vec<super::state::LogLine>,
}

impl fmt::Debug for Plugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plugin")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("points", &self.points)
            .finish()
    }
}

/// Names of the interfaces of this package a component exports, checking
/// their version; plus anything else it exports or imports that the host
/// does not provide.
fn package_interfaces(component: &Component, engine: &Engine, source: &str) -> Result<Vec<String>> {
    let ty = component.component_type();
    for (name, _) in ty.imports(engine) {
        let (interface, version) = split_interface(name)
            .ok_or_else(|| anyhow!("{source}: imports {name}, which this host does not provide (plugins may import only {PACKAGE} interfaces)"))?;
        check_version(source, &interface, &version)?;
    }
    let mut interfaces = Vec::new();
    for (name, _) in ty.exports(engine) {
        let Some((interface, version)) = split_interface(name) else {
            continue;
        };
        check_version(source, &interface, &version)?;
        interfaces.push(interface);
    }
    Ok(interfaces)
}

fn check_version(source: &str, interface: &str, version: &str) -> Result<()> {
    if version != PACKAGE_VERSION {
        bail!(
            "{source}: built against {PACKAGE}@{version} ({interface}), but this host implements {PACKAGE}@{PACKAGE_VERSION}"
        );
    }
    Ok(())
}

/// `wasched:scheduler/permit@0.1.0` → (`permit`, `0.1.0`).
fn split_interface(name: &str) -> Option<(String, String)> {
    let rest = name.strip_prefix(PACKAGE)?.strip_prefix('/')?;
    let (interface, version) = rest.split_once('@').unwrap_or((rest, ""));
    Some((interface.to_string(), version.to_string()))
}

impl Plugin {
    /// Compiles, validates, instantiates and configures a component.
    /// `source` names it in messages (a file path or `bundled:<name>`); its
    /// bounds, failure policy and args come from `config` under the name the
    /// plugin gives itself.
    pub fn load(
        engine: &Engine,
        linker: &Linker<HostState>,
        source: &str,
        bytes: &[u8],
        config: &PluginConfig,
    ) -> Result<Plugin> {
        validate::binary_kind(bytes).map_err(|e| anyhow!("{source}: {e}"))?;
        let component = Component::new(engine, bytes)
            .map_err(|e| anyhow!("{source}: corrupt or truncated component: {e}"))?;
        let interfaces = package_interfaces(&component, engine, source)?;
        if !interfaces.iter().any(|i| i == "plugin") {
            bail!(
                "{source}: does not export {PACKAGE}/plugin@{PACKAGE_VERSION}; is it a wasched plugin?"
            );
        }
        let points: Vec<ExtensionPoint> = ExtensionPoint::ALL
            .into_iter()
            .filter(|p| interfaces.iter().any(|i| i == p.interface()))
            .collect();
        if points.is_empty() {
            bail!(
                "{source}: exports no extension point ({})",
                ExtensionPoint::ALL.map(|p| p.interface()).join(", ")
            );
        }
        let pre = linker
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{source}: cannot link"))?;
        let has = |p: ExtensionPoint| points.contains(&p);
        let indices = Indices {
            plugin: guest::plugin::GuestIndices::new(&pre)?,
            pre_enqueue: has(ExtensionPoint::PreEnqueue)
                .then(|| guest::pre_enqueue::GuestIndices::new(&pre))
                .transpose()?,
            filter: has(ExtensionPoint::Filter)
                .then(|| guest::filter::GuestIndices::new(&pre))
                .transpose()?,
            score: has(ExtensionPoint::Score)
                .then(|| guest::score::GuestIndices::new(&pre))
                .transpose()?,
            permit: has(ExtensionPoint::Permit)
                .then(|| guest::permit::GuestIndices::new(&pre))
                .transpose()?,
            placement_generate: has(ExtensionPoint::PlacementGenerate)
                .then(|| guest::placement_generate::GuestIndices::new(&pre))
                .transpose()?,
            placement_score: has(ExtensionPoint::PlacementScore)
                .then(|| guest::placement_score::GuestIndices::new(&pre))
                .transpose()?,
            pod_group_post_filter: has(ExtensionPoint::PodGroupPostFilter)
                .then(|| guest::pod_group_post_filter::GuestIndices::new(&pre))
                .transpose()?,
        };
        let mut plugin = Plugin {
            name: String::new(),
            source: source.to_string(),
            points,
            settings: config.settings(""),
            pre,
            indices,
            live: None,
            logs: Vec::new(),
        };
        // The first instance tells the plugin's name, which selects its
        // settings; the instance that serves calls is made under them.
        plugin
            .instantiate()
            .map_err(|e| anyhow!("{source}: {e:#}"))?;
        plugin.settings = config.settings(&plugin.name);
        let live = plugin
            .instantiate()
            .map_err(|e| anyhow!("{source}: {e:#}"))?;
        plugin.live = Some(live);
        Ok(plugin)
    }

    /// The name the plugin gave itself (`plugin.name`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where it was loaded from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The extension points it implements, in cycle order.
    pub fn points(&self) -> &[ExtensionPoint] {
        &self.points
    }

    /// Whether it implements `point`.
    pub fn implements(&self, point: ExtensionPoint) -> bool {
        self.points.contains(&point)
    }

    /// The bounds and policy it runs under.
    pub fn settings(&self) -> &PluginSettings {
        &self.settings
    }

    /// Takes the lines the plugin logged since the last call.
    pub fn drain_logs(&mut self) -> Vec<super::state::LogLine> {
        std::mem::take(&mut self.logs)
    }

    /// Arms the per-call bounds: a fresh fuel budget and wall-clock deadline.
    fn arm(&self, store: &mut Store<HostState>) -> Result<()> {
        store.set_fuel(self.settings.fuel)?;
        let ticks = self
            .settings
            .timeout
            .as_micros()
            .div_ceil(EPOCH_TICK.as_micros());
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        Ok(())
    }

    fn instantiate(&mut self) -> Result<Live> {
        let state = HostState {
            memory_limit: self.settings.memory_limit,
            ..HostState::default()
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| state);
        self.arm(&mut store)?;
        let instance: Instance = self
            .pre
            .instantiate(&mut store)
            .map_err(anyhow::Error::from)
            .context("instantiation failed")?;
        let i = &self.indices;
        let exports = Exports {
            plugin: i.plugin.load(&mut store, &instance)?,
            pre_enqueue: i
                .pre_enqueue
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            filter: i
                .filter
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            score: i
                .score
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            permit: i
                .permit
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            placement_generate: i
                .placement_generate
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            placement_score: i
                .placement_score
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
            pod_group_post_filter: i
                .pod_group_post_filter
                .as_ref()
                .map(|x| x.load(&mut store, &instance))
                .transpose()?,
        };
        let name = exports.plugin.call_name(&mut store).map_err(|e| {
            anyhow!(
                "plugin.name failed: {}",
                describe_failure(&e, store.data(), &self.settings).1
            )
        })?;
        if self.name.is_empty() {
            self.name = name;
        } else if self.name != name {
            bail!(
                "plugin {} renamed itself to {name} after re-instantiation",
                self.name
            );
        }
        exports
            .plugin
            .call_configure(&mut store, &self.settings.args)
            .map_err(|e| {
                anyhow!(
                    "plugin.configure failed: {}",
                    describe_failure(&e, store.data(), &self.settings).1
                )
            })?
            .map_err(|e| anyhow!("plugin {} refused its args: {e}", self.name))?;
        Ok(Live { store, exports })
    }

    /// Calls the guest at `point` with the snapshot lent to it. `call` gets
    /// the exports, the store and a borrow handle for the snapshot. A trap
    /// discards the instance and is returned as a [`PluginError`].
    pub fn call<R>(
        &mut self,
        snapshot: &mut Snapshot,
        point: ExtensionPoint,
        call: impl FnOnce(
            &Exports,
            &mut Store<HostState>,
            Resource<SnapshotHandle>,
        ) -> wasmtime::Result<R>,
    ) -> Result<R, PluginError> {
        let mut live = match self.live.take() {
            Some(live) => live,
            None => self.instantiate().map_err(|e| {
                self.error(
                    point,
                    FailureCause::Instantiation,
                    format!("cannot be re-instantiated ({e:#})"),
                )
            })?,
        };
        let armed = self.arm(&mut live.store);
        let data = live.store.data_mut();
        data.snapshot = Some(std::mem::take(snapshot));
        let handle = data.table.push(SnapshotHandle);
        let result = armed.map_err(wasmtime::Error::from_anyhow).and_then(|()| {
            let handle = handle?;
            let borrow = Resource::new_borrow(handle.rep());
            let result = call(&live.exports, &mut live.store, borrow);
            live.store.data_mut().table.delete(handle)?;
            result
        });
        let data = live.store.data_mut();
        *snapshot = data.snapshot.take().expect("snapshot lent for the call");
        self.logs.append(&mut data.logs.clone());
        match result {
            Ok(value) => {
                live.store.data_mut().logs.clear();
                self.live = Some(live);
                Ok(value)
            }
            Err(e) => {
                let (cause, message) = describe_failure(&e, live.store.data(), &self.settings);
                Err(self.error(point, cause, message))
            }
        }
    }

    /// A [`PluginError`] of this plugin.
    pub fn error(
        &self,
        point: ExtensionPoint,
        cause: FailureCause,
        message: String,
    ) -> PluginError {
        PluginError {
            plugin: self.name.clone(),
            point,
            cause,
            message,
            policy: self.settings.failure_policy,
        }
    }
}

/// Classifies a failed call: which bound it hit, or what trap it raised (a
/// panic's message is taken from the line the SDK logs before trapping).
fn describe_failure(
    error: &wasmtime::Error,
    state: &HostState,
    settings: &PluginSettings,
) -> (FailureCause, String) {
    let trap = error.downcast_ref::<wasmtime::Trap>();
    if state.memory_exceeded {
        let limit = format_bytes(settings.memory_limit);
        return (
            FailureCause::Memory,
            format!("exceeded its memory limit of {limit}"),
        );
    }
    match trap {
        Some(wasmtime::Trap::OutOfFuel) => (
            FailureCause::Cpu,
            format!("exceeded its CPU budget of {} fuel", settings.fuel),
        ),
        Some(wasmtime::Trap::Interrupt) => (
            FailureCause::Timeout,
            format!(
                "exceeded its {} wall-clock budget",
                format_duration(settings.timeout)
            ),
        ),
        Some(wasmtime::Trap::StackOverflow) => (FailureCause::Stack, "overflowed its stack".into()),
        Some(trap) => {
            let panic = state
                .logs
                .iter()
                .rev()
                .find_map(|l| l.message.strip_prefix("panic: "));
            match panic {
                Some(message) => (FailureCause::Trap, format!("panicked ({message})")),
                None => (FailureCause::Trap, format!("trapped ({trap})")),
            }
        }
        None => (FailureCause::Trap, format!("failed ({error:#})")),
    }
}

/// `64Mi`, `1536Ki`, `1000` bytes.
fn format_bytes(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}Mi", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}Ki", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// `1s`, `250ms`.
fn format_duration(duration: std::time::Duration) -> String {
    if duration.subsec_millis() == 0 && duration.as_secs() > 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_split_into_name_and_version() {
        assert_eq!(
            split_interface("wasched:scheduler/permit@0.1.0"),
            Some(("permit".into(), "0.1.0".into()))
        );
        assert_eq!(split_interface("wasi:cli/environment@0.2.6"), None);
        assert_eq!(split_interface("wasched:schedulerx/permit@0.1.0"), None);
    }

    #[test]
    fn other_package_versions_are_refused_by_name() {
        assert!(check_version("p.wasm", "permit", PACKAGE_VERSION).is_ok());
        let err = check_version("p.wasm", "permit", "0.2.0")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "p.wasm: built against wasched:scheduler@0.2.0 (permit), but this host implements wasched:scheduler@0.1.0"
        );
    }
}
