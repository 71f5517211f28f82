"""Makes the project's modules (policy.py) and the tests' fake cluster
importable from the tests."""

import pathlib
import sys

here = pathlib.Path(__file__).parent
sys.path[:0] = [str(here.parent), str(here)]
