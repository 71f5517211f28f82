//! Volcano's `batch.volcano.sh/v1alpha1` Job, as Volcano's job controller
//! and admission webhook expand it (`pkg/controllers/job`,
//! `pkg/webhooks/admission/jobs/mutate`): `tasks[]` × `replicas` pods
//! `<job>-<task>-<index>` (a task without a name is `default<index>`),
//! labelled and annotated `volcano.sh/job-name`, `volcano.sh/task-spec`,
//! `volcano.sh/task-index`, in one PodGroup `<job>-<uid>` (`<job>` when the
//! Job has no uid, the name Volcano looked up before v1.5) whose
//! `minMember` is `spec.minAvailable` — when 0, the webhook's default: the
//! sum over tasks of `task.minAvailable`, or `replicas` where unset.
//!
//! The group is read as the Volcano PodGroup dialect reads one: a v1.37
//! gang of `minAvailable`, its pods `default-scheduler`'s (v1.37 schedules
//! the group); `spec.priorityClassName` on the group and every pod without
//! one; `spec.queue` noted (one queue for all). A task's own
//! `minAvailable` (Volcano's `minTaskMember`) has no v1.37 equivalent: it
//! is said in the note, and only the job's `minAvailable` is a gang.

use anyhow::{Result, anyhow};
use k8s_openapi::api::core::v1::PodTemplateSpec;

use super::pods::{lone_pod_group, owner, pod, pods_text, policy, policy_text};
use super::{Context, Expansion, Reader, get, manifest};

const API_VERSION: &str = "batch.volcano.sh/v1alpha1";

/// A Volcano Job: its tasks' pods in one gang.
pub fn job(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context
        .present
        .pod_labelled(&namespace, "volcano.sh/job-name", &name)
    {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let value = read.value;
    // (task name, template, replicas, its minAvailable)
    let mut tasks = Vec::new();
    for (i, task) in read
        .list(get(value, "/spec/tasks"), "spec.tasks")?
        .iter()
        .enumerate()
    {
        let at = format!("spec.tasks[{i}]");
        let task_name = read
            .text(get(task, "/name"), &format!("{at}.name"))?
            .filter(|n| !n.is_empty())
            .map_or_else(|| format!("default{i}"), str::to_string);
        let replicas = read.count(get(task, "/replicas"), &format!("{at}.replicas"), 0)?;
        let min = read.count(
            get(task, "/minAvailable"),
            &format!("{at}.minAvailable"),
            replicas as i64,
        )?;
        let template: PodTemplateSpec =
            read.template(&format!("{at}.template"), get(task, "/template"))?;
        tasks.push((task_name, template, replicas, min));
    }
    let total = read.bounded(tasks.iter().map(|t| t.2 as u128).sum(), "spec.tasks")?;
    if total == 0 {
        return Ok(Expansion::NoPods("no task has replicas".into()));
    }
    let given = read.count(get(value, "/spec/minAvailable"), "spec.minAvailable", 0)?;
    let (min_available, from) = if given > 0 {
        (given, "spec.minAvailable")
    } else {
        (
            tasks.iter().map(|t| t.3).sum(),
            "the sum of the tasks' minAvailable (Volcano's default)",
        )
    };
    if min_available > total {
        return Err(anyhow!(
            "{}: field spec.minAvailable: {min_available} is more than the job's {total} pods",
            read.origin
        ));
    }
    let group_name = match &meta.uid {
        Some(uid) if !uid.is_empty() => format!("{name}-{uid}"),
        _ => name.clone(),
    };
    let priority = read
        .text(
            get(value, "/spec/priorityClassName"),
            "spec.priorityClassName",
        )?
        .map(str::to_string);
    let scheduler = read
        .text(get(value, "/spec/schedulerName"), "spec.schedulerName")?
        .unwrap_or("volcano")
        .to_string();
    let queue = read
        .text(get(value, "/spec/queue"), "spec.queue")?
        .unwrap_or("default")
        .to_string();
    let gang = policy(Some(
        i32::try_from(min_available.max(1)).unwrap_or(i32::MAX),
    ));
    let group = lone_pod_group(
        &namespace,
        &group_name,
        owner(API_VERSION, "Job", &meta),
        &meta,
        gang.clone(),
        priority.clone(),
    );
    let mut objects = vec![manifest("scheduling.k8s.io/v1beta1", "PodGroup", &group)];
    let mut made = vec![format!(
        "PodGroup {namespace}/{group_name} ({}, from {from})",
        policy_text(&gang)
    )];
    let mut names = Vec::new();
    let mut task_minimums = Vec::new();
    for (task_name, template, replicas, min) in &tasks {
        if min < replicas {
            task_minimums.push(format!("{task_name} {min}"));
        }
        for index in 0..*replicas {
            let pod_name = format!("{name}-{task_name}-{index}");
            let marks = [
                ("volcano.sh/job-name".to_string(), name.clone()),
                ("volcano.sh/job-namespace".to_string(), namespace.clone()),
                ("volcano.sh/task-spec".to_string(), task_name.clone()),
                ("volcano.sh/task-index".to_string(), index.to_string()),
                ("volcano.sh/queue-name".to_string(), queue.clone()),
            ];
            let mut made_pod = pod(
                template,
                &namespace,
                pod_name.clone(),
                owner(API_VERSION, "Job", &meta),
                &marks,
                &meta,
                Some(&group_name),
            );
            let annotations = made_pod
                .metadata
                .annotations
                .get_or_insert_with(Default::default);
            for (key, val) in &marks {
                annotations.insert(key.clone(), val.clone());
            }
            annotations.insert("scheduling.k8s.io/group-name".into(), group_name.clone());
            if let Some(spec) = made_pod.spec.as_mut() {
                // v1.37's scheduler schedules the group (as for Volcano
                // PodGroups read as a dialect).
                spec.scheduler_name = None;
                if spec.priority_class_name.is_none() {
                    spec.priority_class_name = priority.clone();
                }
            }
            objects.push(manifest("v1", "Pod", &made_pod));
            names.push(pod_name);
        }
    }
    made.push(pods_text(&names));
    made.push(format!(
        "its pods' scheduler {scheduler} read as default-scheduler, which schedules their group in v1.37"
    ));
    made.push(format!(
        "spec.queue {queue}: Volcano queues have no v1.37 equivalent; all groups share one queue"
    ));
    if !task_minimums.is_empty() {
        made.push(format!(
            "task minAvailable ({}) has no v1.37 equivalent: only the job's minAvailable is a gang",
            task_minimums.join(", ")
        ));
    }
    Ok(Expansion::Made { objects, made })
}
