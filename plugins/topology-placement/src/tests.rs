//! Table-driven tests of the placement rules, and of the plugin over a
//! [`NativeCluster`], run natively.

use super::*;
use wasched_sdk::native::{NativeCluster, take_logs};

const RACK: &str = "example.com/rack";
const HOSTNAME: &str = "kubernetes.io/hostname";

fn plugin() -> TopologyPlacement {
    wasched_sdk::configure::<TopologyPlacement>("{}").unwrap()
}

fn configured(args: &str) -> TopologyPlacement {
    wasched_sdk::configure::<TopologyPlacement>(args).unwrap()
}

/// The whole cluster as the host's first parent placement.
fn everything(cluster: &NativeCluster) -> Placement {
    Placement {
        name: String::new(),
        nodes: (0..cluster.node_count()).collect(),
        domain: None,
    }
}

fn names(placements: &Placements) -> Vec<&str> {
    placements
        .candidates
        .iter()
        .map(|p| p.name.as_str())
        .collect()
}

/// Nodes `n0 .. n{len}`, with `racks[i]` as the rack label of node `i`
/// (`None`: unlabelled) and a hostname label each; 4000m cpu, 8 GiB each.
fn rack_cluster(racks: &[Option<&str>]) -> NativeCluster {
    let mut cluster = NativeCluster::new();
    for (i, rack) in racks.iter().enumerate() {
        let name = format!("n{i}");
        let node = cluster
            .add_node(&name)
            .label(HOSTNAME, &name)
            .allocatable("cpu", 4000)
            .allocatable("memory", 8 << 30)
            .allocatable("pods", 110);
        if let Some(rack) = rack {
            node.label(RACK, rack);
        }
    }
    cluster
}

// ---------------------------------------------------------------------------
// Plain functions
// ---------------------------------------------------------------------------

#[test]
fn group_by_value_table() {
    // Symbols 10, 11; node 2 unlabelled; node 9 outside the column.
    let column = [Some(11), Some(10), None, Some(11)];
    let cases = [
        (
            "all nodes",
            vec![0, 1, 2, 3],
            BTreeMap::from([(10, vec![1]), (11, vec![0, 3])]),
        ),
        (
            "unsorted with repeats",
            vec![3, 0, 3],
            BTreeMap::from([(11, vec![0, 3])]),
        ),
        ("unlabelled and unknown nodes", vec![2, 9], BTreeMap::new()),
        ("no nodes", vec![], BTreeMap::new()),
    ];
    for (name, nodes, expected) in cases {
        assert_eq!(group_by_value(&nodes, &column), expected, "{name}");
    }
}

#[test]
fn pinned_value_table() {
    // Symbol 1 is "r2", 2 is "r1", 3 is "r3": ties go by text, not id.
    let text = |symbol: Symbol| match symbol {
        1 => "r2".to_string(),
        2 => "r1".to_string(),
        3 => "r3".to_string(),
        _ => panic!("unexpected symbol {symbol}"),
    };
    let cases = [
        ("nothing bound", BTreeMap::new(), None),
        ("one domain", BTreeMap::from([(3, 2)]), Some(3)),
        ("majority wins", BTreeMap::from([(1, 1), (3, 4)]), Some(3)),
        (
            "tie: smallest text",
            BTreeMap::from([(1, 2), (2, 2), (3, 1)]),
            Some(2),
        ),
        (
            "tie among the most only",
            BTreeMap::from([(1, 3), (2, 1), (3, 3)]),
            Some(1),
        ),
    ];
    for (name, counts, expected) in cases {
        assert_eq!(pinned_value(&counts, text), expected, "{name}");
    }
    // No texts are resolved without a tie.
    let counts = BTreeMap::from([(7, 1)]);
    assert_eq!(pinned_value(&counts, |_| unreachable!()), Some(7));
}

#[test]
fn topology_placements_orders_pins_and_names() {
    // key 0 = "rack"; values 1 = "b", 2 = "a", 3 = "c".
    let text = |symbol: Symbol| ["rack", "b", "a", "c"][symbol as usize].to_string();
    let column = [Some(1), Some(2), Some(1), None, Some(3)];
    let all: Vec<NodeId> = (0..5).collect();

    let placements = topology_placements(0, "rack", &all, &column, &[], text);
    let placement = |name: &str, nodes: &[NodeId], value| Placement {
        name: name.into(),
        nodes: nodes.to_vec(),
        domain: Some((0, value)),
    };
    assert_eq!(
        placements,
        [
            placement("rack=a", &[1], 2),
            placement("rack=b", &[0, 2], 1),
            placement("rack=c", &[4], 3),
        ]
    );

    // Bound pods on nodes 4, 0, 2 → "b" (two pods) wins over "c" (one).
    let pinned = topology_placements(0, "rack", &all, &column, &[4, 0, 2], text);
    assert_eq!(pinned.len(), 1);
    assert_eq!(
        (pinned[0].name.as_str(), &pinned[0].nodes[..]),
        ("rack=b", &[0, 2][..])
    );

    // Bound pods only on unlabelled nodes pin nothing.
    assert_eq!(
        topology_placements(0, "rack", &all, &column, &[3], text).len(),
        3
    );

    // The pinned domain is outside the parent: no candidate.
    assert!(topology_placements(0, "rack", &[0, 1, 2], &column, &[4], text).is_empty());
}

#[test]
fn resources_to_score_table() {
    let cases = [
        ("no pods", vec![], vec![0, 1]),
        (
            "cpu and memory only",
            vec![vec![500, 1 << 30, 1]],
            vec![0, 1],
        ),
        (
            "extended resource requested by one pod",
            vec![vec![500, 0, 1, 0, 0], vec![0, 0, 1, 0, 2]],
            vec![0, 1, 4],
        ),
        ("pods column never scored", vec![vec![0, 0, 5]], vec![0, 1]),
    ];
    for (name, requests, expected) in cases {
        assert_eq!(resources_to_score(&requests), expected, "{name}");
    }
}

#[test]
fn most_allocated_score_table() {
    let total = |requested, allocatable| ResourceTotal {
        requested,
        allocatable,
    };
    let cases = [
        ("nothing to score", vec![], 0),
        ("empty", vec![total(0, 4000)], 0),
        ("half", vec![total(2000, 4000)], 50),
        ("full", vec![total(4000, 4000)], 100),
        ("over-committed is capped", vec![total(9000, 4000)], 100),
        ("average", vec![total(1000, 4000), total(3, 4)], 50),
        ("integer division", vec![total(1, 3)], 33),
        (
            "no allocatable: not averaged in",
            vec![total(3000, 4000), total(5, 0)],
            75,
        ),
        ("only zero allocatable", vec![total(5, 0)], 0),
    ];
    for (name, totals, expected) in cases {
        assert_eq!(most_allocated_score(&totals), expected, "{name}");
    }
    assert_eq!(
        ResourceTotal::over(&[1, 2, 3], &[10, 20, 30], &[0, 2, 7]),
        total(4, 40)
    );
}

#[test]
fn pods_count_and_combined_score_tables() {
    let counts = [
        (0, 0, 0),
        (0, 4, 0),
        (2, 4, 50),
        (4, 4, 100),
        (1, 3, 33),
        (5, 4, 100),
    ];
    for (assigned, members, expected) in counts {
        assert_eq!(
            pods_count_score(assigned, members),
            expected,
            "{assigned}/{members}"
        );
    }

    let weights = |resource_fit, pods_count| Weights {
        resource_fit,
        pods_count,
    };
    let combined = [
        (80, 40, weights(1, 1), 60),
        (80, 40, weights(3, 1), 70),
        (80, 40, weights(0, 1), 40),
        (80, 40, weights(1, 0), 80),
        (33, 34, weights(1, 1), 33),
        (100, 100, weights(u32::MAX, u32::MAX), 100),
        (80, 40, weights(0, 0), 0),
    ];
    for (fit, count, weights, expected) in combined {
        assert_eq!(
            combined_score(fit, count, weights),
            expected,
            "{fit} {count} {weights:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Args
// ---------------------------------------------------------------------------

#[test]
fn args_defaults_and_overrides() {
    assert_eq!(plugin().args(), Args::default());
    assert_eq!(
        Args::default(),
        Args {
            search_budget: 10_000,
            resource_fit_weight: 1,
            pods_count_weight: 1,
        }
    );
    assert_eq!(
        configured("").args(),
        Args::default(),
        "empty args mean defaults"
    );
    let args = configured(r#"{"searchBudget": 50, "podsCountWeight": 0}"#).args();
    assert_eq!(
        args,
        Args {
            search_budget: 50,
            resource_fit_weight: 1,
            pods_count_weight: 0,
        }
    );
}

#[test]
fn bad_args_are_refused() {
    let configure = wasched_sdk::configure::<TopologyPlacement>;
    let cases = [
        (
            r#"{"searchBudget": 0}"#,
            "TopologyPlacement: searchBudget must be >= 1, got 0 (omit it for the default 10000)",
        ),
        (
            r#"{"resourceFitWeight": 0, "podsCountWeight": 0}"#,
            "TopologyPlacement: resourceFitWeight and podsCountWeight are both 0; at least one must be >= 1",
        ),
        (
            r#"{"searchbudget": 5}"#,
            "invalid args for TopologyPlacement: unknown field `searchbudget`",
        ),
        (
            r#"{"podsCountWeight": -1}"#,
            "invalid args for TopologyPlacement: invalid value: integer `-1`, expected u32",
        ),
        (
            r#"{"searchBudget": "many"}"#,
            "invalid args for TopologyPlacement: invalid type: string \"many\", expected u32",
        ),
    ];
    for (args, message) in cases {
        let err = configure(args).unwrap_err();
        assert!(err.starts_with(message), "{args}: {err}");
    }
}

// ---------------------------------------------------------------------------
// PlacementGenerate over a NativeCluster
// ---------------------------------------------------------------------------

#[test]
fn one_placement_per_rack_value() {
    let mut cluster = rack_cluster(&[Some("r2"), Some("r1"), Some("r2"), Some("r3")]);
    let pg = cluster
        .add_pod_group("ns/pg")
        .gang(2)
        .topology_key(RACK)
        .id();
    cluster.add_pod("ns/pg-0").group(pg);
    cluster.add_pod("ns/pg-1").group(pg);

    let placements = plugin()
        .generate_placements(&cluster, Unit::PodGroup(pg), &everything(&cluster))
        .unwrap();
    assert_eq!(
        names(&placements),
        [
            "example.com/rack=r1",
            "example.com/rack=r2",
            "example.com/rack=r3"
        ]
    );
    let nodes: Vec<&[NodeId]> = placements
        .candidates
        .iter()
        .map(|p| p.nodes.as_slice())
        .collect();
    assert_eq!(nodes, [&[1][..], &[0, 2], &[3]]);
    let rack = cluster.lookup(RACK).unwrap();
    let r2 = cluster.lookup("r2").unwrap();
    assert_eq!(placements.candidates[1].domain, Some((rack, r2)));
    assert_eq!(
        placements.search_budget, None,
        "PodGroup units get no budget"
    );
}

#[test]
fn unlabelled_nodes_are_in_no_placement() {
    let mut cluster = rack_cluster(&[None, Some("r1"), None, Some("r1")]);
    let pg = cluster.add_pod_group("ns/pg").topology_key(RACK).id();
    cluster.add_pod("ns/pg-0").group(pg);
    let placements = plugin()
        .generate_placements(&cluster, Unit::PodGroup(pg), &everything(&cluster))
        .unwrap();
    assert_eq!(names(&placements), ["example.com/rack=r1"]);
    assert_eq!(placements.candidates[0].nodes, [1, 3]);

    // No node carries the label: an empty candidate list, not a skip.
    let mut bare = NativeCluster::new();
    bare.add_node("n0");
    let pg = bare.add_pod_group("ns/pg").topology_key(RACK).id();
    let placements = plugin()
        .generate_placements(&bare, Unit::PodGroup(pg), &everything(&bare))
        .unwrap();
    assert!(placements.candidates.is_empty());
}

#[test]
fn hostname_key_gives_one_placement_per_node() {
    let mut cluster = rack_cluster(&[Some("r1"), Some("r1"), Some("r2")]);
    let pg = cluster.add_pod_group("ns/pg").topology_key(HOSTNAME).id();
    cluster.add_pod("ns/pg-0").group(pg);
    let placements = plugin()
        .generate_placements(&cluster, Unit::PodGroup(pg), &everything(&cluster))
        .unwrap();
    assert_eq!(
        names(&placements),
        [
            "kubernetes.io/hostname=n0",
            "kubernetes.io/hostname=n1",
            "kubernetes.io/hostname=n2"
        ]
    );
    for (i, placement) in placements.candidates.iter().enumerate() {
        assert_eq!(placement.nodes, [i as NodeId]);
    }
}

#[test]
fn bound_members_pin_the_domain() {
    let mut cluster = rack_cluster(&[Some("r1"), Some("r2"), Some("r2"), Some("r3"), None]);
    let pg = cluster
        .add_pod_group("ns/pg")
        .gang(3)
        .topology_key(RACK)
        .id();
    cluster.add_pod("ns/pg-0").group(pg).on_node(2);
    cluster.add_pod("ns/pg-1").group(pg);
    cluster.add_pod("ns/pg-2").group(pg);
    // A pod of another group on r1 does not pin this one.
    let other = cluster.add_pod_group("ns/other").id();
    cluster.add_pod("ns/other-0").group(other).on_node(0);
    let mut plugin = plugin();

    let generate = |plugin: &mut TopologyPlacement, cluster: &NativeCluster| {
        plugin
            .generate_placements(cluster, Unit::PodGroup(pg), &everything(cluster))
            .unwrap()
    };
    let placements = generate(&mut plugin, &cluster);
    assert_eq!(names(&placements), ["example.com/rack=r2"]);
    assert_eq!(placements.candidates[0].nodes, [1, 2]);
    assert!(take_logs().is_empty());

    // Members spread over r3 (2 pods) and r2 (1 pod): the majority wins, with a warning.
    cluster.add_pod("ns/pg-3").group(pg).on_node(3);
    cluster.add_pod("ns/pg-4").group(pg).on_node(3);
    assert_eq!(
        names(&generate(&mut plugin, &cluster)),
        ["example.com/rack=r3"]
    );
    let logs = take_logs();
    assert_eq!(logs.len(), 1);
    assert_eq!(logs[0].0, Level::Warn);
    assert_eq!(
        logs[0].1,
        "bound members of ns/pg span 2 domains of example.com/rack; candidates limited to the one with the most (example.com/rack=r3)"
    );

    // A tie (2 on r2, 2 on r3) goes to the smaller value text.
    cluster.add_pod("ns/pg-5").group(pg).on_node(1);
    assert_eq!(
        names(&generate(&mut plugin, &cluster)),
        ["example.com/rack=r2"]
    );

    // A member on an unlabelled node pins nothing by itself.
    let mut cluster = rack_cluster(&[Some("r1"), Some("r2"), None]);
    let pg = cluster.add_pod_group("ns/pg").topology_key(RACK).id();
    cluster.add_pod("ns/pg-0").group(pg).on_node(2);
    let placements = plugin
        .generate_placements(&cluster, Unit::PodGroup(pg), &everything(&cluster))
        .unwrap();
    assert_eq!(names(&placements).len(), 2);
}

#[test]
fn parent_restricts_the_nodes() {
    let mut cluster = rack_cluster(&[Some("r1"), Some("r1"), Some("r2"), Some("r3")]);
    let pg = cluster.add_pod_group("ns/pg").topology_key(RACK).id();
    cluster.add_pod("ns/pg-0").group(pg);
    let parent = Placement {
        name: "zone=a".into(),
        nodes: vec![1, 2],
        domain: None,
    };
    let placements = plugin()
        .generate_placements(&cluster, Unit::PodGroup(pg), &parent)
        .unwrap();
    assert_eq!(
        names(&placements),
        ["example.com/rack=r1", "example.com/rack=r2"]
    );
    assert_eq!(placements.candidates[0].nodes, [1]);
    assert_eq!(placements.candidates[1].nodes, [2]);

    // Bound members pin r3, which is outside the parent: no candidate.
    cluster.add_pod("ns/pg-1").group(pg).on_node(3);
    let placements = plugin()
        .generate_placements(&cluster, Unit::PodGroup(pg), &parent)
        .unwrap();
    assert!(placements.candidates.is_empty());
}

/// root (key: zone, budget) ── inner (key: rack) ── ns/a (no key)
///                          └── ns/b (key: hostname)
#[test]
fn composite_units_use_their_own_key_and_get_the_budget() {
    let mut cluster = NativeCluster::new();
    for (name, zone, rack) in [
        ("n0", "z1", "r1"),
        ("n1", "z1", "r2"),
        ("n2", "z2", "r3"),
        ("n3", "z2", "r3"),
    ] {
        cluster
            .add_node(name)
            .label("zone", zone)
            .label(RACK, rack)
            .label(HOSTNAME, name);
    }
    let root = cluster.add_composite("ns/root").topology_key("zone").id();
    let inner = cluster
        .add_composite("ns/inner")
        .topology_key(RACK)
        .parent(root)
        .id();
    let a = cluster.add_pod_group("ns/a").parent(inner).id();
    let b = cluster
        .add_pod_group("ns/b")
        .topology_key(HOSTNAME)
        .parent(root)
        .id();
    cluster.add_pod("ns/a-0").group(a);
    cluster.add_pod("ns/b-0").group(b);
    let mut plugin = configured(r#"{"searchBudget": 64}"#);
    let all = everything(&cluster);

    let placements = plugin
        .generate_placements(&cluster, Unit::Composite(root), &all)
        .unwrap();
    assert_eq!(names(&placements), ["zone=z1", "zone=z2"]);
    assert_eq!(placements.search_budget, Some(64));

    // The inner composite, inside the root's z2: one rack there.
    let z2 = placements.candidates[1].clone();
    let placements = plugin
        .generate_placements(&cluster, Unit::Composite(inner), &z2)
        .unwrap();
    assert_eq!(names(&placements), ["example.com/rack=r3"]);
    assert_eq!(placements.candidates[0].nodes, [2, 3]);
    assert_eq!(placements.search_budget, Some(64));

    // A PodGroup with its own key gets no budget.
    let placements = plugin
        .generate_placements(&cluster, Unit::PodGroup(b), &z2)
        .unwrap();
    assert_eq!(
        names(&placements),
        ["kubernetes.io/hostname=n2", "kubernetes.io/hostname=n3"]
    );
    assert_eq!(placements.search_budget, None);

    // A pod bound in a grandchild PodGroup pins the root's zone.
    cluster.add_pod("ns/a-1").group(a).on_node(1);
    let placements = plugin
        .generate_placements(&cluster, Unit::Composite(root), &all)
        .unwrap();
    assert_eq!(names(&placements), ["zone=z1"]);
    let placements = plugin
        .generate_placements(&cluster, Unit::Composite(inner), &all)
        .unwrap();
    assert_eq!(names(&placements), ["example.com/rack=r2"]);
}

#[test]
fn units_without_a_key_are_skipped() {
    let mut cluster = rack_cluster(&[Some("r1")]);
    let plain = cluster.add_pod_group("ns/plain").id();
    let missing = cluster.add_pod_group("ns/gone").missing().id();
    let composite = cluster.add_composite("ns/c").id();
    let all = everything(&cluster);
    let mut plugin = plugin();
    let cases = [
        (Unit::PodGroup(plain), "ns/plain has no topology constraint"),
        (
            Unit::PodGroup(missing),
            "ns/gone has no topology constraint",
        ),
        (
            Unit::Composite(composite),
            "ns/c has no topology constraint",
        ),
        (Unit::PodGroup(99), "unit not found"),
        (Unit::Composite(99), "unit not found"),
    ];
    for (unit, reason) in cases {
        let status = plugin
            .generate_placements(&cluster, unit, &all)
            .unwrap_err();
        assert_eq!(status, Status::new(Code::Skip, reason), "{unit:?}");
    }
}

// ---------------------------------------------------------------------------
// PlacementScore over a NativeCluster
// ---------------------------------------------------------------------------

/// Two racks of two nodes (4000m cpu, 8 GiB, 2 GPUs each); `busy` pods of
/// 2000m / 2 GiB already run on rack r1's first node.
fn scoring_cluster(busy: usize) -> NativeCluster {
    let mut cluster = NativeCluster::new();
    for (name, rack) in [("n0", "r1"), ("n1", "r1"), ("n2", "r2"), ("n3", "r2")] {
        cluster
            .add_node(name)
            .label(RACK, rack)
            .allocatable("cpu", 4000)
            .allocatable("memory", 8 << 30)
            .allocatable("nvidia.com/gpu", 2);
    }
    for i in 0..busy {
        cluster
            .add_pod(&format!("other/busy-{i}"))
            .request("cpu", 2000)
            .request("memory", 2 << 30)
            .on_node(0);
    }
    cluster
}

/// The placement of rack `value`, as the plugin generates it.
fn rack(cluster: &NativeCluster, value: &str) -> Placement {
    let key = cluster.lookup(RACK).unwrap();
    let column = cluster.node_label_column(key);
    let name = format!("{RACK}={value}");
    let value = cluster.lookup(value).unwrap();
    Placement {
        name,
        nodes: (0..cluster.node_count())
            .filter(|&n| column[n as usize] == Some(value))
            .collect(),
        domain: Some((key, value)),
    }
}

#[test]
fn scoring_prefers_the_fuller_placement() {
    let mut cluster = scoring_cluster(1);
    let pg = cluster
        .add_pod_group("ns/pg")
        .gang(2)
        .topology_key(RACK)
        .id();
    // Two pods of the same size assumed in r1 (nodes 0, 1) and two in r2
    // (nodes 2, 3), all in one snapshot: each placement sums only its own
    // nodes, so r1 differs from r2 only by the busy pod.
    let mut assign = |name: &str, node: NodeId| {
        let pod = cluster
            .add_pod(name)
            .group(pg)
            .request("cpu", 1000)
            .request("memory", 1 << 30)
            .on_node(node)
            .id();
        Assignment { pod, node }
    };
    let in_r1 = [assign("ns/pg-0", 0), assign("ns/pg-1", 1)];
    let in_r2 = [assign("ns/pg-2", 2), assign("ns/pg-3", 3)];
    let mut plugin = configured(r#"{"podsCountWeight": 0}"#);
    let unit = Unit::PodGroup(pg);

    // r1: cpu 4000/8000 = 50, memory 4 GiB/16 GiB = 25 → 37.
    let r1 = plugin
        .score_placement(&cluster, unit, &rack(&cluster, "r1"), &in_r1)
        .unwrap();
    // r2: cpu 2000/8000 = 25, memory 2/16 = 12 → 18.
    let r2 = plugin
        .score_placement(&cluster, unit, &rack(&cluster, "r2"), &in_r2)
        .unwrap();
    assert_eq!((r1, r2), (37, 18));
}

#[test]
fn scoring_counts_requested_extended_resources() {
    let mut cluster = scoring_cluster(0);
    let pg = cluster.add_pod_group("ns/pg").topology_key(RACK).id();
    let gpu_pod = cluster
        .add_pod("ns/pg-0")
        .group(pg)
        .request("cpu", 2000)
        .request("nvidia.com/gpu", 4)
        .on_node(0)
        .id();
    let cpu_pod = cluster
        .add_pod("ns/pg-1")
        .group(pg)
        .request("cpu", 2000)
        .on_node(1)
        .id();
    let mut plugin = configured(r#"{"podsCountWeight": 0}"#);
    let r1 = rack(&cluster, "r1");
    let unit = Unit::PodGroup(pg);
    // Assigned pods request GPUs: cpu 4000/8000 = 50, memory 0, gpu 4/4 = 100 → 50.
    let both = [
        Assignment {
            pod: gpu_pod,
            node: 0,
        },
        Assignment {
            pod: cpu_pod,
            node: 1,
        },
    ];
    assert_eq!(plugin.score_placement(&cluster, unit, &r1, &both), Ok(50));
    // Only the cpu pod assigned: the GPU column is not scored, (50 + 0) / 2.
    let cpu_only = [Assignment {
        pod: cpu_pod,
        node: 1,
    }];
    assert_eq!(
        plugin.score_placement(&cluster, unit, &r1, &cpu_only),
        Ok(25)
    );
}

#[test]
fn scoring_prefers_more_pods() {
    let mut cluster = scoring_cluster(0);
    let pg = cluster
        .add_pod_group("ns/pg")
        .gang(2)
        .topology_key(RACK)
        .id();
    let pods: Vec<PodId> = (0..4)
        .map(|i| cluster.add_pod(&format!("ns/pg-{i}")).group(pg).id())
        .collect();
    let mut plugin = configured(r#"{"resourceFitWeight": 0}"#);
    let unit = Unit::PodGroup(pg);
    let r1 = rack(&cluster, "r1");
    let assign = |n: usize| -> Vec<Assignment> {
        pods[..n]
            .iter()
            .map(|&pod| Assignment { pod, node: 0 })
            .collect()
    };
    let scores: Vec<i64> = [1, 2, 3, 4]
        .into_iter()
        .map(|n| {
            plugin
                .score_placement(&cluster, unit, &r1, &assign(n))
                .unwrap()
        })
        .collect();
    assert_eq!(scores, [25, 50, 75, 100]);
}

#[test]
fn composite_pods_count_covers_its_subtree() {
    let mut cluster = scoring_cluster(0);
    let root = cluster.add_composite("ns/root").topology_key(RACK).id();
    let inner = cluster.add_composite("ns/inner").parent(root).id();
    let a = cluster.add_pod_group("ns/a").parent(root).id();
    let b = cluster.add_pod_group("ns/b").parent(inner).id();
    let a0 = cluster.add_pod("ns/a-0").group(a).id();
    cluster.add_pod("ns/a-1").group(a);
    let b0 = cluster.add_pod("ns/b-0").group(b).id();
    cluster.add_pod("ns/b-1").group(b);
    let mut plugin = configured(r#"{"resourceFitWeight": 0}"#);
    let assignments = [
        Assignment { pod: a0, node: 0 },
        Assignment { pod: b0, node: 1 },
    ];
    // 2 assigned of 4 pending members across the tree.
    assert_eq!(
        plugin
            .score_placement(
                &cluster,
                Unit::Composite(root),
                &rack(&cluster, "r1"),
                &assignments
            )
            .unwrap(),
        50
    );
}

#[test]
fn weights_change_the_order() {
    // r1 is fuller (a busy pod) but gets 1 pod of the group; r2 is empty
    // and gets 2.
    let mut cluster = scoring_cluster(1);
    let pg = cluster.add_pod_group("ns/pg").topology_key(RACK).id();
    let mut assign = |name: &str, node: NodeId| {
        let pod = cluster
            .add_pod(name)
            .group(pg)
            .request("cpu", 1000)
            .request("memory", 1 << 30)
            .on_node(node)
            .id();
        Assignment { pod, node }
    };
    let in_r1 = [assign("ns/pg-0", 0)];
    let in_r2 = [assign("ns/pg-1", 2), assign("ns/pg-2", 3)];
    // Two more members still pending.
    cluster.add_pod("ns/pg-3").group(pg);
    cluster.add_pod("ns/pg-4").group(pg);
    let (r1_nodes, r2_nodes) = (rack(&cluster, "r1"), rack(&cluster, "r2"));
    let score = |args: &str| {
        let mut plugin = configured(args);
        let unit = Unit::PodGroup(pg);
        (
            plugin
                .score_placement(&cluster, unit, &r1_nodes, &in_r1)
                .unwrap(),
            plugin
                .score_placement(&cluster, unit, &r2_nodes, &in_r2)
                .unwrap(),
        )
    };
    // Fit only: r1 cpu 3000/8000 = 37, memory 3/16 GiB = 18 → 27;
    //           r2 cpu 2000/8000 = 25, memory 2/16 GiB = 12 → 18.
    assert_eq!(score(r#"{"podsCountWeight": 0}"#), (27, 18));
    // Count only (assigned / pending + assigned): r1 1/3 = 33, r2 2/4 = 50.
    assert_eq!(score(r#"{"resourceFitWeight": 0}"#), (33, 50));
    // Equal weights: r1 (27 + 33) / 2 = 30, r2 (18 + 50) / 2 = 34 → r2.
    assert_eq!(score("{}"), (30, 34));
    // Fit weighted 5:1: r1 (5·27 + 33) / 6 = 28, r2 (5·18 + 50) / 6 = 23 → r1.
    assert_eq!(
        score(r#"{"resourceFitWeight": 5, "podsCountWeight": 1}"#),
        (28, 23)
    );
}

#[test]
fn scoring_edge_cases() {
    let mut cluster = scoring_cluster(0);
    let pg = cluster.add_pod_group("ns/pg").id();
    let mut plugin = plugin();
    // No assignments, empty placement, unknown unit: all 0, never an error.
    let empty = Placement::default();
    assert_eq!(
        plugin.score_placement(&cluster, Unit::PodGroup(pg), &empty, &[]),
        Ok(0)
    );
    assert_eq!(
        plugin.score_placement(&cluster, Unit::Composite(7), &empty, &[]),
        Ok(0)
    );
    // An unknown unit with assignments: the assigned pods are the members.
    let pod = cluster.add_pod("ns/x").request("cpu", 4000).on_node(0).id();
    let n0 = Placement {
        name: "n0".into(),
        nodes: vec![0],
        domain: None,
    };
    // fit: cpu 100, memory 0 → 50; count 1/1 → 100; total 75.
    assert_eq!(
        plugin.score_placement(
            &cluster,
            Unit::PodGroup(42),
            &n0,
            &[Assignment { pod, node: 0 }]
        ),
        Ok(75)
    );
}
