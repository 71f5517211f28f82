//! Other dialects and Jobs read into the v1.37 model: each mapping, with its
//! note, and each rejection, with a message naming file, object and field.

mod common;

use std::path::PathBuf;

use wasched::{Outcome, PluginConfig, ReadOptions, Simulation};

fn dialect(name: &str) -> PathBuf {
    common::testdata("dialects").join(name)
}

fn run_with(files: &[&str], options: &ReadOptions) -> Outcome {
    let simulation = Simulation {
        files: files.iter().map(|f| dialect(f)).collect(),
        read: options.clone(),
        ..Simulation::default()
    };
    simulation
        .run(common::runtime())
        .unwrap_or_else(|e| panic!("{e:#}"))
        .outcome
}

fn run(file: &str) -> Outcome {
    run_with(&["nodes.yaml", file], &ReadOptions::default())
}

fn note<'a>(outcome: &'a Outcome, prefix: &str) -> &'a str {
    outcome
        .notes
        .iter()
        .find(|n| n.starts_with(prefix))
        .unwrap_or_else(|| panic!("no note {prefix:?}: {:#?}", outcome.notes))
}

fn bound_nodes(outcome: &Outcome, prefix: &str) -> Vec<String> {
    outcome
        .placements
        .iter()
        .filter(|b| b.pod.starts_with(prefix))
        .map(|b| b.node.clone())
        .collect()
}

/// Loads `text` as a file of its own and returns the one-line error.
fn error(text: &str) -> String {
    let dir = common::tempdir("dialects");
    let file = dir.join(format!(
        "{:x}.yaml",
        text.len() * 31 + text.bytes().map(usize::from).sum::<usize>()
    ));
    std::fs::write(&file, text).unwrap();
    let err = wasched::read_snapshot(std::slice::from_ref(&file)).unwrap_err();
    let err = format!("{err:#}");
    assert!(
        err.starts_with(&file.display().to_string()),
        "names the file: {err}"
    );
    err
}

#[test]
fn the_articles_early_dialect_is_read_with_a_note_per_mapping() {
    let out = run("article.yaml");
    let n = note(
        &out,
        "PodGroup ai-prod/vllm-inference-group (early scheduling.k8s.io/v1beta1 dialect): ",
    );
    for part in [
        "spec.minMember 4 read as schedulingPolicy.gang.minCount",
        "spec.scheduleTimeoutSeconds 300 read as the gang's Permit wait",
        "spec.preemptionPolicy Conservative read as PreemptLowerPriority",
        "spec.topologySpreadConstraints (topology.kubernetes.io/zone) read as a hard spread of the group's pods",
    ] {
        assert!(n.contains(part), "{n} lacks {part}");
    }
    note(
        &out,
        "4 pod(s) (first: Pod ai-prod/vllm-worker-0) joined PodGroups by annotation scheduling.k8s.io/pod-group-name",
    );
    let group = &out.pod_groups[0];
    assert_eq!(
        (group.pod_group.as_str(), group.scheduled, group.min_count),
        ("ai-prod/vllm-inference-group", true, Some(4))
    );
    // The hard zone spread (maxSkew 1) puts two workers in each zone, where
    // least-allocated scoring alone would not care about zones.
    let nodes = bound_nodes(&out, "ai-prod/");
    let zone_a = nodes.iter().filter(|n| n.starts_with("gpu-a")).count();
    assert_eq!((zone_a, nodes.len()), (2, 4), "{nodes:?}");
}

#[test]
fn topology_spread_rejects_nodes_that_would_skew_the_group() {
    // Only zone-a has room: the spread (maxSkew 1) admits one pod there, then
    // the zone would be 2 ahead of zone-b, so the gang of 4 cannot form. The
    // hogs outrank the gang, so preemption cannot make room either.
    let full_b = "apiVersion: v1\nkind: Pod\nmetadata: {name: hog, namespace: other}\nspec:\n  priority: 1000000000\n  nodeName: gpu-b-0\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: '4'}}}]\n---\n\
                  apiVersion: v1\nkind: Pod\nmetadata: {name: hog2, namespace: other}\nspec:\n  priority: 1000000000\n  nodeName: gpu-b-1\n  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: '4'}}}]\n";
    let dir = common::tempdir("spread");
    std::fs::write(dir.join("hogs.yaml"), full_b).unwrap();
    let files = [
        dialect("nodes.yaml"),
        dialect("article.yaml"),
        dir.join("hogs.yaml"),
    ];
    let out = common::simulate_with(&files, None, PluginConfig::default());
    let group = out
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "ai-prod/vllm-inference-group")
        .unwrap();
    assert!(!group.scheduled);
    assert!(
        group
            .reason
            .contains("node(s) didn't match pod topology spread constraints"),
        "{}",
        group.reason
    );
}

#[test]
fn coscheduling_min_member_label_and_min_resources() {
    let out = run("coscheduling.yaml");
    let n = note(
        &out,
        "PodGroup train/ddp (Coscheduling (scheduling.x-k8s.io/v1alpha1)): ",
    );
    assert!(
        n.contains("spec.minMember 2 read as schedulingPolicy.gang.minCount"),
        "{n}"
    );
    assert!(
        n.contains("spec.minResources read as Coscheduling's admission check"),
        "{n}"
    );
    note(
        &out,
        "3 pod(s) (first: Pod train/ddp-0) joined PodGroups by label scheduling.x-k8s.io/pod-group",
    );
    let ddp = out
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "train/ddp")
        .unwrap();
    assert!(ddp.scheduled);
    let huge = out
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "train/huge")
        .unwrap();
    assert!(!huge.scheduled);
    assert_eq!(
        huge.reason,
        "minResources exceed the cluster's free capacity: nvidia.com/gpu 64 wanted, 12 free"
    );
}

#[test]
fn volcano_min_member_queue_and_annotation() {
    let out = run("volcano.yaml");
    let n = note(
        &out,
        "PodGroup hpc/mpi-job (Volcano (scheduling.volcano.sh/v1beta1)): ",
    );
    assert!(
        n.contains("spec.minMember 3 read as schedulingPolicy.gang.minCount"),
        "{n}"
    );
    assert!(
        n.contains("spec.queue \"default\": Volcano queues have no v1.37 equivalent"),
        "{n}"
    );
    note(
        &out,
        "3 pod(s) (first: Pod hpc/mpi-job-worker-0) joined PodGroups by annotation scheduling.k8s.io/group-name",
    );
    let g = &out.pod_groups[0];
    assert!(g.scheduled && g.min_count == Some(3));
}

#[test]
fn early_composite_pod_group_links_children_with_level_keys() {
    let options = ReadOptions {
        topology_aliases: [("LowLatencyNetwork".to_string(), "rack".to_string())].into(),
        ..ReadOptions::default()
    };
    let files = [dialect("nodes.yaml"), dialect("composite.yaml")];
    let snapshot = wasched::read_snapshot_with(&files, &options).unwrap();
    let spec = |key: &str| {
        snapshot
            .groups
            .iter()
            .find(|g| g.key == key)
            .unwrap()
            .spec
            .clone()
            .unwrap()
    };
    let leader = spec("ml-training/lws-leader-pg");
    assert_eq!(leader.parent.as_deref(), Some("lws-train-group"));
    assert_eq!(
        leader.topology_key.as_deref(),
        Some("topology.kubernetes.io/zone")
    );
    assert_eq!(
        spec("ml-training/lws-workers-pg").topology_key.as_deref(),
        Some("kubernetes.io/hostname")
    );
    let n = snapshot
        .notes
        .iter()
        .find(|n| n.starts_with("CompositePodGroup ml-training/lws-train-group"))
        .unwrap();
    assert!(n.contains("crossLevel constraint LowLatencyNetwork read as the CompositePodGroup's own topology key rack"), "{n}");
    let composite = snapshot
        .composites
        .iter()
        .find(|c| c.key == "ml-training/lws-train-group")
        .expect("the early-dialect CompositePodGroup is modelled");
    assert_eq!(composite.spec.topology_key.as_deref(), Some("rack"));
    assert_eq!(composite.child_groups.len(), 2);
    assert!(composite.invalid.is_none());

    let err = format!("{:#}", wasched::read_snapshot(&files).unwrap_err());
    assert!(
        err.contains("CompositePodGroup ml-training/lws-train-group: field spec.topologyPolicies[2].crossLevel.constraint: topology policy \"LowLatencyNetwork\" is not a known name")
            && err.contains("--topology-alias LowLatencyNetwork=<label key>"),
        "{err}"
    );
}

/// A child in another namespace is said once not to be linked (a v1.37
/// parent is always in its child's namespace), never first linked and then
/// reported missing; a level's topology key no node carries is said so.
#[test]
fn early_composite_children_elsewhere_are_not_linked_and_level_keys_are_explained() {
    let dir = std::env::temp_dir().join(format!("wasched-dialect-ns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = std::fs::read_to_string(dialect("composite.yaml"))
        .unwrap()
        .replacen(
            "name: lws-workers-pg\n      namespace: ml-training",
            "name: lws-workers-pg\n      namespace: other",
            1,
        )
        .replace(
            "constraint: \"LowLatencyNetwork\"",
            "constraint: \"SameZone\"",
        );
    let file = dir.join("composite.yaml");
    std::fs::write(&file, text).unwrap();
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: '8', memory: 8Gi, pods: '10'}}\n---\n\
                apiVersion: v1\nkind: Pod\nmetadata: {name: leader-0, namespace: ml-training}\n\
                spec: {schedulingGroup: {podGroupName: lws-leader-pg}, containers: [{name: c}]}\n";
    let pods = dir.join("pods.yaml");
    std::fs::write(&pods, node).unwrap();
    let manifests =
        wasched::read_manifests_with(&[file.clone(), pods.clone()], &ReadOptions::default())
            .unwrap();
    let warning = manifests
        .warnings
        .iter()
        .find(|w| w.contains("podGroupRef.namespace"))
        .expect("the child elsewhere is named");
    assert!(
        warning.contains("PodGroup other/lws-workers-pg is not in namespace ml-training")
            && warning.contains("child workers is not linked"),
        "{warning}"
    );
    let snapshot = wasched::read_snapshot(&[file.clone(), pods.clone()]).unwrap();
    assert!(
        snapshot
            .warnings
            .iter()
            .all(|w| !w.contains("does not exist")),
        "{:?}",
        snapshot.warnings
    );
    let composite = snapshot
        .composites
        .iter()
        .find(|c| c.key == "ml-training/lws-train-group")
        .unwrap();
    assert_eq!(composite.child_groups.len(), 1);
    // The leader's level asks for SameZone, a label the node lacks.
    let out = run_with(
        &[file.to_str().unwrap(), pods.to_str().unwrap()],
        &ReadOptions::default(),
    );
    let leader = out
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "ml-training/lws-leader-pg")
        .unwrap();
    assert!(
        leader.reason.contains("no node carries the label topology.kubernetes.io/zone, the group's required topology key"),
        "{}",
        leader.reason
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn jobs_without_pods_are_expanded_like_the_controller() {
    let out = run("jobs.yaml");
    note(
        &out,
        "Job ml/trainer: expanded as the v1.37 Job controller would: Workload ml/trainer, PodGroup ml/trainer (gang minCount 3), 3 pods trainer-0-",
    );
    note(
        &out,
        "Job data/etl: expanded as the v1.37 Job controller would: Workload data/etl, PodGroup data/etl (basic), 2 pods etl-",
    );
    note(
        &out,
        "Job data/done: finished, so the controller creates no pods",
    );
    note(
        &out,
        "Job data/paused: suspended, so the controller creates no pods",
    );
    assert!(
        !out.notes.iter().any(|n| n.starts_with("Job data/running")),
        "its pod exists"
    );
    let trainer: Vec<&str> = out
        .placements
        .iter()
        .map(|b| b.pod.as_str())
        .filter(|p| p.starts_with("ml/trainer-"))
        .collect();
    assert_eq!(trainer.len(), 3);
    for (i, pod) in trainer.iter().enumerate() {
        assert!(
            pod.starts_with(&format!("ml/trainer-{i}-")) && pod.len() == "ml/trainer-0-xxxxx".len(),
            "{pod}"
        );
    }
    let trainer_group = out
        .pod_groups
        .iter()
        .find(|g| g.pod_group == "ml/trainer")
        .unwrap();
    assert_eq!(trainer_group.min_count, Some(3));
    assert_eq!(
        out.pod_groups
            .iter()
            .find(|g| g.pod_group == "data/etl")
            .unwrap()
            .min_count,
        None
    );
    // Deterministic names: a second run expands to the same pods.
    assert_eq!(run("jobs.yaml").placements, out.placements);
}

#[test]
fn a_directory_loads_every_manifest_in_it() {
    let dir = common::tempdir("dir");
    std::fs::copy(dialect("nodes.yaml"), dir.join("a-nodes.yaml")).unwrap();
    std::fs::copy(dialect("volcano.yaml"), dir.join("b-volcano.yml")).unwrap();
    std::fs::write(dir.join("README.md"), "not a manifest").unwrap();
    let snapshot = wasched::read_snapshot(&[dir]).unwrap();
    assert_eq!((snapshot.nodes.len(), snapshot.pods.len()), (4, 3));
}

#[test]
fn fields_without_a_v137_meaning_are_rejected_by_name() {
    let cases = [
        (
            "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {minMember: 2, networkTopology: {mode: hard}}\n",
            "PodGroup ns/g: field spec.networkTopology: Volcano's networkTopology has no v1.37 equivalent",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec:\n  minMember: 2\n  topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]\n",
            "PodGroup ns/g: field spec.topologySpreadConstraints[0].whenUnsatisfiable: ScheduleAnyway (a soft preference) is not modelled",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {minMember: 0}\n",
            "PodGroup ns/g: field spec.minMember: must be an integer of at least 1, got 0",
        ),
        (
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {minMember: 2, minResources: {cpu: lots}}\n",
            "PodGroup ns/g: field spec.minResources.cpu:",
        ),
        (
            "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {minMember: 2, colour: blue}\n",
            "PodGroup ns/g: field spec.colour: not a field of the Coscheduling (scheduling.x-k8s.io/v1alpha1) PodGroup",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n  annotations: {scheduling.k8s.io/pod-group-name: a}\n  labels: {scheduling.x-k8s.io/pod-group: b}\nspec: {containers: []}\n",
            "Pod ns/p: field metadata.labels.scheduling.x-k8s.io/pod-group: names PodGroup b, but scheduling.k8s.io/pod-group-name names a",
        ),
        (
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n  annotations: {scheduling.k8s.io/group-name: a}\nspec: {containers: [], schedulingGroup: {podGroupName: b}}\n",
            "Pod ns/p: field spec.schedulingGroup.podGroupName: b, but scheduling.k8s.io/group-name names PodGroup a",
        ),
        (
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  parallelism: 2\n  scheduling: {schedulingPolicy: {gang: {minCount: 3}}}\n  template: {spec: {containers: []}}\n",
            "Job ns/j: field spec.scheduling.schedulingPolicy.gang.minCount: must be between 1 and parallelism (2), got 3",
        ),
        (
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: CompositePodGroup\nmetadata: {name: c, namespace: ns}\nspec:\n  children: [{name: a, podGroupRef: {name: a}}]\n  topologyPolicies: [{level: a, constraint: SameRack}]\n",
            "CompositePodGroup ns/c: field spec.topologyPolicies[0].constraint: topology policy \"SameRack\" is not a known name",
        ),
    ];
    for (text, expected) in cases {
        let err = error(text);
        assert!(err.contains(expected), "{err}\n  lacks {expected}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn a_real_kubectl_json_dump_loads_as_is() {
    let dump = common::testdata("dumps/kubectl-get-all.json");
    let snapshot = wasched::read_snapshot(std::slice::from_ref(&dump)).unwrap();
    // The Succeeded pod and the terminating pod hold nothing: only web-2's
    // 500m counts, so the pending 7-cpu pod fits the 8-cpu node.
    let cpu = snapshot.resource_index("cpu").unwrap();
    assert_eq!(snapshot.requested(cpu), [500]);
    assert!(
        snapshot
            .warnings
            .iter()
            .any(|w| w == "ignored 2 terminal or terminating pod(s): they hold no resources")
    );
    // The PodDisruptionBudget is modelled: its selector matches web-2, and
    // the dump's status says no disruption is allowed.
    assert_eq!(snapshot.budgets.len(), 1);
    let budget = &snapshot.budgets[0];
    assert_eq!(budget.key, "shop/web");
    assert_eq!(budget.disruptions_allowed, 0);
    let pods: Vec<&str> = budget
        .pods
        .iter()
        .map(|&p| snapshot.pods[p as usize].key.as_str())
        .collect();
    assert_eq!(pods, ["shop/web-2"]);
    // The terminating pod is visible as terminating, holding nothing.
    let old = snapshot
        .pods
        .iter()
        .find(|p| p.key == "shop/old-web-1")
        .expect("terminating pods are in the model");
    assert!(old.terminating && !old.pending && old.node.is_none());
    assert!(
        !snapshot
            .notes
            .iter()
            .any(|n| n.contains("nightly") && n.contains("expanded")),
        "{:?}",
        snapshot.notes
    );
    let out = common::simulate(&[dump], None);
    assert_eq!(out.placements.len(), 1);
    assert_eq!(
        (
            out.placements[0].pod.as_str(),
            out.placements[0].node.as_str()
        ),
        ("data/batch-0", "worker-1")
    );
}

#[test]
fn builders_make_snapshots_the_scheduler_reads() {
    use wasched::builder::{NodeBuilder, PodBuilder, PodGroupBuilder};
    let node = NodeBuilder::new("gpu-0")
        .cpu("16")
        .memory("64Gi")
        .gpus(4)
        .taint("nvidia.com/gpu", "present", "NoSchedule")
        .build()
        .unwrap();
    let group = PodGroupBuilder::new("ml", "pair").gang(2).build().unwrap();
    let pods: Vec<_> = (0..2)
        .map(|i| {
            PodBuilder::new("ml", &format!("pair-{i}"))
                .cpu("4")
                .gpus(2)
                .group("pair")
                .tolerate("nvidia.com/gpu")
                .build()
                .unwrap()
        })
        .collect();
    let mut items = vec![
        serde_json::to_value(&node).unwrap(),
        serde_json::to_value(&group).unwrap(),
    ];
    items.extend(pods.iter().map(|p| serde_json::to_value(p).unwrap()));
    for (item, (api, kind)) in items.iter_mut().zip([
        ("v1", "Node"),
        ("scheduling.k8s.io/v1beta1", "PodGroup"),
        ("v1", "Pod"),
        ("v1", "Pod"),
    ]) {
        item["apiVersion"] = api.into();
        item["kind"] = kind.into();
    }
    let mut manifests = wasched::manifest::Manifests::default();
    let text = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string();
    wasched::manifest::load_str(&mut manifests, "built.json", &text).unwrap();
    let snapshot = wasched::Snapshot::build(&manifests).unwrap();
    assert_eq!(snapshot.groups[0].min_count(), Some(2));
    assert_eq!(snapshot.pods.len(), 2);
}
