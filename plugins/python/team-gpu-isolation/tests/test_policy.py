"""The policy over a fake cluster, run natively by pytest: the cases of the
Rust plugin's tests (plugins/team-gpu-isolation/src/tests.rs)."""

import pytest

import policy
from fake_cluster import FakeCluster


def shared_cluster():
    """Four 8-GPU nodes: empty, 4 GPUs of team ``ml``, 2 of ``ml`` and 4 of
    ``vision``, 6 of ``vision``; and a cpu-only node."""
    cluster = FakeCluster()
    nodes = []
    for name, load in [
        ("empty", []),
        ("ml-only", [("ml", 4)]),
        ("mixed", [("ml", 2), ("vision", 4)]),
        ("vision-only", [("vision", 6)]),
    ]:
        node = cluster.add_node(name, cpu=64_000, nvidia_com_gpu=8)
        for i, (team, gpus) in enumerate(load):
            cluster.add_pod(f"{team}/{name}-{i}", node=node, cpu=1_000, nvidia_com_gpu=gpus)
        nodes.append(node)
    cpu_only = cluster.add_node("cpu-only", cpu=64_000)
    cluster.add_pod("web/api-0", node=cpu_only, cpu=1_000)
    nodes.append(cpu_only)
    return cluster, nodes


def test_a_team_scores_highest_where_no_other_team_holds_gpus():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("ml/train-0", nvidia_com_gpu=2)
    # Others hold 0, 0, 4, 6 of 8 GPUs; the cpu-only node has none.
    assert policy.score(policy.Args(), cluster, pod, nodes) == [100, 100, 50, 25, 0]


def test_the_other_team_sees_the_mirror_image():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("vision/detect-0", nvidia_com_gpu=1)
    assert policy.score(policy.Args(), cluster, pod, nodes) == [100, 50, 75, 100, 0]


def test_pods_without_the_resource_are_not_steered():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("ml/notebook", cpu=500)
    assert policy.score(policy.Args(), cluster, pod, nodes) == [0] * len(nodes)


def test_the_resource_is_configurable():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("ml/cpu-heavy", cpu=500)
    args = policy.Args.parse('{"resource": "cpu"}')
    # cpu: others hold 0, 0, 1000, 1000 and (web) 1000 of 64000 millicores.
    assert policy.score(args, cluster, pod, nodes) == [100, 100, 98, 98, 98]
    unknown = policy.Args.parse('{"resource": "example.com/fpga"}')
    assert policy.score(unknown, cluster, pod, nodes) == [0] * len(nodes)


def test_over_committed_nodes_score_zero():
    assert policy.isolation_score(8, 9) == 0
    assert policy.isolation_score(8, 8) == 0
    assert policy.isolation_score(3, 1) == 66
    assert policy.isolation_score(0, 0) == 0
    assert policy.isolation_score(2**64 - 1, 1) == 99


def test_args_are_checked():
    with pytest.raises(policy.ArgsError):
        policy.Args.parse('{"resource": ""}')
    with pytest.raises(policy.ArgsError, match="team"):
        policy.Args.parse('{"team": "x"}')
    with pytest.raises(policy.ArgsError, match="resource"):
        policy.Args.parse('{"resource": null}')
    assert policy.Args.parse("{}") == policy.Args()


def test_each_pods_namespace_is_read_once_per_call():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("ml/train-1", nvidia_com_gpu=1)
    policy.score(policy.Args(), cluster, pod, nodes)
    first = cluster.calls
    cluster.calls = 0
    policy.score(policy.Args(), cluster, pod, nodes + nodes)
    # The second call asks pods_on_node again per node, but pod() once per pod.
    assert cluster.calls < 2 * first


class _Refused(Exception):
    """As the bindings raise a WIT error: its case in ``value``."""

    def __init__(self):
        class Case:
            name = "UNKNOWN"

        self.value = Case()


def test_nodes_the_host_refuses_are_an_error_the_component_answers():
    cluster, nodes = shared_cluster()
    pod = cluster.add_pod("ml/train-2", nvidia_com_gpu=1)

    def refuse(resources, nodes):
        raise _Refused()

    cluster.node_resources = refuse
    with pytest.raises(policy.ScoreError, match="^node-resources refused the nodes asked: Unknown$"):
        policy.score(policy.Args(), cluster, pod, nodes)
