"""The component: ``TeamGpuIsolationPy``, the policy of ``policy.py``
behind the WIT exports ``plugin`` and ``score`` of world
``wasched:scheduler/score-plugin`` (bindings generated from ``wit/`` by
componentize-py at build time).

Built without WASI (``--stub-wasi``): ``print`` and ``sys.stderr`` reach
the host's log through the ``log`` import; files and clocks are not there,
and the environment is empty.
"""

from typing import List

import wit_world
from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import cluster, log, types

import policy
import wasched_log

wasched_log.install(log)

_args = policy.Args()


class Plugin(exports.Plugin):
    def name(self) -> str:
        return policy.NAME

    def configure(self, args: str) -> None:
        global _args
        try:
            _args = policy.Args.parse(args)
        except policy.ArgsError as e:
            raise Err(str(e))


class Score(exports.Score):
    def score(self, snapshot: cluster.Snapshot, pod: int, nodes: List[int]) -> List[int]:
        try:
            return policy.score(_args, snapshot, pod, nodes)
        except policy.ScoreError as e:
            raise Err(types.Status(code=types.Code.ERROR, reason=str(e)))


__all__ = ["Plugin", "Score", "wit_world"]
