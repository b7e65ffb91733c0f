#!/usr/bin/env python3
"""Hand-written corpus: small Python + torch/numpy programs in the style people really write
them (containers, builtins, closures, classes, namedtuples, dataclasses, f-strings, mutation of
arguments/globals/attributes, torch and numpy API surface, nn.Modules in inference, control flow
on tensor values, exceptions), run eagerly and through Dynamir.

Each program is a module: a common prelude (imports and the seeded input makers T/A below),
optional module-level definitions, `def f(...)` and `def inputs()` (a fresh list of positional
arguments, deterministic; it also resets any global state the program mutates). A program that
raises in eager on purpose says which exception (`raises=`); Dynamir must raise the same type.

The runner is difftest's (tools/difftest/difftest.py): crash-isolated workers on a JSON-lines
protocol, eager once, then dynamir.compile in three modes (default, capture_control_flow=True,
backend="eager"), each called twice on fresh inputs, comparing results (values, Python types,
dtypes, shapes), the arguments after the call, stdout and exception types. A corpus worker
differs in three ways: inputs come from the program's `inputs()`; a program's module is loaded
once per program (not once per mode), so classes and exception types defined in it are the same
objects in eager and compiled runs; objects of classes the program defines, dataclasses and
nn.Modules are compared field by field (their __dict__ / dataclass fields / state_dict).

CLI:  corpus.py [--jobs 2] [--filter SUBSTR] [--timeout S]
      corpus.py --list                      names and themes
      corpus.py --show NAME                 a program's source
      corpus.py --script NAME [--mode M]    a standalone script running one program eagerly
                                            and compiled in mode M (for gdb / bug reports)
      corpus.py --eager                     run every program eagerly here (corpus self-check)
"""

import argparse
import ast
import collections
import contextlib
import dataclasses
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import difftest  # noqa: E402

PRELUDE = '''\
import collections
import contextlib
import dataclasses
import enum
import functools
import itertools
import math
import operator
import typing

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def T(*shape, seed=0, dtype=torch.float32):
    """A seeded tensor: normal floats rounded to 2 decimals, small integers or bools."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    if not dtype.is_floating_point:
        return torch.randint(-4, 6, shape, generator=g).to(dtype)
    t = torch.randn(shape, generator=g, dtype=torch.float64)
    return (t * 200).round().div(100).to(dtype)


def A(*shape, seed=0, dtype="float64"):
    """A seeded numpy array, like T."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-4, 6, size=shape).astype(dtype)
    return np.round(rng.standard_normal(shape) * 2.0, 2).astype(dtype)


'''

PROGRAMS = collections.OrderedDict()  # name -> {"theme", "name", "source", "raises"}


def P(theme, name, source, args=None, raises=None):
    """Registers a program. `source` defines f (and inputs, unless `args` is given: the text
    of the argument list that inputs() returns). What its first compiled call must do is
    BREAKS's entry for it (below the programs), 0 graph breaks if it has none."""
    assert name not in PROGRAMS, f"duplicate corpus program {name}"
    body = textwrap.dedent(source).strip("\n") + "\n"
    if args is not None:
        body += f"\n\ndef inputs():\n    return [{args}]\n"
    PROGRAMS[name] = {"theme": theme, "name": name, "source": PRELUDE + body, "raises": raises}


# ================================================================================================
# Programs
# ================================================================================================
# (the sections below are appended by theme)

# ---- containers --------------------------------------------------------------------------------
C = "containers"

P(C, "list_append_loop", """
def f(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return out
""", "T(4)")

P(C, "list_comprehension_sum", """
def f(x):
    return sum([x * i for i in range(4)])
""", "T(2, 3)")

P(C, "tuple_swap_fib", """
def f(x, y):
    a, b = x, y
    for _ in range(3):
        a, b = b, a + b
    return a - b
""", "T(3), T(3, seed=1)")

P(C, "dict_build_iterate", """
def f(x, y):
    d = {"a": x, "b": y}
    d["c"] = d["a"] + d["b"]
    return {k: v * 2 for k, v in d.items()}
""", "T(2, 2), T(2, 2, seed=1)")

P(C, "dict_get_default", """
def f(x):
    cfg = {"scale": 2.0}
    return x * cfg.get("scale", 1.0) + cfg.get("shift", 0.5)
""", "T(5)")

P(C, "list_extend_insert_pop", """
def f(x):
    lst = [x, x + 1]
    lst.extend([x * 2, x * 3])
    lst.insert(0, x - 1)
    last = lst.pop()
    return last, len(lst), lst[1:3]
""", "T(3)")

P(C, "nested_list_index", """
def f(x, y):
    grid = [[x, y], [y * 2, x * 3]]
    return grid[1][0] * grid[0][1] + grid[-1][-1]
""", "T(3), T(3, seed=1)")

P(C, "list_of_rows_stack", """
def f(x):
    rows = [x[i] * i for i in range(x.shape[0])]
    return torch.stack(rows)
""", "T(4, 3)")

P(C, "tuple_concat_repeat", """
def f(x, y):
    t = (x,) + (y, x)
    t2 = t * 2
    return len(t2), t2[-1] + t2[1]
""", "T(2), T(2, seed=1)")

P(C, "dict_update_sorted_keys", """
def f(x):
    d = dict(a=x, b=x + 1)
    d.update(c=x * 2)
    d.update({"a": x - 1})
    return sorted(d.keys()), d["a"] + d["c"]
""", "T(3)")

P(C, "set_operations", """
def f(x):
    s = {1, 2, 3}
    t = {3, 4}
    return x * len(s | t) + len(s & t), sorted(s - t), 4 in t
""", "T(3)")

P(C, "defaultdict_groups", """
def f(x, labels):
    groups = collections.defaultdict(list)
    for i, label in enumerate(labels):
        groups[label].append(x[i])
    return {k: torch.stack(v).sum(0) for k, v in groups.items()}
""", "T(5, 3), ['a', 'b', 'a', 'c', 'b']")

P(C, "ordereddict_move_to_end", """
def f(x):
    od = collections.OrderedDict()
    od["first"] = x
    od["second"] = x * 2
    od["third"] = x * 3
    od.move_to_end("first")
    return list(od.keys()), list(od.values())[0] + 1
""", "T(2)")

P(C, "counter_most_common", """
def f(x, words):
    counts = collections.Counter(words)
    (top, n), = counts.most_common(1)
    return top, x * n + len(counts)
""", "T(3), ['relu', 'tanh', 'relu', 'gelu', 'relu']")

P(C, "deque_rotate", """
def f(x, y):
    d = collections.deque([x, y, x + y])
    d.rotate(1)
    d.appendleft(y * 2)
    d.pop()
    return list(d)
""", "T(2), T(2, seed=1)")

P(C, "unbind_slicing_reverse", """
def f(x):
    xs = list(x.unbind(0))
    return xs[::-1], xs[1:], torch.stack(xs[:-1])
""", "T(3, 2)")

P(C, "zip_into_dict", """
def f(x, w, b):
    params = dict(zip(["weight", "bias"], [w, b]))
    return x @ params["weight"] + params["bias"]
""", "T(2, 3), T(3, 4, seed=1), T(4, seed=2)")

P(C, "membership_in_list", """
def f(x, sizes):
    if 3 in sizes:
        x = x * 3
    if 7 not in sizes:
        x = x + 7
    return x
""", "T(3), [1, 3, 5]")

P(C, "sorted_tensors_by_key", """
def f(xs):
    ordered = sorted(xs, key=lambda t: t.sum().item())
    return [t.sum() for t in ordered]
""", "[T(3, seed=i) for i in range(4)]")

P(C, "list_arg_mutated", """
def f(lst, x):
    lst.append(x * 2)
    lst[0] = lst[0] + 1
    return len(lst)
""", "[T(2), T(2, seed=1)], T(2, seed=2)")

P(C, "dict_arg_mutated", """
def f(state):
    state["out"] = state["in"] * 2
    del state["tmp"]
    state["count"] += 1
    return state["out"].sum()
""", "{'in': T(3), 'tmp': 5, 'count': 0}")

P(C, "list_index_count", """
def f(x):
    ids = [1, 2, 3, 2, 2]
    return x * ids.index(3) + ids.count(2)
""", "T(4)")

P(C, "enumerate_start", """
def f(xs):
    acc = torch.zeros_like(xs[0])
    for i, t in enumerate(xs, start=1):
        acc = acc + i * t
    return acc
""", "[T(3, seed=i) for i in range(3)]")

P(C, "tuple_compare_shape", """
def f(x):
    if x.shape == (2, 3):
        return x.sum(0)
    return x.sum()
""", "T(2, 3)")

P(C, "dict_setdefault_pop", """
def f(x):
    d = {"a": x}
    d.setdefault("b", x * 2)
    d.setdefault("a", x * 100)
    a = d.pop("a")
    missing = d.pop("zzz", None)
    return a + d["b"], missing, len(d)
""", "T(3)")

P(C, "list_multiply_fill", """
def f(n, x):
    vals = [0.0] * n
    for i in range(n):
        vals[i] = i * 0.5
    return x + torch.tensor(vals)
""", "4, T(4)")

P(C, "nested_config_dict", """
CONFIG = {"layer": {"scale": 2, "bias": True}, "act": "relu"}


def f(x):
    layer = CONFIG["layer"]
    y = x * layer["scale"]
    if layer["bias"]:
        y = y + 1
    if CONFIG["act"] == "relu":
        y = torch.relu(y)
    return y
""", "T(6)")

P(C, "star_unpack_first_rest", """
def f(x):
    first, *rest = x.unbind(0)
    *init, last = x.unbind(0)
    return first, torch.stack(rest), len(init), last
""", "T(4, 2)")

P(C, "dict_comprehension_filter", """
def f(d):
    return {k: v for k, v in d.items() if v.sum() > 0}
""", "{'a': T(3, seed=0), 'b': T(3, seed=1), 'c': T(3, seed=2), 'd': T(3, seed=3)}")

P(C, "list_of_tuples_unpack", """
def f(pairs):
    total = 0
    for a, b in pairs:
        total = total + a * b
    return total
""", "[(T(2, seed=i), T(2, seed=i + 5)) for i in range(3)]")

P(C, "dict_items_sorted_values", """
def f(scores):
    best = max(scores.items(), key=lambda kv: kv[1])
    return best[0], sorted(scores.values())
""", "{'a': 3, 'b': 7, 'c': 5}")

P(C, "list_remove_reverse", """
def f(x):
    names = ["w", "b", "g", "b"]
    names.remove("b")
    names.reverse()
    return names, x * len(names)
""", "T(2)")

# ---- builtins ----------------------------------------------------------------------------------
B = "builtins"

P(B, "len_range_index", """
def f(xs):
    out = xs[0]
    for i in range(1, len(xs)):
        out = out + xs[i] * i
    return out
""", "[T(3, seed=i) for i in range(3)]")

P(B, "min_max_of_shape", """
def f(x):
    return x.reshape(max(x.shape), -1).sum(min(1, x.dim() - 1))
""", "T(2, 5)")

P(B, "abs_round_python", """
def f(x):
    return x * abs(-3) + round(2.567, 2) + round(7.5)
""", "T(3)")

P(B, "isinstance_dispatch", """
def scale(x, s):
    if isinstance(s, torch.Tensor):
        return x * s
    elif isinstance(s, (int, float)):
        return x + s
    return x


def f(x, a, b):
    return scale(x, a), scale(x, b), scale(x, "other")
""", "T(3), T(3, seed=1), 2.5")

P(B, "type_is_checks", """
def f(x, n):
    r = x
    if type(n) is int:
        r = r * n
    if type(x) is torch.Tensor:
        r = r + 1
    return r, type(n).__name__
""", "T(3), 3")

P(B, "getattr_dispatch", """
def f(x, name):
    fn = getattr(torch, name)
    meth = getattr(x, name)
    return fn(x) + meth()
""", "T(4), 'sigmoid'")

P(B, "hasattr_checks", """
class Cfg:
    scale = 3


def f(x):
    r = x
    if hasattr(x, "shape"):
        r = r * len(x.shape)
    if hasattr(Cfg, "scale"):
        r = r + Cfg.scale
    if hasattr(Cfg, "missing"):
        r = r * 0
    return r
""", "T(2, 2)")

P(B, "callable_check", """
def f(x, act):
    if callable(act):
        x = act(x)
    if callable(3):
        x = x * 0
    return x
""", "T(4), torch.tanh")

P(B, "map_filter_lambda", """
def f(xs):
    big = filter(lambda t: t.numel() > 2, xs)
    return list(map(lambda t: t * 2, big))
""", "[T(2), T(3, seed=1), T(4, seed=2)]")

P(B, "any_all_generators", """
def f(x):
    r = x
    if any(s > 2 for s in x.shape):
        r = r + 1
    if all(s > 1 for s in x.shape):
        r = r * 2
    return r
""", "T(2, 3)")

P(B, "sum_with_start", """
def f(xs):
    return sum(xs, torch.zeros(3)), sum([1, 2, 3], 10)
""", "[T(3, seed=i) for i in range(3)]")

P(B, "sorted_reversed", """
def f(x):
    order = sorted([3, 1, 2], reverse=True)
    acc = []
    for i in reversed(range(3)):
        acc.append(x[order[i] - 1])
    return torch.stack(acc)
""", "T(3, 2)")

P(B, "divmod_pow", """
def f(x):
    q, r = divmod(17, 5)
    return x * q + r + pow(2, 5) - pow(x, 2)
""", "T(3)")

P(B, "int_float_bool_conversions", """
def f(x):
    pos = int(x.sum() > 0)
    top = float(x.max())
    nz = bool(x.any())
    return pos, top, nz, int(x.shape[0] * 1.5)
""", "T(4)")

P(B, "chr_ord", """
def f(x, letter):
    return x * (ord(letter) - ord("a")), chr(ord(letter) + 1)
""", "T(2), 'c'")

P(B, "iter_next_default", """
def f(xs):
    it = iter(xs)
    a = next(it)
    b = next(it)
    c = next(it, None)
    return a + b, c is None
""", "[T(2), T(2, seed=1)]")

P(B, "slice_object", """
def f(x):
    s = slice(1, None, 2)
    return x[s], x[:, s], s.start
""", "T(5, 5)")

P(B, "max_with_key", """
def f(xs):
    biggest = max(xs, key=lambda t: t.abs().sum())
    return biggest, min(len(t) for t in xs)
""", "[T(3, seed=i) for i in range(4)]")

P(B, "math_module", """
def f(x):
    n = x.shape[-1]
    return x / math.sqrt(n) + math.pi * math.floor(2.7) + math.log(math.e)
""", "T(2, 8)")

P(B, "min_default_empty", """
def f(x, xs):
    return x + min(xs, default=0) + max([], default=-1)
""", "T(3), []")

P(B, "range_negative_step", """
def f(x):
    idx = list(range(10, 0, -3))
    return x[idx], len(range(0, 10, 4))
""", "T(12)")

P(B, "or_and_defaults", """
def f(x, scale=None, bias=None):
    scale = scale or 2.0
    bias = bias if bias is not None else x.mean()
    flag = (x.numel() > 2) and "big"
    return x * scale + bias, flag
""", "T(4)")

P(B, "zip_strict_pairs", """
def f(xs, ws):
    return [x * w for x, w in zip(xs, ws, strict=True)]
""", "[T(2), T(2, seed=1)], [0.5, 2.0]")

P(B, "int_parse_str", """
def f(x, spec):
    h, w = (int(v) for v in spec.split("x"))
    return x.reshape(h, w), float("1.5") * h
""", "T(6), '2x3'")

P(B, "isinstance_numpy_scalar", """
def f(a):
    s = a.sum()
    kinds = (isinstance(s, np.generic), isinstance(s, float), isinstance(a, np.ndarray))
    return kinds, s * 2
""", "A(4)")

P(B, "builtin_round_tensor", """
def f(x):
    return round(x.sum().item(), 2), abs(x), max(x.tolist())
""", "T(4)")

P(B, "enumerate_zip_mixed", """
def f(xs, ys):
    out = {}
    for i, (a, b) in enumerate(zip(xs, ys)):
        out[i] = a * b + i
    return out
""", "[T(2, seed=i) for i in range(3)], [T(2, seed=10 + i) for i in range(3)]")

P(B, "hash_of_ints_and_tuples", """
def f(x):
    key = (x.dim(), x.shape[0])
    table = {key: 2.0, (0, 0): 5.0}
    return x * table[key], hash(3) == 3
""", "T(3, 2)")

P(B, "all_empty_any_empty", """
def f(x):
    return x + int(all([])) - int(any([])), all(t > -100 for t in x.tolist())
""", "T(3)")

# ---- functions and closures --------------------------------------------------------------------
FN = "functions"

P(FN, "closure_factory", """
def make_scale(s):
    def inner(t):
        return t * s
    return inner


def f(x):
    return make_scale(3)(x) + make_scale(0.5)(x)
""", "T(3)")

P(FN, "nonlocal_counter", """
def f(x):
    count = 0

    def bump(t):
        nonlocal count
        count += 1
        return t + count
    y = bump(x)
    y = bump(y)
    return y, count
""", "T(3)")

P(FN, "lambda_default_capture", """
def f(x):
    fns = [lambda t, k=k: t * k for k in range(3)]
    return [fn(x) for fn in fns]
""", "T(2)")

P(FN, "late_binding_closure", """
def f(x):
    fns = [lambda t: t * k for k in range(3)]
    return [fn(x) for fn in fns]
""", "T(2)")

P(FN, "keyword_only_defaults", """
def helper(a, b=2, *, c=3, d=None):
    out = a * b + c
    if d is not None:
        out = out - d
    return out


def f(x):
    return helper(x), helper(x, 3, c=5), helper(x, d=x)
""", "T(3)")

P(FN, "star_args_sum", """
def total(*xs, scale=1):
    return sum(xs) * scale


def f(x, y):
    return total(x, y), total(x, y, x, scale=2), total(*[x, y])
""", "T(3), T(3, seed=1)")

P(FN, "kwargs_unpack_torch", """
def f(x, y):
    opts = {"alpha": 2.0}
    return torch.add(x, y, **opts)
""", "T(3), T(3, seed=1)")

P(FN, "kwargs_forwarding", """
def inner(x, scale=1.0, shift=0.0, **extra):
    out = x * scale + shift
    if extra.get("relu"):
        out = torch.relu(out)
    return out, sorted(extra)


def outer(x, *args, **kwargs):
    return inner(x, *args, **kwargs)


def f(x):
    return outer(x, 2.0, shift=-1.0, relu=True, tag="t")
""", "T(4)")

P(FN, "args_tuple_unpack", """
def f(x, y):
    args = (x, y)
    return torch.maximum(*args), torch.stack(args).sum(0)
""", "T(3), T(3, seed=1)")

P(FN, "recursive_helper", """
def repeat(n, t):
    if n == 0:
        return t
    return repeat(n - 1, t * 2 + 1)


def f(x):
    return repeat(3, x)
""", "T(3)")

P(FN, "functools_partial", """
def f(x):
    clip = functools.partial(torch.clamp, min=-0.5, max=0.5)
    scale = functools.partial(torch.mul, other=3)
    return clip(x), scale(x)
""", "T(5)")

P(FN, "functools_reduce", """
def f(xs):
    return functools.reduce(operator.add, xs), functools.reduce(lambda a, b: a * b, [1, 2, 3, 4])
""", "[T(3, seed=i) for i in range(4)]")

P(FN, "lru_cached_helper", """
@functools.lru_cache(maxsize=None)
def offsets(n):
    return tuple(i * 0.5 for i in range(n))


def f(x):
    return x + torch.tensor(offsets(x.shape[0]))
""", "T(4)")

P(FN, "wraps_decorator", """
def scaled(factor):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs) * factor
        return wrapper
    return deco


@scaled(10)
def affine(x, b=1):
    return x + b


def f(x):
    return affine(x), affine(x, b=2), affine.__name__
""", "T(3)")

P(FN, "operator_getters", """
def f(xs, x):
    pick = operator.itemgetter(2, 0)
    shape_of = operator.attrgetter("shape")
    a, b = pick(xs)
    return a - b, shape_of(x), operator.mul(x, 2)
""", "[T(2, seed=i) for i in range(3)], T(2, 3)")

P(FN, "operator_methodcaller", """
def f(x):
    summer = operator.methodcaller("sum", dim=0)
    return summer(x), operator.neg(x), operator.truediv(x, 4)
""", "T(3, 2)")

P(FN, "itertools_chain", """
def f(xs, ys):
    return [t * 2 for t in itertools.chain(xs, ys)]
""", "[T(2)], [T(2, seed=1), T(2, seed=2)]")

P(FN, "itertools_product_grid", """
def f(x):
    acc = torch.zeros(())
    for i, j in itertools.product(range(2), range(3)):
        acc = acc + x[i, j] * (i + j)
    return acc
""", "T(2, 3)")

P(FN, "itertools_accumulate", """
def f(xs):
    running = list(itertools.accumulate(xs))
    return running, list(itertools.accumulate([1, 2, 3], operator.mul))
""", "[T(2, seed=i) for i in range(3)]")

P(FN, "itertools_combinations", """
def f(xs):
    return [torch.dot(a, b) for a, b in itertools.combinations(xs, 2)]
""", "[T(3, seed=i) for i in range(4)]")

P(FN, "itertools_islice_count", """
def f(x):
    out = []
    for i, k in zip(range(3), itertools.count(start=2, step=2)):
        out.append(x * k + i)
    return out, list(itertools.islice("abcdef", 1, 5, 2))
""", "T(2)")

P(FN, "itertools_zip_longest", """
def f(xs, ys):
    return [a + b for a, b in itertools.zip_longest(xs, ys, fillvalue=0)]
""", "[T(2), T(2, seed=1), T(2, seed=2)], [T(2, seed=3)]")

P(FN, "itertools_starmap_repeat", """
def f(x):
    pairs = list(zip(itertools.repeat(x, 3), [1, 2, 3]))
    return list(itertools.starmap(torch.mul, pairs))
""", "T(3)")

P(FN, "generator_function", """
def powers(t, n):
    for i in range(n):
        yield t ** i


def f(x):
    return sum(powers(x, 4)), list(powers(x, 2))
""", "T(3)")

P(FN, "generator_expression_tuple", """
def f(xs):
    return tuple(t + 1 for t in xs), max(t.numel() for t in xs)
""", "[T(2), T(3, seed=1)]")

P(FN, "higher_order_apply", """
def apply_twice(fn, t):
    return fn(fn(t))


def f(x):
    return apply_twice(torch.tanh, x), apply_twice(lambda t: t * 2, x)
""", "T(4)")

P(FN, "closure_over_tensor_map", """
def f(x, y):
    def add_y(t):
        return t + y
    return list(map(add_y, [x, x * 2]))
""", "T(3), T(3, seed=1)")

P(FN, "none_default_list", """
def collect(t, acc=None):
    acc = [] if acc is None else acc
    acc.append(t)
    return acc


def f(x):
    a = collect(x)
    b = collect(x * 2, a)
    return len(a), len(b), torch.stack(b)
""", "T(2)")

P(FN, "global_function_table", """
ACTS = {"relu": torch.relu, "tanh": torch.tanh, "sig": torch.sigmoid}


def f(x, names):
    return [ACTS[n](x) for n in names]
""", "T(4), ['tanh', 'relu']")

P(FN, "map_two_iterables", """
def f(xs, ys):
    return list(map(torch.add, xs, ys)), list(map(pow, [2, 3], [3, 2]))
""", "[T(2), T(2, seed=1)], [T(2, seed=2), T(2, seed=3)]")

P(FN, "inner_function_defaults_closure", """
def f(x, k):
    def step(t, scale=k):
        return t * scale - 1
    out = x
    for _ in range(k):
        out = step(out)
    return out
""", "T(3), 3")

P(FN, "method_as_value", """
def f(x):
    ops = [x.sin, x.cos, x.exp]
    return torch.stack([op() for op in ops])
""", "T(3)")

P(FN, "compose_functions", """
def compose(*fns):
    def run(t):
        for fn in reversed(fns):
            t = fn(t)
        return t
    return run


def f(x):
    pipeline = compose(torch.relu, lambda t: t - 1, torch.abs)
    return pipeline(x)
""", "T(5)")

P(FN, "functools_cmp_to_key", """
def by_norm(a, b):
    return (a.norm() > b.norm()).item() - (a.norm() < b.norm()).item()


def f(xs):
    return sorted(xs, key=functools.cmp_to_key(by_norm))
""", "[T(3, seed=i) for i in range(3)]")

# ---- classes, namedtuples, dataclasses ---------------------------------------------------------
CL = "classes"

P(CL, "namedtuple_return", """
Pair = collections.namedtuple("Pair", ["lo", "hi"])


def f(x):
    return Pair(x.min(), x.max())
""", "T(5)")

P(CL, "namedtuple_arg_fields", """
Pair = collections.namedtuple("Pair", ["lo", "hi"])


def f(p):
    widened = p._replace(hi=p.hi + 1)
    return p.lo + p.hi, widened, p._asdict(), Pair._fields
""", "Pair(T(3), T(3, seed=1))")

P(CL, "typing_namedtuple_defaults", """
class Box(typing.NamedTuple):
    w: torch.Tensor
    scale: float = 1.0


def f(x):
    b = Box(x)
    c = Box(x, scale=3.0)
    return b.w * b.scale + c.w * c.scale, c
""", "T(3)")

P(CL, "namedtuple_unpack_loop", """
Span = collections.namedtuple("Span", "start stop")


def f(x, spans):
    return [x[s.start:s.stop].sum() for s in spans] + [x[a:b].mean() for a, b in spans]
""", "T(8), [Span(0, 3), Span(2, 6)]")

P(CL, "dataclass_config_arg", """
@dataclasses.dataclass
class Cfg:
    scale: float
    bias: float = 0.0
    relu: bool = True


def f(x, cfg):
    y = x * cfg.scale + cfg.bias
    if cfg.relu:
        y = torch.relu(y)
    return y
""", "T(4), Cfg(2.0, bias=-0.5)")

P(CL, "dataclass_construct_return", """
@dataclasses.dataclass
class Stats:
    mean: torch.Tensor
    std: torch.Tensor
    n: int


def f(x):
    return Stats(mean=x.mean(0), std=x.std(0), n=x.shape[0])
""", "T(4, 3)")

P(CL, "dataclass_replace_asdict", """
@dataclasses.dataclass(frozen=True)
class Opt:
    lr: float = 0.1
    momentum: float = 0.9


def f(x):
    o = Opt()
    o2 = dataclasses.replace(o, lr=0.01)
    d = dataclasses.asdict(o2)
    return x * d["lr"] + o.momentum, [fl.name for fl in dataclasses.fields(Opt)]
""", "T(3)")

P(CL, "dataclass_asdict_nested_fields", """
@dataclasses.dataclass
class Config:
    sizes: list = dataclasses.field(default_factory=lambda: [4, 8])
    names: tuple = ("in", "out")
    extra: dict = dataclasses.field(default_factory=lambda: {"p": 0.5})


def f(x):
    c = Config()
    d = dataclasses.asdict(c)
    d["sizes"].append(16)  # a copy: c.sizes keeps its two items
    return x * len(d["sizes"]) + len(c.sizes), d, hasattr(d["names"], "_fields")
""", "T(3)")

P(CL, "deepcopy_keeps_shared_objects_shared", """
import copy


def f(x):
    inner = [1, 2]
    outer = {"a": inner, "b": inner, "t": (3, 4.5)}
    c = copy.deepcopy(outer)
    c["a"].append(3)  # c["b"] is the same list, as in outer
    return c, outer, copy.deepcopy(2.5), copy.deepcopy((1, "x")), x + 1
""", "T(2)")

P(CL, "dataclass_default_factory", """
@dataclasses.dataclass
class Log:
    items: list = dataclasses.field(default_factory=list)


def f(x):
    log = Log()
    for i in range(3):
        log.items.append(x * i)
    return torch.stack(log.items), len(log.items)
""", "T(2)")

P(CL, "callable_object", """
class Scaler:
    def __init__(self, s):
        self.s = s

    def __call__(self, t):
        return t * self.s


def f(x, scaler):
    return scaler(x) + Scaler(0.5)(x)
""", "T(3), Scaler(3.0)")

P(CL, "property_access", """
class Circle:
    def __init__(self, r):
        self.r = r

    @property
    def area(self):
        return math.pi * self.r ** 2


def f(x):
    c = Circle(x)
    return c.area, Circle(2).area
""", "T(3)")

P(CL, "static_and_class_methods", """
class Norm:
    eps = 1e-5

    @staticmethod
    def center(t):
        return t - t.mean()

    @classmethod
    def normalize(cls, t):
        c = cls.center(t)
        return c / (c.std() + cls.eps)


def f(x):
    return Norm.normalize(x), Norm().center(x)
""", "T(6)")

P(CL, "inheritance_super", """
class Base:
    def forward(self, t):
        return t + 1


class Child(Base):
    def forward(self, t):
        return super().forward(t) * 2


def f(x):
    return Child().forward(x), Base().forward(x)
""", "T(3)")

P(CL, "object_attribute_mutation", """
class State:
    def __init__(self):
        self.step = 0
        self.total = None


def f(state, x):
    state.step += 1
    state.total = x if state.total is None else state.total + x
    return state.total * state.step
""", "State(), T(3)")

P(CL, "custom_container_dunder", """
class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __contains__(self, v):
        return v in [1, 2]


def f(x):
    bag = Bag([x, x * 2, x * 3])
    return len(bag), bag[1], bag[-1] - bag[0], 2 in bag
""", "T(3)")

P(CL, "operator_overloading", """
class Vec:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return Vec(self.data + other.data)

    def __mul__(self, k):
        return Vec(self.data * k)

    def __neg__(self):
        return Vec(-self.data)


def f(x, y):
    v = (Vec(x) + Vec(y)) * 2 + -Vec(x)
    return v.data
""", "T(3), T(3, seed=1)")

P(CL, "class_attribute_constants", """
class Config:
    SCALE = 3
    NAMES = ("a", "b")


def f(x):
    return x * Config.SCALE + len(Config.NAMES)
""", "T(4)")

P(CL, "slots_class", """
class Point:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y


def f(a, b):
    p = Point(a, b)
    p.x = p.x + 1
    return p.x * p.y
""", "T(3), T(3, seed=1)")

P(CL, "enum_dispatch", """
class Mode(enum.Enum):
    SUM = 1
    MEAN = 2


def f(x, mode):
    if mode is Mode.SUM:
        return x.sum(), mode.name
    return x.mean(), mode.name
""", "T(4), Mode.MEAN")

P(CL, "isinstance_hierarchy", """
class Shape:
    pass


class Square(Shape):
    def __init__(self, s):
        self.s = s


def f(obj, x):
    out = x
    if isinstance(obj, Shape):
        out = out + 1
    if isinstance(obj, Square):
        out = out * obj.s
    return out, issubclass(Square, Shape)
""", "Square(3), T(3)")

P(CL, "iter_method_generator", """
class Layers:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield i + 1


def f(x):
    for k in Layers(3):
        x = x * k
    return x
""", "T(3)")

P(CL, "buffer_like_attribute_update", """
class Running:
    def __init__(self):
        self.mean = torch.zeros(3)

    def update(self, x, momentum=0.9):
        self.mean.mul_(momentum).add_(x * (1 - momentum))
        return self.mean


def f(tracker, x):
    tracker.update(x)
    return tracker.update(x * 2).clone()
""", "Running(), T(3)")

P(CL, "bound_method_passed", """
class Model:
    def __init__(self, w):
        self.w = w

    def apply(self, t):
        return t @ self.w


def f(m, x):
    fn = m.apply
    return fn(x), list(map(fn, [x, x + 1]))
""", "Model(T(3, 2, seed=1)), T(2, 3)")

P(CL, "getattr_object_default", """
class Opts:
    def __init__(self):
        self.scale = 2


def f(x, opts):
    s = getattr(opts, "scale", 1)
    b = getattr(opts, "bias", 0.5)
    return x * s + b
""", "T(3), Opts()")

P(CL, "custom_eq_and_repr", """
class Tag:
    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, Tag) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"Tag({self.name})"


def f(x):
    a, b = Tag("w"), Tag("w")
    seen = {a: x}
    return a == b, repr(a), seen[b] * 2
""", "T(3)")

P(CL, "object_created_and_returned", """
class Result:
    def __init__(self, value, note):
        self.value = value
        self.note = note


def f(x):
    return Result(x.sum() * 2, f"n={x.numel()}")
""", "T(5)")

P(CL, "class_counter_attribute", """
class Counter:
    count = 0

    def __init__(self):
        Counter.count += 1


def f(x):
    Counter()
    Counter()
    return x * Counter.count


def inputs():
    Counter.count = 0
    return [T(3)]
""")

P(CL, "namedtuple_in_dict_values", """
Out = collections.namedtuple("Out", ["logits", "loss"])


def f(x):
    res = {}
    for name, t in (("a", x), ("b", x * 2)):
        res[name] = Out(t.softmax(-1), t.sum())
    return res
""", "T(2, 3)")

# ---- strings and formatting --------------------------------------------------------------------
S = "strings"

P(S, "fstring_print_shape", """
def f(x):
    print(f"shape={tuple(x.shape)} dtype={x.dtype} ndim={x.ndim}")
    return x + 1
""", "T(2, 3)")

P(S, "fstring_float_format", """
def f(x):
    total = x.sum().item()
    print(f"total: {total:.3f}, mean: {x.mean():.2f}")
    return total
""", "T(4)")

P(S, "str_methods_chain", """
def f(x, name):
    parts = name.upper().split("_")
    joined = "-".join(parts)
    if joined.startswith("CONV"):
        x = x * 2
    return joined, x, name.endswith("1"), name.find("_")
""", "T(3), 'conv_block_1'")

P(S, "str_format_method", """
def f(x):
    label = "{}x{}".format(*x.shape)
    named = "{rows} rows".format(rows=x.shape[0])
    return label, named, x.t()
""", "T(2, 4)")

P(S, "percent_format", """
def f(x):
    msg = "%d items, max %.2f, name %s" % (x.numel(), x.max().item(), "t")
    print(msg)
    return len(msg)
""", "T(5)")

P(S, "print_tensor", """
def f(x):
    print(x)
    print(x.shape, x.dtype)
    return x * 2
""", "T(2, 2)")

P(S, "string_built_in_loop", """
def f(x):
    s = ""
    for i in range(x.shape[0]):
        s += str(i)
    return s, x * len(s)
""", "T(3)")

P(S, "fstring_dict_keys", """
def f(x):
    d = {}
    for i in range(3):
        d[f"layer{i}"] = x * i
    return d, "layer2" in d
""", "T(2)")

P(S, "print_sep_end", """
def f(x):
    print("a", 1, tuple(x.shape), sep="|", end="!\\n")
    print("no newline", end="")
    print()
    return x
""", "T(3)")

P(S, "str_replace_strip_count", """
def f(x, text):
    t = text.strip().replace("relu", "gelu")
    return t, t.count("gelu"), x * len(t.split())
""", "T(2), '  relu relu tanh  '")

P(S, "join_map_str", """
def f(x):
    key = ",".join(map(str, x.shape))
    return key, "x".join(str(s) for s in x.shape)
""", "T(2, 3, 4)")

P(S, "print_numpy_array", """
def f(a):
    print(a)
    print(a.dtype, a.shape, a.sum())
    return a * 2
""", "A(2, 3)")

P(S, "fstring_repr_align", """
def f(x, name):
    line = f"{name!r:>10}|{x.numel():04d}|{3.14159:8.2f}|{'left':<6}|"
    print(line)
    return line
""", "T(7), 'conv'")

P(S, "str_to_float_parse", """
def f(x, spec):
    lo, hi = map(float, spec.split(":"))
    return x.clamp(lo, hi)
""", "T(6), '-0.5:1.25'")

P(S, "print_loop_items", """
def f(x):
    for i, v in enumerate(x):
        print(i, round(v.item(), 2))
    return x.sum()
""", "T(3)")

P(S, "print_dtype_device", """
def f(x):
    print(x.dtype, x.device, str(x.dtype).split(".")[-1])
    return x.to(torch.float64)
""", "T(2)")

P(S, "str_encode_bytes", """
def f(x, name):
    b = name.encode("utf-8")
    return x * len(b), b[:2], b.decode().title()
""", "T(2), 'weight'")

P(S, "format_map_zfill", """
def f(x):
    template = "{name}_{idx}"
    names = [template.format_map({"name": "w", "idx": str(i).zfill(3)}) for i in range(2)]
    return names, x
""", "T(2)")

P(S, "str_return_with_tensor", """
def f(x):
    return f"{x.shape[0]}x{x.shape[1]}", x.t().contiguous()
""", "T(2, 3)")

P(S, "repr_of_containers", """
def f(x):
    cfg = {"k": 3, "names": ["a", "b"], "t": (1, 2.5)}
    print(repr(cfg), str([1, None, True]))
    return x * cfg["k"]
""", "T(2)")

# ---- mutation of arguments, globals and attributes ---------------------------------------------
M = "mutation"

P(M, "inplace_add_arg", """
def f(x):
    x.add_(1)
    x.mul_(2)
    return x * 2
""", "T(3)")

P(M, "index_assign_arg", """
def f(x, y):
    x[0] = 0
    x[:, 1] += y
    return x.sum()
""", "T(3, 3), T(3, seed=1)")

P(M, "global_counter_dict", """
CALLS = {"n": 0}


def f(x):
    CALLS["n"] += 1
    return x * CALLS["n"]


def inputs():
    CALLS["n"] = 0
    return [T(3)]
""")

P(M, "global_statement_rebind", """
LAST = None


def f(x):
    global LAST
    prev = LAST
    LAST = x.sum()
    return x - LAST, prev is None


def inputs():
    global LAST
    LAST = None
    return [T(4)]
""")

P(M, "global_list_append", """
HISTORY = []


def f(x):
    HISTORY.append(x.mean())
    HISTORY.append(x.max())
    return len(HISTORY), torch.stack(HISTORY)


def inputs():
    HISTORY.clear()
    return [T(4)]
""")

P(M, "global_tensor_read", """
W = torch.linspace(-1.0, 1.0, 12).reshape(4, 3)


def f(x):
    return x @ W
""", "T(2, 4)")

P(M, "global_tensor_inplace", """
BUF = torch.zeros(3)


def f(x):
    BUF.mul_(0.5).add_(x)
    return BUF.clone(), BUF.sum()


def inputs():
    BUF.zero_()
    return [T(3)]
""")

P(M, "numpy_arg_inplace", """
def f(a):
    a += 1
    a[a > 1.5] = 0
    a *= 2
    return a.sum()
""", "A(5)")

P(M, "list_of_tensors_inplace", """
def f(xs):
    xs[0].mul_(2)
    xs[1][0] = 7
    return xs[0] + xs[1]
""", "[T(3), T(3, seed=1)]")

P(M, "out_parameter", """
def f(x, y, z):
    torch.add(x, y, out=z)
    torch.mul(z, 2, out=z)
    return z.sum()
""", "T(3), T(3, seed=1), torch.empty(3)")

P(M, "setattr_on_object", """
class Holder:
    pass


def f(h, x):
    setattr(h, "scale", 3)
    h.value = x * h.scale
    if hasattr(h, "tmp"):
        del h.tmp
    return h.value


def inputs():
    h = Holder()
    h.tmp = 1
    return [h, T(3)]
""")

P(M, "view_alias_write", """
def f(x):
    v = x.view(-1)
    v[0] = 100
    v[-1] = -100
    return x
""", "T(2, 3)")

P(M, "copy_zero_fill_clamp", """
def f(x, y, z):
    x.copy_(y)
    z.zero_()
    z[1:].fill_(2.5)
    y.clamp_(min=0)
    return x + z
""", "T(4), T(4, seed=1), T(4, seed=2)")

P(M, "numpy_out_ufunc", """
def f(a, b):
    np.multiply(a, 2, out=a)
    np.add(a, b, out=b)
    return a, b.mean()
""", "A(4), A(4, seed=1)")

P(M, "list_sort_in_place", """
def f(vals, x):
    vals.sort()
    vals.append(99)
    return x * vals[0]
""", "[3, 1, 2], T(2)")

P(M, "transpose_view_inplace", """
def f(x):
    x.t()[0].zero_()
    return x, x.sum()
""", "T(3, 3)")

P(M, "global_mode_flag", """
MODE = "eval"


def f(x):
    if MODE == "train":
        return x * 0
    return x + 1
""", "T(3)")

P(M, "attribute_list_mutation", """
class Recorder:
    def __init__(self):
        self.seen = []
        self.total = 0


def f(rec, x):
    rec.seen.append(x.shape[0])
    rec.total += int(x.sum() > 0)
    return x * len(rec.seen)
""", "Recorder(), T(4)")

P(M, "inplace_returns_self", """
def f(x):
    y = x.add_(1)
    return y is x, y.sub_(0.5) is x, x
""", "T(3)")

P(M, "masked_inplace_assign", """
def f(x):
    x[x < 0] = 0.0
    x.masked_fill_(x > 1, 1.0)
    return x.mean()
""", "T(6)")

P(M, "dict_of_tensors_update_inplace", """
def f(state, grad):
    for k in state:
        state[k].sub_(0.1 * grad)
    state["steps"] = state.get("steps", 0) + 1
    return sorted(state)
""", "{'w': T(3), 'b': T(3, seed=1)}, T(3, seed=2)")

P(M, "closure_cell_mutation", """
def make_acc():
    total = [0]

    def add(v):
        total[0] += v
        return total[0]
    return add


ACC = make_acc()


def f(x):
    ACC(1)
    return x * ACC(2)


def inputs():
    global ACC
    ACC = make_acc()
    return [T(3)]
""")

P(M, "int_tensor_inplace_ops", """
def f(x):
    x += 3
    x //= 2
    x %= 3
    return x
""", "T(6, dtype=torch.int64)")

# ---- torch API surface -------------------------------------------------------------------------
TO = "torch"

P(TO, "int_tensor_bitwise", """
def f(x, s):
    flags = (x & 1) | ((x > 0).to(torch.int32) << 1)
    return flags, flags ^ 3, x >> s, torch.bitwise_left_shift(x, s), ~x, x.to(torch.int8) * 100
""", "T(6, dtype=torch.int32), T(6, seed=1, dtype=torch.int32).abs()")

P(TO, "tensor_attributes", """
def f(x):
    return (x.shape, x.dtype, x.ndim, x.numel(), x.size(1), x.dim(), x.is_floating_point(),
            x.element_size(), x.is_contiguous(), x + 1)
""", "T(2, 3)")

P(TO, "dtype_promotion", """
def f(x, i):
    return x.to(torch.float64) + i, (i + 1.5).dtype, (i * 2).dtype, (x + i).dtype
""", "T(3), T(3, dtype=torch.int32)")

P(TO, "reshape_view_permute", """
def f(x):
    y = x.reshape(2, 3, 4).permute(2, 0, 1)
    return y.contiguous().view(4, -1), y.shape, x.view(6, 4).t()
""", "T(24)")

P(TO, "cat_split_chunk", """
def f(x):
    parts = torch.chunk(x, 2, dim=1)
    a, b, c = torch.split(x, [1, 1, 2], dim=1)
    return torch.cat(parts[::-1], dim=1), a + b, c.shape
""", "T(3, 4)")

P(TO, "where_masked_fill", """
def f(x):
    y = torch.where(x > 0, x, torch.zeros_like(x))
    z = x.masked_fill(x < -1, -1.0)
    return y, z, torch.where(x > 0, 1.0, -1.0)
""", "T(6)")

P(TO, "softmax_logsumexp", """
def f(x):
    return x.softmax(-1), torch.log_softmax(x, dim=0), torch.logsumexp(x, dim=1)
""", "T(2, 4)")

P(TO, "matmul_bmm_einsum", """
def f(a, b):
    return a @ b, torch.bmm(a, b), torch.einsum("bij,bjk->bik", a, b), torch.matmul(a[0], b[0])
""", "T(2, 3, 4), T(2, 4, 2, seed=1)")

P(TO, "reductions_dims", """
def f(x):
    return (x.sum(dim=(0, 1), keepdim=True), x.mean(-1), x.std(0), x.var(unbiased=False),
            x.prod(1), x.norm())
""", "T(2, 3, 4)")

P(TO, "max_dim_namedtuple", """
def f(x):
    res = x.max(dim=1)
    v, i = torch.min(x, 0)
    return res.values, res.indices, v, i, type(res).__name__
""", "T(3, 4)")

P(TO, "topk_sort", """
def f(x):
    top = torch.topk(x, 2)
    s, order = torch.sort(x, descending=True)
    return top.values, top.indices, s, order, torch.argsort(x)
""", "T(6)")

P(TO, "topk_logits_filter", """
def f(logits):
    # top-k sampling's filter: everything below the k-th largest logit is -inf
    kth = torch.topk(logits, 3, dim=-1).values[..., -1:]
    logits = logits.clone()
    logits[logits < kth] = float("-inf")
    return torch.softmax(logits, dim=-1), torch.median(logits[0])
""", "T(2, 8)")

P(TO, "cumsum_cumprod", """
def f(x):
    return x.cumsum(0), torch.cumprod(x, dim=1), torch.cummax(x, dim=1).values
""", "T(3, 3)")

P(TO, "gather_scatter", """
def f(x, idx):
    g = torch.gather(x, 1, idx)
    s = torch.zeros(3, 4).scatter_add(1, idx, torch.ones_like(idx, dtype=torch.float32))
    return g, s
""", "T(3, 4), torch.tensor([[0, 1], [3, 3], [2, 0]])")

P(TO, "tensor_index_put", """
def f(x, idx):
    x[idx] = 0.0
    x[x > 1] = 1.0
    x[idx % 2, 0] += 5
    return x.sum(), x
""", "T(4, 3), torch.tensor([2, 0, -1])")

P(TO, "index_select_advanced", """
def f(x, idx):
    return x.index_select(0, idx), x[idx], x[idx, 1], x[[0, 2], [1, 0]]
""", "T(4, 3), torch.tensor([2, 0, 2])")

P(TO, "topk_style_gather", """
def f(scores, values):
    idx = scores.argmax(dim=-1)
    chosen = values[torch.arange(values.shape[0]), idx]
    return chosen, torch.gather(values, 1, idx.unsqueeze(1)).squeeze(1), values.index_select(1, idx)
""", "T(3, 4), T(3, 4, seed=1)")

P(TO, "grad_mode_branch", """
def f(x):
    if torch.is_grad_enabled():
        return x * 2
    return x - 1
""", "T(3)")

P(TO, "boolean_mask_select", """
def f(x):
    pos = x[x > 0]
    return pos, pos.numel(), torch.masked_select(x, x < 0).sum()
""", "T(8)")

P(TO, "nonzero_argwhere", """
def f(x):
    return torch.nonzero(x > 0), torch.argwhere(x < 0).shape, (x > 0).sum()
""", "T(3, 3)")

P(TO, "clamp_clip_sign", """
def f(x):
    return x.clamp(-0.5, 0.5), torch.clip(x, min=0), x.sign(), x.clamp(max=0.1)
""", "T(6)")

P(TO, "factory_functions", """
def f(n):
    return (torch.arange(n), torch.arange(1, n, 2, dtype=torch.float32), torch.linspace(0, 1, n),
            torch.zeros(2, n), torch.ones(n, dtype=torch.int32), torch.full((2,), 7.0),
            torch.eye(n))
""", "3")

P(TO, "tensor_from_python_list", """
def f(x):
    vals = [float(v) * 2 for v in range(x.shape[0])]
    t = torch.tensor(vals)
    u = torch.tensor([[1, 2], [3, 4]])
    return x + t, u.dtype, torch.tensor(True).dtype, torch.tensor(2.5).dtype
""", "T(4)")

P(TO, "type_conversions", """
def f(x):
    return x.long(), x.float(), x.bool(), x.half(), x.double().dtype, x.int().float()
""", "T(5)")

P(TO, "item_and_tolist", """
def f(x):
    return x.sum().item(), x.tolist(), x.argmax().item(), x[0].tolist()
""", "T(2, 3)")

P(TO, "expand_repeat_tile", """
def f(x):
    return x.expand(3, 4), x.repeat(2, 2), torch.tile(x, (2,)), torch.broadcast_to(x, (2, 1, 4))
""", "T(1, 4)")

P(TO, "squeeze_unsqueeze_flatten", """
def f(x):
    y = x.unsqueeze(0).unsqueeze(-1)
    return y.shape, y.squeeze().shape, x.flatten(), x.unflatten(1, (2, 2)), torch.squeeze(y, 0)
""", "T(3, 4)")

P(TO, "tril_triu_diag", """
def f(x):
    return torch.tril(x), x.triu(1), torch.diag(x), torch.diagonal(x), x.trace()
""", "T(3, 3)")

P(TO, "functional_activations", """
def f(x):
    return (F.relu(x), F.gelu(x), F.silu(x), F.leaky_relu(x, 0.1), F.softplus(x),
            F.normalize(x, dim=-1), F.layer_norm(x, (4,)))
""", "T(2, 4)")

P(TO, "no_grad_block", """
def f(x):
    with torch.no_grad():
        y = x * 2
    z = y + 1
    return z, torch.is_grad_enabled()
""", "T(3)")

P(TO, "grad_mode_checks", """
def f(x):
    enabled = torch.is_grad_enabled()
    with torch.no_grad():
        inside = torch.is_grad_enabled()
        y = x.exp()
    with torch.enable_grad():
        again = torch.is_grad_enabled()
    return y, enabled, inside, again
""", "T(3)")

P(TO, "set_grad_enabled_blocks", """
def f(m, x):
    with torch.set_grad_enabled(False):
        y = m(x) * x
        off = torch.is_grad_enabled()
        with torch.enable_grad():
            on = torch.is_grad_enabled()
            z = x.sin()
    return y, z, off, on, y.requires_grad


def inputs():
    torch.manual_seed(5)
    return [nn.Linear(3, 3), T(2, 3)]
""")

P(TO, "detach_clone_contiguous", """
def f(x):
    y = x.t().contiguous()
    z = x.clone()
    z[0, 0] = 42
    return y, z, x.detach(), y.is_contiguous(), x.t().is_contiguous()
""", "T(2, 3)")

P(TO, "allclose_equal", """
def f(x, y):
    return torch.allclose(x, x + 1e-9), torch.equal(x, y), torch.equal(x, x.clone()), torch.isclose(x, y)
""", "T(3), T(3, seed=1)")

P(TO, "nan_handling", """
def f(x):
    return torch.isnan(x), torch.nan_to_num(x, nan=0.0, posinf=1e3), x.isinf().any(), torch.nansum(x)
""", "torch.tensor([1.0, float('nan'), float('inf'), -2.0])")

P(TO, "stack_unbind_roundtrip", """
def f(x):
    rows = x.unbind(1)
    return torch.stack(rows, dim=0), len(rows), torch.hstack(rows), torch.vstack(rows)
""", "T(2, 3)")

P(TO, "flip_roll", """
def f(x):
    return torch.flip(x, [0]), x.roll(1, dims=1), x.flip(-1), torch.fliplr(x)
""", "T(3, 4)")

P(TO, "outer_dot_norm", """
def f(a, b):
    return (torch.outer(a, b), torch.dot(a, b), torch.linalg.norm(a), a.norm(p=1),
            torch.cross(torch.stack([a, b]), torch.stack([b, a]), dim=1))
""", "T(3), T(3, seed=1)")

P(TO, "one_hot_argmax", """
def f(logits):
    idx = logits.argmax(-1)
    return F.one_hot(idx, num_classes=logits.shape[-1]), idx
""", "T(4, 5)")

P(TO, "int_division_semantics", """
def f(x):
    return x // 2, torch.div(x, 2, rounding_mode="floor"), torch.div(x, 2, rounding_mode="trunc"), x / 2, x % 3
""", "T(6, dtype=torch.int64)")

P(TO, "bitwise_shifts", """
def f(x):
    return x & 3, x | 8, x ^ 5, ~x, x << 1, x >> 1
""", "T(6, dtype=torch.int32)")

P(TO, "finfo_iinfo", """
def f(x):
    eps = torch.finfo(x.dtype).eps
    return x / (x.abs() + eps), torch.iinfo(torch.int32).max, torch.finfo(torch.float16).max
""", "T(3)")

P(TO, "empty_tensor_ops", """
def f(x):
    e = torch.zeros(0, 3)
    return e.sum(0), e.shape, torch.cat([e, x]), x[:0].mean(0).shape
""", "T(2, 3)")

P(TO, "zero_dim_tensors", """
def f(x):
    s = x.sum()
    return s, s.dim(), s * 2 + torch.tensor(1.0), s.reshape(1), float(s) > 0
""", "T(4)")

P(TO, "size_arithmetic", """
def f(x):
    tail = x.shape[1:]
    new = torch.Size([2]) + tail
    return tail, new, x.new_zeros(new), list(x.size()), x.size(-1) * 2
""", "T(3, 2, 2)")

P(TO, "new_tensor_methods", """
def f(x):
    return x.new_ones(2), x.new_full((2, 2), 3.0), x.new_zeros(3).dtype, x.new_tensor([1, 2])
""", "T(3, dtype=torch.float64)")

P(TO, "transposes_T_mT", """
def f(x):
    return x.mT, x[0].T, x.transpose(0, 2).shape, x.swapaxes(1, 2)
""", "T(2, 3, 4)")

P(TO, "manual_seed_randn", """
def f(x):
    torch.manual_seed(0)
    noise = torch.randn(3)
    return x + noise, torch.rand(2).shape
""", "T(3)")

P(TO, "float16_arithmetic", """
def f(x):
    h = x.half()
    return (h * 2 + 1).float(), (h @ h.t()).dtype, h.sum()
""", "T(2, 3)")

P(TO, "amax_argmax_keepdim", """
def f(x):
    return x.amax(1, keepdim=True), x.argmax(0, keepdim=True), torch.amin(x, dim=(0, 1)), x.aminmax()
""", "T(3, 4)")

P(TO, "complex_indexing_slices", """
def f(x):
    return x[..., 0], x[:, None, 1:], x[-1, ::2], x[None].shape, x[1:3, [0, 2]]
""", "T(4, 3)")

P(TO, "lerp_addcmul_baddbmm", """
def f(a, b, c):
    return torch.lerp(a, b, 0.25), torch.addcmul(a, b, c, value=0.5), torch.addmm(a[:2, :2], b[:2], c[:, :2])
""", "T(3, 3), T(3, 3, seed=1), T(3, 3, seed=2)")

P(TO, "math_unary_family", """
def f(x):
    return torch.sqrt(x.abs()), torch.rsqrt(x.abs() + 1), x.exp2(), torch.log1p(x.abs()), x.erf(), x.atan()
""", "T(5)")

P(TO, "type_as_to_other", """
def f(x, i):
    return i.type_as(x), x.to(i), x.to(dtype=torch.float64, copy=True).dtype, x.to("cpu")
""", "T(3), T(3, dtype=torch.int64)")

P(TO, "unique_and_bincount", """
def f(i):
    vals, counts = torch.unique(i, return_counts=True)
    return vals, counts, torch.bincount(i.abs()), i.unique().numel()
""", "T(8, dtype=torch.int64)")

P(TO, "is_tensor_and_numel_checks", """
def f(x, y):
    out = []
    for v in (x, y):
        out.append(v * 2 if torch.is_tensor(v) else v)
    return out, torch.numel(x)
""", "T(3), 5")

# ---- numpy API surface -------------------------------------------------------------------------
N = "numpy"

P(N, "np_ufuncs", """
def f(a):
    return np.exp(a) + np.sin(a), np.maximum(a, 0), np.hypot(a, 1.0), np.sign(a)
""", "A(5)")

P(N, "np_int8_quantize", """
def f(a):
    scale = np.abs(a).max() / 127
    q = np.round(a / scale).astype(np.int8)
    packed = (q.astype(np.int16) << 8) | (q.astype(np.int16) & 0xFF)
    return q, q.astype(np.float64) * scale, packed >> 8, ~q & 0x0F, q.sum(), q.max()
""", "A(3, 4)")

P(N, "np_complex_phasors_and_spectrum", """
def f(t, x):
    # a complex tone, its product with a signal, the power and phase of the result
    w = 2 * np.pi * 3.0
    tone = np.exp(1j * w * t)
    y = x * tone.conj()
    power = (y * y.conj()).real
    return y.mean(), power.sum(), np.abs(y).max(), np.angle(y[:3]), y.real - y.imag
""", "np.linspace(0, 1, 16), A(16)")

P(N, "np_complex_butterfly_stage", """
def f(x):
    n = x.shape[0]
    w = np.exp(-2j * np.pi * np.arange(n // 2) / n)
    even, odd = x[0::2], x[1::2]
    t = w * odd
    out = np.empty(n, dtype=np.complex128)
    out[: n // 2] = even + t
    out[n // 2 :] = even - t
    return out, abs(out).sum(), out == out.conj()
""", "A(8) + 1j * A(8)[::-1]")

P(N, "np_index_stores_and_add_at", """
def f(a, labels):
    counts = np.zeros(3)
    np.add.at(counts, labels, 1)
    sums = np.zeros((3, a.shape[1]))
    np.add.at(sums, labels, a)
    a[labels == 0] = 0.0
    a[[0, -1], 1:] = -1.0
    return counts, sums / np.maximum(counts, 1)[:, None], a
""", "A(5, 3), np.array([2, 0, 2, 1, 0])")

P(N, "np_linalg_normal_equations", """
def f(x, y):
    a = np.stack([np.ones_like(x), x, x * x], axis=1)
    l = np.linalg.cholesky(a.T @ a)
    coef = np.linalg.solve(l.T, np.linalg.solve(l, a.T @ y))
    return coef, a @ coef - y
""", "np.linspace(-1, 1, 12), np.cos(np.linspace(0, 3, 12))")

P(N, "np_histogram_summary", """
def f(a):
    counts, edges = np.histogram(a, bins=8)
    centers = (edges[:-1] + edges[1:]) / 2
    inside, _ = np.histogram(a, bins=4, range=(-1.0, 1.0))
    return counts, centers, (counts * centers).sum() / counts.sum(), inside
""", "A(6, 5)")

P(N, "np_scatter_one_hot", """
def f(labels):
    onehot = np.zeros((labels.shape[0], 4), dtype=np.int32)
    onehot[np.arange(labels.shape[0]), labels] = 1
    return onehot, onehot.sum(axis=0)
""", "np.array([3, 0, 1, 3])")

P(N, "np_polyval_trapezoid", """
def f(a):
    y = np.polyval([0.5, -1.0, 2.0], a)
    return y, np.trapezoid(y, a), np.rint(a * 3), np.reciprocal(a + 10)
""", "A(6)")

P(N, "np_reductions_axis", """
def f(a):
    return a.sum(axis=0), a.mean(axis=(0, 1), keepdims=True), np.max(a, axis=-1), a.std(), a.argmin(axis=1)
""", "A(2, 3, 4)")

P(N, "np_where_clip", """
def f(a):
    return np.where(a > 0, a, 0.0), np.clip(a, -1, 1), np.where(a > 1)[0]
""", "A(6)")

P(N, "np_concat_stack_split", """
def f(a, b):
    c = np.concatenate([a, b], axis=0)
    s = np.stack([a, b], axis=-1)
    parts = np.split(c, 2)
    return c, s.shape, parts[1], np.vstack([a, b]).shape, np.hstack([a, b])
""", "A(2, 3), A(2, 3, seed=1)")

P(N, "np_reshape_transpose", """
def f(a):
    b = a.reshape(3, 4).T
    return b, np.swapaxes(a.reshape(2, 3, 2), 0, 2).shape, a.ravel()[::3], np.transpose(b)
""", "A(12)")

P(N, "np_sort_argsort", """
def f(a):
    return np.sort(a), np.argsort(a, kind="stable"), np.sort(a)[::-1], np.partition(a, 2)[2]
""", "A(6)")

P(N, "np_cumsum_diff", """
def f(a):
    return np.cumsum(a), np.diff(a), np.cumprod(a[:3]), np.diff(a, n=2)
""", "A(6)")

P(N, "np_linalg_dot", """
def f(a, b):
    return a @ b, np.dot(a, b), np.linalg.norm(a), np.matmul(a, b).trace(), np.linalg.norm(a, axis=1)
""", "A(3, 3), A(3, 3, seed=1)")

P(N, "np_boolean_mask", """
def f(a):
    pos = a[a > 0]
    return pos, pos.size, a[(a > -1) & (a < 1)].sum(), np.count_nonzero(a > 0)
""", "A(8)")

P(N, "np_fancy_indexing", """
def f(a, idx):
    return a[idx], a[:, idx], a[idx, idx], np.take(a, [0, 3])
""", "A(3, 3), np.array([2, 0])")

P(N, "np_gather_rows_cols", """
def f(a, rows, cols):
    picked = a[rows, cols]
    best = np.argmax(a, axis=1)
    return picked, a[np.arange(a.shape[0]), best], np.take_along_axis(a, best[:, None], 1)
""", "A(4, 5), np.array([0, 3, -1]), np.array([4, 0, 2])")

P(N, "np_lookup_table", """
def f(codes, table):
    # Decode with a lookup table, then normalize each row.
    rows = table[codes]
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)
""", "np.array([[1, 0, 3], [2, 2, 1]]), A(4, 3) + 5.0")

P(N, "np_constructors", """
def f(n):
    return (np.arange(n), np.linspace(0, 1, n), np.zeros((2, n)), np.ones(n, dtype=np.int32),
            np.eye(n), np.full(2, 7.5), np.zeros_like(np.arange(n)), np.empty(0).shape)
""", "3")

P(N, "np_astype_conversions", """
def f(a):
    return a.astype(np.int32), a.astype(np.float32), (a > 0).astype(int), a.astype(bool)
""", "A(5)")

P(N, "np_scalar_results", """
def f(a):
    s = a.sum()
    m = a.max()
    return s, type(s).__name__, float(m), m * 2, int(np.argmax(a)), a.mean().item()
""", "A(5)")

P(N, "np_unique", """
def f(a):
    vals, counts = np.unique(a, return_counts=True)
    return vals, counts, np.unique(a).size
""", "A(10, dtype='int64')")

P(N, "np_any_all", """
def f(a):
    r = a
    if (a > -10).all():
        r = r + 1
    if np.any(a > 100):
        r = r * 0
    return r, bool(np.all(a > 0)), np.any(a > 0, axis=0)
""", "A(3, 2)")

P(N, "np_mean_dtype", """
def f(a):
    return np.mean(a, dtype=np.float64), a.sum(dtype=np.int64), np.average(a.astype(float), weights=[1, 2, 3, 4])
""", "A(4, dtype='int32')")

P(N, "np_outer_einsum", """
def f(a, b):
    return np.outer(a, b), np.einsum("i,j->ij", a, b), np.einsum("i,i->", a, b), np.inner(a, b)
""", "A(3), A(3, seed=1)")

P(N, "np_pad", """
def f(a):
    return np.pad(a, 1), np.pad(a, ((0, 1), (2, 0)), mode="edge")
""", "A(2, 2)")

P(N, "np_isclose_allclose", """
def f(a, b):
    return np.isclose(a, b), np.allclose(a, a + 1e-12), np.array_equal(a, b), np.array_equal(a, a.copy())
""", "A(3), A(3, seed=1)")

P(N, "np_tile_repeat", """
def f(a):
    return np.tile(a, 2), np.repeat(a, 2), np.repeat(a.reshape(1, -1), 2, axis=0), np.broadcast_to(a, (2, 3))
""", "A(3)")

P(N, "torch_numpy_interop", """
def f(a):
    t = torch.from_numpy(a)
    u = (t * 2).numpy()
    v = torch.as_tensor(a + 1)
    return u, v, t.dtype, torch.tensor(a).dtype
""", "A(3)")

P(N, "tensor_to_numpy_and_back", """
def f(x):
    a = x.numpy()
    b = np.maximum(a, 0)
    return torch.from_numpy(b) + 1, a.dtype
""", "T(4)")

P(N, "np_default_rng_inside", """
def f(a):
    rng = np.random.default_rng(0)
    return a + rng.standard_normal(a.shape), rng.integers(0, 10, size=3)
""", "A(3)")

P(N, "np_tolist_item", """
def f(a):
    return a.tolist(), a[0, 1].item(), a.shape, a.ndim, a.size, a.nbytes
""", "A(2, 3)")

P(N, "np_int_div_mod_negative", """
def f(a):
    return a // 3, a % 3, np.fmod(a, 3), np.divmod(a, 2)[1], -a // 2
""", "A(6, dtype='int64')")

P(N, "np_ufunc_methods", """
def f(a):
    return np.add.reduce(a, axis=0), np.multiply.outer(a[0], a[1]), np.maximum.accumulate(a[0])
""", "A(2, 3)")

P(N, "np_robust_standardize", """
def f(a):
    med = np.median(a, axis=0)
    mad = np.median(np.abs(a - med), axis=0)
    ranks = np.argsort(np.argsort(a[:, 0], kind="stable"), kind="stable")
    a.sort(axis=1)
    return (a - med) / (1.4826 * mad), ranks, np.sort(a, axis=None)[-3:]
""", "A(9, 4)")

P(N, "np_percentile_clip", """
def f(a):
    lo, hi = np.percentile(a, [5, 95], axis=0)
    iqr = np.quantile(a, 0.75) - np.quantile(a, 0.25)
    return np.clip(a, lo, hi), iqr, np.percentile(a.astype(np.float32), 50.0).dtype
""", "A(20, 3)")

P(N, "np_bincount_histogram", """
def f(a):
    counts = np.bincount(np.abs(a))
    hist, edges = np.histogram(a, bins=3)
    return counts, hist, edges
""", "A(10, dtype='int64')")

P(N, "np_scalar_type_promotion", """
def f(a):
    s = np.float32(2.0)
    return a * s, (s * 2.5).dtype, (a.astype(np.float32) + 1.5).dtype, np.int64(3) + 2, np.int32(3) * 2.0
""", "A(3)")

P(N, "np_nan_functions", """
def f(a):
    return np.nanmean(a), np.nan_to_num(a), np.isnan(a).sum(), np.nanmax(a), np.isfinite(a)
""", "np.array([1.0, np.nan, 3.0, -np.inf, 2.0])")

P(N, "np_triu_diag", """
def f(a):
    return np.triu(a), np.tril(a, -1), np.diag(a), np.diag(np.diag(a)), np.trace(a)
""", "A(3, 3)")

P(N, "np_argmax_unravel", """
def f(a):
    flat = np.argmax(a)
    return np.unravel_index(flat, a.shape), a.argmax(axis=0), np.argwhere(a > 1)
""", "A(3, 4)")

P(N, "np_float32_pipeline", """
def f(a):
    b = a.astype(np.float32)
    c = np.tanh(b) * np.float32(0.5) + 1
    return c, c.dtype, c.sum(axis=0).dtype
""", "A(3, 2)")

P(N, "np_copy_vs_view", """
def f(a):
    v = a[1:]
    c = a[1:].copy()
    v[0] = 100.0
    return a, c, np.shares_memory(a, v), np.shares_memory(a, c)
""", "A(4)")

# ---- nn.Modules in inference -------------------------------------------------------------------
NN = "nn_modules"

P(NN, "mlp_two_layers", """
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def f(model, x):
    with torch.no_grad():
        return model(x)


def inputs():
    torch.manual_seed(0)
    return [MLP().eval(), T(3, 4)]
""")

P(NN, "sequential_softmax", """
def f(model, x):
    with torch.no_grad():
        return model(x).argmax(-1), model(x)


def inputs():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 4), nn.Softmax(dim=-1))
    return [model.eval(), T(2, 3)]
""")

P(NN, "conv_bn_pool_eval", """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        return self.pool(torch.relu(self.bn(self.conv(x)))).flatten(1)


def f(net, x):
    with torch.no_grad():
        return net(x)


def inputs():
    torch.manual_seed(2)
    return [Net().eval(), T(1, 2, 5, 5)]
""")

P(NN, "layernorm_gelu_residual", """
class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.ff = nn.Linear(d, d)

    def forward(self, x):
        return x + F.gelu(self.ff(self.norm(x)))


def f(block, x):
    with torch.no_grad():
        return block(block(x))


def inputs():
    torch.manual_seed(3)
    return [Block(6).eval(), T(2, 6)]
""")

P(NN, "module_list_loop", """
class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = x + layer(x) * (i + 1)
        return x


def f(m, x):
    with torch.no_grad():
        return m(x), len(m.layers)


def inputs():
    torch.manual_seed(4)
    return [Stack().eval(), T(2, 4)]
""")

P(NN, "module_dict_select", """
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})

    def forward(self, x, which):
        return self.heads[which](x)


def f(m, x):
    with torch.no_grad():
        return {k: m(x, k) for k in ("cls", "reg")}


def inputs():
    torch.manual_seed(5)
    return [Heads().eval(), T(2, 4)]
""")

P(NN, "embedding_lookup", """
class Bag(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, ids):
        return self.out(self.emb(ids).mean(1))


def f(m, ids):
    with torch.no_grad():
        return m(ids)


def inputs():
    torch.manual_seed(6)
    return [Bag().eval(), torch.tensor([[1, 2, 3], [4, 4, 9]])]
""")

P(NN, "custom_parameter_scale", """
class Scale(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 2.0, n))
        self.bias = nn.Parameter(torch.zeros(n))

    def forward(self, x):
        return x * self.weight + self.bias


def f(m, x):
    with torch.no_grad():
        return m(x), m.weight.shape
""", "Scale(4), T(2, 4)")

P(NN, "buffer_running_update", """
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("running", torch.zeros(3))
        self.register_buffer("steps", torch.tensor(0))

    def forward(self, x):
        self.running.mul_(0.9).add_(0.1 * x.mean(0))
        self.steps += 1
        return x - self.running


def f(m, x):
    with torch.no_grad():
        return m(x)
""", "Tracker(), T(4, 3)")

P(NN, "dropout_eval_identity", """
def f(m, x):
    with torch.no_grad():
        return m(x), m.training


def inputs():
    torch.manual_seed(7)
    m = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5), nn.Tanh())
    return [m.eval(), T(2, 3)]
""")

P(NN, "module_flag_branch", """
class Proj(nn.Module):
    def __init__(self, use_act):
        super().__init__()
        self.use_act = use_act
        self.lin = nn.Linear(3, 3, bias=False)

    def forward(self, x):
        y = self.lin(x)
        if self.use_act:
            y = torch.sigmoid(y)
        return y


def f(a, b, x):
    with torch.no_grad():
        return a(x), b(x)


def inputs():
    torch.manual_seed(8)
    return [Proj(True).eval(), Proj(False).eval(), T(2, 3)]
""")

P(NN, "attention_manual", """
class Attn(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.d = d

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        mask = torch.triu(torch.ones(x.shape[1], x.shape[1], dtype=torch.bool), 1)
        scores = scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1) @ v


def f(m, x):
    with torch.no_grad():
        return m(x)


def inputs():
    torch.manual_seed(9)
    return [Attn(4).eval(), T(2, 3, 4)]
""")

P(NN, "module_returns_dict", """
class TwoOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        logits = self.lin(x)
        return {"logits": logits, "probs": logits.softmax(-1), "pred": logits.argmax(-1)}


def f(m, x):
    with torch.no_grad():
        out = m(x)
    return out["pred"], out


def inputs():
    torch.manual_seed(19)
    return [TwoOut(), T(4, 3)]
""")

P(NN, "named_parameters_loop", """
def f(m):
    with torch.no_grad():
        total = 0.0
        names = []
        for name, p in m.named_parameters():
            names.append(name)
            total = total + p.abs().sum()
        return names, total, sum(p.numel() for p in m.parameters())


def inputs():
    torch.manual_seed(10)
    return [nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))]
""")

P(NN, "inference_mode_block", """
def f(m, x):
    with torch.inference_mode():
        y = m(x)
    return y * 2


def inputs():
    torch.manual_seed(11)
    return [nn.Linear(3, 2).eval(), T(2, 3)]
""")

P(NN, "batchnorm_train_mode_stats", """
def f(bn, x):
    with torch.no_grad():
        y = bn(x)
    return y, bn.num_batches_tracked


def inputs():
    return [nn.BatchNorm1d(3).train(), T(4, 3)]
""")

P(NN, "gru_cell_steps", """
def f(cell, xs):
    with torch.no_grad():
        h = torch.zeros(1, 4)
        for x in xs:
            h = cell(x, h)
        return h


def inputs():
    torch.manual_seed(12)
    return [nn.GRUCell(3, 4).eval(), [T(1, 3, seed=i) for i in range(3)]]
""")

P(NN, "global_model_instance", """
torch.manual_seed(13)
MODEL = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.LayerNorm(4)).eval()


def f(x):
    with torch.no_grad():
        return MODEL(x)
""", "T(3, 4)")

P(NN, "submodule_getattr", """
class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer0 = nn.Linear(3, 3)
        self.layer1 = nn.Linear(3, 3)

    def forward(self, x):
        for i in range(2):
            x = torch.tanh(getattr(self, f"layer{i}")(x))
        return x


def f(m, x):
    with torch.no_grad():
        return m(x), m.forward(x * 2)


def inputs():
    torch.manual_seed(14)
    return [Enc().eval(), T(2, 3)]
""")

P(NN, "forward_pre_hook", """
def f(m, x):
    with torch.no_grad():
        return m(x)


def double_input(module, args):
    return (args[0] * 2,)


def inputs():
    torch.manual_seed(15)
    m = nn.Linear(3, 2)
    m.register_forward_pre_hook(double_input)
    return [m.eval(), T(2, 3)]
""")

P(NN, "functional_conv1d_weights", """
def f(x, w, b):
    with torch.no_grad():
        y = F.conv1d(x, w, b, padding=1)
        return F.max_pool1d(y, 2), F.avg_pool1d(y, 2)
""", "T(1, 2, 8), T(3, 2, 3, seed=1), T(3, seed=2)")

P(NN, "maxpool_upsample", """
def f(m, x):
    with torch.no_grad():
        return m(x)


def inputs():
    m = nn.Sequential(nn.MaxPool2d(2), nn.Upsample(scale_factor=2, mode="nearest"))
    return [m.eval(), T(1, 1, 4, 4)]
""")

P(NN, "multihead_attention", """
def f(mha, x):
    with torch.no_grad():
        out, weights = mha(x, x, x, need_weights=True)
    return out, weights


def inputs():
    torch.manual_seed(16)
    return [nn.MultiheadAttention(8, 2, batch_first=True).eval(), T(1, 3, 8)]
""")

P(NN, "module_state_dict_keys", """
def f(m, x):
    sd = m.state_dict()
    with torch.no_grad():
        return sorted(sd.keys()), m(x) + sd["0.bias"].sum()


def inputs():
    torch.manual_seed(17)
    return [nn.Sequential(nn.Linear(2, 2), nn.ReLU()).eval(), T(3, 2)]
""")

P(NN, "module_without_no_grad", """
def f(m, x):
    return m(x).detach()


def inputs():
    torch.manual_seed(18)
    return [nn.Linear(3, 3).eval(), T(2, 3)]
""")

P(NN, "module_called_in_loop_with_list", """
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2) * 0.5)

    def forward(self, xs):
        return [x * self.w for x in xs]


def f(m, xs):
    with torch.no_grad():
        outs = m(xs)
        return torch.stack(outs).sum(0)
""", "Tiny(), [T(2, seed=i) for i in range(3)]")

# ---- control flow on tensor values -------------------------------------------------------------
CF = "control_flow"

P(CF, "if_sum_positive", """
def f(x):
    if x.sum() > 0:
        return x * 2
    return x - 1
""", "T(5)")

P(CF, "while_norm_halving", """
def f(x):
    steps = 0
    while x.norm() > 1 and steps < 20:
        x = x / 2
        steps += 1
    return x, steps
""", "T(6) * 3")

P(CF, "for_over_rows", """
def f(x):
    acc = torch.zeros(())
    for row in x:
        acc = acc + row.max()
    return acc
""", "T(4, 3)")

P(CF, "early_return_in_loop", """
def f(x):
    for i in range(x.shape[0]):
        if x[i] > 1.0:
            return i, x[i]
    return -1, x.sum()
""", "T(8)")

P(CF, "item_threshold", """
def f(x, threshold):
    if x.max().item() > threshold:
        x = x.clamp(max=threshold)
    return x
""", "T(6), 0.5")

P(CF, "shape_branch", """
def f(x):
    if x.shape[0] > 2:
        x = x[:2]
    if x.dim() == 2:
        x = x.sum(1)
    return x
""", "T(4, 3)")

P(CF, "ternary_on_tensor", """
def f(x):
    y = x if x.mean() > 0 else -x
    z = "pos" if bool(y.sum() > 0) else "neg"
    return y, z
""", "T(5, seed=3)")

P(CF, "break_continue", """
def f(x):
    out = []
    for v in x:
        if v < -1:
            continue
        if v > 2:
            break
        out.append(v * 2)
    return torch.stack(out) if out else x.new_zeros(0)
""", "T(10, seed=4)")

P(CF, "nested_any_all", """
def f(x):
    if (x > 0).any():
        if (x > 0).all():
            return "all", x
        return "some", x.relu()
    return "none", x.abs()
""", "T(4)")

P(CF, "numpy_branch", """
def f(a):
    if (a > -5).all():
        a = a + 1
    if a.sum() > 100:
        a = a * 0
    return a
""", "A(4)")

P(CF, "conditional_collect_stack", """
def f(x):
    keep = []
    for row in x:
        if row.mean() > 0:
            keep.append(row)
    if not keep:
        return x[:0]
    return torch.stack(keep)
""", "T(6, 3)")

P(CF, "nan_guard", """
def f(x):
    if torch.isnan(x).any():
        x = torch.nan_to_num(x, nan=0.0)
    return x.sum()
""", "torch.tensor([1.0, float('nan'), 2.0])")

P(CF, "single_element_bool", """
def f(x, flag):
    if flag:
        return x + 1
    return x - 1
""", "T(3), torch.tensor([True])")

P(CF, "argmax_as_index", """
def f(x):
    k = int(x.argmax())
    return x[k], x[:k + 1].sum(), k
""", "T(6)")

P(CF, "range_from_tensor", """
def f(x, n):
    for _ in range(int(n)):
        x = x * 0.5 + 1
    return x
""", "T(3), torch.tensor(3)")

P(CF, "chained_comparison", """
def f(x):
    s = x.sum()
    if -10 < s < 10:
        return s * 2
    return s
""", "T(4)")

P(CF, "dtype_branch", """
def f(x):
    if x.dtype == torch.float32:
        x = x.double()
    if x.is_floating_point():
        x = x.round()
    return x, x.dtype
""", "T(3)")

P(CF, "assert_passes", """
def f(x):
    assert x.dim() == 2, "need a matrix"
    assert (x.abs() < 100).all()
    return x.t()
""", "T(2, 3)")

P(CF, "match_on_string", """
def f(x, act):
    match act:
        case "relu":
            return torch.relu(x)
        case "tanh" | "sigmoid":
            return getattr(torch, act)(x)
        case _:
            return x
""", "T(4), 'tanh'")

P(CF, "match_on_shape", """
def f(x):
    match tuple(x.shape):
        case (n,):
            return x * n
        case (n, m) if n == m:
            return x.trace()
        case (n, m):
            return x.sum(0)
""", "T(3, 3)")

P(CF, "while_with_counter_tensor", """
def f(x):
    i = torch.tensor(0)
    while i < 3:
        x = x + i
        i += 1
    return x, i
""", "T(3)")

P(CF, "loop_accumulates_python_float", """
def f(x):
    total = 0.0
    for v in x.tolist():
        if v > 0:
            total += v
    return total, x * total
""", "T(6)")

P(CF, "loop_over_dict_with_tensor_cond", """
def f(d):
    out = {}
    for k, v in d.items():
        if v.max() > 1:
            out[k] = v / v.max()
        else:
            out[k] = v
    return out
""", "{'a': T(3), 'b': T(3, seed=5) * 0.1}")

P(CF, "numpy_while_loop", """
def f(a):
    n = 0
    while np.abs(a).max() > 1.0 and n < 10:
        a = a * 0.5
        n += 1
    return a, n
""", "A(5)")

P(CF, "in_place_in_branch", """
def f(x):
    if x[0] > 0:
        x.mul_(-1)
    else:
        x.add_(10)
    return x.sum()
""", "T(4, seed=2)")

# ---- exceptions --------------------------------------------------------------------------------
E = "exceptions"

P(E, "raise_value_error_on_shape", """
def f(x):
    if x.dim() != 3:
        raise ValueError(f"expected 3-D input, got {x.dim()}-D")
    return x
""", "T(2, 3)", raises="ValueError")

P(E, "try_except_keyerror", """
def f(x, d):
    try:
        v = d["missing"]
    except KeyError:
        v = x * 2
    return v
""", "T(3), {'present': 1}")

P(E, "try_finally_runs", """
def f(x):
    log = []
    try:
        y = x + 1
        log.append("body")
    finally:
        log.append("finally")
    return y, log
""", "T(3)")

P(E, "shape_mismatch_runtime_error", """
def f(x, y):
    return x + y
""", "T(3), T(4, seed=1)", raises="RuntimeError")

P(E, "index_error_list", """
def f(xs):
    return xs[5] * 2
""", "[T(2), T(2, seed=1)]", raises="IndexError")

P(E, "custom_exception_caught", """
class StopEarly(Exception):
    pass


def f(x):
    try:
        for i in range(5):
            x = x * 2
            if i == 2:
                raise StopEarly(x)
    except StopEarly as e:
        return e.args[0] + 1
    return x
""", "T(3)")

P(E, "custom_exception_propagates", """
class ConfigError(Exception):
    pass


def check(cfg):
    if "lr" not in cfg:
        raise ConfigError("missing lr")


def f(x, cfg):
    y = x * 2
    check(cfg)
    return y
""", "T(3), {'momentum': 0.9}", raises="ConfigError")

P(E, "assert_fails", """
def f(x):
    y = x.relu()
    assert y.shape[0] == 4, "bad batch"
    return y
""", "T(3)", raises="AssertionError")

P(E, "try_except_else", """
def f(x, n):
    try:
        r = 10 // n
    except ZeroDivisionError:
        r = -1
    else:
        r = r + 1
    return x * r
""", "T(2), 0")

P(E, "raise_from_chain", """
def f(x, d):
    try:
        return x * d["scale"]
    except KeyError as e:
        raise RuntimeError("scale missing") from e
""", "T(2), {}", raises="RuntimeError")

P(E, "exception_in_helper_caught", """
def parse(s):
    return int(s)


def f(x, texts):
    vals = []
    for s in texts:
        try:
            vals.append(parse(s))
        except ValueError:
            vals.append(0)
    return x * sum(vals), vals
""", "T(3), ['3', 'oops', '4']")

P(E, "numpy_linalg_error", """
def f(a):
    b = a @ a.T
    return np.linalg.inv(np.zeros((2, 2))) + b
""", "A(2, 2)", raises="LinAlgError")

P(E, "type_error_tensor_plus_str", """
def f(x):
    y = x * 2
    return y + "a"
""", "T(3)", raises="TypeError")

P(E, "dtype_mismatch_matmul", """
def f(x, i):
    return torch.matmul(x, i)
""", "T(2, 2), T(2, 2, dtype=torch.int64)", raises="RuntimeError")

P(E, "stopiteration_caught", """
def f(x):
    it = iter([x])
    first = next(it)
    try:
        second = next(it)
    except StopIteration:
        second = first * 0
    return first + second
""", "T(3)")

P(E, "contextlib_suppress", """
def f(x, d):
    with contextlib.suppress(KeyError):
        x = x * d["scale"]
    with contextlib.suppress(KeyError):
        x = x + d["missing"]
    return x
""", "T(3), {'scale': 3}")

P(E, "context_manager_swallows", """
class Swallow:
    def __init__(self):
        self.caught = None

    def __enter__(self):
        return self

    def __exit__(self, typ, val, tb):
        self.caught = typ.__name__ if typ else None
        return True


def f(x):
    cm = Swallow()
    with cm:
        y = x * 2
        raise ValueError("boom")
    return y, cm.caught
""", "T(3)")

P(E, "data_dependent_raise", """
def f(x):
    if (x < -100).any():
        raise ValueError("out of range")
    if x.sum() > -100:
        raise OverflowError("too big")
    return x
""", "T(4)", raises="OverflowError")

P(E, "key_error_propagates_after_mutation", """
def f(x, d):
    x.add_(1)
    d["seen"] = True
    return x * d["scale"]
""", "T(3), {}", raises="KeyError")

P(E, "contextmanager_decorator", """
@contextlib.contextmanager
def scaled(log):
    log.append("enter")
    try:
        yield 3
    finally:
        log.append("exit")


def f(x):
    log = []
    with scaled(log) as k:
        y = x * k
    return y, log
""", "T(3)")

P(E, "contextmanager_body_raises", """
@contextlib.contextmanager
def tracked(log):
    log.append("in")
    try:
        yield len(log)
    finally:
        log.append("out")


def f(x, d):
    log = []
    try:
        with tracked(log) as n:
            y = x * n * d["missing"]
    except KeyError:
        y = x - 1
    return y, log
""", "T(3), {'scale': 2}")

P(E, "contextmanager_catches", """
@contextlib.contextmanager
def ignoring(log):
    try:
        yield
    except KeyError as e:
        log.append(e.args[0])


def f(x, d):
    log = []
    with ignoring(log):
        x = x * 2
        x = x * d["nope"]
    return x, log
""", "T(3), {'scale': 2}")

P(E, "suppress_other_exception_propagates", """
def f(x, d):
    try:
        with contextlib.suppress(IndexError, ValueError):
            x = x * d["missing"]
    except KeyError:
        x = x + 1
    with contextlib.suppress(KeyError):
        x = x * d["scale"]
    return x
""", "T(3), {'scale': 2}")

P(CL, "abstract_base_classes", """
import abc


class Base(abc.ABC):
    @abc.abstractmethod
    def scale(self):
        ...

    def apply(self, x):
        return x * self.scale()


class Impl(Base):
    def scale(self):
        return 2.0


def f(x):
    made = Impl()
    try:
        Base()
        refused = False
    except TypeError:
        refused = True
    return made.apply(x), refused, isinstance(made, Base), issubclass(Impl, abc.ABC)
""", "T(3)")

P(E, "exception_message_used", """
def f(x):
    try:
        x.view(5, 7)
    except RuntimeError as e:
        return "shape" in str(e), x.sum()
    return False, x
""", "T(6)")

P(E, "zero_division_float_raises", """
def f(x, d):
    return x * (1.0 / d)
""", "T(2), 0.0", raises="ZeroDivisionError")

P(E, "attribute_error_raised", """
def f(x):
    y = x + 1
    return y.not_a_method()
""", "T(2)", raises="AttributeError")


# ---- keyword arguments of builtins, tensor metadata, dtype errors ------------------------------

P(B, "sum_start_keyword", """
def f(xs):
    return sum(xs, start=torch.ones(2)), sum(range(4), start=10)
""", "[T(2, seed=i) for i in range(3)]")

P(B, "zip_star_transpose", """
def f(rows):
    cols = list(zip(*rows))
    return [torch.stack(c) for c in cols], len(cols)
""", "[(T(2, seed=i), T(2, seed=i + 3)) for i in range(3)]")

P(B, "min_two_args_key", """
def f(x, y):
    smaller = min(x, y, key=lambda t: t.abs().sum())
    return smaller, max(3, 7, 5), min((2, "b"), (2, "a"))
""", "T(3), T(3, seed=1)")

P(C, "list_sort_key_reverse", """
def f(xs):
    order = list(range(len(xs)))
    order.sort(key=lambda i: xs[i].sum().item(), reverse=True)
    return order, [xs[i] for i in order]
""", "[T(3, seed=i) for i in range(4)]")

P(C, "dict_sorted_reversed", """
def f(x):
    d = {"b": 2, "a": 1, "c": 3}
    ordered = dict(sorted(d.items()))
    return list(ordered), list(reversed(ordered)), x * ordered["c"]
""", "T(2)")

P(S, "split_maxsplit_partition", """
def f(x, key):
    mod, _, attr = key.partition(".")
    head, tail = key.split(".", maxsplit=1)
    return mod, attr, head == mod, tail, x * len(attr)
""", "T(2), 'layer1.weight.t'")

P(TO, "strides_and_contiguity", """
def f(x):
    y = x.permute(1, 0)
    return x.stride(), y.stride(), y.is_contiguous(), y.contiguous().stride(), x[:, 1:].storage_offset()
""", "T(3, 4)")

P(TO, "contiguous_after_transpose", """
def f(x):
    y = x.transpose(0, 1).contiguous()
    if not y.is_contiguous():
        y = y * 0
    return y
""", "T(2, 3)")

P(TO, "sum_with_dtype_keyword", """
def f(x, i):
    return x.sum(dtype=torch.float64), i.sum(dtype=torch.int32).dtype, torch.cumsum(i, 0, dtype=torch.float32)
""", "T(4), T(4, dtype=torch.int64)")

P(TO, "cat_mixed_dtypes", """
def f(x, i):
    return torch.cat([x, i]), torch.cat((i, i), dim=-1).dtype, torch.stack([x, x], dim=1)
""", "T(3), T(3, dtype=torch.int64)")

P(TO, "add_alpha_keyword", """
def f(x, y):
    return x.add(y, alpha=2), torch.sub(x, y, alpha=0.5), x.addcdiv(y, y.abs() + 1, value=2)
""", "T(3), T(3, seed=1)")

P(E, "view_on_noncontiguous_raises", """
def f(x):
    return x.t().view(-1)
""", "T(2, 3)", raises="RuntimeError")

P(E, "int_inplace_float_raises", """
def f(i):
    i.add_(0.5)
    return i
""", "T(3, dtype=torch.int64)", raises="RuntimeError")

P(E, "int_of_multi_element_raises", """
def f(x):
    return int(x)
""", "T(3)", raises="ValueError")

P(E, "expanded_inplace_raises", """
def f(x):
    y = x.expand(3, 3)
    y.add_(1)
    return y
""", "T(1, 3)", raises="RuntimeError")

P(E, "cat_shape_mismatch_raises", """
def f(x, y):
    return torch.cat([x, y], dim=0)
""", "T(2, 3), T(2, 4, seed=1)", raises="RuntimeError")

P(E, "matmul_shape_mismatch_raises", """
def f(x, y):
    return x @ y
""", "T(2, 3), T(2, 3, seed=1)", raises="RuntimeError")

P(E, "numpy_broadcast_error", """
def f(a, b):
    return a + b
""", "A(3), A(4, seed=1)", raises="ValueError")

P(E, "bool_of_multi_element_raises", """
def f(x):
    if x > 0:
        return x
    return -x
""", "T(3)", raises="RuntimeError")

P(E, "dict_key_error_tensor_values", """
def f(d):
    return d["w"] * 2 + d["missing"]
""", "{'w': T(2)}", raises="KeyError")

P(N, "np_int_float_mix_dtype", """
def f(a, i):
    return a + i, (i / 2).dtype, (i // 2).dtype, np.true_divide(i, i + 10)
""", "A(3), A(3, dtype='int32')")

P(N, "np_keepdims_where_keyword", """
def f(a):
    return a.sum(axis=1, keepdims=True), np.mean(a, axis=0, where=a > 0), np.max(a, initial=10.0)
""", "A(2, 3)")


P(M, "contiguous_copy_then_mutate", """
def f(x):
    y = x.t().contiguous()
    y[0] += 1
    y.mul_(2)
    return y.sum(), x
""", "T(2, 3)")

P(M, "contiguous_of_noncontiguous_arg", """
def f(x):
    y = x.contiguous()
    y.zero_()
    return y, x, y.is_contiguous()
""", "T(3, 2).t()")


# ---- views, copies and aliasing ----------------------------------------------------------------
AL = "aliasing"

P(AL, "reshape_noncontiguous_then_mutate", """
def f(x):
    y = x.t().reshape(-1)
    y[0] = 100.0
    return y, x
""", "T(2, 3)")

P(AL, "reshape_contiguous_is_view", """
def f(x):
    y = x.reshape(-1)
    y[1] = -7.0
    return x
""", "T(2, 3)")

P(AL, "flatten_transposed_copy", """
def f(x):
    y = torch.flatten(x.t())
    y.zero_()
    return x.sum(), y
""", "T(2, 3)")

P(AL, "strided_slice_contiguous_mutate", """
def f(x):
    y = x[::2].contiguous()
    y += 1
    return x, y
""", "T(6)")

P(AL, "expand_contiguous_mutate", """
def f(x):
    y = x.expand(2, 3).contiguous()
    y[0, 0] = 5.0
    return x, y
""", "T(1, 3)")

P(AL, "clone_of_transpose_mutate", """
def f(x):
    y = x.T.clone()
    y[0] = 0
    return x, y, y.stride()
""", "T(2, 3)")

P(AL, "transposed_result_contiguous_copies", """
def f(x):
    y = x.t() * 2
    z = y.contiguous()
    z += 1
    return y, z, y.is_contiguous(), y.stride()
""", "T(3, 4)")

P(AL, "numpy_transposed_result_ravel_copies", """
def f(a):
    y = np.sqrt(np.abs(a.T)) + 1.0
    r = y.ravel()
    r += 1
    return y, y.strides
""", "A(3, 4)")

P(AL, "permuted_result_view_raises", """
def f(x):
    y = x.permute(2, 0, 1) * 2
    return y.view(-1)
""", "T(2, 3, 4)", raises="RuntimeError")

P(AL, "transposed_store_keeps_layout", """
def f(x, z):
    y = x.t() + 0
    y[...] = z
    w = y.contiguous()
    w -= 1
    return y, w
""", "T(3, 4), T(4, 3, seed=1)")

P(AL, "slice_view_mutates_base", """
def f(x):
    row = x[1]
    row.mul_(10)
    col = x[:, 0]
    col.fill_(-1)
    return x
""", "T(3, 3)")

P(AL, "numpy_copy_of_transpose", """
def f(a):
    b = np.ascontiguousarray(a.T)
    b[0, 0] = 99.0
    c = a.T.copy()
    c[0] = 0.0
    return a, b, c, b.flags["C_CONTIGUOUS"]
""", "A(2, 3)")

P(AL, "numpy_ravel_vs_flatten", """
def f(a):
    r = a.ravel()
    r[0] = 50.0
    fl = a.flatten()
    fl[1] = -50.0
    return a, fl
""", "A(2, 2)")

P(AL, "numpy_reshape_view_mutation", """
def f(a):
    b = a.reshape(3, 2)
    b[0] += 1
    return a
""", "A(6)")

P(AL, "tensor_numpy_shared_memory", """
def f(x):
    a = x.numpy()
    a[0] = 42.0
    return x
""", "T(3)")

P(AL, "permute_contiguous_strides", """
def f(x):
    y = x.permute(2, 0, 1).contiguous()
    return y.stride(), y.is_contiguous(), y
""", "T(2, 3, 4)")

# ---- dtype errors ------------------------------------------------------------------------------

P(E, "dot_mixed_dtype_raises", """
def f(x, i):
    return torch.dot(x, i)
""", "T(3), T(3, dtype=torch.int64)", raises="RuntimeError")

P(E, "linear_int_input_raises", """
def f(i, w):
    return F.linear(i, w)
""", "T(2, 3, dtype=torch.int64), T(4, 3)", raises="RuntimeError")

P(E, "bmm_mixed_dtype_raises", """
def f(a, b):
    return torch.bmm(a, b)
""", "T(2, 2, 2), T(2, 2, 2, dtype=torch.float64)", raises="RuntimeError")

P(E, "index_select_float_index_raises", """
def f(x, idx):
    return x.index_select(0, idx)
""", "T(3, 2), torch.tensor([0.0, 1.0])", raises="RuntimeError")

P(E, "masked_fill_int_mask_raises", """
def f(x):
    return x.masked_fill(x.long(), 0.0)
""", "T(3)", raises="RuntimeError")

P(E, "half_float_matmul_raises", """
def f(x):
    return x.half() @ x.t()
""", "T(2, 3)", raises="RuntimeError")


# ---- semantics of the value model (functions, generators, containers, objects) -------------

P(FN, "generator_lazy_side_effects", """
def f(x):
    seen = []

    def gen():
        for i in range(4):
            seen.append(i)
            yield x * i
    g = gen()
    first = next(g)
    second = next(g)
    return first + second, len(seen), seen
""", "T(3)")

P(FN, "generator_partially_consumed_then_list", """
def f(x):
    g = (x + i for i in range(5))
    head = [next(g), next(g)]
    return head, list(g)
""", "T(2)")

P(FN, "generator_return_stops_iteration", """
def upto(t, n):
    i = 0
    while True:
        if i >= n:
            return
        yield t * i
        i += 1


def f(x):
    return sum(upto(x, 3)), list(upto(x, 0))
""", "T(3)")

P(FN, "closure_cell_shared_by_two_functions", """
def f(x):
    total = x * 0

    def add(t):
        nonlocal total
        total = total + t

    def get():
        return total
    add(x)
    add(x * 2)
    return get()
""", "T(3)")

P(FN, "closure_rebound_after_creation", """
def f(x):
    k = 1

    def scale(t):
        return t * k
    a = scale(x)
    k = 5
    return a, scale(x)
""", "T(3)")

P(FN, "kwargs_binding_positional_only", """
def g(a, /, b, *, c=2, **rest):
    return a * b + c, sorted(rest)


def f(x):
    return g(x, 2, c=3, a=1), g(x, b=x)
""", "T(2)")

P(FN, "args_from_generator_call", """
def f(x):
    parts = (x * i for i in range(3))
    return torch.stack([*parts]), max(*[1, 5, 3])
""", "T(2)")

P(FN, "inlined_call_breaks_after_store", """
import dynamir


def g(a):
    a += 1
    print("in g", a.shape)
    dynamir.graph_break()
    return a


def f(x):
    x += 10
    y = g(x)
    return x, y
""", "A(3)")

P(FN, "inlined_call_breaks_after_list_append", """
import dynamir


def g(items, t):
    items.append(t)
    print("appended", len(items))
    dynamir.graph_break()
    return len(items)


def f(x):
    items = [x]
    n = g(items, x * 2)
    return n, items
""", "T(2)")

P(C, "list_iterator_sees_appends", """
def f(x):
    items = [x, x * 2]
    out = []
    for t in items:
        if len(items) < 4:
            items.append(t + 1)
        out.append(t)
    return out
""", "T(2)")

P(C, "dict_views_are_live", """
def f(x):
    d = {"a": x}
    keys = d.keys()
    values = d.values()
    d["b"] = x * 2
    del d["a"]
    return list(keys), list(values), len(keys)
""", "T(2)")

P(C, "same_list_returned_twice", """
def f(x):
    out = [x]
    return out, out, {"k": out}
""", "T(2)")

P(C, "list_methods_mixed", """
def f(x):
    xs = [3, 1, 2]
    xs.insert(0, 9)
    xs.extend(range(2))
    xs.remove(1)
    last = xs.pop()
    xs.sort(reverse=True)
    return xs, last, xs.index(2), xs.count(9), x * len(xs)
""", "T(2)")

P(C, "dict_methods_mixed", """
def f(x):
    d = dict(a=1, b=2)
    d.update({"c": 3}, d=4)
    d.setdefault("a", 100)
    v = d.pop("b")
    d2 = dict.fromkeys(["p", "q"], 0)
    return sorted(d.items()), v, d2, x * d.get("z", 7)
""", "T(2)")

P(C, "unpack_star_middle", """
def f(x):
    a, *mid, b = [x, x * 2, x * 3, x * 4]
    (c, d), *_ = [(1, 2), (3, 4)]
    return a + b, len(mid), mid[0], c + d
""", "T(2)")

P(C, "in_and_is_on_containers", """
def f(x, y):
    items = [x, 3, "a"]
    consts = [3, "a", (1, 2)]
    return (x in items, 3 in consts, "b" in consts, (1, 2) in consts, None is None,
            x is items[0], x is y)
""", "T(2), T(2, seed=1)")

P(B, "sorted_stable_with_key_and_reverse", """
def f(x):
    pairs = [("b", 2), ("a", 2), ("c", 1), ("d", 3)]
    by_num = sorted(pairs, key=lambda p: p[1])
    by_num_rev = sorted(pairs, key=lambda p: p[1], reverse=True)
    return by_num, by_num_rev, x * by_num[0][1]
""", "T(2)")

P(B, "min_max_key_default_ties", """
def f(xs):
    shapes = [t.shape[0] for t in xs]
    big = max(xs, key=lambda t: t.shape[0])
    small = min(xs, key=lambda t: t.shape[0])
    return big, small, max([], default=-1), max(shapes), min(3, 1, 2)
""", "[T(2), T(3, seed=1), T(3, seed=2), T(1, seed=3)]")

P(B, "sum_floats_then_tensor", """
def f(x):
    return sum([0.1, 0.2, 0.3, x]), sum([0.1] * 10), sum([x, x], x)
""", "T(2, dtype=torch.float64)")

P(CL, "instance_identity_and_mutation", """
class Acc:
    def __init__(self):
        self.items = []

    def add(self, t):
        self.items.append(t)
        return self


def f(x):
    a = Acc()
    b = a.add(x).add(x * 2)
    return a is b, len(a.items), torch.stack(b.items), [a, a]
""", "T(2)")

P(CL, "inheritance_properties_classmethods", """
class Base:
    scale = 2

    def __init__(self, t):
        self.t = t

    @property
    def doubled(self):
        return self.t * self.scale

    @classmethod
    def make(cls, t):
        return cls(t + 1)


class Child(Base):
    scale = 3

    def __init__(self, t):
        super().__init__(t)
        self.extra = True


def f(x):
    c = Child.make(x)
    return c.doubled, isinstance(c, Base), type(c).__name__, c.extra
""", "T(2)")

P(CL, "dunder_operators_and_len", """
class V:
    def __init__(self, t):
        self.t = t

    def __add__(self, other):
        return V(self.t + (other.t if isinstance(other, V) else other))

    def __radd__(self, other):
        return V(self.t + other)

    def __mul__(self, k):
        return V(self.t * k)

    def __len__(self):
        return self.t.shape[0]

    def __eq__(self, other):
        return isinstance(other, V) and self.t.shape == other.t.shape


def f(x):
    a = V(x)
    b = 1 + a + a * 2
    return b.t, len(b), a == b, a != 3, sum([a, a], V(x)).t
""", "T(3)")

P(CL, "namedtuple_methods_and_fields", """
Pt = collections.namedtuple("Pt", ["x", "y"], defaults=[0])


def f(t):
    p = Pt(t)
    q = p._replace(y=t * 2)
    return p, q.y, q._asdict(), len(q), q[0] is t, Pt._fields, isinstance(q, tuple)
""", "T(2)")

P(CL, "dataclass_eq_and_post_init", """
@dataclasses.dataclass
class Box:
    lo: float
    hi: float
    width: float = dataclasses.field(init=False)

    def __post_init__(self):
        self.width = self.hi - self.lo


def f(x):
    a = Box(0.0, 2.0)
    b = Box(0.0, 2.0)
    return x * a.width, a == b, a, dataclasses.astuple(a) if False else None
""", "T(2)")


P(M, "side_effect_then_print_then_more", """
def f(x, log):
    log.append(x * 2)
    print("logged", len(log), log)
    log.append(x + 1)
    return len(log)
""", "T(2), []")

P(M, "side_effect_then_break_then_more", """
import dynamir


def f(x, log):
    log.append(x * 2)
    print("logged", len(log))
    dynamir.graph_break()
    log.append(x + 1)
    return len(log)
""", "T(2), []")

P(M, "side_effect_inside_inlined_call_that_breaks", """
import dynamir


def record(log, t):
    log["seen"] = log.get("seen", 0) + 1
    print("recorded", log)
    dynamir.graph_break()
    return t * 2


def f(x, log):
    y = record(log, x)
    return y + log["seen"]
""", "T(2), {}")

P(M, "attribute_store_then_read", """
class State:
    def __init__(self):
        self.steps = 0
        self.last = None


def f(x, s):
    s.steps = s.steps + 1
    s.last = x * 2
    return s.last + s.steps
""", "T(2), State()")

P(M, "global_store_read_by_helper", """
SCALE = 1.0


def helper(t):
    return t * SCALE


def f(x):
    global SCALE
    SCALE = 3.0
    return helper(x)


def inputs():
    global SCALE
    SCALE = 1.0
    return [T(2)]
""")

P(M, "result_list_also_stored_on_object", """
class Cache:
    pass


def f(x, c):
    out = [x, x * 2]
    c.value = out
    c.count = len(out)
    return out
""", "T(2), Cache()")

P(M, "outside_list_items_rebuilt_after_insert", """
def f(x, items):
    first = items[0]
    items.insert(0, x)
    items.pop()
    return first, items[0], len(items)
""", "T(2), [T(2, seed=1), T(2, seed=2)]")

P(M, "outside_dict_iterated_after_update", """
def f(x, d):
    d["z"] = x
    d.pop("a")
    return [k for k in d], sum(d.values())
""", "T(2), {'a': T(2, seed=1), 'b': T(2, seed=2)}")

P(M, "module_counter_and_buffer_update", """
class Running(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean", torch.zeros(3))
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        self.mean = self.mean * 0.9 + x.mean(0) * 0.1
        return x - self.mean


def f(x, m):
    with torch.no_grad():
        return m(x), m.calls
""", "T(4, 3), Running()")


P(C, "set_order_and_mutation", """
def f(x):
    s = {"relu", "tanh", "gelu"}
    s.add("silu")
    s.discard("tanh")
    s |= {"elu"}
    order = [name for name in s]
    return order, len(s), "gelu" in s, x * len(s - {"relu"}), sorted(s ^ {"relu", "new"})
""", "T(2)")

P(C, "defaultdict_counting_and_factory", """
def f(x, words):
    counts = collections.defaultdict(int)
    groups = collections.defaultdict(lambda: [x * 0])
    for w in words:
        counts[w] += 1
        groups[w].append(x * counts[w])
    return dict(counts), {k: torch.stack(v).sum(0) for k, v in groups.items()}, counts
""", "T(2), ['a', 'b', 'a']")

P(C, "deque_maxlen_window", """
def f(xs):
    window = collections.deque(maxlen=3)
    means = []
    for t in xs:
        window.append(t)
        means.append(torch.stack(list(window)).mean(0))
    window.appendleft(xs[0] * 10)
    return means, len(window), window
""", "[T(2, seed=i) for i in range(5)]")

P(C, "counter_update_and_most_common", """
def f(x, tokens):
    c = collections.Counter(tokens)
    c.update(["z", "z", "a"])
    c["q"] += 2
    top = c.most_common(2)
    return top, c["missing"], x * c["z"], sorted(c.elements()), c
""", "T(2), ['a', 'b', 'a']")

P(C, "ordereddict_popitem_and_equality", """
def f(x):
    od = collections.OrderedDict(a=x, b=x * 2)
    od["c"] = x * 3
    k, v = od.popitem(last=False)
    od.move_to_end("b", last=False)
    return k, v, list(od), od == collections.OrderedDict(od), od
""", "T(2)")


# What each program's first compiled call does where it is not 0 graph breaks: the number of
# breaks it hits, or "eager" (some or all of the frame runs eagerly). Regenerate with
# `corpus.py --expected` after a change (under each Python, where they differ), and read the
# difference: docs/graph-breaks.md says why each kind of program still breaks.
BREAKS = {
    'sorted_tensors_by_key': 'eager',
    # 3.11's comprehension is a function of its own, and a break inside it restarts the frame.
    'dict_comprehension_filter': {'3.11': 'eager', 'other': 4},
    'builtin_round_tensor': 1,
    'all_empty_any_empty': 'eager',
    'functools_cmp_to_key': 2,
    # The copy's shared list crosses the break reached through two keys: its append breaks.
    'deepcopy_keeps_shared_objects_shared': 2,
    'custom_eq_and_repr': 1,
    'abstract_base_classes': 1,
    'percent_format': 1,
    'print_loop_items': 'eager',
    'boolean_mask_select': 1,
    'nonzero_argwhere': 1,
    'factory_functions': 1,
    'one_hot_argmax': 1,
    'manual_seed_randn': 3,
    'unique_and_bincount': 3,
    # np.partition's order is numpy's own: its call breaks inside numpy's code, and the rest of
    # the frame runs eagerly from there.
    'np_sort_argsort': 'eager',
    'np_boolean_mask': 1,
    'np_unique': 2,
    # r is the caller's a or a new array after the ifs; a break cannot recreate which object.
    'np_mean_dtype': 1,
    'np_default_rng_inside': 3,
    'np_bincount_histogram': 1,
    'np_nan_functions': 2,
    'np_copy_vs_view': 2,
    'named_parameters_loop': 'eager',
    'inference_mode_block': 2,
    'batchnorm_train_mode_stats': 1,
    'forward_pre_hook': 1,
    'multihead_attention': 1,
    'module_state_dict_keys': 2,
    'module_without_no_grad': 'eager',
    'early_return_in_loop': 1,
    'break_continue': 5,
    'conditional_collect_stack': 6,
    'argmax_as_index': 1,
    'range_from_tensor': 1,
    'loop_over_dict_with_tensor_cond': 2,
    'in_place_in_branch': 1,
    'raise_value_error_on_shape': 2,
    'shape_mismatch_runtime_error': 1,
    'index_error_list': 1,
    'custom_exception_caught': 1,
    'custom_exception_propagates': 1,
    'assert_fails': 1,
    'raise_from_chain': 'eager',
    'exception_in_helper_caught': 1,
    'numpy_linalg_error': 1,
    'type_error_tensor_plus_str': 1,
    'dtype_mismatch_matmul': 1,
    'context_manager_swallows': 1,
    'data_dependent_raise': 4,
    'key_error_propagates_after_mutation': 1,
    'exception_message_used': 1,
    # An exception thrown into a @contextmanager generator (gen.throw) is not modelled.
    'contextmanager_body_raises': 'eager',
    'contextmanager_catches': 'eager',
    'zero_division_float_raises': 1,
    'attribute_error_raised': 1,
    'list_sort_key_reverse': 'eager',
    'strides_and_contiguity': 1,
    'view_on_noncontiguous_raises': 1,
    'int_inplace_float_raises': 1,
    'int_of_multi_element_raises': 1,
    'expanded_inplace_raises': 1,
    'cat_shape_mismatch_raises': 1,
    'matmul_shape_mismatch_raises': 1,
    'numpy_broadcast_error': 1,
    'bool_of_multi_element_raises': 1,
    'dict_key_error_tensor_values': 1,
    'reshape_noncontiguous_then_mutate': 'eager',
    'flatten_transposed_copy': 'eager',
    'permuted_result_view_raises': 1,
    'numpy_copy_of_transpose': 3,
    'dot_mixed_dtype_raises': 1,
    'linear_int_input_raises': 1,
    'bmm_mixed_dtype_raises': 1,
    'index_select_float_index_raises': 1,
    'masked_fill_int_mask_raises': 1,
    'half_float_matmul_raises': 1,
    'inlined_call_breaks_after_store': 1,
    'inlined_call_breaks_after_list_append': 1,
    'side_effect_then_break_then_more': 1,
    'side_effect_inside_inlined_call_that_breaks': 1,
}


# ================================================================================================
# Worker side: difftest's worker, with the corpus's inputs, module loading and object comparison
# ================================================================================================

def _install_worker_hooks():
    """Adapts difftest's worker (check_program/call_once) to corpus programs."""
    loaded = {"key": None, "module": None}
    load_once = difftest.load_function

    def load_function(program, path):
        # One module per program: the eager run and every mode see the same classes, exception
        # types and module-level objects (a global model is compiled the way it ran eagerly).
        key = (program["id"], path)
        if loaded["key"] != key:
            fn = load_once(program, path)
            loaded.update(key=key, module=sys.modules[fn.__module__])
        return loaded["module"].f

    def make_inputs(program, resize=None):  # the program's own inputs: sizes never change
        return list(loaded["module"].inputs())

    difftest.load_function = load_function
    difftest.make_inputs = make_inputs
    _install_diff_hook()


def _install_diff_hook():
    """difftest.diff, comparing program-defined objects by their fields (see _fields)."""
    plain_diff = difftest.diff
    if getattr(plain_diff, "corpus_hook", False):
        return

    def diff(e, g, path="result", ref=None):
        if type(e) is type(g):
            fe, fg = _fields(e), _fields(g)
            if fe is not None:
                return plain_diff(fe, fg, path, _fields(ref) if type(ref) is type(e) else None)
        return plain_diff(e, g, path, ref)
    diff.corpus_hook = True
    difftest.diff = diff


def _fields(o):
    """The comparable contents of a program-defined object, a dataclass or an nn.Module (a dict
    whose '<class>' entry names the type), or None for anything difftest compares itself."""
    t = type(o)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(o, torch.nn.Module):
        d = {"<class>": t.__qualname__, "training": o.training}
        d.update(o.state_dict(keep_vars=True))
        for k, v in vars(o).items():
            if not k.startswith("_") and isinstance(v, (int, float, str, bool, type(None))):
                d[k] = v
        return d
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        d = {"<class>": t.__qualname__}
        d.update({fl.name: getattr(o, fl.name) for fl in dataclasses.fields(o)})
        return d
    if t.__module__.startswith("difftest_") and not issubclass(t, (tuple, list, dict,
                                                                   BaseException)):
        if t.__eq__ is not object.__eq__:
            return None  # the program defines equality
        d = {"<class>": t.__qualname__}
        if hasattr(o, "__dict__"):
            d.update(vars(o))
        for slot in getattr(t, "__slots__", ()):
            d[slot] = getattr(o, slot, "<unset>")
        return d
    return None


# ================================================================================================
# Runner
# ================================================================================================

def _argnames(source):
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == "f":
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if node.args.vararg:
                names += [f"{node.args.vararg.arg}[{i}]" for i in range(8)]
            return names
    raise ValueError("no def f in program")


def expected_breaks(name):
    """How many graph breaks the program's first compiled call hits, or "eager" (an entry
    may differ by Python version: {"3.11": ..., "other": ...})."""
    want = BREAKS.get(name, 0)
    if isinstance(want, dict):
        want = want.get("%d.%d" % sys.version_info[:2], want.get("other", 0))
    return want


def observed_breaks(res):
    """What the first call in the default mode did: "eager" if (part of) the frame ran
    eagerly, else the number of graph breaks it hit; None if it did not get that far."""
    first = (res.get("stats") or {}).get("first_call")
    if first is None:
        return None
    return "eager" if first["eager_runs"] else first["graph_breaks_hit"]


def program_dict(name):
    p = PROGRAMS[name]
    # dynamic=True changes the random programs' sizes; these have their own inputs
    # (`--mode dynamic` runs them so, with the sizes they have).
    modes = [m for m in difftest.MODES if m[0] != "dynamic"]
    # A program that compiles with no break must compile whole with fullgraph=True too.
    if expected_breaks(name) == 0 and p["raises"] is None:
        modes = modes + [("fullgraph", {"fullgraph": True})]
    return {"id": name, "lib": "torch", "argnames": _argnames(p["source"]), "input_seed": 0,
            "inputs": "inputs() in the source", "source": p["source"], "theme": p["theme"],
            "raises": p["raises"], "modes": modes}


def select(filter_=None):
    return [n for n in PROGRAMS if not filter_ or filter_ in n or filter_ == PROGRAMS[n]["theme"]]


@contextlib.contextmanager
def _corpus_workers():
    # difftest's Worker starts `python <difftest's __file__> --worker FD`; point it at this file
    # (whose --worker installs the corpus hooks first) while our pool runs.
    saved = difftest.__file__
    difftest.__file__ = os.path.abspath(__file__)
    try:
        yield
    finally:
        difftest.__file__ = saved


def run_corpus(names=None, jobs=2, timeout=60.0, progress=None):
    """Runs the named programs (default: all); returns their result dicts (difftest's, plus
    'theme'); a program whose eager outcome is not the declared one is a 'corpus-error'."""
    names = list(PROGRAMS) if names is None else list(names)
    results = []
    with _corpus_workers():
        for res in difftest.run_programs((program_dict(n) for n in names), jobs=jobs,
                                         timeout=timeout):
            p = PROGRAMS[res["id"]]
            res["theme"] = p["theme"]
            got = res.get("eager_exception")
            got = got.rsplit(".", 1)[-1] if got else None
            if res["status"] in ("ok", "mismatch") and got != p["raises"]:
                res["status"] = "corpus-error"
                res["failures"] = [{"mode": "eager", "call": 0,
                                    "diff": f"corpus: eager raised {got}, declared "
                                            f"{p['raises']}"}] + \
                    res.get("failures", [])
            results.append(res)
            if progress:
                progress(res, len(results), len(names))
    order = {n: i for i, n in enumerate(names)}
    results.sort(key=lambda r: order[r["id"]])
    return results


def summary(results):
    c = collections.Counter(r["status"] for r in results)
    line = (f"corpus: {len(results)} programs, {c['ok']} ok, {c['mismatch']} mismatch, "
            f"{c['crash']} crash")
    if c["timeout"]:
        line += f", {c['timeout']} timeout"
    if c["corpus-error"]:
        line += f", {c['corpus-error']} corpus-error"
    return line


def breaks_summary(results):
    """Per theme, how many programs ran (default mode, first call) as graphs with no graph
    break, with breaks, or (partly) eagerly: one line each, then the total."""
    counts = collections.OrderedDict()
    for r in results:
        seen = observed_breaks(r)
        kind = "eager" if seen == "eager" else "breaks" if seen else "0 breaks"
        counts.setdefault(r.get("theme", "?"), collections.Counter())[kind] += 1
    total = sum(counts.values(), collections.Counter())
    lines = [f"  {theme:14s} {c['0 breaks']:4d} with 0 breaks, {c['breaks']:4d} with breaks, "
             f"{c['eager']:4d} eager" for theme, c in counts.items()]
    lines.append(f"corpus breaks: {total['0 breaks']} of {len(results)} programs compile with "
                 f"0 breaks, {total['breaks']} with breaks, {total['eager']} run eagerly")
    return "\n".join(lines)


def unexpected_breaks(results):
    """The programs whose first call broke the graph otherwise than BREAKS says."""
    return [(r["id"], expected_breaks(r["id"]), observed_breaks(r)) for r in results
            if r["status"] == "ok" and observed_breaks(r) != expected_breaks(r["id"])]


def breaks_table(results):
    """BREAKS as observed, in the corpus's order (`corpus.py --expected` prints it)."""
    lines = ["BREAKS = {"]
    for r in results:
        seen = observed_breaks(r)
        if seen:
            lines.append(f"    {r['id']!r}: {seen!r},")
    return "\n".join(lines + ["}"])


def format_failure(res, source=False):
    lines = [f"### {res['id']} [{res['status']}] ({res.get('theme')})" +
             (f" eager raises {res['eager_exception']}" if res.get("eager_exception") else "")]
    if source:
        lines.append(PROGRAMS[res["id"]]["source"][len(PRELUDE):].rstrip())
    for f in res["failures"]:
        d = f["diff"].rstrip()
        if res["status"] != "crash":
            d = d[:2500]
        lines.append(f"-> mode={f['mode']} call={f['call']}: {d}")
    return "\n".join(lines) + "\n"


def script(name, mode="default"):
    """A standalone script: the program, then one eager call and one compiled call in `mode`."""
    kwargs = dict(difftest.MODES)[mode]
    return (PROGRAMS[name]["source"] + "\n\nif __name__ == '__main__':\n"
            "    import dynamir\n"
            "    print('eager:', f(*inputs()))\n"
            f"    g = dynamir.compile(f, **{kwargs!r})\n"
            "    print('dynamir:', g(*inputs()))\n"
            "    print('dynamir:', g(*inputs()))\n")


def eager_check(names):
    """Runs programs eagerly here, twice, checking the declared outcome and determinism."""
    import tempfile
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in names:
            p = program_dict(n)
            path = os.path.join(tmp, f"difftest_{n}.py")
            with open(path, "w") as fh:
                fh.write(p["source"])
            fn = difftest.load_function(p, path)
            mod = sys.modules[fn.__module__]
            outs = []
            for _ in range(2):
                with difftest.Capture(None) as cap:
                    try:
                        r, exc = fn(*mod.inputs()), None
                    except Exception as e:  # noqa: BLE001
                        r, exc = None, e
                outs.append((r, exc, cap.text))
            (r1, e1, o1), (r2, e2, o2) = outs
            got = type(e1).__name__ if e1 else None
            problem = None
            if got != PROGRAMS[n]["raises"]:
                problem = f"raised {got}: {e1}, declared {PROGRAMS[n]['raises']}"
            elif type(e1) is not type(e2):
                problem = "exception not deterministic"
            else:
                d = difftest.diff(r1, r2) or difftest.diff_stdout(o1, o2)
                if d:
                    problem = f"not deterministic: {d}"
            if problem:
                bad += 1
                print(f"{n}: {problem}")
    print(f"eager check: {len(names)} programs, {bad} bad")
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="substring of program names, or a theme")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--source", action="store_true", help="print the source of each failure")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--show", metavar="NAME")
    ap.add_argument("--script", metavar="NAME")
    ap.add_argument("--mode", default="default", choices=[m for m, _ in difftest.MODES])
    ap.add_argument("--eager", action="store_true")
    ap.add_argument("--stats", action="store_true", help="print each program's counters")
    ap.add_argument("--expected", action="store_true",
                    help="print the BREAKS table as this run observed it")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args, _ = ap.parse_known_args(argv)
    if args.worker is not None:
        _install_worker_hooks()
        difftest.worker_main(args.worker)
        return 0
    if args.list:
        for n, p in PROGRAMS.items():
            print(f"{p['theme']:14s} {n}" + (f"  (raises {p['raises']})" if p["raises"] else ""))
        return 0
    if args.show:
        print(PROGRAMS[args.show]["source"], end="")
        return 0
    if args.script:
        print(script(args.script, args.mode), end="")
        return 0
    names = select(args.filter)
    if args.eager:
        _install_diff_hook()
        return 1 if eager_check(names) else 0

    def progress(res, k, n):
        if k % 25 == 0:
            print(f"  ... {k}/{n}", file=sys.stderr, flush=True)
    results = run_corpus(names, jobs=args.jobs, timeout=args.timeout, progress=progress)
    failing = [r for r in results if r["status"] != "ok"]
    for r in failing:
        print(format_failure(r, source=args.source))
    print(difftest.coverage(results))
    print(breaks_summary(results))
    for name, want, seen in unexpected_breaks(results):
        print(f"breaks: {name}: expected {want}, observed {seen}")
    if args.expected:
        print(breaks_table(results))
    if args.stats:
        for r in results:
            print(f"  {r['id']:40s} {r.get('stats')}")
    print(summary(results))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
