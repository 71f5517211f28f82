//! KAI-Scheduler's `scheduling.run.ai/v2alpha2` PodGroup, read into the
//! v1.37 model (`pkg/apis/scheduling/v2alpha2/podgroup_types.go`, v0.17):
//!
//! - `minMember` → `schedulingPolicy.gang.minCount`; unset or 0 (KAI: no
//!   gang) → `basic`;
//! - `priorityClassName` kept; `queue` noted (one queue for all);
//! - `topologyConstraint.requiredTopologyLevel` (a node label key of the
//!   KAI Topology) → `schedulingConstraints.topology[0].key`; a
//!   `preferredTopologyLevel` is a preference v1.37 has no field for and is
//!   said so in the note;
//! - `subGroups[] {name, minMember}` → a `v1alpha3` CompositePodGroup of the
//!   group's name over one PodGroup `<group>-<subGroup>` per subgroup (a
//!   gang of its `minMember`), `minGroupCount` the group's `minSubGroup`
//!   (else every subgroup), with a Workload `<group>` of that shape; pods
//!   join the subgroup their label `kai.scheduler/subgroup-name` names
//!   (see [`super::dialect`]);
//! - `preemptibility: preemptible` is the default behaviour and noted;
//!   `non-preemptible`, nested subgroups (`parent`) and any other field
//!   with no v1.37 counterpart are refused by name; process and timing
//!   fields (`markUnschedulable`, `schedulingBackoff`, `preemptionDelay`,
//!   `stalenessGracePeriod`) change nothing in a one-instant simulation and
//!   are noted.
//!
//! Pods of `kai-scheduler` join by the annotation `pod-group-name`; their `schedulerName`
//! (`kai-scheduler`) is read as `default-scheduler`'s.

use anyhow::{Result, anyhow, bail};
use serde_json::{Map, Value, json};

use super::ObjectRef;
use super::load::Manifests;

/// The pod annotation that names a pod's KAI PodGroup.
pub const POD_GROUP_ANNOTATION: &str = "pod-group-name";
/// KAI-Scheduler's `schedulerName`: only its pods' `pod-group-name` is read.
pub const SCHEDULER_NAME: &str = "kai-scheduler";
/// The pod label that names its subgroup.
pub const SUBGROUP_LABEL: &str = "kai.scheduler/subgroup-name";

/// The spec fields read (anything else is refused).
const FIELDS: &[&str] = &[
    "minMember",
    "minSubGroup",
    "queue",
    "priorityClassName",
    "preemptibility",
    "topologyConstraint",
    "subGroups",
    "markUnschedulable",
    "schedulingBackoff",
    "preemptionDelay",
    "stalenessGracePeriod",
];

/// The PodGroup name a subgroup's pods join.
pub fn subgroup_group(group: &str, subgroup: &str) -> String {
    format!("{group}-{subgroup}")
}

/// Reads a KAI PodGroup into its v1.37 objects, each read as a manifest's.
pub fn pod_group(into: &mut Manifests, origin: &ObjectRef, value: &Value) -> Result<()> {
    let meta = value.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let namespace = meta
        .get("namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let spec = value
        .get("spec")
        .and_then(Value::as_object)
        .ok_or_else(|| anyhow!("{origin}: field spec: required"))?;
    if let Some(other) = spec.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        bail!("{origin}: field spec.{other}: not a field of the KAI PodGroup that wasched can map");
    }
    let mut mapped = Vec::new();
    let count = |field: &str, v: Option<&Value>| -> Result<Option<i64>> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .filter(|n| (0..=i64::from(i32::MAX)).contains(n))
                .map(Some)
                .ok_or_else(|| {
                    anyhow!(
                        "{origin}: field spec.{field}: must be an integer of at least 0, got {v}"
                    )
                }),
        }
    };
    let min_member = count("minMember", spec.get("minMember"))?;
    let policy = |min: Option<i64>| match min {
        Some(n) if n > 0 => json!({"gang": {"minCount": n}}),
        _ => json!({"basic": {}}),
    };
    if let Some(queue) = spec.get("queue") {
        mapped.push(format!(
            "spec.queue {queue}: KAI queues have no v1.37 equivalent; all groups share one queue"
        ));
    }
    match spec.get("preemptibility").and_then(Value::as_str) {
        None => {}
        Some("preemptible") => mapped
            .push("spec.preemptibility preemptible: as every v1.37 group of lower priority".into()),
        Some(other) => bail!(
            "{origin}: field spec.preemptibility: {other} has no v1.37 equivalent that wasched models"
        ),
    }
    for field in [
        "markUnschedulable",
        "schedulingBackoff",
        "preemptionDelay",
        "stalenessGracePeriod",
    ] {
        if let Some(v) = spec.get(field) {
            mapped.push(format!(
                "spec.{field} {v}: a retry or timing setting, no effect in a one-instant simulation"
            ));
        }
    }
    let topology = |at: &str,
                    constraint: Option<&Value>,
                    mapped: &mut Vec<String>|
     -> Result<Option<Value>> {
        let Some(constraint) = constraint.filter(|c| !c.is_null()) else {
            return Ok(None);
        };
        let fields = constraint
            .as_object()
            .ok_or_else(|| anyhow!("{origin}: field {at}: expected a mapping"))?;
        if let Some(other) = fields.keys().find(|k| {
            ![
                "topology",
                "requiredTopologyLevel",
                "preferredTopologyLevel",
            ]
            .contains(&k.as_str())
        }) {
            bail!("{origin}: field {at}.{other}: not a field of KAI's topologyConstraint");
        }
        if let Some(preferred) = fields.get("preferredTopologyLevel") {
            mapped.push(format!(
                "{at}.preferredTopologyLevel {preferred}: a preference v1.37 has no field for, not modelled"
            ));
        }
        Ok(fields
            .get("requiredTopologyLevel")
            .and_then(Value::as_str)
            .map(|key| {
                mapped.push(format!(
                    "{at}.requiredTopologyLevel {key} read as schedulingConstraints.topology[0].key"
                ));
                json!({"topology": [{"key": key}]})
            }))
    };
    let constraints = topology(
        "spec.topologyConstraint",
        spec.get("topologyConstraint"),
        &mut mapped,
    )?;
    let priority = spec.get("priorityClassName").cloned();
    let subgroups = spec
        .get("subGroups")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut objects = Vec::new();
    let base_meta = |name: &str| {
        let mut m = Map::new();
        m.insert("name".into(), json!(name));
        m.insert("namespace".into(), json!(namespace));
        if let Some(created) = meta.get("creationTimestamp") {
            m.insert("creationTimestamp".into(), created.clone());
        }
        Value::Object(m)
    };
    if subgroups.is_empty() {
        let mut group_spec = Map::new();
        group_spec.insert("schedulingPolicy".into(), policy(min_member));
        mapped.insert(
            0,
            match min_member {
                Some(n) if n > 0 => {
                    format!("spec.minMember {n} read as schedulingPolicy.gang.minCount")
                }
                _ => "no spec.minMember (KAI: no gang) read as basic".into(),
            },
        );
        if let Some(c) = constraints {
            group_spec.insert("schedulingConstraints".into(), c);
        }
        if let Some(p) = priority {
            group_spec.insert("priorityClassName".into(), p);
        }
        objects.push(json!({
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": base_meta(&name),
            "spec": group_spec,
        }));
    } else {
        let min_subgroups = count("minSubGroup", spec.get("minSubGroup"))?;
        let mut templates = Vec::new();
        let mut names = Vec::new();
        for (i, sub) in subgroups.iter().enumerate() {
            let at = format!("spec.subGroups[{i}]");
            let fields = sub
                .as_object()
                .ok_or_else(|| anyhow!("{origin}: field {at}: expected a mapping"))?;
            if let Some(other) = fields
                .keys()
                .find(|k| !["name", "minMember", "topologyConstraint"].contains(&k.as_str()))
            {
                bail!(
                    "{origin}: field {at}.{other}: KAI's {other} has no v1.37 equivalent that wasched models \
                     (subgroups one level deep are read)"
                );
            }
            let sub_name = fields
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| anyhow!("{origin}: field {at}.name: required field is missing"))?;
            let sub_min = count(
                &format!("subGroups[{i}].minMember"),
                fields.get("minMember"),
            )?;
            let sub_constraints = topology(
                &format!("{at}.topologyConstraint"),
                fields.get("topologyConstraint"),
                &mut mapped,
            )?;
            let child = subgroup_group(&name, sub_name);
            let mut template = Map::new();
            template.insert("name".into(), json!(sub_name));
            template.insert("schedulingPolicy".into(), policy(sub_min));
            let mut child_spec = Map::new();
            child_spec.insert("schedulingPolicy".into(), policy(sub_min));
            child_spec.insert("parentCompositePodGroupName".into(), json!(name));
            child_spec.insert(
                "workloadRef".into(),
                json!({"workloadName": name, "templateName": sub_name}),
            );
            if let Some(c) = &sub_constraints {
                child_spec.insert("schedulingConstraints".into(), c.clone());
                template.insert("schedulingConstraints".into(), c.clone());
            }
            if let Some(p) = &priority {
                child_spec.insert("priorityClassName".into(), p.clone());
                template.insert("priorityClassName".into(), p.clone());
            }
            templates.push(Value::Object(template));
            names.push(format!(
                "{namespace}/{child} ({})",
                match sub_min {
                    Some(n) if n > 0 => format!("gang minCount {n}"),
                    _ => "basic".into(),
                }
            ));
            objects.push(json!({
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": base_meta(&child),
                "spec": child_spec,
            }));
        }
        let required = min_subgroups
            .filter(|&n| n > 0)
            .unwrap_or(subgroups.len() as i64);
        let composite_policy = json!({"gang": {"minGroupCount": required}});
        let mut composite_spec = Map::new();
        composite_spec.insert("schedulingPolicy".into(), composite_policy.clone());
        composite_spec.insert(
            "workloadRef".into(),
            json!({"workloadName": name, "templateName": name}),
        );
        if let Some(c) = &constraints {
            composite_spec.insert("schedulingConstraints".into(), c.clone());
        }
        if let Some(p) = &priority {
            composite_spec.insert("priorityClassName".into(), p.clone());
        }
        let mut composite_template = composite_spec.clone();
        composite_template.remove("workloadRef");
        composite_template.insert("name".into(), json!(name));
        composite_template.insert("podGroupTemplates".into(), Value::Array(templates));
        objects.insert(
            0,
            json!({
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": base_meta(&name),
                "spec": {"compositePodGroupTemplates": [composite_template]},
            }),
        );
        objects.insert(
            1,
            json!({
                "apiVersion": "scheduling.k8s.io/v1alpha3",
                "kind": "CompositePodGroup",
                "metadata": base_meta(&name),
                "spec": composite_spec,
            }),
        );
        let sum: i64 = subgroups
            .iter()
            .filter_map(|s| s.get("minMember").and_then(Value::as_i64))
            .sum();
        let total = match min_member {
            Some(n) if n > sum => bail!(
                "{origin}: field spec.minMember: {n} is more than its subgroups' minMember together ({sum}), \
                 which a v1.37 CompositePodGroup cannot express"
            ),
            Some(n) if n > 0 => {
                format!(" (the group's minMember {n} is met by its subgroups' {sum})")
            }
            _ => String::new(),
        };
        mapped.insert(
            0,
            format!(
                "spec.subGroups read as CompositePodGroup {namespace}/{name} (gang minGroupCount {required}) over PodGroups {}{total}; pods join them by label {SUBGROUP_LABEL}",
                names.join(", ")
            ),
        );
    }
    into.notes.push(format!(
        "PodGroup {namespace}/{name} (KAI-Scheduler scheduling.run.ai/v2alpha2): {}",
        mapped.join("; ")
    ));
    let file = origin.file.clone();
    for object in objects {
        super::load::add_value(into, &file, object)?;
    }
    Ok(())
}
