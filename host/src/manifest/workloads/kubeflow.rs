//! Kubeflow's training jobs:
//!
//! - **PyTorchJob** (`kubeflow.org/v1`, training-operator v1.9,
//!   `pkg/controller.v1/common/pod.go`): per `pytorchReplicaSpecs` entry
//!   (`Master`, `Worker`; keys in any case), `replicas` (default 1) pods
//!   `<job>-<type>-<index>` (type in lower case), labelled
//!   `training.kubeflow.org/job-name`, `replica-type`, `replica-index`,
//!   `operator-name` and `job-role: master` on the master (worker 0 when
//!   there is no Master), their `restartPolicy` the replica spec's (default
//!   `OnFailure`; `ExitCode` runs as `Never`). training-operator makes a
//!   PodGroup only when it runs with `--gang-scheduler-name`: wasched takes
//!   that from `--gang-scheduling-for PyTorchJob` and makes the group it
//!   would, `<job>`, a gang of all replicas (or
//!   `runPolicy.schedulingPolicy.minAvailable`), with its `priorityClass`.
//!   `runPolicy.suspend` makes no pods.
//! - **TrainJob** (`trainer.kubeflow.org/v1alpha1`, Kubeflow Trainer,
//!   `pkg/runtime/framework/plugins/jobset`): the JobSet its runtime
//!   (`spec.runtimeRef`, a ClusterTrainingRuntime by default, or a
//!   TrainingRuntime of its namespace) describes, named as the TrainJob:
//!   the replicated job labelled `trainer.kubeflow.org/trainjob-ancestor-step:
//!   trainer` runs once (`replicas: 1`) with `parallelism` and `completions`
//!   the node count (`spec.trainer.numNodes`, else the runtime's
//!   `mlPolicy.numNodes`, default 1), its container `node` taking the
//!   TrainJob's image, command, args and — resource by resource —
//!   `resourcesPerNode`; initializer jobs run once. A runtime with a
//!   `podGroupPolicy` (coscheduling or volcano) gangs every pod in one
//!   PodGroup named as the TrainJob. A runtime not in the snapshot is noted
//!   and the TrainJob makes no pods; the run goes on.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::{PodTemplateSpec, ResourceRequirements};
use serde_json::{Value, json};

use super::pods::{lone_pod_group, owner, pod, pods_text, policy, policy_text};
use super::{Context, ControllerKind, Expansion, Reader, get, manifest};

/// A PyTorchJob: its master and worker pods, and the gang
/// training-operator makes when configured to.
pub fn pytorch_job(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context.present.made(
        &namespace,
        "PyTorchJob",
        &name,
        "training.kubeflow.org/job-name",
    ) {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let value = read.value;
    if read.flag(
        get(value, "/spec/runPolicy/suspend"),
        "spec.runPolicy.suspend",
    )? {
        return Ok(Expansion::NoPods(
            "suspended (spec.runPolicy.suspend)".into(),
        ));
    }
    let specs = read
        .required(
            get(value, "/spec/pytorchReplicaSpecs"),
            "spec.pytorchReplicaSpecs",
        )?
        .as_object()
        .cloned()
        .unwrap_or_default();
    // Master first, then Worker, as the controller reconciles them.
    let mut replicas: Vec<(String, PodTemplateSpec, usize, String)> = Vec::new();
    for (key, spec) in &specs {
        let at = format!("spec.pytorchReplicaSpecs.{key}");
        let kind = match key.to_ascii_lowercase().as_str() {
            "master" => "master",
            "worker" => "worker",
            _ => bail!(
                "{}: field {at}: a PyTorchJob has Master and Worker replicas",
                read.origin
            ),
        };
        let count = read.count(get(spec, "/replicas"), &format!("{at}.replicas"), 1)?;
        let template: PodTemplateSpec =
            read.template(&format!("{at}.template"), get(spec, "/template"))?;
        let restart =
            match read.text(get(spec, "/restartPolicy"), &format!("{at}.restartPolicy"))? {
                Some("ExitCode") => "Never",
                Some(policy) => policy,
                None => "OnFailure",
            }
            .to_string();
        replicas.push((kind.to_string(), template, count, restart));
    }
    replicas.sort_by_key(|(kind, ..)| kind != "master");
    let total = read.bounded(
        replicas.iter().map(|r| r.2 as u128).sum(),
        "spec.pytorchReplicaSpecs",
    )?;
    if total == 0 {
        return Ok(Expansion::NoPods("no replica spec has replicas".into()));
    }
    let has_master = replicas.iter().any(|r| r.0 == "master" && r.2 > 0);
    let gang = context
        .options
        .gang_scheduling
        .contains(&ControllerKind::PyTorchJob);
    let mut objects = Vec::new();
    let mut made = Vec::new();
    if gang {
        let at = "spec.runPolicy.schedulingPolicy";
        let min = read.count(
            get(value, "/spec/runPolicy/schedulingPolicy/minAvailable"),
            &format!("{at}.minAvailable"),
            total as i64,
        )?;
        let priority = read
            .text(
                get(value, "/spec/runPolicy/schedulingPolicy/priorityClass"),
                &format!("{at}.priorityClass"),
            )?
            .map(str::to_string);
        let gang_policy = policy(Some(i32::try_from(min.max(1)).unwrap_or(i32::MAX)));
        let group = lone_pod_group(
            &namespace,
            &name,
            owner("kubeflow.org/v1", "PyTorchJob", &meta),
            &meta,
            gang_policy.clone(),
            priority,
        );
        objects.push(manifest("scheduling.k8s.io/v1beta1", "PodGroup", &group));
        made.push(format!(
            "PodGroup {namespace}/{name} ({}, as with --gang-scheduler-name)",
            policy_text(&gang_policy)
        ));
    }
    let mut names = Vec::new();
    for (kind, template, count, restart) in &replicas {
        for index in 0..*count {
            let pod_name = format!("{name}-{kind}-{index}");
            let mut labels = vec![
                (
                    "training.kubeflow.org/operator-name".to_string(),
                    "pytorchjob-controller".to_string(),
                ),
                (
                    "training.kubeflow.org/job-name".to_string(),
                    name.replace('/', "-"),
                ),
                (
                    "training.kubeflow.org/replica-type".to_string(),
                    kind.clone(),
                ),
                (
                    "training.kubeflow.org/replica-index".to_string(),
                    index.to_string(),
                ),
            ];
            if (kind == "master" && index == 0) || (!has_master && kind == "worker" && index == 0) {
                labels.push((
                    "training.kubeflow.org/job-role".to_string(),
                    "master".to_string(),
                ));
            }
            let mut made_pod = pod(
                template,
                &namespace,
                pod_name.clone(),
                owner("kubeflow.org/v1", "PyTorchJob", &meta),
                &labels,
                &meta,
                gang.then_some(name.as_str()),
            );
            if let Some(spec) = made_pod.spec.as_mut() {
                spec.restart_policy = Some(restart.clone());
            }
            objects.push(manifest("v1", "Pod", &made_pod));
            names.push(pod_name);
        }
    }
    made.push(pods_text(&names));
    Ok(Expansion::Made { objects, made })
}

const TRAINER: &str = "trainer.kubeflow.org/v1alpha1";
const ANCESTOR: &str = "trainer.kubeflow.org/trainjob-ancestor-step";

/// A TrainJob: the JobSet its runtime describes.
pub fn train_job(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context.present.made(
        &namespace,
        "TrainJob",
        &name,
        "jobset.sigs.k8s.io/jobset-name",
    ) {
        return Ok(Expansion::Present("its JobSet or pods are".into()));
    }
    let value = read.value;
    if read.flag(get(value, "/spec/suspend"), "spec.suspend")? {
        return Ok(Expansion::NoPods("suspended (spec.suspend)".into()));
    }
    let runtime_name = read
        .text(get(value, "/spec/runtimeRef/name"), "spec.runtimeRef.name")?
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{}: field spec.runtimeRef.name: required field is missing",
                read.origin
            )
        })?
        .to_string();
    let runtime_kind = read
        .text(get(value, "/spec/runtimeRef/kind"), "spec.runtimeRef.kind")?
        .unwrap_or("ClusterTrainingRuntime")
        .to_string();
    let key = match runtime_kind.as_str() {
        "ClusterTrainingRuntime" => (String::new(), runtime_name.clone()),
        "TrainingRuntime" => (namespace.clone(), runtime_name.clone()),
        other => bail!(
            "{}: field spec.runtimeRef.kind: {other} is not ClusterTrainingRuntime or TrainingRuntime",
            read.origin
        ),
    };
    let Some(runtime) = context.runtimes.get(&key) else {
        let place = if key.0.is_empty() {
            String::new()
        } else {
            format!(" in namespace {}", key.0)
        };
        return Ok(Expansion::NoPods(format!(
            "its runtime {runtime_kind} {runtime_name}{place} is not in the snapshot"
        )));
    };
    let runtime_value = &runtime.value;
    let mut jobset_spec = get(runtime_value, "/spec/template/spec")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let ml_nodes = get(runtime_value, "/spec/mlPolicy").map(|policy| {
        get(policy, "/numNodes")
            .and_then(Value::as_i64)
            .unwrap_or(1)
    });
    let trainer = get(value, "/spec/trainer").cloned().unwrap_or(Value::Null);
    let nodes = match get(&trainer, "/numNodes") {
        Some(n) => Some(read.count(Some(n), "spec.trainer.numNodes", 1)? as i64),
        None => ml_nodes,
    };
    let resources: Option<ResourceRequirements> = read.typed(
        "spec.trainer.resourcesPerNode",
        get(&trainer, "/resourcesPerNode"),
    )?;
    let gang = get(runtime_value, "/spec/podGroupPolicy").is_some();
    // MPI sets the node count on the replicated job named `node` (less
    // the launcher when it runs as a node); the other frameworks on the
    // trainer's.
    let mpi = get(runtime_value, "/spec/mlPolicy/mpi");
    let launcher_as_node = mpi
        .and_then(|m| get(m, "/runLauncherAsNode"))
        .and_then(Value::as_bool)
        == Some(true);
    let runtime_origin = format!("{runtime_kind} {runtime_name}");
    let mut pods_total = 0i64;
    let mut found_trainer = false;
    for (i, rj) in jobset_spec
        .get_mut("replicatedJobs")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{runtime_origin}: field spec.template.spec.replicatedJobs[{i}]");
        let ancestor = rj
            .pointer(&format!(
                "/template/metadata/labels/{}",
                ANCESTOR.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .map(str::to_string);
        let rj_name = rj
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let trainer_job = ancestor.as_deref() == Some("trainer");
        found_trainer |= trainer_job;
        if ancestor.is_some() {
            set(rj, &["replicas"], json!(1), &at)?;
        }
        let counted = if mpi.is_some() {
            rj_name == "node"
        } else {
            trainer_job
        };
        if counted && let Some(nodes) = nodes {
            let count = if mpi.is_some() && launcher_as_node {
                (nodes - 1).max(1)
            } else {
                nodes
            };
            set(rj, &["template", "spec", "parallelism"], json!(count), &at)?;
            set(rj, &["template", "spec", "completions"], json!(count), &at)?;
        }
        let takes_trainer = if mpi.is_some() && launcher_as_node {
            rj_name == "node"
        } else {
            trainer_job
        };
        if takes_trainer
            && let Some(containers) = rj
                .pointer_mut("/template/spec/template/spec/containers")
                .and_then(Value::as_array_mut)
        {
            for container in containers
                .iter_mut()
                .filter_map(Value::as_object_mut)
                .filter(|c| c.get("name").and_then(Value::as_str) == Some("node"))
            {
                for field in ["image", "command", "args"] {
                    if let Some(given) = trainer.get(field).filter(|v| !v.is_null()) {
                        container.insert(field.into(), given.clone());
                    }
                }
                if let Some(resources) = &resources {
                    merge_resources(container, resources);
                }
            }
        }
        // The gang counts each replicated job's pods once (its PodSet
        // count), whatever its replicas.
        pods_total += rj
            .pointer("/template/spec/parallelism")
            .and_then(Value::as_i64)
            .unwrap_or(1)
            .max(0);
    }
    if !found_trainer {
        bail!(
            "{}: its runtime {runtime_kind} {runtime_name} has no replicated job labelled {ANCESTOR}: trainer",
            read.origin
        );
    }
    let mut objects = Vec::new();
    let mut made = Vec::new();
    if gang {
        let gang_policy = policy(Some(i32::try_from(pods_total.max(1)).unwrap_or(i32::MAX)));
        let group = lone_pod_group(
            &namespace,
            &name,
            owner(TRAINER, "TrainJob", &meta),
            &meta,
            gang_policy.clone(),
            None,
        );
        objects.push(manifest("scheduling.k8s.io/v1beta1", "PodGroup", &group));
        made.push(format!(
            "PodGroup {namespace}/{name} ({}, from the runtime's podGroupPolicy)",
            policy_text(&gang_policy)
        ));
        for rj in jobset_spec
            .get_mut("replicatedJobs")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            set(
                rj,
                &["template", "spec", "template", "spec", "schedulingGroup"],
                json!({"podGroupName": name}),
                &runtime_origin,
            )?;
        }
    }
    if let Some(spec) = jobset_spec.as_object_mut() {
        spec.insert("suspend".into(), json!(false));
    }
    let template_meta = get(runtime_value, "/spec/template/metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let jobset = json!({
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": template_meta.get("labels").cloned().unwrap_or_else(|| json!({})),
            "annotations": template_meta.get("annotations").cloned().unwrap_or_else(|| json!({})),
            "creationTimestamp": meta.creation_timestamp,
            "ownerReferences": [owner(TRAINER, "TrainJob", &meta)],
        },
        "spec": jobset_spec,
    });
    objects.push(jobset);
    made.push(format!(
        "JobSet {namespace}/{name} from {runtime_kind} {runtime_name} ({} node(s))",
        nodes.unwrap_or(1)
    ));
    Ok(Expansion::Made { objects, made })
}

/// Sets `path` in `value` to `to`, making the mappings on the way; a
/// value on the way that is not a mapping is an error naming `at`.
fn set(value: &mut Value, path: &[&str], to: Value, at: &str) -> Result<()> {
    let mut here = value;
    for (i, key) in path.iter().enumerate() {
        let map = here
            .as_object_mut()
            .ok_or_else(|| anyhow::anyhow!("{at}.{}: expected a mapping", path[..i].join(".")))?;
        if i + 1 == path.len() {
            map.insert((*key).to_string(), to);
            return Ok(());
        }
        here = map.entry(*key).or_insert_with(|| json!({}));
    }
    Ok(())
}

/// `resources` merged into a container's, resource by resource (the
/// Trainer's `MergeResourceRequirements`).
fn merge_resources(
    container: &mut serde_json::Map<String, Value>,
    resources: &ResourceRequirements,
) {
    let into = container.entry("resources").or_insert_with(|| json!({}));
    for (field, given) in [
        ("limits", &resources.limits),
        ("requests", &resources.requests),
    ] {
        let Some(given) = given else { continue };
        let map: BTreeMap<String, Value> = given
            .iter()
            .map(|(k, q)| (k.clone(), Value::String(q.0.clone())))
            .collect();
        let entry = into
            .as_object_mut()
            .map(|r| r.entry(field).or_insert_with(|| json!({})));
        if let Some(Value::Object(existing)) = entry {
            existing.extend(map);
        }
    }
}
