"""A fake cluster view for the policy's tests: the methods of the generated
``Snapshot`` the policy calls, over nodes and pods built in the test (as
the Rust SDK's ``wasched_sdk::fake::FakeCluster``). Resources are
``cpu``, ``memory``, ``pods``, then extended resources in name order, as
the host numbers them; namespaces are symbols."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional

BASE_RESOURCES = ["cpu", "memory", "pods"]


@dataclass
class PodInfo:
    """What the policy reads of a pod (a subset of the generated ``PodInfo``)."""

    namespace: int
    node: Optional[int]


@dataclass
class _Pod:
    namespace: int
    requests: Dict[str, int] = field(default_factory=dict)
    node: Optional[int] = None


class FakeCluster:
    """Nodes and pods built by the test, seen as a ``Snapshot``."""

    def __init__(self) -> None:
        self._symbols: List[str] = []
        self._nodes: List[Dict[str, int]] = []
        self._pods: List[_Pod] = []
        self.calls = 0  # host calls the policy made, as a component would

    def _intern(self, text: str) -> int:
        if text not in self._symbols:
            self._symbols.append(text)
        return self._symbols.index(text)

    def add_node(self, name: str, **allocatable: int) -> int:
        """A node with ``allocatable`` amounts (``nvidia_com_gpu=8`` names
        ``nvidia.com/gpu``); returns its id."""
        self._intern(name)
        self._nodes.append({_resource(k): v for k, v in allocatable.items()})
        return len(self._nodes) - 1

    def add_pod(self, name: str, node: Optional[int] = None, **requests: int) -> int:
        """A pod ``namespace/name`` with ``requests``, bound to ``node`` or
        pending; returns its id."""
        namespace, _, _ = name.partition("/")
        pod = _Pod(self._intern(namespace), {_resource(k): v for k, v in requests.items()}, node)
        self._pods.append(pod)
        return len(self._pods) - 1

    # The Snapshot methods.

    def resource_names(self) -> List[str]:
        self.calls += 1
        extended = sorted(
            {r for n in self._nodes for r in n} | {r for p in self._pods for r in p.requests}
        )
        return BASE_RESOURCES + [r for r in extended if r not in BASE_RESOURCES]

    def _column(self, amounts: Dict[str, int], names: List[str]) -> List[int]:
        return [amounts.get(name, 0) for name in names]

    def pod_requests(self, pod: int) -> List[int]:
        names = self.resource_names()
        return self._column(self._pods[pod].requests, names)

    def pod(self, pod: int) -> Optional[PodInfo]:
        self.calls += 1
        if not 0 <= pod < len(self._pods):
            return None
        p = self._pods[pod]
        return PodInfo(namespace=p.namespace, node=p.node)

    def pods_on_node(self, node: int) -> List[int]:
        self.calls += 1
        return [i for i, p in enumerate(self._pods) if p.node == node]

    def node_resources(self, resources: List[int], nodes: List[int]) -> List[int]:
        self.calls += 1
        names = self.resource_names()
        block: List[int] = []
        for r in resources:
            block += [self._nodes[n].get(names[r], 0) for n in nodes]
            block += [
                sum(p.requests.get(names[r], 0) for p in self._pods if p.node == n) for n in nodes
            ]
        return block


def _resource(key: str) -> str:
    """``nvidia_com_gpu`` → ``nvidia.com/gpu``; ``cpu`` stays."""
    if "_" not in key:
        return key
    *domain, name = key.split("_")
    return ".".join(domain) + "/" + name
