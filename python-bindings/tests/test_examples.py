"""The README's main job runs and answers the seed question from its real runs."""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "seed_testnet.py"


def test_seed_testnet_example():
    out = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         check=True).stdout
    assert "Tracing ran 0 kernels." in out
    assert "never compiled the graphs of the untaken branches: dyn.sin, dyn.cos." in out
    diffs = [float(line.rsplit(" ", 1)[1]) for line in out.splitlines()
             if "max |diff|" in line]
    assert len(diffs) == 4 and max(diffs) <= 1e-6
