//! Table-driven tests of the placement rules, and of the plugin over a
//! [`FakeCluster`], run natively.

use super::*;
use wasched_sdk::fake::{FakeCluster, take_logs};

const RACK: &str = "example.com/rack";
const HOSTNAME: &str = "kubernetes.io/hostname";

fn plugin() -> TopologyPlacement {
    wasched_sdk::configure::<TopologyPlacement>("{}").unwrap()
}

fn configured(args: &str) -> TopologyPlacement {
    wasched_sdk::configure::<TopologyPlacement>(args).unwrap()
}

/// The whole cluster as the host's first parent placement.
fn everything(cluster: &FakeCluster) -> Placement {
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
fn rack_cluster(racks: &[Option<&str>]) -> FakeCluster {
    let mut cluster = FakeCluster::new();
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
    // The parent's nodes grouped as the host does (by value text).
    let domains = |nodes: &[NodeId]| {
        let mut domains: Vec<LabelDomain> = Vec::new();
        for &node in nodes {
            let Some(value) = column[node as usize] else {
                continue;
            };
            match domains.iter_mut().find(|d| d.value == value) {
                Some(d) => d.nodes.push(node),
                None => domains.push(LabelDomain {
                    value,
                    value_text: text(value),
                    nodes: vec![node],
                }),
            }
        }
        domains.sort_by_key(|d| text(d.value));
        domains
    };
    let counts = |bound: &[NodeId]| bound_domain_counts(bound, |n| column[n as usize]);
    let place = |parent: &[NodeId], bound: &[NodeId]| {
        topology_placements(0, "rack", domains(parent), &counts(bound), text)
    };

    let placements = place(&all, &[]);
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
    let pinned = place(&all, &[4, 0, 2]);
    assert_eq!(pinned.len(), 1);
    assert_eq!(
        (pinned[0].name.as_str(), &pinned[0].nodes[..]),
        ("rack=b", &[0, 2][..])
    );

    // Bound pods only on unlabelled nodes pin nothing.
    assert_eq!(place(&all, &[3]).len(), 3);

    // The pinned domain is outside the parent: no candidate.
    assert!(place(&[0, 1, 2], &[4]).is_empty());
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
            search_budget: 10_000
        }
    );
    assert_eq!(
        configured("").args(),
        Args::default(),
        "empty args mean defaults"
    );
    assert_eq!(
        configured(r#"{"searchBudget": 50}"#).args(),
        Args { search_budget: 50 }
    );
}

#[test]
fn bad_args_are_refused() {
    let configure = wasched_sdk::configure::<TopologyPlacement>;
    let cases = [
        (
            r#"{"searchBudget": 0}"#,
            "WaschedTopologyPlacement: searchBudget must be >= 1, got 0 (omit it for the default 10000)",
        ),
        (
            r#"{"searchbudget": 5}"#,
            "invalid args for WaschedTopologyPlacement: unknown field `searchbudget`",
        ),
        (
            r#"{"searchBudget": -1}"#,
            "invalid args for WaschedTopologyPlacement: invalid value: integer `-1`, expected u32",
        ),
        (
            r#"{"searchBudget": "many"}"#,
            "invalid args for WaschedTopologyPlacement: invalid type: string \"many\", expected u32",
        ),
    ];
    for (args, message) in cases {
        let err = configure(args).unwrap_err();
        assert!(err.starts_with(message), "{args}: {err}");
    }
}

/// The host scores placements itself now: the former scoring weights are
/// unknown fields, refused by name, with or without a valid `searchBudget`.
#[test]
fn former_weight_args_are_unknown_fields() {
    let configure = wasched_sdk::configure::<TopologyPlacement>;
    for field in ["resourceFitWeight", "podsCountWeight"] {
        for args in [
            format!(r#"{{"{field}": 1}}"#),
            format!(r#"{{"searchBudget": 50, "{field}": 0}}"#),
        ] {
            let err = configure(&args).unwrap_err();
            assert!(
                err.starts_with(&format!(
                    "invalid args for WaschedTopologyPlacement: unknown field `{field}`"
                )),
                "{args}: {err}"
            );
        }
    }
    assert_eq!(configured(r#"{"searchBudget": 7}"#).args().search_budget, 7);
}

// ---------------------------------------------------------------------------
// PlacementGenerate over a FakeCluster
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
    assert!(placements.reusable, "no member runs");
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
    let mut bare = FakeCluster::new();
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

    let generate = |plugin: &mut TopologyPlacement, cluster: &FakeCluster| {
        plugin
            .generate_placements(cluster, Unit::PodGroup(pg), &everything(cluster))
            .unwrap()
    };
    let placements = generate(&mut plugin, &cluster);
    assert_eq!(names(&placements), ["example.com/rack=r2"]);
    assert_eq!(placements.candidates[0].nodes, [1, 2]);
    assert!(!placements.reusable, "pinned by its running member");
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
    let mut cluster = FakeCluster::new();
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
    assert!(
        placements.reusable,
        "no member runs: the key's domains alone"
    );

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
    assert!(!placements.reusable, "pinned by a running member");
    let placements = plugin
        .generate_placements(&cluster, Unit::Composite(inner), &all)
        .unwrap();
    assert_eq!(names(&placements), ["example.com/rack=r2"]);
    assert!(!placements.reusable);
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
