//! `ray.io/v1` RayCluster and RayJob, as the KubeRay operator expands them
//! (`ray-operator/controllers/ray/raycluster_controller.go`,
//! `utils/util.go`, `common/pod.go`):
//!
//! - a RayCluster makes one head pod `<cluster>-head-<suffix>` from
//!   `headGroupSpec.template` and, per `workerGroupSpecs[]` entry,
//!   `replicas` (clamped to `minReplicas` … `maxReplicas`, 0 when the
//!   group is suspended) × `numOfHosts` (default 1) worker pods
//!   `<cluster>-<group>-worker-<suffix>`, labelled `ray.io/cluster`,
//!   `ray.io/node-type`, `ray.io/group` (`headgroup` for the head),
//!   `ray.io/identifier` and `ray.io/is-ray-node`; a suspended cluster
//!   (`spec.suspend`) makes none;
//! - with the label `ray.io/gang-scheduling-enabled: "true"`, KubeRay's
//!   native workload-aware-scheduling integration
//!   (`batchscheduler/kubernetes-was`): one Workload `<cluster>` with one
//!   template `cluster`, a gang of 1 + the worker pods, and one PodGroup
//!   `<cluster>-cluster` every pod joins (its `schedulerName`
//!   `default-scheduler`); KubeRay skips it while in-tree autoscaling is
//!   on, and so does wasched, with a note;
//! - a RayJob makes its RayCluster `<rayjob>-<suffix>` from
//!   `rayClusterSpec`, with the RayJob's labels (so the gang label carries
//!   over); its submitter Job is created once the cluster is ready, so it
//!   is not part of the pods that must fit.

use anyhow::Result;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::api::scheduling::v1beta1::PodGroupTemplate;
use serde_json::{Map, Value, json};

use super::pods::{owner, pod, pods_text, policy, suffix, workload, workload_objects};
use super::{Context, Expansion, Reader, get, manifest};

const API_VERSION: &str = "ray.io/v1";

/// A RayCluster: its head and worker pods, and its gang when the cluster
/// asks for one.
pub fn cluster(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context
        .present
        .made(&namespace, "RayCluster", &name, "ray.io/cluster")
    {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let value = read.value;
    if read.flag(get(value, "/spec/suspend"), "spec.suspend")? {
        return Ok(Expansion::NoPods("suspended (spec.suspend)".into()));
    }
    let head: PodTemplateSpec = read.template(
        "spec.headGroupSpec.template",
        get(value, "/spec/headGroupSpec/template"),
    )?;
    // (group name, template, pods)
    let mut groups = Vec::new();
    for (i, group) in read
        .list(
            get(value, "/spec/workerGroupSpecs"),
            "spec.workerGroupSpecs",
        )?
        .iter()
        .enumerate()
    {
        let at = format!("spec.workerGroupSpecs[{i}]");
        let group_name = read
            .text(get(group, "/groupName"), &format!("{at}.groupName"))?
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{}: field {at}.groupName: required field is missing",
                    read.origin
                )
            })?
            .to_string();
        let template: PodTemplateSpec =
            read.template(&format!("{at}.template"), get(group, "/template"))?;
        let min = read.int(get(group, "/minReplicas"), &format!("{at}.minReplicas"), 0)?;
        let max = read.int(
            get(group, "/maxReplicas"),
            &format!("{at}.maxReplicas"),
            i64::from(i32::MAX),
        )?;
        let hosts = read.int(get(group, "/numOfHosts"), &format!("{at}.numOfHosts"), 1)?;
        let suspended = read.flag(get(group, "/suspend"), &format!("{at}.suspend"))?;
        let replicas = match read.int(get(group, "/replicas"), &format!("{at}.replicas"), -1)? {
            _ if suspended => 0,
            r if r < min => min,
            r if r > max => max,
            r => r,
        };
        let pods = read.bounded(
            replicas.max(0) as u128 * hosts.max(1) as u128,
            &format!("{at}.replicas × {at}.numOfHosts"),
        )?;
        groups.push((group_name, template, pods));
    }
    let workers = read.bounded(
        groups.iter().map(|(_, _, pods)| *pods as u128).sum(),
        "spec.workerGroupSpecs",
    )?;
    let gang_label = meta
        .labels
        .as_ref()
        .and_then(|l| l.get("ray.io/gang-scheduling-enabled"))
        .is_some_and(|v| v == "true");
    let autoscaling = read.flag(
        get(value, "/spec/enableInTreeAutoscaling"),
        "spec.enableInTreeAutoscaling",
    )?;
    let mut objects = Vec::new();
    let mut made = Vec::new();
    let group = (gang_label && !autoscaling).then(|| format!("{name}-cluster"));
    if let Some(group) = &group {
        let template = PodGroupTemplate {
            name: "cluster".into(),
            scheduling_policy: policy(Some(i32::try_from(1 + workers).unwrap_or(i32::MAX))),
            ..Default::default()
        };
        let workload = workload(
            &namespace,
            &name,
            ("ray.io", "RayCluster", &meta),
            owner(API_VERSION, "RayCluster", &meta),
            vec![template.clone()],
        );
        let (values, said) = workload_objects(workload, &[(group.clone(), template)]);
        objects.extend(values);
        made.extend(said);
    } else if gang_label {
        made.push("no gang: KubeRay skips gang scheduling while in-tree autoscaling is on".into());
    }
    let mut names = Vec::new();
    let add = |template: &PodTemplateSpec,
               prefix: &str,
               node_type: &str,
               ray_group: &str,
               index: usize,
               names: &mut Vec<String>| {
        // The suffix is drawn from the whole prefix: two groups whose
        // names share the 50 characters kept still get apart names.
        let cut: String = prefix.chars().take(50).collect::<String>().to_lowercase();
        let pod_name = format!(
            "{cut}-{node_type}-{}",
            suffix(&[
                namespace.as_bytes(),
                prefix.as_bytes(),
                &index.to_le_bytes()
            ])
        );
        let mut made_pod = pod(
            template,
            &namespace,
            pod_name.clone(),
            owner(API_VERSION, "RayCluster", &meta),
            &[
                ("ray.io/is-ray-node".into(), "yes".into()),
                ("ray.io/cluster".into(), name.clone()),
                ("ray.io/node-type".into(), node_type.into()),
                ("ray.io/group".into(), ray_group.into()),
                ("ray.io/identifier".into(), format!("{name}-{node_type}")),
            ],
            &meta,
            group.as_deref(),
        );
        if group.is_some()
            && let Some(spec) = made_pod.spec.as_mut()
        {
            spec.scheduler_name = Some(crate::manifest::DEFAULT_SCHEDULER_NAME.into());
        }
        names.push(pod_name);
        manifest("v1", "Pod", &made_pod)
    };
    objects.push(add(&head, &name, "head", "headgroup", 0, &mut names));
    for (group_name, template, pods) in &groups {
        for index in 0..*pods {
            let value = add(
                template,
                &format!("{name}-{group_name}"),
                "worker",
                group_name,
                index,
                &mut names,
            );
            objects.push(value);
        }
    }
    made.push(pods_text(&names));
    Ok(Expansion::Made { objects, made })
}

/// A RayJob: its RayCluster.
pub fn job(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context.present.made(
        &namespace,
        "RayJob",
        &name,
        "ray.io/originated-from-cr-name",
    ) {
        return Ok(Expansion::Present("its RayCluster or pods are".into()));
    }
    let value = read.value;
    if read.flag(get(value, "/spec/suspend"), "spec.suspend")? {
        return Ok(Expansion::NoPods("suspended (spec.suspend)".into()));
    }
    if let Some(selector) = get(value, "/spec/clusterSelector") {
        return Ok(Expansion::NoPods(format!(
            "runs on an existing RayCluster (spec.clusterSelector {selector})"
        )));
    }
    let spec = read.required(get(value, "/spec/rayClusterSpec"), "spec.rayClusterSpec")?;
    let cluster_name = format!(
        "{name}-{}",
        suffix(&[namespace.as_bytes(), name.as_bytes()])
    );
    let mut labels: Map<String, Value> = meta
        .labels
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    labels.insert("ray.io/originated-from-cr-name".into(), json!(name));
    labels.insert("ray.io/originated-from-crd".into(), json!("RayJob"));
    let cluster = json!({
        "apiVersion": API_VERSION,
        "kind": "RayCluster",
        "metadata": {
            "name": cluster_name,
            "namespace": namespace,
            "labels": labels,
            "creationTimestamp": meta.creation_timestamp,
            "ownerReferences": [owner(API_VERSION, "RayJob", &meta)],
        },
        "spec": spec,
    });
    Ok(Expansion::Made {
        objects: vec![cluster],
        made: vec![format!(
            "RayCluster {namespace}/{cluster_name} (its submitter Job starts once the cluster is ready)"
        )],
    })
}
