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


FORUM_SCRIPT = '''
import torch

class TestNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x):
        x = x * 2
        if x.sum() > 0:
            x = torch.sin(x)
        if x.mean() > 0:
            x = torch.cos(x)
        return self.linear(x)

torch.manual_seed(0)
m = TestNet()
expected = m(torch.ones(3) * -1.0)
m = torch.compile(m, backend="eager")
print("same:", torch.allclose(m(torch.ones(3) * -1.0), expected))
'''


def test_cli_runs_the_forum_script_on_dynamir(tmp_path):
    script = tmp_path / "forum.py"
    script.write_text(FORUM_SCRIPT)
    done = subprocess.run([sys.executable, "-m", "dynamir", "explain", str(script)],
                          capture_output=True, text=True, check=True)
    assert "same: True" in done.stdout
    # The script runs with autograd on and the weights require grad: graphs compute no
    # gradients, so the model runs eagerly and says why (never a detached result).
    assert "-- TestNet.forward" in done.stderr
    assert "requires grad and autograd is enabled" in done.stderr

    # For inference, the same model compiles into graphs.
    script.write_text(FORUM_SCRIPT.replace("print(", "with torch.no_grad():\n    print("))
    done = subprocess.run([sys.executable, "-m", "dynamir", "explain", str(script)],
                          capture_output=True, text=True, check=True)
    assert "same: True" in done.stdout
    assert "graph TestNet_forward_graph1 [traced, never compiled]: dyn.sin" in done.stderr
    assert "'frames_traced': 1" in done.stderr
