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

use anyhow::Result;
use k8s_openapi::api::batch::v1::{
    Job as KubeJob, JobSchedulingConfiguration, JobSpec, PodFailurePolicy,
    PodFailurePolicyOnPodConditionsPattern, PodFailurePolicyRule,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::api::scheduling::v1alpha3::{
    TopologyConstraint, WorkloadPodGroupAllDisruptionMode, WorkloadPodGroupBasicSchedulingPolicy,
    WorkloadPodGroupDisruptionMode, WorkloadPodGroupGangSchedulingPolicy,
    WorkloadPodGroupSchedulingConstraints, WorkloadPodGroupSchedulingPolicy,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::objects;
use super::trace::{Disruption, Grouping, Job};

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
    let mut pod = objects::pod(job, &job.name, Duration::ZERO)?;
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

/// The jobs as one `v1` List of Jobs, in submit order.
pub fn list(jobs: &[Job]) -> Result<Value> {
    let items = jobs
        .iter()
        .map(|j| Ok(serde_json::to_value(job(j)?)?))
        .collect::<Result<Vec<_>>>()?;
    Ok(json!({"apiVersion": "v1", "kind": "List", "items": items}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::trace;

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
