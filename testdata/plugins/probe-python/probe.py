"""A test fixture (host/tests/polyglot.rs): a Python component, built like
plugins/python/team-gpu-isolation (componentize-py --stub-wasi), that
reaches for what the sandbox does not give. Its args name the probe; its
score runs it and answers 7 on every node, so a probe that returns is
told from one that traps:

- ``open``: reads /etc/hostname;
- ``clock``: reads time.time();
- ``env``: reads os.environ;
- ``random``: draws random.random() and logs it;
- ``hash``: logs hash() of a string;
- ``print``: prints a line to stdout and one to stderr; then answers.
"""

import json
import os
import random
import sys
import time
from typing import List

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import cluster, log

import wasched_log

wasched_log.install(log)

_probe = ""


class Plugin(exports.Plugin):
    def name(self) -> str:
        return "ProbePython"

    def configure(self, args: str) -> None:
        global _probe
        _probe = json.loads(args).get("probe", "")


class Score(exports.Score):
    def score(self, snapshot: cluster.Snapshot, pod: int, nodes: List[int]) -> List[int]:
        if _probe == "open":
            with open("/etc/hostname") as f:
                print("read", f.read())
        elif _probe == "clock":
            print("time", time.time())
        elif _probe == "env":
            print("environ", dict(os.environ))
        elif _probe == "random":
            print("random", random.random())
        elif _probe == "hash":
            print("hash", hash("wasched"))
        elif _probe == "print":
            print("hello from Python")
            sys.stderr.write("a warning\n")
        return [7] * len(nodes)
