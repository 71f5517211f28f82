//! The objects a trace job is made of, as its controller would create
//! them: a PodGroup (for a gang or basic group) and one pod per worker,
//! built with [`crate::builder`] so they are valid as the API server would
//! have them, and given to the model as any object read from a file.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use k8s_openapi::api::core::v1::{Pod, PodCondition, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::trace::{Disruption, Grouping, Job};
use crate::builder::{PodBuilder, PodGroupBuilder};
use crate::manifest::{Object, ObjectRef};
use crate::model::SharedObject;

/// The instant a replay's time 0 stands for (2026-01-01T00:00:00Z): the
/// objects' timestamps are this plus the virtual time.
pub const EPOCH: i64 = 1_767_225_600;

/// `metadata.creationTimestamp` of an object created at `at`.
pub fn timestamp(at: Duration) -> i64 {
    EPOCH + at.as_secs() as i64
}

/// The name of the pod of worker `index` in its `incarnation` (0 for the
/// first; the Job controller's replacements are 1, 2, …).
pub fn pod_name(job: &Job, index: u32, incarnation: u32) -> String {
    if incarnation == 0 {
        format!("{}-{index}", job.name)
    } else {
        format!("{}-{index}-r{incarnation}", job.name)
    }
}

/// The job's PodGroup, if its pods are grouped.
pub fn pod_group(job: &Job, at: Duration) -> Result<Option<SharedObject>> {
    let mut builder = PodGroupBuilder::new(&job.namespace, &job.name).created_at(timestamp(at));
    match job.grouping {
        Grouping::None => return Ok(None),
        Grouping::Gang(min) => builder = builder.gang(min as i32),
        Grouping::Basic => {}
    }
    if let Some(key) = &job.topology_key {
        builder = builder.topology(key);
    }
    if let Some(class) = &job.priority_class {
        builder = builder.priority_class(class);
    }
    if job.disruption == Disruption::All {
        builder = builder.disrupt_all();
    }
    let group = builder.build()?;
    Ok(Some(shared(
        job,
        "PodGroup",
        Object::PodGroup(Box::new(group)),
    )))
}

/// A pending pod of the job's `worker`, created at `at`.
pub fn pod(job: &Job, worker: u32, name: &str, at: Duration) -> Result<Pod> {
    let shape = job.shape(worker);
    let mut builder = PodBuilder::new(&job.namespace, name).created_at(timestamp(at));
    for (resource, quantity) in shape.requests {
        builder = builder.request(resource, quantity);
        // Extended resources cannot be overcommitted: limit = request.
        if is_extended(resource) {
            builder = builder.limit(resource, quantity);
        }
    }
    for (key, value) in shape.node_selector {
        builder = builder.node_selector(key, value);
    }
    for (key, values) in shape.node_affinity {
        builder = builder.node_affinity_in(key, values);
    }
    if let Some(class) = &job.priority_class {
        builder = builder.priority_class(class);
    }
    if job.grouping != Grouping::None {
        builder = builder.group(&job.name);
    }
    builder = builder.label("batch.kubernetes.io/job-name", &job.name);
    let mut pod = builder.build()?;
    let spec = pod.spec.as_mut().expect("built pods have a spec");
    spec.termination_grace_period_seconds = Some(shape.grace_period.as_secs() as i64);
    // What the ExtendedResourceToleration admission plugin adds, as GPU
    // clusters run it: a pod asking for an extended resource tolerates the
    // NoSchedule taint of that name (nvidia.com/gpu on GPU nodes).
    for resource in shape.requests.keys().filter(|r| is_extended(r)) {
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .push(Toleration {
                key: Some(resource.clone()),
                operator: Some("Exists".into()),
                effect: Some("NoSchedule".into()),
                ..Default::default()
            });
    }
    pod.metadata.uid = Some(format!("{}-{name}", job.namespace));
    Ok(pod)
}

/// Whether `resource` is an extended resource (a domain-prefixed name
/// outside `kubernetes.io/`).
pub(super) fn is_extended(resource: &str) -> bool {
    resource.contains('/')
        && !resource.starts_with("kubernetes.io/")
        && !resource.contains(".kubernetes.io/")
}

/// `pod` bound to `node` at `at` (Unix seconds), and started: its kubelet
/// sets `status.startTime` (whole seconds, as the API server keeps it),
/// which preemption reads to tell which of two victims of one priority is
/// more important (the earlier started).
pub fn bound(mut pod: Pod, node: &str, at: i64) -> Pod {
    let spec = pod.spec.as_mut().expect("built pods have a spec");
    spec.node_name = Some(node.to_string());
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.start_time = time(at);
    pod
}

/// `pod` nominated to `node` (`status.nominatedNodeName`).
pub fn nominated(mut pod: Pod, node: &str) -> Pod {
    pod.status
        .get_or_insert_with(Default::default)
        .nominated_node_name = Some(node.to_string());
    pod
}

/// `pod` being deleted at `at` (Unix seconds): its `deletionTimestamp`
/// set.
pub fn deleting(mut pod: Pod, at: i64) -> Pod {
    pod.metadata.deletion_timestamp = time(at);
    pod
}

/// A Unix second as an object's time.
fn time(at: i64) -> Option<Time> {
    k8s_openapi::jiff::Timestamp::from_second(at).ok().map(Time)
}

/// `pod` being deleted at `at` (Unix seconds) as a victim of preemption:
/// its `DisruptionTarget` condition and `deletionTimestamp` set.
pub fn preempted(pod: Pod, at: i64) -> Pod {
    let mut pod = deleting(pod, at);
    let status = pod.status.get_or_insert_with(Default::default);
    status
        .conditions
        .get_or_insert_with(Vec::new)
        .push(PodCondition {
            type_: "DisruptionTarget".into(),
            status: "True".into(),
            reason: Some("PreemptionByScheduler".into()),
            ..Default::default()
        });
    pod
}

/// A pod as the model takes it.
pub fn shared_pod(job: &Job, pod: Pod) -> SharedObject {
    shared(job, "Pod", Object::Pod(Box::new(pod)))
}

fn shared(job: &Job, kind: &str, object: Object) -> SharedObject {
    let metadata = match &object {
        Object::Pod(p) => &p.metadata,
        Object::PodGroup(g) => &g.metadata,
        _ => unreachable!("a job is made of pods and a PodGroup"),
    };
    let name = format!(
        "{}/{}",
        job.namespace,
        metadata.name.as_deref().unwrap_or_default()
    );
    Arc::new((
        ObjectRef {
            file: job.origin.clone(),
            kind: kind.into(),
            name,
        },
        object,
    ))
}
