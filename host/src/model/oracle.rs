//! The at-once model builder: every object read in one pass, then indexed.
//! Production reads through the incremental [`super::Model`] alone; this
//! builder stays as the oracle the property test holds the model against
//! (`tests/incremental_model.rs`): two builders written apart that must
//! agree. Present in tests and with the `oracle` feature.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, bail};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;

use super::build::*;
use super::composite::CompositeInfo;
use super::disruption::DisruptionBudget;
use super::resources::{Amounts, PODS};
use super::*;
use crate::manifest::{Manifests, Object, ObjectRef};

/// The snapshot of `manifests`, built at once. Fails on duplicate objects,
/// unknown priority classes and invalid specs, naming file, object and
/// field.
pub fn build(manifests: &Manifests) -> Result<Snapshot> {
    build_with(manifests, &BuildOptions::default())
}

/// [`build`] with options.
pub fn build_with(manifests: &Manifests, options: &BuildOptions) -> Result<Snapshot> {
    let objects = manifests
        .objects
        .iter()
        .map(|(origin, object)| (origin, object));
    build_objects(manifests, objects, options)
}

/// [`build_with`] over objects held elsewhere: `manifests` gives how they
/// were read (notes, warnings, kinds skipped), its own objects are not
/// looked at.
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
    let warnings = Arc::make_mut(&mut snapshot.warnings);
    warnings.extend(manifests.skipped_warning());
    warnings.extend(manifests.warnings.iter().cloned());
    let mut notes = manifests.notes.clone();
    notes.extend(manifests.pod_marker_notes());
    snapshot.notes = Arc::new(notes);
    snapshot.without_pods = Arc::new(manifests.without_pods.clone());
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
            .map(|t| Arc::make_mut(&mut snapshot.taint_texts).intern(&taint_text(t)))
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
    let mut minimums: BTreeMap<String, Amounts> = BTreeMap::new();
    for (origin, group) in &groups {
        let spec = group_spec(origin, group, &priorities)?;
        let amounts = group_minimum(origin, group)?;
        if !amounts.is_empty() {
            minimums.insert(key(&group.metadata), amounts);
        }
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
        let read = match read_pod(origin, pod, &priorities, options, None)? {
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
        Arc::make_mut(&mut snapshot.warnings).push(format!(
            "ignored {ignored} terminal or terminating pod(s): they hold no resources"
        ));
    }
    if !unmodelled.is_empty() {
        let shown: Vec<&str> = unmodelled.iter().take(3).map(String::as_str).collect();
        let more = unmodelled.len().saturating_sub(shown.len());
        Arc::make_mut(&mut snapshot.warnings).push(format!(
            "{} pending pod(s) ask for what wasched does not model, which is not checked for them: {}{}",
            unmodelled.len(),
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    if gated > 0 {
        Arc::make_mut(&mut snapshot.warnings).push(format!(
            "{gated} pending pod(s) held by scheduling gates are not scheduled until their gates are removed"
        ));
    }
    if !on_unknown_nodes.is_empty() {
        let names: Vec<_> = on_unknown_nodes.into_iter().collect();
        Arc::make_mut(&mut snapshot.warnings).push(format!(
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
        let g = snapshot.groups.get_mut(group_index[group] as usize);
        let pod = snapshot.pods.get_mut(pod_id);
        if let Some(spec) = &g.spec {
            pod.priority = spec.priority;
            pod.never_preempt = spec.never_preempt;
        }
        pod.group = Some(group_index[group]);
        g.members.push(pod_id as u32);
    }
    let pods = snapshot.pods.clone();
    for g in &mut snapshot.groups {
        g.members.sort_by(|&a, &b| {
            let (a, b) = (&pods[a as usize], &pods[b as usize]);
            (a.created, &a.key).cmp(&(b.created, &b.key))
        });
    }
    // The copy of the pods goes before they are written below.
    drop(pods);

    snapshot.index_composites(&composites, &priorities)?;
    snapshot.index_budgets(&budgets)?;
    let group_minimums: Vec<(Option<GroupId>, Amounts)> = minimums
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

impl Snapshot {
    /// CompositePodGroups, linked
    /// to their children and validated per tree: an invalid tree is marked
    /// on its composites and PodGroups, the rest is untouched.
    fn index_composites(
        &mut self,
        objects: &[(&ObjectRef, &CompositePodGroup)],
        priorities: &PriorityClasses,
    ) -> Result<()> {
        let mut infos: BTreeMap<String, CompositeInfo> = BTreeMap::new();
        for (origin, object) in objects {
            let info = composite_info(origin, object, priorities)?;
            infos.insert(info.key.clone(), info);
        }
        let warnings = self.link_trees(infos.into_values().collect());
        Arc::make_mut(&mut self.warnings).extend(warnings);
        Ok(())
    }

    /// PodDisruptionBudgets with the pods they match and the disruptions
    /// they allow now.
    fn index_budgets(&mut self, objects: &[(&ObjectRef, &PodDisruptionBudget)]) -> Result<()> {
        let mut budgets: Vec<BudgetRead> = objects
            .iter()
            .map(|(origin, b)| read_budget(origin, b))
            .collect::<Result<_>>()?;
        budgets.sort_by(|a, b| a.key.cmp(&b.key));
        self.pod_budgets = vec![Vec::new(); self.pods.len()].into();
        for (id, budget) in budgets.iter().enumerate() {
            let pods: Vec<u32> = (0..self.pods.len() as u32)
                .filter(|&p| budget.matches(&self.pods[p as usize]))
                .collect();
            for &p in &pods {
                self.pod_budgets.get_mut(p as usize).push(id as u32);
            }
            self.budgets.push(DisruptionBudget {
                key: budget.key.clone(),
                pods,
                disruptions_allowed: 0,
            });
            let allowed = budget.allowed(self, id as u32);
            self.budgets.get_mut(id).disruptions_allowed = allowed;
        }
        Ok(())
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
        let mut resource_names: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
        resource_names.extend(
            names
                .into_iter()
                .filter(|n| !fixed.contains(n))
                .map(str::to_string),
        );
        self.resource_names = Arc::new(resource_names);
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
        self.requested = vec![vec![0; nodes]; resources].into();
        self.scoring_requested = Arc::new([vec![0; nodes], vec![0; nodes]]);
        self.nominated_requested = Arc::new([vec![0; nodes], vec![0; nodes]]);
        self.pods_on_node = vec![Vec::new(); nodes].into();
        for (pod, requests) in self.pods.iter_mut().zip(per_pod) {
            pod.requests = requests;
        }
        for (group, amounts) in group_minimums {
            let Some(group) = group else { continue };
            let columns = column(amounts);
            self.groups.get_mut(*group as usize).min_resources = columns
                .into_iter()
                .enumerate()
                .filter(|&(_, v)| v > 0)
                .collect();
        }
        for pod in 0..self.pods.len() {
            if let Some(node) = self.pods.get_mut(pod).node.take() {
                self.assume(pod as u32, node);
            }
        }
    }
}
