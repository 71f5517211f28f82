//! A trace written as pods and their PodGroups (`scheduling.k8s.io/v1beta1`),
//! with or without the Workloads the PodGroups belong to: what a v1.37
//! cluster runs when a user (or a controller wasched does not model)
//! creates the pods and groups themselves.
//!
//! - A PodGroup is one replay job: its pods (those whose
//!   `spec.schedulingGroup.podGroupName` names it) are the workers, which
//!   share their run time and priority class — the group's (or none, as
//!   it does) — and may differ in requests, node selector and grace
//!   period: the kind most of them are is the job's own, the others its
//!   roles ([`Job::roles`]);
//!   its `schedulingPolicy` is the gang's `minCount` or basic,
//!   its `schedulingConstraints.topology` the topology key, its
//!   `disruptionMode.all` the disruption mode. [`SUBMIT_AT`] goes on the
//!   PodGroup (a pod of it may repeat the group's), [`RUN_FOR`] on each pod.
//! - A pod of no group is a job of one worker: both annotations on it.
//! - No controller replaces pods written so: a job's `backoffLimit` is 0,
//!   so a pod preempted (or failed) fails its job. Pods a workload
//!   controller made ([`Made`]) are replaced as it does.
//! - A Workload is read for its name only: each must be the `workloadRef`
//!   of a PodGroup of the trace (the PodGroup carries what is scheduled).
//!
//! A pod written so must not restart after it ends (`restartPolicy`
//! `Never` or `OnFailure`): a pod that always restarts never finishes. Any
//! field the
//! replay does not read and that could change where or when the pods run
//! is refused by its path, as for a Job.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use serde_json::{Value, json};

use super::manifests::{
    CHECKPOINT, RUN_FOR, SUBMIT_AT, allowed, annotation, pod_fields, refuse_unread,
};
use super::trace::{self, Job, Role};
use crate::manifest::ObjectRef;

/// A trace's pods, PodGroups and Workloads, as read.
#[derive(Default)]
pub(super) struct Objects<'a> {
    pub pods: Vec<(&'a ObjectRef, &'a Pod)>,
    pub groups: Vec<(&'a ObjectRef, &'a PodGroup)>,
    pub workloads: Vec<(&'a ObjectRef, &'a Workload)>,
    /// What workload controllers made of them (see
    /// [`super::controllers`]); the rest are written as they are.
    pub made: Option<&'a Made>,
}

/// Which pods of a trace workload controllers made, and who replaces
/// them when preempted.
#[derive(Debug, Default)]
pub(super) struct Made {
    /// `namespace/name` of each pod a controller made.
    pub pods: std::collections::BTreeSet<String>,
    /// The Jobs it made, by `namespace/name`: their `backoffLimit`, and
    /// whether their `podFailurePolicy` ignores preemption. A pod of one
    /// is replaced as the Job controller does; a pod another controller
    /// made directly is replaced by it, without limit.
    pub jobs: BTreeMap<String, (u32, bool)>,
}

/// The fields of a pod, besides its metadata and the pod spec fields a
/// Job's template may carry, that a replay job reads or that do not change
/// where and when it runs.
const POD_ALLOWED: &[&str] = &[
    "metadata.ownerReferences",
    "metadata.generateName",
    "spec.schedulingGroup",
    "spec.priority",
];

/// The fields of a PodGroup, besides its metadata, that a replay job reads
/// or that do not change how its pods are scheduled.
const GROUP_ALLOWED: &[&str] = &[
    "metadata.ownerReferences",
    "spec.schedulingPolicy.gang.minCount",
    "spec.schedulingPolicy.basic",
    "spec.schedulingConstraints.topology[].key",
    "spec.disruptionMode",
    "spec.priorityClassName",
    "spec.priority",
    "spec.workloadRef",
];

/// Where each trace field of a lone pod is, for messages.
const POD_PATHS: &[(&str, &str)] = &[
    ("name", "metadata.name"),
    ("namespace", "metadata.namespace"),
    ("submit", "metadata.annotations[wasched.io/submit-at]"),
    ("duration", "metadata.annotations[wasched.io/run-for]"),
    ("requests", "spec.containers[].resources"),
    ("gpu", "spec.containers[].resources"),
    ("nodeSelector", "spec.nodeSelector"),
    ("priorityClass", "spec.priorityClassName"),
    ("gracePeriod", "spec.terminationGracePeriodSeconds"),
    ("checkpoint", "metadata.annotations[wasched.io/checkpoint]"),
];

/// Where each trace field of a PodGroup's job is, for messages (the
/// fields its pods give are named by the first of them).
const GROUP_PATHS: &[(&str, &str)] = &[
    ("name", "metadata.name"),
    ("namespace", "metadata.namespace"),
    ("submit", "metadata.annotations[wasched.io/submit-at]"),
    (
        "duration",
        "its pods' metadata.annotations[wasched.io/run-for]",
    ),
    ("workers", "its pods"),
    ("minCount", "spec.schedulingPolicy.gang.minCount"),
    ("group", "spec.schedulingPolicy"),
    ("requests", "its pods' spec.containers[].resources"),
    ("gpu", "its pods' spec.containers[].resources"),
    ("nodeSelector", "its pods' spec.nodeSelector"),
    ("priorityClass", "spec.priorityClassName"),
    ("topologyKey", "spec.schedulingConstraints.topology"),
    ("disruption", "spec.disruptionMode"),
    (
        "gracePeriod",
        "its pods' spec.terminationGracePeriodSeconds",
    ),
    ("checkpoint", "metadata.annotations[wasched.io/checkpoint]"),
];

/// The replay jobs of a trace's pods and PodGroups.
pub(super) fn jobs(objects: &Objects) -> Result<Vec<Job>> {
    let key = |namespace: &Option<String>, name: &Option<String>| {
        format!(
            "{}/{}",
            namespace.as_deref().unwrap_or("default"),
            name.as_deref().unwrap_or_default()
        )
    };
    let mut members: BTreeMap<String, Vec<(String, &Pod)>> = objects
        .groups
        .iter()
        .map(|(_, g)| (key(&g.metadata.namespace, &g.metadata.name), Vec::new()))
        .collect();
    let mut jobs = Vec::new();
    for (origin, pod) in &objects.pods {
        let origin = origin.to_string();
        let group = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduling_group.as_ref())
            .and_then(|g| g.pod_group_name.clone());
        match group {
            Some(group) => {
                let group = key(&pod.metadata.namespace, &Some(group));
                let Some(members) = members.get_mut(&group) else {
                    bail!(
                        "{origin}: field spec.schedulingGroup.podGroupName: PodGroup {group} is not in the trace"
                    );
                };
                members.push((origin, pod));
            }
            None => {
                let mut row = worker(&origin, pod, objects.made)?;
                let meta = &pod.metadata;
                set(&mut row, "name", meta.name.clone().map(Value::String));
                set(
                    &mut row,
                    "namespace",
                    meta.namespace.clone().map(Value::String),
                );
                set(
                    &mut row,
                    "submit",
                    annotation(meta.annotations.as_ref(), SUBMIT_AT),
                );
                set(
                    &mut row,
                    "checkpoint",
                    annotation(meta.annotations.as_ref(), CHECKPOINT),
                );
                required(
                    &row,
                    "submit",
                    &origin,
                    &format!("metadata.annotations[{SUBMIT_AT}]"),
                )?;
                jobs.push(finish(&origin, POD_PATHS, row)?);
            }
        }
    }
    for (origin, group) in &objects.groups {
        let members = &members[&key(&group.metadata.namespace, &group.metadata.name)];
        jobs.push(group_job(
            &origin.to_string(),
            group,
            members,
            objects.made,
        )?);
    }
    for (origin, workload) in &objects.workloads {
        let name = workload.metadata.name.as_deref().unwrap_or_default();
        let namespace = workload.metadata.namespace.as_deref().unwrap_or("default");
        let referenced = objects.groups.iter().any(|(_, g)| {
            g.metadata.namespace.as_deref().unwrap_or("default") == namespace
                && g.spec
                    .workload_ref
                    .as_ref()
                    .is_some_and(|r| r.workload_name == name)
        });
        if !referenced {
            bail!(
                "{origin}: no PodGroup of the trace names it in spec.workloadRef: write the PodGroups it stands for (the replay schedules PodGroups)"
            );
        }
    }
    Ok(jobs)
}

/// A pod's fields as a trace row's, without its name or submit time (what
/// a group's pods share, and what [`SHAPE`] says they may differ in); a
/// pod a controller made (see
/// [`Made`]) may always restart: its run time is how long its controller
/// object lives.
fn worker(origin: &str, pod: &Pod, made: Option<&Made>) -> Result<serde_json::Map<String, Value>> {
    refuse_unread(origin, pod, &|path| allowed(path, POD_ALLOWED, "spec"))?;
    let made = made.filter(|m| {
        m.pods
            .contains(&crate::manifest::workloads::pods::key(&pod.metadata))
    });
    let Some(spec) = pod.spec.as_ref() else {
        bail!("{origin}: field spec: required");
    };
    if made.is_none() && !matches!(spec.restart_policy.as_deref(), Some("Never" | "OnFailure")) {
        bail!(
            "{origin}: field spec.restartPolicy: must be Never or OnFailure (a pod that always restarts never finishes, so it has no run time)"
        );
    }
    let mut row = pod_fields(origin, "spec", spec)?;
    set(
        &mut row,
        "duration",
        annotation(pod.metadata.annotations.as_ref(), RUN_FOR),
    );
    required(
        &row,
        "duration",
        origin,
        &format!("metadata.annotations[{RUN_FOR}]"),
    )?;
    match made {
        // No controller replaces a bare pod.
        None => {
            row.insert("backoffLimit".into(), json!(0));
        }
        Some(made) => {
            let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
            let job = pod
                .metadata
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.kind == "Job" && o.api_version == "batch/v1")
                .and_then(|o| made.jobs.get(&format!("{namespace}/{}", o.name)));
            let (limit, ignores) = job.copied().unwrap_or((0, true));
            row.insert("backoffLimit".into(), json!(limit));
            row.insert("ignoreDisruptions".into(), json!(ignores));
        }
    }
    Ok(row)
}

/// The replay job of a PodGroup and its pods.
fn group_job(
    origin: &str,
    group: &PodGroup,
    members: &[(String, &Pod)],
    made: Option<&Made>,
) -> Result<Job> {
    refuse_unread(origin, group, &|path| allowed(path, GROUP_ALLOWED, ""))?;
    let Some((first_origin, _)) = members.first() else {
        bail!(
            "{origin}: no pod of the trace names it in spec.schedulingGroup.podGroupName (a group's pods are its workers)"
        );
    };
    let meta = &group.metadata;
    let admission = crate::manifest::dialect::MIN_RESOURCES_ANNOTATION;
    if annotation(meta.annotations.as_ref(), admission).is_some() {
        bail!(
            "{origin}: field metadata.annotations[{admission}]: Coscheduling's admission check (spec.minResources) is not carried by a replay job"
        );
    }
    let submit = annotation(meta.annotations.as_ref(), SUBMIT_AT);
    // The pods may differ in what they ask for (a driver and its
    // workers); the rest they share.
    let mut row = serde_json::Map::new();
    let mut kinds: Vec<(serde_json::Map<String, Value>, u32)> = Vec::new();
    let mut replacement = (u32::MAX, true);
    for (pod_origin, pod) in members {
        let mut other = worker(pod_origin, pod, made)?;
        // The tightest replacement of the Jobs the pods come from.
        let limit = other.remove("backoffLimit").and_then(|v| v.as_u64());
        let ignores = other.remove("ignoreDisruptions").and_then(|v| v.as_bool());
        replacement.0 = replacement.0.min(limit.unwrap_or(0) as u32);
        replacement.1 &= ignores.unwrap_or(false);
        let shape: serde_json::Map<String, Value> = SHAPE
            .iter()
            .filter_map(|k| Some((k.to_string(), other.remove(*k)?)))
            .collect();
        match kinds.iter_mut().find(|(known, _)| *known == shape) {
            Some((_, count)) => *count += 1,
            None => kinds.push((shape, 1)),
        }
        if pod_origin == first_origin {
            row = other;
        } else if let Some(field) = row
            .keys()
            .chain(other.keys())
            .find(|k| row.get(*k) != other.get(*k))
        {
            bail!(
                "{pod_origin}: its {field} differs from {first_origin}'s: the replay runs a group's pods for one time, with one priority"
            );
        }
    }
    row.insert("backoffLimit".into(), json!(replacement.0));
    row.insert("ignoreDisruptions".into(), json!(replacement.1));
    for (pod_origin, pod) in members {
        let own = annotation(pod.metadata.annotations.as_ref(), SUBMIT_AT);
        if own.is_some() && own != submit {
            bail!(
                "{pod_origin}: field metadata.annotations[{SUBMIT_AT}]: differs from its PodGroup's (a group's pods arrive with it)"
            );
        }
    }
    // kube-scheduler resolves the pods' priority and the group's each from
    // its own class: the two must name the same, or neither one.
    let own = row.get("priorityClass").and_then(Value::as_str);
    if own != group.spec.priority_class_name.as_deref() {
        bail!(
            "{first_origin}: field spec.priorityClassName: {:?} differs from its PodGroup's {:?} (write the same class on both, or on neither)",
            own.unwrap_or_default(),
            group
                .spec
                .priority_class_name
                .as_deref()
                .unwrap_or_default()
        );
    }
    set(&mut row, "name", meta.name.clone().map(Value::String));
    set(
        &mut row,
        "namespace",
        meta.namespace.clone().map(Value::String),
    );
    set(&mut row, "submit", submit);
    set(
        &mut row,
        "checkpoint",
        annotation(meta.annotations.as_ref(), CHECKPOINT),
    );
    required(
        &row,
        "submit",
        origin,
        &format!("metadata.annotations[{SUBMIT_AT}]"),
    )?;
    row.insert("workers".into(), json!(members.len()));
    let policy = &group.spec.scheduling_policy;
    match (&policy.gang, &policy.basic) {
        (Some(gang), _) => {
            row.insert("group".into(), json!("gang"));
            row.insert("minCount".into(), json!(gang.min_count));
        }
        (None, Some(_)) => {
            row.insert("group".into(), json!("basic"));
        }
        (None, None) => bail!("{origin}: field spec.schedulingPolicy: required (gang or basic)"),
    }
    let topology = group
        .spec
        .scheduling_constraints
        .as_ref()
        .and_then(|c| c.topology.clone())
        .unwrap_or_default();
    if topology.len() > 1 {
        bail!(
            "{origin}: field spec.schedulingConstraints.topology: a replay job has one topology key"
        );
    }
    set(
        &mut row,
        "topologyKey",
        topology.into_iter().next().map(|t| Value::String(t.key)),
    );
    if group
        .spec
        .disruption_mode
        .as_ref()
        .is_some_and(|d| d.all.is_some())
    {
        row.insert("disruption".into(), json!("all"));
    }
    // The kind most of the pods are is the job's own; the others are its
    // roles, in the order met.
    let own = (0..kinds.len())
        .max_by_key(|&i| (kinds[i].1, std::cmp::Reverse(i)))
        .expect("a group has pods");
    let (own, _) = kinds.remove(own);
    let with_shape = |shape: &serde_json::Map<String, Value>| {
        let mut with = row.clone();
        with.extend(shape.clone());
        with
    };
    let mut job = finish(origin, GROUP_PATHS, with_shape(&own))?;
    for (shape, workers) in kinds {
        let role = finish(origin, GROUP_PATHS, with_shape(&shape))?;
        job.roles.push(Role {
            workers,
            requests: role.requests,
            node_selector: role.node_selector,
            node_affinity: role.node_affinity,
            grace_period: role.grace_period,
        });
    }
    Ok(job)
}

/// The fields of a trace row the pods of one group may differ in: what
/// each asks for.
const SHAPE: [&str; 3] = ["requests", "nodeSelector", "gracePeriod"];

fn set(row: &mut serde_json::Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(value) = value {
        row.insert(key.to_string(), value);
    }
}

/// Refuses a row without `key`, naming the object's field at `path`.
fn required(
    row: &serde_json::Map<String, Value>,
    key: &str,
    origin: &str,
    path: &str,
) -> Result<()> {
    if !row.contains_key(key) {
        bail!("{origin}: field {path}: required");
    }
    Ok(())
}

/// The job of a finished row, checked as a trace row is.
fn finish(
    origin: &str,
    paths: &[(&'static str, &'static str)],
    row: serde_json::Map<String, Value>,
) -> Result<Job> {
    trace::job_of_object(origin, paths, Value::Object(row))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::manifests::tests::read;
    use super::super::trace::{Disruption, Grouping};

    /// A PodGroup `train` (a gang of 2 at rack topology, priority class
    /// high, submitted at 90 s) and `pods` (YAML documents).
    fn trace(group_extra: &str, pods: &[&str]) -> String {
        let mut text = format!(
            "apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {{name: train, namespace: ml, annotations: {{wasched.io/submit-at: 90s}}}}
spec:
  schedulingPolicy: {{gang: {{minCount: 2}}}}
  schedulingConstraints: {{topology: [{{key: rack}}]}}
  disruptionMode: {{all: {{}}}}
  priorityClassName: high
{group_extra}"
        );
        for pod in pods {
            text.push_str("---\n");
            text.push_str(pod);
        }
        text
    }

    /// A pod of `train` named `name`; `extra` goes under `spec`.
    fn member(name: &str, gpu: u32, extra: &str) -> String {
        format!(
            "apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: ml, annotations: {{wasched.io/run-for: 10m}}}}
spec:
  schedulingGroup: {{podGroupName: train}}
  restartPolicy: Never
  priorityClassName: high
  containers:
  - name: main
    image: trainer
    resources: {{limits: {{nvidia.com/gpu: \"{gpu}\"}}, requests: {{cpu: \"4\"}}}}
{extra}"
        )
    }

    fn error(text: &str) -> String {
        format!("{:#}", read("trace.yaml", text).unwrap_err())
    }

    #[test]
    fn a_podgroup_and_its_pods_are_one_job() {
        let jobs = read(
            "trace.yaml",
            &trace("", &[&member("train-0", 8, ""), &member("train-1", 8, "")]),
        )
        .unwrap();
        assert_eq!(jobs.len(), 1);
        let job = &jobs[0];
        assert_eq!((job.namespace.as_str(), job.name.as_str()), ("ml", "train"));
        assert_eq!(job.workers, 2);
        assert_eq!(job.grouping, Grouping::Gang(2));
        assert_eq!(job.submit, Duration::from_secs(90));
        assert_eq!(job.duration, Duration::from_secs(600));
        assert_eq!(job.priority_class.as_deref(), Some("high"));
        assert_eq!(job.topology_key.as_deref(), Some("rack"));
        assert_eq!(job.disruption, Disruption::All);
        assert_eq!(job.requests["nvidia.com/gpu"], "8");
        assert_eq!(job.requests["cpu"], "4");
        // No controller replaces a bare pod.
        assert_eq!(job.backoff_limit, 0);
        assert!(!job.ignore_disruptions);
    }

    /// Pods of one group that ask for different resources are the roles
    /// of one job: the kind most pods are is the job's own.
    #[test]
    fn unlike_pods_of_a_group_are_roles_of_its_job() {
        let jobs = read(
            "trace.yaml",
            &trace(
                "",
                &[
                    &member("train-0", 4, ""),
                    &member("train-1", 8, ""),
                    &member("train-2", 8, "  terminationGracePeriodSeconds: 5\n"),
                    &member("train-3", 8, ""),
                ],
            ),
        )
        .unwrap();
        let job = &jobs[0];
        assert_eq!(job.workers, 4);
        assert_eq!(job.requests["nvidia.com/gpu"], "8");
        let roles: Vec<_> = job
            .roles
            .iter()
            .map(|r| {
                (
                    r.workers,
                    r.requests["nvidia.com/gpu"].as_str(),
                    r.grace_period,
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                (1, "4", Duration::from_secs(30)),
                (1, "8", Duration::from_secs(5))
            ]
        );
        assert_eq!(job.gpus(), 28.0);
        assert_eq!(job.gpus_of(0), 4.0);
        assert_eq!(job.shape(1).grace_period, Duration::from_secs(5));
        assert_eq!(job.gpus_of(3), 8.0);
    }

    #[test]
    fn a_lone_pod_is_a_job_of_one_worker() {
        let pod = "apiVersion: v1
kind: Pod
metadata: {name: probe, annotations: {wasched.io/submit-at: 5s, wasched.io/run-for: 30s}}
spec:
  restartPolicy: OnFailure
  priorityClassName: low
  containers: [{name: main, image: busybox, resources: {requests: {cpu: 500m}}}]
";
        let jobs = read("trace.yaml", pod).unwrap();
        assert_eq!(jobs.len(), 1);
        let job = &jobs[0];
        assert_eq!(
            (job.namespace.as_str(), job.name.as_str()),
            ("default", "probe")
        );
        assert_eq!((job.workers, job.grouping), (1, Grouping::None));
        assert_eq!(job.submit, Duration::from_secs(5));
        assert_eq!(job.backoff_limit, 0);
    }

    #[test]
    fn what_a_replay_job_cannot_carry_is_named() {
        let cases = [
            (
                trace(
                    "",
                    &[
                        &member("train-0", 8, ""),
                        &member("train-1", 8, "")
                            .replace("wasched.io/run-for: 10m", "wasched.io/run-for: 5m"),
                    ],
                ),
                "trace.yaml: Pod ml/train-1: its duration differs from trace.yaml: Pod ml/train-0's",
            ),
            (
                trace(
                    "",
                    &[&member(
                        "train-0",
                        8,
                        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: a, operator: Exists}]}]}}}\n",
                    )],
                ),
                "trace.yaml: Pod ml/train-0: field spec.affinity.nodeAffinity.",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "")
                        .replace("restartPolicy: Never", "restartPolicy: Always")],
                ),
                "trace.yaml: Pod ml/train-0: field spec.restartPolicy: must be Never or OnFailure",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "").replace("wasched.io/run-for: 10m", "team: a")],
                ),
                "trace.yaml: Pod ml/train-0: field metadata.annotations[wasched.io/run-for]: required",
            ),
            (
                trace("", &[]),
                "trace.yaml: PodGroup ml/train: no pod of the trace names it",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "")
                        .replace("podGroupName: train", "podGroupName: other")],
                ),
                "trace.yaml: Pod ml/train-0: field spec.schedulingGroup.podGroupName: PodGroup ml/other is not in the trace",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "")
                        .replace("priorityClassName: high", "priorityClassName: low")],
                ),
                "trace.yaml: Pod ml/train-0: field spec.priorityClassName: \"low\" differs from its PodGroup's \"high\"",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "").replace("  priorityClassName: high\n", "")],
                ),
                "trace.yaml: Pod ml/train-0: field spec.priorityClassName: \"\" differs from its PodGroup's \"high\"",
            ),
            (
                trace(
                    "  resourceClaims: [{name: gpus, resourceClaimName: shared}]\n",
                    &[&member("train-0", 8, "")],
                ),
                "trace.yaml: PodGroup ml/train: field spec.resourceClaims",
            ),
            (
                format!(
                    "{}---\napiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {{name: lonely, namespace: ml}}\nspec: {{podGroupTemplates: [{{name: t, schedulingPolicy: {{basic: {{}}}}}}]}}\n",
                    trace("", &[&member("train-0", 8, ""), &member("train-1", 8, "")])
                ),
                "trace.yaml: Workload ml/lonely: no PodGroup of the trace names it in spec.workloadRef",
            ),
            (
                trace(
                    "",
                    &[&member("train-0", 8, "").replace(
                        "wasched.io/run-for: 10m",
                        "wasched.io/run-for: 10m, wasched.io/submit-at: 1s",
                    )],
                ),
                "trace.yaml: Pod ml/train-0: field metadata.annotations[wasched.io/submit-at]: differs from its PodGroup's",
            ),
        ];
        for (text, expected) in cases {
            let message = error(&text);
            assert!(message.contains(expected), "{message}\nwant: {expected}");
        }
    }

    #[test]
    fn a_workload_named_by_its_podgroup_is_read() {
        let text = format!(
            "{}---\napiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {{name: wl, namespace: ml}}\nspec: {{podGroupTemplates: [{{name: t, schedulingPolicy: {{gang: {{minCount: 2}}}}}}]}}\n",
            trace(
                "  workloadRef: {workloadName: wl, templateName: t}\n",
                &[&member("train-0", 8, ""), &member("train-1", 8, "")]
            )
        );
        let jobs = read("trace.yaml", &text).unwrap();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].workers, 2);
    }
}
