//! Property-based fuzzing of what comes from outside: manifests in every
//! dialect (and Jobs, workloads, earlier API versions) into the loader and snapshot builder, and plugin
//! answers into the host's checks.
//! Neither may ever panic; accepted answers must satisfy the contract.
//!
//! A short run (256 cases per property) is part of `cargo test`; a longer
//! one: `PROPTEST_CASES=100000 cargo test --release -p wasched --test fuzz`.

use proptest::prelude::*;
use serde_json::{Value, json};
use wasched::framework::answers::{self as validate, MAX_SCORE};
use wasched::framework::{Placement, Rejection};
use wasched::manifest::{Manifests, load_str};

/// Loads `text` and, if it parses, builds a snapshot and schedules it with
/// no plugins; only errors are allowed, never a panic.
fn load_and_schedule(text: &str) {
    let mut manifests = Manifests::default();
    if load_str(&mut manifests, "fuzz.yaml", text).is_err()
        || wasched::manifest::expand_workloads(&mut manifests).is_err()
    {
        return;
    }
    if let Ok(mut snapshot) = wasched::Snapshot::build(&manifests) {
        let mut plugins = wasched::PluginSet::default();
        let _ = wasched::scheduler::run(
            &mut snapshot,
            &mut plugins,
            wasched::scheduler::RunOptions::default(),
        );
    }
}

const SEED_SNAPSHOTS: [&str; 18] = [
    include_str!("../../testdata/scenarios/node-checks.yaml"),
    include_str!("../../testdata/scenarios/priority-competition.yaml"),
    include_str!("../../testdata/sandbox/snapshot.yaml"),
    include_str!("../../testdata/dialects/article.yaml"),
    include_str!("../../testdata/dialects/composite.yaml"),
    include_str!("../../testdata/dialects/coscheduling.yaml"),
    include_str!("../../testdata/dialects/volcano.yaml"),
    include_str!("../../testdata/dialects/jobs.yaml"),
    include_str!("../../testdata/workloads/jobset.yaml"),
    include_str!("../../testdata/workloads/jobset-per-replicated-job.yaml"),
    include_str!("../../testdata/workloads/leaderworkerset.yaml"),
    include_str!("../../testdata/workloads/raycluster.yaml"),
    include_str!("../../testdata/workloads/pytorchjob.yaml"),
    include_str!("../../testdata/workloads/trainjob.yaml"),
    include_str!("../../testdata/workloads/volcano-job.yaml"),
    include_str!("../../testdata/workloads/apps.yaml"),
    include_str!("../../testdata/workloads/kueue-kai.yaml"),
    include_str!("../../testdata/workloads/versions.yaml"),
];

/// Scalars that tend to break parsers and arithmetic.
fn nasty_scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(null)),
        Just(json!(-1)),
        Just(json!(u64::MAX)),
        Just(json!("1e400")),
        Just(json!("-5Gi")),
        Just(json!("9999999999999999999999999999Ei")),
        Just(json!("")),
        Just(json!([])),
        Just(json!({})),
        "[ -~]{0,12}".prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
    ]
}

/// A structurally plausible object of a modelled kind with random values.
fn plausible_object() -> impl Strategy<Value = Value> {
    let kinds = prop_oneof![
        Just(("v1", "Node")),
        Just(("v1", "Pod")),
        Just(("scheduling.k8s.io/v1beta1", "PodGroup")),
        Just(("scheduling.k8s.io/v1", "PriorityClass")),
        Just(("scheduling.x-k8s.io/v1alpha1", "PodGroup")),
        Just(("scheduling.volcano.sh/v1beta1", "PodGroup")),
        Just(("scheduling.k8s.io/v1beta1", "CompositePodGroup")),
        Just(("batch/v1", "Job")),
        Just(("apps/v1", "Deployment")),
        Just(("apps/v1", "StatefulSet")),
        Just(("jobset.x-k8s.io/v1alpha2", "JobSet")),
        Just(("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")),
        Just(("ray.io/v1", "RayCluster")),
        Just(("kubeflow.org/v1", "PyTorchJob")),
        Just(("batch.volcano.sh/v1alpha1", "Job")),
        Just(("scheduling.run.ai/v2alpha2", "PodGroup")),
        Just(("scheduling.k8s.io/v1alpha2", "PodGroup")),
        Just(("scheduling.k8s.io/v1alpha1", "Workload")),
    ];
    (kinds, nasty_scalar(), nasty_scalar(), nasty_scalar(), "[a-c]{1,2}", 0..4u8).prop_map(
        |((api, kind), a, b, c, name, node)| {
            json!({
                "apiVersion": api, "kind": kind,
                "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
                "value": a,
                "spec": {
                    "nodeName": format!("n{node}"),
                    "priority": b,
                    "schedulingGroup": {"podGroupName": name},
                    "schedulingPolicy": {"gang": {"minCount": a}},
                    "minMember": b,
                    "minResources": {"cpu": c},
                    "parallelism": a,
                    "template": {"spec": {"containers": []}},
                    "children": [{"name": name, "podGroupRef": {"name": c}}],
                    "topologySpreadConstraints": [{"maxSkew": a, "topologyKey": "k", "whenUnsatisfiable": "DoNotSchedule", "labelSelector": {}}],
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": b, "memory": c, "x/y": a}}}],
                    "taints": [{"key": "k", "effect": c}],
                    "replicas": b,
                    "selector": {"matchLabels": {"a": "b"}},
                    "replicatedJobs": [{"name": name, "replicas": a, "template": {"spec": {"parallelism": b, "template": {"spec": {"containers": []}}}}}],
                    "scheduling": {"schedulingPolicy": {"gang": {"minCount": c}}},
                    "leaderWorkerTemplate": {"size": a, "workerTemplate": {"spec": {"containers": []}}},
                    "headGroupSpec": {"template": {"spec": {"containers": []}}},
                    "workerGroupSpecs": [{"groupName": name, "replicas": a, "numOfHosts": b, "minReplicas": c, "template": {"spec": {"containers": []}}}],
                    "pytorchReplicaSpecs": {"Worker": {"replicas": a, "template": {"spec": {"containers": []}}}},
                    "tasks": [{"name": name, "replicas": a, "minAvailable": b, "template": {"spec": {"containers": []}}}],
                    "minAvailable": c,
                    "subGroups": [{"name": name, "minMember": a}],
                    "podGroupTemplateRef": {"workload": {"workloadName": name, "podGroupTemplateName": c}},
                    "disruptionMode": a,
                    "podGroups": [{"name": name, "policy": {"gang": {"minCount": b}}}],
                },
                "status": {"allocatable": {"cpu": a, "memory": b, "pods": c}},
            })
        },
    )
}

proptest! {
    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        load_and_schedule(&text);
    }

    #[test]
    fn mutated_manifests_never_panic(
        seed in 0..SEED_SNAPSHOTS.len(),
        cuts in proptest::collection::vec((any::<prop::sample::Index>(), 0..40usize, "[ -~\\n]{0,8}"), 1..6),
    ) {
        let mut text = SEED_SNAPSHOTS[seed].to_string();
        for (at, len, insert) in cuts {
            let start = at.index(text.len() + 1);
            let end = (start + len).min(text.len());
            if text.is_char_boundary(start) && text.is_char_boundary(end) {
                text.replace_range(start..end, &insert);
            }
        }
        load_and_schedule(&text);
    }

    #[test]
    fn plausible_objects_with_nasty_values_never_panic(objects in proptest::collection::vec(plausible_object(), 1..8)) {
        let text = serde_json::to_string(&json!({"apiVersion": "v1", "kind": "List", "items": objects})).unwrap();
        load_and_schedule(&text);
    }

    #[test]
    fn filter_answers_are_accepted_only_within_the_contract(
        candidates in proptest::collection::btree_set(0..64u32, 0..16),
        rejected in proptest::collection::vec((0..80u32, 0..3u8), 0..20),
    ) {
        let candidates: Vec<u32> = candidates.into_iter().collect();
        // The nodes spread over up to three reasons, as grouped answers are.
        let answer: Vec<Rejection> = (0..3u8)
            .map(|g| Rejection {
                reason: format!("reason {g}"),
                nodes: rejected.iter().filter(|(_, i)| *i == g).map(|(n, _)| *n).collect(),
            })
            .collect();
        let nodes: Vec<u32> = rejected.iter().map(|(n, _)| *n).collect();
        let valid = nodes.iter().all(|n| candidates.contains(n))
            && nodes.iter().collect::<std::collections::HashSet<_>>().len() == nodes.len();
        prop_assert_eq!(validate::rejections(&candidates, &answer).is_ok(), valid);
    }

    #[test]
    fn score_answers_are_accepted_only_within_the_contract(
        candidates in 0..10usize,
        scores in proptest::collection::vec(any::<i64>().prop_map(|s| s % 150), 0..12),
    ) {
        let ok = validate::scores(candidates, &scores).is_ok();
        let valid = scores.len() == candidates && scores.iter().all(|s| (0..=MAX_SCORE).contains(s));
        prop_assert_eq!(ok, valid);
    }

    #[test]
    fn placement_answers_are_accepted_only_within_the_contract(
        parent in proptest::collection::btree_set(0..32u32, 0..12),
        generated in proptest::collection::vec(("[ab]", proptest::collection::vec(0..40u32, 0..8)), 0..5),
    ) {
        let parent = Placement { name: "cluster".into(), nodes: parent.into_iter().collect(), domain: None };
        let generated = generated
            .into_iter()
            .map(|(name, nodes)| Placement { name, nodes, domain: None });
        if let Ok(placements) = validate::placements(&parent, generated, 253) {
            let mut names = std::collections::HashSet::new();
            for p in &placements {
                prop_assert!(names.insert(p.name.clone()));
                prop_assert!(p.nodes.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(p.nodes.iter().all(|n| parent.nodes.contains(n)));
            }
        }
    }
}
