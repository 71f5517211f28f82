//! Plugin configuration: per-plugin sandbox bounds, failure policy and args,
//! read from a YAML or JSON file (`wasched simulate --config FILE`).
//!
//! ```yaml
//! defaults:                  # for every plugin not listed below
//!   failurePolicy: Fail      # Fail (default): the pod/group stays pending; Ignore: skip the plugin
//!   fuel: 100000000          # wasm instructions (roughly) per call; deterministic
//!   timeout: 1s              # wall-clock deadline per call
//!   memoryLimit: 64Mi        # linear memory per instance
//!   limits:                  # caps on what a plugin hands the host
//!     logLinesPerCall: 64
//!     logBytesPerCall: 16Ki
//!     logBytesPerRun: 1Mi
//!     reasonBytes: 1Ki       # longer reasons are cut
//!     nameBytes: 253         # longer placement names are invalid answers
//!     listLength: 100000     # longer lists in answers are invalid answers
//! plugins:
//!   - name: WaschedGangScheduling   # the name the plugin gives itself (old
//!                                   # unprefixed bundled names: deprecated aliases)
//!     enabled: true          # false: not loaded into the run (WaschedGpuBinPacking is off by default)
//!     failurePolicy: Ignore
//!     args: {}               # handed to the plugin's `configure`, as JSON
//!     weight: 1              # score and placement-score weight (default 1)
//! ```
//!
//! The same file may instead be a `KubeSchedulerConfiguration`
//! (`kubescheduler.config.k8s.io/v1`, see [`profile`]): its profile's
//! `plugins` (enabled/disabled per extension point, `multiPoint`, weights)
//! arrange the plugins, and each wasched plugin's `pluginConfig[].args`
//! holds the fields of an entry above (all but `name`, `enabled` and
//! `weight`).

pub mod profile;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

pub use crate::framework::FailurePolicy;
use crate::framework::OutputLimits;
use crate::manifest::quantity::Quantity;

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
    /// JSON text for `plugin.configure`.
    pub args: String,
    /// Caps on what the plugin hands the host.
    pub limits: OutputLimits,
}

impl Default for PluginSettings {
    fn default() -> Self {
        Self {
            failure_policy: FailurePolicy::Fail,
            fuel: 100_000_000,
            timeout: Duration::from_secs(1),
            memory_limit: 64 << 20,
            args: "{}".into(),
            limits: OutputLimits::default(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Overrides {
    failure_policy: Option<FailurePolicy>,
    fuel: Option<u64>,
    timeout: Option<String>,
    memory_limit: Option<String>,
    limits: Option<LimitOverrides>,
}

/// `limits:` of a defaults or plugin entry; byte counts are numbers or
/// quantities (`16Ki`).
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct LimitOverrides {
    log_lines_per_call: Option<u64>,
    log_bytes_per_call: Option<serde_json::Value>,
    log_bytes_per_run: Option<serde_json::Value>,
    reason_bytes: Option<serde_json::Value>,
    name_bytes: Option<serde_json::Value>,
    list_length: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    name: String,
    enabled: Option<bool>,
    failure_policy: Option<FailurePolicy>,
    fuel: Option<u64>,
    timeout: Option<String>,
    memory_limit: Option<String>,
    limits: Option<LimitOverrides>,
    args: Option<serde_json::Value>,
    weight: Option<i64>,
}

impl Entry {
    /// The entry `pluginConfig` args configure for plugin `name`.
    fn from_args(name: String, args: serde_json::Value, path: &str) -> Result<Entry> {
        let serde_json::Value::Object(mut fields) = args else {
            bail!("field {path}.args: must be an object");
        };
        for reserved in ["name", "enabled", "weight"] {
            if fields.contains_key(reserved) {
                bail!(
                    "field {path}.args.{reserved}: not allowed here (name is the entry's; enable and weigh plugins in profiles[].plugins)"
                );
            }
        }
        fields.insert("name".into(), serde_json::Value::String(name));
        deserialize(serde_json::Value::Object(fields), &format!("{path}.args."))
    }

    fn overrides(&self) -> Overrides {
        Overrides {
            failure_policy: self.failure_policy,
            fuel: self.fuel,
            timeout: self.timeout.clone(),
            memory_limit: self.memory_limit.clone(),
            limits: self.limits.clone(),
        }
    }
}

/// A byte count given as a number or a quantity, at least 1.
fn bytes(value: &serde_json::Value, field: &str) -> Result<u64> {
    let bytes = match value {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(text) => Quantity::parse(text)
            .ok()
            .filter(|q| !q.is_negative())
            .map(|q| q.ceil_value()),
        _ => None,
    }
    .ok_or_else(|| {
        anyhow!("field {field}: expected a byte count such as 1024 or 16Ki, got {value}")
    })?;
    if bytes == 0 {
        bail!("field {field}: must be positive");
    }
    Ok(bytes)
}

fn apply_limits(limits: &mut OutputLimits, overrides: &LimitOverrides, at: &str) -> Result<()> {
    let positive = |n: u64, field: &str| -> Result<u64> {
        if n == 0 {
            bail!("field {at}.limits.{field}: must be positive");
        }
        Ok(n)
    };
    if let Some(n) = overrides.log_lines_per_call {
        limits.log_lines_per_call = positive(n, "logLinesPerCall")?;
    }
    if let Some(v) = &overrides.log_bytes_per_call {
        limits.log_bytes_per_call = bytes(v, &format!("{at}.limits.logBytesPerCall"))?;
    }
    if let Some(v) = &overrides.log_bytes_per_run {
        limits.log_bytes_per_run = bytes(v, &format!("{at}.limits.logBytesPerRun"))?;
    }
    if let Some(v) = &overrides.reason_bytes {
        limits.reason_bytes = bytes(v, &format!("{at}.limits.reasonBytes"))? as usize;
    }
    if let Some(v) = &overrides.name_bytes {
        limits.name_bytes = bytes(v, &format!("{at}.limits.nameBytes"))? as usize;
    }
    if let Some(n) = overrides.list_length {
        limits.list_length = positive(n, "listLength")? as usize;
    }
    Ok(())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: Overrides,
    #[serde(default)]
    plugins: Vec<Entry>,
    /// As a `KubeSchedulerConfiguration`'s.
    #[serde(rename = "percentageOfNodesToScore")]
    percentage_of_nodes_to_score: Option<i64>,
}

/// The bundled plugins' names before contract 0.3.0, and their names now:
/// the old ones collided (`GangScheduling`) or could collide with
/// kube-scheduler's in-tree plugins in one configuration. wasched's own
/// configuration still accepts them, with a deprecation warning.
pub const DEPRECATED_NAMES: [(&str, &str); 4] = [
    ("GangScheduling", "WaschedGangScheduling"),
    ("GpuBinPacking", "WaschedGpuBinPacking"),
    ("TopologyPlacement", "WaschedTopologyPlacement"),
    ("WorkloadPreemption", "WaschedWorkloadPreemption"),
];

/// Settings for every plugin, by the name the plugin gives itself.
#[derive(Debug, Clone, Default)]
pub struct PluginConfig {
    defaults: PluginSettings,
    plugins: Vec<(String, PluginSettings)>,
    enabled: Vec<(String, bool)>,
    weights: Vec<(String, i64)>,
    warnings: Vec<String>,
    /// The `KubeSchedulerConfiguration` profile the file was, if it was one.
    profile: Option<profile::Profile>,
    /// The file's `percentageOfNodesToScore` (either format; 0: upstream's
    /// adaptive default).
    percentage_of_nodes_to_score: u32,
}

impl PluginConfig {
    /// Reads a configuration file (YAML or JSON).
    pub fn from_file(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read config", path.display()))?;
        Self::parse(&text).map_err(|e| anyhow!("{}: {e:#}", path.display()))
    }

    /// Parses configuration text (YAML or JSON).
    pub fn parse(text: &str) -> Result<Self> {
        let value: serde_json::Value =
            serde_norway::from_str(text).map_err(|e| anyhow!("not valid YAML or JSON: {e}"))?;
        let value = if value.is_null() {
            serde_json::json!({})
        } else {
            value
        };
        if value.get("kind").and_then(|k| k.as_str()) == Some("KubeSchedulerConfiguration") {
            return Self::from_profile(value);
        }
        let file: File = deserialize(value, "")?;
        let entries: Vec<(Entry, String)> = file
            .plugins
            .into_iter()
            .enumerate()
            .map(|(i, e)| (e, format!("plugins[{i}]")))
            .collect();
        let mut config = Self::from_entries(&file.defaults, entries, None)?;
        config.percentage_of_nodes_to_score = profile::percentage(
            file.percentage_of_nodes_to_score,
            "percentageOfNodesToScore",
        )?
        .unwrap_or(0);
        Ok(config)
    }

    /// A `KubeSchedulerConfiguration`: its profile, and the wasched
    /// plugins' `pluginConfig` args as entries.
    fn from_profile(value: serde_json::Value) -> Result<Self> {
        let file: profile::File = deserialize(value, "")?;
        let read = profile::Profile::read(file)?;
        let mut entries = Vec::new();
        for (name, args, path) in read.args {
            entries.push((Entry::from_args(name, args, &path)?, format!("{path}.args")));
        }
        let mut config = Self::from_entries(&Overrides::default(), entries, read.profile)?;
        config.percentage_of_nodes_to_score = read.percentage_of_nodes_to_score;
        Ok(config)
    }

    /// The configuration of one plugin from the `args` of its
    /// `pluginConfig` entry (the fields of a wasched plugin entry but
    /// `name`, `enabled` and `weight`), as kube-scheduler hands them to an
    /// out-of-tree plugin; `path` names the entry in messages
    /// (`pluginConfig[2]`).
    /// Absent args (`null`) are an empty object.
    pub fn from_plugin_args(name: &str, args: serde_json::Value, path: &str) -> Result<Self> {
        let args = if args.is_null() {
            serde_json::json!({})
        } else {
            args
        };
        let entry = Entry::from_args(name.to_string(), args, path)?;
        Self::from_entries(
            &Overrides::default(),
            vec![(entry, format!("{path}.args"))],
            None,
        )
    }

    fn from_entries(
        defaults: &Overrides,
        entries: Vec<(Entry, String)>,
        profile: Option<profile::Profile>,
    ) -> Result<Self> {
        let defaults = apply(PluginSettings::default(), defaults, "defaults")?;
        let mut plugins = Vec::new();
        let mut enabled = Vec::new();
        let mut weights = Vec::new();
        let mut warnings = Vec::new();
        for (entry, at) in &entries {
            let name = entry.name.clone();
            if let Some(new) = renamed(&name).filter(|_| profile.is_none()) {
                warnings.push(format!(
                    "field {at}.name: plugin name {name} is deprecated, use {new} (the bundled plugins are Wasched-prefixed since contract 0.3.0, so that they cannot collide with kube-scheduler's in-tree plugins)"
                ));
            }
            if plugins.iter().any(|(n, _)| n == &name) {
                bail!("field {at}.name: plugin {name} is configured twice");
            }
            if let Some(weight) = entry.weight {
                if weight < 0 {
                    bail!("field {at}.weight: must not be negative");
                }
                weights.push((name.clone(), weight.max(1)));
            }
            let mut settings = apply(defaults.clone(), &entry.overrides(), at)?;
            if let Some(args) = &entry.args {
                settings.args = args.to_string();
            }
            if let Some(on) = entry.enabled {
                enabled.push((name.clone(), on));
            }
            plugins.push((name, settings));
        }
        Ok(Self {
            defaults,
            plugins,
            enabled,
            weights,
            warnings,
            profile,
            percentage_of_nodes_to_score: 0,
        })
    }

    /// Builds the plugin set from every `loaded` plugin (with whether it is
    /// on by default): each name the configuration gives must be loaded
    /// (a typo must not leave a plugin under default settings); then the
    /// enabled ones with their weights, or, for a
    /// `KubeSchedulerConfiguration`, the ones its profile arranges. The
    /// strings are notes for the user (in-tree plugins named).
    pub fn assemble(
        &self,
        loaded: Vec<(Box<dyn crate::framework::Plugin>, bool)>,
    ) -> Result<(crate::PluginSet, Vec<String>)> {
        let names: Vec<String> = loaded.iter().map(|(p, _)| p.name().to_string()).collect();
        for name in self.configured_names() {
            // Deprecated names are wasched's own format's; a
            // KubeSchedulerConfiguration names plugins exactly.
            let known = match self.profile {
                Some(_) => names.iter().any(|l| l == name),
                None => names.iter().any(|l| Self::designates(name, l)),
            };
            if !known {
                bail!(
                    "the configuration names plugin {name}, but no loaded plugin has that name (loaded: {})",
                    names.join(", ")
                );
            }
        }
        let weight = |name: &str| lookup(&self.weights, name).copied().unwrap_or(1);
        let mut set = crate::PluginSet::new();
        set.set_percentage_of_nodes_to_score(self.percentage_of_nodes_to_score);
        let Some(profile) = &self.profile else {
            for (plugin, on) in loaded {
                if self.enabled(plugin.name(), on) {
                    let (name, w) = (plugin.name().to_string(), weight(plugin.name()));
                    set.add(plugin)?;
                    set.set_weight(&name, w);
                }
            }
            return Ok((set, Vec::new()));
        };
        let views: Vec<profile::Loaded<'_>> = loaded
            .iter()
            .map(|(p, on)| profile::Loaded {
                name: p.name(),
                points: p.points(),
                on: self.enabled(p.name(), *on),
                weight: weight(p.name()),
            })
            .collect();
        let (plan, notes) = profile.plan(&views)?;
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

    /// What the user should know about the file (deprecated names).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The settings for the plugin named `name` (an entry under its
    /// deprecated old name counts when there is none under the new one).
    pub fn settings(&self, name: &str) -> PluginSettings {
        lookup(&self.plugins, name).map_or_else(|| self.defaults.clone(), |s| s.clone())
    }

    /// Whether the plugin named `name` runs: its entry's `enabled`, else
    /// `default` (the plugin's own default).
    pub fn enabled(&self, name: &str, default: bool) -> bool {
        lookup(&self.enabled, name).map_or(default, |&on| on)
    }

    /// Names configured explicitly (to report entries matching no plugin).
    pub fn configured_names(&self) -> impl Iterator<Item = &str> {
        self.plugins.iter().map(|(name, _)| name.as_str())
    }

    /// Whether the configured `name` designates the plugin `loaded`: the
    /// same name, or `name` is `loaded`'s deprecated old name.
    pub fn designates(name: &str, loaded: &str) -> bool {
        name == loaded || renamed(name) == Some(loaded)
    }

    /// The same settings for every plugin (tests, benchmarks).
    pub fn uniform(settings: PluginSettings) -> Self {
        Self {
            defaults: settings,
            plugins: Vec::new(),
            enabled: Vec::new(),
            weights: Vec::new(),
            warnings: Vec::new(),
            profile: None,
            percentage_of_nodes_to_score: 0,
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

/// The current name of a bundled plugin's deprecated old name.
fn renamed(old: &str) -> Option<&'static str> {
    DEPRECATED_NAMES
        .iter()
        .find(|(o, _)| *o == old)
        .map(|(_, new)| *new)
}

/// The entry for `name`, else the one under its deprecated old name.
fn lookup<'a, T>(entries: &'a [(String, T)], name: &str) -> Option<&'a T> {
    entries
        .iter()
        .find(|(n, _)| n == name)
        .or_else(|| entries.iter().find(|(n, _)| renamed(n) == Some(name)))
        .map(|(_, value)| value)
}

fn apply(mut settings: PluginSettings, overrides: &Overrides, at: &str) -> Result<PluginSettings> {
    if let Some(policy) = overrides.failure_policy {
        settings.failure_policy = policy;
    }
    if let Some(fuel) = overrides.fuel {
        if fuel == 0 {
            bail!("field {at}.fuel: must be positive");
        }
        settings.fuel = fuel;
    }
    if let Some(timeout) = &overrides.timeout {
        settings.timeout =
            parse_duration(timeout).map_err(|e| anyhow!("field {at}.timeout: {e}"))?;
    }
    if let Some(limit) = &overrides.memory_limit {
        let bytes = Quantity::parse(limit)
            .map_err(|e| anyhow!("field {at}.memoryLimit: {e}"))?
            .ceil_value();
        if bytes < 1 << 16 {
            bail!("field {at}.memoryLimit: {limit} is less than one wasm page (64Ki)");
        }
        settings.memory_limit = bytes;
    }
    if let Some(limits) = &overrides.limits {
        apply_limits(&mut settings.limits, limits, at)?;
    }
    Ok(settings)
}

/// `250ms`, `2s`, `1m` (Kubernetes-style durations, one unit).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let err = || format!("invalid duration {text:?}: expected e.g. 50ms, 2s or 1m");
    let split = text.find(|c: char| !c.is_ascii_digit()).ok_or_else(err)?;
    let (number, unit) = text.split_at(split);
    let n: u64 = number.parse().map_err(|_| err())?;
    let duration = match unit {
        "ms" => Duration::from_millis(n),
        "s" => Duration::from_secs(n),
        "m" => Duration::from_secs(n * 60),
        _ => return Err(err()),
    };
    if duration.is_zero() {
        return Err(format!("{text}: must be positive"));
    }
    Ok(duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_per_plugin_overrides() {
        let config = PluginConfig::parse(
            "defaults: {timeout: 250ms, memoryLimit: 32Mi}\n\
             plugins:\n- {name: GangScheduling, failurePolicy: Ignore, fuel: 5000, args: {x: 1}}\n",
        )
        .unwrap();
        // The old bundled name still works, under its new name, with a warning.
        assert!(
            config.warnings()[0]
                .contains("GangScheduling is deprecated, use WaschedGangScheduling")
        );
        let gang = config.settings("WaschedGangScheduling");
        assert_eq!(gang.failure_policy, FailurePolicy::Ignore);
        assert_eq!(gang.fuel, 5000);
        assert_eq!(
            gang.timeout,
            Duration::from_millis(250),
            "inherits defaults"
        );
        assert_eq!(gang.memory_limit, 32 << 20);
        assert_eq!(gang.args, r#"{"x":1}"#);
        let limited = PluginConfig::parse(
            "defaults: {limits: {logBytesPerCall: 4Ki, reasonBytes: 200}}\n\
             plugins:\n- {name: A, limits: {listLength: 10}}\n",
        )
        .unwrap()
        .settings("A")
        .limits;
        assert_eq!(limited.log_bytes_per_call, 4096);
        assert_eq!(limited.reason_bytes, 200, "inherits defaults");
        assert_eq!(limited.list_length, 10);
        assert_eq!(
            limited.log_lines_per_call,
            OutputLimits::default().log_lines_per_call
        );
        let other = config.settings("Other");
        assert_eq!(other.failure_policy, FailurePolicy::Fail);
        assert_eq!(other.fuel, PluginSettings::default().fuel);
        assert_eq!(other.args, "{}");
    }

    #[test]
    fn bad_values_name_the_field() {
        let cases = [
            (
                "defaults: {timeout: soon}",
                "field defaults.timeout: invalid duration \"soon\"",
            ),
            (
                "defaults: {memoryLimit: 1Ki}",
                "field defaults.memoryLimit: 1Ki is less than one wasm page",
            ),
            (
                "plugins: [{name: a, failurePolicy: Maybe}]",
                "field plugins[0].failurePolicy: unknown variant `Maybe`",
            ),
            (
                "plugins: [{name: a, fuel: 0}]",
                "field plugins[0].fuel: must be positive",
            ),
            (
                "plugins: [{name: a}, {name: a}]",
                "field plugins[1].name: plugin a is configured twice",
            ),
            ("plugin: []", "unknown field `plugin`"),
            (
                "defaults: {limits: {reasonBytes: lots}}",
                "field defaults.limits.reasonBytes: expected a byte count",
            ),
            (
                "plugins: [{name: a, limits: {logLinesPerCall: 0}}]",
                "field plugins[0].limits.logLinesPerCall: must be positive",
            ),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", PluginConfig::parse(text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
