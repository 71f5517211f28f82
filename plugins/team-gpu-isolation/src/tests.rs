//! The policy over a [`FakeCluster`], run natively. The Python and
//! JavaScript versions have the same cases in their own test runners.

use super::*;
use wasched_sdk::fake::FakeCluster;

const GPU: &str = "nvidia.com/gpu";

fn configured(args: &str) -> TeamGpuIsolation {
    wasched_sdk::configure::<TeamGpuIsolation>(args).unwrap()
}

/// Four 8-GPU nodes: empty, 4 GPUs of team `ml`, 2 of `ml` and 4 of
/// `vision`, 6 of `vision`; and a cpu-only node.
fn shared_cluster() -> (FakeCluster, Vec<NodeId>) {
    let mut cluster = FakeCluster::new();
    let mut nodes = Vec::new();
    for (name, load) in [
        ("empty", &[][..]),
        ("ml-only", &[("ml", 4)][..]),
        ("mixed", &[("ml", 2), ("vision", 4)][..]),
        ("vision-only", &[("vision", 6)][..]),
    ] {
        let node = cluster
            .add_node(name)
            .allocatable("cpu", 64_000)
            .allocatable(GPU, 8)
            .id();
        for (i, (team, gpus)) in load.iter().enumerate() {
            cluster
                .add_pod(&format!("{team}/{name}-{i}"))
                .request("cpu", 1_000)
                .request(GPU, *gpus)
                .on_node(node);
        }
        nodes.push(node);
    }
    let cpu_only = cluster.add_node("cpu-only").allocatable("cpu", 64_000).id();
    cluster
        .add_pod("web/api-0")
        .request("cpu", 1_000)
        .on_node(cpu_only);
    nodes.push(cpu_only);
    (cluster, nodes)
}

#[test]
fn a_team_scores_highest_where_no_other_team_holds_gpus() {
    let (mut cluster, nodes) = shared_cluster();
    let pod = cluster.add_pod("ml/train-0").request(GPU, 2).id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    // Others hold 0, 0, 4, 6 of 8 GPUs; the cpu-only node has none.
    assert_eq!(scores, vec![100, 100, 50, 25, 0]);
}

#[test]
fn the_other_team_sees_the_mirror_image() {
    let (mut cluster, nodes) = shared_cluster();
    let pod = cluster.add_pod("vision/detect-0").request(GPU, 1).id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    // Others (ml) hold 0, 4, 2, 0 of 8.
    assert_eq!(scores, vec![100, 50, 75, 100, 0]);
}

#[test]
fn pods_without_the_resource_are_not_steered() {
    let (mut cluster, nodes) = shared_cluster();
    let pod = cluster.add_pod("ml/notebook").request("cpu", 500).id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    assert_eq!(scores, vec![0; nodes.len()]);
}

#[test]
fn the_resource_is_configurable() {
    let (mut cluster, nodes) = shared_cluster();
    let pod = cluster.add_pod("ml/cpu-heavy").request("cpu", 500).id();
    let scores = configured(r#"{"resource": "cpu"}"#)
        .score(&cluster, pod, &nodes)
        .unwrap();
    // cpu: others hold 0, 0, 1000, 1000 and (web) 1000 of 64000 millicores.
    assert_eq!(scores, vec![100, 100, 98, 98, 98]);
    let unknown = configured(r#"{"resource": "example.com/fpga"}"#)
        .score(&cluster, pod, &nodes)
        .unwrap();
    assert_eq!(unknown, vec![0; nodes.len()]);
}

#[test]
fn over_committed_nodes_score_zero() {
    assert_eq!(isolation_score(8, 9), 0);
    assert_eq!(isolation_score(8, 8), 0);
    assert_eq!(isolation_score(3, 1), 66);
    assert_eq!(isolation_score(0, 0), 0);
    assert_eq!(isolation_score(u64::MAX, 1), 99);
}

#[test]
fn args_are_checked() {
    assert!(wasched_sdk::configure::<TeamGpuIsolation>(r#"{"resource": ""}"#).is_err());
    let unknown = wasched_sdk::configure::<TeamGpuIsolation>(r#"{"team": "x"}"#).unwrap_err();
    assert!(unknown.contains("team"), "{unknown}");
}
