//! Manifests → [`Snapshot`]: resolves priorities, group membership and
//! resource amounts, and indexes everything.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1::{Node, PodSpec, TopologySpreadConstraint};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1alpha3::CompositePodGroup;
use k8s_openapi::api::scheduling::v1beta1::PodGroup;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

use super::composite::{self, CompositeInfo, CompositePolicy, CompositeSpec, Member};
use super::disruption;
use super::resources::{self, Amounts};
use super::{
    CompositeId, GroupId, GroupSpec, NodeInfo, PodInfo, Policy, Snapshot, label_selector_matches,
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
    /// The snapshot of `manifests`, read by the one model builder
    /// ([`super::Model`], what `simulate` runs). Fails on duplicate
    /// objects, unknown priority classes and invalid specs, naming file,
    /// object and field.
    pub fn build(manifests: &Manifests) -> Result<Snapshot> {
        Self::build_with(manifests, &BuildOptions::default())
    }

    /// [`Snapshot::build`] with options.
    pub fn build_with(manifests: &Manifests, options: &BuildOptions) -> Result<Snapshot> {
        super::Model::snapshot_of(manifests.clone(), options)
    }
}

impl Snapshot {
    /// Puts `composites` (sorted by key, unlinked) in the snapshot, links
    /// every CompositePodGroup and PodGroup to its parent and validates each
    /// tree; returns the warnings about irregular trees.
    pub(super) fn link_trees(&mut self, composites: Vec<CompositeInfo>) -> Vec<String> {
        self.composites = composites.into();
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
            self.composites.get_mut(c).parent = parent;
            if let Some(parent) = parent {
                self.composites
                    .get_mut(parent as usize)
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
            self.groups.get_mut(g).parent = parent;
            if let Some(parent) = parent {
                self.composites
                    .get_mut(parent as usize)
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
                self.composites.get_mut(i).invalid = text;
            } else {
                self.groups
                    .get_mut(grouped[i - composites] as usize)
                    .invalid = text;
            }
        }
        warnings
    }

    pub(super) fn index_symbols(&mut self) {
        for node in &self.nodes {
            Arc::make_mut(&mut self.symbols).intern(&node.name);
            for (k, v) in node.labels.iter() {
                Arc::make_mut(&mut self.symbols).intern(k);
                Arc::make_mut(&mut self.symbols).intern(v);
            }
        }
        for spec in self.groups.iter().filter_map(|g| g.spec.as_ref()) {
            if let Some(key) = &spec.topology_key {
                Arc::make_mut(&mut self.symbols).intern(key);
            }
        }
        for composite in &self.composites {
            if let Some(key) = &composite.spec.topology_key {
                Arc::make_mut(&mut self.symbols).intern(key);
            }
        }
        for pod in &self.pods {
            Arc::make_mut(&mut self.symbols).intern(&pod.namespace);
            for (k, v) in pod.labels.iter() {
                Arc::make_mut(&mut self.symbols).intern(k);
                Arc::make_mut(&mut self.symbols).intern(v);
            }
        }
        // Node labels as columns, one per key: what topology plugins read.
        let symbols = Arc::make_mut(&mut self.symbols);
        let columns = Arc::make_mut(&mut self.label_columns);
        for (n, node) in self.nodes.iter().enumerate() {
            for (k, v) in node.labels.iter() {
                let (key, value) = (symbols.intern(k), symbols.intern(v));
                columns
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

/// A PodGroup's minimum free resources
/// ([`crate::manifest::dialect::MIN_RESOURCES_ANNOTATION`], Coscheduling's
/// and Volcano's `minResources`); empty when it has none.
pub(super) fn group_minimum(origin: &ObjectRef, group: &PodGroup) -> Result<Amounts> {
    use crate::manifest::dialect::MIN_RESOURCES_ANNOTATION as KEY;
    let Some(text) = group.metadata.annotations.as_ref().and_then(|a| a.get(KEY)) else {
        return Ok(Amounts::new());
    };
    let field = format!("{origin}: field metadata.annotations[{KEY}]");
    let quantities: BTreeMap<String, Quantity> = serde_json::from_str(text)
        .map_err(|e| anyhow!("{field}: expected a JSON object of resource quantities: {e}"))?;
    let mut amounts = Amounts::new();
    for (resource, quantity) in &quantities {
        let value = resources::amount(resource, quantity)
            .map_err(|e| anyhow!("{field}.{resource}: {e}"))?;
        amounts.insert(resource.clone(), value);
    }
    Ok(amounts)
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

/// The requests read of a pod's earlier version, and the spec they were
/// read from.
pub(super) struct KnownRequests<'a> {
    /// The earlier version's spec.
    pub spec: &'a PodSpec,
    /// Its requests ([`resources::pod_requests`]).
    pub amounts: &'a Amounts,
    /// Its scoring requests ([`resources::pod_scoring_requests`]).
    pub scoring: [u64; 2],
}

impl KnownRequests<'_> {
    /// Whether `spec` asks for what the earlier version's did: the same
    /// containers, init containers, pod-level resources and overhead (all
    /// that [`resources::pod_requests`] reads).
    fn hold_for(&self, spec: &PodSpec) -> bool {
        let old = self.spec;
        old.containers == spec.containers
            && old.init_containers == spec.init_containers
            && old.resources == spec.resources
            && old.overhead == spec.overhead
    }
}

/// Reads a Pod, taking its requests from `known` when it asks for what
/// its earlier version did; fails naming the object and field.
pub(super) fn read_pod(
    origin: &ObjectRef,
    pod: &k8s_openapi::api::core::v1::Pod,
    priorities: &PriorityClasses,
    options: &BuildOptions,
    known: Option<KnownRequests>,
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
    let (amounts, scoring_requests) = match known.filter(|k| k.hold_for(spec)) {
        Some(known) => (known.amounts.clone(), known.scoring),
        None => (
            resources::pod_requests(spec).map_err(|e| anyhow!("{origin}: {e}"))?,
            resources::pod_scoring_requests(spec).map_err(|e| anyhow!("{origin}: {e}"))?,
        ),
    };
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
        spread: Arc::new(hard_spread(spec.topology_spread_constraints.iter().flatten()).collect()),
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
        signature: Default::default(),
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
