"""Regression tests for issue 11: compiling never changes what a program computes.

Each test is a program that once gave a wrong value, a wrong type, an exception eager code does
not raise, or killed the process. `same_as_eager` runs it eagerly and through dynamir.compile in
three modes (default, capture_control_flow=True, backend="eager"), twice each, and compares the
results, their types and dtypes, the arguments' state afterwards and what was printed. Programs
that used to kill the process run in a child process, so a regression fails one test, not the
session.
"""

import collections
import contextlib
import copy
import io
import itertools
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import dynamir

torch = pytest.importorskip("torch")

MODES = [{}, {"capture_control_flow": True}, {"backend": "eager"}]


def snapshot(value):
    """Everything eager code can observe about a value, as a comparable structure."""
    # Values as their repr, where nan equals nan.
    if isinstance(value, torch.Tensor):
        return ("tensor", type(value).__name__, str(value.dtype), tuple(value.shape),
                repr(value.detach().numpy().tolist()), value.requires_grad)
    if isinstance(value, np.ndarray):
        return ("ndarray", type(value).__name__, str(value.dtype), value.shape,
                repr(np.asarray(value).tolist()))
    if isinstance(value, np.generic):
        return ("numpy scalar", type(value).__name__, value.item())
    if isinstance(value, (tuple, list)):
        return (type(value).__qualname__, [snapshot(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(k, snapshot(v)) for k, v in value.items()])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__qualname__, repr(value))


def observe(fn, args):
    """Runs fn on copies of args: (result or exception type, arguments after, stdout)."""
    args = copy.deepcopy(args)
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with contextlib.redirect_stdout(out):
                result = ("returned", snapshot(fn(*args)))
        except Exception as e:  # noqa: BLE001 - the exception type is what is compared
            result = ("raised", type(e).__name__)
    return result, [snapshot(a) for a in args], out.getvalue()


def same_as_eager(fn, *args, modes=MODES):
    want = observe(fn, args)
    for mode in modes:
        compiled = dynamir.compile(fn, **mode)
        for call in range(2):
            got = observe(compiled, args)
            assert got == want, f"mode {mode}, call {call}"
    return want


def run_isolated(source):
    """Runs a test program in a child process: a crash is a failed test, not a dead session."""
    child = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, f"exit {child.returncode}\n{child.stderr[-3000:]}"
    return child.stdout


# -- Python values the tracer once approximated ------------------------------------------------

def test_constant_tuples_reach_real_calls_as_themselves():
    same_as_eager(lambda x: (sorted((7, 6, 5)), x + 1), np.ones(2))
    same_as_eager(lambda x: sum([1, 2, 3]) * x, np.ones(2))
    same_as_eager(lambda x: (list(itertools.zip_longest([1, 2, 3], ["a", "b"])), x),
                  np.ones(2))
    same_as_eager(lambda x: (torch.empty((2, 3)).shape, x + 1), torch.ones(2))


def test_constant_index_tuple_of_a_store():
    def f(x):
        x[2, 0] = 7.0
        return x
    same_as_eager(f, np.zeros((3, 3)))


def test_tensor_properties_are_not_methods():
    def f(x):
        if x.is_cuda or x.is_sparse or x.is_quantized:
            return x
        return x + 1
    same_as_eager(f, torch.ones(2))


def test_unknown_tensor_attributes_run_eagerly():
    same_as_eager(lambda x: (x.flags.c_contiguous, x + 1), np.ones(2))


def test_dict_views_are_live():
    def f(x):
        d = {1: x}
        k = d.keys()
        d[4] = x
        return 4 in k, len(d.values()), sorted(d.keys() | {9: 0}.keys())
    same_as_eager(f, np.ones(2))


def test_numpy_function_of_a_tensor_returns_an_ndarray():
    same_as_eager(lambda x: np.ones_like(x, dtype=np.float64), torch.ones(2))


def test_unmodelled_keyword_arguments_run_for_real():
    same_as_eager(lambda t: torch.add(2, 3, out=t), torch.ones(()))

    def f(x):
        np.add(x, 1, out=x)
        return x
    same_as_eager(f, np.zeros(3))


def test_size_is_a_torch_size():
    same_as_eager(lambda x, y: x.new(y.size()).shape, torch.ones(2), torch.ones(3, 2))

    def f(x):
        print(x.shape)
        return x + 1
    same_as_eager(f, torch.ones(2))


def test_cat_with_keyword_tensors():
    same_as_eager(lambda a, b: torch.cat(tensors=[a, b], dim=0), torch.ones(2), torch.ones(3))


def test_return_types_keep_their_type():
    same_as_eager(lambda a: a.max(dim=0), torch.arange(6.0).reshape(2, 3))


P = collections.namedtuple("P", ["x", "y"])


def test_namedtuple_arguments():
    same_as_eager(lambda p: p.x + 1 if isinstance(p, P) else p.y, P(np.ones(2), np.zeros(2)))
    same_as_eager(lambda p: P(p.x + 1, p.y), P(np.ones(2), np.zeros(2)))


def test_isinstance_of_modelled_values():
    same_as_eager(lambda x: (isinstance(x, np.ndarray), isinstance([x], (list, tuple)),
                             isinstance(x.sum(), np.floating), isinstance(3, int)), np.ones(2))
    same_as_eager(lambda x: isinstance(x, torch.nn.Parameter), torch.ones(2))


# -- aliasing: each Python object stays one object ---------------------------------------------

def test_copies_are_not_the_argument():
    def copy_then_store(a):
        t = a.copy()
        a[...] = 7
        return t
    same_as_eager(copy_then_store, np.zeros(3))

    def where_then_store(a, c):
        t = np.where(c, a, a)
        a[...] = 7
        return t
    same_as_eager(where_then_store, np.zeros(3), np.array([True, False, True]))

    def difference(u):
        un = u.copy()
        u[:] = un + 1
        return np.sum(u) - np.sum(un)
    same_as_eager(difference, np.zeros(3))


def test_returning_an_argument_returns_that_object():
    x = np.ones(3)
    f = dynamir.compile(lambda x, y: (x, y + 1))
    for _ in range(2):
        out = f(x, x)
        assert out[0] is x and out[1] is not x


def test_one_value_returned_twice_is_two_arrays():
    def f(a):
        b = a + 1
        return b, np.maximum(b, b)
    same_as_eager(f, np.ones(2))
    first, second = dynamir.compile(f)(np.ones(2))
    assert first is not second


# -- indexing ---------------------------------------------------------------------------------

def test_ellipsis_and_newaxis_indexing():
    same_as_eager(lambda b: (b[..., 0], b[0, ...], b[:, None, 1], b[None], b[..., None]),
                  np.arange(24.0).reshape(2, 3, 4))
    same_as_eager(lambda b: (b[..., 0], b[None, ..., 1]), torch.arange(24.0).reshape(2, 3, 4))


def test_zero_d_results_keep_numpy_types():
    same_as_eager(lambda x: (x[...], x[()], x + 1, x.copy(), x.sum(), np.sum(x, keepdims=True)),
                  np.array(3.0))
    same_as_eager(lambda x: (x[1], x[1:2], x.max(), np.where(x > 1, x, 0)), np.arange(3.0))


# -- data-dependent control flow after a break -------------------------------------------------

def test_numpy_bools_after_a_break_are_data():
    def f(a):
        print("x")
        dynamir.graph_break()
        if (a > 0).any():
            return a + 1
        return a - 1
    same_as_eager(f, -np.ones(3))
    same_as_eager(f, np.ones(3))


def test_while_over_array_values():
    def f(a):
        d, n = 1.0, 0
        while d > .001:
            a = a * 0.5
            d = float(np.abs(a).max())
            n += 1
        return a, n
    assert same_as_eager(f, np.ones(3))[0][1][1][1] == ("int", "10")


# -- inputs the tracer does not model run eagerly ----------------------------------------------

def test_array_subclasses_run_eagerly():
    same_as_eager(lambda x: x * x, np.matrix([[1., 2.], [3., 4.]]))
    same_as_eager(lambda x: x + 1, np.ma.masked_array([1., 2.], mask=[0, 1]))


def test_inputs_that_require_grad_keep_their_gradients():
    x = torch.ones(2, requires_grad=True)
    compiled = dynamir.compile(lambda x: (x * 2).sum())
    assert compiled(x.detach()).item() == 4.0  # compiled without autograd first
    with torch.enable_grad():
        for _ in range(2):
            y = compiled(x)
            assert y.requires_grad
            y.backward()
    assert x.grad.tolist() == [4.0, 4.0]


# -- dtypes -------------------------------------------------------------------------------------

def test_numpy_2_dtypes_of_rounding_and_float_functions():
    same_as_eager(lambda x: (np.floor(x), np.ceil(x), np.sin(x)), np.arange(3))
    same_as_eager(lambda x: (np.floor(x), np.sin(x)), np.array([True, False]))


def test_boolean_arithmetic():
    same_as_eager(lambda x, y: (x * y, x + y, np.square(x), np.minimum(x, y),
                                np.maximum(x, y), x // y),
                  np.array([True, False]), np.array([True, True]))


def test_reductions_over_tuples_of_axes_and_empty_arrays():
    same_as_eager(lambda x: (np.all(x > 0, axis=(0, 1)), x.sum(axis=(-1, 0))), np.ones((2, 3)))
    same_as_eager(lambda x: x.max(), np.ones((0, 3)))
    same_as_eager(lambda x: x.sum(axis=(0, 0)), np.ones((2, 3)))


def test_integer_constructors_and_promotion():
    same_as_eager(lambda x: np.ones(3, dtype=np.int64) + x, np.ones(3))
    same_as_eager(lambda x: np.zeros(2, np.int32) + x, np.ones(2))
    same_as_eager(lambda x, m: x.masked_fill(m, float("-inf")), torch.ones(3),
                  torch.tensor([True, False, True]))


def test_numpy_scalar_arguments_are_strongly_typed():
    same_as_eager(lambda x, s: x * s, np.ones(2, np.float32), np.float64(2.0))
    same_as_eager(lambda x, s: (x + s, s * 2), np.ones(2, np.float32), np.int64(3))


# -- constants and names across a graph break ------------------------------------------------

def test_non_literal_constants_across_a_break():
    def f(x):
        s = float("nan")
        dynamir.graph_break()
        return x + s, s, np.inf, x.dtype
    same_as_eager(f, np.ones(2))


def test_library_globals_of_inlined_functions():
    def f(x):
        if torch.distributed.is_available():
            return x + 1
        return x
    same_as_eager(f, torch.ones(2))


# -- guards -------------------------------------------------------------------------------------

def test_default_arguments_are_guarded():
    def cf(x, y=3):
        return x + y
    compiled = dynamir.compile(cf)
    x = np.ones(2)
    assert compiled(x).tolist() == [4.0, 4.0]
    assert compiled(x, 5).tolist() == [6.0, 6.0]
    assert compiled(x, y=7).tolist() == [8.0, 8.0]
    cf.__defaults__ = (10,)
    assert compiled(x).tolist() == [11.0, 11.0]


def test_mutable_defaults_keep_their_side_effects():
    def f(x, acc=[]):  # noqa: B006 - the mutable default is the point
        acc.append(1)
        return x + len(acc)
    eager_acc, compiled_acc = [], []
    want = [f(np.ones(1), eager_acc).tolist() for _ in range(3)]
    compiled = dynamir.compile(f)
    got = [compiled(np.ones(1), compiled_acc).tolist() for _ in range(3)]
    assert got == want and compiled_acc == eager_acc


class Config:
    scale = 2.0


config = Config()


def test_attributes_of_globals_and_arguments_are_guarded():
    def f(x, c):
        return x * c.scale + config.scale
    compiled = dynamir.compile(f)
    x, c = np.ones(2), Config()
    assert compiled(x, c).tolist() == [4.0, 4.0]
    c.scale = 3.0
    config.scale = 5.0
    try:
        assert compiled(x, c).tolist() == [8.0, 8.0]
    finally:
        config.scale = 2.0


def test_rebound_globals_are_guarded():
    global offset
    offset = 1.0
    compiled = dynamir.compile(lambda x: x + offset)
    assert compiled(np.ones(1)).tolist() == [2.0]
    offset = 5.0
    assert compiled(np.ones(1)).tolist() == [6.0]


# -- programs that used to kill the process -----------------------------------------------------

PRELUDE = """
import collections, warnings
import numpy as np, torch, dynamir
warnings.simplefilter("ignore")
"""


def test_tensor_type_method_does_not_crash():
    out = run_isolated(PRELUDE + """
x = torch.randn(2)
print(dynamir.compile(lambda a: a.type())(x))
""")
    assert out.strip() == "torch.FloatTensor"


def test_namedtuple_made_inside_the_frame_does_not_crash():
    out = run_isolated(PRELUDE + """
def f(a):
    T = collections.namedtuple("T", ["x"])
    return T(a + 1)
print(dynamir.compile(f)(np.ones(2)))
""")
    assert out.strip() == "T(x=array([2., 2.]))"


def test_isinstance_of_a_namedtuple_argument_does_not_crash():
    out = run_isolated(PRELUDE + """
P = collections.namedtuple("P", ["x"])
print(dynamir.compile(lambda p: isinstance(p, P))(P(np.ones(2))))
""")
    assert out.strip() == "True"


def test_reductions_of_zero_d_values_do_not_abort():
    out = run_isolated(PRELUDE + """
for f, x in [(lambda a: a.sum(axis=0), np.array(1.0)), (lambda a: a.max(axis=1), np.array(1.0)),
             (lambda a: a.amin(dim=0), torch.tensor(10.)),
             (lambda a: (a.sum(-1), a.argmax(0)), torch.tensor(3.))]:
    results = []
    for g in (f, dynamir.compile(f)):
        try:
            results.append(repr(g(x)))
        except Exception as e:
            results.append(type(e).__name__)
    print(results[0] == results[1], results[1])
""")
    assert out.split("\n")[:4] == ["True np.float64(1.0)", "True AxisError", "True tensor(10.)",
                                    "True (tensor(3.), tensor(0))"]


def test_integer_division_by_zero_matches_numpy_and_torch():
    out = run_isolated(PRELUDE + """
x = np.array([1, 0, 2, -7])
print(dynamir.compile(lambda x: (7 // x, x % np.zeros(4, np.int64), x // x, -x // 2))(x))
try:
    dynamir.compile(lambda x: x // x)(torch.tensor([1, 0]))
except RuntimeError:
    print("RuntimeError")
""")
    lines = out.strip().split("\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = np.array([1, 0, 2, -7])
        want = str((7 // x, x % np.zeros(4, np.int64), x // x, -x // 2))
    assert "\n".join(lines[:-1]) == want and lines[-1] == "RuntimeError"


# -- API contracts ------------------------------------------------------------------------------

def test_fullgraph_keeps_data_dependent_branches_in_one_graph():
    def f(x):
        y = x * 2
        if y.sum() > 0:
            y = np.sin(y)
        return y + 1
    compiled = dynamir.compile(f, fullgraph=True)
    for x in (np.ones(3), -np.ones(3)):
        e = dynamir.explain(compiled, x)
        assert np.array_equal(e.result, f(x))
        assert e.graph_count == 1 and e.host_syncs == 0 and e.graph_break_count == 0


def test_explain_counts_the_host_syncs_of_the_run_it_explains():
    def f(x):
        y = x - 1
        if x.sum() > 0:
            y = x + 1
        return y * 2
    compiled = dynamir.compile(f)
    for _ in range(3):
        assert dynamir.explain(compiled, np.ones(3)).host_syncs == 1


def test_explain_reports_a_call_that_ran_eagerly_after_one_that_compiled():
    """A call past the recompile limit runs eagerly: explain() said it ran the graph of the
    call before."""
    def f(x):
        return x * 2
    compiled = dynamir.compile(f)
    compiled.recompile_limit = 1
    first = dynamir.explain(compiled, np.ones(3))
    assert first.graph_count == 1
    with pytest.warns(RuntimeWarning, match="recompile limit"):
        eager = dynamir.explain(compiled, np.ones(4))
    assert np.array_equal(eager.result, f(np.ones(4)))
    assert eager.graph_count == 0
    assert [b.kind for b in eager.break_reasons] == ["eager"]


def test_constructors_follow_their_fill_and_reject_bad_shapes():
    same_as_eager(lambda x: (np.full((2,), True) & x, np.full(2, 3), np.full(2, 1.5)),
                  np.array([True, False]))
    same_as_eager(lambda x: (torch.full((2,), 3) + x, torch.zeros(2, 3) + x), torch.ones(3))
    same_as_eager(lambda x: np.zeros(-1) + x, np.ones(1))
    same_as_eager(lambda x: np.arange(0, 5, 0) + x, np.ones(1))
    same_as_eager(lambda x: np.full(2, x.sum()), np.ones(1))


def test_failed_type_inference_is_a_break_not_an_abort():
    # dyn.concat's builder reports mismatched shapes only through LLVM's fatal error handler:
    # while tracing that is an exception, and the call runs eagerly and raises numpy's error.
    same_as_eager(lambda a, b: np.concatenate([a, b]), np.ones((2, 3)), np.ones((2, 4)))
    same_as_eager(lambda a, b: torch.cat([a, b], dim=1), torch.ones(2, 3), torch.ones(3, 3))


# -- found by the differential tester (tools/difftest) -------------------------------------------

def test_methods_of_numpy_scalars_return_scalars():  # 20261201:67, :249, :439
    same_as_eager(lambda s: (s.copy(), s.T, s.reshape(()), s.astype(np.float32), s[...]),
                  np.float64(1.5))


def test_torch_promotion_with_zero_d_tensors():  # 20261201:176
    same_as_eager(lambda x, s: (x + s, x.int() * s, x.int() + s.long()),
                  torch.ones(2), torch.tensor(2.0, dtype=torch.float64))


def test_arg_reductions_with_empty_kept_dimensions():  # 20261201:46, :422
    same_as_eager(lambda x: x.argmin(axis=-2, keepdims=True), np.ones((4, 0), np.float32))


def test_objects_that_cse_into_one_value_stay_distinct_across_a_break():  # 777001:349
    def f(x):
        if (x > 0).any():
            x = x.long()
            v1 = x + x
            x += x
        else:
            v1 = x
        x[:] = -1.5
        return [v1, x, x]
    same_as_eager(f, torch.ones(3, 1))


def test_astype_copies_and_torch_casts_to_the_same_dtype_do_not():
    def store_through_astype(x):
        y = x.astype("float32")
        y[:] = 5
        return x, y
    same_as_eager(store_through_astype, np.ones(3, np.float32))

    def store_through_float(x):
        y = x.float()
        y[0] = 5
        return x
    same_as_eager(store_through_float, torch.ones(3))


def test_boolean_ordering_abs_and_power():
    same_as_eager(lambda a, b: (a < b, a >= b, np.abs(a), a ** 2),
                  np.array([True, False, True]), np.array([False, False, True]))


def test_float_floor_division_and_remainder_by_infinities_and_rounding():
    x = np.array([-1.0, 1.0, -5.0, 5.0, 1.0, 0.0])
    y = np.array([np.inf, -np.inf, np.inf, -np.inf, 0.1, -3.0])
    same_as_eager(lambda x, y: (x // y, x % y), x, y)
    # A zero remainder has the divisor's sign in numpy and the dividend's in torch, which a
    # division by it shows (difftest 27182:1574).
    same_as_eager(lambda x, y: (x // y, x % y, 1.0 // (x % y)), torch.from_numpy(x),
                  torch.from_numpy(y))
    same_as_eager(lambda x, y: 1.0 // (x % y), x, y)


def test_integer_powers_with_negative_exponents():
    x = np.array([2, -3, 1], np.int64)
    same_as_eager(lambda x: x ** x, x)
    same_as_eager(lambda x: (x ** x, torch.pow(x, x)), torch.from_numpy(x))
    same_as_eager(lambda x: x ** -1, x)


def test_a_copy_made_in_one_branch_side_is_not_the_argument():  # difftest 101:17
    def f(x):
        if x.sum() > 0:
            x = x.copy()
        x[..., 0] = 7
        return x
    same_as_eager(f, np.ones((2, 2)))
    same_as_eager(f, -np.ones((2, 2)))

    def view_in_branch(x):
        y = x * 2
        if x.sum() > 0:
            y = x[1:]
        y[0] = 9
        return x, y
    same_as_eager(view_in_branch, np.ones(3))


def test_contiguous_and_view_follow_torch_strides():  # corpus
    def zero_contiguous(x):
        y = x.t().contiguous()
        y.zero_()
        return x, y.is_contiguous()
    same_as_eager(zero_contiguous, torch.ones(2, 3))
    same_as_eager(lambda x: x.t().view(-1), torch.ones(2, 3))
    same_as_eager(lambda x: x.contiguous().add_(1), torch.ones(3, 2).t())


def _counted_without_breaks(fn, *args):
    dynamir.reset()
    same_as_eager(fn, *args, modes=[{}])
    c = dynamir.counters()
    return c["graph_breaks_hit"] == 0 and c["eager_runs"] == 0


def test_captured_loops_carry_no_views():  # difftest 189069015:75, 189069082:31
    # A view live across a loop (or rebound in it) stays linked to its base: the loop
    # unrolls instead of carrying the view as a value of its own.
    def view_before_loop(x):
        v = np.flip(x, 0)
        for i in range(4):
            pass
        x[::-1] = 1
        return v
    def view_in_loop(x):
        for i in range(4):
            v = x[0]
        v[-1] = 1
        return x > v, v, x
    same_as_eager(view_before_loop, np.arange(20).reshape(4, 5) - 3)
    same_as_eager(view_in_loop, np.zeros((1, 1), dtype=np.int32))


def test_return_type_fields_are_the_tensors():  # difftest 189069077:50
    # `.indices` of torch.return_types.max is the field, not Tensor.indices (a method).
    def f(x):
        v = x.max(dim=0, keepdim=True).indices
        return v == v, torch.where(v == v, v, x), x.min(0).values
    same_as_eager(f, torch.tensor([1., 3., 2., 0.]))


def test_views_of_strided_tensors_follow_torch_rule():
    x = torch.arange(2 * 4 * 12, dtype=torch.float32).reshape(2, 4, 12)
    # Splitting the last dimension of a column slice (GPT's qkv split) is a view in torch.
    assert _counted_without_breaks(lambda x: x[:, :, 4:8].view(2, 4, 2, 2).sum(-1), x)
    assert _counted_without_breaks(lambda x: x.split(4, dim=2)[1].view(2, 4, 2, 2) * 2, x)
    assert _counted_without_breaks(lambda x: x[::2].view(1, 4, 3, 4) + 1, x)
    assert _counted_without_breaks(lambda x: x.transpose(1, 2).contiguous().view(2, -1), x)
    assert _counted_without_breaks(lambda x: x.transpose(0, 1).view(4, 2, 3, 4).sum(), x)
    # Merging dimensions that are not laid out one inside the other: torch raises.
    same_as_eager(lambda x: x.transpose(1, 2).view(2, -1), x)
    same_as_eager(lambda x: x[:, :, 4:8].view(2, 16), x)
    same_as_eager(lambda x: x[:, :1].expand(2, 4, 12).view(-1), x)


def test_builtins_with_keyword_arguments():  # corpus
    def f(x):
        total = x * 0
        for i, row in enumerate([x, x], start=1):
            total = total + i * row
        return total
    same_as_eager(f, np.ones(2))


def test_torch_matrix_products_need_one_dtype():  # corpus
    a, b = torch.ones(2, 2), torch.ones(2, 2, dtype=torch.int64)
    same_as_eager(lambda a, b: a @ b, a, b)
    same_as_eager(lambda a, b: torch.mm(a, b.half()), a, b)


def test_float32_exp_keeps_subnormal_results():  # difftest 31415:4846
    x = np.array([-80, -87.5, -88, -90, -100, -103.9, -104, -np.inf, 0, 10], np.float32)
    got, nonzero = dynamir.compile(lambda x: (np.exp(x), np.exp(x) != 0))(x)
    # Within float32 rounding (the approximation is not numpy's libm), subnormals included.
    assert np.allclose(got, np.exp(x), rtol=2e-7, atol=0)
    assert np.array_equal(nonzero, np.exp(x) != 0)


def test_torch_subtraction_and_negation_of_bools_raise():  # difftest 31415:3680
    def f(x):
        x -= True
        return x
    same_as_eager(f, torch.arange(3))
    same_as_eager(lambda b: -b, torch.tensor([True, False]))
    same_as_eager(lambda b: np.negative(b), np.array([True, False]))


def test_numpy_functions_of_scalars_that_call_their_methods():  # difftest 31415:3536
    same_as_eager(lambda z, y: (np.transpose((z == 2) > y), np.reshape(z + 1, ()),
                                np.squeeze(z * 2)), np.array(1.0, np.float32),
                  np.array(0.5, np.float32))


def test_float32_sin_and_cos_are_accurate_away_from_zero():  # difftest 31415:1056
    # Upstream's approximations reduced the argument with one float32 constant: an error of
    # 6e-6 at |x| ~ 100 and 1e-2 at 1e6, and 10% relative error for small negative x.
    f = dynamir.compile(lambda x: (np.sin(x), np.cos(x)))
    rng = np.random.default_rng(0)
    for bound in (1.0, 100.0, 1e4, 1e6):
        x = rng.uniform(-bound, bound, 20000).astype(np.float32)
        s, c = f(x)
        assert np.max(np.abs(s - np.sin(x.astype(np.float64)))) < 2.5e-7
        assert np.max(np.abs(c - np.cos(x.astype(np.float64)))) < 2.5e-7
    tiny = np.array([-1e-5, -1e-30, -0.0, 1e-5], np.float32)
    s, _ = f(tiny)
    assert np.allclose(s, np.sin(tiny), rtol=1e-7, atol=0) and np.signbit(s[2])


@pytest.mark.parametrize("numerator", [0.0, 1.0, -1.0])
def test_float32_functions_of_special_constants(numerator):
    """A store makes a row constant; divided by 0 it is a NaN or an infinity the graph's loop
    computes from a constant array, and LLVM folds the approximations on it: one that reached
    its result through fptosi of NaN (poison) folded exp(NaN) to 0 in a sum (difftest
    277000035:99)."""
    torch = pytest.importorskip("torch")
    names = ["exp", "expm1", "sin", "cos", "tan", "tanh", "sigmoid", "log", "log1p", "log2",
             "sqrt", "atan", "asin", "sinh", "cosh", "exp2", "asinh", "erf"]

    for name in names:
        def f(x, function=getattr(torch, name)):
            y = x[0]
            y[:] = numerator
            return function(y / 0.0).sum()

        x = torch.arange(8.0).reshape(2, 4)
        want, got = f(x.clone()), dynamir.compile(f)(x.clone())
        assert torch.allclose(got, want, equal_nan=True), (name, got, want)


def test_float32_sin_and_cos_of_huge_arguments():
    # Beyond 2^24 the half-period count needs more bits than float32 has: Cody-Waite gave
    # garbage (sin(1e20) = 0.6, numpy -0.64); these arguments are reduced exactly.
    f = dynamir.compile(lambda x: (np.sin(x), np.cos(x), np.cos(np.sin(x) * 3)))
    rng = np.random.default_rng(3)
    x = (10.0 ** rng.uniform(4, 38, 20000) * rng.choice([-1, 1], 20000)).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, 3.4e38, 65536.0, np.nextafter(65536.0, 0, dtype=np.float32)]
    s, c, cs = f(x)
    exact = x.astype(np.float64)
    for got, want in ((s, np.sin(exact)), (c, np.cos(exact))):
        assert np.array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        assert np.max(np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]).astype(
            np.float32))) <= 4
    # The outer cos's argument is bounded (|3 sin x| <= 3): it keeps the short reduction.
    assert np.allclose(cs, np.cos(np.sin(x) * 3), rtol=0, atol=2e-6, equal_nan=True)


def test_float16_reductions_and_products_accumulate_in_float32():  # difftest 31415:2477, :2824
    x = np.random.default_rng(1).standard_normal(1000).astype(np.float16)
    same_as_eager(lambda x: (x.sum(), x.mean(), (x * x).sum(), x.sum(keepdims=True)), x)
    same_as_eager(lambda t: (t.sum(), t.mean()), torch.from_numpy(x))
    a = np.random.default_rng(2).standard_normal((16, 64)).astype(np.float16)
    same_as_eager(lambda a: a @ a.T, a)
    same_as_eager(lambda a: a @ a.T, torch.from_numpy(a))


def test_eager_backend_computes_float16_in_float32():  # difftest 1618034:4576
    # numpy's float16 exp(3.0) is 20.09; torch's (and the compiled code's) is 20.08, and
    # `% x` turned that ulp into 0.25.
    x = torch.tensor([2.5469, 5.5586, 2.8398, -3.457]).half()
    same_as_eager(lambda x: torch.round(x).exp() % x, x)


def test_reductions_over_no_dimension():  # difftest 14142:1211, :4546
    x = np.array(2.0, np.float32)
    same_as_eager(lambda x: np.stack([x, x]) * np.sum(x), x)
    same_as_eager(lambda x, y: x * np.sum(np.transpose(y), axis=()), np.ones(2),
                  np.array(3, np.int64))
    same_as_eager(lambda x: (torch.stack([x, x], dim=0) * torch.sum(x))[1], torch.tensor(0.5))


def test_eager_backend_hands_out_no_views_of_other_values():  # difftest 57721:691
    def f(x):
        v4 = (x * 2).sum()
        v2 = v4.reshape(-1) * 1
        v2[0] = 7
        return v4, v2
    same_as_eager(f, torch.arange(3))
    same_as_eager(f, np.arange(3))


def test_float_to_int_casts_of_nan_and_out_of_range_values():  # difftest 57721:2605
    x = np.array([np.nan, np.inf, -np.inf, 1e20, -1e20, 3.7, -3.7, 2.0**31], np.float64)
    same_as_eager(lambda x: (x.astype(np.int64), x.astype(np.int32)), x)
    same_as_eager(lambda t: t.long(), torch.tensor([float("nan"), 2.5, -1e30]))


W = np.ones(2)


class Returns(torch.nn.Module):
    def forward(self, x):
        return W, x + 1  # a global of forward, returned as itself (source type(L['self'])...)


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Returns()

    def forward(self, x):
        return self.inner(x)


def test_a_module_returning_a_global_of_an_inlined_forward():
    # W's source goes through type(L['self'].inner).forward.__globals__.
    out = dynamir.compile(Outer())(torch.ones(2))
    assert out[0] is W and torch.equal(out[1], torch.full((2,), 2.0))


def test_a_comprehension_that_breaks_in_its_body():
    # 3.12 inlines comprehensions: after a break inside one, the resumed frame gets the list
    # being built from outside, and appending to it must not be modelled (a lost element).
    same_as_eager(lambda x: ([str(i).zfill(3) for i in range(2)], x), np.ones(2))
    same_as_eager(lambda x: ([x[i:i + 2].sum() + len(str(i)) for i in range(3)], x), np.ones(4))


def test_string_dtypes_mean_what_numpy_makes_of_them():
    # "float" is float64 and "int" int64 in numpy (they are float32 and int32 in torch's
    # method names, x.float() and x.int(), which once leaked into numpy's strings).
    x = np.arange(4, dtype=np.int32)
    for dtype in ("float", "int", "f4", "<f8", "i4", "bool", "double", "half"):
        same_as_eager(lambda a, dtype=dtype: a.astype(dtype) * 3, x)
        same_as_eager(lambda a, dtype=dtype: np.zeros(3, dtype=dtype) + a[:3], x)
    same_as_eager(lambda a: np.ones_like(a, dtype="float"), x)
    t = torch.arange(4, dtype=torch.int32)
    same_as_eager(lambda a: (a.float() * 3, a.int(), a.long(), a.double()), t)


def test_empty_slices_compile():
    # x[:, 6:] of 6 columns and slices of an empty dimension: graphs, not a lowering failure
    # that falls back to eager (upstream's verifier rejects an offset at the end).
    t = torch.arange(24.0).reshape(4, 6)
    for fn in (lambda x: x[:, 6:], lambda x: (x[:, 6:], x[4:] * 2, x[4:, :0].sum()),
               lambda x: x.tensor_split([1, 5, 3, -1, 9], dim=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            same_as_eager(fn, t)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        same_as_eager(lambda x: (x[:, 1:], x[:, :0] + 1), np.zeros((0, 3)))


def test_splits_are_views_in_the_graph():
    # torch's split/chunk/unbind/tensor_split and numpy's split/array_split: tuples (torch)
    # or lists (numpy) of views, traced without a break, equal to eager in every piece.
    t = torch.arange(24.0).reshape(4, 6)
    a = np.arange(30.0).reshape(5, 6)
    for fn in (lambda x: torch.split(x, 4, dim=1), lambda x: x.split([1, 3]),
               lambda x: x.split([1, 2, 3], dim=1), lambda x: x.split((2, 2)),
               lambda x: torch.chunk(x, 4, 1),
               lambda x: x.chunk(5, dim=1), lambda x: torch.unbind(x, 1), lambda x: x.unbind(),
               lambda x: torch.tensor_split(x, 4, dim=1),
               lambda x: x.tensor_split([1, 5, 3, -1, 9], dim=1),
               lambda x: x.tensor_split((1, 4), dim=1)):
        same_as_eager(fn, t)
        assert "graph breaks: 0" in str(dynamir.explain(fn, t))
    for fn in (lambda x: np.split(x, 3, axis=1), lambda x: np.split(x, [1, 4, 2]),
               lambda x: np.array_split(x, 4), lambda x: np.array_split(x, [2, -2], axis=1)):
        same_as_eager(fn, a)
        assert "graph breaks: 0" in str(dynamir.explain(fn, a))
    same_as_eager(lambda x: np.split(x, 4), a)  # raises in numpy: 5 rows in 4

    def mutate_a_piece(x):
        first, second = x.split(4)
        first.add_(1)
        return x, second
    same_as_eager(mutate_a_piece, torch.arange(8.0))

    def lstm_gates(x, w):
        i, f, g, o = (x @ w).chunk(4, 1)
        return torch.sigmoid(i) * torch.tanh(g) + torch.sigmoid(f) * torch.sigmoid(o)
    explanation = str(dynamir.explain(lstm_gates, torch.randn(3, 8), torch.randn(8, 16)))
    assert "graph breaks: 0" in explanation, explanation


def test_small_torch_functions_trace_without_a_break():
    # masked_fill, tril/triu, type_as, the static facts (numel, dim, is_floating_point, ...),
    # flatten, t, expand/expand_as/broadcast_to: equal to eager, and no break.
    t = torch.randn(4, 4)
    ti = torch.arange(12).reshape(3, 4)
    a = np.arange(12.0).reshape(3, 4)
    cases = [
        (lambda x: x.masked_fill(x > 0, float("-inf")), t),
        (lambda x: torch.masked_fill(x, x > 0, 0.0), t), (lambda x: x.masked_fill(x > 3, 7), ti),
        (lambda x: torch.tril(x), t), (lambda x: x.triu(1), t), (lambda x: torch.tril(x, -1), ti),
        (lambda x: np.tril(x), a), (lambda x: np.triu(x, k=2), a),
        (lambda x: torch.triu(x[None].expand(2, 3, 4)), ti),
        (lambda x: x.type_as(torch.ones(1, dtype=torch.float64)), t),
        (lambda x: x * x.numel() + x.dim() + x.ndimension() + x.element_size(), t),
        (lambda x: x + 1 if x.is_floating_point() and not x.is_complex() and torch.is_tensor(x)
         else x, t),
        (lambda x: x.flatten(), t), (lambda x: torch.flatten(x[None], 1), t),
        (lambda x: torch.flatten(x[0, 0]), t), (lambda x: x.t() + 1, t),
        (lambda x: x[:1].expand(4, 4), t), (lambda x: x[:1].expand(2, -1, 4), t),
        (lambda x: x[:1].expand((3, 4)), t), (lambda x: x[:1].expand_as(x), t),
        (lambda x: torch.broadcast_to(x[0], (2, 4)), t), (lambda x: np.broadcast_to(x[0], (2, 4)), a),
    ]
    for fn, x in cases:
        same_as_eager(fn, x)
        assert "graph breaks: 0" in str(dynamir.explain(fn, x))
    same_as_eager(lambda x: x[:1].expand(5, 5), t)  # raises in torch
    same_as_eager(lambda x: x.masked_fill(x > 3, 0.5), ti)  # a float into integers: eager


def test_half_powers_follow_each_librarys_fast_paths():
    """9180101:296: `z **= 0.5` gave inf at -inf. numpy's `**` on arrays and np.power's
    float32/float64 loops compute x ** 0.5 as sqrt (nan at -inf, -0.0 at -0.0); numpy scalars
    and float16 np.power use pow; torch's pow is sqrt for 0.5 and 1 / sqrt for -0.5."""
    import warnings

    torch = pytest.importorskip("torch")
    warnings.simplefilter("ignore")
    fns = [lambda x: x ** 0.5, lambda x: np.power(x, 0.5), lambda x: x[0] ** 0.5,
           lambda x: np.power(x[1], 0.5)]
    for dt in ("float16", "float32", "float64"):
        a = np.array([-np.inf, -0.0, 4.0], dt)
        for fn in fns:
            want, got = fn(a.copy()), dynamir.compile(fn)(a.copy())
            assert type(got) is type(want) and np.array_equal(got, want, equal_nan=True), (dt, got, want)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (dt, got, want)
    t = torch.tensor([-float("inf"), -0.0, 4.0])
    for fn in (lambda x: x ** 0.5, lambda x: x ** -0.5, lambda x: torch.pow(x, 0.5)):
        want, got = fn(t.clone()), dynamir.compile(fn)(t.clone())
        assert torch.equal(torch.isnan(got), torch.isnan(want))
        finite = ~torch.isnan(want)
        assert torch.equal(got[finite], want[finite])
        assert torch.equal(torch.signbit(got[finite]), torch.signbit(want[finite]))


def test_layer_norm_over_a_slice_of_the_shape():
    """`F.layer_norm(h, h.shape[-1:])` normalized over no dimension at all: a slice of a
    torch.Size was an opaque object, whose length the decomposition read as 0. A torch.Size is
    a constant tuple now, and normalized_shape must name the input's trailing sizes (else eager
    raises, and so does the compiled function)."""
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    x = torch.randn(2, 5, 8)
    for fn in (lambda h: F.layer_norm(h, h.shape[-1:]), lambda h: F.layer_norm(h, h.shape[1:]),
               lambda h: F.layer_norm(h, h.size()[-1:]), lambda h: F.layer_norm(h, [8])):
        dynamir.reset()
        torch.testing.assert_close(dynamir.compile(fn)(x), fn(x))
        assert dynamir.counters()["graph_breaks_hit"] == 0
    for wrong, error in ((lambda h: F.layer_norm(h, (5,)), RuntimeError),
                         (lambda h: F.layer_norm(h, 8), TypeError)):
        with pytest.raises(error):
            wrong(x)
        with pytest.raises(error):
            dynamir.compile(wrong)(x)


def test_bfloat16_inputs_run_eagerly():
    """A bfloat16 tensor cannot reach a graph (numpy has no bfloat16): the frame, or the
    continuation after a break that made one, runs eagerly with eager's result and dtype
    (it raised torch's TypeError from .numpy())."""
    torch = pytest.importorskip("torch")
    x = torch.randn(5)
    for fn, arg in ((lambda x: x * 2, x.bfloat16()), (lambda x: x.bfloat16().sum(), x),
                    (lambda x: (x.bfloat16() * 3).float(), x)):
        dynamir.reset()
        got, want = dynamir.compile(fn)(arg), fn(arg)
        assert got.dtype == want.dtype and torch.equal(got, want)


def test_integer_powers_compile():
    """An integer tensor to a constant integer power (`x ** False` is x ** 0) lowered to
    math.ipowi, which the CPU pipeline did not legalize: the graph fell back to eager with a
    warning. convert-math-to-funcs now outlines it."""
    import warnings

    torch = pytest.importorskip("torch")
    x = torch.arange(-3, 5)
    for fn in (lambda x: x ** False, lambda x: x ** 3, lambda x: x ** 0, lambda x: (x * 2) ** 5):
        dynamir.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = dynamir.compile(fn)(x)
        want = fn(x)
        assert got.dtype == want.dtype and torch.equal(got, want)
        assert dynamir.counters()["eager_runs"] == 0
    a = np.arange(-3, 5)
    dynamir.reset()
    np.testing.assert_array_equal(dynamir.compile(lambda a: a ** 7)(a), a ** 7)


def test_device_branch_keeps_the_identity_of_a_returned_argument():
    """`if x.sum() > 0: x = x * 2` then `return x` under capture_control_flow=True returned a
    new array for a negative sum, where eager returns x itself (a later write through the
    result must reach the caller's array). Such a return now leaves the device branch; on the
    host each side hands back its own object."""
    def assign(x):
        if x.sum() > 0:
            x = x * 2
        return x

    def early(x):
        if x.sum() > 0:
            return x * 2
        return x

    for fn in (assign, early):
        for capture in (False, True):
            for sign in (1, -1):
                dynamir.reset()
                x = sign * np.ones(3, np.float32)
                got, want = dynamir.compile(fn, capture_control_flow=capture)(x), fn(x)
                assert (got is x) == (want is x) and np.array_equal(got, want)


def test_a_branch_hands_out_a_new_array_where_a_fold_left_the_argument():  # difftest 279800009:53
    """`np.where(x < x, x, x)` (or `v * 1`) folds to x in the graph, so a host branch that
    handed the fresh array on handed out the caller's x itself, which the frame's later
    `x /= 2` then changed under the result. The side's graph now copies such a value."""
    def where(x):
        v = np.where(x < x, x, x)
        x /= 2
        if v.sum() > 0:
            r = v
        else:
            r = v + 1
        return r

    def times_one(x):
        if x.sum() > 0:
            r = x * 1
        else:
            r = np.where(x < x, x, x)
        x += 1
        return r

    for fn in (where, times_one):
        for capture in (False, True):
            for sign in (1, -1):
                dynamir.reset()
                x = sign * np.array([3.0, 2.0])
                x_eager = x.copy()
                got, want = dynamir.compile(fn, capture_control_flow=capture)(x), fn(x_eager)
                assert got is not x and np.array_equal(got, want)
                assert np.array_equal(x, x_eager)


def test_a_branch_side_that_names_an_earlier_array_joins_as_that_object():
    """`if p: r = v` makes r the very object v is: `r += 1` then changes v too. The join was
    taken for a new array, so the host rebuilt r at the update's break as a copy and v missed
    the change; `return r, v` handed out two objects where eager returns one twice."""
    def update(x):
        v = x + 1
        if v.sum() > 0:
            r = v
        else:
            r = v + 1
        r += 1
        return v

    def both(x):
        v = x + 1
        if v.sum() > 0:
            r = v
        else:
            r = v + 1
        return r, v

    for capture in (False, True):
        for sign in (1, -1):
            x = sign * np.array([3.0, 2.0])
            dynamir.reset()
            assert np.array_equal(dynamir.compile(update, capture_control_flow=capture)(x),
                                  update(x))
            dynamir.reset()
            r, v = dynamir.compile(both, capture_control_flow=capture)(x)
            r_eager, v_eager = both(x)
            assert np.array_equal(r, r_eager) and np.array_equal(v, v_eager)
            assert (r is v) == (r_eager is v_eager)


def test_contiguous_of_a_contiguous_view_is_that_view():  # difftest 197577003:27
    """torch's x[...].contiguous() is the view itself (it is contiguous already), so an
    in-place change through it reaches x; it was traced as a copy of its own."""
    torch = pytest.importorskip("torch")

    def f(x):
        y = x[...].contiguous()
        y.clamp_(min=0)
        x /= y
        return y.sum(), x

    def g(x):
        y = x[1:3].contiguous()  # rows of a contiguous x: contiguous
        z = x.T.contiguous()  # not contiguous: a copy
        y.mul_(2)
        z.add_(1)
        return x, y, z

    for fn, x in ((f, torch.tensor(-2.0)), (f, torch.tensor([1.0, -1.0])), (g, torch.ones(4, 3))):
        dynamir.reset()
        want = fn(x.clone())
        got = dynamir.compile(fn)(x.clone())
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, equal_nan=True)


def test_torch_integer_powers_multiply_as_torch_does():  # difftest 197577016:11
    """torch computes x ** 2, 3, -1 and -2 by multiplying (x * x * x rounds twice where pow
    rounds once); a sin of the sum of float32 cubes amplified the ulp past the tolerance."""
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(4096).astype(np.float32) * 3)
    for e in (2, 3, -1, -2, 2.0, 3.0):
        dynamir.reset()
        fn = lambda x, e=e: x ** e
        assert torch.equal(dynamir.compile(fn)(x), fn(x)), e
    fn = lambda x: torch.relu(torch.matmul((x ** 3).reshape(1, 8), (x ** 3).reshape(1, 8).T).sin())
    x = torch.tensor([[-1.97, -0.94], [1.44, -2.51], [-2.64, -0.21], [0.71, 2.56]])
    dynamir.reset()
    torch.testing.assert_close(dynamir.compile(fn)(x), fn(x), rtol=1e-5, atol=1e-5)


def test_a_copy_after_a_host_branch_is_an_array_of_its_own():  # difftest 198396022:90
    """`if c: x = x * 2` then `y = x.copy()`: the copy folded into the branch's result, which
    on the host is the caller's x itself when c is false, so y was x (and a store into it,
    after a break, changed the caller's argument)."""
    def copied(x):
        if x.sum() > 0:
            x = x * 2
        y = x.copy()
        return y

    def stored_after_a_break(x, y):
        if np.all(x < 3):
            x = x.copy()
        x = x.copy()
        print(float(y.sum()))
        dynamir.graph_break()
        x[-3] = y
        return x

    for capture in (False, True):
        for sign in (1, -1):
            dynamir.reset()
            x = sign * np.ones(3, np.float32)
            got = dynamir.compile(copied, capture_control_flow=capture)(x)
            assert got is not x and not np.shares_memory(got, x)
            np.testing.assert_array_equal(got, copied(x))
            x, y = sign * np.ones((5, 2), np.float32), np.full(2, 7.0, np.float32)
            before = x.copy()
            got = dynamir.compile(stored_after_a_break, capture_control_flow=capture)(x, y)
            np.testing.assert_array_equal(x, before)
            np.testing.assert_array_equal(got, stored_after_a_break(x.copy(), y))


def test_cos_of_zero_is_one():  # difftest 199300012:46
    """The odd polynomial for sin r lost an ulp towards r = pi/2, where cos x lands for x near
    0: cos(0) was 0.99999994, and torch.cos(mask).long() gave 0 where eager gives 1."""
    torch = pytest.importorskip("torch")
    x = np.concatenate([[0.0, -0.0], np.linspace(-1e-3, 1e-3, 101)]).astype(np.float32)
    got = dynamir.compile(lambda x: np.cos(x))(x)
    np.testing.assert_array_equal(got, np.cos(x.astype(np.float64)).astype(np.float32))
    half_pi = np.float32(np.pi / 2) + np.linspace(-1e-3, 1e-3, 101).astype(np.float32)
    got = dynamir.compile(lambda x: np.sin(x))(half_pi)
    np.testing.assert_array_equal(got, np.sin(half_pi.astype(np.float64)).astype(np.float32))
    fn = lambda x: torch.cos(torch.eq(x, 2)).long()
    t = torch.tensor([5, 2], dtype=torch.int32)
    assert torch.equal(dynamir.compile(fn)(t), fn(t))


def test_tanh_rounds_to_one_where_tanh_does():  # difftest 221405013:27
    """Upstream's float32 tanh was 1 for every |x| above 7.9988, where tanh is still up to 4 ulp
    below 1 (tanh(8) = 0.99999976): `np.tanh(x).astype('int32')` gave 1 where eager gives 0."""
    x = np.linspace(7.0, 10.0, 3001, dtype=np.float32)
    x = np.concatenate([x, -x, [np.inf, -np.inf, 44.0, 100.0]]).astype(np.float32)
    got = dynamir.compile(lambda x: np.tanh(x))(x)
    exact = np.tanh(x.astype(np.float64)).astype(np.float32)  # correctly rounded here
    assert np.max(np.abs(got.astype(np.float64) - exact) / np.spacing(np.float32(1))) <= 1
    assert np.array_equal(got == 1, exact == 1) and np.array_equal(got == -1, exact == -1)
    fn = lambda x: np.tanh(x @ x.T).astype("int32")
    a = np.array([[1.18], [2.83]], np.float32)
    np.testing.assert_array_equal(dynamir.compile(fn)(a), fn(a))


def test_half_infinities_to_integers_are_the_integer_minimum():  # difftest 270926049:70
    """A 16-bit float cannot hold -2^63, so the cast's lower bound was -inf, which counted as
    in range: -inf became fptosi's poison (0) where torch, like x86, gives the minimum."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([float("-inf"), float("inf"), float("nan"), -65504.0, 3.5, -2.5])

    def f(x, i):
        h = x.half() * 1
        i[...] = h  # a store casts as .long() does
        return h.long(), h.int(), i

    want = f(x.clone(), torch.zeros(6, dtype=torch.int64))
    got = dynamir.compile(f)(x.clone(), torch.zeros(6, dtype=torch.int64))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and torch.equal(g, w), (g, w)


def test_arctan2_of_zeros_as_numpy():  # difftest 283100029:22
    """Zeros known only after lowering (`x - x` of integers) met upstream's math.atan2 folder,
    which makes atan2(0, 0) NaN; numpy's is ±0 or ±π by the signs, with zeros known or not."""
    def folded(x):
        y = x - x
        return np.arctan2(y, y)

    def signed(y, x):
        return np.arctan2(y, x), np.arctan2(y.astype(np.float32), x.astype(np.float32))

    dynamir.reset()
    got, want = dynamir.compile(folded)(np.arange(4)), folded(np.arange(4))
    assert np.array_equal(got, want) and not np.signbit(got).any()
    y, x = np.array([0.0, -0.0, 0.0, -0.0, 1.0]), np.array([0.0, 0.0, -0.0, -0.0, -1.0])
    for g, w in zip(dynamir.compile(signed)(y, x), signed(y, x)):
        assert g.dtype == w.dtype and np.array_equal(g, w)
        assert np.array_equal(np.signbit(g), np.signbit(w))


def test_a_store_into_an_expanded_argument_is_not_written_back():  # difftest 287100008:35
    """An expanded view (stride 0) passed to the frame, or to its continuation at a break: a
    store into one of its elements is a store into others, and writing the graph's value back
    raised in copy_. The store breaks (the write-back conflict "has elements that share
    memory"), and runs for real."""
    torch = pytest.importorskip("torch")

    def f(x):
        x[::2, :, 1] = x[0, 0, 0] * 2  # one row of the expanded dimension
        return x.sum()

    def g(b):
        x = b.expand(2, *b.shape)
        dynamir.graph_break()  # x reaches the continuation as an argument
        x[::2, :, 1] = 5.0
        return x + 1

    def expanded():
        return torch.arange(6.0).reshape(3, 2).expand(2, 3, 2)

    for fn, make in [(f, expanded), (g, lambda: torch.arange(6.0).reshape(3, 2))]:
        want_arg, got_arg = make(), make()
        want, got = fn(want_arg), dynamir.compile(fn)(got_arg)
        assert torch.equal(got, want) and torch.equal(got_arg, want_arg)
    assert "has elements that share memory" in str(dynamir.explain(f, expanded()))


def test_a_view_before_its_base_in_memory_is_rebuilt_at_a_break():  # difftest 288500056:98
    """A view the continuation gets rebuilt from a view that runs backwards through memory
    (v4 = x.T[-3::2, ::-1], then v6 = v4[::-2, -3]) starts before its base's first element: the
    host's rebuild took that negative offset as a length and raised."""

    def f(x, y):
        v4 = x.T[-3::2, ::-1]
        if (y > 0).any():
            print("positive")
        v6 = v4[::-2, -3]
        dynamir.graph_break()  # v6 reaches the next continuation as a view of v4
        v6[0] = 100  # and is still a view of x
        return v6 * 2, x

    x = np.arange(15, dtype=np.int32).reshape(5, 3) - 3
    y = np.array(2, np.int32)
    want_x, got_x = x.copy(), x.copy()
    want = f(want_x, y)
    got = dynamir.compile(f)(got_x, y)
    for w, g in zip(want, got):
        assert w.dtype == g.dtype and np.array_equal(w, g)
    assert np.array_equal(want_x, got_x)


def test_a_product_of_nothing_is_one_on_the_first_call():  # difftest 292100044:91
    """`x[::3].prod(-1)` of an empty x: the empty slice lowered to a fill of zeros, the
    product's body folded to ignore its accumulator, canonicalization dropped the fill of the
    init, and the loop of no iterations left the result unwritten (the first call returned the
    bits of a float 1.0 left in the fresh buffer)."""
    for dtype in [np.int8, np.int64, np.uint8, np.float32]:
        x = np.zeros(0, dtype)

        def f(x):
            y = x[::3].prod(-1)
            return y, x[::2].sum(), x.reshape(0, 4).prod(axis=0)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for got, want in zip(dynamir.compile(f)(x), f(x)):
                assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)


@pytest.mark.parametrize("capture", [False, True])
def test_a_store_after_a_branch_that_kept_a_view_or_not(capture):  # difftest 292200037:85
    """`v = y[None]`, then `if c: v = v * 2` on tensor values, then `y += x`: v is the view
    (which sees the store) or a new array (which does not), decided at run time; the join was
    a value of its own that the store missed. The store now breaks, and the frame runs
    eagerly from its start."""

    def f(x, y):
        v = y[None]
        if (v < 3).all():
            v = v * 2
        y += x
        return v, y

    for y in [np.array([5.0, 6.0]), np.array([1.0, 2.0])]:
        want = f(np.ones(2), y.copy())
        got = dynamir.compile(f, capture_control_flow=capture)(np.ones(2), y.copy())
        for g, w in zip(got, want):
            assert np.array_equal(g, w), (got, want)


@pytest.mark.parametrize("backend", ["llvm", "eager"])
def test_an_empty_reversed_slice(backend):  # difftest 292300019:30
    """y[-3::-1] of two elements is empty, normalized to start -1: the eager backend read -1
    as numpy's last element (a reshape error), and the lowering's generic had a negative
    index map (a verifier error, then a fallback)."""

    def f(y):
        for _ in range(3):
            y = y[-3::-1]
        return y, y[:0]

    y = np.arange(24.0).reshape(4, 3, 2)
    kwargs = {} if backend == "llvm" else {"backend": backend}
    for got, want in zip(dynamir.compile(f, **kwargs)(y), f(y)):
        assert got.shape == want.shape and got.dtype == want.dtype


def test_a_mask_of_every_dimension_stores_only_one_dimensional_values():
    """numpy raises TypeError for `x[mask] = v` when the mask covers x's dimensions and v has
    more than one (difftest 292300050:24); the store runs for real."""

    def f(x, v):
        x[x != 0] = v
        return x

    with pytest.raises(TypeError):
        dynamir.compile(f)(np.ones((1, 1)), np.ones((1, 1)))
    x = np.ones((2, 2))
    assert np.array_equal(dynamir.compile(f)(x, np.full(1, 3.0)), np.full((2, 2), 3.0))


def test_objects_read_from_the_caller_are_returned_from_the_caller():
    """A namedtuple, torch.return_types value or nn.Module is guarded by its type only: the
    result hands out the new call's object, not the first trace's (difftest 20261201:414 got
    the first call's torch.max across a break)."""
    torch = pytest.importorskip("torch")

    def across_a_break(y):
        return y.max(dim=0), bool(y.sum() > 0)

    compiled = dynamir.compile(across_a_break)
    compiled(torch.tensor([27.0, 1.0]))
    assert compiled(torch.tensor([3.0, 1.0]))[0].values.item() == 3.0

    Pair = collections.namedtuple("Pair", "a b")

    def returned(p, t):
        return p, t * 2

    compiled = dynamir.compile(returned)
    compiled(Pair(0, 0), torch.ones(1))
    assert compiled(Pair(1, 1), torch.ones(1))[0] == Pair(1, 1)
    compiled = dynamir.compile(returned)
    m1, m2 = torch.nn.ReLU(), torch.nn.ReLU()
    compiled(m1, torch.ones(1))
    assert compiled(m2, torch.ones(1))[0] is m2


def test_a_float_guard_tells_negative_zero():
    torch = pytest.importorskip("torch")

    def f(a, t):
        return a, t * a

    compiled = dynamir.compile(f)
    compiled(0.0, torch.ones(1))
    a, t = compiled(-0.0, torch.ones(1))
    assert np.signbit(a) and torch.signbit(t).all()


def test_torch_half_products_with_a_scalar_are_computed_as_torch_computes_them():
    """torch's float16/bfloat16 mul and true division by a Python number or 0-d tensor read
    it as float32 and round once (`x * 0.1` differed in the last place on a third of the
    elements; an int32 0-d divisor of -2**31 made nan where torch has -inf, difftest
    3082000046:34); `n / x` is torch's x.reciprocal() * n. Sums and 0-d first operands cast
    the scalar to the tensor's type, as before."""
    x = torch.linspace(-3, 3, 1001, dtype=torch.float16)
    cases = [
        lambda x: x * 0.1, lambda x: 0.1 * x, lambda x: x / 0.3, lambda x: 0.3 / x,
        lambda x: x + 0.1, lambda x: 0.1 - x, lambda x: x * torch.tensor(0.1),
        lambda x: x / torch.tensor(0.3, dtype=torch.float64), lambda x: torch.tensor(0.1) * x,
        lambda x: x.clone().mul_(0.1), lambda x: torch.div(x, 0.3),
        lambda x: x.bfloat16() * 0.1, lambda x: x.bfloat16() / torch.tensor(0.3),
        lambda x: (x * 0 + float("inf"))[:3] / torch.tensor(-2**31, dtype=torch.int32),
    ]
    for f in cases:
        want, got = f(x), dynamir.compile(f)(x)
        assert got.dtype == want.dtype and torch.equal(got, want), f


def test_identity_of_arrays_that_are_one_object_under_two_names():  # difftest 3121000013:84
    """After a graph break the frame's locals are the resumed trace's inputs, one per name: two
    names of one array were two inputs, and `x is p` came out False. Two arrays the caller
    passes are compared as the objects they are, and a guard keeps the answer."""
    def after_a_break(x):
        p = x
        np.flip(x, 0)  # a dynamically shaped flip breaks the graph (dynamic=True)
        return x * 2 if x is p else x - 1

    x = np.array([3.5, 1.0, 2.0, 0.5], np.float32)
    np.testing.assert_array_equal(dynamir.compile(after_a_break, dynamic=True)(x), x * 2)

    def two(a, b):
        return a * 2 if a is b else a - 1

    g = dynamir.compile(two)
    y = x + 1
    np.testing.assert_array_equal(g(x, y), x - 1)
    np.testing.assert_array_equal(g(x, x), x * 2)  # the guard fails: not the trace above
    np.testing.assert_array_equal(g(y, x), y - 1)
