//! A trace as Kubernetes manifests: each job a `batch/v1` Job that a
//! v1.37 cluster runs as the replay does, its times in annotations.
//!
//! - [`SUBMIT_AT`] on the Job: when it is created, from the trace's start.
//! - [`RUN_FOR`] on its pod template: how long each pod runs once started
//!   (what the local control plane's kubelet stand-in honours, see
//!   `wasched cluster up --lifecycle`).
//! - [`CHECKPOINT`] on the Job, when the trace gives one: kept for a reader
//!   of the manifests; a real cluster restarts a replaced pod's work from
//!   zero.
//!
//! A trace may be written as such Jobs ([`read`], files ending `.yaml` or
//! `.yml`): each Job must carry both annotations, and nothing a replay job
//! cannot carry (a field of its pod template the replay would drop is
//! named and refused). The same files may hold pods with their PodGroups
//! (see `groups`).
//!
//! The Job asks for the trace's grouping in `spec.scheduling` (a gang of
//! `minCount`, or basic), topology and disruption mode; with the
//! `WorkloadWithJob` gate on, the Job controller makes its Workload and
//! PodGroup from it. A job with no grouping is a plain Job (on a cluster
//! with `WorkloadWithJob`, still a basic group). `parallelism` and
//! `completions` are the workers; `backoffLimit` is the trace's, and a job
//! that ignores disruptions carries the `podFailurePolicy` rule that says
//! so. The pod template is the pod the replay creates, less what the Job
//! controller adds (its labels and scheduling group).

use std::time::Duration;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::batch::v1::{
    Job as KubeJob, JobSchedulingConfiguration, JobSpec, PodFailurePolicy,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::{PodSpec, PodTemplateSpec};
use k8s_openapi::api::scheduling::v1alpha3::{
    TopologyConstraint, WorkloadPodGroupAllDisruptionMode, WorkloadPodGroupBasicSchedulingPolicy,
    WorkloadPodGroupDisruptionMode, WorkloadPodGroupGangSchedulingPolicy,
    WorkloadPodGroupSchedulingConstraints, WorkloadPodGroupSchedulingPolicy,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::trace::{self, Disruption, Grouping, Job};
use super::{controllers, groups, objects};
use crate::manifest::workloads::ControllerOptions;
use crate::manifest::{Object, ObjectRef};

/// When an object of a trace is created (a Go duration from the trace's
/// start: `"0s"`, `"90s"`).
pub const SUBMIT_AT: &str = "wasched.io/submit-at";
/// How long a pod runs once started (a Go duration).
pub const RUN_FOR: &str = "wasched.io/run-for";
/// How often a job saves its work (a Go duration).
pub const CHECKPOINT: &str = "wasched.io/checkpoint";

/// A duration as Go's `time.ParseDuration` reads it, exact to the
/// millisecond: `90s`, `2500ms`.
pub fn go_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// The Job a cluster runs for `job`.
pub fn job(job: &Job) -> Result<KubeJob> {
    if !job.roles.is_empty() {
        bail!(
            "{}: job {}/{} has pods of unlike shapes, which one Job's pod template cannot write (write its PodGroup and pods)",
            job.origin,
            job.namespace,
            job.name
        );
    }
    let mut pod = objects::pod(job, 0, &job.name, Duration::ZERO)?;
    let mut spec = pod.spec.take().expect("built pods have a spec");
    spec.scheduling_group = None;
    spec.restart_policy = Some("Never".into());
    let mut template_meta = ObjectMeta {
        annotations: Some([(RUN_FOR.to_string(), go_duration(job.duration))].into()),
        ..Default::default()
    };
    if let Some(labels) = pod.metadata.labels.take() {
        let own: std::collections::BTreeMap<_, _> = labels
            .into_iter()
            .filter(|(k, _)| k != "batch.kubernetes.io/job-name")
            .collect();
        template_meta.labels = (!own.is_empty()).then_some(own);
    }
    let mut annotations =
        std::collections::BTreeMap::from([(SUBMIT_AT.to_string(), go_duration(job.submit))]);
    if let Some(every) = job.checkpoint {
        annotations.insert(CHECKPOINT.into(), go_duration(every));
    }
    let workers = job.workers as i32;
    Ok(KubeJob {
        metadata: ObjectMeta {
            name: Some(job.name.clone()),
            namespace: Some(job.namespace.clone()),
            annotations: Some(annotations),
            ..Default::default()
        },
        spec: Some(JobSpec {
            parallelism: Some(workers),
            completions: Some(workers),
            backoff_limit: Some(job.backoff_limit as i32),
            pod_failure_policy: job.ignore_disruptions.then(|| PodFailurePolicy {
                rules: vec![PodFailurePolicyRule {
                    action: "Ignore".into(),
                    on_pod_conditions: Some(vec![PodFailurePolicyOnPodConditionsPattern {
                        type_: "DisruptionTarget".into(),
                        status: Some("True".into()),
                    }]),
                    ..Default::default()
                }],
            }),
            scheduling: scheduling(job),
            template: PodTemplateSpec {
                metadata: Some(template_meta),
                spec: Some(spec),
            },
            ..Default::default()
        }),
        status: None,
    })
}

/// `spec.scheduling` of the job's grouping, topology and disruption mode.
fn scheduling(job: &Job) -> Option<JobSchedulingConfiguration> {
    let policy = match job.grouping {
        Grouping::None => return None,
        Grouping::Gang(min) => WorkloadPodGroupSchedulingPolicy {
            gang: Some(WorkloadPodGroupGangSchedulingPolicy {
                min_count: Some(min as i32),
            }),
            ..Default::default()
        },
        Grouping::Basic => WorkloadPodGroupSchedulingPolicy {
            basic: Some(WorkloadPodGroupBasicSchedulingPolicy(json!({}))),
            ..Default::default()
        },
    };
    Some(JobSchedulingConfiguration {
        scheduling_policy: Some(policy),
        scheduling_constraints: job.topology_key.as_ref().map(|key| {
            WorkloadPodGroupSchedulingConstraints {
                topology: Some(vec![TopologyConstraint { key: key.clone() }]),
            }
        }),
        disruption_mode: (job.disruption == Disruption::All).then(|| {
            WorkloadPodGroupDisruptionMode {
                all: Some(WorkloadPodGroupAllDisruptionMode(json!({}))),
                ..Default::default()
            }
        }),
        ..Default::default()
    })
}

/// Reads a trace written as `batch/v1` Jobs, pods with their PodGroups
/// and Workloads, and the objects of the workload controllers `simulate`
/// expands (YAML, one or more documents, or a `List`; see
/// `controllers`), those controllers configured as `options` say; `name`
/// names the file in messages. Unknown fields are refused, as the API
/// server's strict validation does. Objects of another dialect
/// (Coscheduling's, Volcano's or KAI-Scheduler's PodGroups, earlier
/// `scheduling.k8s.io` versions) are read as `simulate` converts them,
/// each conversion one line of `notes`; what a replay job cannot carry
/// (a spread given to a group's pods, a CompositePodGroup, Coscheduling's
/// `minResources`) is refused.
pub fn read(
    name: &str,
    text: &str,
    options: &ControllerOptions,
    notes: &mut Vec<String>,
) -> Result<Vec<Job>> {
    // Read as written, not expanded into what the Job controller makes.
    let mut manifests = crate::manifest::Manifests {
        keep_stored: true,
        validation: crate::manifest::FieldValidation::Strict,
        ..Default::default()
    };
    crate::manifest::load_str(&mut manifests, name, text)?;
    // The PodGroups `v1alpha1` pods name.
    crate::manifest::versions::finish(&mut manifests);
    if let Some((kind, _)) = manifests.skipped.iter().next() {
        bail!("{name}: {kind}: {HOLDS}");
    }
    refuse_spreads(name, &manifests.dialects)?;
    notes.extend(manifests.notes.iter().map(|note| format!("{name}: {note}")));
    let runtimes: Vec<_> = manifests
        .objects
        .iter()
        .filter_map(|(origin, object)| match object {
            Object::Controller(c) if controllers::is_runtime(c) => Some((origin, &**c)),
            _ => None,
        })
        .collect();
    let mut expanded = controllers::Expanded::default();
    let mut jobs: Vec<(usize, Job)> = Vec::new();
    let mut grouped = groups::Objects::default();
    for (position, (origin, object)) in manifests.objects.iter().enumerate() {
        match object {
            Object::Job(job) => jobs.push((position, from_job(origin, job)?)),
            Object::Pod(pod) => grouped.pods.push((origin, pod)),
            Object::PodGroup(group) => grouped.groups.push((origin, group)),
            Object::Workload(workload) => grouped.workloads.push((origin, workload)),
            Object::Controller(c) if controllers::is_runtime(c) => {}
            Object::Controller(c) => controllers::expand(
                position,
                origin,
                c,
                &runtimes,
                options,
                &mut expanded,
                notes,
            )?,
            Object::Node(_) | Object::PriorityClass(_) => {
                bail!("{origin}: give it with the cluster, not the trace ({HOLDS})")
            }
            _ => bail!("{origin}: {HOLDS}"),
        }
    }
    // Each job where the object it was read from is in the file: a trace
    // keeps the file's order for jobs submitted together.
    let mut position: std::collections::HashMap<String, usize> = manifests
        .objects
        .iter()
        .enumerate()
        .map(|(i, (origin, _))| (origin.to_string(), i))
        .collect();
    for (at, origin, pod) in &expanded.pods {
        position.insert(origin.to_string(), *at);
        grouped.pods.push((origin, pod));
    }
    for (at, origin, group) in &expanded.groups {
        position.insert(origin.to_string(), *at);
        grouped.groups.push((origin, group));
    }
    for (_, origin, workload) in &expanded.workloads {
        grouped.workloads.push((origin, workload));
    }
    grouped.made = Some(&expanded.made);
    jobs.extend(groups::jobs(&grouped)?.into_iter().map(|job| {
        let at = position.get(&job.origin).copied().unwrap_or(usize::MAX);
        (at, job)
    }));
    jobs.sort_by_key(|(position, _)| *position);
    Ok(jobs.into_iter().map(|(_, job)| job).collect())
}

/// Refuses what a dialect's groups give their pods besides what a replay
/// job carries: a spread over the group's pods, CompositePodGroup links.
pub(super) fn refuse_spreads(
    origin: &str,
    dialects: &crate::manifest::dialect::DialectState,
) -> Result<()> {
    if let Some(group) = dialects.group_spread.keys().next() {
        bail!("{origin}: PodGroup {group} spreads its pods, which a replay job does not carry");
    }
    if !dialects.composite_links.is_empty() {
        bail!("{origin}: {HOLDS} (a CompositePodGroup's children are not replay jobs)");
    }
    Ok(())
}

/// What a trace written as manifests may hold.
const HOLDS: &str = "a trace written as manifests holds batch/v1 Jobs, pods with their scheduling.k8s.io/v1beta1 PodGroups and Workloads, and the workload objects simulate expands (JobSet, LeaderWorkerSet, RayCluster, RayJob, PyTorchJob, TrainJob, Volcano Job, Deployment, ReplicaSet, StatefulSet)";

/// Where each trace field of a Job is, for messages.
const PATHS: &[(&str, &str)] = &[
    ("name", "metadata.name"),
    ("namespace", "metadata.namespace"),
    ("submit", "metadata.annotations[wasched.io/submit-at]"),
    (
        "duration",
        "spec.template.metadata.annotations[wasched.io/run-for]",
    ),
    ("workers", "spec.parallelism"),
    ("minCount", "spec.scheduling.schedulingPolicy.gang.minCount"),
    ("group", "spec.scheduling.schedulingPolicy"),
    ("requests", "spec.template.spec.containers[].resources"),
    ("gpu", "spec.template.spec.containers[].resources"),
    ("nodeSelector", "spec.template.spec.nodeSelector"),
    ("priorityClass", "spec.template.spec.priorityClassName"),
    (
        "topologyKey",
        "spec.scheduling.schedulingConstraints.topology",
    ),
    ("disruption", "spec.scheduling.disruptionMode"),
    ("checkpoint", "metadata.annotations[wasched.io/checkpoint]"),
    ("backoffLimit", "spec.backoffLimit"),
    ("ignoreDisruptions", "spec.podFailurePolicy"),
    (
        "gracePeriod",
        "spec.template.spec.terminationGracePeriodSeconds",
    ),
];

/// The fields of a Job, besides its metadata and its pod template's spec
/// ([`POD_SPEC_ALLOWED`]), that a replay job reads or that do not change
/// where and when its pods run; any other field is refused by name. `[]`
/// is any element of a list.
const ALLOWED: &[&str] = &[
    "spec.parallelism",
    "spec.completions",
    "spec.completionMode",
    "spec.backoffLimit",
    "spec.podFailurePolicy",
    "spec.podReplacementPolicy",
    "spec.scheduling",
    "spec.selector",
    "spec.manualSelector",
    "spec.suspend",
    "spec.ttlSecondsAfterFinished",
    "spec.template.metadata.labels",
    "spec.template.metadata.annotations",
    "spec.template.metadata.creationTimestamp",
];

/// The fields of any object of a trace that change nothing the replay
/// models.
const METADATA_ALLOWED: &[&str] = &[
    "apiVersion",
    "kind",
    "status",
    "metadata.name",
    "metadata.namespace",
    "metadata.labels",
    "metadata.annotations",
    "metadata.uid",
    "metadata.resourceVersion",
    "metadata.creationTimestamp",
    "metadata.generation",
    "metadata.managedFields",
];

/// The fields of a pod spec (relative to it) a replay job's pod reads or
/// that do not change where and when it runs.
/// Volumes that need no node-side binding or attach limit (persistent
/// volume claims and CSI volumes, which the scheduler checks, are
/// refused), container ports without a host port, probes and mounts are
/// among them.
const POD_SPEC_ALLOWED: &[&str] = &[
    "restartPolicy",
    "nodeSelector",
    "priorityClassName",
    "terminationGracePeriodSeconds",
    "tolerations",
    "schedulerName",
    "dnsPolicy",
    "dnsConfig",
    "hostname",
    "subdomain",
    "setHostnameAsFQDN",
    "securityContext",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "shareProcessNamespace",
    "imagePullSecrets",
    "volumes[].name",
    "volumes[].emptyDir",
    "volumes[].configMap",
    "volumes[].secret",
    "volumes[].downwardAPI",
    "volumes[].projected",
    "containers[].name",
    "containers[].image",
    "containers[].imagePullPolicy",
    "containers[].command",
    "containers[].args",
    "containers[].env",
    "containers[].envFrom",
    "containers[].workingDir",
    "containers[].securityContext",
    "containers[].terminationMessagePath",
    "containers[].terminationMessagePolicy",
    "containers[].resources.requests",
    "containers[].resources.limits",
    "containers[].ports[].name",
    "containers[].ports[].containerPort",
    "containers[].ports[].protocol",
    "containers[].volumeMounts",
    "containers[].readinessProbe",
    "containers[].livenessProbe",
    "containers[].startupProbe",
    "containers[].lifecycle",
    "containers[].stdin",
    "containers[].stdinOnce",
    "containers[].tty",
];

/// Whether a trace object may carry the field at `path`: metadata, one of
/// `own` (full paths), or a pod spec field under `pod_spec`
/// (`"spec.template.spec"` of a Job, `"spec"` of a pod; `""`: none).
pub(super) fn allowed(path: &str, own: &[&str], pod_spec: &str) -> bool {
    METADATA_ALLOWED.contains(&path)
        || own.contains(&path)
        || (!pod_spec.is_empty()
            && path
                .strip_prefix(pod_spec)
                .and_then(|rest| rest.strip_prefix('.'))
                .is_some_and(|rest| POD_SPEC_ALLOWED.contains(&rest)))
}

/// The first field of `value` (at `path`) that `allowed` does not cover.
fn refused_field(value: &Value, path: &str, allowed: &dyn Fn(&str) -> bool) -> Option<String> {
    if allowed(path) {
        return None;
    }
    match value {
        Value::Object(map) => map.iter().find_map(|(key, value)| {
            let inner = if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            };
            refused_field(value, &inner, allowed)
        }),
        Value::Array(items) => items
            .iter()
            .find_map(|item| refused_field(item, &format!("{path}[]"), allowed)),
        _ => Some(path.to_string()),
    }
}

/// Refuses the first field of `object` that `allowed` does not cover, by
/// its path.
pub(super) fn refuse_unread(
    origin: &str,
    object: &impl serde::Serialize,
    allowed: &dyn Fn(&str) -> bool,
) -> Result<()> {
    let value = serde_json::to_value(object)?;
    if let Some(path) = refused_field(&value, "", allowed) {
        bail!(
            "{origin}: field {path}: a replay job does not carry it (see the book's replay page for the fields it reads)"
        );
    }
    Ok(())
}

/// The value of annotation `key` in `annotations`, as a trace cell.
pub(super) fn annotation(
    annotations: Option<&std::collections::BTreeMap<String, String>>,
    key: &str,
) -> Option<Value> {
    annotations
        .and_then(|a| a.get(key))
        .map(|v| Value::String(v.clone()))
}

/// The trace fields a replay job's pod reads from a pod spec at `prefix`
/// (`spec.template.spec` of a Job, `spec` of a pod): requests (a limit
/// without a request is the request), `nodeSelector`, `priorityClass`
/// and `gracePeriod`; refused, by path, are resources asked for by two
/// containers, tolerations other than of the extended resources asked
/// for (which the replay adds, as `ExtendedResourceToleration` does) and
/// another scheduler.
pub(super) fn pod_fields(
    origin: &str,
    prefix: &str,
    pod: &PodSpec,
) -> Result<serde_json::Map<String, Value>> {
    let at = |path: &str| format!("{origin}: field {prefix}.{path}");
    if pod
        .scheduler_name
        .as_deref()
        .is_some_and(|n| n != "default-scheduler")
    {
        bail!(
            "{}: a replay job is scheduled by the replay",
            at("schedulerName")
        );
    }
    let mut requests = serde_json::Map::new();
    for container in &pod.containers {
        let resources = container.resources.as_ref();
        let own = resources
            .and_then(|r| r.requests.clone())
            .unwrap_or_default();
        let mut all = own.clone();
        // A limit without a request is the request (API defaulting).
        for (resource, quantity) in resources.and_then(|r| r.limits.clone()).unwrap_or_default() {
            all.entry(resource).or_insert(quantity);
        }
        for (resource, quantity) in all {
            if requests
                .insert(resource.clone(), Value::String(quantity.0))
                .is_some()
            {
                bail!(
                    "{}: more than one container asks for {resource}: write the pod's total in one container",
                    at("containers")
                );
            }
        }
    }
    if let Some(toleration) = pod.tolerations.iter().flatten().find(|t| {
        !(t.operator.as_deref() == Some("Exists")
            && t.effect.as_deref() == Some("NoSchedule")
            && t.key
                .as_ref()
                .is_some_and(|k| requests.contains_key(k) && objects::is_extended(k)))
    }) {
        bail!(
            "{}: {:?}: a replay job tolerates only the taints of the extended resources it asks for",
            at("tolerations"),
            toleration.key.as_deref().unwrap_or_default()
        );
    }
    let mut row = serde_json::Map::new();
    row.insert("requests".into(), Value::Object(requests));
    if let Some(selector) = &pod.node_selector {
        row.insert("nodeSelector".into(), json!(selector));
    }
    if let Some(class) = &pod.priority_class_name {
        row.insert("priorityClass".into(), Value::String(class.clone()));
    }
    if let Some(grace) = pod.termination_grace_period_seconds {
        row.insert("gracePeriod".into(), json!(grace));
    }
    Ok(row)
}

/// Whether a Job's `podFailurePolicy` ignores preemption: none (`false`),
/// or exactly the rule that ignores the `DisruptionTarget` condition
/// (`true`); any other policy is refused, naming the Job (`origin`).
fn ignores_disruptions(origin: &str, spec: &JobSpec) -> Result<bool> {
    let Some(policy) = &spec.pod_failure_policy else {
        return Ok(false);
    };
    let ignores = |rule: &PodFailurePolicyRule| {
        rule.action == "Ignore"
            && rule.on_exit_codes.is_none()
            && rule.on_pod_conditions.as_ref().is_some_and(|c| {
                c.len() == 1
                    && c[0].type_ == "DisruptionTarget"
                    && c[0].status.as_deref().unwrap_or("True") == "True"
            })
    };
    if policy.rules.len() != 1 || !ignores(&policy.rules[0]) {
        bail!(
            "{origin}: field spec.podFailurePolicy: a replay job's policy is none, or one rule: action Ignore on the DisruptionTarget condition"
        );
    }
    Ok(true)
}

/// Refuses what a replay job cannot run of a Job (`origin`): a field it
/// does not read (besides `own`, full paths), `completions` other than
/// `parallelism`, a pod that always restarts, a suspended Job, a
/// `podFailurePolicy` or `podReplacementPolicy` other than the replay
/// models; answers whether its `podFailurePolicy` ignores preemption.
pub(super) fn check_job(origin: &str, kube: &KubeJob, own: &[&str]) -> Result<bool> {
    let at = |path: &str| format!("{origin}: field {path}");
    refuse_unread(origin, kube, &|path| {
        own.contains(&path) || allowed(path, ALLOWED, "spec.template.spec")
    })?;
    let spec = kube
        .spec
        .as_ref()
        .ok_or_else(|| anyhow!("{}: required", at("spec")))?;
    let pod = spec
        .template
        .spec
        .as_ref()
        .ok_or_else(|| anyhow!("{}: required", at("spec.template.spec")))?;
    let workers = spec.parallelism.unwrap_or(1);
    match spec.completions {
        Some(completions) if completions != workers => bail!(
            "{}: {completions} differs from parallelism {workers}: a replay job runs its workers once, together",
            at("spec.completions")
        ),
        None if workers != 1 => bail!(
            "{}: required with parallelism {workers} (without it the Job is a work queue)",
            at("spec.completions")
        ),
        _ => {}
    }
    if !matches!(pod.restart_policy.as_deref(), Some("Never" | "OnFailure")) {
        bail!(
            "{}: must be Never or OnFailure (a replay job's pods run once; a preempted pod is replaced)",
            at("spec.template.spec.restartPolicy")
        );
    }
    if spec.suspend == Some(true) {
        bail!("{}: a suspended Job never runs", at("spec.suspend"));
    }
    let ignore_disruptions = ignores_disruptions(origin, spec)?;
    let default_replacement = if ignore_disruptions {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    if let Some(policy) = &spec.pod_replacement_policy
        && policy != default_replacement
    {
        bail!(
            "{}: {policy} is not this Job's default ({default_replacement}), which the replay models",
            at("spec.podReplacementPolicy")
        );
    }
    Ok(ignore_disruptions)
}

/// The replay job a Job stands for: its fields as a trace row, checked as
/// a row is.
fn from_job(origin: &ObjectRef, kube: &KubeJob) -> Result<Job> {
    let origin = origin.to_string();
    let at = |path: &str| format!("{origin}: field {path}");
    let ignore_disruptions = check_job(&origin, kube, &[])?;
    let meta = &kube.metadata;
    let spec = kube.spec.as_ref().expect("checked");
    let pod = spec.template.spec.as_ref().expect("checked");
    let template_annotations = spec
        .template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.as_ref());
    let workers = spec.parallelism.unwrap_or(1);
    let scheduling = spec.scheduling.as_ref();
    let policy = scheduling.and_then(|s| s.scheduling_policy.as_ref());
    let mut row = pod_fields(&origin, "spec.template.spec", pod)?;
    let mut set = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            row.insert(key.to_string(), value);
        }
    };
    set("name", meta.name.clone().map(Value::String));
    set("namespace", meta.namespace.clone().map(Value::String));
    set("submit", annotation(meta.annotations.as_ref(), SUBMIT_AT));
    set("duration", annotation(template_annotations, RUN_FOR));
    set(
        "checkpoint",
        annotation(meta.annotations.as_ref(), CHECKPOINT),
    );
    set("workers", Some(json!(workers)));
    match (
        policy.and_then(|p| p.gang.as_ref()),
        policy.and_then(|p| p.basic.as_ref()),
    ) {
        (Some(gang), _) => {
            set("group", Some(json!("gang")));
            set("minCount", gang.min_count.map(|m| json!(m)));
        }
        (None, Some(_)) => set("group", Some(json!("basic"))),
        (None, None) => {}
    }
    let topology = scheduling
        .and_then(|s| s.scheduling_constraints.as_ref())
        .and_then(|c| c.topology.clone())
        .unwrap_or_default();
    if topology.len() > 1 {
        bail!(
            "{}: a replay job has one topology key",
            at("spec.scheduling.schedulingConstraints.topology")
        );
    }
    set(
        "topologyKey",
        topology.into_iter().next().map(|t| Value::String(t.key)),
    );
    if scheduling
        .and_then(|s| s.disruption_mode.as_ref())
        .is_some_and(|d| d.all.is_some())
    {
        set("disruption", Some(json!("all")));
    }
    set("backoffLimit", spec.backoff_limit.map(|b| json!(b)));
    set("ignoreDisruptions", Some(json!(ignore_disruptions)));
    if !row.contains_key("submit") {
        bail!(
            "{}: required",
            at(&format!("metadata.annotations[{SUBMIT_AT}]"))
        );
    }
    if !row.contains_key("duration") {
        bail!(
            "{}: required",
            at(&format!("spec.template.metadata.annotations[{RUN_FOR}]"))
        );
    }
    trace::job_of_object(&origin, PATHS, Value::Object(row))
}

/// The jobs as one `v1` List of Jobs, in submit order.
pub fn list(jobs: &[Job]) -> Result<Value> {
    let items = jobs
        .iter()
        .map(|j| Ok(serde_json::to_value(job(j)?)?))
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"apiVersion": "v1", "kind": "List", "items": items}))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::replay::trace;

    /// The jobs of a manifest trace, the controllers configured by
    /// default (its notes left out).
    pub(in crate::replay) fn read(name: &str, text: &str) -> Result<Vec<Job>> {
        super::read(name, text, &ControllerOptions::default(), &mut Vec::new())
    }

    fn jobs(text: &str) -> Vec<Job> {
        trace::finish(trace::parse("t.jsonl", text).unwrap()).unwrap()
    }

    #[test]
    fn a_gang_row_becomes_a_job_asking_for_its_gang() {
        let jobs = jobs(
            r#"{"name":"train","submit":"90s","duration":2.5,"workers":4,"minCount":3,"gpu":8,"cpu":"2","priorityClass":"high","topologyKey":"rack","disruption":"all","ignoreDisruptions":true,"gracePeriod":4,"checkpoint":"10m"}"#,
        );
        let value = serde_json::to_value(job(&jobs[0]).unwrap()).unwrap();
        assert_eq!(value["kind"], "Job");
        assert_eq!(value["apiVersion"], "batch/v1");
        let meta = &value["metadata"];
        assert_eq!(meta["annotations"][SUBMIT_AT], "90s");
        assert_eq!(meta["annotations"][CHECKPOINT], "600s");
        let spec = &value["spec"];
        assert_eq!(spec["parallelism"], 4);
        assert_eq!(spec["completions"], 4);
        let scheduling = &spec["scheduling"];
        assert_eq!(scheduling["schedulingPolicy"]["gang"]["minCount"], 3);
        assert_eq!(
            scheduling["schedulingConstraints"]["topology"][0]["key"],
            "rack"
        );
        assert_eq!(scheduling["disruptionMode"], json!({"all": {}}));
        assert_eq!(
            spec["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["type"],
            "DisruptionTarget"
        );
        let template = &spec["template"];
        assert_eq!(template["metadata"]["annotations"][RUN_FOR], "2500ms");
        assert!(template["metadata"].get("labels").is_none());
        let pod = &template["spec"];
        assert_eq!(pod["restartPolicy"], "Never");
        assert_eq!(pod["priorityClassName"], "high");
        assert_eq!(pod["terminationGracePeriodSeconds"], 4);
        assert!(pod.get("schedulingGroup").is_none());
        let resources = &pod["containers"][0]["resources"];
        assert_eq!(resources["requests"]["nvidia.com/gpu"], "8");
        assert_eq!(resources["limits"]["nvidia.com/gpu"], "8");
    }

    #[test]
    fn jobs_written_read_back_as_the_same_trace() {
        let written = jobs(concat!(
            r#"{"name":"train","namespace":"ml","submit":"90s","duration":2.5,"workers":4,"minCount":3,"gpu":8,"cpu":"2","memory":"4Gi","priorityClass":"high","topologyKey":"rack","disruption":"all","ignoreDisruptions":true,"gracePeriod":4,"checkpoint":"10m","gpuModel":"H100","backoffLimit":2}"#,
            "\n",
            r#"{"name":"eval","submit":3,"duration":60,"group":"basic","workers":2,"cpu":"1"}"#,
            "\n",
            r#"{"name":"solo","submit":4,"duration":1}"#,
        ));
        let text = serde_norway::to_string(&list(&written).unwrap()).unwrap();
        let read = trace::finish(read("jobs.yaml", &text).unwrap()).unwrap();
        assert_eq!(read.len(), written.len());
        for (read, written) in read.iter().zip(&written) {
            let mut read = read.clone();
            read.origin = written.origin.clone();
            read.priority_class_at = written.priority_class_at.clone();
            assert_eq!(&read, written);
        }
    }

    #[test]
    fn what_a_replay_job_cannot_carry_is_named() {
        let text = |extra: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {{wasched.io/submit-at: 5s}}\nspec:\n  template:\n    metadata:\n      annotations: {{wasched.io/run-for: 1m}}\n    spec:\n      restartPolicy: Never\n      containers: [{{name: c, image: i}}]\n{extra}"
            )
        };
        let jobs = read("jobs.yaml", &text("")).unwrap();
        assert_eq!(jobs[0].submit, Duration::from_secs(5));
        assert_eq!(jobs[0].duration, Duration::from_secs(60));
        // A limit without a request is the request, as the API server
        // defaults it.
        let limits = text("").replace(
            "{name: c, image: i}",
            "{name: c, image: i, resources: {limits: {nvidia.com/gpu: 2}}}",
        );
        assert_eq!(read("jobs.yaml", &limits).unwrap()[0].gpus_per_pod(), 2.0);
        let error = |extra: &str| read("jobs.yaml", &text(extra)).unwrap_err().to_string();
        assert!(
            error("      tolerations: [{key: k, operator: Exists}]\n")
                .contains("field spec.template.spec.tolerations"),
        );
        assert!(error("  completions: 3\n").contains("field spec.completions"));
        assert!(error("  parallelism: 3\n").contains("field spec.completions"));
        assert!(
            error("  parallelism: 2\n  completions: 2\n  scheduling: {schedulingPolicy: {gang: {minCount: 3}}}\n")
                .contains("j: field spec.scheduling.schedulingPolicy.gang.minCount: 3 is not between 1 and workers (2)"),
        );
        assert!(
            error("  podFailurePolicy: {rules: [{action: FailJob, onExitCodes: {operator: In, values: [1]}}]}\n")
                .contains("field spec.podFailurePolicy")
        );
        assert!(
            error("  activeDeadlineSeconds: 60\n").contains("field spec.activeDeadlineSeconds")
        );
        assert!(error("      nodeName: n\n").contains("field spec.template.spec.nodeName"));
        assert!(error("  bogus: 1\n").contains("bogus"));
        let unannotated = read(
            "jobs.yaml",
            &text("").replace("{wasched.io/submit-at: 5s}", "{}"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            unannotated.contains("wasched.io/submit-at"),
            "{unannotated}"
        );
    }

    #[test]
    fn basic_and_ungrouped_rows_ask_for_what_they_are() {
        let jobs = jobs(
            "{\"name\":\"a\",\"submit\":0,\"duration\":1,\"group\":\"basic\",\"workers\":2}\n\
             {\"name\":\"b\",\"submit\":0,\"duration\":1}",
        );
        let list = list(&jobs).unwrap();
        let items = list["items"].as_array().unwrap();
        assert_eq!(
            items[0]["spec"]["scheduling"]["schedulingPolicy"],
            json!({"basic": {}})
        );
        assert!(items[1]["spec"].get("scheduling").is_none());
        assert!(items[1]["spec"].get("podFailurePolicy").is_none());
        assert_eq!(items[1]["spec"]["backoffLimit"], 6);
    }
}
