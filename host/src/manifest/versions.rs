//! Earlier versions of the workload API, read as `scheduling.k8s.io/v1beta1`.
//!
//! - **`v1alpha3`** Workload and PodGroup (served beside `v1beta1` by a
//!   v1.37 API server, field for field the same): read through their own
//!   k8s-openapi types, so an unknown field is named against `v1alpha3`,
//!   then as `v1beta1`.
//! - **`v1alpha2`** (v1.36): `PodGroup.spec.podGroupTemplateRef.workload
//!   {workloadName, podGroupTemplateName}` → `spec.workloadRef
//!   {workloadName, templateName}`; `disruptionMode: Pod|PodGroup` →
//!   `{single: {}}|{all: {}}` (in a PodGroup and in a Workload's templates);
//!   the condition `PodGroupScheduled` → `PodGroupInitiallyScheduled`.
//! - **`v1alpha1`** (v1.35), converted structurally: a Workload's
//!   `spec.podGroups[] {name, policy}` → `podGroupTemplates[] {name,
//!   schedulingPolicy}`; a pod's `spec.workloadRef {name, podGroup,
//!   podGroupReplicaKey}` → `spec.schedulingGroup.podGroupName` naming one
//!   PodGroup per (Workload, podGroup, replica key) — v1.35 applied a
//!   group's policy to each replica key apart — named `<workload>-<podGroup>`
//!   or `<workload>-<podGroup>-<replicaKey>`, made by [`finish`] from the
//!   Workload's policy.
//!
//! Field names are those of k8s-openapi 0.29's `v1_35`/`v1_36`/`v1_37`
//! modules (generated from each release's OpenAPI). Every conversion is a
//! note; a field with no `v1beta1` counterpart is refused by name.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::scheduling::v1alpha3;
use k8s_openapi::api::scheduling::v1beta1::{
    PodGroup, PodGroupSchedulingPolicy, PodGroupSpec, WorkloadReference,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value, json};

use super::load::{Manifests, Object, ObjectRef};

/// The version everything here is read as.
const V1BETA1: &str = "scheduling.k8s.io/v1beta1";

/// A `v1alpha1` pod group replica: (namespace, Workload, pod group, replica key).
type GroupReplica = (String, String, String, Option<String>);

/// `v1alpha1` state: the pod groups Workloads declare and the groups pods
/// were put in, to make those groups once everything is read.
#[derive(Debug, Clone, Default)]
pub struct AlphaOneState {
    /// `namespace/workload` → its pod groups' policies by name.
    workloads: BTreeMap<String, BTreeMap<String, Value>>,
    /// (namespace, workload, podGroup, replica key) → (PodGroup name, pods, first pod).
    groups: BTreeMap<GroupReplica, (String, usize, ObjectRef)>,
}

/// Rewrites an earlier-version Workload or PodGroup, or a `v1alpha1` pod's
/// `workloadRef`, into its `v1beta1` form in place.
pub fn convert(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let api_version = value["apiVersion"].as_str().unwrap_or_default().to_string();
    match (api_version.as_str(), origin.kind.as_str()) {
        ("scheduling.k8s.io/v1alpha3", "Workload") => {
            alpha_three::<v1alpha3::Workload>(into, origin, value)
        }
        ("scheduling.k8s.io/v1alpha3", "PodGroup") => {
            alpha_three::<v1alpha3::PodGroup>(into, origin, value)
        }
        ("scheduling.k8s.io/v1alpha2", "PodGroup") => alpha_two_pod_group(into, origin, value),
        ("scheduling.k8s.io/v1alpha2", "Workload") => alpha_two_workload(into, origin, value),
        ("scheduling.k8s.io/v1alpha1", "Workload") => alpha_one_workload(into, origin, value),
        ("scheduling.k8s.io/v1alpha1", "PodGroup") => bail!(
            "{origin}: field apiVersion: scheduling.k8s.io/v1alpha1 has no PodGroup kind \
             (v1.35 declared pod groups in Workload.spec.podGroups); wasched reads PodGroup {V1BETA1}, \
             v1alpha3 and v1alpha2"
        ),
        ("v1", "Pod") if value.pointer("/spec/workloadRef").is_some() => {
            alpha_one_pod(into, origin, value)
        }
        _ => Ok(()),
    }
}

/// `v1alpha3`: checked against its own type, then read as `v1beta1`.
fn alpha_three<T>(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let typed: Box<T> = super::fields::parse(
        origin,
        value.take(),
        into.validation,
        true,
        &mut into.unknown_fields,
    )?;
    *value =
        serde_json::to_value(&*typed).map_err(|e| anyhow!("{origin}: cannot be written: {e}"))?;
    value["apiVersion"] = json!(V1BETA1);
    into.notes.push(format!(
        "{} {}: scheduling.k8s.io/v1alpha3 read as {V1BETA1} (the same fields)",
        origin.kind, origin.name
    ));
    Ok(())
}

/// A `v1alpha2` `disruptionMode` string as the `v1beta1` union.
fn alpha_two_disruption(origin: &ObjectRef, field: &str, mode: &Value) -> Result<Value> {
    match mode.as_str() {
        Some("Pod") => Ok(json!({"single": {}})),
        Some("PodGroup") => Ok(json!({"all": {}})),
        _ => bail!(
            "{origin}: field {field}: {mode} is not a v1alpha2 disruption mode (Pod or PodGroup)"
        ),
    }
}

fn alpha_two_pod_group(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let mut mapped = Vec::new();
    if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
        if let Some(reference) = spec.remove("podGroupTemplateRef") {
            let workload = only_keys(
                origin,
                "spec.podGroupTemplateRef",
                &reference,
                &["workload"],
            )?
            .get("workload")
            .cloned()
            .unwrap_or(Value::Null);
            let fields = only_keys(
                origin,
                "spec.podGroupTemplateRef.workload",
                &workload,
                &["workloadName", "podGroupTemplateName"],
            )?;
            let mut workload_ref = Map::new();
            if let Some(name) = fields.get("workloadName") {
                workload_ref.insert("workloadName".into(), name.clone());
            }
            if let Some(template) = fields.get("podGroupTemplateName") {
                workload_ref.insert("templateName".into(), template.clone());
            }
            spec.insert("workloadRef".into(), Value::Object(workload_ref));
            mapped.push(
                "spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName} read as \
                 spec.workloadRef {workloadName, templateName}",
            );
        }
        if let Some(mode) = spec.get("disruptionMode") {
            let mode = alpha_two_disruption(origin, "spec.disruptionMode", mode)?;
            spec.insert("disruptionMode".into(), mode);
            mapped.push("spec.disruptionMode Pod|PodGroup read as {single: {}}|{all: {}}");
        }
    }
    if let Some(conditions) = value
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for condition in conditions {
            if condition["type"] == "PodGroupScheduled" {
                condition["type"] = json!("PodGroupInitiallyScheduled");
                mapped.push("condition PodGroupScheduled read as PodGroupInitiallyScheduled");
            }
        }
    }
    alpha_two_note(into, origin, value, &mapped);
    Ok(())
}

fn alpha_two_workload(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let mut mapped = Vec::new();
    if let Some(templates) = value
        .pointer_mut("/spec/podGroupTemplates")
        .and_then(Value::as_array_mut)
    {
        for (i, template) in templates.iter_mut().enumerate() {
            if let Some(mode) = template.get("disruptionMode") {
                let field = format!("spec.podGroupTemplates[{i}].disruptionMode");
                template["disruptionMode"] = alpha_two_disruption(origin, &field, mode)?;
                mapped.push("disruptionMode Pod|PodGroup read as {single: {}}|{all: {}}");
            }
        }
    }
    mapped.dedup();
    alpha_two_note(into, origin, value, &mapped);
    Ok(())
}

fn alpha_two_note(into: &mut Manifests, origin: &ObjectRef, value: &mut Value, mapped: &[&str]) {
    value["apiVersion"] = json!(V1BETA1);
    let how = if mapped.is_empty() {
        "(no field renamed)".to_string()
    } else {
        mapped.join("; ")
    };
    into.notes.push(format!(
        "{} {}: scheduling.k8s.io/v1alpha2 converted to {V1BETA1}: {how}",
        origin.kind, origin.name
    ));
}

/// The keys of `value` (a mapping), refusing any but `allowed`.
fn only_keys<'a>(
    origin: &ObjectRef,
    field: &str,
    value: &'a Value,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>> {
    let map = value
        .as_object()
        .ok_or_else(|| anyhow!("{origin}: field {field}: expected a mapping, got {value}"))?;
    if let Some(other) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        bail!(
            "{origin}: field {field}.{other}: has no counterpart in {V1BETA1}, refused \
             (the fields read are {})",
            allowed.join(", ")
        );
    }
    Ok(map)
}

fn alpha_one_workload(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let key = namespaced_key(value);
    let spec = value.get("spec").cloned().unwrap_or(Value::Null);
    let spec = only_keys(origin, "spec", &spec, &["controllerRef", "podGroups"])?;
    let mut policies = BTreeMap::new();
    let mut templates = Vec::new();
    for (i, group) in spec
        .get("podGroups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let field = format!("spec.podGroups[{i}]");
        let fields = only_keys(origin, &field, group, &["name", "policy"])?;
        let name = fields
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| anyhow!("{origin}: field {field}.name: required field is missing"))?;
        let policy = fields
            .get("policy")
            .cloned()
            .ok_or_else(|| anyhow!("{origin}: field {field}.policy: required field is missing"))?;
        policies.insert(name.to_string(), policy.clone());
        templates.push(json!({"name": name, "schedulingPolicy": policy}));
    }
    let mut converted = Map::new();
    if let Some(controller) = spec.get("controllerRef") {
        converted.insert("controllerRef".into(), controller.clone());
    }
    converted.insert("podGroupTemplates".into(), Value::Array(templates));
    value["spec"] = Value::Object(converted);
    value["apiVersion"] = json!(V1BETA1);
    into.versions.workloads.insert(key, policies);
    into.notes.push(format!(
        "Workload {}: scheduling.k8s.io/v1alpha1 converted to {V1BETA1}: spec.podGroups[] \
         {{name, policy}} read as spec.podGroupTemplates[] {{name, schedulingPolicy}}; each \
         (podGroup, replica key) its pods name becomes one PodGroup",
        origin.name
    ));
    Ok(())
}

fn alpha_one_pod(into: &mut Manifests, origin: &ObjectRef, value: &mut Value) -> Result<()> {
    let namespace = value
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("default")
        .to_string();
    let spec = value
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or_else(|| anyhow!("{origin}: field spec: required"))?;
    let reference = spec.remove("workloadRef").unwrap_or(Value::Null);
    let fields = only_keys(
        origin,
        "spec.workloadRef",
        &reference,
        &["name", "podGroup", "podGroupReplicaKey"],
    )?;
    let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_string);
    let (Some(workload), Some(pod_group)) = (text("name"), text("podGroup")) else {
        bail!("{origin}: field spec.workloadRef: needs name and podGroup");
    };
    let replica = text("podGroupReplicaKey").filter(|k| !k.is_empty());
    let group = match &replica {
        Some(key) => format!("{workload}-{pod_group}-{key}"),
        None => format!("{workload}-{pod_group}"),
    };
    if let Some(existing) = spec
        .get("schedulingGroup")
        .and_then(|g| g.get("podGroupName"))
        .and_then(Value::as_str)
        .filter(|existing| *existing != group)
    {
        bail!(
            "{origin}: field spec.schedulingGroup.podGroupName: {existing}, but spec.workloadRef \
             (v1alpha1) names PodGroup {group}"
        );
    }
    spec.insert("schedulingGroup".into(), json!({"podGroupName": group}));
    let entry = into
        .versions
        .groups
        .entry((namespace, workload, pod_group, replica))
        .or_insert_with(|| (group, 0, origin.clone()));
    entry.1 += 1;
    Ok(())
}

/// Makes the PodGroups `v1alpha1` pods were put in, from their Workload's
/// policy, one note each; a Workload or pod group not in the snapshot is a
/// warning and the pods wait for their group, as v1.35's did. A PodGroup
/// of that name already in the snapshot is used as it is.
pub fn finish(into: &mut Manifests) {
    let state = std::mem::take(&mut into.versions);
    let existing: std::collections::BTreeSet<String> = into
        .objects
        .iter()
        .filter_map(|(_, o)| match o {
            Object::PodGroup(g) => Some(super::workloads::pods::key(&g.metadata)),
            _ => None,
        })
        .collect();
    for ((namespace, workload, pod_group, replica), (name, pods, first)) in state.groups {
        let group_key = format!("{namespace}/{name}");
        if existing.contains(&group_key) {
            continue;
        }
        let Some(policy) = state
            .workloads
            .get(&format!("{namespace}/{workload}"))
            .and_then(|groups| groups.get(&pod_group))
        else {
            into.warnings.push(format!(
                "{first}: spec.workloadRef (v1alpha1) names Workload {namespace}/{workload} pod group \
                 {pod_group}, which the snapshot lacks: {pods} pod(s) wait for it"
            ));
            continue;
        };
        let policy: PodGroupSchedulingPolicy = match serde_json::from_value(policy.clone()) {
            Ok(policy) => policy,
            Err(e) => {
                into.warnings.push(format!(
                    "{first}: Workload {namespace}/{workload} pod group {pod_group}: field policy not read: {e}"
                ));
                continue;
            }
        };
        let replica_text = replica
            .as_deref()
            .map_or_else(String::new, |r| format!(", replica key {r}"));
        into.notes.push(format!(
            "PodGroup {group_key}: made for {pods} pod(s) naming Workload {workload} pod group \
             {pod_group}{replica_text} (v1alpha1 spec.workloadRef)"
        ));
        let group = PodGroup {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(namespace),
                ..Default::default()
            },
            spec: PodGroupSpec {
                scheduling_policy: policy,
                workload_ref: Some(WorkloadReference {
                    workload_name: workload,
                    template_name: pod_group,
                }),
                ..Default::default()
            },
            status: None,
        };
        let origin = ObjectRef {
            file: first.file.clone(),
            kind: "PodGroup".into(),
            name: format!("{group_key} (from Pod {})", first.name),
        };
        into.objects
            .push((origin, Object::PodGroup(Box::new(group))));
    }
}

fn namespaced_key(value: &Value) -> String {
    let field = |k: &str| {
        value
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let namespace = field("namespace");
    let namespace = if namespace.is_empty() {
        "default".to_string()
    } else {
        namespace
    };
    format!("{namespace}/{}", field("name"))
}
