//! Plugin configuration: a `KubeSchedulerConfiguration`
//! (`kubescheduler.config.k8s.io/v1`), the same file for `simulate`,
//! `compare`, `shadow` and kube-scheduler with the components
//! (`--config FILE`).
//!
//! Its profile's `plugins` (enabled/disabled per extension point,
//! `multiPoint`, weights) arrange the plugins ([`profile`]); each wasched
//! plugin's `pluginConfig[].args` holds its sandbox bounds, failure policy,
//! caps and own args ([`args`]). Fields that configure only the
//! kube-scheduler process (`leaderElection`, `clientConnection`, ...) are
//! accepted and noted once; `podInitialBackoffSeconds` and
//! `podMaxBackoffSeconds` are kept for what has a queue
//! ([`PluginConfig::backoff`]); `extenders` are refused. wasched's former
//! `defaults:`/`plugins:` format is refused with a pointer to
//! `wasched config migrate FILE` ([`migrate`]).

pub mod args;
pub mod migrate;
pub mod profile;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};

pub use crate::framework::FailurePolicy;
use crate::framework::OutputLimits;

/// The bounds and policy one plugin runs under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSettings {
    /// On failure: fail the pod/group or skip the plugin.
    pub failure_policy: FailurePolicy,
    /// Fuel per call (deterministic CPU bound).
    pub fuel: u64,
    /// Wall-clock deadline per call.
    pub timeout: Duration,
    /// Cap on the instance's linear memory, in bytes.
    pub memory_limit: u64,
    /// What one instance may define (core instances, memories, tables).
    pub wasm_limits: StoreLimits,
    /// Instances of the component alive at once where calls come from
    /// several threads (kube-scheduler); a call beyond waits.
    pub pool_size: usize,
    /// JSON text for `plugin.configure`.
    pub args: String,
    /// Caps on what the plugin hands the host.
    pub limits: OutputLimits,
    /// When a component running live stops being called for a while.
    pub breaker: BreakerSettings,
}

/// Instances of one component alive at once where calls come from several
/// threads, unless its `poolSize` says otherwise.
pub const DEFAULT_POOL_SIZE: usize = 16;

/// What one instance of a component may define: core module instances,
/// linear memories, tables and table elements (`wasmLimits:`). The
/// defaults hold, with room, a component built by `cargo` (a few core
/// instances), by componentize-py 0.25 (CPython and its libraries linked
/// as separate modules: 38 core instances, 2 tables of at most 5,695
/// elements, 1 memory) and by componentize-js 0.23 (SpiderMonkey: 2
/// tables of at most 7,722 elements, 1 memory); a component that needs
/// more fails to instantiate with the limits it was given in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Core module instances.
    pub instances: usize,
    /// Linear memories, all instances together.
    pub memories: usize,
    /// Tables, all instances together.
    pub tables: usize,
    /// Elements of any one table.
    pub table_elements: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        Self {
            instances: 64,
            memories: 4,
            tables: 8,
            table_elements: 100_000,
        }
    }
}

/// A component's circuit breaker, where it runs live (kube-scheduler):
/// `failures` failed calls (traps, exhausted bounds, invalid answers)
/// within `window` open it; while open, its extension points answer per
/// its failure policy without calling it; after `cool_down` one trial call
/// closes it again if it succeeds, or reopens it. `wasched simulate` and
/// `replay` call every time, so that their runs stay deterministic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BreakerSettings {
    /// Failures within `window` that open the breaker; 0: never opens.
    pub failures: u32,
    /// How far back failures count.
    pub window: Duration,
    /// How long it stays open before a trial call.
    pub cool_down: Duration,
}

impl Default for BreakerSettings {
    /// 5 failures within a minute open it for 30 s.
    fn default() -> Self {
        Self {
            failures: 5,
            window: Duration::from_secs(60),
            cool_down: Duration::from_secs(30),
        }
    }
}

impl Default for PluginSettings {
    fn default() -> Self {
        Self {
            failure_policy: FailurePolicy::Fail,
            fuel: 100_000_000,
            timeout: Duration::from_secs(1),
            memory_limit: 64 << 20,
            wasm_limits: StoreLimits::default(),
            pool_size: DEFAULT_POOL_SIZE,
            args: "{}".into(),
            limits: OutputLimits::default(),
            breaker: BreakerSettings::default(),
        }
    }
}

/// kube-scheduler's queue backoff: a pod that did not fit waits
/// `initial`, doubling per failed attempt, at most `max`
/// (`podInitialBackoffSeconds`, `podMaxBackoffSeconds`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueBackoff {
    /// The first backoff.
    pub initial: Duration,
    /// The longest backoff.
    pub max: Duration,
}

impl Default for QueueBackoff {
    /// kube-scheduler's defaults: 1 s and 10 s.
    fn default() -> Self {
        Self {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(10),
        }
    }
}

/// The bundled plugins' names before contract 0.3.0, and their names now:
/// the old ones collided (`GangScheduling`) or could collide with
/// kube-scheduler's in-tree plugins in one configuration. `config migrate`
/// renames them; a configuration naming one is told the new name.
pub const DEPRECATED_NAMES: [(&str, &str); 4] = [
    ("GangScheduling", "WaschedGangScheduling"),
    ("GpuBinPacking", "WaschedGpuBinPacking"),
    ("TopologyPlacement", "WaschedTopologyPlacement"),
    ("WorkloadPreemption", "WaschedWorkloadPreemption"),
];

/// Settings for every plugin, by the name the plugin gives itself, and the
/// profile that arranges them.
#[derive(Debug, Clone)]
pub struct PluginConfig {
    defaults: PluginSettings,
    plugins: Vec<(String, PluginSettings)>,
    notes: Vec<String>,
    profile: profile::Profile,
    /// `percentageOfNodesToScore` (0: upstream's adaptive default).
    percentage_of_nodes_to_score: u32,
    backoff: Option<QueueBackoff>,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self::uniform(PluginSettings::default())
    }
}

impl PluginConfig {
    /// Reads a configuration file (YAML or JSON).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read config", path.display()))?;
        Self::parse(&text).map_err(|e| anyhow!("{}: {e:#}", path.display()))
    }

    /// Reads the configuration of `--config FILE` and prints its notes to
    /// stderr (`note: FILE: ...`), once; the default without a file. A
    /// run without a queue (`queued` false: a one-instant `simulate` or
    /// `compare`) also notes that the backoff fields have no effect.
    pub fn read_noting(path: Option<&Path>, queued: bool) -> Result<Self> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let config = Self::from_file(path)?;
        let backoff = config.backoff.filter(|_| !queued).map(|_| {
            "podInitialBackoffSeconds and podMaxBackoffSeconds have no effect here: a one-instant run has no queue".to_string()
        });
        for note in config.notes().iter().chain(&backoff) {
            eprintln!("note: {}: {note}", path.display());
        }
        Ok(config)
    }

    /// Parses configuration text (YAML or JSON): a
    /// `KubeSchedulerConfiguration`. An empty text is the default.
    pub fn parse(text: &str) -> Result<Self> {
        let value: serde_json::Value =
            serde_norway::from_str(text).map_err(|e| anyhow!("not valid YAML or JSON: {e}"))?;
        if value.is_null() || value.as_object().is_some_and(|o| o.is_empty()) {
            return Ok(Self::default());
        }
        match value.get("kind").and_then(|k| k.as_str()) {
            Some("KubeSchedulerConfiguration") => Self::from_profile(value),
            _ if migrate::is_former_format(&value) => bail!(
                "this is wasched's former configuration format (defaults:/plugins:), no longer read; `wasched config migrate FILE` prints the equivalent KubeSchedulerConfiguration"
            ),
            Some(kind) => bail!(
                "field kind: {kind}: expected KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1)"
            ),
            None => bail!(
                "field kind: missing: expected a KubeSchedulerConfiguration (apiVersion kubescheduler.config.k8s.io/v1)"
            ),
        }
    }

    /// A `KubeSchedulerConfiguration`: its profile, and the wasched
    /// plugins' `pluginConfig` args.
    fn from_profile(value: serde_json::Value) -> Result<Self> {
        let file: profile::File = deserialize(value, "")?;
        let read = profile::Profile::read(file)?;
        let mut config = Self::uniform(PluginSettings::default());
        for (name, args, path) in read.args {
            config.configure_at(&name, args, &path)?;
        }
        config.profile = read.profile;
        config.percentage_of_nodes_to_score = read.percentage_of_nodes_to_score;
        config.backoff = read.backoff;
        if !read.process_fields.is_empty() {
            config.notes.push(format!(
                "{} configure the kube-scheduler process, not its decisions; wasched does not use them",
                read.process_fields.join(", ")
            ));
        }
        Ok(config)
    }

    /// The configuration of one plugin from the `args` of its
    /// `pluginConfig` entry, as kube-scheduler hands them to an
    /// out-of-tree plugin; `path` names the entry in messages
    /// (`pluginConfig[2]`). Absent args (`null`) are an empty object.
    pub fn from_plugin_args(name: &str, args: serde_json::Value, path: &str) -> Result<Self> {
        let mut config = Self::default();
        config.configure_at(name, args, path)?;
        Ok(config)
    }

    /// Configures plugin `name` as a `pluginConfig` entry with these
    /// `args` does (`{"failurePolicy": "Ignore", "args": {...}}`).
    pub fn configure(mut self, name: &str, args: serde_json::Value) -> Result<Self> {
        self.configure_at(name, args, &format!("pluginConfig[{name}]"))?;
        Ok(self)
    }

    fn configure_at(&mut self, name: &str, args: serde_json::Value, path: &str) -> Result<()> {
        if self.plugins.iter().any(|(n, _)| n == name) {
            bail!("field {path}.name: plugin {name} is configured twice");
        }
        let settings = args::Args::read(args, path)?
            .settings(self.defaults.clone(), &format!("{path}.args"))?;
        self.plugins.push((name.to_string(), settings));
        Ok(())
    }

    /// Enables plugin `name` at every point it implements, as
    /// `multiPoint.enabled` does (a plugin off by default, such as
    /// `WaschedGpuBinPacking`).
    pub fn enable(mut self, name: &str) -> Self {
        let path = format!("plugins.multiPoint.enabled[{name}]");
        self.profile.set_multi_point(name, true, &path);
        self
    }

    /// Disables plugin `name` everywhere, as `multiPoint.disabled` does.
    pub fn disable(mut self, name: &str) -> Self {
        let path = format!("plugins.multiPoint.disabled[{name}]");
        self.profile.set_multi_point(name, false, &path);
        self
    }

    /// Builds the plugin set from every `loaded` plugin (with whether it is
    /// on by default): each name `pluginConfig` gives must be loaded (a
    /// typo must not leave a plugin under default settings); then the ones
    /// the profile arranges, with their weights. The strings are notes for
    /// the user (in-tree plugins named).
    pub fn assemble(
        &self,
        loaded: Vec<(Box<dyn crate::framework::Plugin>, bool)>,
    ) -> Result<(crate::PluginSet, Vec<String>)> {
        let names: Vec<String> = loaded.iter().map(|(p, _)| p.name().to_string()).collect();
        for (name, _) in &self.plugins {
            if !names.iter().any(|l| l == name) {
                let hint = rename_hint(name);
                bail!(
                    "the configuration names plugin {name}{hint}, but no loaded plugin has that name (loaded: {})",
                    names.join(", ")
                );
            }
        }
        let mut set = crate::PluginSet::new();
        set.set_percentage_of_nodes_to_score(self.percentage_of_nodes_to_score);
        let views: Vec<profile::Loaded<'_>> = loaded
            .iter()
            .map(|(p, on)| profile::Loaded {
                name: p.name(),
                points: p.points(),
                on: *on,
            })
            .collect();
        let (plan, notes) = self.profile.plan(&views)?;
        drop(views);
        for (plugin, _) in loaded {
            let serves = plan
                .values()
                .any(|list| list.iter().any(|(n, _)| n == plugin.name()));
            if serves {
                set.add(plugin)?;
            }
        }
        set.arrange(plan)?;
        Ok((set, notes))
    }

    /// The configured `percentageOfNodesToScore` (0: upstream's adaptive
    /// default, also when none is configured).
    pub fn percentage_of_nodes_to_score(&self) -> u32 {
        self.percentage_of_nodes_to_score
    }

    /// Sets `percentageOfNodesToScore` (0..=100; 0: adaptive).
    pub fn set_percentage_of_nodes_to_score(&mut self, percentage: u32) {
        self.percentage_of_nodes_to_score = percentage.min(100);
    }

    /// The queue backoff the file sets (`podInitialBackoffSeconds`,
    /// `podMaxBackoffSeconds`), if it sets one; what has a queue uses
    /// [`QueueBackoff::default`] otherwise.
    pub fn backoff(&self) -> Option<QueueBackoff> {
        self.backoff
    }

    /// What the user should know about the file (fields it sets that
    /// wasched does not use).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// The settings for the plugin named `name`.
    pub fn settings(&self, name: &str) -> PluginSettings {
        self.plugins
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| self.defaults.clone(), |(_, s)| s.clone())
    }

    /// The settings a component is first instantiated under, before it has
    /// told its name: the defaults, with what an instance may be made of
    /// (`memoryLimit`, `wasmLimits`) loosened to the most any entry of the
    /// configuration allows, so that a component configured with more than
    /// the defaults loads; its start, `name` and `configure` still run
    /// under the default fuel and deadline. The instance that serves calls
    /// is made under its own entry's settings.
    pub fn loosest(&self) -> PluginSettings {
        let mut loosest = self.defaults.clone();
        for (_, s) in &self.plugins {
            loosest.memory_limit = loosest.memory_limit.max(s.memory_limit);
            let (l, w) = (&mut loosest.wasm_limits, &s.wasm_limits);
            l.instances = l.instances.max(w.instances);
            l.memories = l.memories.max(w.memories);
            l.tables = l.tables.max(w.tables);
            l.table_elements = l.table_elements.max(w.table_elements);
        }
        loosest
    }

    /// The same settings for every plugin (tests, benchmarks).
    pub fn uniform(settings: PluginSettings) -> Self {
        Self {
            defaults: settings,
            plugins: Vec::new(),
            notes: Vec::new(),
            profile: profile::Profile::empty(),
            percentage_of_nodes_to_score: 0,
            backoff: None,
        }
    }
}

/// Deserializes `value`, naming the field of an error (`prefix` first).
fn deserialize<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    prefix: &str,
) -> Result<T> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        anyhow!("field {prefix}{path}: {}", e.into_inner())
    })
}

/// ` (did you mean NEW?)` for a bundled plugin's former name, else nothing.
fn rename_hint(name: &str) -> String {
    renamed(name)
        .map(|new| format!(" (did you mean {new}?)"))
        .unwrap_or_default()
}

/// The current name of a bundled plugin's deprecated old name.
fn renamed(old: &str) -> Option<&'static str> {
    DEPRECATED_NAMES
        .iter()
        .find(|(o, _)| *o == old)
        .map(|(_, new)| *new)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A KubeSchedulerConfiguration whose one profile has this
    /// `pluginConfig` (YAML flow list), and `top` fields before it.
    fn ksc(top: &str, plugin_config: &str) -> String {
        format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{top}profiles:\n- pluginConfig: {plugin_config}\n"
        )
    }

    #[test]
    fn plugin_config_args_set_each_plugins_bounds() {
        let config = PluginConfig::parse(&ksc(
            "",
            "[{name: WaschedGangScheduling, args: {failurePolicy: Ignore, fuel: 5000, timeout: 250ms, memoryLimit: 32Mi, args: {x: 1}}}, {name: A, args: {limits: {listLength: 10, logBytesPerCall: 4Ki}}}]",
        ))
        .unwrap();
        assert!(config.notes().is_empty());
        let gang = config.settings("WaschedGangScheduling");
        assert_eq!(gang.failure_policy, FailurePolicy::Ignore);
        assert_eq!(gang.fuel, 5000);
        assert_eq!(gang.timeout, Duration::from_millis(250));
        assert_eq!(gang.memory_limit, 32 << 20);
        assert_eq!(gang.args, r#"{"x":1}"#);
        let limited = config.settings("A").limits;
        assert_eq!(limited.log_bytes_per_call, 4096);
        assert_eq!(limited.list_length, 10);
        assert_eq!(
            limited.log_lines_per_call,
            OutputLimits::default().log_lines_per_call
        );
        let other = config.settings("Other");
        assert_eq!(other, PluginSettings::default());
    }

    #[test]
    fn wasm_limits_and_pool_size_are_configured_per_plugin() {
        let config = PluginConfig::parse(&ksc(
            "",
            "[{name: Py, args: {poolSize: 4, memoryLimit: 256Mi, wasmLimits: {instances: 80, tableElements: 200000}}}, {name: Rust, args: {fuel: 5}}]",
        ))
        .unwrap();
        let py = config.settings("Py");
        assert_eq!(py.pool_size, 4);
        assert_eq!(
            py.wasm_limits,
            StoreLimits {
                instances: 80,
                table_elements: 200_000,
                ..StoreLimits::default()
            }
        );
        let rust = config.settings("Rust");
        assert_eq!(rust.pool_size, DEFAULT_POOL_SIZE);
        assert_eq!(rust.wasm_limits, StoreLimits::default());
        // Before a component has told its name: the most any entry allows
        // of what an instance is made of, and the default fuel.
        let first = config.loosest();
        assert_eq!(first.memory_limit, 256 << 20);
        assert_eq!(first.wasm_limits.instances, 80);
        assert_eq!(first.wasm_limits.table_elements, 200_000);
        assert_eq!(first.fuel, PluginSettings::default().fuel);
        let frugal =
            PluginConfig::parse(&ksc("", "[{name: A, args: {fuel: 5000000000}}]")).unwrap();
        assert_eq!(frugal.loosest().fuel, PluginSettings::default().fuel);
        for (args, field) in [
            ("{poolSize: 0}", "poolSize"),
            ("{poolSize: 1000}", "poolSize"),
            ("{wasmLimits: {instances: 0}}", "wasmLimits.instances"),
            ("{wasmLimits: {tabels: 3}}", "tabels"),
        ] {
            let err = PluginConfig::parse(&ksc("", &format!("[{{name: A, args: {args}}}]")))
                .unwrap_err()
                .to_string();
            assert!(err.contains(field), "{args}: {err}");
        }
    }

    #[test]
    fn a_circuit_breaker_is_configured_field_by_field() {
        let config = PluginConfig::parse(&ksc(
            "",
            "[{name: A, args: {circuitBreaker: {failures: 3, coolDown: 2m}}}]",
        ))
        .unwrap();
        assert_eq!(
            config.settings("A").breaker,
            BreakerSettings {
                failures: 3,
                window: Duration::from_secs(60),
                cool_down: Duration::from_secs(120),
            }
        );
        assert_eq!(config.settings("Other").breaker, BreakerSettings::default());
    }

    #[test]
    fn bad_values_name_the_field() {
        let cases = [
            (
                ksc("", "[{name: a, args: {timeout: soon}}]"),
                "field profiles[0].pluginConfig[0].args.timeout: invalid duration \"soon\"",
            ),
            (
                ksc("", "[{name: a, args: {memoryLimit: 1Ki}}]"),
                "field profiles[0].pluginConfig[0].args.memoryLimit: 1Ki is less than one wasm page",
            ),
            (
                ksc("", "[{name: a, args: {failurePolicy: Maybe}}]"),
                "field profiles[0].pluginConfig[0].args.failurePolicy: unknown variant `Maybe`",
            ),
            (
                ksc(
                    "",
                    "[{name: a, args: {circuitBreaker: {coolDown: 307445734561825861m}}}]",
                ),
                "field profiles[0].pluginConfig[0].args.circuitBreaker.coolDown: invalid duration",
            ),
            (
                ksc("", "[{name: a, args: {circuitBreaker: {window: 25h}}}]"),
                "field profiles[0].pluginConfig[0].args.circuitBreaker.window: invalid duration",
            ),
            (
                ksc("", "[{name: a, args: {circuitBreaker: {coolDown: 1441m}}}]"),
                "field profiles[0].pluginConfig[0].args.circuitBreaker.coolDown: 1441m is longer than 24h",
            ),
            (
                ksc(
                    "",
                    "[{name: a, args: {circuitBreaker: {failures: 4000000000}}}]",
                ),
                "field profiles[0].pluginConfig[0].args.circuitBreaker.failures: 4000000000 is more than 10000",
            ),
            (
                ksc("", "[{name: a, args: {circuitBreaker: {failure: 3}}}]"),
                "unknown field `failure`",
            ),
            (
                ksc("", "[{name: a, args: {fuel: 0}}]"),
                "field profiles[0].pluginConfig[0].args.fuel: must be positive",
            ),
            (
                ksc("", "[{name: a}, {name: a}]"),
                "field profiles[0].pluginConfig[1].name: plugin a is configured twice",
            ),
            (
                ksc("", "[{name: a, args: {fule: 1}}]"),
                "unknown field `fule`",
            ),
            (
                ksc("", "[{name: a, args: {limits: {reasonBytes: lots}}}]"),
                "field profiles[0].pluginConfig[0].args.limits.reasonBytes: expected a byte count",
            ),
            (
                ksc("podInitialBackoffSeconds: 0\n", "[]"),
                "field podInitialBackoffSeconds: 0 must be greater than 0",
            ),
            (
                // The max defaults to 10 s, below this initial backoff.
                ksc("podInitialBackoffSeconds: 20\n", "[]"),
                "field podMaxBackoffSeconds: 10 must be greater than or equal to podInitialBackoffSeconds (20)",
            ),
            (
                ksc("extenders: [{urlPrefix: 'http://x'}]\n", "[]"),
                "field extenders: wasched does not call scheduler extenders",
            ),
            (
                ksc("parallelism: 0\n", "[]"),
                "field parallelism: must be greater than 0",
            ),
            (
                "kind: Pod\n".to_string(),
                "field kind: Pod: expected KubeSchedulerConfiguration",
            ),
            ("profiles: []\n".to_string(), "field kind: missing"),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", PluginConfig::parse(&text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn the_former_format_is_refused_with_the_way_out() {
        for text in [
            "defaults: {fuel: 5}\n",
            "plugins: [{name: WaschedGangScheduling, enabled: true}]\n",
            "percentageOfNodesToScore: 50\n",
        ] {
            let err = format!("{:#}", PluginConfig::parse(text).unwrap_err());
            assert_eq!(
                err,
                "this is wasched's former configuration format (defaults:/plugins:), no longer read; `wasched config migrate FILE` prints the equivalent KubeSchedulerConfiguration"
            );
        }
        assert!(
            PluginConfig::parse("").is_ok(),
            "an empty file is the default"
        );
        assert!(PluginConfig::parse("{}").is_ok(), "so is an empty object");
    }

    #[test]
    fn process_fields_are_noted_once_and_backoff_is_kept() {
        let config = PluginConfig::parse(&ksc(
            "leaderElection: {leaderElect: true}\nclientConnection: {qps: 50}\nparallelism: 8\npodInitialBackoffSeconds: 2\npodMaxBackoffSeconds: 30\nextenders: []\n",
            "[]",
        ))
        .unwrap();
        assert_eq!(
            config.notes(),
            [
                "parallelism, leaderElection, clientConnection configure the kube-scheduler process, not its decisions; wasched does not use them"
            ]
        );
        assert_eq!(
            config.backoff(),
            Some(QueueBackoff {
                initial: Duration::from_secs(2),
                max: Duration::from_secs(30)
            })
        );
        assert_eq!(PluginConfig::parse(&ksc("", "[]")).unwrap().backoff(), None);
    }

    #[test]
    fn the_builder_configures_as_the_file_does() {
        let built = PluginConfig::default()
            .enable("B")
            .configure("B", serde_json::json!({"fuel": 7, "args": {"k": "v"}}))
            .unwrap();
        let read =
            PluginConfig::parse(&ksc("", "[{name: B, args: {fuel: 7, args: {k: v}}}]")).unwrap();
        assert_eq!(built.settings("B"), read.settings("B"));
        let err = PluginConfig::default()
            .configure("B", serde_json::json!({"weight": 2}))
            .unwrap_err();
        assert!(
            format!("{err:#}").contains("args.weight: not allowed here"),
            "{err:#}"
        );
    }
}
