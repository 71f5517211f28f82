//! The cycle with native fake plugins, no wasm: queue order, permit
//! verdicts, early abort, several placements, failure policy, nested
//! rollback and preemption trials.

use std::cell::RefCell;
use std::rc::Rc;

use super::{Cycle, GroupResult, run};
use crate::filters::SpreadState;
use crate::framework::{
    Answer, Code, ExtensionPoint, FailureCause, FailurePolicy, Placement, Placements, Plugin,
    PluginError, PluginSet, Progress, Status, Unit,
};
use crate::model::{GroupId, NodeId, PodId, Snapshot};

/// Four nodes of 4 cpu in two racks; nodes named n0..n3.
const NODES: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n0, labels: {rack: r1}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {rack: r1}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {rack: r2}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {rack: r2}}
status: {allocatable: {cpu: "4", memory: 8Gi}}
"#;

/// One placement per value of `label` among `parent`'s nodes, in value
/// order: what the test fakes' placement-generate returns.
pub(super) fn placements_by_label(
    snapshot: &Snapshot,
    parent: &Placement,
    label: &str,
) -> Placements {
    let mut domains: std::collections::BTreeMap<String, Vec<NodeId>> = Default::default();
    for &n in &parent.nodes {
        if let Some(v) = snapshot.nodes[n as usize].labels.get(label) {
            domains.entry(v.clone()).or_default().push(n);
        }
    }
    Placements {
        candidates: domains
            .into_iter()
            .map(|(v, nodes)| Placement {
                name: format!("{label}={v}"),
                nodes,
                domain: Some((label.to_string(), v)),
            })
            .collect(),
        search_budget: None,
        reusable: false,
    }
}

fn snapshot(objects: &str) -> Snapshot {
    let mut manifests = crate::manifest::Manifests::default();
    let text = format!("{NODES}\n---\n{objects}");
    crate::manifest::load_str(&mut manifests, "test.yaml", &text).unwrap();
    Snapshot::build(&manifests).unwrap()
}

/// A gang PodGroup `name` (in namespace `t`) with `pods` pending pods of
/// `cpu` each, created at `created` (seconds into 2026-01-01).
fn gang(name: &str, min: u32, pods: u32, cpu: &str, priority: i32, created: u32) -> String {
    let mut text = format!(
        "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: t, creationTimestamp: \"2026-01-01T00:00:{created:02}Z\"}}\nspec: {{priority: {priority}, schedulingPolicy: {{gang: {{minCount: {min}}}}}}}\n"
    );
    for i in 0..pods {
        text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-{i}, namespace: t, labels: {{app: {name}}}}}\nspec:\n  schedulingGroup: {{podGroupName: {name}}}\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n"
        ));
    }
    text
}

/// A running pod on `node` using `cpu`.
fn running(name: &str, node: &str, cpu: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: t, labels: {{app: busy}}}}\nspec:\n  nodeName: {node}\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"{cpu}\"}}}}}}]\n"
    )
}

/// What the fakes saw, shared with the test.
type Journal = Rc<RefCell<Vec<String>>>;

/// A configurable native plugin.
struct Fake {
    name: &'static str,
    points: Vec<ExtensionPoint>,
    policy: FailurePolicy,
    journal: Journal,
    /// Gang permit rule: `minCount` from the PodGroup spec.
    gang: bool,
    /// Split the cluster by this node label at placement-generate.
    split_by: Option<&'static str>,
    /// Placement-score preference: the placement with this name scores 100.
    prefer: Option<&'static str>,
    /// Fail the n-th call (1-based) at this point.
    fail: Option<(ExtensionPoint, usize)>,
    calls: usize,
}

impl Fake {
    fn new(name: &'static str, points: &[ExtensionPoint], journal: &Journal) -> Self {
        Self {
            name,
            points: points.to_vec(),
            policy: FailurePolicy::Fail,
            journal: journal.clone(),
            gang: false,
            split_by: None,
            prefer: None,
            fail: None,
            calls: 0,
        }
    }

    fn maybe_fail(&mut self, point: ExtensionPoint) -> Answer<()> {
        if let Some((at, n)) = self.fail
            && at == point
        {
            self.calls += 1;
            if self.calls == n {
                return Err(PluginError {
                    plugin: self.name.into(),
                    point,
                    cause: FailureCause::Trap,
                    message: "trapped (fake)".into(),
                    policy: self.policy,
                });
            }
        }
        Ok(())
    }
}

impl Plugin for Fake {
    fn name(&self) -> &str {
        self.name
    }

    fn points(&self) -> &[ExtensionPoint] {
        &self.points
    }

    fn failure_policy(&self) -> FailurePolicy {
        self.policy
    }

    fn pre_enqueue(&mut self, snapshot: &mut Snapshot, unit: Unit) -> Answer<Status> {
        self.maybe_fail(ExtensionPoint::PreEnqueue)?;
        if let Unit::Group(g) = unit {
            let key = &snapshot.groups[g as usize].key;
            self.journal.borrow_mut().push(format!("pre-enqueue {key}"));
        }
        Ok(Status::success())
    }

    fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        _nodes: &[NodeId],
    ) -> Answer<Vec<crate::framework::Rejection>> {
        self.maybe_fail(ExtensionPoint::Filter)?;
        let key = &snapshot.pods[pod as usize].key;
        self.journal.borrow_mut().push(format!("filter {key}"));
        Ok(Vec::new())
    }

    fn permit(
        &mut self,
        snapshot: &mut Snapshot,
        unit: Unit,
        progress: Progress,
    ) -> Answer<crate::framework::PermitVerdict> {
        self.maybe_fail(ExtensionPoint::Permit)?;
        let Unit::Group(g) = unit else {
            return Ok(Status::success().into());
        };
        let min = snapshot.groups[g as usize].min_count().unwrap_or(1);
        Ok(if !self.gang {
            Status::success()
        } else if progress.scheduled + progress.remaining < min {
            Status::new(Code::Unschedulable, format!("cannot reach {min}"))
        } else if progress.scheduled < min {
            Status::new(Code::Wait, format!("waiting for {min}"))
        } else {
            Status::success()
        }
        .into())
    }

    fn generate_placements(
        &mut self,
        snapshot: &mut Snapshot,
        _unit: Unit,
        parent: &Placement,
    ) -> Answer<Result<Placements, Status>> {
        self.maybe_fail(ExtensionPoint::PlacementGenerate)?;
        let Some(label) = self.split_by else {
            return Ok(Err(Status::new(Code::Skip, "")));
        };
        Ok(Ok(placements_by_label(snapshot, parent, label)))
    }

    fn score_placement(
        &mut self,
        _snapshot: &mut Snapshot,
        _unit: Unit,
        placement: &Placement,
        _assignments: &[(PodId, NodeId)],
    ) -> Answer<Result<i64, Status>> {
        self.maybe_fail(ExtensionPoint::PlacementScore)?;
        Ok(Ok(if Some(placement.name.as_str()) == self.prefer {
            100
        } else {
            10
        }))
    }
}

fn plugins(fakes: Vec<Fake>) -> PluginSet {
    let mut set = PluginSet::new();
    for fake in fakes {
        set.add(Box::new(fake)).unwrap();
    }
    set
}

fn gang_plugin(journal: &Journal) -> Fake {
    Fake {
        gang: true,
        ..Fake::new(
            "Gang",
            &[ExtensionPoint::PreEnqueue, ExtensionPoint::Permit],
            journal,
        )
    }
}

fn pod_id(snapshot: &Snapshot, key: &str) -> PodId {
    snapshot.pods.iter().position(|p| p.key == key).unwrap() as PodId
}

fn group_id(snapshot: &Snapshot, key: &str) -> GroupId {
    snapshot.groups.iter().position(|g| g.key == key).unwrap() as GroupId
}

#[test]
fn queue_order_is_priority_then_creation_then_name() {
    let journal = Journal::default();
    let mut snapshot = snapshot(
        &[
            gang("low", 1, 1, "1", 10, 1),
            gang("high-late", 1, 1, "1", 100, 9),
            gang("high-early", 1, 1, "1", 100, 2),
            gang("b-same", 1, 1, "1", 50, 5),
            gang("a-same", 1, 1, "1", 50, 5),
        ]
        .join("---\n"),
    );
    let mut set = plugins(vec![gang_plugin(&journal)]);
    run(&mut snapshot, &mut set, super::RunOptions::default());
    assert_eq!(
        *journal.borrow(),
        [
            "pre-enqueue t/high-early",
            "pre-enqueue t/high-late",
            "pre-enqueue t/a-same",
            "pre-enqueue t/b-same",
            "pre-enqueue t/low",
        ]
    );
}

#[test]
fn permit_verdicts_decide_admission() {
    // (minCount, pods, cpu per pod, admitted, bound)
    let cases = [
        ("all fit", 3, 3, "4", true, 3),
        ("more than minCount fit", 2, 3, "4", true, 3),
        ("fewer than minCount fit", 5, 5, "4", false, 0),
        ("minCount fit, the rest not", 4, 6, "4", true, 4),
    ];
    for (name, min, pods, cpu, admitted, bound) in cases {
        let journal = Journal::default();
        let mut snapshot = snapshot(&gang("g", min, pods, cpu, 0, 0));
        let mut set = plugins(vec![gang_plugin(&journal)]);
        let outcome = run(&mut snapshot, &mut set, super::RunOptions::default());
        let decision = &outcome.pod_groups[0];
        assert_eq!(decision.scheduled, admitted, "{name}: {decision:?}");
        assert_eq!(decision.bound, bound, "{name}");
        assert_eq!(outcome.placements.len() as u32, bound, "{name}");
        if !admitted {
            assert_eq!(decision.condition_reason, "Unschedulable", "{name}");
            assert!(
                decision.reason.contains("cannot reach"),
                "{name}: {decision:?}"
            );
        }
    }
}

#[test]
fn a_gang_aborts_as_soon_as_min_count_is_out_of_reach() {
    // Two nodes are full: 2 of 4 pods fit; after the third fails,
    // 2 placed + 1 left < 4, so the fourth is never tried.
    let journal = Journal::default();
    let objects = [
        running("busy-2", "n2", "4"),
        running("busy-3", "n3", "4"),
        gang("g", 4, 4, "4", 0, 0),
    ]
    .join("---\n");
    let mut snapshot = snapshot(&objects);
    let mut set = plugins(vec![
        gang_plugin(&journal),
        Fake::new("Spy", &[ExtensionPoint::Filter], &journal),
    ]);
    let outcome = run(&mut snapshot, &mut set, super::RunOptions::default());
    assert!(!outcome.pod_groups[0].scheduled);
    let filtered: Vec<String> = journal
        .borrow()
        .iter()
        .filter(|l| l.starts_with("filter"))
        .cloned()
        .collect();
    assert_eq!(
        filtered,
        ["filter t/g-0", "filter t/g-1"],
        "t/g-2 fits nowhere, t/g-3 is never tried"
    );
    assert!(outcome.placements.is_empty());
}

#[test]
fn several_placements_are_scored_and_the_best_wins() {
    for (prefer, nodes) in [("rack=r1", ["n0", "n1"]), ("rack=r2", ["n2", "n3"])] {
        let journal = Journal::default();
        let mut snapshot = snapshot(&gang("g", 2, 2, "4", 0, 0));
        let topology = Fake {
            split_by: Some("rack"),
            prefer: Some(prefer),
            ..Fake::new(
                "Topology",
                &[
                    ExtensionPoint::PlacementGenerate,
                    ExtensionPoint::PlacementScore,
                ],
                &journal,
            )
        };
        let mut set = plugins(vec![gang_plugin(&journal), topology]);
        let outcome = run(&mut snapshot, &mut set, super::RunOptions::default());
        let decision = &outcome.pod_groups[0];
        assert_eq!(decision.placement.as_deref(), Some(prefer));
        let mut got: Vec<&str> = outcome.placements.iter().map(|b| b.node.as_str()).collect();
        got.sort();
        assert_eq!(got, nodes, "{prefer}");
        // The losing placement's assumptions were rolled back.
        let cpu = snapshot.resource_index("cpu").unwrap();
        assert_eq!(snapshot.requested(cpu).iter().sum::<u64>(), 8000);
    }
}

#[test]
fn failure_policy_fail_keeps_the_group_pending_and_ignore_skips_the_plugin() {
    for (policy, admitted, condition) in [
        (FailurePolicy::Fail, false, "SchedulerError"),
        (FailurePolicy::Ignore, true, ""),
    ] {
        let journal = Journal::default();
        let mut snapshot = snapshot(&gang("g", 2, 2, "1", 0, 0));
        let flaky = Fake {
            policy,
            fail: Some((ExtensionPoint::Permit, 1)),
            ..gang_plugin(&journal)
        };
        let mut set = plugins(vec![flaky]);
        let outcome = run(&mut snapshot, &mut set, super::RunOptions::default());
        let decision = &outcome.pod_groups[0];
        assert_eq!(decision.scheduled, admitted, "{policy:?}: {decision:?}");
        assert_eq!(decision.condition_reason, condition, "{policy:?}");
        assert_eq!(outcome.plugin_errors.len(), 1, "{policy:?}");
        assert_eq!(outcome.plugin_errors[0].cause, "trap");
        if policy == FailurePolicy::Fail {
            assert!(
                decision
                    .reason
                    .contains("plugin Gang: trapped (fake) in permit")
            );
        } else {
            assert!(
                outcome
                    .warnings
                    .iter()
                    .any(|w| w.contains("failurePolicy: Ignore"))
            );
        }
    }
}

/// Everything rollback must restore.
#[derive(Debug, PartialEq)]
struct State {
    requested: Vec<Vec<u64>>,
    pods_on_node: Vec<Vec<PodId>>,
    nodes_of_pods: Vec<Option<NodeId>>,
    spread: Vec<Vec<(String, i64)>>,
}

fn state(snapshot: &Snapshot, spread_pod: PodId) -> State {
    State {
        requested: (0..snapshot.resource_names.len())
            .map(|r| snapshot.requested(r).to_vec())
            .collect(),
        pods_on_node: (0..snapshot.node_count() as NodeId)
            .map(|n| snapshot.pods_on_node(n).to_vec())
            .collect(),
        nodes_of_pods: snapshot.pods.iter().map(|p| p.node).collect(),
        spread: SpreadState::for_pod(snapshot, spread_pod).domain_counts(),
    }
}

/// A pending pod that spreads over racks by `app: g`, so spread counts
/// move with every assumption of the gang's pods.
const SPREADER: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: spreader, namespace: t, labels: {app: g}}\nspec:\n  topologySpreadConstraints: [{maxSkew: 9, topologyKey: rack, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: g}}}]\n  containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]\n";

#[test]
fn nested_rollback_restores_the_snapshot_exactly() {
    let objects = [
        running("busy-0", "n0", "1"),
        running("busy-2", "n2", "2"),
        gang("g", 2, 3, "1", 0, 0),
        SPREADER.to_string(),
    ]
    .join("---\n");
    let mut snapshot = snapshot(&objects);
    let spreader = pod_id(&snapshot, "t/spreader");
    let (g0, g1, g2, busy0) = (
        pod_id(&snapshot, "t/g-0"),
        pod_id(&snapshot, "t/g-1"),
        pod_id(&snapshot, "t/g-2"),
        pod_id(&snapshot, "t/busy-0"),
    );
    let original = state(&snapshot, spreader);

    let outer = snapshot.checkpoint();
    snapshot.assume(g0, 0);
    snapshot.assume(g1, 2);
    let after_outer = state(&snapshot, spreader);
    assert_ne!(after_outer, original);
    assert_ne!(after_outer.spread, original.spread, "spread counts moved");

    let inner = snapshot.checkpoint();
    snapshot.remove(busy0); // a victim removed for a trial
    snapshot.remove(g1); // an assumption undone
    snapshot.assume(g2, 3);
    let innermost = snapshot.checkpoint();
    snapshot.assume(g1, 1);
    snapshot.rollback(innermost);
    snapshot.rollback(inner);
    assert_eq!(state(&snapshot, spreader), after_outer);
    snapshot.rollback(outer);
    assert_eq!(state(&snapshot, spreader), original);
}

#[test]
fn a_plugin_failure_mid_attempt_leaves_nothing_assumed() {
    let objects = [
        running("busy-0", "n0", "1"),
        gang("g", 3, 3, "1", 0, 0),
        SPREADER.to_string(),
    ]
    .join("---\n");
    let mut snapshot = snapshot(&objects);
    let spreader = pod_id(&snapshot, "t/spreader");
    let original = state(&snapshot, spreader);
    let journal = Journal::default();
    // Two placements (racks); permit traps on its 4th call: in the second
    // placement, after its first pod was assumed.
    let topology = Fake {
        split_by: Some("rack"),
        ..Fake::new(
            "Topology",
            &[
                ExtensionPoint::PlacementGenerate,
                ExtensionPoint::PlacementScore,
            ],
            &journal,
        )
    };
    let flaky = Fake {
        fail: Some((ExtensionPoint::Permit, 4)),
        ..gang_plugin(&journal)
    };
    let mut set = plugins(vec![flaky, topology]);
    let group = group_id(&snapshot, "t/g");
    let pending: Vec<PodId> = snapshot.groups[group as usize].members.clone();
    let mut cycle = Cycle::new(&mut snapshot, &mut set);
    let placements = cycle
        .generate_placements(Unit::Group(group), &Placement::cluster(4))
        .unwrap()
        .unwrap()
        .candidates;
    assert_eq!(placements.len(), 2);
    let result = cycle.place_group(group, &pending, placements);
    assert_eq!(cycle.failures.failed, 1);
    drop(cycle);
    // The error ends the group's cycle, although rack r1 admitted all
    // three (upstream returns an Error status from the placement loop at
    // once), and nothing stays assumed.
    let GroupResult::Rejected(attempt) = result else {
        panic!("a permit error under Fail ends the cycle: {result:?}");
    };
    assert!(attempt.errored, "{attempt:?}");
    assert_eq!(attempt.placement.name, "rack=r2");
    assert_eq!(state(&snapshot, spreader), original);
}

#[test]
fn a_trial_places_the_group_without_the_removed_pods_and_changes_nothing() {
    let objects = [
        running("busy-0", "n0", "4"),
        running("busy-1", "n1", "4"),
        running("busy-2", "n2", "4"),
        running("busy-3", "n3", "3"),
        gang("g", 2, 2, "2", 100, 0),
    ]
    .join("---\n");
    let mut snapshot = snapshot(&objects);
    let journal = Journal::default();
    let mut set = plugins(vec![gang_plugin(&journal)]);
    let group = group_id(&snapshot, "t/g");
    let pending = snapshot.groups[group as usize].members.clone();
    let (b0, b1) = (pod_id(&snapshot, "t/busy-0"), pod_id(&snapshot, "t/busy-1"));
    let before = state(&snapshot, pending[0]);
    let cluster = [Placement::cluster(4)];
    let mut cycle = Cycle::new(&mut snapshot, &mut set);
    let free = super::costs::VictimCosts::default();
    assert!(
        cycle
            .trial(group, &pending, &cluster, &[], free.clone())
            .is_err_and(|unfinished| unfinished.is_none()),
        "no room without evictions (and the trial finished)"
    );
    let fits = cycle
        .trial(group, &pending, &cluster, &[b0, b1], free.clone())
        .expect("room on n0 and n1");
    let nodes: Vec<NodeId> = fits.assigned.iter().map(|&(_, n)| n).collect();
    assert_eq!(nodes, [0, 1]);
    assert!(
        cycle.victim_costs.is_none(),
        "the trial's costs are gone after it"
    );
    drop(cycle);
    assert_eq!(state(&snapshot, pending[0]), before);

    // A permit failure under Fail inside the trial: the trial did not
    // finish, which is not "no room".
    let flaky = Fake {
        fail: Some((ExtensionPoint::Permit, 1)),
        ..gang_plugin(&journal)
    };
    let mut set = plugins(vec![flaky]);
    let mut cycle = Cycle::new(&mut snapshot, &mut set);
    let unfinished = cycle
        .trial(group, &pending, &cluster, &[b0, b1], free)
        .expect_err("the permit plugin fails");
    assert!(
        unfinished
            .as_deref()
            .is_some_and(|why| why.contains("Gang")),
        "{unfinished:?}"
    );
    drop(cycle);
    assert_eq!(state(&snapshot, pending[0]), before);
}
