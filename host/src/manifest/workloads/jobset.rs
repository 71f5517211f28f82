//! `jobset.x-k8s.io/v1alpha2` JobSet, as the JobSet controller expands it
//! (`pkg/controllers/jobset_controller.go` `constructJob`,
//! `pkg/util/placement`): `replicas` (default 1) Jobs per replicated job,
//! named `<jobset>-<replicatedJob>-<index>`, Indexed unless the template
//! says otherwise, labelled and annotated `jobset.sigs.k8s.io/*`, with
//! `subdomain` the JobSet's (`spec.network.subdomain`, default its name)
//! while DNS hostnames are on (the default). The Jobs are then expanded
//! as the Job controller does ([`super::job`]).
//!
//! Groups follow the workload-aware-scheduling integration, KEP-969
//! (`keps/969-WAS-integration`, and its controller's
//! `pkg/controllers/scheduling.go`), alpha:
//!
//! - no `spec.scheduling`: JobSet makes no groups; each Job's own
//!   `spec.scheduling` (or a `schedulingGroup` its pod template names)
//!   decides, as for any Job;
//! - a top-level gang (`spec.scheduling: {}` or `schedulingPolicy.gang`),
//!   without sequenced startup: one Workload and one PodGroup for the
//!   JobSet, `minCount` the sum of `parallelism × replicas` (or the one
//!   given);
//! - `spec.scheduling.replicatedJobs[]` entries: one PodGroup per entry
//!   over its `targetReplicatedJobs` (`minCount` their pods), or with `job`
//!   one PodGroup per Job of its one target (`minCount` its
//!   `parallelism`); replicated jobs no entry targets, a top-level `basic`
//!   policy and sequenced startup (`InOrder`, `dependsOn`) give one
//!   PodGroup per replicated job, with the top-level fields;
//! - names as the controller makes them: `<name>-<10 hex of SHA-1>`
//!   (Workload over `JobSet/<ns>/<jobset>`, templates over
//!   `ReplicatedJob/…`, `ReplicatedJobGroup/…`, `Job/…`), PodGroups
//!   `<jobset>-<template>` (the Workload's name for a top-level gang);
//! - each child Job's pod template names its PodGroup
//!   (`schedulingGroup`), so the Job controller makes no Workload of its
//!   own; a replicated job whose template already names one is refused
//!   while `spec.scheduling` is set, as JobSet's webhook refuses it.
//!
//! No CompositePodGroup in the alpha.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow, bail};
use k8s_openapi::api::batch::v1::{Job, JobTemplateSpec};
use k8s_openapi::api::core::v1::PodSchedulingGroup;
use k8s_openapi::api::scheduling::v1beta1::{
    DisruptionMode, PodGroupResourceClaim, PodGroupSchedulingConstraints, PodGroupTemplate,
};
use serde_json::Value;
use sha1::{Digest, Sha1};

use super::pods::owner;
use super::{Context, Expansion, Reader, get, manifest};

const API_VERSION: &str = "jobset.x-k8s.io/v1alpha2";

/// The first 10 hex digits of SHA-1 of `text`.
fn short_hash(text: &str) -> String {
    let digest = Sha1::digest(text.as_bytes());
    digest
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()[..10]
        .to_string()
}

/// `<prefix>-<hash>`, the prefix cut to 52 characters when the whole would
/// pass 63 (the controller's `hashedName`).
fn hashed_name(prefix: &str, hash: &str) -> String {
    let name = format!("{prefix}-{hash}");
    if name.len() <= 63 {
        return name;
    }
    let cut: String = prefix.chars().take(52).collect();
    format!("{cut}-{hash}")
}

/// The full SHA-1 in hex (`jobset.sigs.k8s.io/job-key`).
fn sha1_hex(text: &str) -> String {
    Sha1::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One replicated job as read.
struct ReplicatedJob {
    name: String,
    replicas: usize,
    template: JobTemplateSpec,
    group_name: String,
}

impl ReplicatedJob {
    fn parallelism(&self) -> i32 {
        self.template
            .spec
            .as_ref()
            .and_then(|s| s.parallelism)
            .unwrap_or(1)
    }
    fn pods(&self) -> i64 {
        i64::from(self.parallelism()) * self.replicas as i64
    }
    fn priority_class(&self) -> Option<String> {
        self.template
            .spec
            .as_ref()?
            .template
            .spec
            .as_ref()?
            .priority_class_name
            .clone()
    }
}

/// The scheduling fields of a level (top, an entry, an entry's `job`).
#[derive(Default, Clone)]
struct Level {
    /// `None`: not given; `Some(None)`: gang without minCount;
    /// `Some(Some(n))`: gang of n. Basic is `basic`.
    gang: Option<Option<i32>>,
    basic: bool,
    constraints: Option<PodGroupSchedulingConstraints>,
    disruption: Option<DisruptionMode>,
    claims: Option<Vec<PodGroupResourceClaim>>,
}

impl Level {
    fn read(read: &mut Reader, at: &str, value: &Value) -> Result<Self> {
        let mut level = Level::default();
        if let Some(policy) = get(value, "/schedulingPolicy") {
            let field = format!("{at}.schedulingPolicy");
            match (get(policy, "/gang"), get(policy, "/basic")) {
                (Some(gang), None) => {
                    let at = format!("{field}.gang.minCount");
                    let min = read.int(get(gang, "/minCount"), &at, 0)?;
                    if !(0..=i64::from(i32::MAX)).contains(&min) {
                        bail!("{}: field {at}: must be at least 1, got {min}", read.origin);
                    }
                    level.gang = Some((min > 0).then_some(min as i32));
                }
                (None, Some(_)) => level.basic = true,
                _ => bail!(
                    "{}: field {field}: exactly one of basic and gang",
                    read.origin
                ),
            }
        }
        level.constraints = read.typed(
            &format!("{at}.schedulingConstraints"),
            get(value, "/schedulingConstraints"),
        )?;
        level.disruption = read.typed(
            &format!("{at}.disruptionMode"),
            get(value, "/disruptionMode"),
        )?;
        level.claims = read.typed(
            &format!("{at}.resourceClaims"),
            get(value, "/resourceClaims"),
        )?;
        Ok(level)
    }

    /// This level's fields, those it does not give taken from `outer`.
    fn over(&self, outer: &Level) -> Level {
        let given = self.gang.is_some() || self.basic;
        Level {
            gang: if given { self.gang } else { outer.gang },
            basic: if given { self.basic } else { outer.basic },
            constraints: self
                .constraints
                .clone()
                .or_else(|| outer.constraints.clone()),
            disruption: self.disruption.clone().or_else(|| outer.disruption.clone()),
            claims: self.claims.clone().or_else(|| outer.claims.clone()),
        }
    }

    /// The template of a group of `pods` pods named `name`: a gang's
    /// `minCount` is the one given (refused above `pods`, as JobSet's
    /// webhook refuses it), else `pods`.
    fn template(
        &self,
        read: &Reader,
        name: &str,
        pods: i64,
        priority_class: Option<String>,
    ) -> Result<PodGroupTemplate> {
        let min_count = if self.basic {
            None
        } else {
            let pods = pods.clamp(1, i64::from(i32::MAX)) as i32;
            match self.gang.flatten() {
                Some(min) if min > pods => bail!(
                    "{}: field spec.scheduling: gang minCount {min} is more than the {pods} pods of PodGroup template {name}",
                    read.origin
                ),
                Some(min) => Some(min),
                None => Some(pods),
            }
        };
        Ok(PodGroupTemplate {
            name: name.into(),
            scheduling_policy: super::pods::policy(min_count),
            scheduling_constraints: self.constraints.clone(),
            disruption_mode: self.disruption.clone(),
            resource_claims: self.claims.clone(),
            priority_class_name: priority_class,
            ..Default::default()
        })
    }

    /// This level without an explicit `minCount` (computed from the pods).
    fn computed(&self) -> Level {
        let mut level = self.clone();
        if let Some(Some(_)) = level.gang {
            level.gang = Some(None);
        }
        level
    }
}

/// A JobSet: its Jobs, and its groups (see the module's doc).
pub fn expand(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context.present.made(
        &namespace,
        "JobSet",
        &name,
        "jobset.sigs.k8s.io/jobset-name",
    ) {
        return Ok(Expansion::Present("its Jobs or pods are".into()));
    }
    let value = read.value;
    if read.flag(get(value, "/spec/suspend"), "spec.suspend")? {
        return Ok(Expansion::NoPods("suspended (spec.suspend)".into()));
    }
    let mut jobs = Vec::new();
    for (i, rj) in read
        .list(get(value, "/spec/replicatedJobs"), "spec.replicatedJobs")?
        .iter()
        .enumerate()
    {
        let at = format!("spec.replicatedJobs[{i}]");
        let rj_name = read
            .text(get(rj, "/name"), &format!("{at}.name"))?
            .ok_or_else(|| {
                anyhow!(
                    "{}: field {at}.name: required field is missing",
                    read.origin
                )
            })?
            .to_string();
        let replicas = read.count(get(rj, "/replicas"), &format!("{at}.replicas"), 1)?;
        let template: JobTemplateSpec =
            read.template(&format!("{at}.template"), get(rj, "/template"))?;
        let group_name = read
            .text(get(rj, "/groupName"), &format!("{at}.groupName"))?
            .unwrap_or("default")
            .to_string();
        if jobs.iter().any(|j: &ReplicatedJob| j.name == rj_name) {
            bail!(
                "{}: field {at}.name: {rj_name} names two replicated jobs",
                read.origin
            );
        }
        jobs.push(ReplicatedJob {
            name: rj_name,
            replicas,
            template,
            group_name,
        });
    }
    let total = read.bounded(
        jobs.iter().map(|j| j.replicas as u128).sum(),
        "spec.replicatedJobs[].replicas",
    )?;
    read.bounded(
        jobs.iter()
            .map(|j| j.replicas as u128 * j.parallelism().max(0) as u128)
            .sum(),
        "spec.replicatedJobs[].replicas × parallelism",
    )?;
    if total == 0 {
        return Ok(Expansion::NoPods("no replicated job has replicas".into()));
    }
    let sequenced = get(value, "/spec/startupPolicy/startupPolicyOrder").and_then(Value::as_str)
        == Some("InOrder")
        || read
            .list(get(value, "/spec/replicatedJobs"), "spec.replicatedJobs")?
            .iter()
            .any(|rj| get(rj, "/dependsOn").is_some());
    // The groups: template name → (PodGroup name, template), and which
    // group each (replicated job, index) joins.
    let mut groups: Vec<(String, PodGroupTemplate)> = Vec::new();
    let mut joins: BTreeMap<(String, usize), (String, String)> = BTreeMap::new();
    let workload_name = hashed_name(&name, &short_hash(&format!("JobSet/{namespace}/{name}")));
    let scheduling = get(value, "/spec/scheduling").cloned();
    if let Some(scheduling) = &scheduling {
        for (i, rj) in jobs.iter().enumerate() {
            if super::pods::named_group(&rj.template.spec.clone().unwrap_or_default().template)
                .is_some()
            {
                bail!(
                    "{}: field spec.replicatedJobs[{i}].template.spec.template.spec.schedulingGroup: \
                     cannot be set when spec.scheduling is configured; the JobSet controller manages it",
                    read.origin
                );
            }
        }
        let top = Level::read(read, "spec.scheduling", scheduling)?;
        let entries = read
            .list(
                get(scheduling, "/replicatedJobs"),
                "spec.scheduling.replicatedJobs",
            )?
            .to_vec();
        if !entries.is_empty()
            && (top.gang.is_some()
                || top.basic
                || top.constraints.is_some()
                || top.disruption.is_some())
        {
            bail!(
                "{}: field spec.scheduling: cannot set schedulingPolicy, schedulingConstraints or \
                 disruptionMode together with replicatedJobs",
                read.origin
            );
        }
        let find = |rj: &str| jobs.iter().find(|j| j.name == rj);
        let group_name = |template: &str| {
            let name_text = format!("{name}-{template}");
            if name_text.len() <= 63 {
                name_text
            } else {
                let cut: String = name.chars().take(52).collect();
                format!("{cut}-{}", short_hash(&format!("{name}/{template}")))
            }
        };
        if entries.is_empty() && !top.basic && !sequenced {
            let pods: i64 = jobs.iter().map(ReplicatedJob::pods).sum();
            let priority = jobs.first().and_then(ReplicatedJob::priority_class);
            groups.push((
                workload_name.clone(),
                top.template(read, &workload_name, pods, priority)?,
            ));
            for rj in &jobs {
                for index in 0..rj.replicas {
                    joins.insert(
                        (rj.name.clone(), index),
                        (workload_name.clone(), workload_name.clone()),
                    );
                }
            }
        } else {
            let mut targeted = std::collections::BTreeSet::new();
            for (e, entry) in entries.iter().enumerate() {
                let at = format!("spec.scheduling.replicatedJobs[{e}]");
                let targets: Vec<String> = read
                    .list(
                        get(entry, "/targetReplicatedJobs"),
                        &format!("{at}.targetReplicatedJobs"),
                    )?
                    .iter()
                    .map(|t| t.as_str().unwrap_or_default().to_string())
                    .collect();
                if targets.is_empty() {
                    bail!(
                        "{}: field {at}.targetReplicatedJobs: required field is missing",
                        read.origin
                    );
                }
                for target in &targets {
                    if find(target).is_none() {
                        bail!(
                            "{}: field {at}.targetReplicatedJobs: no replicated job {target}",
                            read.origin
                        );
                    }
                    if !targeted.insert(target.clone()) {
                        bail!(
                            "{}: field {at}.targetReplicatedJobs: {target} is targeted twice",
                            read.origin
                        );
                    }
                }
                let level = Level::read(read, &at, entry)?.over(&top);
                if let Some(job_level) = get(entry, "/job") {
                    let [target] = targets.as_slice() else {
                        bail!("{}: field {at}.job: needs exactly one target", read.origin);
                    };
                    let rj = find(target).expect("checked");
                    let job_level =
                        Level::read(read, &format!("{at}.job"), job_level)?.over(&level);
                    for index in 0..rj.replicas {
                        let template = hashed_name(
                            &format!("{}-{index}", rj.name),
                            &short_hash(&format!("Job/{namespace}/{name}/{}/{index}", rj.name)),
                        );
                        let group = group_name(&template);
                        groups.push((
                            group.clone(),
                            // A Job's gang is its parallelism, whatever minCount says.
                            job_level.computed().template(
                                read,
                                &template,
                                i64::from(rj.parallelism()),
                                rj.priority_class(),
                            )?,
                        ));
                        joins.insert((rj.name.clone(), index), (group, template));
                    }
                } else {
                    let joined = targets.join("-");
                    let template = hashed_name(
                        &joined,
                        &short_hash(&format!("ReplicatedJobGroup/{namespace}/{name}/{joined}")),
                    );
                    let group = group_name(&template);
                    let members: Vec<&ReplicatedJob> =
                        targets.iter().filter_map(|t| find(t)).collect();
                    let pods: i64 = members.iter().map(|j| j.pods()).sum();
                    let priority = members.first().and_then(|j| j.priority_class());
                    // Under sequenced startup an explicit minCount gives way to the pods'.
                    let level = if sequenced { level.computed() } else { level };
                    groups.push((
                        group.clone(),
                        level.template(read, &template, pods, priority)?,
                    ));
                    for rj in members {
                        for index in 0..rj.replicas {
                            joins.insert(
                                (rj.name.clone(), index),
                                (group.clone(), template.clone()),
                            );
                        }
                    }
                }
            }
            // A replicated job's own group is a gang of its pods.
            let top_rj = top.computed();
            for rj in jobs.iter().filter(|j| !targeted.contains(&j.name)) {
                let template = hashed_name(
                    &rj.name,
                    &short_hash(&format!("ReplicatedJob/{namespace}/{name}/{}", rj.name)),
                );
                let group = group_name(&template);
                groups.push((
                    group.clone(),
                    top_rj.template(read, &template, rj.pods(), rj.priority_class())?,
                ));
                for index in 0..rj.replicas {
                    joins.insert((rj.name.clone(), index), (group.clone(), template.clone()));
                }
            }
        }
    }
    let mut objects = Vec::new();
    let mut made = Vec::new();
    if !groups.is_empty() {
        let templates = groups.iter().map(|(_, t)| t.clone()).collect();
        let workload = super::pods::workload(
            &namespace,
            &workload_name,
            ("jobset.x-k8s.io", "JobSet", &meta),
            owner(API_VERSION, "JobSet", &meta),
            templates,
        );
        let (values, said) = super::pods::workload_objects(workload, &groups);
        objects.extend(values);
        made.extend(said);
    }
    let subdomain = read
        .text(
            get(value, "/spec/network/subdomain"),
            "spec.network.subdomain",
        )?
        .unwrap_or(&name)
        .to_string();
    let dns =
        get(value, "/spec/network/enableDNSHostnames").and_then(Value::as_bool) != Some(false);
    let uid = meta.uid.clone();
    let mut job_names = Vec::new();
    let mut global = 0usize;
    // Per group name: its replicas, and the jobs of earlier replicated jobs.
    let mut group_replicas: BTreeMap<&str, usize> = BTreeMap::new();
    for rj in &jobs {
        *group_replicas.entry(&rj.group_name).or_default() += rj.replicas;
    }
    let mut group_before: BTreeMap<&str, usize> = BTreeMap::new();
    for rj in &jobs {
        let before = *group_before.entry(&rj.group_name).or_default();
        *group_before
            .get_mut(rj.group_name.as_str())
            .expect("inserted") += rj.replicas;
        for index in 0..rj.replicas {
            let job_name = format!("{name}-{}-{index}", rj.name);
            let mut template = rj.template.clone();
            let mut marks: Vec<(&str, String)> = vec![
                ("jobset.sigs.k8s.io/jobset-name", name.clone()),
                ("jobset.sigs.k8s.io/replicatedjob-name", rj.name.clone()),
                (
                    "jobset.sigs.k8s.io/replicatedjob-replicas",
                    rj.replicas.to_string(),
                ),
                ("jobset.sigs.k8s.io/global-replicas", total.to_string()),
                ("jobset.sigs.k8s.io/job-index", index.to_string()),
                ("jobset.sigs.k8s.io/job-global-index", global.to_string()),
                (
                    "jobset.sigs.k8s.io/job-key",
                    sha1_hex(&format!("{namespace}/{job_name}")),
                ),
                ("jobset.sigs.k8s.io/restart-attempt", "0".into()),
                ("jobset.sigs.k8s.io/group-name", rj.group_name.clone()),
                (
                    "jobset.sigs.k8s.io/group-replicas",
                    group_replicas[rj.group_name.as_str()].to_string(),
                ),
                (
                    "jobset.sigs.k8s.io/job-group-index",
                    (before + index).to_string(),
                ),
            ];
            if let Some(uid) = &uid {
                marks.push(("jobset.sigs.k8s.io/jobset-uid", uid.clone()));
            }
            global += 1;
            let job_meta = template.metadata.get_or_insert_with(Default::default);
            let spec = template.spec.get_or_insert_with(Default::default);
            let pod_meta = spec.template.metadata.get_or_insert_with(Default::default);
            for (key, val) in &marks {
                for map in [
                    job_meta.labels.get_or_insert_with(Default::default),
                    job_meta.annotations.get_or_insert_with(Default::default),
                    pod_meta.labels.get_or_insert_with(Default::default),
                    pod_meta.annotations.get_or_insert_with(Default::default),
                ] {
                    map.insert((*key).to_string(), val.clone());
                }
            }
            if spec.completion_mode.is_none() {
                spec.completion_mode = Some("Indexed".into());
            }
            let pod_spec = spec.template.spec.get_or_insert_with(Default::default);
            if pod_spec
                .restart_policy
                .as_deref()
                .unwrap_or_default()
                .is_empty()
            {
                pod_spec.restart_policy = Some("OnFailure".into());
            }
            if dns {
                pod_spec.subdomain = Some(subdomain.clone());
            }
            if let Some((group, template_name)) = joins.get(&(rj.name.clone(), index)) {
                pod_spec.scheduling_group = Some(PodSchedulingGroup {
                    pod_group_name: Some(group.clone()),
                });
                job_meta
                    .annotations
                    .get_or_insert_with(Default::default)
                    .insert(
                        "scheduling.k8s.io/group-template-name".into(),
                        template_name.clone(),
                    );
            }
            let mut job_meta = job_meta.clone();
            job_meta.name = Some(job_name.clone());
            job_meta.namespace = Some(namespace.clone());
            job_meta.creation_timestamp = meta.creation_timestamp.clone();
            job_meta.owner_references = Some(vec![owner(API_VERSION, "JobSet", &meta)]);
            let job = Job {
                metadata: job_meta,
                spec: template.spec.clone(),
                status: None,
            };
            objects.push(manifest("batch/v1", "Job", &job));
            job_names.push(job_name);
        }
    }
    made.push(match job_names.as_slice() {
        [one] => format!("Job {one}"),
        [first, .., last] => format!("{} Jobs {first} … {last}", job_names.len()),
        [] => "no Jobs".into(),
    });
    Ok(Expansion::Made { objects, made })
}
