//! The scoring and filtering rules over a [`FakeCluster`], run natively.

use super::*;
use wasched_sdk::fake::FakeCluster;

const GPU: &str = "nvidia.com/gpu";

fn configured(args: &str) -> GpuBinPacking {
    wasched_sdk::configure::<GpuBinPacking>(args).unwrap()
}

/// Three 8-GPU nodes with 0, 4 and 6 GPUs in use, and a cpu-only node.
fn gpu_cluster() -> (FakeCluster, Vec<NodeId>) {
    let mut cluster = FakeCluster::new();
    let mut nodes = Vec::new();
    for (name, used) in [("empty", 0), ("half", 4), ("busy", 6)] {
        let node = cluster
            .add_node(name)
            .allocatable("cpu", 64_000)
            .allocatable("memory", 512 << 30)
            .allocatable(GPU, 8)
            .id();
        cluster
            .add_pod(&format!("bg/{name}-load"))
            .request("cpu", 8_000)
            .request(GPU, used)
            .on_node(node);
        nodes.push(node);
    }
    nodes.push(
        cluster
            .add_node("cpu-only")
            .allocatable("cpu", 64_000)
            .allocatable("memory", 512 << 30)
            .id(),
    );
    (cluster, nodes)
}

#[test]
fn gpu_pods_go_to_the_fullest_node_that_fits() {
    let (mut cluster, nodes) = gpu_cluster();
    let pod = cluster
        .add_pod("ml/w-0")
        .request(GPU, 2)
        .request("cpu", 1000)
        .id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    // (used + 2) * 100 / 8 per GPU node; the cpu-only node has no GPUs.
    assert_eq!(scores, vec![25, 75, 100, 0]);
}

#[test]
fn pods_without_gpus_are_not_steered() {
    let (mut cluster, nodes) = gpu_cluster();
    let pod = cluster.add_pod("web/api").request("cpu", 1000).id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    assert_eq!(scores, vec![0, 0, 0, 0]);
}

#[test]
fn weights_combine_resources_like_upstream() {
    let (mut cluster, nodes) = gpu_cluster();
    let pod = cluster
        .add_pod("ml/w-0")
        .request(GPU, 2)
        .request("cpu", 8_000)
        .id();
    let args = r#"{"resources": [{"name": "nvidia.com/gpu", "weight": 3}, {"name": "cpu"}]}"#;
    let scores = configured(args).score(&cluster, pod, &nodes).unwrap();
    // cpu: (8000 + 8000) * 100 / 64000 = 25 on the GPU nodes (background
    // load), 8000 * 100 / 64000 = 12 on the idle cpu-only node.
    assert_eq!(
        scores,
        vec![(25 * 3 + 25) / 4, (75 * 3 + 25) / 4, (100 * 3 + 25) / 4, 12]
    );
}

#[test]
fn over_full_nodes_score_as_full() {
    let (mut cluster, nodes) = gpu_cluster();
    let pod = cluster.add_pod("ml/w-0").request(GPU, 4).id();
    let scores = configured("{}").score(&cluster, pod, &nodes).unwrap();
    assert_eq!(scores[2], 100, "6 + 4 > 8 is capped at allocatable");
}

#[test]
fn resources_missing_from_the_snapshot_score_zero() {
    let (mut cluster, nodes) = gpu_cluster();
    let pod = cluster.add_pod("ml/w-0").request(GPU, 1).id();
    let args = r#"{"resources": [{"name": "amd.com/gpu"}]}"#;
    let scores = configured(args).score(&cluster, pod, &nodes).unwrap();
    assert_eq!(scores, vec![0, 0, 0, 0]);
}

#[test]
fn reserve_keeps_cpu_pods_off_gpu_nodes() {
    let (mut cluster, nodes) = gpu_cluster();
    let cpu_pod = cluster.add_pod("web/api").request("cpu", 1000).id();
    let gpu_pod = cluster.add_pod("ml/w-0").request(GPU, 1).id();
    let mut plugin = configured(r#"{"reserveForRequesters": true}"#);
    let rejected: Vec<NodeId> = plugin
        .filter(&cluster, cpu_pod, &nodes)
        .iter()
        .flat_map(|r| r.nodes.iter().copied())
        .collect();
    assert_eq!(rejected, nodes[..3].to_vec());
    let reason = &plugin.filter(&cluster, cpu_pod, &nodes)[0].status;
    assert_eq!(reason.code, Code::UnschedulableAndUnresolvable);
    assert_eq!(
        reason.reason,
        "node(s) had nvidia.com/gpu reserved for pods that request it"
    );
    assert!(plugin.filter(&cluster, gpu_pod, &nodes).is_empty());
    assert!(
        configured("{}")
            .filter(&cluster, cpu_pod, &nodes)
            .is_empty(),
        "off unless configured"
    );
}

#[test]
fn args_are_validated() {
    for (args, message) in [
        (r#"{"resources": []}"#, "resources is empty"),
        (
            r#"{"resources": [{"name": ""}]}"#,
            "resources[0].name is empty",
        ),
        (
            r#"{"resources": [{"name": "cpu", "weight": 0}]}"#,
            "resources[0].weight must be in 1..=100, got 0",
        ),
        (
            r#"{"resources": [{"name": "cpu", "weight": 101}]}"#,
            "resources[0].weight must be in 1..=100, got 101",
        ),
        (
            r#"{"resources": [{"name": "cpu"}, {"name": "cpu"}]}"#,
            "cpu is listed twice",
        ),
        (r#"{"binPack": true}"#, "unknown field"),
    ] {
        let error = wasched_sdk::configure::<GpuBinPacking>(args).unwrap_err();
        assert!(error.contains(message), "{args}: {error}");
    }
}

/// With several reserved resources a node is rejected once, for the first
/// configured resource it has.
#[test]
fn reserve_names_the_first_resource_a_node_has() {
    const FPGA: &str = "example.com/fpga";
    let (mut cluster, mut nodes) = gpu_cluster();
    let fpga_only = cluster
        .add_node("fpga")
        .allocatable("cpu", 64_000)
        .allocatable(FPGA, 2)
        .id();
    let both = cluster
        .add_node("both")
        .allocatable("cpu", 64_000)
        .allocatable(FPGA, 1)
        .allocatable(GPU, 4)
        .id();
    nodes.extend([fpga_only, both]);
    let cpu_pod = cluster.add_pod("web/api").request("cpu", 1000).id();
    let groups = |args: &str| -> Vec<(String, Vec<NodeId>)> {
        configured(args)
            .filter(&cluster, cpu_pod, &nodes)
            .into_iter()
            .map(|g| (g.status.reason, g.nodes))
            .collect()
    };
    let reason = |name: &str| format!("node(s) had {name} reserved for pods that request it");
    assert_eq!(
        groups(
            r#"{"resources": [{"name": "nvidia.com/gpu"}, {"name": "example.com/fpga"}], "reserveForRequesters": true}"#
        ),
        vec![
            (reason(GPU), vec![nodes[0], nodes[1], nodes[2], both]),
            (reason(FPGA), vec![fpga_only]),
        ]
    );
    assert_eq!(
        groups(
            r#"{"resources": [{"name": "example.com/fpga"}, {"name": "nvidia.com/gpu"}], "reserveForRequesters": true}"#
        ),
        vec![
            (reason(FPGA), vec![fpga_only, both]),
            (reason(GPU), vec![nodes[0], nodes[1], nodes[2]]),
        ]
    );
}
