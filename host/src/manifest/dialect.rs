//! Other dialects of gang scheduling, read as plain v1.37 objects: what
//! the model sees of them is what it would see of objects written in v1.37.
//!
//! - the early `scheduling.k8s.io/v1beta1` dialect of articles about the
//!   release: PodGroup `spec.minMember`, `scheduleTimeoutSeconds`,
//!   `topologySpreadConstraints`, `preemptionPolicy: Conservative|Aggressive`;
//!   pods joined by annotation `scheduling.k8s.io/pod-group-name`;
//!   `CompositePodGroup.spec.children` with `topologyPolicies`;
//! - scheduler-plugins Coscheduling, `scheduling.x-k8s.io/v1alpha1` PodGroup
//!   (`minMember`, `minResources`, `scheduleTimeoutSeconds`); pods joined by
//!   label `scheduling.x-k8s.io/pod-group`;
//! - Volcano, `scheduling.volcano.sh/v1beta1` PodGroup (`minMember`,
//!   `minResources`, `priorityClassName`, `queue`); pods joined by
//!   annotation `scheduling.k8s.io/group-name`;
//! - KAI-Scheduler, `scheduling.run.ai/v2alpha2` PodGroup ([`super::kai`]);
//!   pods joined by annotation `pod-group-name` (and label
//!   `kai.scheduler/subgroup-name`).
//!
//! Every object read this way gets a note saying how each field was mapped.
//! A field with no v1.37 field of its own is written the way v1.37 objects
//! can say it — a group's topology spread as its member pods' own hard
//! `topologySpreadConstraints`, Coscheduling's and Volcano's `minResources`
//! as the PodGroup's [`MIN_RESOURCES_ANNOTATION`] — or rejected with a
//! message, never dropped silently. What joins objects across a read (an
//! early CompositePodGroup's children, a group's spread onto its pods) is
//! applied once everything is read ([`Manifests::finish`]).

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::{Map, Value, json};

use super::ObjectRef;
use super::load::Manifests;

/// The v1.37 PodGroup spec fields; anything else left over after a dialect
/// is mapped is refused.
const POD_GROUP_FIELDS: &[&str] = &[
    "schedulingPolicy",
    "priorityClassName",
    "priority",
    "preemptionPolicy",
    "disruptionMode",
    "schedulingConstraints",
    "parentCompositePodGroupName",
    "workloadRef",
    "resourceClaims",
];

/// The PodGroup annotation holding Coscheduling's and Volcano's
/// `minResources` (a JSON object of resource name to quantity): the group
/// waits unless the cluster's free capacity covers them. v1.37 has no field
/// for it; a v1.37 PodGroup may carry it too.
pub const MIN_RESOURCES_ANNOTATION: &str = "wasched.io/min-resources";

/// An early-dialect CompositePodGroup child: the PodGroup `child` belongs to
/// the CompositePodGroup `parent`, with the level's topology key if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompositeLink {
    /// Where the link was read.
    pub origin: ObjectRef,
    /// The child PodGroup, `namespace/name`.
    pub child: String,
    /// The CompositePodGroup's name.
    pub parent: String,
    /// The node label the child's pods share (`SameZone` → zone, ...).
    pub topology_key: Option<String>,
}

/// What dialects contributed besides rewritten objects.
#[derive(Debug, Clone, Default)]
pub struct DialectState {
    /// Topology policy names the user mapped to node labels
    /// (`--topology-alias LowLatencyNetwork=network.topology.nvidia.com/leaf`).
    pub topology_aliases: BTreeMap<String, String>,
    /// Early-dialect group spreads to give the groups' member pods, by
    /// group `namespace/name`.
    pub group_spread: BTreeMap<String, Vec<TopologySpreadConstraint>>,
    /// Early-dialect CompositePodGroup children to link.
    pub composite_links: Vec<CompositeLink>,
    /// Pods joined to groups by a dialect's label or annotation: marker → (count, first pod).
    pub pod_markers: BTreeMap<&'static str, (usize, String)>,
    /// Schedulers those pods named (the dialect's own, `volcano` say) →
    /// how many: read as `default-scheduler`'s, since their groups are
    /// read as v1.37 groups.
    pub pod_schedulers: BTreeMap<String, usize>,
}

/// Whether the object still needs its typed parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Translation {
    /// The value is in the v1.37 form now (or always was).
    Parse,
    /// The dialect object was fully absorbed.
    Consumed,
}

/// The ways pods name their group outside v1.37 (the early dialect,
/// Coscheduling, Volcano, KAI-Scheduler): key, whether an annotation, and
/// how it reads.
const POD_MARKERS: [(&str, bool, &str); 4] = [
    ("scheduling.k8s.io/pod-group-name", true, "annotation"),
    ("scheduling.x-k8s.io/pod-group", false, "label"),
    ("scheduling.k8s.io/group-name", true, "annotation"),
    (super::kai::POD_GROUP_ANNOTATION, true, "annotation"),
];

/// Whether pod `value` carries any dialect's group marker (label or
/// annotation), whatever its scheduler.
pub fn has_pod_marker(value: &Value) -> bool {
    POD_MARKERS.iter().any(|(marker, annotation, _)| {
        let section = if *annotation { "annotations" } else { "labels" };
        value
            .get("metadata")
            .and_then(|m| m.get(section))
            .is_some_and(|m| m.get(marker).is_some())
    })
}

/// Rewrites a dialect object into the v1.37 form in place.
pub fn translate(
    into: &mut Manifests,
    origin: &ObjectRef,
    value: &mut Value,
) -> Result<Translation> {
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    match (api_version.as_str(), origin.kind.as_str()) {
        ("scheduling.k8s.io/v1beta1", "PodGroup") if value.pointer("/spec/minMember").is_some() => {
            pod_group(into, origin, value, Dialect::Early)?
        }
        ("scheduling.x-k8s.io/v1alpha1", "PodGroup") => {
            pod_group(into, origin, value, Dialect::Coscheduling)?
        }
        ("scheduling.volcano.sh/v1beta1", "PodGroup") => {
            pod_group(into, origin, value, Dialect::Volcano)?
        }
        ("scheduling.run.ai/v2alpha2", "PodGroup") => {
            super::kai::pod_group(into, origin, value)?;
            return Ok(Translation::Consumed);
        }
        ("scheduling.k8s.io/v1beta1", "CompositePodGroup") => composite(into, origin, value)?,
        ("v1", "Pod") => pod_membership(into, origin, value)?,
        _ => {}
    }
    Ok(Translation::Parse)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Early,
    Coscheduling,
    Volcano,
}

impl Dialect {
    fn name(self) -> &'static str {
        match self {
            Self::Early => "early scheduling.k8s.io/v1beta1 dialect",
            Self::Coscheduling => "Coscheduling (scheduling.x-k8s.io/v1alpha1)",
            Self::Volcano => "Volcano (scheduling.volcano.sh/v1beta1)",
        }
    }
}

/// `metadata.namespace` (default `default`) and `metadata.name`.
fn namespace_and_name(value: &Value) -> (&str, &str) {
    let field = |key: &str| {
        value
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
    };
    (
        field("namespace").unwrap_or("default"),
        field("name").unwrap_or_default(),
    )
}

fn group_key(value: &Value) -> String {
    let (ns, name) = namespace_and_name(value);
    format!("{ns}/{name}")
}

fn pod_group(
    into: &mut Manifests,
    origin: &ObjectRef,
    value: &mut Value,
    dialect: Dialect,
) -> Result<()> {
    let key = group_key(value);
    let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) else {
        bail!("{origin}: field spec: required");
    };
    let mut mapped = Vec::new();
    let mut group_spread = Vec::new();
    let mut min_resources = None;

    match spec.remove("minMember") {
        Some(n) => {
            let min = n
                .as_i64()
                .filter(|&m| (1..=i64::from(i32::MAX)).contains(&m))
                .ok_or_else(|| {
                    anyhow!(
                        "{origin}: field spec.minMember: must be an integer of at least 1, got {n}"
                    )
                })?;
            spec.insert(
                "schedulingPolicy".into(),
                json!({"gang": {"minCount": min}}),
            );
            mapped.push(format!(
                "spec.minMember {min} read as schedulingPolicy.gang.minCount"
            ));
        }
        None if dialect == Dialect::Volcano => {
            spec.insert("schedulingPolicy".into(), json!({"gang": {"minCount": 1}}));
            mapped.push(
                "no spec.minMember: Volcano's default 1 read as schedulingPolicy.gang.minCount"
                    .into(),
            );
        }
        None => bail!(
            "{origin}: field spec.minMember: required in the {} PodGroup",
            dialect.name()
        ),
    }
    if let Some(timeout) = spec.remove("scheduleTimeoutSeconds") {
        mapped.push(format!(
            "spec.scheduleTimeoutSeconds {timeout} read as the gang's Permit wait; one simulated pass decides every gang within its cycle, so it does not change the outcome"
        ));
    }
    if let Some(policy) = spec
        .get("preemptionPolicy")
        .and_then(Value::as_str)
        .map(str::to_string)
        && dialect == Dialect::Early
        && matches!(policy.as_str(), "Conservative" | "Aggressive")
    {
        spec.insert("preemptionPolicy".into(), json!("PreemptLowerPriority"));
        mapped.push(format!(
            "spec.preemptionPolicy {policy} read as PreemptLowerPriority (v1.37 has only PreemptLowerPriority and Never)"
        ));
    }
    if dialect == Dialect::Early
        && let Some(spread) = spec.remove("topologySpreadConstraints")
    {
        let constraints: Vec<TopologySpreadConstraint> = serde_path_to_error::deserialize(spread)
            .map_err(|e| {
            anyhow!(
                "{origin}: field spec.topologySpreadConstraints{}: {}",
                path_suffix(e.path()),
                e.inner()
            )
        })?;
        for (i, c) in constraints.iter().enumerate() {
            if c.when_unsatisfiable != "DoNotSchedule" {
                bail!(
                    "{origin}: field spec.topologySpreadConstraints[{i}].whenUnsatisfiable: {} (a soft preference) is not modelled; use DoNotSchedule or remove the constraint",
                    c.when_unsatisfiable
                );
            }
            if c.max_skew < 1 {
                bail!(
                    "{origin}: field spec.topologySpreadConstraints[{i}].maxSkew: must be at least 1"
                );
            }
        }
        let keys: Vec<&str> = constraints
            .iter()
            .map(|c| c.topology_key.as_str())
            .collect();
        mapped.push(format!(
            "spec.topologySpreadConstraints ({}) read as a hard spread of the group's pods (PodTopologySpread, DoNotSchedule): each member pod's own topologySpreadConstraints",
            keys.join(", ")
        ));
        group_spread = constraints;
    }
    if dialect != Dialect::Early
        && let Some(min) = spec.remove("minResources")
    {
        let amounts: BTreeMap<String, Quantity> =
            serde_path_to_error::deserialize(min).map_err(|e| {
                anyhow!(
                    "{origin}: field spec.minResources{}: {}",
                    path_suffix(e.path()),
                    e.inner()
                )
            })?;
        for (resource, quantity) in &amounts {
            super::quantity::Quantity::parse(&quantity.0)
                .map_err(|e| anyhow!("{origin}: field spec.minResources.{resource}: {e}"))?;
        }
        if !amounts.is_empty() {
            mapped.push(format!("spec.minResources read as Coscheduling's admission check: the group waits unless the cluster's free capacity covers it (annotation {MIN_RESOURCES_ANNOTATION})"));
            min_resources = Some(amounts);
        }
    }
    if dialect == Dialect::Volcano {
        if let Some(queue) = spec.remove("queue") {
            mapped.push(format!(
                "spec.queue {queue}: Volcano queues have no v1.37 equivalent; all groups share one queue in PrioritySort order"
            ));
        }
        for field in ["minTaskMember", "networkTopology", "subGroupPolicy"] {
            if spec.contains_key(field) {
                bail!(
                    "{origin}: field spec.{field}: Volcano's {field} has no v1.37 equivalent that wasched models; remove it to simulate the group without it"
                );
            }
        }
    }
    if let Some(unknown) = spec
        .keys()
        .find(|k| !POD_GROUP_FIELDS.contains(&k.as_str()))
    {
        bail!(
            "{origin}: field spec.{unknown}: not a field of the {} PodGroup that wasched can map",
            dialect.name()
        );
    }
    // Dialect status (phase, counters) is observed state, not intent.
    value
        .as_object_mut()
        .expect("checked above")
        .remove("status");
    value["apiVersion"] = json!("scheduling.k8s.io/v1beta1");
    if let Some(amounts) = min_resources {
        let text = serde_json::to_string(&amounts).expect("quantities are strings");
        annotate(value, MIN_RESOURCES_ANNOTATION, text);
    }
    into.notes.push(format!(
        "PodGroup {key} ({}): {}",
        dialect.name(),
        mapped.join("; ")
    ));
    if !group_spread.is_empty() {
        into.dialects.group_spread.insert(key, group_spread);
    }
    Ok(())
}

/// Sets annotation `key` of `value`'s metadata to `text`.
fn annotate(value: &mut Value, key: &str, text: String) {
    let metadata = value
        .as_object_mut()
        .expect("an object")
        .entry("metadata")
        .or_insert_with(|| json!({}));
    if let Some(metadata) = metadata.as_object_mut() {
        let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        annotations[key] = Value::String(text);
    }
}

fn path_suffix(path: &serde_path_to_error::Path) -> String {
    let path = path.to_string();
    if path == "." {
        String::new()
    } else if path.starts_with('[') {
        path
    } else {
        format!(".{path}")
    }
}

/// Pods that name their group the way another dialect does.
fn pod_membership(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let mut named: Option<(&'static str, String)> = None;
    for (marker, annotation, _) in POD_MARKERS {
        let section = if annotation { "annotations" } else { "labels" };
        let Some(group) = value
            .pointer(&format!("/metadata/{section}"))
            .and_then(|m| m.get(marker))
            .and_then(Value::as_str)
        else {
            continue;
        };
        if let Some((other, other_group)) = &named
            && other_group != group
        {
            bail!(
                "{origin}: field metadata.{section}.{marker}: names PodGroup {group}, but {other} names {other_group}"
            );
        }
        named = Some((marker, group.to_string()));
    }
    let Some((marker, mut group)) = named else {
        return Ok(());
    };
    // KAI's annotation has no prefix of its own: it is KAI's only on its pods.
    if marker == super::kai::POD_GROUP_ANNOTATION
        && value.pointer("/spec/schedulerName").and_then(Value::as_str)
            != Some(super::kai::SCHEDULER_NAME)
    {
        return Ok(());
    }
    if marker == super::kai::POD_GROUP_ANNOTATION
        && let Some(subgroup) = value
            .pointer("/metadata/labels")
            .and_then(|l| l.get(super::kai::SUBGROUP_LABEL))
            .and_then(Value::as_str)
    {
        group = super::kai::subgroup_group(&group, subgroup);
    }
    let spec = value
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| anyhow!("{origin}: field spec: required"))?;
    match spec
        .get("schedulingGroup")
        .and_then(|g| g.get("podGroupName"))
        .and_then(Value::as_str)
    {
        Some(existing) if existing == group => return Ok(()),
        Some(existing) => bail!(
            "{origin}: field spec.schedulingGroup.podGroupName: {existing}, but {marker} names PodGroup {group}"
        ),
        None => {}
    }
    let mut scheduling_group = Map::new();
    scheduling_group.insert("podGroupName".into(), json!(group));
    spec.insert("schedulingGroup".into(), Value::Object(scheduling_group));
    if let Some(scheduler) = spec
        .get("schedulerName")
        .and_then(Value::as_str)
        .filter(|s| *s != super::DEFAULT_SCHEDULER_NAME)
        .map(str::to_string)
    {
        spec.remove("schedulerName");
        *into.dialects.pod_schedulers.entry(scheduler).or_default() += 1;
    }
    let entry = into
        .dialects
        .pod_markers
        .entry(marker)
        .or_insert((0, origin.name.clone()));
    entry.0 += 1;
    Ok(())
}

/// An early-dialect CompositePodGroup: its children become links from the
/// child PodGroups to it, its level policies their topology keys.
/// An early-dialect CompositePodGroup becomes a `basic` v1alpha3 one (its
/// `crossLevel` constraint its topology); its children are linked to it
/// once everything is read.
fn composite(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let (ns, name) = namespace_and_name(value);
    let (ns, name) = (ns.to_string(), name.to_string());
    let (ns, name) = (ns.as_str(), name.as_str());
    let children = value
        .pointer("/spec/children")
        .and_then(Value::as_array)
        .ok_or_else(|| anyhow!("{origin}: field spec.children: required in the early CompositePodGroup dialect (v1.37 uses scheduling.k8s.io/v1alpha3 with parentCompositePodGroupName on the children)"))?;
    let mut levels: BTreeMap<String, String> = BTreeMap::new();
    let mut own_key = None;
    let mut mapped = Vec::new();
    for (i, policy) in value
        .pointer("/spec/topologyPolicies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let field = format!("spec.topologyPolicies[{i}]");
        if let Some(level) = policy.get("level").and_then(Value::as_str) {
            let constraint = policy
                .get("constraint")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let key = topology_key(into, origin, &format!("{field}.constraint"), constraint)?;
            mapped.push(format!(
                "level {level} constraint {constraint} read as topology key {key}"
            ));
            levels.insert(level.to_string(), key);
        } else if let Some(cross) = policy.get("crossLevel") {
            let constraint = cross
                .get("constraint")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let key = topology_key(
                into,
                origin,
                &format!("{field}.crossLevel.constraint"),
                constraint,
            )?;
            mapped.push(format!("crossLevel constraint {constraint} read as the CompositePodGroup's own topology key {key}"));
            own_key = Some(key);
        } else {
            bail!("{origin}: field {field}: expected level or crossLevel");
        }
    }
    for (i, child) in children.iter().enumerate() {
        let child_name = child
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let reference = child
            .get("podGroupRef")
            .ok_or_else(|| anyhow!("{origin}: field spec.children[{i}].podGroupRef: required"))?;
        let pg = reference
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .ok_or_else(|| {
                anyhow!("{origin}: field spec.children[{i}].podGroupRef.name: required")
            })?;
        let pg_ns = reference
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or(ns);
        if pg_ns != ns {
            // A v1.37 parentCompositePodGroupName names a CompositePodGroup
            // of the PodGroup's own namespace: said once, never linked.
            mapped.push(format!(
                "child {child_name} not linked: PodGroup {pg_ns}/{pg} is in another namespace"
            ));
            into.warnings.push(format!(
                "{origin}: field spec.children[{i}].podGroupRef.namespace: PodGroup {pg_ns}/{pg} is not \
                 in namespace {ns}, and a PodGroup's parentCompositePodGroupName names a \
                 CompositePodGroup of its own namespace: child {child_name} is not linked"
            ));
            continue;
        }
        mapped.push(format!("child {child_name} read as PodGroup {pg_ns}/{pg} with parentCompositePodGroupName {name} and workloadRef {name}"));
        into.dialects.composite_links.push(CompositeLink {
            origin: origin.clone(),
            child: format!("{pg_ns}/{pg}"),
            parent: name.to_string(),
            topology_key: levels.get(child_name).cloned(),
        });
    }
    // v1alpha3 requires a workloadRef, which the early dialect has no
    // equivalent of: the tree names a Workload of its root's name (no
    // such object is needed to schedule it).
    let mut spec = json!({
        "schedulingPolicy": {"basic": {}},
        "workloadRef": {"workloadName": name, "templateName": name},
    });
    if let Some(key) = own_key {
        spec["schedulingConstraints"] = json!({"topology": [{"key": key}]});
    }
    mapped.push(format!(
        "read as a basic scheduling.k8s.io/v1alpha3 CompositePodGroup with workloadRef {name}"
    ));
    into.notes.push(format!(
        "CompositePodGroup {ns}/{name} (early scheduling.k8s.io/v1beta1 dialect): {}",
        mapped.join("; ")
    ));
    let metadata = value.get("metadata").cloned().unwrap_or_else(|| json!({}));
    *value = json!({
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": metadata,
        "spec": spec,
    });
    Ok(())
}

/// A topology policy name as a node label key.
fn topology_key(into: &Manifests, origin: &ObjectRef, field: &str, policy: &str) -> Result<String> {
    if let Some(key) = into.dialects.topology_aliases.get(policy) {
        return Ok(key.clone());
    }
    match policy {
        "SameZone" => Ok("topology.kubernetes.io/zone".into()),
        "SameRegion" => Ok("topology.kubernetes.io/region".into()),
        "SameNode" => Ok("kubernetes.io/hostname".into()),
        other => bail!(
            "{origin}: field {field}: topology policy {other:?} is not a known name (SameZone, SameRegion, SameNode); \
             give the node label it means with --topology-alias {other}=<label key>"
        ),
    }
}

impl Manifests {
    /// What joins dialect objects read apart, once everything is read: an
    /// early CompositePodGroup's children get their parent, workloadRef
    /// and level topology (the first link wins, a field the child set
    /// stays), and an early group's spread becomes its member pods' own
    /// hard `topologySpreadConstraints` (after any they carry).
    pub(super) fn join_dialect_objects(&mut self) {
        use k8s_openapi::api::scheduling::v1beta1::{
            PodGroupSchedulingConstraints, TopologyConstraint, WorkloadReference,
        };
        let links = std::mem::take(&mut self.dialects.composite_links);
        let spreads = std::mem::take(&mut self.dialects.group_spread);
        let mut linked = vec![false; links.len()];
        for (_, object) in &mut self.objects {
            match object {
                super::Object::PodGroup(group) => {
                    let key = format!(
                        "{}/{}",
                        group.metadata.namespace.as_deref().unwrap_or("default"),
                        group.metadata.name.as_deref().unwrap_or_default()
                    );
                    let name = group.metadata.name.clone().unwrap_or_default();
                    for (i, link) in links.iter().enumerate().filter(|(_, l)| l.child == key) {
                        linked[i] = true;
                        let spec = &mut group.spec;
                        spec.parent_composite_pod_group_name
                            .get_or_insert_with(|| link.parent.clone());
                        spec.workload_ref.get_or_insert_with(|| WorkloadReference {
                            workload_name: link.parent.clone(),
                            template_name: name.clone(),
                        });
                        let constraints = spec
                            .scheduling_constraints
                            .get_or_insert_with(PodGroupSchedulingConstraints::default);
                        if let Some(key) = &link.topology_key
                            && constraints.topology.as_ref().is_none_or(Vec::is_empty)
                        {
                            constraints.topology =
                                Some(vec![TopologyConstraint { key: key.clone() }]);
                        }
                        if constraints.topology.is_none() {
                            spec.scheduling_constraints = None;
                        }
                    }
                }
                super::Object::Pod(pod) if !spreads.is_empty() => {
                    let Some(spec) = pod.spec.as_mut() else {
                        continue;
                    };
                    let Some(group) = spec
                        .scheduling_group
                        .as_ref()
                        .and_then(|g| g.pod_group_name.as_deref())
                    else {
                        continue;
                    };
                    let key = format!(
                        "{}/{group}",
                        pod.metadata.namespace.as_deref().unwrap_or("default")
                    );
                    if let Some(spread) = spreads.get(&key) {
                        spec.topology_spread_constraints
                            .get_or_insert_with(Vec::new)
                            .extend(spread.iter().cloned());
                    }
                }
                _ => {}
            }
        }
        for (link, _) in links.iter().zip(linked).filter(|(_, linked)| !linked) {
            self.warnings.push(format!(
                "{}: child PodGroup {} is not in the snapshot",
                link.origin, link.child
            ));
        }
    }

    /// One note per dialect pod-membership marker: how many pods used it.
    pub fn pod_marker_notes(&self) -> Vec<String> {
        POD_MARKERS
            .iter()
            .filter_map(|(marker, _, what)| {
                let (count, first) = self.dialects.pod_markers.get(marker)?;
                Some(format!(
                    "{count} pod(s) (first: Pod {first}) joined PodGroups by {what} {marker}, read as spec.schedulingGroup.podGroupName"
                ))
            })
            .chain(self.dialects.pod_schedulers.iter().map(|(scheduler, count)| {
                format!(
                    "{count} pod(s) of those groups name scheduler {scheduler}: read as \
                     default-scheduler's, which schedules their groups in v1.37"
                )
            }))
            .collect()
    }
}
