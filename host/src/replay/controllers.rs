//! A trace written as the objects users submit to workload controllers:
//! JobSet, LeaderWorkerSet, RayCluster and RayJob, PyTorchJob, TrainJob,
//! Volcano's Job, Deployment, ReplicaSet, StatefulSet — every kind
//! `simulate` expands (see [`crate::manifest::workloads`]).
//!
//! Each object is expanded on its own into what its controller makes, as
//! `simulate` expands it; the PodGroups and pods made are then read as
//! written ones are (see `groups`): each PodGroup is one replay job (its
//! pods may differ in what they ask for: a driver beside its workers),
//! each pod of no group a job of one worker.
//!
//! - [`SUBMIT_AT`] on the object: when it is created; every group and
//!   pod it makes arrives then (a PodGroup its pods join, written for
//!   another time, is refused).
//! - [`CHECKPOINT`] on the object: how often the work of every group and
//!   lone pod it makes is saved.
//! - [`RUN_FOR`] on the object: how long each pod it makes runs once
//!   started; a pod template's own (which its pods carry) wins. A pod
//!   that always restarts (a LeaderWorkerSet's, a RayCluster's) runs
//!   that long too: its object's lifetime.
//! - A pod of a Job the controller made (a JobSet's, a TrainJob's) is
//!   replaced as the Job controller does, with that Job's
//!   `backoffLimit` and `podFailurePolicy`; a pod another controller
//!   made directly is replaced by it without limit (read as a policy
//!   that ignores preemption).
//!
//! An object whose controller makes no pods (suspended, no replicas) is
//! refused with the reason; so is what the replay cannot carry (a
//! CompositePodGroup, a spread given to a group's pods).

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::scheduling::v1beta1::{PodGroup, Workload};
use serde_json::Value;

use super::groups::Made;
use super::manifests::{CHECKPOINT, RUN_FOR, SUBMIT_AT, check_job};
use crate::manifest::workloads::{self, Controller, ControllerKind, ControllerOptions};
use crate::manifest::{FieldValidation, Manifests, Object, ObjectRef};

/// The Job controller's default `backoffLimit`.
const DEFAULT_BACKOFF_LIMIT: u32 = 6;

/// What a controller sets on the Jobs it makes, besides what a Job of the
/// trace may carry: its owner, the PodGroup its pods join.
const MADE_JOB_ALLOWED: &[&str] = &[
    "metadata.ownerReferences",
    "spec.template.spec.schedulingGroup",
];

/// What the controller objects of a trace made: pods, PodGroups and
/// Workloads, each with the position of its object in the file, read
/// with the trace's written ones (a Deployment's pods may join a PodGroup
/// written beside it).
#[derive(Default)]
pub(super) struct Expanded {
    /// Pods made.
    pub pods: Vec<(usize, ObjectRef, Pod)>,
    /// PodGroups made.
    pub groups: Vec<(usize, ObjectRef, PodGroup)>,
    /// Workloads made.
    pub workloads: Vec<(usize, ObjectRef, Workload)>,
    /// Who replaces the pods made.
    pub made: Made,
}

/// Expands one controller object of a trace (`origin`, at `position` in
/// its file) into `into`, with the `runtimes` a TrainJob may name and the
/// controllers configured as `options` say; what it was expanded as goes
/// to `notes`, a line per object made.
pub(super) fn expand(
    position: usize,
    origin: &ObjectRef,
    controller: &Controller,
    runtimes: &[(&ObjectRef, &Controller)],
    options: &ControllerOptions,
    into: &mut Expanded,
    notes: &mut Vec<String>,
) -> Result<()> {
    let annotation = |key: &str| {
        controller
            .value
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let Some(submit) = annotation(SUBMIT_AT) else {
        bail!("{origin}: field metadata.annotations[{SUBMIT_AT}]: required");
    };
    let run_for = annotation(RUN_FOR);
    let checkpoint = annotation(CHECKPOINT);
    let mut made = Manifests {
        keep_stored: true,
        validation: FieldValidation::Strict,
        controllers: options.clone(),
        ..Default::default()
    };
    made.objects.push((
        origin.clone(),
        Object::Controller(Box::new(controller.clone())),
    ));
    for (at, runtime) in runtimes {
        made.objects.push((
            (*at).clone(),
            Object::Controller(Box::new((*runtime).clone())),
        ));
    }
    workloads::expand_controllers(&mut made)?;
    for (at, object) in &made.objects {
        if let Object::Job(job) = object {
            // Checked as a Job written in the trace is, but for what its
            // controller sets: its owner, its pods' group.
            let ignores = check_job(&at.to_string(), job, MADE_JOB_ALLOWED)?;
            let limit = job
                .spec
                .as_ref()
                .and_then(|s| s.backoff_limit)
                .map_or(DEFAULT_BACKOFF_LIMIT, |b| b.max(0) as u32);
            let key = workloads::pods::key(&job.metadata);
            into.made.jobs.insert(key, (limit, ignores));
        }
    }
    workloads::job::expand(&mut made)?;
    if let Some(without) = made.without_pods.first() {
        let what = if (without.kind.as_str(), without.name.as_str())
            == (origin.kind.as_str(), origin.name.as_str())
        {
            without.reason.clone()
        } else {
            format!("{} {}: {}", without.kind, without.name, without.reason)
        };
        bail!("{origin}: {what}, so its controller makes no pods (a trace object must run pods)");
    }
    if let Some((kind, _)) = made.skipped.iter().next() {
        bail!("{origin}: its controller makes a {kind}, which a replay does not run");
    }
    super::manifests::refuse_spreads(&origin.to_string(), &made.dialects)?;
    // What it was expanded as, as `simulate` says it.
    notes.extend(
        made.notes
            .iter()
            .map(|note| format!("{}: {note}", origin.file)),
    );
    for (at, object) in made.objects {
        match object {
            Object::Pod(mut pod) => {
                let annotations = pod.metadata.annotations.get_or_insert_default();
                if let Some(run_for) = &run_for {
                    annotations
                        .entry(RUN_FOR.to_string())
                        .or_insert_with(|| run_for.clone());
                }
                // A pod that joins a group arrives with it: a group written
                // for another time is refused by name.
                annotations.insert(SUBMIT_AT.into(), submit.clone());
                if let Some(every) = &checkpoint {
                    annotations.insert(CHECKPOINT.into(), every.clone());
                }
                into.made.pods.insert(workloads::pods::key(&pod.metadata));
                into.pods.push((position, at, *pod));
            }
            Object::PodGroup(mut group) => {
                let annotations = group.metadata.annotations.get_or_insert_default();
                annotations.insert(SUBMIT_AT.into(), submit.clone());
                if let Some(every) = &checkpoint {
                    annotations.insert(CHECKPOINT.into(), every.clone());
                }
                into.groups.push((position, at, *group));
            }
            Object::Workload(workload) => into.workloads.push((position, at, *workload)),
            Object::Controller(c) if is_runtime(&c) => {}
            _ => bail!(
                "{origin}: its controller makes {at}, which a replay does not run (a replay runs pods and their groups)"
            ),
        }
    }
    Ok(())
}

/// Whether `controller` is a runtime (TrainingRuntime,
/// ClusterTrainingRuntime): read for the TrainJobs that name it, not run.
pub(super) fn is_runtime(controller: &Controller) -> bool {
    matches!(
        controller.kind,
        ControllerKind::TrainingRuntime | ControllerKind::ClusterTrainingRuntime
    )
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::manifests::tests::read;
    use super::super::trace::Grouping;

    /// A PyTorchJob of one master and `workers` workers, 1 GPU each;
    /// `annotations` on the object, `template` on the workers' template.
    fn pytorch_job(annotations: &str, template: &str) -> String {
        format!(
            "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: tune, namespace: ml, annotations: {{{annotations}}}}}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers: [{{name: pytorch, image: trainer, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]
    Worker:
      replicas: 2
      template:
        metadata: {{annotations: {{{template}}}}}
        spec:
          containers: [{{name: pytorch, image: trainer, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]
"
        )
    }

    #[test]
    fn an_objects_times_reach_every_pod_and_a_templates_run_for_wins() {
        let jobs = read(
            "trace.yaml",
            &pytorch_job(
                "wasched.io/submit-at: 90s, wasched.io/run-for: 10m, wasched.io/checkpoint: 30s",
                "wasched.io/run-for: 1m",
            ),
        )
        .unwrap();
        assert!(
            jobs.iter()
                .all(|j| j.checkpoint == Some(Duration::from_secs(30)))
        );
        let times: Vec<_> = jobs
            .iter()
            .map(|j| (j.name.as_str(), j.submit, j.duration, j.grouping))
            .collect();
        let (minute, ten) = (Duration::from_secs(60), Duration::from_secs(600));
        let at = Duration::from_secs(90);
        assert_eq!(
            times,
            [
                ("tune-master-0", at, ten, Grouping::None),
                ("tune-worker-0", at, minute, Grouping::None),
                ("tune-worker-1", at, minute, Grouping::None),
            ]
        );
        // training-operator replaces its pods itself, without limit.
        assert!(jobs.iter().all(|j| j.ignore_disruptions));
    }

    #[test]
    fn what_a_controller_object_cannot_run_is_named() {
        let error = |text: &str| format!("{:#}", read("trace.yaml", text).unwrap_err());
        assert_eq!(
            error(&pytorch_job("wasched.io/run-for: 10m", "")),
            "trace.yaml: PyTorchJob ml/tune: field metadata.annotations[wasched.io/submit-at]: required"
        );
        assert!(
            error(&pytorch_job("wasched.io/submit-at: 0s", "")).contains(
                "Pod ml/tune-master-0: field metadata.annotations[wasched.io/run-for]: required"
            ),
        );
        let suspended = pytorch_job("wasched.io/submit-at: 0s, wasched.io/run-for: 1m", "")
            .replace(
                "spec:\n  pytorchReplicaSpecs:",
                "spec:\n  runPolicy: {suspend: true}\n  pytorchReplicaSpecs:",
            );
        let message = error(&suspended);
        assert!(
            message.starts_with("trace.yaml: PyTorchJob ml/tune: ")
                && message
                    .ends_with("so its controller makes no pods (a trace object must run pods)"),
            "{message}"
        );
        let host_port = pytorch_job("wasched.io/submit-at: 0s, wasched.io/run-for: 1m", "")
            .replace(
                "image: trainer,",
                "image: trainer, ports: [{containerPort: 80, hostPort: 80}],",
            );
        assert!(
            error(&host_port).contains("field spec.containers[].ports[].hostPort"),
            "{}",
            error(&host_port)
        );
        let class = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 10\n";
        assert!(error(class).contains("PriorityClass high: give it with the cluster"));
    }

    /// A Deployment's pods join the Coscheduling PodGroup written beside
    /// them, as `simulate` reads them: one gang, read with a note.
    #[test]
    fn made_pods_join_a_group_written_beside_them() {
        let text = "apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: web, annotations: {wasched.io/submit-at: 5s}}
spec: {minMember: 2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {wasched.io/submit-at: 5s, wasched.io/run-for: 1h}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, scheduling.x-k8s.io/pod-group: web}}
    spec:
      containers: [{name: web, image: nginx, resources: {requests: {cpu: \"1\"}}}]
";
        let mut notes = Vec::new();
        let jobs =
            super::super::manifests::read("trace.yaml", text, &Default::default(), &mut notes)
                .unwrap();
        assert_eq!(jobs.len(), 1, "{jobs:#?}");
        assert_eq!((jobs[0].workers, jobs[0].grouping), (2, Grouping::Gang(2)));
        assert_eq!(jobs[0].duration, Duration::from_secs(3600));
        assert!(
            notes[0].starts_with("trace.yaml: PodGroup default/web (Coscheduling"),
            "{notes:?}"
        );
        assert!(
            notes[1].starts_with("trace.yaml: Deployment default/web: expanded as"),
            "{notes:?}"
        );
        // Its pods arrive when the Deployment is created: a group written
        // for another time is refused.
        let late = text.replacen(
            "annotations: {wasched.io/submit-at: 5s, wasched.io/run-for",
            "annotations: {wasched.io/submit-at: 9s, wasched.io/run-for",
            1,
        );
        let message = format!("{:#}", read("trace.yaml", &late).unwrap_err());
        assert!(
            message.contains(
                "field metadata.annotations[wasched.io/submit-at]: differs from its PodGroup's"
            ),
            "{message}"
        );
    }

    /// A Job a controller makes is checked as a Job of the trace is.
    #[test]
    fn a_made_job_is_checked_as_a_written_one() {
        let jobset = |job: &str| {
            format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {{name: js, annotations: {{wasched.io/submit-at: 0s, wasched.io/run-for: 1m}}}}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        {job}
        template:
          spec:
            restartPolicy: Never
            containers: [{{name: c, image: i}}]
"
            )
        };
        let jobs = read("trace.yaml", &jobset("backoffLimit: 1")).unwrap();
        assert_eq!(jobs[0].backoff_limit, 1);
        let message = format!(
            "{:#}",
            read(
                "trace.yaml",
                &jobset(
                    "{parallelism: 2, completions: 8}"
                        .trim_matches(['{', '}'])
                        .replace(", ", "\n        ")
                        .as_str()
                )
            )
            .unwrap_err()
        );
        assert!(
            message.contains(
                "Job default/js-w-0: field spec.completions: 8 differs from parallelism 2"
            ),
            "{message}"
        );
        let message = format!(
            "{:#}",
            read("trace.yaml", &jobset("activeDeadlineSeconds: 60")).unwrap_err()
        );
        assert!(
            message.contains("field spec.activeDeadlineSeconds"),
            "{message}"
        );
    }
}
