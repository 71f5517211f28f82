//! One loaded plugin component: validated at load, instantiated once and
//! reused, re-instantiated after a trap; every call bounded.

use std::fmt;

use anyhow::{Context, Result, anyhow, bail};
use wasmtime::component::{Component, Instance, InstancePre, Linker, Resource};
use wasmtime::{Engine, Store};

use super::bindings::{PACKAGE, PACKAGE_VERSION};
use super::state::{HostState, LogBudget, SnapshotHandle};
use super::{EPOCH_TICK, calls, contract_v0_1, contract_v0_2};
use crate::config::{PluginConfig, PluginSettings};
use crate::framework::{ExtensionPoint, FailureCause, LogDrops, LogLine, PluginError};
use crate::model::Snapshot;

/// The contract versions this host loads: the current one, and older ones
/// through an adapter.
pub const SUPPORTED_VERSIONS: [&str; 3] = [
    PACKAGE_VERSION,
    contract_v0_2::VERSION,
    contract_v0_1::VERSION,
];

/// Export lookups of a component, by the contract version it was built against.
pub(super) enum VersionIndices {
    /// `wasched:scheduler@0.3.0`.
    Current(calls::Indices),
    /// `wasched:scheduler@0.2.0`, adapted.
    V0_2(contract_v0_2::Indices),
    /// `wasched:scheduler@0.1.0`, adapted.
    V0_1(contract_v0_1::Indices),
}

/// The typed exports of a live instance, by contract version.
pub(super) enum VersionExports {
    /// `wasched:scheduler@0.3.0`.
    Current(calls::Exports),
    /// `wasched:scheduler@0.2.0`, adapted.
    V0_2(contract_v0_2::Exports),
    /// `wasched:scheduler@0.1.0`, adapted.
    V0_1(contract_v0_1::Exports),
}

struct Live {
    store: Store<HostState>,
    exports: VersionExports,
}

/// A plugin component ready to be called.
pub struct WasmPlugin {
    name: String,
    source: String,
    version: &'static str,
    points: Vec<ExtensionPoint>,
    settings: PluginSettings,
    pre: InstancePre<HostState>,
    indices: VersionIndices,
    live: Option<Live>,
    logs: Vec<LogLine>,
    drops: LogDrops,
    /// Log bytes the plugin may still write in this run.
    run_log_bytes: u64,
    /// The empty snapshot that stands in the caller's place during a call.
    spare: Option<Snapshot>,
}

impl fmt::Debug for WasmPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WasmPlugin")
            .field("name", &self.name)
            .field("source", &self.source)
            .field("version", &self.version)
            .field("points", &self.points)
            .finish()
    }
}

/// The contract version a component was built against, and the interfaces
/// of the package it exports. Every import and export of the package must
/// name one supported version; anything outside the package is refused.
fn package_interfaces(
    component: &Component,
    engine: &Engine,
    source: &str,
) -> Result<(&'static str, Vec<String>)> {
    let ty = component.component_type();
    let mut version: Option<&'static str> = None;
    let mut check = |interface: &str, found: &str| -> Result<()> {
        let Some(supported) = SUPPORTED_VERSIONS.iter().find(|v| **v == found) else {
            bail!(
                "{source}: built against {PACKAGE}@{found} ({interface}), but this host implements {PACKAGE}@{PACKAGE_VERSION} (and loads {})",
                SUPPORTED_VERSIONS[1..]
                    .iter()
                    .map(|v| format!("{PACKAGE}@{v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        };
        match version {
            Some(v) if v != *supported => bail!(
                "{source}: mixes {PACKAGE}@{v} and @{supported} ({interface}); a component is built against one version"
            ),
            _ => version = Some(supported),
        }
        Ok(())
    };
    for (name, _) in ty.imports(engine) {
        let (interface, found) = split_interface(name)
            .ok_or_else(|| anyhow!("{source}: imports {name}, which this host does not provide (plugins may import only {PACKAGE} interfaces)"))?;
        check(&interface, &found)?;
    }
    let mut interfaces = Vec::new();
    for (name, _) in ty.exports(engine) {
        let Some((interface, found)) = split_interface(name) else {
            continue;
        };
        check(&interface, &found)?;
        interfaces.push(interface);
    }
    Ok((version.unwrap_or(PACKAGE_VERSION), interfaces))
}

/// `wasched:scheduler/permit@0.2.0` → (`permit`, `0.2.0`).
fn split_interface(name: &str) -> Option<(String, String)> {
    let rest = name.strip_prefix(PACKAGE)?.strip_prefix('/')?;
    let (interface, version) = rest.split_once('@').unwrap_or((rest, ""));
    Some((interface.to_string(), version.to_string()))
}

impl WasmPlugin {
    /// Validates, instantiates and configures a compiled component.
    /// `source` names it in messages (a file path or `bundled:<name>`); its
    /// bounds, failure policy, caps and args come from `config` under the
    /// name the plugin gives itself.
    pub fn load(
        engine: &Engine,
        linker: &Linker<HostState>,
        source: &str,
        component: &Component,
        config: &PluginConfig,
    ) -> Result<WasmPlugin> {
        let (version, interfaces) = package_interfaces(component, engine, source)?;
        if !interfaces.iter().any(|i| i == "plugin") {
            bail!("{source}: does not export {PACKAGE}/plugin@{version}; is it a wasched plugin?");
        }
        let mut points: Vec<ExtensionPoint> = ExtensionPoint::ALL
            .into_iter()
            .filter(|p| interfaces.iter().any(|i| i == p.interface()))
            .collect();
        if version == contract_v0_1::VERSION {
            points.retain(|p| contract_v0_1::ADAPTED.contains(p));
        }
        if points.is_empty() {
            bail!(
                "{source}: exports no extension point this host calls ({})",
                ExtensionPoint::ALL.map(|p| p.interface()).join(", ")
            );
        }
        let pre = linker
            .instantiate_pre(component)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("{source}: cannot link"))?;
        let indices = if version == contract_v0_1::VERSION {
            VersionIndices::V0_1(contract_v0_1::Indices::new(&pre, &points)?)
        } else if version == contract_v0_2::VERSION {
            VersionIndices::V0_2(contract_v0_2::Indices::new(&pre, &points)?)
        } else {
            VersionIndices::Current(calls::Indices::new(&pre, &points)?)
        };
        let mut plugin = WasmPlugin {
            name: String::new(),
            source: source.to_string(),
            version,
            points,
            settings: config.loosest(),
            pre,
            indices,
            live: None,
            logs: Vec::new(),
            drops: LogDrops::default(),
            run_log_bytes: 0,
            spare: None,
        };
        // The first instance tells the plugin's name, which selects its
        // settings; the instance that serves calls is made under them.
        plugin
            .instantiate()
            .map_err(|e| anyhow!("{source}: {e:#}"))?;
        plugin.settings = config.settings(&plugin.name);
        plugin.run_log_bytes = plugin.settings.limits.log_bytes_per_run;
        let live = plugin
            .instantiate()
            .map_err(|e| anyhow!("{source}: {e:#}"))?;
        plugin.live = Some(live);
        Ok(plugin)
    }

    /// The contract version the component was built against.
    pub fn version(&self) -> &'static str {
        self.version
    }

    /// The bounds and policy it runs under.
    pub fn settings(&self) -> &PluginSettings {
        &self.settings
    }

    pub(super) fn name_str(&self) -> &str {
        &self.name
    }

    pub(super) fn source_str(&self) -> &str {
        &self.source
    }

    pub(super) fn point_list(&self) -> &[ExtensionPoint] {
        &self.points
    }

    pub(super) fn take_log_lines(&mut self) -> Vec<LogLine> {
        std::mem::take(&mut self.logs)
    }

    pub(super) fn dropped(&self) -> LogDrops {
        self.drops
    }

    pub(super) fn restart_run(&mut self) {
        self.run_log_bytes = self.settings.limits.log_bytes_per_run;
        self.drops = LogDrops::default();
    }

    /// Arms the per-call bounds: a fresh fuel budget, wall-clock deadline
    /// and log budget.
    fn arm(&self, store: &mut Store<HostState>) -> Result<()> {
        store.set_fuel(self.settings.fuel)?;
        let ticks = self
            .settings
            .timeout
            .as_micros()
            .div_ceil(EPOCH_TICK.as_micros());
        store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
        let limits = &self.settings.limits;
        let state = store.data_mut();
        state.budget = LogBudget {
            lines: limits.log_lines_per_call,
            bytes: limits.log_bytes_per_call.min(self.run_log_bytes),
        };
        state.dropped = LogDrops::default();
        state.panic = None;
        state.host_work = 0;
        Ok(())
    }

    fn instantiate(&mut self) -> Result<Live> {
        let state = HostState {
            memory_limit: self.settings.memory_limit,
            wasm_limits: self.settings.wasm_limits,
            ..HostState::default()
        };
        let mut store = Store::new(self.pre.engine(), state);
        store.limiter(|state| state);
        store.call_hook(|store, hook| match hook {
            wasmtime::CallHook::ReturningFromHost => charge_host_work(store),
            _ => Ok(()),
        });
        self.arm(&mut store)?;
        let instance: Instance = self
            .pre
            .instantiate(&mut store)
            .map_err(anyhow::Error::from)
            .with_context(|| {
                let limits = &self.settings.wasm_limits;
                format!(
                    "instantiation failed (wasmLimits: {} instances, {} memories, {} tables of {} elements; memoryLimit {})",
                    limits.instances,
                    limits.memories,
                    limits.tables,
                    limits.table_elements,
                    format_bytes(self.settings.memory_limit)
                )
            })?;
        let exports = match &self.indices {
            VersionIndices::Current(i) => VersionExports::Current(i.load(&mut store, &instance)?),
            VersionIndices::V0_2(i) => VersionExports::V0_2(i.load(&mut store, &instance)?),
            VersionIndices::V0_1(i) => VersionExports::V0_1(i.load(&mut store, &instance)?),
        };
        let name = match &exports {
            VersionExports::Current(e) => e.plugin.call_name(&mut store),
            VersionExports::V0_2(e) => e.plugin.call_name(&mut store),
            VersionExports::V0_1(e) => e.plugin.call_name(&mut store),
        }
        .map_err(|e| {
            anyhow!(
                "plugin.name failed: {}",
                describe_failure(&e, store.data(), &self.settings).1
            )
        })?;
        let mut name = name;
        crate::framework::answers::cut_text(&mut name, self.settings.limits.name_bytes);
        if self.name.is_empty() {
            self.name = name;
        } else if self.name != name {
            bail!(
                "plugin {} renamed itself to {name} after re-instantiation",
                self.name
            );
        }
        let configured = match &exports {
            VersionExports::Current(e) => e.plugin.call_configure(&mut store, &self.settings.args),
            VersionExports::V0_2(e) => e.plugin.call_configure(&mut store, &self.settings.args),
            VersionExports::V0_1(e) => e.plugin.call_configure(&mut store, &self.settings.args),
        };
        configured
            .map_err(|e| {
                anyhow!(
                    "plugin.configure failed: {}",
                    describe_failure(&e, store.data(), &self.settings).1
                )
            })?
            .map_err(|mut e| {
                crate::framework::answers::cut_text(&mut e, self.settings.limits.reason_bytes);
                anyhow!("plugin {} refused its args: {e}", self.name)
            })?;
        Ok(Live { store, exports })
    }

    /// Calls the guest at `point` with the snapshot lent to it. `call` gets
    /// the exports, the store and a borrow handle for the snapshot. A trap
    /// discards the instance and is returned as a [`PluginError`].
    pub(super) fn call<R>(
        &mut self,
        snapshot: &mut Snapshot,
        point: ExtensionPoint,
        call: impl FnOnce(
            &VersionExports,
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
        let Live { store, exports } = &mut live;
        // The caller's place holds an empty snapshot kept for the purpose
        // while the real one is lent: nothing is built per call. The lent
        // snapshot goes back on every exit, a panic's unwinding included.
        let placeholder = self.spare.take().unwrap_or_default();
        let lent = Lent::new(snapshot, store, placeholder);
        let result = armed.map_err(wasmtime::Error::from_anyhow).and_then(|()| {
            let store = &mut *lent.store;
            let handle = store.data_mut().table.push(SnapshotHandle)?;
            let borrow = Resource::new_borrow(handle.rep());
            let result = call(exports, store, borrow);
            store.data_mut().table.delete(handle)?;
            result
        });
        self.spare = Some(lent.give_back());
        let data = live.store.data_mut();
        let used: u64 = data.logs.iter().map(|l| l.message.len() as u64).sum();
        self.run_log_bytes = self.run_log_bytes.saturating_sub(used);
        self.logs.append(&mut data.logs);
        self.drops.lines += data.dropped.lines;
        self.drops.bytes += data.dropped.bytes;
        match result {
            Ok(value) => {
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
    pub(super) fn error(
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

/// The caller's snapshot, lent to a store for one call: [`Lent::give_back`]
/// returns it (and hands back the placeholder that stood in its place); if
/// the call unwinds instead, dropping the guard puts it back all the same.
struct Lent<'a> {
    caller: &'a mut Snapshot,
    store: &'a mut Store<HostState>,
}

impl<'a> Lent<'a> {
    fn new(
        caller: &'a mut Snapshot,
        store: &'a mut Store<HostState>,
        placeholder: Snapshot,
    ) -> Self {
        store.data_mut().snapshot = Some(std::mem::replace(caller, placeholder));
        Lent { caller, store }
    }

    /// Puts the snapshot back in the caller's place; the placeholder.
    fn give_back(mut self) -> Snapshot {
        self.restore()
            .expect("the lent snapshot stays in the store until given back")
    }

    fn restore(&mut self) -> Option<Snapshot> {
        let lent = self.store.data_mut().snapshot.take()?;
        Some(std::mem::replace(self.caller, lent))
    }
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        self.restore();
    }
}

/// Takes the host work a host call did for the guest from the guest's fuel
/// (see [`HostState::charge`]); a guest without the fuel for it traps with
/// `OutOfFuel`, as if it had done the work itself.
fn charge_host_work(mut store: wasmtime::StoreContextMut<'_, HostState>) -> wasmtime::Result<()> {
    let work = std::mem::take(&mut store.data_mut().host_work);
    if work == 0 {
        return Ok(());
    }
    let fuel = store.get_fuel()?;
    if fuel < work {
        store.set_fuel(0)?;
        return Err(wasmtime::Trap::OutOfFuel.into());
    }
    store.set_fuel(fuel - work)
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
        Some(trap) => match &state.panic {
            Some(message) => (FailureCause::Trap, format!("panicked ({message})")),
            None => (FailureCause::Trap, format!("trapped ({trap})")),
        },
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
            split_interface("wasched:scheduler/permit@0.2.0"),
            Some(("permit".into(), "0.2.0".into()))
        );
        assert_eq!(split_interface("wasi:cli/environment@0.2.6"), None);
        assert_eq!(split_interface("wasched:schedulerx/permit@0.1.0"), None);
    }
}
