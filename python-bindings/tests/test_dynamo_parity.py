"""The same programs through torch._dynamo.explain and dynamir.explain.

Intended differences: a data-dependent `if` is a graph break in Dynamo; Dynamir traces both
sides and turns it into a host branch (one host sync), so where Dynamo counts a break at each
such `if`, Dynamir counts a host sync and no break. A `print` is a break in Dynamo (unless
configured as reorderable logging); Dynamir makes it after the graph has run, with no break.
Every other break (a requested one, unsupported calls) is a break in both, after which both go
on in a graph traced from the next instruction, so programs without data-dependent ifs or
prints have the same graph count. Results agree with eager in both systems.
"""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")

from models import TestNet  # noqa: E402
dynamo = pytest.importorskip("torch._dynamo")




def with_print(x):
    y = torch.relu(x) + 1
    print("tick")
    return y * 2


def with_break(x):
    y = torch.relu(x) + 1
    torch._dynamo.graph_break()
    return y * 2


def straight_line(x, w):
    return torch.softmax(x @ w, dim=-1).sum(dim=0)


def one_branch(x):
    if x.max() > 0.5:
        x = x - 1
    return x * 3


PROGRAMS = [  # name, program, arguments, data-dependent ifs, prints, other breaks
    ("seed_neg", lambda: TestNet(), (torch.ones(3) * -1.0,), 2, 0, 0),
    ("seed_pos", lambda: TestNet(), (torch.ones(3),), 2, 0, 0),
    ("print", lambda: with_print, (torch.randn(4),), 0, 1, 0),
    ("requested", lambda: with_break, (torch.randn(4),), 0, 0, 1),
    ("straight", lambda: straight_line, (torch.randn(5, 4), torch.randn(4, 3)), 0, 0, 0),
    ("branch", lambda: one_branch, (torch.rand(6),), 1, 0, 0),
]


@pytest.mark.parametrize("name,make,args,ifs,prints,breaks", PROGRAMS,
                         ids=[p[0] for p in PROGRAMS])
def test_break_counts_and_results_agree(name, make, args, ifs, prints, breaks):
    torch.manual_seed(0)
    fn = make()
    with torch.no_grad():
        eager = fn(*args)
    dynamo.reset()
    d = dynamo.explain(fn)(*args)
    dynamir.reset()
    e = dynamir.explain(fn, *args)
    # Dynamo breaks at every data-dependent if, print and other break; Dynamir only at the
    # last, reads each if's predicate on the host instead, and prints after the graph.
    assert d.graph_break_count == ifs + prints + breaks
    assert e.graph_break_count == breaks
    if ifs == 0 and prints == 0:
        # Both go on after a break in a new graph traced from the next instruction.
        assert e.graph_count == d.graph_count
    if breaks == 0:
        assert e.host_syncs == ifs
    assert e.kernels_run_during_tracing == 0
    assert np.allclose(np.asarray(e.result), eager.detach().numpy(), rtol=1e-5, atol=1e-6)
