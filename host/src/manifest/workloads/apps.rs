//! `apps/v1` Deployment, ReplicaSet and StatefulSet, as
//! kube-controller-manager expands them (`pkg/controller/deployment`,
//! `replicaset`, `statefulset`):
//!
//! - a Deployment makes one ReplicaSet `<deployment>-<pod-template-hash>`
//!   with `spec.replicas` (default 1) and the template labelled
//!   `pod-template-hash`;
//! - a ReplicaSet makes `spec.replicas` pods `<replicaset>-<suffix>`
//!   (`generateName`);
//! - a StatefulSet makes pods `<statefulset>-<ordinal>` from
//!   `spec.ordinals.start` (default 0), labelled
//!   `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index`,
//!   with `hostname` the pod's name and `subdomain` `spec.serviceName`.
//!
//! The controller's `pod-template-hash` is FNV-32a over Go's printout of
//! the defaulted template, which only Go can reproduce; wasched's is
//! FNV-32a over the template's JSON, encoded the same way
//! (`rand.SafeEncodeString`): of the same shape, stable, not equal.

use anyhow::Result;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet, ReplicaSetSpec, StatefulSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::pods::{owner, pod, pods_text, suffix};
use super::{Context, Expansion, Reader, manifest};

/// The `pod-template-hash` of a template (see the module's doc).
pub fn template_hash(template: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(template).expect("templates serialise");
    let mut hash: u32 = 0x811c_9dc5;
    for byte in text.bytes() {
        hash = (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    hash.to_string()
        .bytes()
        .map(|digit| ALPHABET[usize::from(digit) % ALPHABET.len()] as char)
        .collect()
}

fn names(meta: &ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_else(|| "default".into()),
        meta.name.clone().unwrap_or_default(),
    )
}

/// A Deployment: its ReplicaSet.
pub fn deployment(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let deployment: Deployment = read.object()?;
    let (namespace, name) = names(&deployment.metadata);
    if context.present.owned_by(&namespace, "Deployment", &name)
        || context.present.deployment_has_pods(&namespace, &name)
    {
        return Ok(Expansion::Present("its ReplicaSet or pods are".into()));
    }
    let spec = deployment.spec.clone();
    if spec.replicas == Some(0) {
        return Ok(Expansion::NoPods("spec.replicas is 0".into()));
    }
    let hash = template_hash(&spec.template);
    let mut template = spec.template.clone();
    template
        .metadata
        .get_or_insert_with(Default::default)
        .labels
        .get_or_insert_with(Default::default)
        .insert("pod-template-hash".into(), hash.clone());
    let rs_name = format!("{name}-{hash}");
    let mut selector = spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_with(Default::default)
        .insert("pod-template-hash".into(), hash.clone());
    let replica_set = ReplicaSet {
        metadata: ObjectMeta {
            name: Some(rs_name.clone()),
            namespace: Some(namespace.clone()),
            labels: template.metadata.as_ref().and_then(|m| m.labels.clone()),
            creation_timestamp: deployment.metadata.creation_timestamp.clone(),
            owner_references: Some(vec![owner("apps/v1", "Deployment", &deployment.metadata)]),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(spec.replicas.unwrap_or(1)),
            min_ready_seconds: spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    };
    Ok(Expansion::Made {
        objects: vec![manifest("apps/v1", "ReplicaSet", &replica_set)],
        made: vec![format!(
            "ReplicaSet {namespace}/{rs_name} (pod-template-hash {hash}, wasched's own)"
        )],
    })
}

/// A ReplicaSet: its pods.
pub fn replica_set(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let replica_set: ReplicaSet = read.object()?;
    let (namespace, name) = names(&replica_set.metadata);
    if context.present.owned_by(&namespace, "ReplicaSet", &name) {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let spec = replica_set.spec.clone();
    let replicas = spec.replicas.unwrap_or(1);
    if replicas <= 0 {
        return Ok(Expansion::NoPods("spec.replicas is 0".into()));
    }
    read.bounded(replicas as u128, "spec.replicas")?;
    let template = spec.template.unwrap_or_default();
    let mut objects = Vec::new();
    let mut made = Vec::new();
    for index in 0..replicas as u32 {
        let pod_name = format!(
            "{name}-{}",
            suffix(&[namespace.as_bytes(), name.as_bytes(), &index.to_le_bytes()])
        );
        let pod = pod(
            &template,
            &namespace,
            pod_name.clone(),
            owner("apps/v1", "ReplicaSet", &replica_set.metadata),
            &[],
            &replica_set.metadata,
            None,
        );
        objects.push(manifest("v1", "Pod", &pod));
        made.push(pod_name);
    }
    Ok(Expansion::Made {
        objects,
        made: vec![pods_text(&made)],
    })
}

/// A StatefulSet: its pods, by ordinal.
pub fn stateful_set(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let set: StatefulSet = read.object()?;
    let (namespace, name) = names(&set.metadata);
    if context.present.owned_by(&namespace, "StatefulSet", &name) {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let spec = set.spec.clone();
    let replicas = spec.replicas.unwrap_or(1);
    if replicas <= 0 {
        return Ok(Expansion::NoPods("spec.replicas is 0".into()));
    }
    read.bounded(replicas as u128, "spec.replicas")?;
    let start = spec
        .ordinals
        .as_ref()
        .and_then(|o| o.start)
        .unwrap_or(0)
        .max(0);
    let revision = format!("{name}-{}", template_hash(&spec.template));
    let mut objects = Vec::new();
    let mut made = Vec::new();
    for ordinal in i64::from(start)..i64::from(start) + i64::from(replicas) {
        let pod_name = format!("{name}-{ordinal}");
        let mut pod = pod(
            &spec.template,
            &namespace,
            pod_name.clone(),
            owner("apps/v1", "StatefulSet", &set.metadata),
            &[
                (
                    "statefulset.kubernetes.io/pod-name".into(),
                    pod_name.clone(),
                ),
                ("apps.kubernetes.io/pod-index".into(), ordinal.to_string()),
                ("controller-revision-hash".into(), revision.clone()),
            ],
            &set.metadata,
            None,
        );
        if let Some(pod_spec) = pod.spec.as_mut() {
            pod_spec.hostname = Some(pod_name.clone());
            pod_spec.subdomain = spec.service_name.clone().filter(|s| !s.is_empty());
        }
        objects.push(manifest("v1", "Pod", &pod));
        made.push(pod_name);
    }
    Ok(Expansion::Made {
        objects,
        made: vec![pods_text(&made)],
    })
}
