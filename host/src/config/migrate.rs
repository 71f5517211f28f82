//! `wasched config migrate FILE`: wasched's former configuration format
//! (`defaults:` for every plugin, `plugins:` entries with `enabled`,
//! `weight` and the bounds) written as the equivalent
//! `KubeSchedulerConfiguration`.
//!
//! - each listed plugin, and each bundled one, gets a `pluginConfig` entry
//!   with `defaults` merged under its own fields (field by field, `limits`
//!   too); a plugin loaded from `--plugins DIR` that the file did not list
//!   got `defaults` as well, so the output says to add an entry for it;
//! - `enabled: true` becomes `multiPoint.enabled` (with its `weight`),
//!   `enabled: false` `multiPoint.disabled`, a `weight` alone
//!   `multiPoint.enabled` with that weight (a plugin already on keeps its
//!   place and takes the weight, as before);
//! - the bundled plugins' names from before contract 0.3.0 become their
//!   `Wasched`-prefixed names;
//! - `percentageOfNodesToScore` stays where it was.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::args::Args;

/// The former format, as it was read.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Former {
    #[serde(default)]
    defaults: Args,
    #[serde(default)]
    plugins: Vec<FormerEntry>,
    #[serde(rename = "percentageOfNodesToScore")]
    percentage_of_nodes_to_score: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FormerEntry {
    name: String,
    enabled: Option<bool>,
    weight: Option<i64>,
    failure_policy: Option<super::FailurePolicy>,
    fuel: Option<u64>,
    timeout: Option<String>,
    memory_limit: Option<String>,
    limits: Option<super::args::Limits>,
    args: Option<serde_json::Value>,
}

impl FormerEntry {
    /// Its fields that are `pluginConfig` args now.
    fn args(&self) -> Args {
        Args {
            failure_policy: self.failure_policy,
            fuel: self.fuel,
            timeout: self.timeout.clone(),
            memory_limit: self.memory_limit.clone(),
            limits: self.limits.clone(),
            args: self.args.clone(),
        }
    }
}

/// Whether `value` (a parsed file without `kind`) is in the former format:
/// an object whose keys are all the former format's and that has
/// `defaults` or `plugins`.
pub fn is_former_format(value: &serde_json::Value) -> bool {
    let Some(fields) = value.as_object() else {
        return false;
    };
    let former = ["defaults", "plugins", "percentageOfNodesToScore"];
    fields.keys().all(|k| former.contains(&k.as_str()))
        && (fields.contains_key("defaults") || fields.contains_key("plugins"))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Out {
    api_version: &'static str,
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    percentage_of_nodes_to_score: Option<i64>,
    profiles: [OutProfile; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OutProfile {
    scheduler_name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    plugins: Option<OutPlugins>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    plugin_config: Vec<OutConfig>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct OutPlugins {
    multi_point: OutSet,
}

#[derive(Serialize, Default)]
struct OutSet {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    enabled: Vec<OutRef>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    disabled: Vec<OutRef>,
}

#[derive(Serialize)]
struct OutRef {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    weight: Option<i64>,
}

#[derive(Serialize)]
struct OutConfig {
    name: String,
    args: Args,
}

/// The `KubeSchedulerConfiguration` equivalent to `text` in the former
/// format, as YAML with a comment heading it; `bundled` are the bundled
/// plugins' names (each gets the file's `defaults`).
pub fn migrate(text: &str, bundled: &[&str]) -> Result<String> {
    let value: serde_json::Value =
        serde_norway::from_str(text).map_err(|e| anyhow::anyhow!("not valid YAML or JSON: {e}"))?;
    if value.get("kind").and_then(|k| k.as_str()) == Some("KubeSchedulerConfiguration") {
        bail!("already a KubeSchedulerConfiguration; nothing to migrate");
    }
    let value = if value.is_null() {
        serde_json::json!({})
    } else {
        value
    };
    let former: Former = super::deserialize(value, "")?;
    super::profile::percentage(
        former.percentage_of_nodes_to_score,
        "percentageOfNodesToScore",
    )?;
    let mut set = OutSet::default();
    let mut config: Vec<OutConfig> = Vec::new();
    for (i, entry) in former.plugins.into_iter().enumerate() {
        let at = format!("plugins[{i}]");
        let name = super::renamed(&entry.name).map_or(entry.name.clone(), str::to_string);
        if config.iter().any(|c| c.name == name) {
            bail!("field {at}.name: plugin {name} is configured twice");
        }
        if entry.weight.is_some_and(|w| w < 0) {
            bail!("field {at}.weight: must not be negative");
        }
        let args = entry.args().or(&former.defaults);
        // The old reading's checks, so that a file it refused is refused.
        args.settings(super::PluginSettings::default(), &at)?;
        let weight = entry.weight.map(|w| w.max(1));
        match (entry.enabled, weight) {
            (Some(false), _) => set.disabled.push(OutRef {
                name: name.clone(),
                weight: None,
            }),
            (Some(true), weight) | (None, weight @ Some(_)) => set.enabled.push(OutRef {
                name: name.clone(),
                weight,
            }),
            (None, None) => {}
        }
        config.push(OutConfig { name, args });
    }
    former
        .defaults
        .settings(super::PluginSettings::default(), "defaults")?;
    for name in bundled {
        if !former.defaults.is_empty() && !config.iter().any(|c| c.name == *name) {
            config.push(OutConfig {
                name: name.to_string(),
                args: former.defaults.clone(),
            });
        }
    }
    config.retain(|c| !c.args.is_empty());
    let plugins = (!set.enabled.is_empty() || !set.disabled.is_empty())
        .then_some(OutPlugins { multi_point: set });
    let out = Out {
        api_version: "kubescheduler.config.k8s.io/v1",
        kind: "KubeSchedulerConfiguration",
        percentage_of_nodes_to_score: former.percentage_of_nodes_to_score,
        profiles: [OutProfile {
            scheduler_name: super::profile::SCHEDULER_NAME,
            plugins,
            plugin_config: config,
        }],
    };
    let mut yaml = String::from(
        "# Written by `wasched config migrate`: the same settings as a\n\
         # KubeSchedulerConfiguration, read by simulate, compare, serve and\n\
         # kube-scheduler with the components.\n",
    );
    if !former.defaults.is_empty() {
        yaml.push_str(
            "# `defaults` now sit in each plugin's pluginConfig entry; give a plugin\n\
             # loaded with --plugins DIR an entry of its own to keep them.\n",
        );
    }
    yaml.push_str(&serde_norway::to_string(&out)?);
    Ok(yaml)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FailurePolicy, PluginConfig};

    const BUNDLED: [&str; 2] = ["WaschedGangScheduling", "WaschedGpuBinPacking"];

    #[test]
    fn the_former_format_migrates_to_the_same_settings() {
        let former = "defaults: {timeout: 250ms, limits: {reasonBytes: 200}}\n\
            percentageOfNodesToScore: 50\n\
            plugins:\n\
            - {name: GpuBinPacking, enabled: true, weight: 2, failurePolicy: Ignore, limits: {listLength: 10}}\n\
            - {name: Mine, enabled: false, fuel: 5000, args: {x: 1}}\n";
        let text = migrate(former, &BUNDLED).unwrap();
        let config = PluginConfig::parse(&text).unwrap();
        assert_eq!(config.percentage_of_nodes_to_score(), 50);
        let bin = config.settings("WaschedGpuBinPacking");
        assert_eq!(bin.failure_policy, FailurePolicy::Ignore);
        assert_eq!(bin.timeout, std::time::Duration::from_millis(250));
        assert_eq!(
            bin.limits.reason_bytes, 200,
            "defaults merged field by field"
        );
        assert_eq!(bin.limits.list_length, 10);
        let mine = config.settings("Mine");
        assert_eq!((mine.fuel, mine.args.as_str()), (5000, r#"{"x":1}"#));
        // An unlisted bundled plugin keeps the defaults.
        let gang = config.settings("WaschedGangScheduling");
        assert_eq!(gang.timeout, std::time::Duration::from_millis(250));
        assert!(text.contains("multiPoint:"), "{text}");
        assert!(
            text.contains("- name: WaschedGpuBinPacking\n        weight: 2"),
            "{text}"
        );
        assert!(text.contains("disabled:\n      - name: Mine"), "{text}");
        assert_eq!(text, migrate(former, &BUNDLED).unwrap(), "deterministic");
    }

    #[test]
    fn migration_refuses_what_the_former_reading_refused() {
        let cases = [
            (
                "defaults: {fuel: 0}\n",
                "field defaults.fuel: must be positive",
            ),
            (
                "plugins: [{name: a}, {name: a}]\n",
                "field plugins[1].name: plugin a is configured twice",
            ),
            (
                "plugins: [{name: a, weight: -1}]\n",
                "field plugins[0].weight: must not be negative",
            ),
            ("plugin: []\n", "unknown field `plugin`"),
            (
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                "already a KubeSchedulerConfiguration",
            ),
        ];
        for (text, expected) in cases {
            let err = format!("{:#}", migrate(text, &BUNDLED).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }
}
