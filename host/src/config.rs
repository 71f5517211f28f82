//! Plugin configuration: per-plugin sandbox bounds, failure policy and args,
//! read from a YAML or JSON file (`wasched simulate --config FILE`).
//!
//! ```yaml
//! defaults:                  # for every plugin not listed below
//!   failurePolicy: Fail      # Fail (default): the pod/group stays pending; Ignore: skip the plugin
//!   fuel: 100000000          # wasm instructions (roughly) per call; deterministic
//!   timeout: 1s              # wall-clock deadline per call
//!   memoryLimit: 64Mi        # linear memory per instance
//! plugins:
//!   - name: GangScheduling   # the name the plugin gives itself
//!     failurePolicy: Ignore
//!     args: {}               # handed to the plugin's `configure`, as JSON
//! ```

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde::Deserialize;

use crate::manifest::quantity::Quantity;

/// What happens to a pod or group when a plugin call fails (traps, exceeds a
/// bound, or returns an invalid result).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub enum FailurePolicy {
    /// The pod or group stays pending with the plugin's error as reason.
    #[default]
    Fail,
    /// The plugin is skipped for that cycle and a warning is counted.
    Ignore,
}

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
}

impl Default for PluginSettings {
    fn default() -> Self {
        Self {
            failure_policy: FailurePolicy::Fail,
            fuel: 100_000_000,
            timeout: Duration::from_secs(1),
            memory_limit: 64 << 20,
            args: "{}".into(),
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
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Entry {
    name: String,
    failure_policy: Option<FailurePolicy>,
    fuel: Option<u64>,
    timeout: Option<String>,
    memory_limit: Option<String>,
    args: Option<serde_json::Value>,
}

impl Entry {
    fn overrides(&self) -> Overrides {
        Overrides {
            failure_policy: self.failure_policy,
            fuel: self.fuel,
            timeout: self.timeout.clone(),
            memory_limit: self.memory_limit.clone(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    defaults: Overrides,
    #[serde(default)]
    plugins: Vec<Entry>,
}

/// Settings for every plugin, by the name the plugin gives itself.
#[derive(Debug, Clone, Default)]
pub struct PluginConfig {
    defaults: PluginSettings,
    plugins: Vec<(String, PluginSettings)>,
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
        let file: File = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            anyhow!("field {path}: {}", e.into_inner())
        })?;
        let defaults = apply(PluginSettings::default(), &file.defaults, "defaults")?;
        let mut plugins = Vec::new();
        for (i, entry) in file.plugins.iter().enumerate() {
            if plugins.iter().any(|(name, _)| name == &entry.name) {
                bail!(
                    "field plugins[{i}].name: plugin {} is configured twice",
                    entry.name
                );
            }
            let mut settings = apply(
                defaults.clone(),
                &entry.overrides(),
                &format!("plugins[{i}]"),
            )?;
            if let Some(args) = &entry.args {
                settings.args = args.to_string();
            }
            plugins.push((entry.name.clone(), settings));
        }
        Ok(Self { defaults, plugins })
    }

    /// The settings for the plugin named `name`.
    pub fn settings(&self, name: &str) -> PluginSettings {
        self.plugins
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| self.defaults.clone(), |(_, s)| s.clone())
    }

    /// Names configured explicitly (to report entries matching no plugin).
    pub fn configured_names(&self) -> impl Iterator<Item = &str> {
        self.plugins.iter().map(|(name, _)| name.as_str())
    }

    /// The same settings for every plugin (tests, benchmarks).
    pub fn uniform(settings: PluginSettings) -> Self {
        Self {
            defaults: settings,
            plugins: Vec::new(),
        }
    }
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
        let gang = config.settings("GangScheduling");
        assert_eq!(gang.failure_policy, FailurePolicy::Ignore);
        assert_eq!(gang.fuel, 5000);
        assert_eq!(
            gang.timeout,
            Duration::from_millis(250),
            "inherits defaults"
        );
        assert_eq!(gang.memory_limit, 32 << 20);
        assert_eq!(gang.args, r#"{"x":1}"#);
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
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", PluginConfig::parse(text).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
