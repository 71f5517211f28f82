//! `wasched config migrate FILE`: wasched's former configuration format
//! (`defaults:` for every plugin, `plugins:` entries with `enabled`,
//! `weight` and the bounds) written as the equivalent
//! `KubeSchedulerConfiguration`.
//!
//! - each listed plugin, and each plugin the file configured (the bundled
//!   ones, or with `--plugins DIR` that directory's), gets a `pluginConfig`
//!   entry with `defaults` merged under its own fields (field by field,
//!   `limits` too);
//! - `enabled: true` becomes `multiPoint.enabled` (with its `weight`, in
//!   load order), `enabled: false` `multiPoint.disabled`, a `weight` alone
//!   `multiPoint.enabled` with that weight for a plugin on by default (it
//!   keeps its place and takes the weight, as before) and nothing for one
//!   off by default (it stayed off);
//! - a bundled plugin's name from before contract 0.3.0 becomes its
//!   `Wasched`-prefixed name when that is the plugin loaded;
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
            wasm_limits: None,
            pool_size: None,
            limits: self.limits.clone(),
            circuit_breaker: None,
            args: self.args.clone(),
        }
    }
}

/// Whether `value` (a parsed file without `kind`) is in the former format:
/// an object with `defaults` or `plugins`, or with only
/// `percentageOfNodesToScore` (which the former format held too).
pub fn is_former_format(value: &serde_json::Value) -> bool {
    let Some(fields) = value.as_object() else {
        return false;
    };
    fields.contains_key("defaults")
        || fields.contains_key("plugins")
        || (fields.len() == 1 && fields.contains_key("percentageOfNodesToScore"))
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
/// format, as YAML with a comment heading it. `loaded` are the plugins the
/// file configured (the bundled ones, or those of a `--plugins`
/// directory), in load order, with whether each runs by default; `over`
/// names them in the comment.
pub fn migrate(text: &str, loaded: &[(&str, bool)], over: &str) -> Result<String> {
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
    // The former reading's checks, in its order, so that a file it
    // refused is refused with the same field.
    if former.defaults.args.is_some() {
        bail!("field defaults.args: unknown field `args` (args are a plugin's own)");
    }
    former
        .defaults
        .settings(super::PluginSettings::default(), "defaults")?;
    let position = |name: &str| loaded.iter().position(|(n, _)| *n == name);
    let mut enabled: Vec<(usize, OutRef)> = Vec::new();
    let mut disabled: Vec<OutRef> = Vec::new();
    let mut config: Vec<(OutConfig, String)> = Vec::new();
    for (i, entry) in former.plugins.into_iter().enumerate() {
        let at = format!("plugins[{i}]");
        // A former name designates the plugin that calls itself the new
        // one, when that is what is loaded.
        let name = match super::renamed(&entry.name) {
            Some(new) if position(&entry.name).is_none() && position(new).is_some() => {
                new.to_string()
            }
            _ => entry.name.clone(),
        };
        if let Some((_, other)) = config.iter().find(|(c, _)| c.name == name) {
            if entry.name == name {
                bail!("field {at}.name: plugin {name} is configured twice (also {other})");
            }
            bail!(
                "field {at}.name: {} designates {name}, which {other} configures too; keep one entry",
                entry.name
            );
        }
        if entry.weight.is_some_and(|w| w < 0) {
            bail!("field {at}.weight: must not be negative");
        }
        let args = entry.args().or(&former.defaults);
        args.settings(super::PluginSettings::default(), &at)?;
        let weight = entry.weight.map(|w| w.max(1));
        // A plugin from elsewhere (not in `loaded`) ran by default.
        let on_by_default = position(&name).is_none_or(|p| loaded[p].1);
        let order = position(&name).unwrap_or(usize::MAX);
        match (entry.enabled, weight) {
            (Some(false), _) => disabled.push(OutRef {
                name: name.clone(),
                weight: None,
            }),
            (Some(true), weight) => enabled.push((
                order,
                OutRef {
                    name: name.clone(),
                    weight,
                },
            )),
            // A weight alone weighed a plugin that ran anyway; one that
            // was off stayed off.
            (None, Some(weight)) if on_by_default => enabled.push((
                order,
                OutRef {
                    name: name.clone(),
                    weight: Some(weight),
                },
            )),
            (None, _) => {}
        }
        config.push((OutConfig { name, args }, at));
    }
    let mut config: Vec<OutConfig> = config.into_iter().map(|(c, _)| c).collect();
    if !former.defaults.is_empty() {
        for (name, _) in loaded {
            if !config.iter().any(|c| c.name == *name) {
                config.push(OutConfig {
                    name: name.to_string(),
                    args: former.defaults.clone(),
                });
            }
        }
    }
    config.retain(|c| !c.args.is_empty());
    // Enabled plugins in load order, as the former reading ran them
    // (kube-scheduler appends enabled plugins in the order listed).
    enabled.sort_by_key(|(order, _)| *order);
    let set = OutSet {
        enabled: enabled.into_iter().map(|(_, r)| r).collect(),
        disabled,
    };
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
         # KubeSchedulerConfiguration, read by simulate, compare, shadow and\n\
         # kube-scheduler with the components.\n",
    );
    if !former.defaults.is_empty() {
        yaml.push_str(&format!(
            "# `defaults` now sit in a pluginConfig entry of each of {over}.\n"
        ));
    }
    yaml.push_str(&serde_norway::to_string(&out)?);
    Ok(yaml)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{FailurePolicy, PluginConfig};

    const BUNDLED: [(&str, bool); 2] = [
        ("WaschedGangScheduling", true),
        ("WaschedGpuBinPacking", false),
    ];
    const OVER: &str = "the bundled plugins";

    #[test]
    fn the_former_format_migrates_to_the_same_settings() {
        let former = "defaults: {timeout: 250ms, limits: {reasonBytes: 200}}\n\
            percentageOfNodesToScore: 50\n\
            plugins:\n\
            - {name: GpuBinPacking, enabled: true, weight: 2, failurePolicy: Ignore, limits: {listLength: 10}}\n\
            - {name: Mine, enabled: false, fuel: 5000, args: {x: 1}}\n";
        let text = migrate(former, &BUNDLED, OVER).unwrap();
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
        assert_eq!(
            text,
            migrate(former, &BUNDLED, OVER).unwrap(),
            "deterministic"
        );
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
            let err = format!("{:#}", migrate(text, &BUNDLED, OVER).unwrap_err());
            assert!(err.contains(expected), "{text}: {err}");
        }
    }

    #[test]
    fn a_weight_alone_weighs_a_plugin_that_runs_and_enables_none() {
        let text = migrate(
            "plugins: [{name: GpuBinPacking, weight: 3}, {name: WaschedGangScheduling, weight: 2}]\n",
            &BUNDLED,
            OVER,
        )
        .unwrap();
        assert!(!text.contains("name: WaschedGpuBinPacking"), "{text}");
        assert!(
            text.contains("- name: WaschedGangScheduling\n        weight: 2"),
            "{text}"
        );
    }

    #[test]
    fn enabled_plugins_keep_their_load_order() {
        let text = migrate(
            "plugins: [{name: WaschedGpuBinPacking, enabled: true}, {name: WaschedGangScheduling, enabled: true}]\n",
            &BUNDLED,
            OVER,
        )
        .unwrap();
        let gang = text.find("- name: WaschedGangScheduling").unwrap();
        let bin = text.find("- name: WaschedGpuBinPacking").unwrap();
        assert!(gang < bin, "{text}");
    }

    #[test]
    fn a_plugin_directory_takes_the_defaults_and_keeps_its_names() {
        // The 0.2.0 components call themselves by the former names.
        let dir = [("TopologyPlacement", true), ("GpuBinPacking", true)];
        let text = migrate(
            "defaults: {fuel: 7}\nplugins: [{name: GpuBinPacking, weight: 2}]\n",
            &dir,
            "the plugins of old/",
        )
        .unwrap();
        let config = PluginConfig::parse(&text).unwrap();
        assert_eq!(config.settings("TopologyPlacement").fuel, 7);
        assert_eq!(config.settings("GpuBinPacking").fuel, 7);
        assert!(!text.contains("Wasched"), "{text}");
        assert!(text.contains("each of the plugins of old/"), "{text}");
    }
}
