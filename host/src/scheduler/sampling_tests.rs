//! kube-scheduler's `percentageOfNodesToScore`: on 100 nodes or more a
//! pod's search stops at a share of the nodes, starts where the last
//! pod's stopped, and only the nodes found are scored.

use std::cell::RefCell;
use std::rc::Rc;

use super::run;
use crate::config::PluginConfig;
use crate::framework::{Answer, ExtensionPoint, Placement, Plugin, PluginSet, Rejection};
use crate::model::{NodeId, PodId, Snapshot};

/// `nodes` idle nodes `n000, n001, …` (id = number) of 4 cpu, and `pods`
/// pending lone pods `p0, p1, …` of 1 cpu, queued in that order.
fn cluster(nodes: usize, pods: usize) -> Snapshot {
    cluster_with(nodes, pods, "")
}

/// [`cluster`] with more objects.
fn cluster_with(nodes: usize, pods: usize, objects: &str) -> Snapshot {
    let mut text = String::from(objects);
    for n in 0..nodes {
        text.push_str(&format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n{n:03}}}\nstatus: {{allocatable: {{cpu: \"4\", memory: 8Gi}}}}\n---\n"
        ));
    }
    for p in 0..pods {
        text.push_str(&format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p{p}, namespace: t, creationTimestamp: \"2026-01-01T00:00:{p:02}Z\"}}\nspec:\n  containers: [{{name: c, image: x, resources: {{requests: {{cpu: \"1\"}}}}}}]\n---\n"
        ));
    }
    let mut manifests = crate::manifest::Manifests::default();
    crate::manifest::load_str(&mut manifests, "test.yaml", &text).unwrap();
    Snapshot::build(&manifests).unwrap()
}

/// The node lists the score plugin was asked about, one per call.
type Scored = Rc<RefCell<Vec<Vec<NodeId>>>>;

/// Filters out the odd node ids for the pod `odd_out` names (if any) and
/// scores the highest node id it is asked about 100 and the others 0,
/// recording what it scores.
struct Recorder {
    odd_out: Option<&'static str>,
    scored: Scored,
    /// Whether it is a filter plugin too (else the host's checks alone
    /// decide the feasible nodes, in one pass).
    filters: bool,
}

impl Plugin for Recorder {
    fn name(&self) -> &str {
        "Recorder"
    }

    fn points(&self) -> &[ExtensionPoint] {
        match self.filters {
            true => &[ExtensionPoint::Filter, ExtensionPoint::Score],
            false => &[ExtensionPoint::Score],
        }
    }

    fn filter(
        &mut self,
        snapshot: &mut Snapshot,
        pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Vec<Rejection>> {
        let odd: Vec<NodeId> = nodes.iter().copied().filter(|n| n % 2 == 1).collect();
        let this = Some(snapshot.pods[pod as usize].key.as_str()) == self.odd_out;
        Ok(match this && !odd.is_empty() {
            true => vec![Rejection {
                reason: "odd node".into(),
                nodes: odd,
            }],
            false => Vec::new(),
        })
    }

    fn score(
        &mut self,
        _snapshot: &mut Snapshot,
        _pod: PodId,
        nodes: &[NodeId],
    ) -> Answer<Result<Vec<i64>, crate::framework::Status>> {
        self.scored.borrow_mut().push(nodes.to_vec());
        let top = nodes.iter().max().copied();
        Ok(Ok(nodes
            .iter()
            .map(|&n| if Some(n) == top { 100 } else { 0 })
            .collect()))
    }
}

/// Runs `snapshot` with a [`Recorder`] at `percentage`: the node lists
/// scored and the nodes chosen, pod by pod.
fn sampled(
    snapshot: &Snapshot,
    percentage: u32,
    odd_out: Option<&'static str>,
) -> (Vec<Vec<NodeId>>, Vec<String>) {
    sampled_with(snapshot, percentage, odd_out, true)
}

/// [`sampled`], the [`Recorder`] a filter plugin or not.
fn sampled_with(
    snapshot: &Snapshot,
    percentage: u32,
    odd_out: Option<&'static str>,
    filters: bool,
) -> (Vec<Vec<NodeId>>, Vec<String>) {
    let scored = Scored::default();
    let mut plugins = PluginSet::new();
    plugins
        .add(Box::new(Recorder {
            odd_out,
            scored: scored.clone(),
            filters,
        }))
        .unwrap();
    plugins.set_percentage_of_nodes_to_score(percentage);
    let outcome = run(
        &mut snapshot.clone(),
        &mut plugins,
        super::RunOptions::default(),
    );
    let chosen = outcome.placements.iter().map(|b| b.node.clone()).collect();
    (scored.take(), chosen)
}

fn range(from: NodeId, to: NodeId) -> Vec<NodeId> {
    (from..to).collect()
}

#[test]
fn the_number_of_nodes_to_find_is_upstreams() {
    let mut set = PluginSet::new();
    // Adaptive: every node below 100; 50% less one point per 125 nodes,
    // at least 5%, never fewer than 100 nodes.
    for (all, wanted) in [
        (0, 0),
        (99, 99),
        (100, 100),
        (200, 100),
        (300, 144),
        (1_000, 420),
        (5_000, 500),
        (6_000, 300),
        (20_000, 1_000),
    ] {
        assert_eq!(set.feasible_nodes_to_find(all), wanted, "{all} nodes");
    }
    set.set_percentage_of_nodes_to_score(30);
    assert_eq!(set.feasible_nodes_to_find(1_000), 300);
    assert_eq!(set.feasible_nodes_to_find(200), 100);
    assert_eq!(set.feasible_nodes_to_find(50), 50);
    set.set_percentage_of_nodes_to_score(100);
    assert_eq!(set.feasible_nodes_to_find(5_000), 5_000);
}

#[test]
fn each_pod_scores_the_next_share_of_a_large_cluster() {
    let snapshot = cluster(300, 3);
    // 300 nodes: 48% = 144 nodes per pod, each search starting where the
    // last one stopped and wrapping round.
    let (scored, chosen) = sampled(&snapshot, 0, None);
    let third: Vec<NodeId> = range(0, 132).into_iter().chain(range(288, 300)).collect();
    assert_eq!(scored, vec![range(0, 144), range(144, 288), third]);
    // The best of the nodes found, not of the cluster.
    assert_eq!(chosen, ["n143", "n287", "n299"]);

    // Every node, every time, at 100%.
    let (scored, chosen) = sampled(&snapshot, 100, None);
    assert_eq!(scored, vec![range(0, 300); 3]);
    assert_eq!(chosen, ["n299", "n299", "n299"]);
}

#[test]
fn without_filter_plugins_the_walk_stops_alike() {
    // The host's checks alone (one pass, no rounds): the same shares.
    let snapshot = cluster(300, 3);
    let (scored, chosen) = sampled_with(&snapshot, 0, None, false);
    let third: Vec<NodeId> = range(0, 132).into_iter().chain(range(288, 300)).collect();
    assert_eq!(scored, vec![range(0, 144), range(144, 288), third]);
    assert_eq!(chosen, ["n143", "n287", "n299"]);
    let (scored, _) = sampled_with(&snapshot, 100, None, false);
    assert_eq!(scored, vec![range(0, 300); 3]);
}

#[test]
fn the_search_goes_on_until_enough_nodes_pass_the_filter_plugins() {
    let snapshot = cluster(300, 2);
    // Odd nodes are filtered out for the first pod: it needs 144 even
    // nodes (n000..n286), and its walk stops at the next even one, n288,
    // as kube-scheduler's does with one worker (the odd n287 was looked
    // at). The second pod, filtered by nothing, starts there.
    let (scored, _) = sampled(&snapshot, 0, Some("t/p0"));
    let evens = |ids: Vec<NodeId>| ids.into_iter().filter(|n| n % 2 == 0).collect::<Vec<_>>();
    assert_eq!(scored[0], evens(range(0, 287)));
    assert_eq!(scored[0].len(), 144);
    let mut second = range(0, 132);
    second.extend(range(288, 300));
    assert_eq!(scored[1], second);
}

#[test]
fn small_clusters_are_searched_whole() {
    let snapshot = cluster(99, 2);
    let (scored, _) = sampled(&snapshot, 0, None);
    assert_eq!(scored, vec![range(0, 99); 2]);
}

#[test]
fn the_percentage_comes_from_the_configuration() {
    let text = |global: &str, profile: &str| {
        format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{global}profiles:\n- schedulerName: default-scheduler\n{profile}"
        )
    };
    let read = |text: &str| PluginConfig::parse(text).map(|c| c.percentage_of_nodes_to_score());
    assert_eq!(read(&text("", "")).unwrap(), 0);
    assert_eq!(
        read(&text("percentageOfNodesToScore: 40\n", "")).unwrap(),
        40
    );
    // The profile's own value wins.
    assert_eq!(
        read(&text(
            "percentageOfNodesToScore: 40\n",
            "  percentageOfNodesToScore: 70\n"
        ))
        .unwrap(),
        70
    );
    let error = read(&text("", "  percentageOfNodesToScore: 101\n")).unwrap_err();
    assert_eq!(
        format!("{error:#}"),
        "field profiles[0].percentageOfNodesToScore: 101 is not in the valid range 0..100"
    );
    // Every profile's value is checked, not only the one wasched reads.
    let two = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: wasched\n- schedulerName: other\n  percentageOfNodesToScore: 200\n";
    assert_eq!(
        format!("{:#}", read(two).unwrap_err()),
        "field profiles[1].percentageOfNodesToScore: 200 is not in the valid range 0..100"
    );
    assert!(read(&text("percentageOfNodesToScore: -1\n", "")).is_err());
    // And the assembled set uses it.
    let config = PluginConfig::parse(&text("percentageOfNodesToScore: 100\n", "")).unwrap();
    let (set, _) = config.assemble(Vec::new()).unwrap();
    assert_eq!(set.feasible_nodes_to_find(5_000), 5_000);
}

#[test]
fn a_long_lived_scheduler_carries_the_start_across_runs() {
    let snapshot = cluster(300, 1);
    let scored = Scored::default();
    let mut plugins = PluginSet::new();
    plugins
        .add(Box::new(Recorder {
            odd_out: None,
            scored: scored.clone(),
            filters: true,
        }))
        .unwrap();
    let start = std::cell::Cell::new(0);
    for _ in 0..2 {
        let options = super::RunOptions {
            search_start: Some(&start),
            ..Default::default()
        };
        run(&mut snapshot.clone(), &mut plugins, options);
    }
    assert_eq!(scored.take(), vec![range(0, 144), range(144, 288)]);
    assert_eq!(start.get(), 288);
    // Without it, every run starts at the first node (and decides the
    // same each time).
    for _ in 0..2 {
        run(
            &mut snapshot.clone(),
            &mut plugins,
            super::RunOptions::default(),
        );
    }
    assert_eq!(scored.take(), vec![range(0, 144); 2]);
}

#[test]
fn explaining_why_a_group_fails_does_not_move_the_search() {
    let gang = "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: t}\nspec: {schedulingPolicy: {gang: {minCount: 2}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: g-0, namespace: t}\nspec:\n  schedulingGroup: {podGroupName: g}\n  containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]\n---\n";
    let mut snapshot = cluster_with(300, 0, gang);
    let mut plugins = PluginSet::new();
    let pending: Vec<PodId> = snapshot.groups[0].members.clone();
    let mut cycle = super::Cycle::new(&mut snapshot, &mut plugins);
    cycle.next_start_node = 7;
    let all = Placement::cluster(300);
    let line = cycle.explain_domains(0, &pending, std::slice::from_ref(&all), &all, "rack");
    assert!(line.contains("fits 1"), "{line}");
    assert_eq!(cycle.next_start_node, 7);
}
