//! Manifests → [`Snapshot`]: resolves priorities, group membership and
//! resource amounts, and indexes everything.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1::{Node, TopologySpreadConstraint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::composite::{self, CompositeInfo, CompositePolicy, CompositeSpec, Member};
use super::disruption::{self, DisruptionBudget};
use super::identity;
use super::resources::{self, Amounts, PODS};
use super::{
    CompositeId, GroupId, GroupInfo, GroupSpec, NodeInfo, PodInfo, Policy, Snapshot,
    label_selector_matches, taint_text,
};
use crate::manifest::{Manifests, Object, ObjectRef};

pub(super) fn seconds(time: Option<&Time>) -> i64 {
    time.map_or(0, |t| t.0.as_second())
}

pub(super) fn key(meta: &ObjectMeta) -> String {
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => format!("default/{name}"),
    }
}

/// The PriorityClasses of a snapshot, as pods and groups resolve them.
#[derive(Debug, Default, Clone)]
pub(super) struct PriorityClasses {
    values: HashMap<String, i32>,
    global_default: Option<i32>,
    /// Classes with `preemptionPolicy: Never`.
    never: BTreeSet<String>,
    global_default_never: bool,
}

/// `preemptionPolicy`: `Never` → true; `PreemptLowerPriority` or unset → false.
fn never_preempts(origin: &ObjectRef, field: &str, policy: Option<&str>) -> Result<bool> {
    match policy {
        None | Some("PreemptLowerPriority") => Ok(false),
        Some("Never") => Ok(true),
        Some(other) => {
            bail!("{origin}: field {field}: {other:?} is not one of PreemptLowerPriority, Never")
        }
    }
}

/// `spec.disruptionMode`: `all` → true.
fn disrupts_all(origin: &ObjectRef, single: bool, all: bool) -> Result<bool> {
    match (single, all) {
        (true, false) => Ok(false),
        (false, true) => Ok(true),
        _ => bail!("{origin}: field spec.disruptionMode: exactly one of single or all must be set"),
    }
}

/// What a PriorityClass object says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClassRead {
    name: String,
    value: i32,
    never: bool,
    global_default: bool,
}

/// Reads a PriorityClass.
pub(super) fn read_class(
    origin: &ObjectRef,
    class: &k8s_openapi::api::scheduling::v1::PriorityClass,
) -> Result<ClassRead> {
    Ok(ClassRead {
        name: class.metadata.name.clone().unwrap_or_default(),
        value: class
            .value
            .ok_or_else(|| anyhow!("{origin}: field value: required"))?,
        never: never_preempts(
            origin,
            "preemptionPolicy",
            class.preemption_policy.as_deref(),
        )?,
        global_default: class.global_default == Some(true),
    })
}

impl PriorityClasses {
    /// Adds a class read by [`read_class`]; a later global default wins.
    pub(super) fn add(&mut self, class: &ClassRead) {
        if class.global_default {
            self.global_default = Some(class.value);
            self.global_default_never = class.never;
        }
        if class.never {
            self.never.insert(class.name.clone());
        }
        self.values.insert(class.name.clone(), class.value);
    }

    /// A pod's effective `preemptionPolicy: Never`: its own field, else its
    /// class's (the global default class when it names none).
    fn never(&self, own: bool, class: Option<&str>) -> bool {
        own || match class.filter(|c| !c.is_empty()) {
            Some(class) => self.never.contains(class),
            None => self.global_default_never,
        }
    }

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

/// How a snapshot reads its pods.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Schedule only the pending pods whose `spec.schedulerName` is one of
    /// these (`default-scheduler` when unset); other schedulers' pending
    /// pods are left alone, their bound pods still count. Empty: every
    /// pending pod.
    pub schedulers: Vec<String>,
    /// A live cluster: pods being deleted keep their resources on their
    /// node until they are gone, as kube-scheduler's cache keeps them (a
    /// snapshot assumes they finish).
    pub live: bool,
}

impl BuildOptions {
    /// Whether a pod with this spec, when pending, is this scheduler's to place.
    pub fn schedules(&self, spec: &k8s_openapi::api::core::v1::PodSpec) -> bool {
        let bound = spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
        let name = spec
            .scheduler_name
            .as_deref()
            .unwrap_or(DEFAULT_SCHEDULER_NAME);
        bound || self.schedulers.is_empty() || self.schedulers.iter().any(|s| s == name)
    }
}

impl BuildOptions {
    /// The note saying which pending pods name a scheduler these options
    /// leave out, counted per scheduler; none when every pending pod is in.
    pub fn left_out_note(&self, manifests: &Manifests) -> Option<String> {
        let mut by_scheduler: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, object) in &manifests.objects {
            let Object::Pod(pod) = object else { continue };
            let Some(spec) = &pod.spec else { continue };
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            let pending = spec.node_name.as_deref().is_none_or(str::is_empty)
                && pod.metadata.deletion_timestamp.is_none()
                && !matches!(phase, Some("Succeeded" | "Failed"));
            if pending && !self.schedules(spec) {
                let name = spec
                    .scheduler_name
                    .as_deref()
                    .unwrap_or(DEFAULT_SCHEDULER_NAME);
                *by_scheduler.entry(name).or_default() += 1;
            }
        }
        if by_scheduler.is_empty() {
            return None;
        }
        let total: usize = by_scheduler.values().sum();
        let counts: Vec<String> = by_scheduler
            .iter()
            .map(|(name, n)| format!("{n} of {name}"))
            .collect();
        Some(format!(
            "{total} pending pod(s) name another scheduler ({}): left out; \
             --scheduler-name NAME,... includes them",
            counts.join(", ")
        ))
    }
}

pub use crate::manifest::DEFAULT_SCHEDULER_NAME;

impl Snapshot {
    /// Indexes the manifests. Fails on duplicate objects, unknown priority
    /// classes and invalid specs, naming file, object and field.
    pub fn build(manifests: &Manifests) -> Result<Snapshot> {
        Self::build_with(manifests, &BuildOptions::default())
    }

    /// [`Snapshot::build`] with options.
    pub fn build_with(manifests: &Manifests, options: &BuildOptions) -> Result<Snapshot> {
        let objects = manifests
            .objects
            .iter()
            .map(|(origin, object)| (origin, object));
        Self::build_objects(manifests, objects, options)
    }

    /// [`Snapshot::build_with`] over objects held elsewhere (`wasched
    /// shadow`'s store shares them instead of copying them): `manifests`
    /// gives how they were read (dialects, notes, kinds skipped), its own
    /// objects are not looked at.
    pub fn build_objects<'a>(
        manifests: &'a Manifests,
        objects: impl Iterator<Item = (&'a ObjectRef, &'a Object)>,
        options: &BuildOptions,
    ) -> Result<Snapshot> {
        let mut seen: HashMap<(String, String), &ObjectRef> = HashMap::new();
        let mut priorities = PriorityClasses::default();
        let (mut nodes, mut pods, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        let (mut composites, mut budgets) = (Vec::new(), Vec::new());
        let mut snapshot = Snapshot::default();
        snapshot.warnings.extend(manifests.skipped_warning());
        snapshot.warnings.extend(manifests.warnings.iter().cloned());
        snapshot.notes = manifests.notes.clone();
        snapshot.notes.extend(manifests.pod_marker_notes());
        snapshot.without_pods = manifests.without_pods.clone();
        for (origin, object) in objects {
            if let Some(first) = seen.insert((origin.kind.clone(), origin.name.clone()), origin) {
                bail!("{origin}: defined twice (first in {})", first.file);
            }
            match object {
                Object::Node(node) => nodes.push((origin, node.as_ref())),
                Object::Pod(pod) => pods.push((origin, pod.as_ref())),
                Object::PodGroup(group) => groups.push((origin, group.as_ref())),
                Object::CompositePodGroup(c) => composites.push((origin, c.as_ref())),
                Object::PodDisruptionBudget(b) => budgets.push((origin, b.as_ref())),
                Object::PriorityClass(class) => priorities.add(&read_class(origin, class)?),
                // Workloads are the objects PodGroups point to; what the
                // scheduler needs of them is on the PodGroups. Jobs were
                // expanded before.
                Object::Workload(_) | Object::Job(_) | Object::Controller(_) => {}
            }
        }

        // Nodes, by name.
        let mut node_amounts = Vec::new();
        nodes.sort_by(|a, b| a.1.metadata.name.cmp(&b.1.metadata.name));
        for (origin, node) in &nodes {
            let (mut info, amounts) = read_node(origin, node)?;
            node_amounts.push(amounts);
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

        // Pods, by key; terminal pods are gone, terminating pods are kept
        // (marked) but hold no resources.
        let mut pod_amounts = Vec::new();
        let mut ignored = 0;
        let mut gated = 0;
        let mut unmodelled: Vec<String> = Vec::new();
        let mut on_unknown_nodes = BTreeSet::new();
        pods.sort_by_key(|(_, pod)| key(&pod.metadata));
        let mut member_of: Vec<Option<String>> = Vec::new();
        for (origin, pod) in &pods {
            let read = match read_pod(origin, pod, &priorities, options, manifests)? {
                PodRead::Terminal => {
                    ignored += 1;
                    continue;
                }
                PodRead::Foreign => continue,
                PodRead::Gated => {
                    gated += 1;
                    continue;
                }
                PodRead::Modelled(read) => *read,
            };
            ignored += usize::from(read.ignored);
            unmodelled.extend(read.unmodelled);
            let terminating = read.info.terminating;
            let node = read
                .node_name
                .as_deref()
                .and_then(|n| node_index.get(n).copied());
            if let (Some(name), None, false) = (&read.node_name, node, terminating) {
                on_unknown_nodes.insert(name.clone());
            }
            let mut info = read.info;
            info.node = node.filter(|_| !terminating || options.live);
            info.nominated_node = read
                .nominated_name
                .as_deref()
                .and_then(|n| node_index.get(n).copied());
            pod_amounts.push(read.amounts);
            snapshot.pods.push(info);
            member_of.push(read.group);
        }
        if ignored > 0 {
            snapshot.warnings.push(format!(
                "ignored {ignored} terminal or terminating pod(s): they hold no resources"
            ));
        }
        if !unmodelled.is_empty() {
            let shown: Vec<&str> = unmodelled.iter().take(3).map(String::as_str).collect();
            let more = unmodelled.len().saturating_sub(shown.len());
            snapshot.warnings.push(format!(
                "{} pending pod(s) ask for what wasched does not model, which is not checked for them: {}{}",
                unmodelled.len(),
                shown.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ));
        }
        if gated > 0 {
            snapshot.warnings.push(format!(
                "{gated} pending pod(s) held by scheduling gates are not scheduled until their gates are removed"
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
                parent: None,
                invalid: None,
            });
        }
        for (pod_id, group) in member_of.iter().enumerate() {
            let Some(group) = group else { continue };
            let g = &mut snapshot.groups[group_index[group] as usize];
            if let Some(spec) = &g.spec {
                snapshot.pods[pod_id].priority = spec.priority;
                snapshot.pods[pod_id].never_preempt = spec.never_preempt;
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
        snapshot.index_composites(manifests, &composites, &priorities)?;
        snapshot.index_budgets(&budgets)?;
        let group_minimums: Vec<(Option<GroupId>, Amounts)> = dialect_minimums(manifests)?
            .into_iter()
            .map(|(key, amounts)| (group_index.get(&key).copied(), amounts))
            .collect();
        snapshot.index_resources(&node_amounts, &pod_amounts, &group_minimums);
        if snapshot.resource_names.len() > 128 {
            bail!(
                "the snapshot names {} distinct resources; wasched handles at most 128",
                snapshot.resource_names.len()
            );
        }
        snapshot.index_symbols();
        snapshot.index_anti_affinity();
        snapshot.commit();
        let identity = identity::Identity::fresh(&snapshot);
        snapshot.set_identity(identity);
        Ok(snapshot)
    }

    /// CompositePodGroups (v1alpha3 objects and early-dialect ones), linked
    /// to their children and validated per tree: an invalid tree is marked
    /// on its composites and PodGroups, the rest is untouched.
    fn index_composites(
        &mut self,
        manifests: &Manifests,
        objects: &[(&ObjectRef, &CompositePodGroup)],
        priorities: &PriorityClasses,
    ) -> Result<()> {
        let mut infos: BTreeMap<String, CompositeInfo> = BTreeMap::new();
        for (origin, object) in objects {
            let info = composite_info(origin, object, priorities)?;
            infos.insert(info.key.clone(), info);
        }
        for dialect in &manifests.dialects.composites {
            if infos.contains_key(&dialect.key) {
                bail!("{}: defined twice", dialect.origin);
            }
            infos.insert(dialect.key.clone(), dialect_composite(dialect));
        }
        let warnings = self.link_trees(infos.into_values().collect());
        self.warnings.extend(warnings);
        Ok(())
    }

    /// Puts `composites` (sorted by key, unlinked) in the snapshot, links
    /// every CompositePodGroup and PodGroup to its parent and validates each
    /// tree; returns the warnings about irregular trees.
    pub(super) fn link_trees(&mut self, composites: Vec<CompositeInfo>) -> Vec<String> {
        self.composites = composites;
        for group in &mut self.groups {
            group.parent = None;
            group.invalid = None;
        }
        let index: HashMap<String, CompositeId> = self
            .composites
            .iter()
            .enumerate()
            .map(|(i, c)| (c.key.clone(), i as CompositeId))
            .collect();
        let namespace = |key: &str| key.split_once('/').map_or("", |(ns, _)| ns).to_string();
        for c in 0..self.composites.len() {
            let parent = self.composites[c]
                .parent_name
                .as_ref()
                .and_then(|p| index.get(&format!("{}/{p}", namespace(&self.composites[c].key))))
                .copied();
            self.composites[c].parent = parent;
            if let Some(parent) = parent {
                self.composites[parent as usize]
                    .child_composites
                    .push(c as CompositeId);
            }
        }
        for g in 0..self.groups.len() {
            let group = &self.groups[g];
            let parent = group
                .spec
                .as_ref()
                .and_then(|s| s.parent.as_ref())
                .and_then(|p| index.get(&format!("{}/{p}", namespace(&group.key))))
                .copied();
            self.groups[g].parent = parent;
            if let Some(parent) = parent {
                self.composites[parent as usize]
                    .child_groups
                    .push(g as GroupId);
            }
        }
        // Validate: members are every composite and every PodGroup that has
        // a parent (PodGroups without one are trees of their own).
        let mut members: Vec<Member> = self
            .composites
            .iter()
            .map(|c| Member {
                kind: "CompositePodGroup",
                key: c.key.clone(),
                parent: c.parent_name.clone(),
                workload: c.workload.clone(),
            })
            .collect();
        let grouped: Vec<GroupId> = (0..self.groups.len() as GroupId)
            .filter(|&g| {
                self.groups[g as usize]
                    .spec
                    .as_ref()
                    .is_some_and(|s| s.parent.is_some())
            })
            .collect();
        members.extend(grouped.iter().map(|&g| {
            let group = &self.groups[g as usize];
            let spec = group.spec.as_ref().expect("filtered above");
            Member {
                kind: "PodGroup",
                key: group.key.clone(),
                parent: spec.parent.clone(),
                workload: spec.workload.clone(),
            }
        }));
        let (problems, irregular) = composite::classify(&members);
        let composites = self.composites.len();
        let mut warned = std::collections::BTreeSet::new();
        let mut warnings = Vec::new();
        for problem in irregular.into_values() {
            if warned.insert(problem.clone()) {
                warnings.push(format!(
                    "CompositePodGroup tree: {problem}; KEP-6012 calls such a tree Invalid, kube-scheduler v1.37.2 schedules it, and so does wasched"
                ));
            }
        }
        for (i, problem) in problems {
            let text = Some(format!("Invalid: {problem}"));
            if i < composites {
                self.composites[i].invalid = text;
            } else {
                self.groups[grouped[i - composites] as usize].invalid = text;
            }
        }
        warnings
    }

    /// PodDisruptionBudgets with the pods they match and the disruptions
    /// they allow now.
    fn index_budgets(&mut self, objects: &[(&ObjectRef, &PodDisruptionBudget)]) -> Result<()> {
        let mut budgets: Vec<BudgetRead> = objects
            .iter()
            .map(|(origin, b)| read_budget(origin, b))
            .collect::<Result<_>>()?;
        budgets.sort_by(|a, b| a.key.cmp(&b.key));
        self.pod_budgets = vec![Vec::new(); self.pods.len()];
        for (id, budget) in budgets.iter().enumerate() {
            let pods: Vec<u32> = (0..self.pods.len() as u32)
                .filter(|&p| budget.matches(&self.pods[p as usize]))
                .collect();
            for &p in &pods {
                self.pod_budgets[p as usize].push(id as u32);
            }
            self.budgets.push(DisruptionBudget {
                key: budget.key.clone(),
                pods,
                disruptions_allowed: 0,
            });
            self.budgets[id].disruptions_allowed = budget.allowed(self, id as u32);
        }
        Ok(())
    }

    /// Early-dialect CompositePodGroup children: the parent and level topology
    /// key go onto the child PodGroups' specs.
    fn link_composites(&mut self, manifests: &Manifests) {
        let links = &manifests.dialects.composite_links;
        self.warnings
            .extend(missing_link_children(&self.groups, links));
        for group in &mut self.groups {
            if let Some(spec) = group.spec.as_mut() {
                link_dialect_parent(&group.key, spec, links);
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
        self.scoring_requested = [vec![0; nodes], vec![0; nodes]];
        self.nominated_requested = [vec![0; nodes], vec![0; nodes]];
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

    pub(super) fn index_symbols(&mut self) {
        for node in &self.nodes {
            self.symbols.intern(&node.name);
            for (k, v) in node.labels.iter() {
                self.symbols.intern(k);
                self.symbols.intern(v);
            }
        }
        for spec in self.groups.iter().filter_map(|g| g.spec.as_ref()) {
            if let Some(key) = &spec.topology_key {
                self.symbols.intern(key);
            }
        }
        for composite in &self.composites {
            if let Some(key) = &composite.spec.topology_key {
                self.symbols.intern(key);
            }
        }
        for pod in &self.pods {
            self.symbols.intern(&pod.namespace);
            for (k, v) in pod.labels.iter() {
                self.symbols.intern(k);
                self.symbols.intern(v);
            }
        }
        // Node labels as columns, one per key: what topology plugins read.
        for (n, node) in self.nodes.iter().enumerate() {
            for (k, v) in node.labels.iter() {
                let (key, value) = (self.symbols.intern(k), self.symbols.intern(v));
                self.label_columns
                    .entry(key)
                    .or_insert_with(|| vec![None; self.nodes.len()])[n] = Some(value);
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

/// Kind of the controlling owner reference, else of the first one.
fn owner_kind(meta: &ObjectMeta) -> Option<String> {
    let owners = meta.owner_references.as_deref().unwrap_or_default();
    owners
        .iter()
        .find(|o| o.controller == Some(true))
        .or(owners.first())
        .map(|o| o.kind.clone())
}

fn node_info(node: &Node) -> NodeInfo {
    let spec = node.spec.as_ref();
    NodeInfo {
        name: node.metadata.name.clone().unwrap_or_default(),
        uid: node.metadata.uid.clone(),
        labels: Arc::new(node.metadata.labels.clone().unwrap_or_default()),
        taints: Arc::new(spec.and_then(|s| s.taints.clone()).unwrap_or_default()),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        taint_texts: Vec::new(),
    }
}

/// `spec.schedulingPolicy`: `None` for `basic`, `Some(n)` for `gang` with
/// its count (`minCount` or `minGroupCount`, at least 1).
fn gang_size(
    origin: &ObjectRef,
    field: &str,
    basic: bool,
    gang: Option<i32>,
) -> Result<Option<u32>> {
    match (basic, gang) {
        (true, None) => Ok(None),
        (false, Some(n)) => match u32::try_from(n) {
            Ok(n) if n >= 1 => Ok(Some(n)),
            _ => bail!(
                "{origin}: field spec.schedulingPolicy.gang.{field}: must be at least 1, got {n}"
            ),
        },
        _ => {
            bail!("{origin}: field spec.schedulingPolicy: exactly one of basic or gang must be set")
        }
    }
}

/// `spec.schedulingConstraints.topology[0].key`; at most one entry.
fn topology_key<'a>(
    origin: &ObjectRef,
    keys: impl IntoIterator<Item = &'a String>,
) -> Result<Option<String>> {
    let keys: Vec<&String> = keys.into_iter().collect();
    if keys.len() > 1 {
        bail!("{origin}: field spec.schedulingConstraints.topology: at most one entry is allowed");
    }
    Ok(keys.first().map(|k| k.to_string()))
}

/// The fields PodGroups and CompositePodGroups share: resolved priority,
/// `disruptionMode: all`, `preemptionPolicy: Never`.
fn shared_fields(
    origin: &ObjectRef,
    priorities: &PriorityClasses,
    priority: Option<i32>,
    class: Option<&str>,
    disruption: Option<(bool, bool)>,
    preemption: Option<&str>,
) -> Result<(i32, bool, bool)> {
    Ok((
        priorities.resolve(origin, "spec.priorityClassName", priority, class)?,
        match disruption {
            None => false,
            Some((single, all)) => disrupts_all(origin, single, all)?,
        },
        never_preempts(origin, "spec.preemptionPolicy", preemption)?,
    ))
}

pub(super) fn group_spec(
    origin: &ObjectRef,
    group: &PodGroup,
    priorities: &PriorityClasses,
) -> Result<GroupSpec> {
    let spec = &group.spec;
    let policy = &spec.scheduling_policy;
    let policy = match gang_size(
        origin,
        "minCount",
        policy.basic.is_some(),
        policy.gang.as_ref().map(|g| g.min_count),
    )? {
        None => Policy::Basic,
        Some(min_count) => Policy::Gang { min_count },
    };
    let (priority, disrupt_all, never_preempt) = shared_fields(
        origin,
        priorities,
        spec.priority,
        spec.priority_class_name.as_deref(),
        spec.disruption_mode
            .as_ref()
            .map(|m| (m.single.is_some(), m.all.is_some())),
        spec.preemption_policy.as_deref(),
    )?;
    let topology = spec
        .scheduling_constraints
        .as_ref()
        .and_then(|c| c.topology.as_ref());
    if spec.parent_composite_pod_group_name.is_some() && spec.workload_ref.is_none() {
        // The API server's ValidatePodGroup.
        bail!(
            "{origin}: field spec.workloadRef: required: must be set when parentCompositePodGroupName is set"
        );
    }
    Ok(GroupSpec {
        policy,
        priority,
        disrupt_all,
        never_preempt,
        topology_key: topology_key(origin, topology.into_iter().flatten().map(|t| &t.key))?,
        parent: spec
            .parent_composite_pod_group_name
            .clone()
            .filter(|p| !p.is_empty()),
        workload: spec.workload_ref.as_ref().map(|w| w.workload_name.clone()),
    })
}

pub(super) fn composite_info(
    origin: &ObjectRef,
    object: &CompositePodGroup,
    priorities: &PriorityClasses,
) -> Result<CompositeInfo> {
    let spec = &object.spec;
    let policy = &spec.scheduling_policy;
    let policy = match gang_size(
        origin,
        "minGroupCount",
        policy.basic.is_some(),
        policy.gang.as_ref().map(|g| g.min_group_count),
    )? {
        None => CompositePolicy::Basic,
        Some(min_group_count) => CompositePolicy::Gang { min_group_count },
    };
    let (priority, disrupt_all, never_preempt) = shared_fields(
        origin,
        priorities,
        spec.priority,
        spec.priority_class_name.as_deref(),
        spec.disruption_mode
            .as_ref()
            .map(|m| (m.single.is_some(), m.all.is_some())),
        spec.preemption_policy.as_deref(),
    )?;
    let topology = spec
        .scheduling_constraints
        .as_ref()
        .and_then(|c| c.topology.as_ref());
    Ok(CompositeInfo {
        key: key(&object.metadata),
        spec: CompositeSpec {
            policy,
            priority,
            disrupt_all,
            never_preempt,
            topology_key: topology_key(origin, topology.into_iter().flatten().map(|t| &t.key))?,
        },
        parent_name: spec
            .parent_composite_pod_group_name
            .clone()
            .filter(|p| !p.is_empty()),
        parent: None,
        child_groups: Vec::new(),
        child_composites: Vec::new(),
        workload: Some(spec.workload_ref.workload_name.clone()),
        created: seconds(object.metadata.creation_timestamp.as_ref()),
        invalid: None,
    })
}

/// Coscheduling/Volcano `minResources` of dialect groups, by group key.
pub(super) fn dialect_minimums(manifests: &Manifests) -> Result<BTreeMap<String, Amounts>> {
    let mut minimums = BTreeMap::new();
    for (key, extras) in &manifests.dialects.groups {
        if extras.min_resources.is_empty() {
            continue;
        }
        let mut amounts = Amounts::new();
        for (resource, quantity) in &extras.min_resources {
            let value = resources::amount(resource, quantity)
                .map_err(|e| anyhow!("PodGroup {key}: field spec.minResources.{resource}: {e}"))?;
            amounts.insert(resource.clone(), value);
        }
        minimums.insert(key.clone(), amounts);
    }
    Ok(minimums)
}

/// What the model reads of one Pod object.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum PodRead {
    /// `Succeeded` or `Failed`: gone, it holds nothing.
    Terminal,
    /// Another scheduler's pending pod: not ours to place, it holds nothing yet.
    Foreign,
    /// Pending, held by its scheduling gates: not in the queue until they
    /// are removed (upstream's SchedulingGates PreEnqueue).
    Gated,
    /// In the model.
    Modelled(Box<ModelledPod>),
}

/// A pod the model holds, before it is placed among the others.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ModelledPod {
    /// Everything but its place: `node`, `nominated_node` and `group` are
    /// unset, `requests` empty, `priority` and `never_preempt` its own
    /// (a PodGroup's replace them).
    pub info: PodInfo,
    /// Its requests by resource name.
    pub amounts: Amounts,
    /// `spec.nodeName`.
    pub node_name: Option<String>,
    /// `status.nominatedNodeName`.
    pub nominated_name: Option<String>,
    /// The PodGroup it is a member of (`namespace/name`); none while terminating.
    pub group: Option<String>,
    /// `key (needs)` when it is pending and asks for what wasched does not model.
    pub unmodelled: Option<String>,
    /// Terminating in a snapshot that is not live: counted among the
    /// ignored, it holds nothing.
    pub ignored: bool,
}

/// Reads a Node: its info (taint texts not interned yet) and allocatable.
pub(super) fn read_node(origin: &ObjectRef, node: &Node) -> Result<(NodeInfo, Amounts)> {
    let amounts = resources::node_allocatable(node).map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok((node_info(node), amounts))
}

/// Reads a Pod; fails naming the object and field.
pub(super) fn read_pod(
    origin: &ObjectRef,
    pod: &k8s_openapi::api::core::v1::Pod,
    priorities: &PriorityClasses,
    options: &BuildOptions,
    manifests: &Manifests,
) -> Result<PodRead> {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return Ok(PodRead::Terminal);
    }
    let terminating = pod.metadata.deletion_timestamp.is_some();
    let spec = pod
        .spec
        .as_ref()
        .ok_or_else(|| anyhow!("{origin}: field spec: required"))?;
    if !terminating && !options.schedules(spec) {
        return Ok(PodRead::Foreign);
    }
    let unbound = spec.node_name.as_deref().is_none_or(str::is_empty);
    if !terminating
        && unbound
        && spec
            .scheduling_gates
            .as_ref()
            .is_some_and(|g| !g.is_empty())
    {
        return Ok(PodRead::Gated);
    }
    let pod_key = key(&pod.metadata);
    let unmodelled = if !terminating && unbound {
        let needs = super::unmodelled::needs(spec);
        (!needs.is_empty()).then(|| format!("{pod_key} ({})", needs.join(", ")))
    } else {
        None
    };
    let amounts = resources::pod_requests(spec).map_err(|e| anyhow!("{origin}: {e}"))?;
    let scoring_requests =
        resources::pod_scoring_requests(spec).map_err(|e| anyhow!("{origin}: {e}"))?;
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
    let never_preempt = priorities.never(
        never_preempts(
            origin,
            "spec.preemptionPolicy",
            spec.preemption_policy.as_deref(),
        )?,
        spec.priority_class_name.as_deref(),
    );
    let node_name = spec.node_name.clone().filter(|n| !n.is_empty());
    let created = seconds(pod.metadata.creation_timestamp.as_ref());
    let affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref());
    let info = PodInfo {
        key: pod_key,
        uid: pod.metadata.uid.clone(),
        annotations: Arc::new(pod.metadata.annotations.clone().unwrap_or_default()),
        owner_kind: owner_kind(&pod.metadata),
        namespace: pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        node: None,
        pending: node_name.is_none() && !terminating,
        terminating,
        nominated_node: None,
        evicted: false,
        nominated: false,
        priority,
        never_preempt,
        group: None,
        requests: Vec::new(),
        scoring_requests,
        tolerations: Arc::new(spec.tolerations.clone().unwrap_or_default()),
        node_selector: Arc::new(spec.node_selector.clone().unwrap_or_default()),
        required_node_affinity: affinity
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|s| Arc::new(s.node_selector_terms.clone())),
        preferred_node_affinity: Arc::new(
            affinity
                .and_then(|a| {
                    a.preferred_during_scheduling_ignored_during_execution
                        .as_ref()
                })
                .into_iter()
                .flatten()
                .map(|p| (p.weight, p.preference.clone()))
                .collect(),
        ),
        created,
        started: pod
            .status
            .as_ref()
            .and_then(|s| s.start_time.as_ref())
            .map_or(created, |t| t.0.as_second()),
        labels: Arc::new(pod.metadata.labels.clone().unwrap_or_default()),
        spread: Arc::new(
            hard_spread(spec.topology_spread_constraints.iter().flatten())
                .chain(
                    group
                        .as_ref()
                        .and_then(|g| manifests.dialects.groups.get(g))
                        .map(|extras| extras.spread.clone())
                        .unwrap_or_default(),
                )
                .collect(),
        ),
        required_anti_affinity: Arc::new(
            spec.affinity
                .as_ref()
                .and_then(|a| a.pod_anti_affinity.as_ref())
                .and_then(|a| {
                    a.required_during_scheduling_ignored_during_execution
                        .clone()
                })
                .unwrap_or_default(),
        ),
    };
    Ok(PodRead::Modelled(Box::new(ModelledPod {
        info,
        amounts,
        node_name,
        nominated_name: pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone()),
        group: group.filter(|_| !terminating),
        unmodelled,
        ignored: terminating && !options.live,
    })))
}

/// The warnings about early-dialect links whose child PodGroup is not in
/// the snapshot (`groups` sorted by key).
pub(super) fn missing_link_children(
    groups: &[GroupInfo],
    links: &[crate::manifest::dialect::CompositeLink],
) -> Vec<String> {
    links
        .iter()
        .filter(|link| {
            groups
                .binary_search_by(|g| g.key.as_str().cmp(&link.child))
                .is_err()
        })
        .map(|link| {
            format!(
                "{}: child PodGroup {} is not in the snapshot",
                link.origin, link.child
            )
        })
        .collect()
}

/// An early-dialect link naming PodGroup `key` as a child gives its spec
/// the parent and the level's topology key (the first link wins).
pub(super) fn link_dialect_parent(
    key: &str,
    spec: &mut GroupSpec,
    links: &[crate::manifest::dialect::CompositeLink],
) {
    for link in links.iter().filter(|l| l.child == key) {
        spec.parent.get_or_insert_with(|| link.parent.clone());
        if spec.topology_key.is_none() {
            spec.topology_key.clone_from(&link.topology_key);
        }
    }
}

/// An early-dialect CompositePodGroup, read as a `basic` composite.
pub(super) fn dialect_composite(
    dialect: &crate::manifest::dialect::DialectComposite,
) -> CompositeInfo {
    CompositeInfo {
        key: dialect.key.clone(),
        spec: CompositeSpec {
            policy: CompositePolicy::Basic,
            priority: 0,
            disrupt_all: false,
            never_preempt: false,
            topology_key: dialect.topology_key.clone(),
        },
        parent_name: None,
        parent: None,
        child_groups: Vec::new(),
        child_composites: Vec::new(),
        workload: None,
        created: 0,
        invalid: None,
    }
}

/// What the model reads of a PodDisruptionBudget.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct BudgetRead {
    /// `namespace/name`.
    pub key: String,
    namespace: String,
    selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    min_available: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    max_unavailable: Option<k8s_openapi::apimachinery::pkg::util::intstr::IntOrString>,
    /// `status.disruptionsAllowed`.
    status: Option<u32>,
}

/// Reads a PodDisruptionBudget; fails on a spec the disruption controller
/// refuses or a negative status, naming the object and field.
pub(super) fn read_budget(origin: &ObjectRef, budget: &PodDisruptionBudget) -> Result<BudgetRead> {
    let spec = budget.spec.as_ref();
    let read = BudgetRead {
        key: key(&budget.metadata),
        namespace: budget
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        selector: spec.and_then(|s| s.selector.clone()),
        min_available: spec.and_then(|s| s.min_available.clone()),
        max_unavailable: spec.and_then(|s| s.max_unavailable.clone()),
        status: match budget.status.as_ref().and_then(|s| s.disruptions_allowed) {
            Some(n) => Some(u32::try_from(n).map_err(|_| {
                anyhow!("{origin}: field status.disruptionsAllowed: must be non-negative, got {n}")
            })?),
            None => None,
        },
    };
    disruption::disruptions_allowed(
        read.min_available.as_ref(),
        read.max_unavailable.as_ref(),
        0,
        0,
    )
    .map_err(|e| anyhow!("{origin}: {e}"))?;
    Ok(read)
}

impl BudgetRead {
    /// Whether its selector matches `pod` (same namespace, not
    /// terminating); policy/v1: a missing selector matches no pods, an
    /// empty one all.
    pub fn matches(&self, pod: &PodInfo) -> bool {
        self.selector.as_ref().is_some_and(|selector| {
            pod.namespace == self.namespace
                && !pod.terminating
                && label_selector_matches(selector, &pod.labels)
        })
    }

    /// The disruptions budget `id` of `snapshot` (this one, its pods
    /// matched) allows now: the status's, else computed from its pods.
    pub fn allowed(&self, snapshot: &Snapshot, id: u32) -> u32 {
        if let Some(n) = self.status {
            return n;
        }
        let pods = &snapshot.budgets[id as usize].pods;
        let healthy = pods
            .iter()
            .filter(|&&p| snapshot.pods[p as usize].node.is_some())
            .count();
        disruption::disruptions_allowed(
            self.min_available.as_ref(),
            self.max_unavailable.as_ref(),
            pods.len() as u32,
            healthy as u32,
        )
        .expect("checked when read")
    }
}
