//! The bundled plugin components scheduling the snapshots in
//! `testdata/scenarios/`: key facts per scenario, and the whole JSON output
//! against `<scenario>.expected.json` (regenerate with `WASCHED_BLESS=1` and
//! read the diff before committing it).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{bound, group, reason};
use wasched::Outcome;

fn scenario(name: &str) -> PathBuf {
    common::testdata("scenarios").join(format!("{name}.yaml"))
}

fn run(name: &str) -> Outcome {
    common::simulate(&[scenario(name)], None)
}

#[test]
fn gang_that_fits_binds_every_member() {
    let out = run("gang-fits");
    assert_eq!(
        bound(&out),
        BTreeMap::from([
            ("team/trainer-0", "node-0"),
            ("team/trainer-1", "node-1"),
            ("team/trainer-2", "node-2")
        ])
    );
    let g = group(&out, "team/trainer");
    assert!(g.scheduled);
    assert_eq!((g.bound, g.pending, g.min_count), (3, 0, Some(3)));
}

#[test]
fn gang_that_does_not_fit_binds_nothing() {
    let out = run("gang-does-not-fit");
    assert!(out.placements.is_empty(), "{:?}", out.placements);
    assert_eq!(out.unschedulable.len(), 3);
    let g = group(&out, "team/trainer");
    assert!(!g.scheduled);
    assert!(
        g.reason.contains("minCount (3) cannot be satisfied"),
        "{}",
        g.reason
    );
    assert_eq!(
        reason(&out, "team/trainer-2"),
        "0/2 nodes are available: 2 Insufficient cpu."
    );
    assert!(reason(&out, "team/trainer-0").starts_with("PodGroup team/trainer not admitted: "));
}

#[test]
fn gang_with_fewer_pods_than_min_count_waits() {
    let out = run("gang-too-few-pods");
    assert!(out.placements.is_empty());
    let expected = "waiting for 4 pods of PodGroup team/trainer (minCount 4), 3 present";
    for pod in ["team/trainer-0", "team/trainer-1", "team/trainer-2"] {
        assert_eq!(reason(&out, pod), expected);
    }
    assert_eq!(group(&out, "team/trainer").reason, expected);
}

#[test]
fn members_beyond_min_count_that_do_not_fit_stay_pending() {
    let out = run("gang-beyond-min-count");
    assert_eq!(bound(&out).len(), 3);
    let g = group(&out, "team/elastic");
    assert!(g.scheduled);
    assert_eq!((g.bound, g.pending), (3, 2));
    assert_eq!(
        reason(&out, "team/elastic-4"),
        "0/3 nodes are available: 3 Insufficient cpu."
    );
}

#[test]
fn running_members_count_towards_min_count() {
    let out = run("gang-partly-running");
    assert_eq!(bound(&out), BTreeMap::from([("team/resumed-2", "node-2")]));
    let g = group(&out, "team/resumed");
    assert!(
        g.scheduled,
        "2 running + 1 placed reach minCount 3: {}",
        g.reason
    );
    assert_eq!((g.bound, g.pending), (1, 1));
    assert_eq!(
        reason(&out, "team/resumed-3"),
        "0/3 nodes are available: 3 Insufficient cpu."
    );
}

#[test]
fn basic_group_binds_what_fits() {
    let out = run("basic-group");
    assert_eq!(
        bound(&out),
        BTreeMap::from([("data/prep-0", "node-0"), ("data/prep-1", "node-1")])
    );
    let g = group(&out, "data/prep");
    assert!(g.scheduled);
    assert_eq!(g.min_count, None);
}

#[test]
fn pods_naming_a_missing_pod_group_stay_pending() {
    let out = run("missing-pod-group");
    assert_eq!(bound(&out), BTreeMap::from([("team/lone", "node-0")]));
    assert_eq!(
        reason(&out, "team/ghost-0"),
        "PodGroup team/ghost not found"
    );
    assert!(!group(&out, "team/ghost").scheduled);
}

#[test]
fn higher_priority_gang_wins_the_nodes() {
    let out = run("priority-competition");
    let order: Vec<&str> = out
        .pod_groups
        .iter()
        .map(|g| g.pod_group.as_str())
        .collect();
    assert_eq!(order, ["team/high", "team/low"], "PrioritySort order");
    assert!(group(&out, "team/high").scheduled);
    assert!(!group(&out, "team/low").scheduled);
    assert!(bound(&out).keys().all(|pod| pod.starts_with("team/high-")));
}

#[test]
fn taints_selectors_affinity_and_gpu_counts_are_honoured() {
    let out = run("node-checks");
    let b = bound(&out);
    assert_eq!(b["ml/gpu-gang-0"], "gpu-0");
    assert_eq!(b["ml/gpu-gang-1"], "gpu-0");
    assert_eq!(b["ml/by-selector"], "cpu-b");
    assert_eq!(b["ml/by-affinity"], "cpu-b");
    assert_eq!(
        reason(&out, "ml/gpu-gang-2"),
        "0/4 nodes are available: 1 node(s) were unschedulable, 3 Insufficient nvidia.com/gpu."
    );
    assert_eq!(
        reason(&out, "ml/untolerated"),
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient nvidia.com/gpu."
    );
    assert!(
        reason(&out, "ml/no-match").contains("2 node(s) didn't match Pod's node affinity/selector")
    );
}

#[test]
fn same_input_gives_byte_identical_output() {
    let first = common::simulate(&[], None).to_json();
    let second = common::simulate(&[], None).to_json();
    assert_eq!(first, second);
    let a = run("node-checks").to_json();
    let b = run("node-checks").to_json();
    assert_eq!(a, b);
}

#[test]
fn outputs_match_expected_files() {
    let dir = common::testdata("scenarios");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".yaml").map(str::to_string)
        })
        .collect();
    names.sort();
    assert!(names.len() >= 8, "scenarios missing: {names:?}");
    let bless = std::env::var_os("WASCHED_BLESS").is_some();
    let mut mismatched = Vec::new();
    let default = common::testdata("default/expected.json");
    let runs = names
        .into_iter()
        .map(|name| (dir.join(format!("{name}.expected.json")), run(&name)))
        .chain([(default, common::simulate(&[], None))]);
    for (expected_path, outcome) in runs {
        let name = expected_path.display().to_string();
        let actual = outcome.to_json() + "\n";
        if bless {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!(
                "{} is missing; run with WASCHED_BLESS=1",
                expected_path.display()
            )
        });
        if actual != expected {
            mismatched.push(format!(
                "{name}:\n--- expected\n{expected}\n+++ actual\n{actual}"
            ));
        }
    }
    assert!(mismatched.is_empty(), "{}", mismatched.join("\n"));
}

#[test]
fn invalid_composite_trees_are_reported_and_the_rest_is_scheduled() {
    let out = run("composite-invalid");
    let invalid = [
        (
            "ml/in-cycle",
            "Invalid: the hierarchy has a cycle through ml/cycle-a, ml/cycle-b",
        ),
        (
            "ml/orphan",
            "Invalid: PodGroup ml/orphan: parent CompositePodGroup ml/ghost does not exist",
        ),
    ];
    for (key, expected) in invalid {
        let g = group(&out, key);
        assert!(!g.scheduled, "{key}");
        assert_eq!(g.reason, expected, "{key}");
        assert_eq!(g.condition_reason, "Invalid", "{key}");
        assert!(
            reason(&out, &format!("{key}-0")).ends_with(expected),
            "{key}"
        );
    }
    // Too deep, or members of several Workloads: KEP-6012's Invalid, but
    // kube-scheduler v1.37.2 schedules such trees, and so does wasched,
    // with a warning.
    for problem in [
        "PodGroup ml/too-deep is deeper than 4 levels",
        "members belong to different Workloads (one, two)",
    ] {
        assert!(
            out.warnings.iter().any(|w| w.contains(problem)),
            "{problem}: {:?}",
            out.warnings
        );
    }
    let b = bound(&out);
    for pod in [
        "ml/fine-child-0",
        "ml/plain-0",
        "ml/too-deep-0",
        "ml/mixed-child-0",
    ] {
        assert!(b.contains_key(pod), "{pod}: {b:?}");
    }
    assert_eq!(b.len(), 4);
}

/// Evicted pods, sorted.
fn evicted(outcome: &Outcome) -> Vec<&str> {
    let mut pods: Vec<&str> = outcome.evictions.iter().map(|e| e.pod.as_str()).collect();
    pods.sort();
    pods
}

fn preemption(outcome: &Outcome, key: &str) -> wasched::outcome::PreemptionOutcome {
    group(outcome, key)
        .preemption
        .clone()
        .unwrap_or_else(|| panic!("{key} made no preemption attempt"))
}

#[test]
fn a_gang_evicts_lower_priority_pods_and_binds_in_the_same_run() {
    let out = run("preempt-gang");
    assert_eq!(evicted(&out), ["team/low-0", "team/low-1"]);
    assert!(out.evictions.iter().all(|e| e.by == "team/trainer"));
    let g = group(&out, "team/trainer");
    assert!(g.scheduled, "{g:?}");
    assert_eq!(g.bound, 2);
    let p = preemption(&out, "team/trainer");
    assert_eq!((p.result.as_str(), p.victims), ("preempted", 2));
    assert!(
        g.reason.starts_with("admitted by preempting 2 pod(s)"),
        "{}",
        g.reason
    );
    let b = bound(&out);
    assert_eq!(b.len(), 2);
}

#[test]
fn the_minimal_victim_set_follows_the_reprieve_order() {
    let out = run("preempt-minimal-victims");
    assert_eq!(evicted(&out), ["team/a-10"]);
    assert_eq!(bound(&out)["team/job-0"], "node-0");
}

#[test]
fn disruption_mode_all_evicts_the_whole_group_and_single_only_what_is_needed() {
    let all = run("preempt-disruption-all");
    assert_eq!(evicted(&all), ["team/batch-0", "team/batch-1"]);
    let single = run("preempt-disruption-single");
    assert_eq!(evicted(&single), ["team/batch-0"]);
    for out in [&all, &single] {
        let victim = group(out, "team/batch");
        let d = victim.disruption.as_ref().expect("DisruptionTarget");
        assert_eq!(
            (d.condition.as_str(), d.reason.as_str()),
            ("DisruptionTarget", "PreemptionByScheduler")
        );
        assert_eq!(d.by, ["team/urgent"]);
        assert!(group(out, "team/urgent").scheduled);
    }
}

#[test]
fn preemption_that_cannot_or_may_not_happen_says_why() {
    let cases = [
        ("preempt-never", "team/polite", "preemptionPolicy Never"),
        (
            "preempt-equal-priority",
            "team/job",
            "no lower-priority victims",
        ),
        (
            "preempt-no-room",
            "team/huge",
            "even evicting every candidate would not make room",
        ),
    ];
    for (scenario, key, why) in cases {
        let out = run(scenario);
        assert!(out.evictions.is_empty(), "{scenario}: {:?}", out.evictions);
        assert!(!group(&out, key).scheduled, "{scenario}");
        let p = preemption(&out, key);
        assert_eq!(
            (p.result.as_str(), p.reason.as_str()),
            ("failed", why),
            "{scenario}"
        );
    }
}

#[test]
fn a_budget_protected_victim_is_reprieved_first() {
    let out = run("preempt-budget");
    assert_eq!(evicted(&out), ["team/open"]);
}

#[test]
fn a_lone_pod_preemptor_picks_the_cheapest_node() {
    let out = run("preempt-lone-pod");
    assert_eq!(evicted(&out), ["team/low"]);
    assert_eq!(bound(&out)["team/urgent"], "node-1");
    assert!(out.evictions.iter().all(|e| e.by == "team/urgent"));
}

#[test]
fn policy_args_change_the_preemption_choice() {
    let file = [scenario("preempt-gpu-policy")];
    let default = common::simulate(&file, None);
    assert_eq!(evicted(&default), ["team/big"], "fewest victims");
    assert_eq!(bound(&default)["team/infer"], "node-0");
    let config = wasched::PluginConfig::default()
        .configure(
            "WaschedWorkloadPreemption",
            serde_json::json!({"args": {"candidatePolicy": "FewestEvictedGpus"}}),
        )
        .unwrap();
    let gpus = common::simulate_with(&file, None, config);
    assert_eq!(
        evicted(&gpus),
        ["team/small-0", "team/small-1"],
        "fewest GPUs"
    );
    assert_eq!(bound(&gpus)["team/infer"], "node-1");
}

/// `key=value` of every domain a PodGroup was placed in, outermost first.
fn domains(outcome: &Outcome, key: &str) -> Vec<String> {
    group(outcome, key)
        .domains
        .iter()
        .map(|d| format!("{}={}", d.key, d.value))
        .collect()
}

/// The nodes a set of pods went to, sorted.
fn nodes_of(outcome: &Outcome, prefix: &str) -> Vec<String> {
    let mut nodes: Vec<String> = bound(outcome)
        .into_iter()
        .filter(|(pod, _)| pod.starts_with(prefix))
        .map(|(_, node)| node.to_string())
        .collect();
    nodes.sort();
    nodes
}

#[test]
fn a_topology_gang_lands_in_the_best_rack_around_running_load() {
    let out = run("topo-rack-choice");
    assert_eq!(domains(&out, "team/job"), ["example.com/rack=r2"]);
    assert_eq!(
        group(&out, "team/job").placement.as_deref(),
        Some("example.com/rack=r2")
    );
    assert_eq!(nodes_of(&out, "team/job-"), ["n2", "n3"]);
}

#[test]
fn no_rack_fits_although_the_cluster_does_and_the_reason_names_every_rack() {
    let out = run("topo-no-domain-fits");
    let g = group(&out, "team/wide");
    assert!(!g.scheduled);
    assert_eq!(
        g.reason,
        "no example.com/rack domain fits 5 pods: r1 fits 4, r2 fits 4; 1 node(s) lack the label"
    );
    assert!(out.placements.is_empty());
}

#[test]
fn unlabelled_nodes_are_never_used() {
    let out = run("topo-unlabelled");
    assert_eq!(nodes_of(&out, "team/job-"), ["n0", "n0"]);
}

#[test]
fn the_hostname_key_puts_the_whole_gang_on_one_node() {
    let out = run("topo-hostname");
    let nodes = nodes_of(&out, "team/pair-");
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0], nodes[1]);
}

#[test]
fn running_members_pin_the_domain() {
    let out = run("topo-running-pins");
    assert_eq!(domains(&out, "team/job"), ["example.com/rack=r2"]);
    assert_eq!(nodes_of(&out, "team/job-"), ["n2", "n3"]);
}

#[test]
fn a_two_level_tree_goes_to_the_block_that_hosts_both_children() {
    let out = run("tree-blocks");
    let a = domains(&out, "team/train-a");
    let b = domains(&out, "team/train-b");
    assert_eq!(a[0], "example.com/block=b2", "{a:?}");
    assert_eq!(b[0], "example.com/block=b2", "{b:?}");
    assert_ne!(a[1], b[1], "one rack each");
    assert_eq!(out.placements.len(), 4);
}

#[test]
fn the_search_backtracks_where_greedy_placement_fails() {
    let out = run("tree-backtrack");
    assert_eq!(
        domains(&out, "team/train-a"),
        ["example.com/block=b1", "example.com/rack=r2"]
    );
    assert_eq!(
        domains(&out, "team/train-b"),
        ["example.com/block=b1", "example.com/rack=r1"]
    );
    assert_eq!(nodes_of(&out, "team/train-b-"), ["n0", "n1"]);
}

#[test]
fn the_search_budget_cuts_the_search_and_says_so() {
    let config = wasched::PluginConfig::default()
        .configure(
            "WaschedTopologyPlacement",
            serde_json::json!({"args": {"searchBudget": 2}}),
        )
        .unwrap();
    let out = common::simulate_with(&[scenario("tree-backtrack")], None, config);
    assert!(out.placements.is_empty());
    let g = group(&out, "team/train-a");
    assert!(!g.scheduled);
    assert!(
        g.reason.ends_with("search budget of 2 placements reached"),
        "{}",
        g.reason
    );
    assert_eq!(
        g.preemption.as_ref().map(|p| p.reason.as_str()),
        Some("no lower-priority victims")
    );

    // With a lower-priority pod to evict, the preemption trial's search is
    // cut too, and the attempt says so rather than "no room".
    let dir = common::tempdir("search-budget");
    let low = dir.join("low.yaml");
    std::fs::write(
        &low,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: low, namespace: team}\nspec:\n  nodeName: n3\n  priority: 1\n  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]\nstatus: {phase: Running}\n",
    )
    .unwrap();
    let config = wasched::PluginConfig::default()
        .configure(
            "WaschedTopologyPlacement",
            serde_json::json!({"args": {"searchBudget": 2}}),
        )
        .unwrap();
    let out = common::simulate_with(&[scenario("tree-backtrack"), low], None, config);
    let preemption = group(&out, "team/train-a")
        .preemption
        .clone()
        .expect("a preemption attempt");
    assert_eq!(preemption.result, "failed");
    assert!(
        preemption
            .reason
            .starts_with("the preemption trial did not finish: ")
            && preemption
                .reason
                .ends_with("search budget of 2 placements reached"),
        "{}",
        preemption.reason
    );
    assert!(out.evictions.is_empty());
}

#[test]
fn min_group_count_out_of_reach_binds_nothing() {
    let out = run("tree-min-groups");
    assert!(out.placements.is_empty());
    for child in ["team/train-a", "team/train-b", "team/train-c"] {
        let g = group(&out, child);
        assert!(!g.scheduled, "{child}");
        assert!(
            g.reason
                .starts_with("CompositePodGroup team/train (minGroupCount 3) not admitted"),
            "{child}: {}",
            g.reason
        );
    }
}

#[test]
fn a_topology_preemptor_preempts_inside_the_domain_with_the_fewest_victims() {
    let out = run("preempt-topology");
    assert_eq!(evicted(&out), ["team/low-c"]);
    let p = preemption(&out, "team/job");
    assert_eq!(p.domain.as_deref(), Some("example.com/rack=r2"));
    assert_eq!(domains(&out, "team/job"), ["example.com/rack=r2"]);
    assert_eq!(nodes_of(&out, "team/job-"), ["n2", "n3"]);
}

#[test]
fn a_composite_tree_preempts_as_one_unit() {
    let out = run("tree-preempt");
    assert_eq!(
        evicted(&out),
        ["team/low-0", "team/low-1", "team/low-2", "team/low-3"]
    );
    for child in ["team/train-a", "team/train-b"] {
        let g = group(&out, child);
        assert!(g.scheduled, "{child}: {g:?}");
        let p = preemption(&out, child);
        assert_eq!((p.result.as_str(), p.victims), ("preempted", 4));
    }
    assert!(out.evictions.iter().all(|e| e.by == "team/train"));
}

#[test]
fn a_tree_never_evicts_its_own_members() {
    let out = run("tree-own-members");
    assert!(out.evictions.is_empty(), "{:?}", out.evictions);
    let g = group(&out, "team/train-b");
    assert!(!g.scheduled);
    assert_eq!(
        preemption(&out, "team/train-b").reason,
        "no lower-priority victims"
    );
}

#[test]
fn a_basic_tree_search_admits_every_child_that_can_fit() {
    let out = run("tree-basic-search");
    assert_eq!(
        domains(&out, "team/pair-small"),
        ["topology.kubernetes.io/zone=b"]
    );
    assert_eq!(
        domains(&out, "team/pair-big"),
        ["topology.kubernetes.io/zone=a"]
    );
    assert!(out.unschedulable.is_empty(), "{:?}", out.unschedulable);
}

#[test]
fn at_equal_priority_a_lone_pod_goes_before_a_group_member() {
    let out = run("preempt-group-member-first");
    assert_eq!(evicted(&out), ["team/lone"]);
    assert_eq!(bound(&out).get("team/urgent"), Some(&"node-0"));
}

#[test]
fn pods_left_over_after_admission_still_preempt() {
    let out = run("preempt-leftovers");
    assert_eq!(evicted(&out), ["team/low"]);
    assert_eq!(bound(&out).len(), 3);
    let g = group(&out, "team/high");
    assert!(g.scheduled);
    assert_eq!((g.bound, g.pending), (3, 0));
    assert_eq!(preemption(&out, "team/high").victims, 1);
}

#[test]
fn a_tie_in_the_preemption_trial_goes_to_the_cheapest_victims() {
    let out = run("preempt-cheapest-tie");
    assert_eq!(evicted(&out), ["team/low"]);
    assert_eq!(bound(&out).get("team/solo-0"), Some(&"node-1"));
}

#[test]
fn trial_evaluations_are_counted_apart_from_placements() {
    // One PodGroup that does not fit, then fits in its preemption trial.
    let out = run("preempt-gang");
    let stats = out.placement_stats;
    assert_eq!((stats.feasible, stats.infeasible), (0, 1), "{stats:?}");
    assert_eq!(
        (stats.trial_feasible, stats.trial_infeasible),
        (1, 0),
        "{stats:?}"
    );
    let text = wasched::metrics::encode_text(&out);
    assert!(
        text.contains("scheduler_placement_evaluations_total{result=\"infeasible\"} 1"),
        "{text}"
    );
    assert!(
        text.contains(
            "wasched_preemption_trial_placement_evaluations_total{result=\"feasible\"} 1"
        ),
        "{text}"
    );
}

#[test]
fn a_lone_pod_whose_trials_run_out_says_so() {
    // 1,001 full nodes, each with a lower-priority pod, and a preemptor
    // larger than any node: every node is worth a trial, none makes room,
    // and the budget of 1,000 trials runs out first.
    let mut text = String::new();
    for i in 0..1001 {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Node\nmetadata: {{name: n{i:04}}}\nstatus: {{allocatable: {{cpu: '1', memory: 1Gi, pods: '110'}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: low-{i:04}, namespace: team}}\nspec:\n  nodeName: n{i:04}\n  priority: 0\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: '1'}}}}}}]\nstatus: {{phase: Running}}\n"
        ));
    }
    text.push_str("---\napiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: team}\nspec:\n  priority: 100\n  containers: [{name: c, image: x, resources: {requests: {cpu: '2'}}}]\n");
    let dir = common::tempdir("trial-budget");
    let file = dir.join("cluster.yaml");
    std::fs::write(&file, text).unwrap();
    let out = common::simulate(&[file], None);
    assert!(out.evictions.is_empty());
    let big = out
        .unschedulable
        .iter()
        .find(|u| u.pod == "team/big")
        .expect("big stays pending");
    assert_eq!(
        big.preemption.as_deref(),
        Some("the trial budget was exhausted (1000 trials) before any node made room")
    );
}

#[test]
fn a_tie_in_the_trial_spares_a_whole_gang_for_one_lone_pod() {
    let out = run("preempt-tie-spares-gang");
    // One pod of the `all` gang on a node costs all three; of the two lone
    // pods only the one that must go goes.
    assert_eq!(evicted(&out), ["team/low-1"]);
    assert_eq!(bound(&out).get("team/urgent-0"), Some(&"node-3"));
}

#[test]
fn a_preemptor_waits_for_its_retry_behind_entities_of_its_priority() {
    let out = run("preempt-nominated-retry");
    assert_eq!(evicted(&out), ["team/low"]);
    let bound = bound(&out);
    // `second` is scored without `first`, nominated to node-0 ...
    assert_eq!(bound.get("team/second"), Some(&"node-0"));
    assert_eq!(bound.get("team/first"), Some(&"node-0"));
    // ... and bound before it: the preemptor binds on its retry.
    let order: Vec<&str> = out.placements.iter().map(|b| b.pod.as_str()).collect();
    assert_eq!(order, ["team/second", "team/first"]);
}
