//! Workloads as users submit them (`testdata/workloads/`): each kind
//! expanded as its controller would — names, groups, counts and the note —
//! and scheduled; earlier versions of the workload API converted; nothing
//! vanishes from the output.

mod common;

use std::path::PathBuf;

use wasched::{Outcome, ReadOptions, Simulation};

fn files(names: &[&str]) -> Vec<PathBuf> {
    let mut all = vec![common::testdata("dialects/nodes.yaml")];
    all.extend(names.iter().map(|n| common::testdata("workloads").join(n)));
    all
}

fn run_with(names: &[&str], read: ReadOptions) -> Outcome {
    Simulation {
        files: files(names),
        read,
        ..Simulation::default()
    }
    .run(common::runtime())
    .unwrap_or_else(|e| panic!("{e:#}"))
    .outcome
}

fn run(name: &str) -> Outcome {
    run_with(&[name], ReadOptions::default())
}

fn gang_for(kind: wasched::manifest::ControllerKind) -> ReadOptions {
    ReadOptions {
        controllers: wasched::manifest::ControllerOptions {
            gang_scheduling: [kind].into(),
        },
        ..ReadOptions::default()
    }
}

fn note<'a>(outcome: &'a Outcome, prefix: &str) -> &'a str {
    outcome
        .notes
        .iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no note {prefix:?}: {:#?}", outcome.notes))
}

/// The pods bound or pending whose name starts with `prefix`, sorted.
fn pods(outcome: &Outcome, prefix: &str) -> Vec<String> {
    let mut all: Vec<String> = outcome
        .placements
        .iter()
        .map(|b| b.pod.clone())
        .chain(outcome.unschedulable.iter().map(|u| u.pod.clone()))
        .filter(|p| p.starts_with(prefix))
        .collect();
    all.sort();
    all
}

/// (bound, minCount, admitted) of a group.
fn gang(outcome: &Outcome, key: &str) -> (u32, Option<u32>, bool) {
    let g = common::group(outcome, key);
    (g.bound, g.min_count, g.scheduled)
}

/// Loads `text` (after the shared nodes) and returns the error.
fn error(text: &str) -> String {
    let dir = common::tempdir("workloads");
    let file = dir.join("bad.yaml");
    std::fs::write(&file, text).unwrap();
    let err = wasched::read_snapshot(&[common::testdata("dialects/nodes.yaml"), file.clone()])
        .unwrap_err();
    let err = format!("{err:#}");
    assert!(
        err.starts_with(&file.display().to_string()),
        "names the file: {err}"
    );
    err
}

#[test]
fn a_jobset_with_a_top_level_gang_is_one_podgroup_of_all_its_pods() {
    let out = run("jobset.yaml");
    // The controller's name: <jobset>-<first 10 hex of SHA-1 of "JobSet/ml/pytorch">.
    let n = note(
        &out,
        "JobSet ml/pytorch: expanded as the JobSet controller would",
    );
    assert!(
        n.contains("Workload ml/pytorch-6ff7d660f4, PodGroup ml/pytorch-6ff7d660f4 (gang minCount 5), 3 Jobs pytorch-driver-0 … pytorch-workers-1"),
        "{n}"
    );
    assert_eq!(gang(&out, "ml/pytorch-6ff7d660f4"), (5, Some(5), true));
    assert_eq!(pods(&out, "ml/pytorch-").len(), 5);
    let second = pods(&out, "ml/pytorch-workers-1-");
    assert_eq!(second.len(), 2, "{second:?}");
    assert!(
        second[0].starts_with("ml/pytorch-workers-1-0-")
            && second[1].starts_with("ml/pytorch-workers-1-1-"),
        "{second:?}"
    );
    note(
        &out,
        "Job ml/pytorch-workers-0: expanded as the v1.37 Job controller would: no Workload of its own (its pod template names PodGroup pytorch-6ff7d660f4)",
    );
    // No spec.scheduling: JobSet makes no group; each Job is the Job controller's basic group.
    let plain = note(&out, "JobSet ml/plain: ");
    assert!(
        plain.ends_with(": 2 Jobs plain-workers-0 … plain-workers-1"),
        "{plain}"
    );
    assert_eq!(gang(&out, "ml/plain-workers-0"), (1, None, true));
    assert_eq!(gang(&out, "ml/plain-workers-1"), (1, None, true));
}

#[test]
fn jobset_entries_make_a_podgroup_per_entry_or_per_job() {
    let out = run("jobset-per-replicated-job.yaml");
    let n = note(&out, "JobSet ml/mpi: ");
    assert!(
        n.contains("PodGroup ml/mpi-launcher-f4b4a4a0d7 (basic), PodGroup ml/mpi-worker-ad04dc4660 (gang minCount 3)"),
        "{n}"
    );
    assert_eq!(gang(&out, "ml/mpi-worker-ad04dc4660"), (3, Some(3), true));
    assert_eq!(gang(&out, "ml/mpi-launcher-f4b4a4a0d7"), (1, None, true));
    // `job`: one gang per Job, each inside one rack.
    let a = common::group(&out, "ml/slices-slice-0-c16660d3ce");
    let b = common::group(&out, "ml/slices-slice-1-ec46cd5867");
    assert_eq!(
        (a.bound, a.min_count, b.bound, b.min_count),
        (2, Some(2), 2, Some(2))
    );
    assert!(
        a.placement.as_deref().unwrap().starts_with("rack="),
        "{a:?}"
    );
    assert!(
        b.placement.as_deref().unwrap().starts_with("rack="),
        "{b:?}"
    );
}

#[test]
fn a_gang_that_does_not_fit_stays_pending_whole() {
    let text = std::fs::read_to_string(common::testdata("workloads/jobset.yaml"))
        .unwrap()
        .replace("replicas: 2\n    template:\n      spec:\n        parallelism: 2\n        completions: 2", "replicas: 5\n    template:\n      spec:\n        parallelism: 2\n        completions: 2");
    let out = run_text("workloads-big", &text);
    // 10 workers of 2 GPUs on 16 GPUs: the gang of 11 is not admitted, nothing of it binds.
    let g = common::group(&out, "ml/pytorch-6ff7d660f4");
    assert_eq!(
        (g.bound, g.pending, g.min_count, g.scheduled),
        (0, 11, Some(11), false)
    );
    assert!(
        g.reason.contains("minCount (11) cannot be satisfied"),
        "{}",
        g.reason
    );
    assert!(
        pods(&out, "ml/pytorch-")
            .iter()
            .all(|p| out.unschedulable.iter().any(|u| &u.pod == p))
    );
}

#[test]
fn a_jobset_template_naming_a_group_is_refused_while_it_schedules_itself() {
    let text = std::fs::read_to_string(common::testdata("workloads/jobset.yaml"))
        .unwrap()
        .replacen(
            "            restartPolicy: Never\n",
            "            restartPolicy: Never\n            schedulingGroup: {podGroupName: mine}\n",
            1,
        );
    let err = error(&text);
    assert!(
        err.contains("JobSet ml/pytorch: field spec.replicatedJobs[0].template.spec.template.spec.schedulingGroup: cannot be set when spec.scheduling is configured"),
        "{err}"
    );
}

#[test]
fn a_leaderworkerset_is_a_gang_per_replica_when_its_controller_gangs() {
    let plain = run("leaderworkerset.yaml");
    assert_eq!(
        pods(&plain, "serving/"),
        [
            "serving/vllm-0",
            "serving/vllm-0-1",
            "serving/vllm-0-2",
            "serving/vllm-0-3",
            "serving/vllm-1",
            "serving/vllm-1-1",
            "serving/vllm-1-2",
            "serving/vllm-1-3"
        ]
    );
    assert!(
        plain.pod_groups.is_empty(),
        "no gang unless the controller is configured to"
    );
    let out = run_with(
        &["leaderworkerset.yaml"],
        gang_for(wasched::manifest::ControllerKind::LeaderWorkerSet),
    );
    let n = note(&out, "LeaderWorkerSet serving/vllm: ");
    assert!(
        n.contains("Workload serving/vllm, PodGroup serving/vllm-0-"),
        "{n}"
    );
    let groups: Vec<_> = out
        .pod_groups
        .iter()
        .map(|g| (g.bound, g.min_count, g.scheduled))
        .collect();
    assert_eq!(groups, [(4, Some(4), true), (4, Some(4), true)]);
}

#[test]
fn a_raycluster_with_the_gang_label_is_one_gang_of_head_and_workers() {
    let out = run("raycluster.yaml");
    let n = note(
        &out,
        "RayCluster ray/raycluster-kuberay: expanded as the KubeRay operator would",
    );
    assert!(n.contains("Workload ray/raycluster-kuberay, PodGroup ray/raycluster-kuberay-cluster (gang minCount 4)"), "{n}");
    assert_eq!(
        gang(&out, "ray/raycluster-kuberay-cluster"),
        (4, Some(4), true)
    );
    let names = pods(&out, "ray/raycluster-kuberay-");
    assert_eq!(
        names
            .iter()
            .filter(|p| p.starts_with("ray/raycluster-kuberay-head-"))
            .count(),
        1
    );
    assert_eq!(
        names
            .iter()
            .filter(|p| p.starts_with("ray/raycluster-kuberay-gpu-group-worker-"))
            .count(),
        3
    );
    // The RayJob's cluster: a head and 2 workers, no gang (no label).
    let job = note(
        &out,
        "RayJob ray/rayjob-sample: expanded as the KubeRay operator would: RayCluster ray/rayjob-sample-",
    );
    assert!(
        job.contains("submitter Job starts once the cluster is ready"),
        "{job}"
    );
    assert_eq!(pods(&out, "ray/rayjob-sample-").len(), 3);
    // Suspended: appears, with the reason.
    let idle = out
        .without_pods
        .iter()
        .find(|w| w.name == "ray/idle")
        .expect("ray/idle in the output");
    assert_eq!(
        (idle.kind.as_str(), idle.reason.as_str()),
        ("RayCluster", "suspended (spec.suspend)")
    );
    let table = out.to_table();
    assert!(
        table.lines().any(|l| l.starts_with("RayCluster ")
            && l.contains(" ray/idle ")
            && l.contains(" no pods ")),
        "{table}"
    );
}

#[test]
fn a_pytorchjob_is_its_master_and_workers_and_a_gang_when_configured() {
    let out = run("pytorchjob.yaml");
    assert_eq!(
        pods(&out, "kubeflow/"),
        [
            "kubeflow/pytorch-simple-master-0",
            "kubeflow/pytorch-simple-worker-0",
            "kubeflow/pytorch-simple-worker-1"
        ]
    );
    assert!(out.pod_groups.is_empty());
    let out = run_with(
        &["pytorchjob.yaml"],
        gang_for(wasched::manifest::ControllerKind::PyTorchJob),
    );
    assert_eq!(gang(&out, "kubeflow/pytorch-simple"), (3, Some(3), true));
}

#[test]
fn a_trainjob_is_its_runtimes_jobset_and_a_missing_runtime_is_said() {
    let out = run("trainjob.yaml");
    let n = note(&out, "TrainJob team-a/fine-tune: ");
    assert!(n.contains("PodGroup team-a/fine-tune (gang minCount 3, from the runtime's podGroupPolicy), JobSet team-a/fine-tune from ClusterTrainingRuntime torch-distributed (3 node(s))"), "{n}");
    assert_eq!(gang(&out, "team-a/fine-tune"), (3, Some(3), true));
    assert_eq!(pods(&out, "team-a/fine-tune-node-0-").len(), 3);
    // resourcesPerNode reached the container `node`: 2 GPUs each, at most 2 pods per 4-GPU node.
    let mut per_node = std::collections::BTreeMap::new();
    for b in out
        .placements
        .iter()
        .filter(|b| b.pod.starts_with("team-a/"))
    {
        *per_node.entry(b.node.as_str()).or_insert(0) += 1;
    }
    assert!(per_node.values().all(|&n| n <= 2), "{per_node:?}");
    let orphan = out
        .without_pods
        .iter()
        .find(|w| w.name == "team-a/orphan")
        .unwrap();
    assert_eq!(
        orphan.reason,
        "its runtime ClusterTrainingRuntime deepspeed-distributed is not in the snapshot"
    );
}

#[test]
fn a_volcano_job_is_its_tasks_in_one_gang_of_min_available() {
    let out = run("volcano-job.yaml");
    let key = "default/tensorflow-dist-mnist-1d5a2b2c-8f4e-4f3a-9c11-2e8a5f6b7c01";
    assert_eq!(gang(&out, key), (4, Some(4), true));
    assert_eq!(
        pods(&out, "default/tensorflow"),
        [
            "default/tensorflow-dist-mnist-ps-0",
            "default/tensorflow-dist-mnist-worker-0",
            "default/tensorflow-dist-mnist-worker-1",
            "default/tensorflow-dist-mnist-worker-2"
        ]
    );
    let n = note(
        &out,
        "Job default/tensorflow-dist-mnist: expanded as the Volcano job controller would",
    );
    assert!(
        n.contains("from spec.minAvailable")
            && n.contains("scheduler volcano read as default-scheduler"),
        "{n}"
    );
}

#[test]
fn replicasets_deployments_and_statefulsets_make_their_pods() {
    let out = run("apps.yaml");
    // The Coscheduling label on the ReplicaSet's template joins its pods to the group.
    assert_eq!(gang(&out, "default/nginx"), (4, Some(3), true));
    assert_eq!(pods(&out, "default/nginx-").len(), 4);
    let web = pods(&out, "default/web-");
    assert_eq!(web.len(), 2);
    let rs = note(&out, "Deployment default/web: ");
    let hash = rs
        .split("ReplicaSet default/web-")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert!(
        web.iter()
            .all(|p| p.starts_with(&format!("default/web-{hash}-"))),
        "{web:?} {hash}"
    );
    assert_eq!(pods(&out, "default/db-"), ["default/db-0", "default/db-1"]);
    let parked = out
        .without_pods
        .iter()
        .find(|w| w.name == "default/parked")
        .unwrap();
    assert_eq!(
        (parked.kind.as_str(), parked.reason.as_str()),
        ("Deployment", "spec.replicas is 0")
    );
}

#[test]
fn kueue_groups_are_quota_admission_and_kai_groups_gangs() {
    let out = run("kueue-kai.yaml");
    let n = note(&out, "Kueue pod group default/sample: ");
    assert_eq!(
        n,
        "Kueue pod group default/sample: 2 pod(s) of total count 2 read as plain pods: a quota-admission group (Kueue admits it whole), not a placement gang; 1 held by the scheduling gate kueue.x-k8s.io/admission until Kueue admits the group"
    );
    assert_eq!(pods(&out, "default/sample"), ["default/sample-worker"]);
    let kai = note(
        &out,
        "PodGroup default/distributed-training (KAI-Scheduler scheduling.run.ai/v2alpha2): ",
    );
    assert!(
        kai.contains("spec.minMember 2 read as schedulingPolicy.gang.minCount"),
        "{kai}"
    );
    assert_eq!(
        gang(&out, "default/distributed-training"),
        (2, Some(2), true)
    );
}

#[test]
fn kai_subgroups_are_a_composite_of_one_gang_each() {
    let mut text = String::from(
        "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: llm, namespace: ai}\n\
         spec:\n  queue: research\n  subGroups:\n  - {name: prefill, minMember: 2}\n  - {name: decode, minMember: 1}\n",
    );
    for (pod, sub) in [("p0", "prefill"), ("p1", "prefill"), ("d0", "decode")] {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {pod}\n  namespace: ai\n  annotations: {{pod-group-name: llm}}\n  labels: {{kai.scheduler/subgroup-name: {sub}}}\n\
             spec:\n  schedulerName: kai-scheduler\n  containers: [{{name: m, image: x, resources: {{limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n"
        ));
    }
    let out = run_text("kai", &text);
    let n = note(&out, "PodGroup ai/llm (KAI-Scheduler");
    assert!(n.contains("CompositePodGroup ai/llm (gang minGroupCount 2) over PodGroups ai/llm-prefill (gang minCount 2), ai/llm-decode (gang minCount 1)"), "{n}");
    assert_eq!(gang(&out, "ai/llm-prefill"), (2, Some(2), true));
    assert_eq!(gang(&out, "ai/llm-decode"), (1, Some(1), true));
}

#[test]
fn earlier_workload_api_versions_are_converted_with_a_note() {
    let out = run("versions.yaml");
    note(
        &out,
        "PodGroup api/three-workers: scheduling.k8s.io/v1alpha3 read as scheduling.k8s.io/v1beta1",
    );
    let two = note(
        &out,
        "PodGroup api/training-job-workers: scheduling.k8s.io/v1alpha2 converted",
    );
    assert!(two.contains("spec.podGroupTemplateRef.workload {workloadName, podGroupTemplateName} read as spec.workloadRef {workloadName, templateName}"), "{two}");
    assert!(
        two.contains("spec.disruptionMode Pod|PodGroup read as {single: {}}|{all: {}}"),
        "{two}"
    );
    note(
        &out,
        "Workload api/one: scheduling.k8s.io/v1alpha1 converted",
    );
    note(
        &out,
        "PodGroup api/one-pg-a: made for 2 pod(s) naming Workload one pod group pg, replica key a",
    );
    for key in [
        "api/three-workers",
        "api/training-job-workers",
        "api/one-pg-a",
        "api/one-pg-b",
    ] {
        assert_eq!(gang(&out, key), (2, Some(2), true), "{key}");
    }
    // A PodGroup no pod joins does not vanish.
    let empty = common::group(&out, "api/empty");
    assert!(!empty.scheduled);
    assert_eq!(
        empty.reason,
        "no pod of the snapshot joins it (spec.schedulingGroup.podGroupName): PreEnqueue holds it until minCount (2) pods exist"
    );
    let table = out.to_table();
    assert!(
        table.lines().any(|l| l.starts_with("PodGroup ")
            && l.contains(" api/empty ")
            && l.contains(" pending ")),
        "{table}"
    );
}

#[test]
fn a_field_with_no_counterpart_is_refused_by_name() {
    let err = error(
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\n\
         spec:\n  podGroupTemplateRef: {workload: {workloadName: w, podGroupTemplateName: t, replica: 1}}\n  schedulingPolicy: {basic: {}}\n",
    );
    assert!(err.contains("PodGroup ns/g: field spec.podGroupTemplateRef.workload.replica: has no counterpart in scheduling.k8s.io/v1beta1, refused"), "{err}");
    let err = error(
        "apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: w, namespace: ns}\n\
         spec:\n  podGroups: [{name: pg, policy: {basic: {}}, minResources: {cpu: 1}}]\n",
    );
    assert!(
        err.contains("Workload ns/w: field spec.podGroups[0].minResources: has no counterpart"),
        "{err}"
    );
    let err = error(
        "apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {}\n",
    );
    assert!(
        err.contains("scheduling.k8s.io/v1alpha1 has no PodGroup kind"),
        "{err}"
    );
    let err = error(
        "apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\n\
         spec: {schedulingPolicy: {basic: {}}, disruptionMode: Everything}\n",
    );
    assert!(
        err.contains("field spec.disruptionMode: \"Everything\" is not a v1alpha2 disruption mode"),
        "{err}"
    );
}

#[test]
fn a_controller_whose_pods_exist_is_not_expanded_again() {
    let jobset = std::fs::read_to_string(common::testdata("workloads/jobset.yaml")).unwrap();
    let pod = "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pytorch-driver-0-0-abcde\n  namespace: ml\n  labels: {jobset.sigs.k8s.io/jobset-name: pytorch}\n\
               spec:\n  nodeName: gpu-a-0\n  containers: [{name: d, image: x, resources: {requests: {cpu: \"2\"}}}]\n";
    let out = run_text("present", &format!("{jobset}{pod}"));
    assert_eq!(
        note(&out, "JobSet ml/pytorch: "),
        "JobSet ml/pytorch: its Jobs or pods are in the snapshot, used as they are"
    );
    assert!(
        out.pod_groups
            .iter()
            .all(|g| !g.pod_group.starts_with("ml/pytorch")),
        "{:#?}",
        out.pod_groups
    );
    assert!(
        pods(&out, "ml/pytorch-").is_empty(),
        "{:?}",
        pods(&out, "ml/pytorch-")
    );
}

/// Runs the shared nodes and `text` as one more file.
fn run_text(label: &str, text: &str) -> Outcome {
    let dir = common::tempdir(label);
    let file = dir.join(format!("{label}.yaml"));
    std::fs::write(&file, text).unwrap();
    Simulation {
        files: vec![common::testdata("dialects/nodes.yaml"), file],
        ..Simulation::default()
    }
    .run(common::runtime())
    .unwrap_or_else(|e| panic!("{e:#}"))
    .outcome
}

#[test]
fn a_deployment_whose_replicaset_is_in_the_snapshot_is_expanded_once() {
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n\
                spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: w, image: x}]}\n\
                ---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-7d4b9c8f5\n  namespace: default\n  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u}]\n\
                spec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web, pod-template-hash: 7d4b9c8f5}}\n    spec: {containers: [{name: w, image: x}]}\n";
    let out = run_text("deployment-rs", text);
    note(
        &out,
        "Deployment default/web: its ReplicaSet or pods are in the snapshot, used as they are",
    );
    let made = pods(&out, "default/web-");
    assert_eq!(made.len(), 2, "{made:?}");
    assert!(
        made.iter().all(|p| p.starts_with("default/web-7d4b9c8f5-")),
        "{made:?}"
    );
}

#[test]
fn a_queued_volcano_jobs_podgroup_is_used_as_it_is() {
    let job = std::fs::read_to_string(common::testdata("workloads/volcano-job.yaml")).unwrap();
    let group = "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata:\n  name: tensorflow-dist-mnist-1d5a2b2c-8f4e-4f3a-9c11-2e8a5f6b7c01\n  namespace: default\nspec: {minMember: 3}\n";
    let out = run_text("volcano-queued", &format!("{job}{group}"));
    let key = "default/tensorflow-dist-mnist-1d5a2b2c-8f4e-4f3a-9c11-2e8a5f6b7c01";
    // The snapshot's group (minMember 3) decides, not a second one.
    assert_eq!(gang(&out, key), (4, Some(3), true));
    let n = note(&out, "Job default/tensorflow-dist-mnist: ");
    assert!(
        n.contains(&format!("PodGroup {key} in the snapshot, used as it is")),
        "{n}"
    );
}

#[test]
fn kais_annotation_is_read_on_kai_pods_only() {
    let text = "apiVersion: scheduling.run.ai/v2alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ai}\nspec: {minMember: 2}\n\
                ---\napiVersion: v1\nkind: Pod\nmetadata: {name: kai, namespace: ai, annotations: {pod-group-name: g}}\n\
                spec: {schedulerName: kai-scheduler, containers: [{name: m, image: x}]}\n\
                ---\napiVersion: v1\nkind: Pod\nmetadata: {name: other, namespace: ai, annotations: {pod-group-name: g}}\n\
                spec: {containers: [{name: m, image: x}]}\n";
    let out = run_text("kai-only", text);
    // One member (the KAI pod): the gang of 2 waits; the other is a lone pod, bound.
    let g = common::group(&out, "ai/g");
    assert_eq!((g.pending, g.scheduled), (1, false), "{g:?}");
    assert!(
        out.placements.iter().any(|b| b.pod == "ai/other"),
        "{:#?}",
        out.placements
    );
}

#[test]
fn an_object_that_would_make_too_many_pods_is_refused_by_name() {
    let text = std::fs::read_to_string(common::testdata("workloads/leaderworkerset.yaml"))
        .unwrap()
        .replace("replicas: 2", "replicas: 1000000");
    let err = error(&text);
    assert!(
        err.contains("LeaderWorkerSet serving/vllm: field spec.replicas × spec.leaderWorkerTemplate.size: makes 4000000 pods, more than the 100000 wasched expands one object into"),
        "{err}"
    );
}

#[test]
fn an_mpi_runtime_sets_the_node_count_on_its_node_job() {
    let text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: deepspeed, namespace: t}\n\
                spec:\n  mlPolicy: {numNodes: 1, mpi: {runLauncherAsNode: true}}\n  template:\n    spec:\n      replicatedJobs:\n\
                \x20     - name: launcher\n        template:\n          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n\
                \x20         spec: {template: {spec: {containers: [{name: node, image: ds}]}}}\n\
                \x20     - name: node\n        template:\n          spec: {template: {spec: {containers: [{name: node, image: ds}]}}}\n\
                ---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: ds, namespace: t}\n\
                spec: {runtimeRef: {name: deepspeed, kind: TrainingRuntime}, trainer: {numNodes: 4}}\n";
    let out = run_text("mpi", text);
    // runLauncherAsNode: the launcher is one of the 4 nodes, so 3 in `node`.
    assert_eq!(
        pods(&out, "t/ds-node-0-").len(),
        3,
        "{:?}",
        pods(&out, "t/")
    );
    assert_eq!(
        pods(&out, "t/ds-launcher-0-").len(),
        1,
        "{:?}",
        pods(&out, "t/")
    );
}

#[test]
fn an_unknown_field_in_a_template_is_named_with_its_whole_path() {
    let text = std::fs::read_to_string(common::testdata("workloads/leaderworkerset.yaml"))
        .unwrap()
        .replace(
            "        - name: vllm-worker\n",
            "        - name: vllm-worker\n          resource: {}\n",
        );
    let out = run_text("unknown", &text);
    assert!(
        out.warnings.iter().any(|w| w.contains(
            "unknown field \"spec.leaderWorkerTemplate.workerTemplate.spec.containers[0].resource\""
        )),
        "{:#?}",
        out.warnings
    );
}

#[test]
fn expansions_are_byte_identical_run_to_run() {
    let all = [
        "jobset.yaml",
        "jobset-per-replicated-job.yaml",
        "leaderworkerset.yaml",
        "raycluster.yaml",
        "pytorchjob.yaml",
        "trainjob.yaml",
        "volcano-job.yaml",
        "apps.yaml",
        "kueue-kai.yaml",
        "versions.yaml",
    ];
    let a = run_with(&all, ReadOptions::default()).to_json();
    let b = run_with(&all, ReadOptions::default()).to_json();
    assert_eq!(a, b);
}
