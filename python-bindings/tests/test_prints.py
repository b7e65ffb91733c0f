"""print() is no graph break: the trace records each call with what it prints as it was at the
call, and the host makes the calls, in order, once the graph has run (before it writes back
stores and replays other changes, or before the breaking instruction at a break). Every test
compares stdout, results and arguments with eager Python."""

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")


def run(capsys, f, make_args, breaks=0, **options):
    """f compiled prints what f prints eagerly and returns what it returns, on two calls."""
    want_args, got_args = make_args(), make_args()
    want = [f(*want_args) for _ in range(2)]
    eager_out = capsys.readouterr().out
    compiled = dynamir.compile(f, **options)
    got = [compiled(*got_args) for _ in range(2)]
    assert capsys.readouterr().out == eager_out
    assert repr(got) == repr(want)
    assert repr(got_args) == repr(want_args)
    e = dynamir.explain(f, *make_args())
    capsys.readouterr()
    assert e.graph_break_count == breaks if breaks is not None else e.graph_break_count, e
    assert all("print" not in b.reason or "branch" in b.reason for b in e.break_reasons), e
    return eager_out


def test_prints_show_values_as_they_were_at_the_call(capsys):
    def f(x, xs, d):
        print("x", x, x.sum(), float(x.max()), x.shape, x.dtype)
        x.add_(1)  # the caller's tensor changes after the first print, before the second
        xs.append(x[0])
        d["k"] = len(xs)
        print("after", x, xs, d, sep=" | ", end=".\n")
        y = x * 2
        x.mul_(3)
        print(y, x, flush=True)
        return y

    out = run(capsys, f, lambda: (torch.arange(3.0), [1], {"a": (1, 2.5)}))
    assert "after | tensor([1., 2., 3.]) | [1, tensor(1.)] | {'a': (1, 2.5), 'k': 2}.\n" in out


def test_numpy_values_print_with_their_types(capsys):
    def f(a):
        s = a.sum()
        print(s, a.mean(), a[0], a.dtype, a.tolist(), a.T)
        a[0] = 7.0
        print(a, np.float32(2.5), None, True, 3 + 4j)
        return s

    run(capsys, f, lambda: (np.arange(6.0).reshape(2, 3),))


def test_objects_print_as_themselves_or_their_str(capsys):
    class Point:
        def __init__(self, x):
            self.x = x

        def __str__(self):
            return f"Point({self.x})"

    layer = torch.nn.Linear(2, 2)

    def f(x, m):
        print(Point(3), m, m.weight.shape, type(x).__name__, len)
        return m(x)

    with torch.no_grad():
        run(capsys, f, lambda: (torch.ones(1, 2), layer))


def test_prints_and_a_break_keep_their_order(capsys):
    def f(x, log):
        print("before", x.sum())
        log.append("traced")
        dynamir.graph_break()
        print("after", log, x * 2)
        return x + 1

    run(capsys, f, lambda: (torch.ones(2), []), breaks=1)


def test_prints_in_loops(capsys):
    def f(x, n):
        for i in range(n):  # unrolled: a print a turn
            x = x * 2
            print("turn", i, x)
        while (x > 0).all() and x.sum() < 100:  # not captured: the tests are host syncs
            x = x + 10
            print("while", x)
        return x

    run(capsys, f, lambda: (torch.ones(2), 3), breaks=None)


def test_a_print_inside_a_data_dependent_branch_breaks(capsys):
    def f(x):
        if x.sum() > 0:
            print("positive", x)
            x = x + 1
        return x

    for sign in (1, -1):
        run(capsys, f, lambda: (torch.ones(2) * sign,), breaks=1)


def test_a_failed_check_prints_once(capsys):
    """A graph whose run-time check fails runs the frame eagerly: the prints happen there,
    once, before what it raises."""
    def f(x, idx):
        print("start", x)
        return x[idx]

    compiled = dynamir.compile(f)
    assert compiled(np.arange(3.0), np.array([0, 2])).tolist() == [0.0, 2.0]
    capsys.readouterr()
    with pytest.raises(IndexError):
        compiled(np.arange(3.0), np.array([0, 5]))
    assert capsys.readouterr().out == "start [0. 1. 2.]\n"


def test_print_to_a_file_and_of_what_the_trace_cannot_copy_break(capsys):
    import io
    import sys

    def to_file(x, buffer):
        print("x", x, file=buffer)
        return x + 1

    buffer, want = io.StringIO(), io.StringIO()
    to_file(torch.ones(1), want)
    dynamir.compile(to_file)(torch.ones(1), buffer)
    assert buffer.getvalue() == want.getvalue()
    assert dynamir.explain(to_file, torch.ones(1), io.StringIO()).graph_break_count == 1

    def generator(x):
        g = (v for v in range(3))
        print(g is not None, sys.maxsize > 0)
        print(g)  # its address: the host has no such object
        return x

    e = dynamir.explain(generator, torch.ones(1))
    assert e.graph_break_count == 1, e
    assert "call to print of" in e.break_reasons[0].reason


def test_fullgraph_takes_prints(capsys):
    def f(x):
        print("mean", x.mean())
        return x - x.mean()

    got = dynamir.compile(f, fullgraph=True)(torch.arange(4.0))
    assert capsys.readouterr().out == "mean tensor(1.5000)\n"
    assert got.tolist() == [-1.5, -0.5, 0.5, 1.5]


# Strings formatted from values the graph computes (f-strings, str(), repr(), format(), `%`,
# and the string a data-dependent branch picks) are text the host formats once the graph has
# run: printed, returned or handed to a
# continuation with no break; what needs their characters (a method, len(), a comparison)
# breaks there.
TEXTS = {
    "fstring": lambda x: f"loss {x.sum().item():.4f} max={x.max():.2f} {x!r} {x.shape} {x[0]:>8.3e}",
    "str_repr_format": lambda x: str(x.sum()) + "|" + repr(float(x[0])) + format(x.max(), ".1e"),
    "percent": lambda x: ("%d items, max %.2f, %s" % (x.numel(), x.max().item(), "t"),
                          "%.3f" % float(x.mean()), "%s" % x.dtype),
    "numpy": lambda x: f"{x.numpy()} {x.numpy().sum()} {x.numpy().mean():.3f} {x.numpy()[1]!s}",
    "nested": lambda x: [f"{v:.1f}" for v in x.tolist()] + [repr(f"{x.sum()}")],
    "ints_bools": lambda x: f"{int(x.argmax())} {bool((x > 0).all())} {int(x.sum()):+05d}",
    "branch": lambda x: ("pos" if x.sum() > 0 else "neg") + ("/big" if x.max() > 2 else "/small"),
    "nested_branches": lambda x: (("all" if (x > 0).all() else f"{int((x > 0).sum())} of 3")
                                  if (x > 0).any() else "none"),
}


@pytest.mark.parametrize("case", TEXTS)
def test_text_formatted_by_the_host(case, capsys):
    f = TEXTS[case]

    def printing(x):
        s = f(x)
        print(s)
        return s

    for scale in (1.0, -3.0, 0.25):
        x = torch.tensor([1.5, -2.25, 3.0]) * scale
        for mode in [{}, {"capture_control_flow": True}]:
            want = printing(x)
            eager_out = capsys.readouterr().out
            got = dynamir.compile(printing, **mode)(x)
            assert capsys.readouterr().out == eager_out
            assert type(got) is type(want) and got == want
    assert dynamir.explain(printing, x).graph_break_count == 0


def test_text_crosses_a_break_and_breaks_where_its_characters_are_needed(capsys):
    def crosses(x):
        s = f"{x.sum().item():.2f}"
        dynamir.graph_break()  # the continuation gets the str the host formatted
        return s + "!"

    def needed(x):
        s = f"{x.sum().item():.2f}"
        return s + "!", s.upper(), len(s), s == "1.50"

    x = torch.tensor([0.5, 1.0])
    assert dynamir.compile(crosses)(x) == crosses(x) == "1.50!"
    assert dynamir.compile(needed)(x) == needed(x) == ("1.50!", "1.50", 4, True)
    e = dynamir.explain(needed, x)
    assert [b.kind for b in e.break_reasons] == ["data_dependent_value"], e
    assert "characters of a str formatted" in e.break_reasons[0].reason


def test_formats_that_would_raise_run_for_real():
    """The host formats later what eager code formats now: a spec the value's type refuses, or
    any spec of an array of several elements, is no text of the host's: it raises as eager."""
    for f in (lambda x: f"{x:.2f}", lambda x: f"{x.sum().item():d}", lambda x: "%d" % x):
        with pytest.raises((TypeError, ValueError)):
            f(torch.ones(2))
        with pytest.raises((TypeError, ValueError)):
            dynamir.compile(f)(torch.ones(2))
