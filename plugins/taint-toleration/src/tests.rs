//! The rules, natively.

use super::*;
use alloc::vec;
use wasched_sdk::fake::FakeCluster;

fn toleration(
    key: &str,
    operator: TolerationOperator,
    value: &str,
    effect: Option<TaintEffect>,
) -> Toleration {
    Toleration {
        key: key.into(),
        operator,
        value: value.into(),
        effect,
    }
}

#[test]
fn tolerations_match_as_upstream() {
    use TaintEffect::*;
    use TolerationOperator::*;
    let cases = [
        (toleration("gpu", Equal, "true", Some(NoSchedule)), true),
        (toleration("gpu", Equal, "false", Some(NoSchedule)), false),
        (toleration("gpu", Exists, "", None), true),
        (toleration("", Exists, "", None), true),
        (toleration("", Equal, "true", None), true),
        (toleration("gpu", Exists, "", Some(NoExecute)), false),
        (toleration("other", Exists, "", None), false),
    ];
    for (t, expected) in cases {
        assert_eq!(tolerates(&t, "gpu", "true", NoSchedule), expected, "{t:?}");
    }
}

#[test]
fn filter_rejects_cordoned_and_tainted_nodes_with_upstream_reasons() {
    let mut cluster = FakeCluster::new();
    let free = cluster.add_node("a").id();
    let cordoned = cluster.add_node("b").unschedulable().id();
    let tainted = cluster
        .add_node("c")
        .taint("soft", "x", TaintEffect::PreferNoSchedule)
        .taint("gpu", "true", TaintEffect::NoSchedule)
        .id();
    let plain = cluster.add_pod("team/plain").id();
    let tolerant = cluster
        .add_pod("team/tolerant")
        .toleration(toleration("gpu", TolerationOperator::Exists, "", None))
        .toleration(toleration(
            UNSCHEDULABLE_TAINT,
            TolerationOperator::Exists,
            "",
            Some(TaintEffect::NoSchedule),
        ))
        .id();
    let mut plugin = TaintToleration;
    let nodes = vec![free, cordoned, tainted];
    let groups = plugin.filter(&cluster, plain, &nodes);
    let found: Vec<(&str, &[NodeId])> = groups
        .iter()
        .map(|g| (g.status.reason.as_str(), g.nodes.as_slice()))
        .collect();
    assert_eq!(
        found,
        [
            ("node(s) were unschedulable", &[cordoned][..]),
            ("node(s) had untolerated taint(s)", &[tainted][..]),
        ]
    );
    assert!(
        groups
            .iter()
            .all(|g| g.status.code == Code::UnschedulableAndUnresolvable)
    );
    assert!(plugin.filter(&cluster, tolerant, &nodes).is_empty());
}
