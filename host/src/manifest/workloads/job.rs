//! `batch/v1` Jobs whose pods are not in the snapshot, expanded the way the
//! v1.37 Job controller does it (KEP-5547): a Workload and a PodGroup from
//! `spec.scheduling` (`basic` when absent; `gang: {}` means `minCount =
//! parallelism`), then `parallelism` pods from the template that join the
//! PodGroup. A Job whose pod template already names a `schedulingGroup`
//! (a JobSet's or a TrainJob's child) gets no Workload of its own: its
//! pods join the group named. Names are deterministic:
//! `<job>-<index>-<suffix>` for Indexed Jobs, `<job>-<suffix>` otherwise,
//! the suffix derived from the Job. A Job of `kai-scheduler` pods without
//! `spec.scheduling` that carries KAI-Scheduler's
//! `kai.scheduler/batch-min-member` annotation is a gang of that many
//! pods, as KAI's podgrouper groups it.

use anyhow::{Result, bail};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Pod, PodSchedulingGroup};
use k8s_openapi::api::scheduling::v1beta1::{
    AllDisruptionMode, BasicSchedulingPolicy, DisruptionMode, GangSchedulingPolicy, PodGroup,
    PodGroupSchedulingConstraints, PodGroupSchedulingPolicy, PodGroupSpec, PodGroupTemplate,
    SingleDisruptionMode, TopologyConstraint, TypedLocalObjectReference, Workload,
    WorkloadReference, WorkloadSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::WithoutPods;
use super::pods::derived;
use crate::manifest::load::{Manifests, Object, ObjectRef};

/// KAI-Scheduler's annotation on a Job: how many of its pods are one gang
/// (its podgrouper's `MinMemberOverrideKey`), read as `gang.minCount` when
/// the Job has no `spec.scheduling`.
const KAI_MIN_MEMBER: &str = "kai.scheduler/batch-min-member";

/// Whether the Job's pods are KAI-Scheduler's (whose podgrouper reads
/// [`KAI_MIN_MEMBER`]).
fn kai_scheduled(job: &Job) -> bool {
    job.spec
        .as_ref()
        .and_then(|s| s.template.spec.as_ref())
        .and_then(|s| s.scheduler_name.as_deref())
        == Some(crate::manifest::kai::SCHEDULER_NAME)
}

/// The template name of the Workload the controller creates for a Job.
const TEMPLATE: &str = "job";

/// Expands every Job without pods in `into`; Jobs themselves are not kept.
pub fn expand(into: &mut Manifests) -> Result<()> {
    let present = super::Present::index(&into.objects);
    let (jobs, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut into.objects)
        .into_iter()
        .partition(|(_, o)| matches!(o, Object::Job(_)));
    into.objects = rest;
    for (origin, object) in jobs {
        let Object::Job(job) = object else {
            unreachable!("partitioned on Job")
        };
        let ns = job
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into());
        let name = job.metadata.name.clone().unwrap_or_default();
        let job_key = format!("{ns}/{name}");
        if present.owned_by(&ns, "Job", &name) {
            continue; // the controller already made its pods; they are in the snapshot
        }
        let Some(count) = pods_to_create(&job, &origin, into) else {
            continue;
        };
        if count as usize > super::MAX_PODS {
            anyhow::bail!(
                "{origin}: field spec.parallelism: makes {count} pods, more than the {} wasched expands one object into",
                super::MAX_PODS
            );
        }
        let spec = job.spec.as_ref().expect("checked by pods_to_create");
        let parallelism = spec.parallelism.unwrap_or(1);
        let named = super::pods::named_group(&spec.template).map(str::to_string);
        let policy = scheduling_policy(&job, &origin, parallelism)?;
        let (workload, group) = workload_and_group(&job, &ns, &name, policy.clone());
        let mut made = Vec::new();
        if let Some(named) = &named {
            made.push(format!(
                "no Workload of its own (its pod template names PodGroup {named})"
            ));
        } else if !present.holds("Workload", &job_key) {
            into.objects.push((
                derived(&origin, "Workload", &job_key),
                Object::Workload(Box::new(workload)),
            ));
            made.push(format!("Workload {job_key}"));
        }
        let mut policy_text = super::pods::policy_text(&policy);
        if spec.scheduling.is_none()
            && kai_scheduled(&job)
            && job
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key(KAI_MIN_MEMBER))
        {
            policy_text.push_str(&format!(", from annotation {KAI_MIN_MEMBER}"));
        }
        if named.is_none() && !present.holds("PodGroup", &job_key) {
            into.objects.push((
                derived(&origin, "PodGroup", &job_key),
                Object::PodGroup(Box::new(group)),
            ));
            made.push(format!("PodGroup {job_key} ({policy_text})"));
        }
        let indexed = spec.completion_mode.as_deref() == Some("Indexed");
        let mut names = Vec::new();
        for index in 0..count {
            let pod = pod(&job, &ns, &name, index, indexed, named.as_deref());
            let pod_name = pod.metadata.name.clone().unwrap_or_default();
            into.objects.push((
                derived(&origin, "Pod", &format!("{ns}/{pod_name}")),
                Object::Pod(Box::new(pod)),
            ));
            names.push(pod_name);
        }
        made.push(super::pods::pods_text(&names));
        into.notes.push(format!(
            "Job {job_key}: expanded as the v1.37 Job controller would: {}",
            made.join(", ")
        ));
    }
    Ok(())
}

/// How many pods the controller would create now; `None` (with a note) for
/// Jobs that create none: suspended, finished, or complete.
fn pods_to_create(job: &Job, origin: &ObjectRef, into: &mut Manifests) -> Option<i32> {
    let spec = job.spec.as_ref()?;
    let status = job.status.as_ref();
    let finished = status
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True");
    let succeeded = status.and_then(|s| s.succeeded).unwrap_or(0);
    let left = spec.completions.map_or(i32::MAX, |c| c - succeeded);
    let count = spec.parallelism.unwrap_or(1).min(left).max(0);
    let why = if spec.suspend == Some(true) {
        "suspended"
    } else if finished {
        "finished"
    } else if count == 0 {
        "nothing left to run"
    } else {
        return Some(count);
    };
    into.notes.push(format!(
        "Job {}: {why}, so the controller creates no pods",
        origin.name
    ));
    into.without_pods.push(WithoutPods {
        kind: "Job".into(),
        name: origin.name.clone(),
        reason: why.into(),
    });
    None
}

/// `spec.scheduling.schedulingPolicy` as the PodGroup's policy.
fn scheduling_policy(
    job: &Job,
    origin: &ObjectRef,
    parallelism: i32,
) -> Result<PodGroupSchedulingPolicy> {
    let policy = job
        .spec
        .as_ref()
        .and_then(|s| s.scheduling.as_ref())
        .and_then(|s| s.scheduling_policy.as_ref());
    let kai_min = job
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(KAI_MIN_MEMBER))
        .filter(|_| kai_scheduled(job));
    if policy.is_none()
        && let Some(text) = kai_min
    {
        let min_count = text
            .parse::<i32>()
            .ok()
            .filter(|n| (1..=parallelism).contains(n))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{origin}: field metadata.annotations.{KAI_MIN_MEMBER}: must be an integer between 1 and parallelism ({parallelism}), got {text:?}"
                )
            })?;
        return Ok(PodGroupSchedulingPolicy {
            basic: None,
            gang: Some(GangSchedulingPolicy { min_count }),
        });
    }
    let Some(gang) = policy.and_then(|p| p.gang.as_ref()) else {
        return Ok(PodGroupSchedulingPolicy {
            basic: Some(BasicSchedulingPolicy(serde_json::json!({}))),
            gang: None,
        });
    };
    let min_count = gang.min_count.unwrap_or(parallelism);
    if min_count < 1 || min_count > parallelism {
        bail!(
            "{origin}: field spec.scheduling.schedulingPolicy.gang.minCount: must be between 1 and parallelism ({parallelism}), got {min_count}"
        );
    }
    Ok(PodGroupSchedulingPolicy {
        basic: None,
        gang: Some(GangSchedulingPolicy { min_count }),
    })
}

fn workload_and_group(
    job: &Job,
    ns: &str,
    name: &str,
    policy: PodGroupSchedulingPolicy,
) -> (Workload, PodGroup) {
    let scheduling = job.spec.as_ref().and_then(|s| s.scheduling.as_ref());
    let topology = scheduling
        .and_then(|s| s.scheduling_constraints.as_ref())
        .and_then(|c| c.topology.as_ref())
        .map(|t| PodGroupSchedulingConstraints {
            topology: Some(
                t.iter()
                    .map(|t| TopologyConstraint { key: t.key.clone() })
                    .collect(),
            ),
        });
    let disruption = scheduling
        .and_then(|s| s.disruption_mode.as_ref())
        .map(|d| DisruptionMode {
            all: d
                .all
                .as_ref()
                .map(|_| AllDisruptionMode(serde_json::json!({}))),
            single: d
                .single
                .as_ref()
                .map(|_| SingleDisruptionMode(serde_json::json!({}))),
        });
    let template_spec = job.spec.as_ref().and_then(|s| s.template.spec.as_ref());
    let meta = |kind: &str| ObjectMeta {
        name: Some(name.into()),
        namespace: Some(ns.into()),
        creation_timestamp: job.metadata.creation_timestamp.clone(),
        owner_references: Some(vec![owner(job)]),
        annotations: Some(
            [(
                "wasched.io/expanded-from".to_string(),
                format!("Job {ns}/{name} ({kind})"),
            )]
            .into(),
        ),
        ..Default::default()
    };
    let workload = Workload {
        metadata: meta("Workload"),
        spec: WorkloadSpec {
            controller_ref: Some(TypedLocalObjectReference {
                api_group: Some("batch".into()),
                kind: "Job".into(),
                name: name.into(),
            }),
            pod_group_templates: Some(vec![PodGroupTemplate {
                name: TEMPLATE.into(),
                scheduling_policy: policy.clone(),
                scheduling_constraints: topology.clone(),
                disruption_mode: disruption.clone(),
                priority_class_name: template_spec.and_then(|s| s.priority_class_name.clone()),
                ..Default::default()
            }]),
            composite_pod_group_templates: None,
        },
    };
    let group = PodGroup {
        metadata: meta("PodGroup"),
        spec: PodGroupSpec {
            scheduling_policy: policy,
            scheduling_constraints: topology,
            disruption_mode: disruption,
            priority_class_name: template_spec.and_then(|s| s.priority_class_name.clone()),
            priority: template_spec.and_then(|s| s.priority),
            workload_ref: Some(WorkloadReference {
                workload_name: name.into(),
                template_name: TEMPLATE.into(),
            }),
            ..Default::default()
        },
        status: None,
    };
    (workload, group)
}

fn owner(job: &Job) -> OwnerReference {
    super::pods::owner("batch/v1", "Job", &job.metadata)
}

/// The 5-character suffix the controller's generateName would add, derived
/// from the Job and the pod's index so that runs are reproducible.
fn suffix(ns: &str, name: &str, index: i32) -> String {
    let named_index: Vec<u8> = name.bytes().chain(index.to_le_bytes()).collect();
    super::pods::suffix(&[ns.as_bytes(), &named_index])
}

fn pod(job: &Job, ns: &str, name: &str, index: i32, indexed: bool, group: Option<&str>) -> Pod {
    let template = job
        .spec
        .as_ref()
        .map(|s| s.template.clone())
        .unwrap_or_default();
    let mut meta = template.metadata.unwrap_or_default();
    let pod_name = if indexed {
        format!("{name}-{index}-{}", suffix(ns, name, index))
    } else {
        format!("{name}-{}", suffix(ns, name, index))
    };
    let labels = meta.labels.get_or_insert_with(Default::default);
    labels.insert("batch.kubernetes.io/job-name".into(), name.into());
    labels.insert("job-name".into(), name.into());
    if let Some(uid) = &job.metadata.uid {
        labels.insert("batch.kubernetes.io/controller-uid".into(), uid.clone());
    }
    if indexed {
        labels.insert(
            "batch.kubernetes.io/job-completion-index".into(),
            index.to_string(),
        );
        meta.annotations
            .get_or_insert_with(Default::default)
            .insert(
                "batch.kubernetes.io/job-completion-index".into(),
                index.to_string(),
            );
    }
    meta.name = Some(pod_name);
    meta.namespace = Some(ns.into());
    meta.creation_timestamp = job.metadata.creation_timestamp.clone();
    meta.owner_references = Some(vec![owner(job)]);
    let mut spec = template.spec.unwrap_or_default();
    spec.scheduling_group = Some(PodSchedulingGroup {
        pod_group_name: Some(group.unwrap_or(name).into()),
    });
    Pod {
        metadata: meta,
        spec: Some(spec),
        status: None,
    }
}
