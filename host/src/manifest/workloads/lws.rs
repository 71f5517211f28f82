//! `leaderworkerset.x-k8s.io/v1` LeaderWorkerSet, as the LWS controller
//! expands it (`pkg/controllers/leaderworkerset_controller.go`,
//! `pod_controller.go`, `pkg/webhooks/pod_webhook.go`): `spec.replicas`
//! (default 1) groups of `leaderWorkerTemplate.size` (default 1) pods — the
//! leader `<lws>-<group>` from `leaderTemplate` (the worker template when
//! absent) and workers `<lws>-<group>-<worker>` (1 … size − 1) from
//! `workerTemplate` — labelled `leaderworkerset.sigs.k8s.io/name`,
//! `group-index`, `worker-index`, `group-key` (SHA-1 of
//! `<ns>/<leader>`) and `template-revision-hash`, with `subdomain` the
//! LWS's name.
//!
//! Gang scheduling is configured in the LWS controller
//! (`gangSchedulingManagement`), not on the object: wasched takes it from
//! `--gang-scheduling-for LeaderWorkerSet`, or from the object's own
//! `spec.scheduling` (the workload-aware-scheduling provider of KEP-666).
//! Either gives what that provider makes: one Workload `<lws>` with one
//! template `replica` (`gang.minCount` = `size`, the leader template's
//! priority class) and one PodGroup `<lws>-<group>-<revision>` per
//! replica. The controller's revision hash is FNV over the API server's
//! defaulted template; wasched's is of the same shape over the template
//! as written ([`super::apps::template_hash`]).

use anyhow::{Result, bail};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::api::scheduling::v1beta1::{
    DisruptionMode, PodGroupResourceClaim, PodGroupSchedulingConstraints, PodGroupTemplate,
};
use serde_json::Value;
use sha1::{Digest, Sha1};

use super::pods::{owner, pod, pods_text, policy, workload, workload_objects};
use super::{Context, ControllerKind, Expansion, Reader, get, manifest};

const API_VERSION: &str = "leaderworkerset.x-k8s.io/v1";
const LABEL: &str = "leaderworkerset.sigs.k8s.io";

/// A LeaderWorkerSet: its groups' pods, and a gang per group when gang
/// scheduling is on.
pub fn expand(context: &Context, read: &mut Reader) -> Result<Expansion> {
    let (meta, namespace, name) = read.identity()?;
    if context.present.made(
        &namespace,
        "LeaderWorkerSet",
        &name,
        &format!("{LABEL}/name"),
    ) {
        return Ok(Expansion::Present("its pods are".into()));
    }
    let value = read.value;
    let replicas = read.count(get(value, "/spec/replicas"), "spec.replicas", 1)?;
    if replicas == 0 {
        return Ok(Expansion::NoPods("spec.replicas is 0".into()));
    }
    let at = "spec.leaderWorkerTemplate";
    let size = read.count(
        get(value, "/spec/leaderWorkerTemplate/size"),
        &format!("{at}.size"),
        1,
    )?;
    if size == 0 {
        bail!("{}: field {at}.size: must be at least 1", read.origin);
    }
    read.bounded(
        replicas as u128 * size as u128,
        "spec.replicas × spec.leaderWorkerTemplate.size",
    )?;
    let worker: PodTemplateSpec = read.template(
        &format!("{at}.workerTemplate"),
        get(value, "/spec/leaderWorkerTemplate/workerTemplate"),
    )?;
    let leader: PodTemplateSpec = read
        .typed(
            &format!("{at}.leaderTemplate"),
            get(value, "/spec/leaderWorkerTemplate/leaderTemplate"),
        )?
        .unwrap_or_else(|| worker.clone());
    let revision = super::apps::template_hash(&get(value, "/spec/leaderWorkerTemplate"));
    let scheduling = get(value, "/spec/scheduling");
    let gang = scheduling.is_some()
        || context
            .options
            .gang_scheduling
            .contains(&ControllerKind::LeaderWorkerSet);
    if gang {
        for (template, field) in [(&leader, "leaderTemplate"), (&worker, "workerTemplate")] {
            if super::pods::named_group(template).is_some() {
                bail!(
                    "{}: field spec.leaderWorkerTemplate.{field}.spec.schedulingGroup: managed pod \
                     templates must not set it when the LWS is gang-scheduled",
                    read.origin
                );
            }
        }
        if get(value, "/spec/startupPolicy").and_then(Value::as_str) == Some("LeaderReady") {
            bail!(
                "{}: field spec.startupPolicy: LeaderReady cannot be gang-scheduled (the leader \
                 starts before its workers exist)",
                read.origin
            );
        }
    }
    // `UniquePerReplica`: each group's pods in a subdomain of the leader's name.
    let unique_subdomain = get(value, "/spec/networkConfig/subdomainPolicy")
        .and_then(Value::as_str)
        == Some("UniquePerReplica");
    let mut objects = Vec::new();
    let mut made = Vec::new();
    let mut group_names = Vec::new();
    if gang {
        let priority = leader
            .spec
            .as_ref()
            .and_then(|s| s.priority_class_name.clone())
            .or_else(|| {
                worker
                    .spec
                    .as_ref()
                    .and_then(|s| s.priority_class_name.clone())
            });
        let template = group_template(read, scheduling, size, priority)?;
        let groups: Vec<(String, PodGroupTemplate)> = (0..replicas)
            .map(|g| (format!("{name}-{g}-{revision}"), template.clone()))
            .collect();
        group_names = groups.iter().map(|(g, _)| g.clone()).collect();
        let workload = workload(
            &namespace,
            &name,
            ("leaderworkerset.x-k8s.io", "LeaderWorkerSet", &meta),
            owner(API_VERSION, "LeaderWorkerSet", &meta),
            vec![template],
        );
        let (values, said) = workload_objects(workload, &groups);
        objects.extend(values);
        made.extend(said);
    }
    let mut pod_names = Vec::new();
    for g in 0..replicas {
        let leader_name = format!("{name}-{g}");
        let key: String = Sha1::digest(format!("{namespace}/{leader_name}").as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let group = group_names.get(g).map(String::as_str);
        for w in 0..size {
            let (template, pod_name) = if w == 0 {
                (&leader, leader_name.clone())
            } else {
                (&worker, format!("{leader_name}-{w}"))
            };
            let mut made_pod = pod(
                template,
                &namespace,
                pod_name.clone(),
                owner(API_VERSION, "LeaderWorkerSet", &meta),
                &[
                    (format!("{LABEL}/name"), name.clone()),
                    (format!("{LABEL}/group-index"), g.to_string()),
                    (format!("{LABEL}/worker-index"), w.to_string()),
                    (format!("{LABEL}/group-key"), key.clone()),
                    (format!("{LABEL}/template-revision-hash"), revision.clone()),
                ],
                &meta,
                group,
            );
            let annotations = made_pod
                .metadata
                .annotations
                .get_or_insert_with(Default::default);
            annotations.insert(format!("{LABEL}/size"), size.to_string());
            if w > 0 {
                annotations.insert(format!("{LABEL}/leader-name"), leader_name.clone());
            }
            if let Some(spec) = made_pod.spec.as_mut() {
                spec.hostname = Some(pod_name.clone());
                spec.subdomain = Some(if unique_subdomain {
                    leader_name.clone()
                } else {
                    name.clone()
                });
            }
            objects.push(manifest("v1", "Pod", &made_pod));
            pod_names.push(pod_name);
        }
    }
    made.push(pods_text(&pod_names));
    Ok(Expansion::Made { objects, made })
}

/// The `replica` template: `spec.scheduling` if given (gang `minCount`
/// must be `size`, as LWS validates), else a gang of `size`.
fn group_template(
    read: &mut Reader,
    scheduling: Option<&Value>,
    size: usize,
    priority: Option<String>,
) -> Result<PodGroupTemplate> {
    let size = i32::try_from(size).unwrap_or(i32::MAX);
    let mut template = PodGroupTemplate {
        name: "replica".into(),
        scheduling_policy: policy(Some(size)),
        priority_class_name: priority,
        ..Default::default()
    };
    let Some(scheduling) = scheduling else {
        return Ok(template);
    };
    let at = "spec.scheduling";
    if get(scheduling, "/schedulingPolicy/basic").is_some() {
        template.scheduling_policy = policy(None);
    } else if let Some(min) = get(scheduling, "/schedulingPolicy/gang/minCount") {
        let min = read.int(
            Some(min),
            &format!("{at}.schedulingPolicy.gang.minCount"),
            0,
        )?;
        if min != i64::from(size) {
            bail!(
                "{}: field {at}.schedulingPolicy.gang.minCount: must equal leaderWorkerTemplate.size ({size}), got {min}",
                read.origin
            );
        }
    }
    template.scheduling_constraints = read.typed::<PodGroupSchedulingConstraints>(
        &format!("{at}.schedulingConstraints"),
        get(scheduling, "/schedulingConstraints"),
    )?;
    template.disruption_mode = read.typed::<DisruptionMode>(
        &format!("{at}.disruptionMode"),
        get(scheduling, "/disruptionMode"),
    )?;
    template.resource_claims = read.typed::<Vec<PodGroupResourceClaim>>(
        &format!("{at}.resourceClaims"),
        get(scheduling, "/resourceClaims"),
    )?;
    Ok(template)
}
