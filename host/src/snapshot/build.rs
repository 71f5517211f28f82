//! Manifests → [`Snapshot`]: resolves priorities, group membership and
//! resource amounts, and indexes everything.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1::{Node, TopologySpreadConstraint};
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::resources::{self, Amounts, PODS};
use super::{GroupId, GroupInfo, GroupSpec, NodeInfo, PodInfo, Policy, Snapshot};
use crate::manifest::{Manifests, Object, ObjectRef};
use crate::node_checks::taint_text;

fn seconds(time: Option<&Time>) -> i64 {
    time.map_or(0, |t| t.0.as_second())
}

fn key(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => format!("default/{name}"),
    }
}

struct PriorityClasses {
    values: HashMap<String, i32>,
    global_default: Option<i32>,
}

impl PriorityClasses {
    /// `priority`, else the value of `class`, else the global default, else 0.
    fn resolve(
        &self,
        origin: &ObjectRef,
        field: &str,
        priority: Option<i32>,
        class: Option<&str>,
    ) -> Result<i32> {
        if let Some(priority) = priority {
            return Ok(priority);
        }
        match class.filter(|c| !c.is_empty()) {
            Some(class) => self.values.get(class).copied().ok_or_else(|| {
                anyhow!("{origin}: field {field}: PriorityClass {class:?} is not in the snapshot")
            }),
            None => Ok(self.global_default.unwrap_or(0)),
        }
    }
}

impl Snapshot {
    /// Indexes the manifests. Fails on duplicate objects, unknown priority
    /// classes and invalid specs, naming file, object and field.
    pub fn build(manifests: &Manifests) -> Result<Snapshot> {
        let mut seen: HashMap<(String, String), &ObjectRef> = HashMap::new();
        let mut priorities = PriorityClasses {
            values: HashMap::new(),
            global_default: None,
        };
        let (mut nodes, mut pods, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        let mut snapshot = Snapshot::default();
        snapshot.warnings.extend(manifests.skipped_warning());
        snapshot.notes = manifests.notes.clone();
        snapshot.notes.extend(manifests.pod_marker_notes());
        for composite in &manifests.dialects.composites {
            snapshot
                .other_objects
                .push(format!("CompositePodGroup {composite} (early dialect)"));
        }
        for (origin, object) in &manifests.objects {
            if let Some(first) = seen.insert((origin.kind.clone(), origin.name.clone()), origin) {
                bail!("{origin}: defined twice (first in {})", first.file);
            }
            match object {
                Object::Node(node) => nodes.push((origin, node.as_ref())),
                Object::Pod(pod) => pods.push((origin, pod.as_ref())),
                Object::PodGroup(group) => groups.push((origin, group.as_ref())),
                Object::PriorityClass(class) => {
                    let value = class
                        .value
                        .ok_or_else(|| anyhow!("{origin}: field value: required"))?;
                    if class.global_default == Some(true) {
                        priorities.global_default = Some(value);
                    }
                    priorities
                        .values
                        .insert(class.metadata.name.clone().unwrap_or_default(), value);
                }
                Object::Workload(_) | Object::CompositePodGroup(_) | Object::Job(_) => {
                    snapshot
                        .other_objects
                        .push(format!("{} {}", origin.kind, origin.name));
                }
            }
        }

        // Nodes, by name.
        let mut node_amounts = Vec::new();
        nodes.sort_by(|a, b| a.1.metadata.name.cmp(&b.1.metadata.name));
        for (origin, node) in &nodes {
            node_amounts
                .push(resources::node_allocatable(node).map_err(|e| anyhow!("{origin}: {e}"))?);
            let mut info = node_info(node);
            info.taint_texts = info
                .taints
                .iter()
                .map(|t| snapshot.taint_texts.intern(&taint_text(t)))
                .collect();
            snapshot.nodes.push(info);
        }
        let node_index: HashMap<&str, u32> = snapshot
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u32))
            .collect();

        // PodGroups, by key.
        let mut group_specs: BTreeMap<String, (GroupSpec, i64)> = BTreeMap::new();
        for (origin, group) in &groups {
            let spec = group_spec(origin, group, &priorities)?;
            group_specs.insert(
                key(&group.metadata),
                (spec, seconds(group.metadata.creation_timestamp.as_ref())),
            );
        }

        // Pods, by key; terminal and terminating pods hold no resources.
        let mut pod_amounts = Vec::new();
        let mut ignored = 0;
        let mut on_unknown_nodes = BTreeSet::new();
        pods.sort_by_key(|(_, pod)| key(&pod.metadata));
        let mut member_of: Vec<Option<String>> = Vec::new();
        for (origin, pod) in &pods {
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if matches!(phase, Some("Succeeded" | "Failed"))
                || pod.metadata.deletion_timestamp.is_some()
            {
                ignored += 1;
                continue;
            }
            let spec = pod
                .spec
                .as_ref()
                .ok_or_else(|| anyhow!("{origin}: field spec: required"))?;
            pod_amounts.push(resources::pod_requests(spec).map_err(|e| anyhow!("{origin}: {e}"))?);
            let group = spec
                .scheduling_group
                .as_ref()
                .and_then(|g| g.pod_group_name.clone())
                .filter(|g| !g.is_empty())
                .map(|g| {
                    format!(
                        "{}/{g}",
                        pod.metadata.namespace.as_deref().unwrap_or("default")
                    )
                });
            let priority = priorities.resolve(
                origin,
                "spec.priorityClassName",
                spec.priority,
                spec.priority_class_name.as_deref(),
            )?;
            let node_name = spec.node_name.as_deref().filter(|n| !n.is_empty());
            let node = node_name.and_then(|n| node_index.get(n).copied());
            if let (Some(name), None) = (node_name, node) {
                on_unknown_nodes.insert(name.to_string());
            }
            let created = seconds(pod.metadata.creation_timestamp.as_ref());
            let affinity = spec
                .affinity
                .as_ref()
                .and_then(|a| a.node_affinity.as_ref());
            snapshot.pods.push(PodInfo {
                key: key(&pod.metadata),
                namespace: pod
                    .metadata
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".into()),
                node,
                pending: node_name.is_none(),
                priority,
                group: None,
                requests: Vec::new(),
                tolerations: spec.tolerations.clone().unwrap_or_default(),
                node_selector: spec.node_selector.clone().unwrap_or_default(),
                required_node_affinity: affinity
                    .and_then(|a| {
                        a.required_during_scheduling_ignored_during_execution
                            .as_ref()
                    })
                    .map(|s| s.node_selector_terms.clone()),
                created,
                started: pod
                    .status
                    .as_ref()
                    .and_then(|s| s.start_time.as_ref())
                    .map_or(created, |t| t.0.as_second()),
                labels: pod.metadata.labels.clone().unwrap_or_default(),
                spread: hard_spread(spec.topology_spread_constraints.iter().flatten())
                    .chain(
                        group
                            .as_ref()
                            .and_then(|g| manifests.dialects.groups.get(g))
                            .map(|extras| extras.spread.clone())
                            .unwrap_or_default(),
                    )
                    .collect(),
            });
            member_of.push(group);
        }
        if ignored > 0 {
            snapshot.warnings.push(format!(
                "ignored {ignored} terminal or terminating pod(s): they hold no resources"
            ));
        }
        if !on_unknown_nodes.is_empty() {
            let names: Vec<_> = on_unknown_nodes.into_iter().collect();
            snapshot.warnings.push(format!(
                "pods are bound to node(s) not in the snapshot, their resources are not counted: {}",
                names.join(", ")
            ));
        }

        // Groups: every PodGroup object plus every name pods refer to.
        let mut group_keys: BTreeSet<String> = group_specs.keys().cloned().collect();
        group_keys.extend(member_of.iter().flatten().cloned());
        let group_index: HashMap<String, GroupId> = group_keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.clone(), i as GroupId))
            .collect();
        for key in &group_keys {
            // A PodGroup that only pods name is as old as its oldest member.
            let (spec, created) = match group_specs.get(key) {
                Some((spec, created)) => (Some(spec.clone()), *created),
                None => {
                    let oldest = member_of
                        .iter()
                        .zip(&snapshot.pods)
                        .filter(|(g, _)| g.as_ref() == Some(key));
                    (None, oldest.map(|(_, p)| p.created).min().unwrap_or(0))
                }
            };
            snapshot.groups.push(GroupInfo {
                key: key.clone(),
                spec,
                members: Vec::new(),
                created,
                min_resources: Vec::new(),
            });
        }
        for (pod_id, group) in member_of.iter().enumerate() {
            let Some(group) = group else { continue };
            let g = &mut snapshot.groups[group_index[group] as usize];
            if let Some(spec) = &g.spec {
                snapshot.pods[pod_id].priority = spec.priority;
            }
            snapshot.pods[pod_id].group = Some(group_index[group]);
            g.members.push(pod_id as u32);
        }
        for g in &mut snapshot.groups {
            let pods = &snapshot.pods;
            g.members.sort_by(|&a, &b| {
                let (a, b) = (&pods[a as usize], &pods[b as usize]);
                (a.created, &a.key).cmp(&(b.created, &b.key))
            });
        }

        snapshot.link_composites(manifests);
        for group in &snapshot.groups {
            if let Some(parent) = group.spec.as_ref().and_then(|s| s.parent.as_ref()) {
                snapshot.warnings.push(format!(
                    "PodGroup {}: parentCompositePodGroupName {parent} is not modelled yet; the group is scheduled on its own",
                    group.key
                ));
            }
        }
        let mut group_minimums = Vec::new();
        for (key, extras) in &manifests.dialects.groups {
            if extras.min_resources.is_empty() {
                continue;
            }
            let mut amounts = Amounts::new();
            for (resource, quantity) in &extras.min_resources {
                let value = resources::amount(resource, quantity).map_err(|e| {
                    anyhow!("PodGroup {key}: field spec.minResources.{resource}: {e}")
                })?;
                amounts.insert(resource.clone(), value);
            }
            group_minimums.push((group_index.get(key).copied(), amounts));
        }
        snapshot.index_resources(&node_amounts, &pod_amounts, &group_minimums);
        if snapshot.resource_names.len() > 128 {
            bail!(
                "the snapshot names {} distinct resources; wasched handles at most 128",
                snapshot.resource_names.len()
            );
        }
        snapshot.index_symbols();
        Ok(snapshot)
    }

    /// Early-dialect CompositePodGroup children: the parent and level topology
    /// key go onto the child PodGroups' specs.
    fn link_composites(&mut self, manifests: &Manifests) {
        for link in &manifests.dialects.composite_links {
            let Some(group) = self.groups.iter_mut().find(|g| g.key == link.child) else {
                self.warnings.push(format!(
                    "{}: child PodGroup {} is not in the snapshot",
                    link.origin, link.child
                ));
                continue;
            };
            let Some(spec) = group.spec.as_mut() else {
                continue;
            };
            spec.parent.get_or_insert_with(|| link.parent.clone());
            if spec.topology_key.is_none() {
                spec.topology_key.clone_from(&link.topology_key);
            }
        }
    }

    fn index_resources(
        &mut self,
        node_amounts: &[Amounts],
        pod_amounts: &[Amounts],
        group_minimums: &[(Option<GroupId>, Amounts)],
    ) {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        for amounts in node_amounts
            .iter()
            .chain(pod_amounts)
            .chain(group_minimums.iter().map(|(_, a)| a))
        {
            names.extend(amounts.keys().map(String::as_str));
        }
        let fixed = ["cpu", "memory", PODS];
        self.resource_names = fixed.iter().map(|s| s.to_string()).collect();
        self.resource_names.extend(
            names
                .into_iter()
                .filter(|n| !fixed.contains(n))
                .map(str::to_string),
        );
        let column = |amounts: &Amounts| -> Vec<u64> {
            self.resource_names
                .iter()
                .map(|r| amounts.get(r).copied().unwrap_or(0))
                .collect()
        };
        let per_node: Vec<Vec<u64>> = node_amounts.iter().map(column).collect();
        let per_pod: Vec<Vec<u64>> = pod_amounts.iter().map(column).collect();
        let (resources, nodes) = (self.resource_names.len(), self.nodes.len());
        self.allocatable = (0..resources)
            .map(|r| per_node.iter().map(|n| n[r]).collect())
            .collect();
        self.requested = vec![vec![0; nodes]; resources];
        self.pods_on_node = vec![Vec::new(); nodes];
        for (pod, requests) in self.pods.iter_mut().zip(per_pod) {
            pod.requests = requests;
        }
        for (group, amounts) in group_minimums {
            let Some(group) = group else { continue };
            let columns = column(amounts);
            self.groups[*group as usize].min_resources = columns
                .into_iter()
                .enumerate()
                .filter(|&(_, v)| v > 0)
                .collect();
        }
        for pod in 0..self.pods.len() {
            if let Some(node) = self.pods[pod].node.take() {
                self.assume(pod as u32, node);
            }
        }
    }

    fn index_symbols(&mut self) {
        for node in &self.nodes {
            self.symbols.intern(&node.name);
            for (k, v) in &node.labels {
                self.symbols.intern(k);
                self.symbols.intern(v);
            }
        }
        for spec in self.groups.iter().filter_map(|g| g.spec.as_ref()) {
            if let Some(key) = &spec.topology_key {
                self.symbols.intern(key);
            }
        }
    }
}

/// The `DoNotSchedule` constraints; `ScheduleAnyway` is a scoring
/// preference wasched does not model.
fn hard_spread<'a>(
    constraints: impl Iterator<Item = &'a TopologySpreadConstraint> + 'a,
) -> impl Iterator<Item = TopologySpreadConstraint> + 'a {
    constraints
        .filter(|c| c.when_unsatisfiable == "DoNotSchedule")
        .cloned()
}

fn node_info(node: &Node) -> NodeInfo {
    let spec = node.spec.as_ref();
    NodeInfo {
        name: node.metadata.name.clone().unwrap_or_default(),
        labels: node.metadata.labels.clone().unwrap_or_default(),
        taints: spec.and_then(|s| s.taints.clone()).unwrap_or_default(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        taint_texts: Vec::new(),
    }
}

fn group_spec(
    origin: &ObjectRef,
    group: &PodGroup,
    priorities: &PriorityClasses,
) -> Result<GroupSpec> {
    let spec = &group.spec;
    let policy = match (&spec.scheduling_policy.basic, &spec.scheduling_policy.gang) {
        (Some(_), None) => Policy::Basic,
        (None, Some(gang)) => match u32::try_from(gang.min_count) {
            Ok(min_count) if min_count >= 1 => Policy::Gang { min_count },
            _ => bail!(
                "{origin}: field spec.schedulingPolicy.gang.minCount: must be at least 1, got {}",
                gang.min_count
            ),
        },
        _ => {
            bail!("{origin}: field spec.schedulingPolicy: exactly one of basic or gang must be set")
        }
    };
    let disrupt_all = match &spec.disruption_mode {
        None => false,
        Some(mode) => match (&mode.single, &mode.all) {
            (Some(_), None) => false,
            (None, Some(_)) => true,
            _ => bail!(
                "{origin}: field spec.disruptionMode: exactly one of single or all must be set"
            ),
        },
    };
    let never_preempt = match spec.preemption_policy.as_deref() {
        None | Some("PreemptLowerPriority") => false,
        Some("Never") => true,
        Some(other) => bail!(
            "{origin}: field spec.preemptionPolicy: {other:?} is not one of PreemptLowerPriority, Never"
        ),
    };
    let topology = spec
        .scheduling_constraints
        .as_ref()
        .and_then(|c| c.topology.as_ref());
    if topology.is_some_and(|t| t.len() > 1) {
        bail!("{origin}: field spec.schedulingConstraints.topology: at most one entry is allowed");
    }
    Ok(GroupSpec {
        policy,
        priority: priorities.resolve(
            origin,
            "spec.priorityClassName",
            spec.priority,
            spec.priority_class_name.as_deref(),
        )?,
        disrupt_all,
        never_preempt,
        topology_key: topology.and_then(|t| t.first()).map(|t| t.key.clone()),
        parent: spec.parent_composite_pod_group_name.clone(),
    })
}
