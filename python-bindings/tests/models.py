"""Models shared by the tests: the seed TestNet is the main job's (examples/seed_testnet.py), so
the tests, the benchmark and the example exercise one definition."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
from seed_testnet import TestNet  # noqa: E402

TestNet.__test__ = False  # a model, not a pytest class
