//! A `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`) as
//! wasched's plugin configuration: the profile's `plugins` decide which
//! plugin serves which extension point, in which order and with which
//! weight, and `pluginConfig[].args` carry each wasched plugin's settings
//! ([`super::args`]: bounds, failure policy, `args`). The same file
//! configures `simulate`, `shadow` and the kube-scheduler plugin.
//!
//! Resolution per extension point, as kube-scheduler merges a profile with
//! its defaults: the plugins on by default that implement the point, in
//! load order, minus those `disabled` there or in `multiPoint` (`*`: all);
//! then each plugin `enabled` in `multiPoint` that implements the point,
//! then each `enabled` at the point itself, appended in order (a plugin
//! already in the list keeps its place and takes the new weight).
//! kube-scheduler's in-tree plugins (`NodeResourcesFit`, `GangScheduling`,
//! ...) are accepted and noted: wasched's host applies its own native
//! equivalents of the node checks and runs no in-tree plugin. Any other
//! unknown name, field or extension point is an error naming it.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

use crate::framework::{ExtensionPoint, Plan};

/// The in-tree plugins of kube-scheduler v1.37.2
/// (`pkg/scheduler/framework/plugins/names`).
pub const IN_TREE: [&str; 24] = [
    "PrioritySort",
    "DefaultBinder",
    "DefaultPreemption",
    "DynamicResources",
    "GangScheduling",
    "ImageLocality",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeDeclaredFeatures",
    "NodeName",
    "NodePorts",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "NodeUnschedulable",
    "NodeVolumeLimits",
    "PodTopologySpread",
    "DeferredPodScheduling",
    "SchedulingGates",
    "TaintToleration",
    "VolumeBinding",
    "VolumeRestrictions",
    "VolumeZone",
    "TopologyPlacementGenerator",
    "PodGroupPodsCount",
];

/// The profile wasched reads from a file with several.
pub const SCHEDULER_NAME: &str = "wasched";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct File {
    api_version: String,
    kind: String,
    // Fields that configure the kube-scheduler process, not its decisions:
    // accepted, and noted once.
    parallelism: Option<i64>,
    leader_election: Option<IgnoredAny>,
    client_connection: Option<IgnoredAny>,
    enable_profiling: Option<IgnoredAny>,
    enable_contention_profiling: Option<IgnoredAny>,
    delay_cache_until_active: Option<IgnoredAny>,
    percentage_of_nodes_to_score: Option<i64>,
    pod_initial_backoff_seconds: Option<i64>,
    pod_max_backoff_seconds: Option<i64>,
    extenders: Option<Vec<IgnoredAny>>,
    #[serde(default)]
    profiles: Vec<ProfileFile>,
}

impl File {
    /// The process-only fields the file sets, by name.
    fn process_fields(&self) -> Vec<&'static str> {
        [
            ("parallelism", self.parallelism.is_some()),
            ("leaderElection", self.leader_election.is_some()),
            ("clientConnection", self.client_connection.is_some()),
            ("enableProfiling", self.enable_profiling.is_some()),
            (
                "enableContentionProfiling",
                self.enable_contention_profiling.is_some(),
            ),
            (
                "delayCacheUntilActive",
                self.delay_cache_until_active.is_some(),
            ),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// The queue's backoff, if the file sets either field, checked and
    /// defaulted as kube-scheduler's validation does (initial 1 s, max
    /// 10 s; initial > 0; max >= initial).
    fn backoff(&self) -> Result<Option<super::QueueBackoff>> {
        if self.pod_initial_backoff_seconds.is_none() && self.pod_max_backoff_seconds.is_none() {
            return Ok(None);
        }
        let defaults = super::QueueBackoff::default();
        let initial = self
            .pod_initial_backoff_seconds
            .unwrap_or(defaults.initial.as_secs() as i64);
        let max = self
            .pod_max_backoff_seconds
            .unwrap_or(defaults.max.as_secs() as i64);
        if initial <= 0 {
            bail!("field podInitialBackoffSeconds: {initial} must be greater than 0");
        }
        if max < initial {
            bail!(
                "field podMaxBackoffSeconds: {max} must be greater than or equal to podInitialBackoffSeconds ({initial})"
            );
        }
        Ok(Some(super::QueueBackoff {
            initial: std::time::Duration::from_secs(initial as u64),
            max: std::time::Duration::from_secs(max as u64),
        }))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ProfileFile {
    scheduler_name: Option<String>,
    percentage_of_nodes_to_score: Option<i64>,
    plugins: Option<Plugins>,
    #[serde(default)]
    plugin_config: Vec<PluginConfigEntry>,
}

/// `profiles[].plugins`: one plugin set per extension point.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Plugins {
    multi_point: Option<PluginSetFile>,
    pre_enqueue: Option<PluginSetFile>,
    filter: Option<PluginSetFile>,
    score: Option<PluginSetFile>,
    permit: Option<PluginSetFile>,
    placement_generate: Option<PluginSetFile>,
    placement_score: Option<PluginSetFile>,
    pod_group_post_filter: Option<PluginSetFile>,
    // kube-scheduler's points that wasched plugins do not have.
    queue_sort: Option<PluginSetFile>,
    pre_filter: Option<PluginSetFile>,
    post_filter: Option<PluginSetFile>,
    pre_score: Option<PluginSetFile>,
    reserve: Option<PluginSetFile>,
    pre_bind: Option<PluginSetFile>,
    bind: Option<PluginSetFile>,
    post_bind: Option<PluginSetFile>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginSetFile {
    #[serde(default)]
    enabled: Vec<PluginRef>,
    #[serde(default)]
    disabled: Vec<PluginRef>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginRef {
    name: String,
    weight: Option<i32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginConfigEntry {
    name: String,
    args: Option<Value>,
}

/// One plugin set of the profile, with the field path of each name.
#[derive(Debug, Clone, Default)]
struct PointSet {
    enabled: Vec<(String, Option<i64>, String)>,
    disabled: Vec<(String, String)>,
}

impl PointSet {
    fn of(file: Option<&PluginSetFile>, at: &str) -> Result<Self> {
        let Some(file) = file else {
            return Ok(Self::default());
        };
        let mut set = Self::default();
        for (i, p) in file.enabled.iter().enumerate() {
            let path = format!("{at}.enabled[{i}]");
            if p.weight.is_some_and(|w| w < 0) {
                bail!("field {path}.weight: must not be negative");
            }
            // kube-scheduler treats an unset or zero weight as 1.
            let weight = p.weight.filter(|&w| w > 0).map(i64::from);
            set.enabled.push((p.name.clone(), weight, path));
        }
        for (i, p) in file.disabled.iter().enumerate() {
            set.disabled
                .push((p.name.clone(), format!("{at}.disabled[{i}]")));
        }
        Ok(set)
    }

    fn disables(&self, name: &str) -> bool {
        self.disabled.iter().any(|(n, _)| n == name || n == "*")
    }
}

/// A profile's plugin sets, read; resolved against the loaded plugins by
/// [`Profile::plan`].
#[derive(Debug, Clone, Default)]
pub struct Profile {
    multi_point: PointSet,
    points: BTreeMap<ExtensionPoint, PointSet>,
    /// kube-scheduler-only points (`queueSort`, `bind`, ...), by field
    /// name: only in-tree plugins may be named there, but for `preFilter`
    /// and `preScore`, where kube-scheduler's wasched plugin prepares its
    /// Filter and Score (a wasched plugin with that point is accepted
    /// there, and nothing changes in wasched's cycle).
    other: Vec<(&'static str, PointSet)>,
    /// In-tree plugins named in `pluginConfig`, with their paths.
    in_tree_config: Vec<(String, String)>,
}

/// The wasched plugins' `pluginConfig` entries: (name, args, field path).
pub(super) type PluginArgs = Vec<(String, Value, String)>;

/// What a `KubeSchedulerConfiguration` says to wasched.
pub(super) struct Read {
    /// The profile wasched reads (an empty one if the file has none).
    pub profile: Profile,
    /// The wasched plugins' `pluginConfig` entries.
    pub args: PluginArgs,
    /// Its `percentageOfNodesToScore` (the profile's, else the file's; 0:
    /// upstream's adaptive default).
    pub percentage_of_nodes_to_score: u32,
    /// Its queue backoff, if it sets one.
    pub backoff: Option<super::QueueBackoff>,
    /// The process-only fields it sets (`leaderElection`, ...).
    pub process_fields: Vec<&'static str>,
}

/// A `percentageOfNodesToScore` field, checked as kube-scheduler's
/// validation checks it.
pub(super) fn percentage(value: Option<i64>, field: &str) -> Result<Option<u32>> {
    match value {
        Some(p @ 0..=100) => Ok(Some(p as u32)),
        Some(p) => bail!("field {field}: {p} is not in the valid range 0..100"),
        None => Ok(None),
    }
}

/// One loaded plugin as the plan sees it.
pub struct Loaded<'a> {
    /// Its name.
    pub name: &'a str,
    /// The points it implements.
    pub points: &'a [ExtensionPoint],
    /// Whether it runs without being enabled (the plugin's default).
    pub on: bool,
}

impl Profile {
    /// A profile that changes nothing: each plugin at the points it
    /// implements if it is on by default.
    pub fn empty() -> Self {
        Self {
            points: ExtensionPoint::ALL
                .iter()
                .map(|&point| (point, PointSet::default()))
                .collect(),
            ..Self::default()
        }
    }

    /// Enables `name` in `multiPoint` (at every point it implements), or
    /// disables it there; `path` names the setting in messages.
    pub(super) fn set_multi_point(&mut self, name: &str, on: bool, path: &str) {
        let set = &mut self.multi_point;
        set.enabled.retain(|(n, _, _)| n != name);
        set.disabled.retain(|(n, _)| n != name);
        if on {
            set.enabled.push((name.to_string(), None, path.to_string()));
        } else {
            set.disabled.push((name.to_string(), path.to_string()));
        }
    }

    /// Reads the profile of a parsed `KubeSchedulerConfiguration`, and the
    /// `pluginConfig` entries of wasched plugins as (name, args, path).
    pub(super) fn read(file: File) -> Result<Read> {
        if file.api_version != "kubescheduler.config.k8s.io/v1" {
            bail!(
                "field apiVersion: {} is not supported; wasched reads kubescheduler.config.k8s.io/v1",
                file.api_version
            );
        }
        debug_assert_eq!(file.kind, "KubeSchedulerConfiguration");
        if file.parallelism.is_some_and(|p| p <= 0) {
            bail!("field parallelism: must be greater than 0");
        }
        if file.extenders.as_ref().is_some_and(|e| !e.is_empty()) {
            bail!(
                "field extenders: wasched does not call scheduler extenders, whose HTTP answers change decisions; remove them, or write the extender's logic as a plugin"
            );
        }
        let backoff = file.backoff()?;
        let process_fields = file.process_fields();
        let global = percentage(
            file.percentage_of_nodes_to_score,
            "percentageOfNodesToScore",
        )?;
        // Every profile's is checked, as kube-scheduler checks them, not
        // only the one wasched reads.
        for (i, profile) in file.profiles.iter().enumerate() {
            let field = format!("profiles[{i}].percentageOfNodesToScore");
            percentage(profile.percentage_of_nodes_to_score, &field)?;
        }
        let index = match file.profiles.len() {
            0 => {
                return Ok(Read {
                    profile: Self::empty(),
                    args: Vec::new(),
                    percentage_of_nodes_to_score: global.unwrap_or(0),
                    backoff,
                    process_fields,
                });
            }
            1 => 0,
            _ => file
                .profiles
                .iter()
                .position(|p| p.scheduler_name.as_deref() == Some(SCHEDULER_NAME))
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "field profiles: {} profiles and none has schedulerName {SCHEDULER_NAME}; wasched reads that one",
                        file.profiles.len()
                    )
                })?,
        };
        let profile = &file.profiles[index];
        let at = format!("profiles[{index}]");
        // The profile's own value wins over the global one (upstream's
        // `numFeasibleNodesToFind`).
        let percentage_of_nodes_to_score = percentage(
            profile.percentage_of_nodes_to_score,
            &format!("{at}.percentageOfNodesToScore"),
        )?
        .or(global)
        .unwrap_or(0);
        let plugins = profile.plugins.as_ref();
        let set = |f: fn(&Plugins) -> Option<&PluginSetFile>, field: &str| {
            PointSet::of(plugins.and_then(f), &format!("{at}.plugins.{field}"))
        };
        let mut points = BTreeMap::new();
        points.insert(
            ExtensionPoint::PreEnqueue,
            set(|p| p.pre_enqueue.as_ref(), "preEnqueue")?,
        );
        points.insert(
            ExtensionPoint::Filter,
            set(|p| p.filter.as_ref(), "filter")?,
        );
        points.insert(ExtensionPoint::Score, set(|p| p.score.as_ref(), "score")?);
        points.insert(
            ExtensionPoint::Permit,
            set(|p| p.permit.as_ref(), "permit")?,
        );
        points.insert(
            ExtensionPoint::PlacementGenerate,
            set(|p| p.placement_generate.as_ref(), "placementGenerate")?,
        );
        points.insert(
            ExtensionPoint::PlacementScore,
            set(|p| p.placement_score.as_ref(), "placementScore")?,
        );
        points.insert(
            ExtensionPoint::PodGroupPostFilter,
            set(|p| p.pod_group_post_filter.as_ref(), "podGroupPostFilter")?,
        );
        let other = vec![
            ("queueSort", set(|p| p.queue_sort.as_ref(), "queueSort")?),
            ("preFilter", set(|p| p.pre_filter.as_ref(), "preFilter")?),
            ("postFilter", set(|p| p.post_filter.as_ref(), "postFilter")?),
            ("preScore", set(|p| p.pre_score.as_ref(), "preScore")?),
            ("reserve", set(|p| p.reserve.as_ref(), "reserve")?),
            ("preBind", set(|p| p.pre_bind.as_ref(), "preBind")?),
            ("bind", set(|p| p.bind.as_ref(), "bind")?),
            ("postBind", set(|p| p.post_bind.as_ref(), "postBind")?),
        ];
        let mut in_tree_config = Vec::new();
        let mut wasched_config = Vec::new();
        for (i, entry) in profile.plugin_config.iter().enumerate() {
            let path = format!("{at}.pluginConfig[{i}]");
            if IN_TREE.contains(&entry.name.as_str()) {
                in_tree_config.push((entry.name.clone(), path));
            } else {
                let args = entry
                    .args
                    .clone()
                    .unwrap_or(Value::Object(Default::default()));
                wasched_config.push((entry.name.clone(), args, path));
            }
        }
        let profile = Self {
            multi_point: set(|p| p.multi_point.as_ref(), "multiPoint")?,
            points,
            other,
            in_tree_config,
        };
        Ok(Read {
            profile,
            args: wasched_config,
            percentage_of_nodes_to_score,
            backoff,
            process_fields,
        })
    }

    /// Resolves the profile against the `loaded` plugins: the plan, and
    /// one note per in-tree plugin named (wasched does not run those).
    pub fn plan(&self, loaded: &[Loaded<'_>]) -> Result<(Plan, Vec<String>)> {
        let find = |name: &str| loaded.iter().find(|l| l.name == name);
        let mut in_tree: Vec<String> = Vec::new();
        let mut check = |name: &str, path: &str| -> Result<bool> {
            if name == "*" || find(name).is_some() {
                return Ok(true);
            }
            if IN_TREE.contains(&name) {
                if !in_tree.iter().any(|n| n == name) {
                    in_tree.push(name.to_string());
                }
                return Ok(false);
            }
            let hint = super::rename_hint(name);
            bail!(
                "field {path}: unknown plugin {name}{hint}; loaded: {}",
                loaded.iter().map(|l| l.name).collect::<Vec<_>>().join(", ")
            )
        };
        let sets = self
            .points
            .values()
            .chain(std::iter::once(&self.multi_point));
        for set in sets {
            for (name, _, path) in &set.enabled {
                check(name, path)?;
            }
            for (name, path) in &set.disabled {
                check(name, path)?;
            }
        }
        for (field, set) in &self.other {
            // kube-scheduler's wasched plugin prepares Filter in PreFilter
            // and Score in PreScore, so one file for both names it there.
            let prepares = match *field {
                "preFilter" => Some(ExtensionPoint::Filter),
                "preScore" => Some(ExtensionPoint::Score),
                _ => None,
            };
            for (name, _, path) in &set.enabled {
                if check(name, path)? {
                    let prepared = prepares
                        .is_some_and(|point| find(name).is_some_and(|l| l.points.contains(&point)));
                    if !prepared {
                        bail!(
                            "field {path}: {name} is a wasched plugin; wasched plugins have no such extension point"
                        );
                    }
                }
            }
        }
        for (name, _) in &self.in_tree_config {
            if !in_tree.iter().any(|n| n == name) {
                in_tree.push(name.clone());
            }
        }
        let mut plan = Plan::new();
        for (&point, set) in &self.points {
            let mut list: Vec<(String, i64)> = loaded
                .iter()
                .filter(|l| l.on && l.points.contains(&point))
                .filter(|l| !set.disables(l.name) && !self.multi_point.disables(l.name))
                .map(|l| (l.name.to_string(), 1))
                .collect();
            let multi = self
                .multi_point
                .enabled
                .iter()
                .filter(|(name, _, _)| find(name).is_some_and(|l| l.points.contains(&point)));
            for (name, weight, path) in multi.chain(&set.enabled) {
                let Some(plugin) = find(name) else { continue };
                if !plugin.points.contains(&point) {
                    bail!(
                        "field {path}: plugin {name} does not implement {}",
                        point.interface()
                    );
                }
                let weight = weight.unwrap_or(1);
                match list.iter_mut().find(|(n, _)| n == name) {
                    Some(entry) => entry.1 = weight,
                    None => list.push((name.clone(), weight)),
                }
            }
            plan.insert(point, list);
        }
        let notes = in_tree
            .into_iter()
            .map(|name| {
                format!(
                    "in-tree plugin {name} runs only inside kube-scheduler; wasched applies its own in-tree node checks and runs no in-tree plugin"
                )
            })
            .collect();
        Ok((plan, notes))
    }
}
