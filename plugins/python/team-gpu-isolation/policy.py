"""Team GPU isolation: keeps each team's GPU pods off the nodes whose GPUs
other teams use. A team is a namespace.

Per candidate node, for a pod that requests the resource (default
``nvidia.com/gpu``)::

    others = the resource requested on the node by pods of other namespaces
             (bound, or assumed earlier in the cycle)
    score  = (allocatable - min(others, allocatable)) * 100 // allocatable

A node without the resource scores 0; a pod that does not request it
scores 0 everywhere. The same policy as the Rust plugin
``plugins/team-gpu-isolation`` (``WaschedTeamGpuIsolation``): the two
components decide alike, which ``host/tests/polyglot.rs`` checks.

This module is the policy alone, over anything with the methods of the
generated ``Snapshot`` it calls: the component (``app.py``) hands it the
host's snapshot, the tests (``tests/``) a fake one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, List, Optional

if TYPE_CHECKING:  # the generated bindings exist only inside the component build
    from wit_world.imports.cluster import Snapshot

NAME = "TeamGpuIsolationPy"
MAX_SCORE = 100


class ArgsError(ValueError):
    """The plugin's args are not valid; the message says which field."""


class ScoreError(Exception):
    """The call cannot be answered (an unknown pod, nodes the host refused):
    the component answers it as an ``error`` status with this message."""


@dataclass(frozen=True)
class Args:
    """The plugin's configuration (``args`` of its configuration entry)."""

    resource: str = "nvidia.com/gpu"

    @staticmethod
    def parse(text: str) -> "Args":
        """Reads the args' JSON text; unknown fields are refused by name."""
        try:
            fields = json.loads(text)
        except json.JSONDecodeError as e:
            raise ArgsError(f"{NAME}: args are not JSON: {e}") from None
        if not isinstance(fields, dict):
            raise ArgsError(f"{NAME}: args must be an object")
        unknown = sorted(set(fields) - {"resource"})
        if unknown:
            raise ArgsError(f"{NAME}: unknown field `{unknown[0]}`, expected `resource`")
        resource = fields.get("resource", Args.resource)
        if not isinstance(resource, str) or not resource:
            raise ArgsError(f"{NAME}: resource must be a non-empty string")
        return Args(resource=resource)


def isolation_score(allocatable: int, others: int) -> int:
    """The score of a node with ``allocatable`` of the resource, of which
    pods of other teams request ``others``."""
    if allocatable == 0:
        return 0
    return (allocatable - min(others, allocatable)) * MAX_SCORE // allocatable


def _describe(error: Exception) -> str:
    """The WIT error's case (``unknown``, ``stale``), as the Rust plugin's
    ``{:?}`` of it names it: ``Unknown``, ``Stale``."""
    value = getattr(error, "value", error)
    name = getattr(value, "name", str(value))
    return name.capitalize()


def score(args: Args, snapshot: "Snapshot", pod: int, nodes: List[int]) -> List[int]:
    """One score per entry of ``nodes``, in order."""
    names = snapshot.resource_names()
    if args.resource not in names:
        return [0] * len(nodes)  # no node has it
    resource = names.index(args.resource)
    requests = snapshot.pod_requests(pod)
    if resource >= len(requests) or requests[resource] == 0:
        return [0] * len(nodes)
    info = snapshot.pod(pod)
    if info is None:
        raise ScoreError(f"unknown pod {pod}")
    team = info.namespace
    # One block: the resource's allocatable amounts of `nodes`, then their
    # requested amounts. The host refuses ids outside the snapshot and
    # lists longer than its nodes (the bindings raise the WIT error).
    try:
        allocatable = snapshot.node_resources([resource], nodes)[: len(nodes)]
    except Exception as e:  # componentize_py_types.Err in the component
        raise ScoreError(f"node-resources refused the nodes asked: {_describe(e)}") from None
    teams: Dict[int, Optional[int]] = {}
    scores = []
    for node, amount in zip(nodes, allocatable):
        if amount == 0:
            scores.append(0)
            continue
        others = 0
        for other in snapshot.pods_on_node(node):
            if other not in teams:
                other_info = snapshot.pod(other)
                teams[other] = None if other_info is None else other_info.namespace
            namespace = teams[other]
            if namespace is not None and namespace != team:
                other_requests = snapshot.pod_requests(other)
                if resource < len(other_requests):
                    others += other_requests[resource]
        scores.append(isolation_score(amount, others))
    return scores
