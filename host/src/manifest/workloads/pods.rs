//! What every controller does alike: pods from a template, named as the
//! API server names a `generateName` pod or as a StatefulSet names its
//! ordinals, owned by their controller, and the Workload and PodGroups
//! of the workload API (`workloadbuilder` in component-helpers: a
//! template's policy, constraints, disruption mode and priority class
//! copied into each PodGroup).

use k8s_openapi::api::core::v1::{Pod, PodSchedulingGroup, PodTemplateSpec};
use k8s_openapi::api::scheduling::v1beta1::{
    BasicSchedulingPolicy, GangSchedulingPolicy, PodGroup, PodGroupSchedulingPolicy, PodGroupSpec,
    PodGroupTemplate, TypedLocalObjectReference, Workload, WorkloadReference, WorkloadSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use crate::manifest::load::ObjectRef;

/// The characters of apimachinery's `rand.String` (and
/// `SafeEncodeString`).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// FNV-1a, 64 bits, over the parts with a separator between them.
pub fn fnv(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            hash = (hash ^ u64::from(b'/')).wrapping_mul(0x0100_0000_01b3);
        }
        for byte in *part {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The 5-character suffix a `generateName` would get, derived from what
/// names the object (so that runs are reproducible) rather than random.
pub fn suffix(parts: &[&[u8]]) -> String {
    encode(fnv(parts), 5)
}

/// `length` characters of [`ALPHABET`] drawn from `hash`.
pub fn encode(hash: u64, length: usize) -> String {
    (0..length)
        .map(|i| ALPHABET[((hash >> (i * 12)) % ALPHABET.len() as u64) as usize] as char)
        .collect()
}

/// The controller reference a controller puts on what it creates.
pub fn owner(api_version: &str, kind: &str, meta: &ObjectMeta) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// What a made object is named after: `Kind ns/name (from <controller>)`.
pub fn derived(origin: &ObjectRef, kind: &str, key: &str) -> ObjectRef {
    ObjectRef {
        file: origin.file.clone(),
        kind: kind.into(),
        name: format!("{key} (from {} {})", origin.kind, origin.name),
    }
}

/// A pod from `template`, named `name` in `namespace`, owned by `owner`,
/// with `labels` added (the controller's own win over the template's) and,
/// if `group` is given, in that PodGroup. Its creation time is the
/// controller's.
pub fn pod(
    template: &PodTemplateSpec,
    namespace: &str,
    name: String,
    owner: OwnerReference,
    labels: &[(String, String)],
    created: &ObjectMeta,
    group: Option<&str>,
) -> Pod {
    let mut meta = template.metadata.clone().unwrap_or_default();
    let all = meta.labels.get_or_insert_with(Default::default);
    for (key, value) in labels {
        all.insert(key.clone(), value.clone());
    }
    meta.name = Some(name);
    meta.generate_name = None;
    meta.namespace = Some(namespace.into());
    meta.creation_timestamp = created.creation_timestamp.clone();
    meta.owner_references = Some(vec![owner]);
    let mut spec = template.spec.clone().unwrap_or_default();
    if let Some(group) = group {
        spec.scheduling_group = Some(PodSchedulingGroup {
            pod_group_name: Some(group.into()),
        });
    }
    Pod {
        metadata: meta,
        spec: Some(spec),
        status: None,
    }
}

/// The pod group a template's pods already name, if any.
pub fn named_group(template: &PodTemplateSpec) -> Option<&str> {
    template
        .spec
        .as_ref()?
        .scheduling_group
        .as_ref()?
        .pod_group_name
        .as_deref()
        .filter(|g| !g.is_empty())
}

/// A gang of `min_count`, or `basic` for `None`.
pub fn policy(min_count: Option<i32>) -> PodGroupSchedulingPolicy {
    match min_count {
        Some(min_count) => PodGroupSchedulingPolicy {
            basic: None,
            gang: Some(GangSchedulingPolicy { min_count }),
        },
        None => PodGroupSchedulingPolicy {
            basic: Some(BasicSchedulingPolicy(serde_json::json!({}))),
            gang: None,
        },
    }
}

/// How a policy reads in a note.
pub fn policy_text(policy: &PodGroupSchedulingPolicy) -> String {
    match &policy.gang {
        Some(gang) => format!("gang minCount {}", gang.min_count),
        None => "basic".into(),
    }
}

/// A controller's Workload (`workloadbuilder`'s `BuildWorkload`): `name` in
/// `namespace`, owned by and pointing back at the controller, with its
/// PodGroup templates.
pub fn workload(
    namespace: &str,
    name: &str,
    controller: (&str, &str, &ObjectMeta),
    owner: OwnerReference,
    templates: Vec<PodGroupTemplate>,
) -> Workload {
    let (api_group, kind, meta) = controller;
    Workload {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            creation_timestamp: meta.creation_timestamp.clone(),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: WorkloadSpec {
            controller_ref: Some(TypedLocalObjectReference {
                api_group: Some(api_group.to_string()).filter(|g| !g.is_empty()),
                kind: kind.into(),
                name: meta.name.clone().unwrap_or_default(),
            }),
            pod_group_templates: Some(templates),
            composite_pod_group_templates: None,
        },
    }
}

/// A PodGroup of no Workload, as a controller of another scheduler's
/// groups makes one (Volcano's, training-operator's, the Trainer's),
/// read as v1.37's: `name` in `namespace`, owned by `owner`, created with
/// `created`.
pub fn lone_pod_group(
    namespace: &str,
    name: &str,
    owner: OwnerReference,
    created: &ObjectMeta,
    policy: PodGroupSchedulingPolicy,
    priority_class_name: Option<String>,
) -> PodGroup {
    PodGroup {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            creation_timestamp: created.creation_timestamp.clone(),
            owner_references: Some(vec![owner]),
            ..Default::default()
        },
        spec: PodGroupSpec {
            scheduling_policy: policy,
            priority_class_name,
            ..Default::default()
        },
        status: None,
    }
}

/// `namespace/name` of an object (`default` when it has no namespace).
pub fn key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// A PodGroup `name` made from `template` of `workload`
/// (`workloadbuilder`'s `NewPodGroup`): the template's policy, constraints,
/// disruption mode, priority and claims, owned as the Workload is.
pub fn pod_group(
    namespace: &str,
    name: &str,
    workload: &Workload,
    template: &PodGroupTemplate,
) -> PodGroup {
    PodGroup {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(namespace.into()),
            creation_timestamp: workload.metadata.creation_timestamp.clone(),
            owner_references: workload.metadata.owner_references.clone(),
            ..Default::default()
        },
        spec: PodGroupSpec {
            scheduling_policy: template.scheduling_policy.clone(),
            scheduling_constraints: template.scheduling_constraints.clone(),
            disruption_mode: template.disruption_mode.clone(),
            priority_class_name: template.priority_class_name.clone(),
            priority: template.priority,
            preemption_policy: template.preemption_policy.clone(),
            resource_claims: template.resource_claims.clone(),
            workload_ref: Some(WorkloadReference {
                workload_name: workload.metadata.name.clone().unwrap_or_default(),
                template_name: template.name.clone(),
            }),
            parent_composite_pod_group_name: None,
        },
        status: None,
    }
}

/// A Workload with `templates` and one PodGroup per (PodGroup name,
/// template) of `groups`, as manifest values, and how they read in a note.
pub fn workload_objects(
    workload: Workload,
    groups: &[(String, PodGroupTemplate)],
) -> (Vec<serde_json::Value>, Vec<String>) {
    let namespace = workload.metadata.namespace.clone().unwrap_or_default();
    let mut said = vec![format!(
        "Workload {namespace}/{}",
        workload.metadata.name.as_deref().unwrap_or_default()
    )];
    let mut objects = Vec::new();
    for (name, template) in groups {
        let group = pod_group(&namespace, name, &workload, template);
        said.push(format!(
            "PodGroup {namespace}/{name} ({})",
            policy_text(&template.scheduling_policy)
        ));
        objects.push(super::manifest(
            "scheduling.k8s.io/v1beta1",
            "PodGroup",
            &group,
        ));
    }
    objects.insert(
        0,
        super::manifest("scheduling.k8s.io/v1beta1", "Workload", &workload),
    );
    (objects, said)
}

/// How a run of made pods reads in a note: `pod a`, `3 pods a … c`.
pub fn pods_text(names: &[String]) -> String {
    match names {
        [] => "no pods".into(),
        [one] => format!("pod {one}"),
        [first, .., last] => format!("{} pods {first} … {last}", names.len()),
    }
}
