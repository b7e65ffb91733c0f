"""dynamir.trace from Python: results, guards, breaks, errors, and zero kernels."""

import dis
import pathlib
import re
import sys

import numpy as np
import pytest

import dynamir

REPO = pathlib.Path(__file__).resolve().parents[2]


def test_opcode_names_cover_the_interpreter():
    # The frontend's version-neutral opcode enum names every real instruction of this
    # interpreter (the union of 3.11-3.13's); numbers come from the build-time table.
    names = set(re.findall(r"^OPCODE\((\w+)\)$",
                           (REPO / "include/dynamir/Frontend/Opcodes.def").read_text(), re.M))
    assert len(names) > 100
    real = {n for n, op in dis.opmap.items() if op < 256 and not n.startswith("INSTRUMENTED_")}
    assert real <= names, sorted(real - names)


def test_opcode_table_of_this_build_matches_the_interpreter():
    import _dynamir

    build = pathlib.Path(_dynamir.__file__).resolve().parents[1]
    table = build / "lib/Frontend/OpcodeTable.inc"
    if not (build / "CMakeCache.txt").exists():
        pytest.skip("dynamir is installed, not run from a build tree")
    text = table.read_text()
    assert f"#define DYNAMIR_PYTHON_MINOR {sys.version_info.minor}" in text
    entries = re.findall(r"^OPCODE_ENTRY\((\d+), (\d+), (\w+)\)$", text, re.M)
    by_number = {int(n): (int(c), k) for n, c, k in entries}
    caches = dis._inline_cache_entries
    for name, number in dis.opmap.items():
        if number >= 256:
            continue
        want = caches.get(name, 0) if isinstance(caches, dict) else caches[number]
        assert by_number[number][0] == want, name
        assert by_number[number][1] in (name, "UNKNOWN_OPCODE"), name


def seed(x):
    x = x * 2
    if x.sum() > 0:
        x = np.sin(x)
    return x


def test_trace_result_api():
    result = dynamir.trace(seed, np.ones(3, dtype=np.float32))
    assert isinstance(result, dynamir.TraceResult)
    assert result.kernel_count == 0
    assert not result.eager_only and result.graph_breaks == []
    assert [(g.kind, g.source) for g in result.guards] == [("tensor_match", "L['x']"),
                                                           ("id_match", "G['np']")]
    ops = result.module.operations("seed")
    assert "dyn.if" in ops and "dyn.sin" in ops
    result.module.verify()
    # The traced module goes through tensor-opt's passes from Python too.
    result.module.run_pipeline("canonicalize,dyn-optimize-guards")
    assert "dyn.guards = [" in str(result.module)


def test_tracing_reads_no_data():
    # The tracer never looks at values: tracing with NaNs or with a read-only array gives the
    # same IR as with ones.
    a = np.ones(3, dtype=np.float32)
    b = np.full(3, np.nan, dtype=np.float32)
    b.setflags(write=False)
    assert str(dynamir.trace(seed, a)) == str(dynamir.trace(seed, b))


def test_graph_break_fields():
    def f(x):
        y = x + 1
        dynamir.graph_break()
        return y

    result = dynamir.trace(f, np.ones(2))
    (brk,) = result.graph_breaks
    assert brk.kind == "requested" and brk.reason == "dynamir.graph_break()"
    assert brk.lineno == f.__code__.co_firstlineno + 2
    assert brk.filename == __file__


def test_unsupported_arguments_run_eagerly_with_reason():
    assert dynamir.trace(seed, np.ones(3, dtype=np.clongdouble)).eager_reason == \
        "L['x'] has unsupported dtype complex256"
    assert "unsupported dtype object" in dynamir.trace(seed, np.array([object()])).eager_reason
    assert "has no Python bytecode" in dynamir.trace(len, [1]).eager_reason
    assert "unexpected keyword argument" in dynamir.trace(seed, np.ones(3), y=1).eager_reason


def test_methods_of_plain_objects_are_inlined():
    class Thing:
        def method(self):
            return 1

    def f(x, t):
        return x * t.method()

    result = dynamir.trace(f, np.ones(3), Thing())
    assert result.graph_breaks == [] and result.kernel_count == 0
    assert any(g.kind == "id_match" and g.source == "L['t'].method.__func__"
               for g in result.guards)


def test_errors_the_program_would_raise_become_breaks():
    def bad_matmul(a, b):
        return a @ b

    # The eager program raises ValueError here; the trace hands the op to the host, which
    # raises it for real, instead of crashing or guessing.
    result = dynamir.trace(bad_matmul, np.ones((2, 3)), np.ones((4, 5)))
    (brk,) = result.graph_breaks
    assert brk.kind == "unsupported_call"
    assert brk.reason == "dyn.matmul: matmul contraction dimensions differ: 3 vs 4"

    def bad_add(a, b):
        return a + b

    (brk,) = dynamir.trace(bad_add, np.ones(3), np.ones(4)).graph_breaks
    assert "shapes are not broadcast-compatible: size 3 vs 4" in brk.reason


def test_logs(capfd, monkeypatch):
    monkeypatch.setenv("DYNAMIR_LOGS", "trace,guards,graph_breaks")
    dynamir.trace(seed, np.ones(3, dtype=np.float32))
    err = capfd.readouterr().err
    assert "[dynamir trace]" in err and "BINARY_OP" in err and "stack=[f32[3]" in err
    assert "[dynamir guards] dyn.guard.tensor_match \"L['x']\"" in err


def test_numpy_scalars_are_fake_data_while_tracing():
    # A numpy scalar argument is data, like a 0-d array: arithmetic on it is traced (or runs at
    # a graph break), never computed on its real value while tracing.
    def f(x, s):
        k = s * 2 + 1
        return x * k

    r = dynamir.trace(f, np.ones(3, np.float32), np.float64(-2.0))
    assert r.kernel_count == 0 and not r.graph_breaks
    assert "tensor<f64>" in str(r.module)
    assert dynamir.trace(f, np.ones(3, np.float32), -2.0).kernel_count == 0


def _helper_that_breaks(x):
    dynamir.graph_break()
    return x


def test_break_inside_an_inlined_function_names_its_file_and_line():
    def f(x):
        return _helper_that_breaks(x * 2)

    (brk,) = dynamir.trace(f, np.ones(3)).graph_breaks
    assert brk.filename == __file__
    assert brk.lineno == _helper_that_breaks.__code__.co_firstlineno + 1


def test_python_level_library_functions_are_modelled_not_inlined():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional

    def f(x):
        return F.relu(x) + F.silu(x) + F.softmax(x, dim=-1)

    result = dynamir.trace(f, torch.randn(2, 3))
    assert result.graph_breaks == []
    ops = result.module.operations(result.module.functions[0])
    assert "dyn.relu" in ops and "dyn.sigmoid" in ops and "dyn.softmax" in ops


def test_module_containers_and_attributes_by_name_are_guarded():
    torch = pytest.importorskip("torch")

    class Heads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = torch.nn.ModuleDict({"cls": torch.nn.Linear(4, 3)})
            self.layers = torch.nn.ModuleList([torch.nn.Linear(4, 4), torch.nn.Tanh()])
            self.layer0 = torch.nn.Linear(4, 4)

        def forward(self, x):
            for i in range(1):
                x = getattr(self, f"layer{i}")(x)
            x = self.layers[1](self.layers[0](x))
            if hasattr(self, "extra"):
                x = self.extra(x)
            return self.heads["cls"](x)

    m, x = Heads().eval(), torch.randn(2, 4)
    compiled = dynamir.compile(m)
    with torch.no_grad():
        assert torch.allclose(compiled(x), m(x), atol=1e-6)
        e = dynamir.explain(compiled, x)
        assert e.graph_break_count == 0, e
        # What the trace read by name is guarded: a new submodule or head recompiles.
        m.extra = torch.nn.ReLU()
        m.heads["cls"] = torch.nn.Linear(4, 5)
        assert torch.allclose(compiled(x), m(x), atol=1e-6)
        del m.heads["cls"]
        with pytest.raises(KeyError):
            compiled(x)


def test_values_made_of_constants_alone_are_known_while_tracing():
    # A branch on, or tolist()/item() of, a tensor that folds to a constant (numpy's own code
    # checks constant arguments this way) is decided while tracing: no break, no guard.
    torch = pytest.importorskip("torch")

    def f(x):
        widths = np.asarray(((1, 1), (2, 0)))
        if np.any(widths < 0):
            raise ValueError("negative")
        n = widths.tolist()[1][0] + torch.tensor(2.5).item() + float(np.float32(0.25) * 2)
        if np.array([np.nan]) and not np.array([-0.0]):  # NaN is true, -0.0 false
            n += 1
        if (torch.ones(3) > 0).all():
            return x * n
        return x

    x = torch.arange(3.0)
    report = dynamir.explain(f, x)
    assert report.graph_break_count == 0, str(report)
    assert torch.equal(dynamir.compile(f)(x), f(x))

    # A value of the data still branches or breaks.
    def g(x):
        if (x > 0).all():
            return x.tolist()
        return x

    positive = x + 1
    assert dynamir.explain(g, positive).graph_break_count == 1  # the branch (tolist() is read)
    assert dynamir.compile(g)(positive) == g(positive) == [1.0, 2.0, 3.0]


def test_unary_plus():
    """`+x` (UNARY_POSITIVE; 3.12's CALL_INTRINSIC_1 5): numpy's np.positive makes a new array
    (a store into it leaves x alone), torch returns the tensor itself, Python numbers their
    __pos__ (+True is 1); `+` of bools raises in both libraries, and so the frame does too."""
    import torch
    from test_library_breadth import check

    x = np.arange(6.0).reshape(2, 3)
    check(lambda x: (+x, +x.T, +(x * 2), +x[0, 1], +np.float32(2), +3, +True,
                     +x.astype(np.complex64)), x)

    def store_into_plus(x):
        y = +x
        y[0] = 100
        return x, y

    check(store_into_plus, x.copy())
    check(lambda t: (+t is t, +t * 2), torch.arange(6.0))
    check(lambda x: +(x > 1), x)
    check(lambda t: +(t > 1), torch.arange(6.0))


def test_asserts_on_tensors_are_checks_the_graph_computes():
    # `assert cond` of a tensor is a dyn.check, as an index's bounds are: one graph, no break;
    # where a check fails the frame runs eagerly and raises the AssertionError, message
    # included. (A multi-element tensor's truth raises in eager as it does.)
    torch = pytest.importorskip("torch")
    # (Compiled from text: pytest rewrites the asserts of functions written in a test module.)
    scope = {"np": np, "torch": torch}
    exec(compile("""
def f(x):
    y = x * 2
    assert (y > -100).all(), f"too small: {y.min()}"
    assert not torch.isnan(y).any()
    return y + 1

def g(x):
    assert np.isfinite(x).all()
    return x.sum()

def h(x):
    assert x > 0
    return x
""", "asserts.py", "exec"), scope)
    f, g, h = scope["f"], scope["g"], scope["h"]
    e = dynamir.explain(f, torch.ones(3))
    assert e.graph_break_count == 0 and str(e).count("the assert at line") == 2, e
    compiled = dynamir.compile(f)
    assert torch.equal(compiled(torch.ones(3)), f(torch.ones(3)))
    for bad in (torch.full((3,), -1000.0), torch.tensor([1.0, float("nan")])):
        with pytest.raises(AssertionError) as want:
            f(bad.clone())
        with pytest.raises(AssertionError) as got:
            compiled(bad.clone())
        assert str(got.value) == str(want.value)
    compiled = dynamir.compile(g)
    assert compiled(np.ones(3)) == 3.0
    with pytest.raises(AssertionError):
        compiled(np.array([1.0, np.inf]))
    compiled = dynamir.compile(h)
    with pytest.raises(RuntimeError, match="ambiguous"):
        compiled(torch.ones(2))


def test_match_statements_stay_in_the_graph():
    # match / case on the values the tracer holds: sequences (a shape), mappings, literals,
    # class patterns (dataclasses by __match_args__, builtins by the subject itself) and
    # guards; the arms taken are traced, with no break.
    import dataclasses

    torch = pytest.importorskip("torch")

    @dataclasses.dataclass
    class Point:
        x: float
        y: float

    def f(x, d, act, p):
        match tuple(x.shape):
            case (n,):
                r = x * n
            case (n, m) if n == m:
                r = x.trace() + x
            case (n, m):
                r = x.sum(0)
        match d:
            case {"scale": s, **rest}:
                r = r * s + len(rest)
            case _:
                r = r - 1
        match act:
            case "relu":
                r = torch.relu(r)
            case "tanh" | "sigmoid":
                r = getattr(torch, act)(r)
        match p:
            case Point(x=0, y=y):
                r = r + y
            case Point(a, b):
                r = r + a * b
        match x:
            case list() | tuple():
                r = r * 100
            case torch.Tensor():
                r = r + 0.5
        match [1, 2, 3]:
            case [a, *rest]:
                r = r + a + len(rest)
        match 3.5:
            case float(v):
                r = r + v
        return r

    for args in [(torch.ones(3, 3), {"scale": 2.0, "k": 1}, "tanh", Point(0, 4.0)),
                 (torch.ones(3), {"q": 2.0}, "relu", Point(2.0, 4.0)),
                 (torch.ones(2, 3), {"scale": 3}, "none", Point(1.0, 1.0))]:
        want = f(*args)
        got = dynamir.compile(f)(*args)
        assert got.shape == want.shape and torch.allclose(got, want)
        assert dynamir.explain(f, *args).graph_break_count == 0


def test_with_blocks_of_plain_context_managers_are_inlined():
    # __enter__ and __exit__ of a plain class are Python: inlined, no break, also where an
    # exception the trace raises leaves the block (__exit__ may swallow it). A break inside the
    # block runs the rest eagerly from there, so an exception still reaches __exit__.
    torch = pytest.importorskip("torch")

    class Log:
        def __init__(self, swallow=False):
            self.events, self.swallow = [], swallow

        def __enter__(self):
            self.events.append("enter")
            return self

        def __exit__(self, typ, value, tb):
            self.events.append("exit" if typ is None else typ.__name__)
            return self.swallow

    class Scale:
        def __init__(self, k):
            self.k = k

        def __enter__(self):
            return self.k

        def __exit__(self, *exc):
            return None

    def nested(x):
        log = Log()
        with log as entered:
            y = x * 2
            with Scale(3) as k:
                y = y * k
            entered.events.append("body")
        return y + 1, log.events

    def breaks_inside(x, out):
        log = Log()
        with log:
            y = x * 2
            print("inside")
            y = y + 1
        out.append(log.events)
        return y

    def swallowed(x):
        log = Log(swallow=True)
        y = x
        with log:
            y = x * 2
            y = y + {"a": 1}["b"]  # KeyError, which __exit__ swallows
        return y, log.events

    def kept(x):
        with Log():
            y = x + {"a": 1}["b"]  # __exit__ returns False: the KeyError goes on
        return y

    x = torch.ones(3)
    assert dynamir.explain(nested, x).graph_break_count == 0
    assert dynamir.explain(swallowed, x).graph_break_count == 0  # __exit__ inlined for it
    with pytest.raises(KeyError):
        dynamir.compile(kept)(x)
    for fn, args in [(nested, lambda: (x,)), (swallowed, lambda: (x,))]:
        want, got = fn(*args()), dynamir.compile(fn)(*args())
        assert torch.equal(got[0], want[0]) and got[1] == want[1]
    want, got = [], []
    assert torch.equal(dynamir.compile(breaks_inside)(x, got), breaks_inside(x, want))
    assert got == want == [["enter", "exit"]]


def test_exceptions_the_trace_knows_go_to_their_handlers():
    # A missing dict key, Python arithmetic of constants that raises, next() of an exhausted
    # iterator: where a try block of the frame covers the instruction, the trace goes on in
    # the handler (CPython's exception table), with no break. Elsewhere the instruction breaks
    # and raises for real; a break inside an except block runs the frame eagerly.
    torch = pytest.importorskip("torch")

    def missing_key(x, d):
        try:
            v = d["missing"]
        except KeyError:
            v = x * 2
        return v

    def else_block(x, n):
        try:
            q = 7 % n
        except ZeroDivisionError:
            q = -2
        else:
            q = q * 3
        return x + q

    def named_with_finally(x, d):
        try:
            v = d["missing"]
        except (IndexError, KeyError) as e:
            v = x * len(str(e))
        finally:
            x = x + 1
        return v + x

    def exhausted(x, items):
        it = iter(items)
        try:
            while True:
                x = x + next(it)
        except StopIteration:
            pass
        return x

    def unmatched(x, d):
        try:
            v = d["missing"]
        except ValueError:
            v = x
        return v

    def raises_in_handler(x, d):
        try:
            v = d["missing"]
        except KeyError:
            print("in the handler")  # a break inside the except block
            raise RuntimeError("no scale")
        return v

    def lookup(d, k):
        try:
            return d[k]
        except KeyError:
            return -1

    def in_a_callee(x, d):
        return x * lookup(d, "missing") + lookup(d, "a")

    def nested(x, d):
        try:
            try:
                v = d["missing"]
            except IndexError:
                v = 1
        except KeyError:
            v = 2
        return x + v

    def in_a_loop(x, d):
        for k in ["a", "b", "c"]:
            try:
                x = x + d[k]
            except KeyError:
                x = x * 2
        return x

    def until_exhausted(x):
        it, s = iter([1, 2]), 0
        while True:
            try:
                s += next(it)
            except StopIteration:
                break
        return x + s

    def through_finally(x, n):
        try:
            r = 1 / n
        finally:
            x = x + 1
        return x * r

    def handed_out(x, d):
        try:
            v = d["missing"]
        except KeyError as e:
            return x * 2, e
        return v, None

    x = torch.ones(3)
    compiled = dynamir.compile(handed_out)
    first, second = compiled(x, {}), compiled(x, {})
    assert type(first[1]) is KeyError and first[1] is not second[1]  # each call's own
    assert first[1].args == handed_out(x, {})[1].args and torch.equal(first[0], x * 2)
    cases = [(missing_key, (x, {"a": 1})), (else_block, (x, 0)), (else_block, (x, 2)),
             (named_with_finally, (x, {})), (exhausted, (x, [1, 2, 3])),
             (in_a_callee, (x, {"a": 3})), (nested, (x, {})), (in_a_loop, (x, {"a": 1, "c": 5})),
             (until_exhausted, (x,)), (through_finally, (x, 2))]
    for fn, args in cases:
        assert torch.equal(dynamir.compile(fn)(*args), fn(*args))
        assert dynamir.explain(fn, *args).graph_break_count == 0, fn.__name__
    with pytest.raises(KeyError):
        dynamir.compile(unmatched)(x, {})
    with pytest.raises(ZeroDivisionError):  # re-raised after the finally block
        dynamir.compile(through_finally)(x, 0)
    with pytest.raises(RuntimeError, match="no scale"):
        dynamir.compile(raises_in_handler)(x, {})
