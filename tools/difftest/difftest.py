#!/usr/bin/env python3
"""Differential tester: random numpy / torch programs, Dynamir against eager CPython.

A program is real Python source text (a module with one function `f`) plus an input spec, both
a pure function of the program id `SEED:INDEX` (and the library). The generator builds the body
statement by statement and runs each candidate statement on the real inputs while it generates,
so shapes and dtypes are exact and programs are valid most of the time; a few programs end in a
statement that raises in eager on purpose.

The runner sends programs to worker subprocesses (a JSON-lines protocol on a private fd). A
worker runs eager once, then Dynamir in three modes (default, capture_control_flow=True,
backend="eager"), each called twice on fresh input copies, and compares results, Python types,
dtypes, shapes, the arguments after the call, stdout and raised exception types. A worker that
dies marks its program CRASH (signal + stderr tail) and is restarted; a program that runs past
the timeout is a TIMEOUT.

CLI:  difftest.py --seed S --count N [--jobs 2] [--out DIR] [--minutes M] [--lib numpy|torch|both]
      [--py-fraction P]  (programs with Python constructs, pygen.py; default 0.3)
      difftest.py --show ID [--lib ...]        print a program
      difftest.py --minimize ID [--lib ...]    delete statements while the failure persists
"""

import argparse
import collections
import contextlib
import copy
import io
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import pygen  # noqa: E402

MODES = [
    ("default", {}),
    ("ccf", {"capture_control_flow": True}),
    ("eager-backend", {"backend": "eager"}),
    ("dynamic", {"dynamic": True}),
]
CALLS = 2
# dynamic=True: the calls' inputs, by how their sizes change from the program's: as traced,
# every size of 2 or more one larger (the sizes that were equal stay equal: the trace holds),
# and only the first array's (sizes that were equal differ: numpy raises, or broadcasts).
DYNAMIC_CALLS = (None, "all", "first")
MAX_ELEMENTS = 400
# The fraction of generated programs that mix Python constructs (pygen.py) into the tensor code.
PY_FRACTION = 0.3

_torch = None


def torch_module():
    global _torch
    if _torch is None:
        import torch
        torch.set_num_threads(1)
        _torch = torch
    return _torch


# ================================================================================================
# Inputs
# ================================================================================================

DTYPES = ["bool", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "uint8",
          "uint16", "uint32", "uint64", "complex64", "complex128"]
DTYPE_WEIGHTS = [1, 1, 1, 2, 2, 1, 5, 2, 1, 1, 1, 1, 1, 1]
# torch's uint16, uint32 and uint64 have few kernels (`+` raises): torch programs use uint8.
# torch's complex tensors are not traced (numpy's are): torch programs use float32 instead.
TORCH_UNSIGNED = "uint8"


def make_array(rng, shape, dtype, special):
    if dtype == "bool":
        a = rng.random(shape) < 0.5
    elif dtype.startswith(("int8", "int16", "uint")) and special:  # the whole range: wraps
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)
    elif dtype.startswith("int"):
        a = rng.integers(-4, 6, size=shape).astype(dtype)
    elif dtype.startswith("uint"):
        a = rng.integers(0, 10, size=shape).astype(dtype)
    elif dtype.startswith("complex"):
        parts = np.round(rng.standard_normal((2,) + tuple(shape)) * 2.0, 2)
        a = (parts[0] + 1j * parts[1]).astype(dtype)
        if special and a.size:
            flat = a.reshape(-1)
            flat[rng.integers(0, a.size)] = complex(rng.choice([np.nan, np.inf, 0.0, -0.0]),
                                                    rng.choice([np.nan, -np.inf, 0.0, -0.0]))
    else:
        a = np.round(rng.standard_normal(shape) * 2.0, 2).astype(dtype)
        if special and a.size:
            flat = a.reshape(-1)
            flat[rng.integers(0, a.size)] = rng.choice([np.nan, np.inf, -np.inf, 0.0, -0.0])
    return np.array(a, dtype=dtype)  # a fresh C-contiguous copy; 0-d stays 0-d


def make_value(rng, spec, lib):
    if spec["kind"] == "py":
        rng.random()
        return copy.deepcopy(spec["value"])
    if spec["kind"] == "list":
        return [make_value(rng, s, lib) for s in spec["items"]]
    if spec["kind"] == "dict":
        return {k: make_value(rng, s, lib) for k, s in spec["items"].items()}
    a = make_array(rng, tuple(spec["shape"]), spec["dtype"], spec["special"])
    if lib == "torch":
        a = torch_module().from_numpy(a.copy())
    return a


def make_inputs(program, resize=None):
    """Fresh inputs for one call, deterministic in the program's input seed; `resize` (one of
    DYNAMIC_CALLS) grows the array inputs' sizes of 2 or more by one."""
    rng = np.random.default_rng(program["input_seed"])
    specs = program["inputs"]
    if resize:
        specs = copy.deepcopy(specs)
        for i, spec in enumerate(array_specs(specs)):
            if resize == "all" or i == 0:
                spec["shape"] = [d + 1 if d >= 2 else d for d in spec["shape"]]
    return [make_value(rng, spec, program["lib"]) for spec in specs]


def array_specs(specs):
    """The array specs among (possibly nested) input specs."""
    for spec in specs if isinstance(specs, list) else []:
        if not isinstance(spec, dict):
            continue
        if spec.get("kind") == "array":
            yield spec
        elif spec.get("kind") in ("list", "dict"):
            items = spec["items"]
            yield from array_specs(list(items.values() if isinstance(items, dict) else items))


# ================================================================================================
# Generator
# ================================================================================================

class GenFail(Exception):
    pass


def _is_arr(v, lib):
    if lib == "torch":
        return isinstance(v, torch_module().Tensor)
    return isinstance(v, (np.ndarray, np.generic)) and not isinstance(v, np.str_)


def _shape(v):
    return tuple(v.shape)


def _dt(v):
    return str(v.dtype).replace("torch.", "")


def _size(v):
    return int(np.prod(_shape(v))) if _shape(v) else 1


def _too_big(env, lib):
    for v in env.values():
        if _is_arr(v, lib) and (_size(v) > MAX_ELEMENTS or len(_shape(v)) > 4):
            return True
    return False


def _broadcastable(a, b):
    try:
        np.broadcast_shapes(a, b)
        return True
    except ValueError:
        return False


def _clone_env(env):
    try:
        return copy.deepcopy(env)
    except Exception:
        return dict(env)


NP_UNARY = ["np.sin", "np.cos", "np.exp", "np.abs", "np.sqrt", "np.floor", "np.ceil", "np.square",
            "np.negative", "np.tanh", "np.log", "np.sign", "np.trunc", "np.isnan", "np.isfinite",
            "np.logical_not", "np.reciprocal", "np.round", "np.positive", "np.expm1",
            "np.arctan", "np.sinh", "np.arcsinh", "np.arccos",
            "abs({})", "-{}", "-{}", "~{}", "+{}"]
T_UNARY = ["torch.sin", "torch.cos", "torch.exp", "torch.abs", "torch.sqrt", "torch.floor",
           "torch.ceil", "torch.square", "torch.neg", "torch.tanh", "torch.log", "torch.sign",
           "torch.relu", "torch.sigmoid", "torch.isnan", "torch.logical_not", "torch.trunc",
           "torch.round", "torch.rsqrt", "torch.atan", "torch.cosh", "torch.asinh",
           "torch.arcsin", "{}.abs()", "{}.exp()", "{}.sin()", "-{}", "-{}", "~{}",
           "abs({})"]
BINOPS = ["+", "+", "-", "*", "*", "/", "//", "%", "**", "<", "<=", ">", ">=", "==", "!=",
          "&", "|", "^", "<<", ">>"]
NP_BIN = ["np.maximum", "np.minimum", "np.maximum", "np.minimum", "np.add", "np.subtract",
          "np.multiply", "np.true_divide", "np.power", "np.fmax", "np.arctan2",
          "np.logical_and", "np.equal", "np.floor_divide", "np.mod", "np.bitwise_and",
          "np.right_shift"]
T_BIN = ["torch.maximum", "torch.minimum", "torch.maximum", "torch.minimum", "torch.add",
         "torch.sub", "torch.mul", "torch.div", "torch.pow", "torch.atan2", "torch.logical_and",
         "torch.eq", "torch.fmod", "torch.remainder", "torch.floor_divide",
         "torch.bitwise_xor", "torch.bitwise_left_shift"]
NP_RED = ["sum", "sum", "mean", "max", "min", "prod", "any", "all", "argmax", "argmin"]
T_RED = ["sum", "sum", "mean", "amax", "amin", "prod", "any", "all", "argmax", "argmin", "max"]
PY_LITERALS = ["2", "3", "-1", "0", "1", "0.5", "1.5", "-2.25", "2.0", "True", "False", "10",
               "300", "1j"]
NP_SCALARS = ["np.float32(2.0)", "np.int64(3)", "np.float64(-0.5)", "np.int32(2)",
              "np.float16(1.5)", "np.bool_(True)", "np.float32(0.25)", "np.uint8(7)",
              "np.uint64(5)", "np.complex64(1-2j)"]
T_SCALARS = ["torch.tensor(2.0)", "torch.tensor(3)", "torch.tensor(True)",
             "torch.tensor(-0.5, dtype=torch.float64)"]


class Generator:
    def __init__(self, seed, index, lib, py_fraction=PY_FRACTION):
        self.id = f"{seed}:{index}" if lib == "both" else f"{seed}:{index}:{lib}"
        self.rng = random.Random(f"difftest:{seed}:{index}")
        pick = "torch" if self.rng.random() < 0.4 else "numpy"
        if lib == "both":
            lib = pick
        self.lib = lib
        self.M = "torch" if lib == "torch" else "np"
        self.G = {"np": np, "__builtins__": __builtins__}
        if lib == "torch":
            self.G["torch"] = torch_module()
        self.counter = 0
        self.pure = False
        # Python constructs (pygen.py) in this program? A draw of its own, so that the other
        # programs of a seed are the same whatever the fraction.
        py = random.Random(f"difftest-py:{seed}:{index}").random() < py_fraction
        self.py = pygen.PyGen(self, GenFail) if py else None

    # -- helpers ---------------------------------------------------------------------------------
    def arrays(self, pred=None):
        return [k for k, v in self.env.items()
                if _is_arr(v, self.lib) and not k.startswith("_") and (pred is None or pred(v))]

    def scalars(self):
        return [k for k, v in self.env.items() if type(v) in (int, float, bool)
                and not k.startswith("n_")]

    def ev(self, src):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"):
                return eval(src, self.G, self.env)

    def fresh(self):
        self.counter += 1
        return f"v{self.counter}"

    def pick_dtype(self, float_only=False):
        if float_only:
            return self.rng.choice(["float16", "float32", "float32", "float64"])
        dtype = self.rng.choices(DTYPES, DTYPE_WEIGHTS)[0]
        if self.lib == "torch" and dtype.startswith("complex"):
            return "float32"
        return TORCH_UNSIGNED if self.lib == "torch" and dtype.startswith("uint") else dtype

    def literal(self):
        r = self.rng.random()
        if r < 0.7:
            return self.rng.choice(PY_LITERALS)
        if r < 0.85 and self.scalars():
            return self.rng.choice(self.scalars())
        return self.rng.choice(T_SCALARS if self.lib == "torch" else NP_SCALARS)

    def operand(self, depth, pred=None):
        """An array-valued operand: (source, value)."""
        names = self.arrays(pred)
        if names and (depth >= 2 or self.rng.random() < 0.65):
            n = self.rng.choice(names)
            return n, self.env[n]
        src, val = self.expr(depth + 1)
        return f"({src})", val

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, depth=0):
        kinds = ["binop"] * 6 + ["unary"] * 3 + ["func2"] * 2 + ["where"] + ["reduce"] * 3 + \
            ["shape"] * 3 + ["index"] * 3 + ["matmul"] + ["cast"]
        for _ in range(6):
            kind = self.rng.choice(kinds)
            try:
                src = getattr(self, "e_" + kind)(depth)
                val = self.ev(src)
                if not _is_arr(val, self.lib):
                    continue
                return src, val
            except GenFail:
                continue
            except Exception:
                continue
        raise GenFail("no expression")

    def second(self, depth, a_val):
        """A second operand broadcastable with a_val: a name, a literal or a sub-expression."""
        r = self.rng.random()
        if r < 0.3:
            return self.literal()
        names = self.arrays(lambda v: _broadcastable(_shape(v), _shape(a_val)))
        if names and (r < 0.85 or depth >= 2):
            return self.rng.choice(names)
        if depth < 2:
            src, val = self.expr(depth + 1)
            return f"({src})"
        return self.literal()

    def e_binop(self, depth):
        a, av = self.operand(depth)
        op = self.rng.choice(BINOPS)
        b = self.second(depth, av)
        if op == "**" and self.rng.random() < 0.6:
            b = self.rng.choice(["2", "3", "0.5", "2.0", "-1"])
        if self.rng.random() < 0.15:
            return f"{b} {op} {a}"
        return f"{a} {op} {b}"

    def exactly_rounded(self, src, val):
        """`src`, or its float32 cast where numpy would compute a float function of it in
        float16 and this machine's float16 loops are approximate (np.tanh of a uint8 array is
        0.9985 from 4 on, where the rounded value is 1.0 from 5 on: an argmax of such ties is
        numpy's own, 20261201:28 on 3.13)."""
        if self.lib == "numpy" and _FLOAT16_APPROXIMATE and str(_dt(val)) in ("int8", "uint8",
                                                                               "bool"):
            return f"({src}).astype(np.float32)"
        return src

    def e_unary(self, depth):
        a, av = self.operand(depth)
        f = self.rng.choice(T_UNARY if self.lib == "torch" else NP_UNARY)
        a = self.exactly_rounded(a, av)
        return f.format(a) if "{}" in f else f"{f}({a})"

    def e_func2(self, depth):
        a, av = self.operand(depth)
        b = self.second(depth, av)
        f = self.rng.choice(T_BIN if self.lib == "torch" else NP_BIN)
        return f"{f}({self.exactly_rounded(a, av)}, {b})"

    def e_where(self, depth):
        a, av = self.operand(depth)
        b = self.second(depth, av)
        cond = self.rng.choice([f"{a} > 0", f"{a} < {b}", f"{a} == {a}"])
        if self.lib == "torch":
            if self.rng.random() < 0.4:
                return f"{a}.masked_fill({cond}, {self.rng.choice(['0', '0.5', '-1', 'True'])})"
            return f"torch.where({cond}, {a}, {b})"
        return f"np.where({cond}, {a}, {b})"

    def axis(self, nd, allow_tuple=True):
        if nd == 0:
            return self.rng.choice(["None", "0", "()"]) if self.lib == "numpy" else "None"
        r = self.rng.random()
        if r < 0.2:
            return "None"
        if r < 0.75 or nd == 1 or not allow_tuple:
            ax = self.rng.randrange(nd)
            return str(ax - nd if self.rng.random() < 0.35 else ax)
        axes = self.rng.sample(range(nd), 2)
        return "(" + ", ".join(str(x - nd if self.rng.random() < 0.3 else x) for x in axes) + ")"

    def e_reduce(self, depth):
        a, av = self.operand(depth)
        nd = len(_shape(av))
        if self.lib == "torch":
            red = self.rng.choice(T_RED)
            if red in ("prod", "argmax", "argmin", "any", "all", "max"):
                ax = self.axis(nd, allow_tuple=False)
            else:
                ax = self.axis(nd)
            kd = self.rng.choice(["", "", ", keepdim=True", ", keepdim=False"])
            if ax == "None":
                if red == "max":
                    return f"{a}.max()"
                return self.rng.choice([f"{a}.{red}()", f"torch.{red}({a})"])
            if red == "max":
                return f"{a}.max(dim={ax}{kd}).{self.rng.choice(['values', 'indices'])}"
            return self.rng.choice([f"{a}.{red}(dim={ax}{kd})", f"torch.{red}({a}, {ax}{kd})",
                                    f"{a}.{red}({ax})"])
        red = self.rng.choice(NP_RED)
        ax = self.axis(nd, allow_tuple=red not in ("argmax", "argmin"))
        kd = self.rng.choice(["", "", ", keepdims=True", ", keepdims=False"])
        if ax == "None" and not kd and self.rng.random() < 0.5:
            return self.rng.choice([f"{a}.{red}()", f"np.{red}({a})"])
        return self.rng.choice([f"{a}.{red}(axis={ax}{kd})", f"np.{red}({a}, axis={ax}{kd})"])

    def newshape(self, shape):
        n = int(np.prod(shape)) if shape else 1
        divs = [d for d in range(1, n + 1) if n % d == 0] or [0]
        d = self.rng.choice(divs)
        options = [(n,), (1, n), (n, 1), (d, n // d if d else 0), (d, 1, n // d if d else 0)]
        s = list(self.rng.choice(options))
        if self.rng.random() < 0.4 and n:
            s[self.rng.randrange(len(s))] = -1
        return "(" + ", ".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"

    def e_shape(self, depth):
        a, av = self.operand(depth)
        shape = _shape(av)
        nd = len(shape)
        perm = list(range(nd))
        self.rng.shuffle(perm)
        perm_s = ", ".join(map(str, perm))
        b_names = self.arrays(lambda v: _shape(v) == shape and v is not av)
        b = self.rng.choice(b_names) if b_names and self.rng.random() < 0.6 else a
        d = self.rng.randrange(-nd - 1, nd + 1) if nd else 0
        cd = self.rng.randrange(-nd, nd) if nd else 0
        if self.lib == "torch":
            opts = [f"{a}.reshape{self.newshape(shape)}", f"{a}.view{self.newshape(shape)}",
                    f"{a}.reshape(-1)", f"{a}.permute({perm_s})", f"{a}.transpose(0, -1)",
                    f"{a}.T", f"{a}.unsqueeze({d})", f"{a}.squeeze()", f"{a}.flatten()",
                    f"torch.cat([{a}, {b}], dim={cd})", f"torch.stack([{a}, {b}], dim={d})",
                    f"{a}.clone()", f"{a}.contiguous()", f"{a}.clamp(min=-1, max=2)",
                    f"{a}.expand(2, *{a}.shape)", f"{a}.flip(0)", f"{a}.cumsum({cd})",
                    f"torch.sort({a}, dim={cd})[0]", f"{a}.sort(descending=True).indices",
                    f"{a}.argsort(dim={cd}, stable=True)", f"torch.msort({a})",
                    f"torch.topk({a}.reshape(-1), 1).values", f"{a}.median()"]
        else:
            opts = [f"{a}.reshape{self.newshape(shape)}", f"{a}.reshape(-1)", f"{a}.T",
                    f"{a}.transpose({perm_s})" if nd else f"{a}.T", f"np.transpose({a})",
                    f"np.expand_dims({a}, {d})", f"{a}.squeeze()", f"{a}.flatten()",
                    f"{a}.ravel()", f"np.concatenate([{a}, {b}], axis={cd})",
                    f"np.stack([{a}, {b}], axis={d})", f"{a}.copy()", f"{a}.clip(-1, 2)",
                    f"np.broadcast_to({a}, (2,) + {a}.shape)", f"np.swapaxes({a}, 0, -1)",
                    f"np.cumsum({a}, axis={cd})", f"np.flip({a}, 0)",
                    f"np.histogram({a}, bins=4)[0]", f"np.histogram({a}, 3, range=(-1, 1))[1]",
                    f"np.sort({a}, axis={cd})", f"np.argsort({a}, axis=None)",
                    f"np.median({a}, axis={cd})", f"np.sort({a}, kind='stable')",
                    f"np.percentile({a}, 30)", f"np.quantile({a}, [0.2, 0.9], axis={cd})"]
        return self.rng.choice(opts)

    def index_src(self, shape):
        torch_ = self.lib == "torch"
        nd = len(shape)
        r = self.rng.random()
        if r < 0.07 and nd:
            return "[" + self.rng.choice(["{a} > 0", "{a} != 0"]) + "]"
        if r < 0.12 and nd and shape[0] > 0:
            return f"[[0, -1]]" if shape[0] > 1 else "[[0, 0]]"
        if r < 0.17 and nd and min(shape) > 0:
            # An index array computed from the data (a gather) along the first or the last
            # dimension: in bounds, negative, or past the end now and then (eager raises;
            # Dynamir's check must too).
            last = nd > 1 and self.rng.random() < 0.5
            s = shape[-1] if last else shape[0]
            cast = ".long()" if torch_ else ".astype(np.int64)"
            shift = self.rng.choice(["", "", " - 1", f" + {s // 2 + 1}"])
            index = f"(({{a}}.reshape(-1)[:4].abs() * 3){cast} % {s}){shift}"
            return f"[..., {index}]" if last else f"[{index}]"
        if r < 0.21 and nd and min(shape) > 0:
            # Positions the data decides (np.nonzero, torch.where: as many as only the graph
            # knows): of the elements, or of the rows by their first column, None beside them
            # now and then.
            where = "torch.where" if torch_ else "np.nonzero"
            if self.rng.random() < 0.4:
                return f"[{where}({{a}} > 0)]"
            rows = f"{where}({{a}}.reshape({shape[0]}, -1)[:, 0] != 0)[0]"
            return self.rng.choice([f"[{rows}]", f"[{rows}]", f"[{rows}, None]",
                                    f"[None, {rows}]"])
        comps = []
        m = self.rng.randint(1, max(1, nd))
        dims = list(shape)
        used_ellipsis = False
        while len(comps) < m + 1 and (dims or not comps):
            c = self.rng.random()
            if c < 0.08:
                comps.append("None")
                continue
            if c < 0.15 and not used_ellipsis:
                comps.append("...")
                used_ellipsis = True
                dims = dims[-1:] if self.rng.random() < 0.5 else []
                if not dims:
                    break
                continue
            if not dims:
                break
            s = dims.pop(0)
            c = self.rng.random()
            if c < 0.3 and s > 0:
                comps.append(str(self.rng.randrange(-s, s)))
            elif c < 0.45:
                comps.append(":")
            else:
                start = self.rng.choice(["", "", str(self.rng.randint(-s, s))])
                stop = self.rng.choice(["", str(self.rng.randint(-s, s + 1))])
                step = self.rng.choice(["", "", "2", "-1" if not torch_ else "1", "-2"
                                        if not torch_ else "3"])
                comps.append(f"{start}:{stop}" + (f":{step}" if step else ""))
            if len(comps) >= m:
                break
        if not comps:
            comps = ["..."]
        return "[" + ", ".join(comps) + "]"

    def e_index(self, depth):
        names = self.arrays()
        if names and self.rng.random() < 0.8:
            a = self.rng.choice(names)
            av = self.env[a]
        else:
            a, av = self.operand(depth)
        return a + self.index_src(_shape(av)).replace("{a}", a)

    def e_matmul(self, depth):
        a, av = self.operand(depth)
        shape = _shape(av)
        if not shape:
            raise GenFail("0-d matmul")
        k = shape[-1]
        names = self.arrays(lambda v: len(_shape(v)) >= 1 and (
            _shape(v)[0] == k if len(_shape(v)) == 1 else _shape(v)[-2] == k))
        if names and self.rng.random() < 0.7:
            b = self.rng.choice(names)
        elif len(shape) == 2:
            b = f"{a}.T"
        elif len(shape) == 1:
            b = a
        else:
            b = f"{a}.transpose(0, 2, 1)" if self.lib == "numpy" else f"{a}.transpose(-1, -2)"
        if self.lib == "torch" and self.rng.random() < 0.3:
            return f"torch.matmul({a}, {b})"
        if self.lib == "numpy" and self.rng.random() < 0.2:
            return f"np.matmul({a}, {b})"
        return f"{a} @ {b}"

    def e_cast(self, depth):
        a, _ = self.operand(depth)
        dt = self.pick_dtype()
        if self.lib == "torch":
            return self.rng.choice([f"{a}.to(torch.{dt})", f"{a}.float()", f"{a}.double()",
                                    f"{a}.long()", f"{a}.bool()", f"{a}.half()", f"{a}.int()",
                                    f"{a}.byte()"])
        return self.rng.choice([f"{a}.astype(np.{dt if dt != 'bool' else 'bool_'})",
                                f"{a}.astype({dt!r})", f"np.asarray({a}, dtype=np.float32)"])

    # -- statements ------------------------------------------------------------------------------
    def s_assign(self):
        src, _ = self.expr()
        names = self.arrays()
        if names and self.rng.random() < 0.3:
            return f"{self.rng.choice(names)} = {src}"
        return f"{self.fresh()} = {src}"

    def s_aug(self):
        names = self.arrays()
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        xv = self.env[x]
        op = self.rng.choice(["+=", "+=", "-=", "*=", "/=", "//=", "|=", "**="])
        b = self.second(1, xv)
        if self.lib == "torch" and self.rng.random() < 0.4:
            m = self.rng.choice(["add_", "mul_", "sub_", "clamp_", "masked_fill_", "zero_",
                                 "neg_", "abs_", "div_"])
            if m == "clamp_":
                return f"{x}.clamp_(min=0)"
            if m == "masked_fill_":
                return f"{x}.masked_fill_({x} < 0, {self.rng.choice(['0', '1.5', 'True'])})"
            if m in ("zero_", "neg_", "abs_"):
                return f"{x}.{m}()"
            return f"{x}.{m}({b})"
        if self.lib == "numpy" and self.rng.random() < 0.25:
            f = self.rng.choice(["np.add", "np.multiply", "np.subtract", "np.maximum"])
            return f"{f}({x}, {b}, out={x})"
        return f"{x} {op} {b}"

    def s_store(self):
        names = self.arrays(lambda v: len(_shape(v)) >= 1)
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        xv = self.env[x]
        idx = self.index_src(_shape(xv)).replace("{a}", x)
        r = self.rng.random()
        if r < 0.4:
            val = self.rng.choice(["3", "0", "-1.5", "True", "1"])
        elif r < 0.5:  # computed from what it replaces (`x[m] = x[m] * 2 - 1`)
            val = f"{x}{idx} * 2 - {self.rng.choice(['1', '0.5', 'True'])}"
        elif r < 0.7:
            try:
                target = self.ev(x + idx)
                val = self.second(1, target)
            except Exception:
                val = "0"
        else:
            src, _ = self.expr(1)
            val = src
        if self.rng.random() < 0.15:
            return f"{x}[..., 0] = {val}"
        if self.lib == "numpy" and ":" not in idx and "None" not in idx and \
                self.rng.random() < 0.3:
            # np.add.at / np.subtract.at: every repeated index adds again. (numpy 2.3's
            # ufunc.at crashes on None in an index, and on values that do not broadcast to
            # the indexed shape (np.add.at(bool_4x4, (..., -3), int16_5x4x4) segfaults), in the
            # generator's own eager run: those stay plain stores.)
            f = self.rng.choice(["np.add.at", "np.subtract.at"])
            if self._broadcasts_into(val, f"{x}{idx}"):
                return f"{f}({x}, ({idx[1:-1]},), {val})"
        return f"{x}{idx} = {val}"

    def _broadcasts_into(self, value_src, target_src):
        """Whether the value `value_src` broadcasts to the shape of `target_src`, both evaluated
        on the current values (False where either raises)."""
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                scope = dict(self.env)
                value = eval(value_src, self.G, scope)
                target = eval(target_src, self.G, scope)
            return np.broadcast_shapes(np.shape(value), np.shape(target)) == np.shape(target)
        except Exception:  # noqa: BLE001 - any failure: not a ufunc.at candidate
            return False

    def s_view(self):
        """A name for a view of an array, so that stores reach it through its base and the base
        through it (numpy and torch share the memory; a reshape of a non-contiguous array, or
        advanced indexing, is a copy instead)."""
        names = self.arrays(lambda v: len(_shape(v)) >= 1)
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        shape = _shape(self.env[x])
        views = [self.index_src(shape).replace("{a}", x), "[None]", ".reshape(-1)"]
        if len(shape) == 2:
            views.append(".t()" if self.lib == "torch" else ".T")
        views.append(".view(-1)" if self.lib == "torch" else ".ravel()")
        return f"{self.fresh()} = {x}{self.rng.choice(views)}"

    def s_copy(self):
        names = self.arrays()
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        return f"{x} = {x}.{'clone' if self.lib == 'torch' else 'copy'}()"

    def s_print(self):
        names = self.arrays()
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        opts = [f"print({x})", f"print({x}.shape, {x}.dtype)", f"print('sum', {x}.sum())",
                f"print(({x} > 0).sum())", f"print(f'{x}={{float({x}.sum()):.4f}}')",
                f"print({x}.ndim, len({x}.shape))"]
        return self.rng.choice(opts)

    def cond(self):
        names = self.arrays()
        if not names:
            raise GenFail("no arrays")
        x = self.rng.choice(names)
        if self.lib == "torch":
            opts = [f"{x}.sum() > 0", f"({x} > 0).any()", f"torch.all({x} < 3)",
                    f"{x}.max() > 1", f"{x}.shape[0] > 2", f"{x}.numel() > 3",
                    f"{x}.float().mean() < 0.5", f"not ({x} == 0).all()"]
        else:
            opts = [f"{x}.sum() > 0", f"({x} > 0).any()", f"np.all({x} < 3)", f"{x}.max() > 1",
                    f"{x}.shape[0] > 2" if _shape(self.env[x]) else f"{x}.ndim == 0",
                    f"{x}.size > 3", f"np.mean({x}) < 0.5", f"not ({x} == 0).all()"]
        sc = self.scalars()
        if sc and self.rng.random() < 0.2:
            return f"{self.rng.choice(sc)} > 0"
        return self.rng.choice(opts)

    def block(self, nstmts, allow_compound):
        """Generates statements on self.env (executing them); returns their source lines."""
        lines = []
        for _ in range(nstmts):
            stmt = self.statement(allow_compound)
            if stmt is not None:
                lines.extend(stmt.split("\n"))
        return lines

    def run_stmt(self, src, env):
        if self.py:
            return self.run_scoped(src, env)
        code = compile(src, "<gen>", "exec")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
                exec(code, self.G, env)

    def run_scoped(self, src, env):
        """Runs src as the body of a function of env's names, as it runs in f: closures,
        nonlocal and comprehensions see f's locals. What the body leaves bound becomes env;
        values the generator cannot copy (generators, iterators, views) are left out of it."""
        body = "".join(f"    {line}\n" for line in src.split("\n"))
        code = compile(f"def _scope({', '.join(env)}):\n{body}    return locals()\n",
                       "<gen>", "exec")
        ns = {}
        exec(code, self.G, ns)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
                out = ns["_scope"](**env)
        env.clear()
        env.update((k, v) for k, v in out.items() if pygen._deepcopyable(v))

    def s_compound(self):
        kind = self.rng.choice(["if", "if", "while", "for", "for"])
        saved = self.env
        self.env = _clone_env(saved)
        try:
            if kind == "if":
                head = f"if {self.cond()}:"
                body = self.block(self.rng.randint(1, 3), False)
                lines = [head] + ["    " + b for b in body]
                if self.rng.random() < 0.5:
                    self.env = _clone_env(saved)
                    other = self.block(self.rng.randint(1, 2), False)
                    lines += ["else:"] + ["    " + b for b in other]
                return "\n".join(lines)
            if kind == "for":
                # Four or more trips make a captured loop (a dyn.for; a dyn.while where a
                # `break` on a tensor leaves it, at the body's start or end).
                k = self.rng.choice([1, 2, 3, 4, 4, 6, 8])
                self.env["i"] = 0
                first = self.cond() if self.rng.random() < 0.2 else None
                body = self.block(self.rng.randint(1, 3), False)
                if first:
                    body = [f"if {first}:", "    break"] + body
                elif self.rng.random() < 0.25:
                    body += [f"if {self.cond()}:", "    break"]
                return "\n".join([f"for i in range({k}):"] + ["    " + b for b in body])
            n = f"n_{self.counter}"
            self.counter += 1
            self.env[n] = 0
            c = self.cond()
            if self.rng.random() < 0.3:  # tests joined by `or` too
                c = f"({c} or {self.cond()})"
            body = self.block(self.rng.randint(1, 3), False)
            bound = self.rng.randint(2, 5)
            return "\n".join([f"{n} = 0", f"while {c} and {n} < {bound}:"] +
                             ["    " + b for b in body] + [f"    {n} += 1"])
        finally:
            self.env = saved

    def s_py(self):
        return self.py.snippet()

    def s_py_small(self):
        return self.py.snippet(small=True)

    def statement(self, allow_compound=True):
        """One statement, validated on a copy of env and then executed on env."""
        kinds = ["assign"] * 8 + ["aug"] * 2 + ["store"] * 2 + ["view"] * 2 + ["copy"] + ["print"]
        if allow_compound:
            kinds += ["compound"] * 3
        if self.pure:  # no side effects or control flow: one graph when every op is supported
            kinds = ["assign"] * 8 + ["copy"]
        if self.py:
            kinds += ["py"] * 10 if allow_compound else ["py_small"] * 2
        for _ in range(12):
            kind = self.rng.choice(kinds)
            try:
                src = getattr(self, "s_" + kind)()
            except GenFail:
                self.broken = None
                continue
            except Exception:
                continue
            trial = _clone_env(self.env)
            try:
                self.run_stmt(src, trial)
            except Exception as e:
                if "\n" not in src:
                    self.failed = src
                continue
            if _too_big(trial, self.lib):
                continue
            try:
                self.run_stmt(src, self.env)
            except Exception:
                self.broken = src
                raise GenFail("statement raised on the real environment")
            return src
        return None

    def ret(self):
        names = self.arrays()
        pyvals = [k for k, v in self.env.items() if type(v) in (int, float, bool)
                  and not k.startswith("n_") and k != "i"]
        items = []
        pool = names[-4:] + names[:2]
        for _ in range(self.rng.randint(1, 3)):
            r = self.rng.random()
            x = self.rng.choice(pool) if pool else None
            if x is None or r < 0.1:
                items.append(self.rng.choice(pyvals) if pyvals else "None")
            elif r < 0.7:
                items.append(x)
            else:
                xv = self.env[x]
                opts = [f"float({x}.sum())", f"{x}.shape", f"{x}.sum()", f"{x}.ndim",
                        f"bool(({x} > 0).any())", f"{x}.max()" if _size(xv) else f"{x}.sum()",
                        f"{x}[0]" if _shape(xv) and _shape(xv)[0] else f"{x}.T"]
                if self.lib == "torch":
                    opts += [f"{x}.sum().item()", f"{x}.tolist()", f"{x}.size(0)"
                             if _shape(xv) else f"{x}.numel()"]
                    if _shape(xv):
                        opts.append(f"{x}.max(dim=0)")
                else:
                    opts += [f"int({x}.size)", f"{x}.dtype", f"{x}.mean()" if _size(xv) else
                             f"{x}.size", f"{x}.sum(keepdims=True)"]
                items.append(self.rng.choice(opts))
        r = self.rng.random()
        if len(items) == 1:
            if r < 0.08:
                return None
            if r < 0.2:
                return f"return ({items[0]},)"
            return f"return {items[0]}"
        if r < 0.45:
            return "return " + ", ".join(items)
        if r < 0.65:
            return "return [" + ", ".join(items) + "]"
        if r < 0.85:
            return "return {" + ", ".join(f"'r{j}': {it}" for j, it in enumerate(items)) + "}"
        return f"return {items[0]}, [" + ", ".join(items[1:]) + "]"

    # -- programs --------------------------------------------------------------------------------
    def generate(self):
        rng = self.rng
        # About a quarter of the programs are straight-line and side-effect free, so that
        # compiled graphs (not only graph breaks and resumes) are exercised.
        self.pure = rng.random() < 0.25
        nargs = rng.choice([1, 1, 2, 2, 2, 3])
        specs = []
        base = None
        names = ["x", "y", "z"]
        for j in range(nargs):
            if base is None or rng.random() < 0.25:
                r = rng.random()
                if r < 0.08:
                    shape = []
                else:
                    shape = [rng.randint(1, 5) for _ in range(rng.choice([1, 1, 2, 2, 2, 3]))]
                    if rng.random() < 0.06:
                        shape[rng.randrange(len(shape))] = 0
                    elif rng.random() < 0.05:
                        shape[rng.randrange(len(shape))] = 6
                base = shape
            else:
                shape = list(base)
                r = rng.random()
                if r < 0.3 and shape:
                    shape = shape[rng.randint(1, len(shape)):]
                elif r < 0.6 and shape:
                    shape[rng.randrange(len(shape))] = 1
                elif r < 0.7 and len(shape) == 2:
                    shape = shape[::-1]
            dt = self.pick_dtype() if j == 0 or rng.random() < 0.5 else specs[0]["dtype"]
            special = dt.startswith(("float", "int8", "int16", "uint")) and rng.random() < 0.1
            specs.append({"kind": "array", "shape": shape, "dtype": dt, "special": special})
        if rng.random() < 0.12:
            specs.append({"kind": "py", "value": rng.choice([2, 3, -1, 0.5, 1.5, True])})
            names.insert(len(specs) - 1, "k")
        argnames = names[:len(specs)]
        if self.py:
            argnames += self.py.add_inputs(specs)
        program = {"id": self.id, "lib": self.lib, "inputs": specs,
                   "input_seed": rng.getrandbits(32), "argnames": argnames}
        self.env = dict(zip(argnames, make_inputs(program)))
        self.failed = None
        self.broken = None
        body = []
        target = rng.randint(3, 10) + (6 if self.py else 0)  # (counted in lines)
        try:
            while len(body) < target:
                stmt = self.statement(True)
                if stmt is None:
                    break
                body.extend(stmt.split("\n"))
        except GenFail:
            if self.broken:
                body.extend(self.broken.split("\n"))
        if not body:
            body = ["pass"]
        if self.failed and not self.broken and rng.random() < 0.07:
            body.append(self.failed)  # raises in eager: Dynamir must raise the same type
        r = self.py.ret() if self.py and rng.random() < 0.4 else None
        r = r or self.ret()
        if r:
            body.append(r)
        header = "import numpy as np\n" + ("import torch\n" if self.lib == "torch" else "")
        kind, defs = self.lib, ""
        if self.py:
            imports, defs = self.py.header(body)
            header, kind = imports + header, f"{self.lib}, python"
        program["source"] = (f"# difftest program {self.id} ({kind})\n{header}\n\n{defs}"
                             f"def f({', '.join(argnames)}):\n" +
                             "".join(f"    {line}\n" for line in body))
        return program


def parse_id(pid, lib):
    parts = pid.split(":")
    if len(parts) == 3:
        lib = parts[2]
    return int(parts[0]), int(parts[1]), lib


def generate(seed, index, lib="both", py_fraction=PY_FRACTION):
    gen = Generator(seed, index, lib, py_fraction)
    try:
        return gen.generate()
    except Exception:
        # Generation itself must never stop a run: fall back to a trivial program.
        gen = Generator(seed, index, lib)
        gen.rng = random.Random(f"fallback:{seed}:{index}")
        p = {"id": gen.id, "lib": gen.lib, "argnames": ["x"], "input_seed": 1,
             "inputs": [{"kind": "array", "shape": [3], "dtype": "float32", "special": False}]}
        p["source"] = f"# difftest program {gen.id} (fallback)\nimport numpy as np\n" \
            + ("import torch\n" if gen.lib == "torch" else "") + "\n\ndef f(x):\n    return x + 1\n"
        return p


# ================================================================================================
# Comparison
# ================================================================================================

# float16: numpy rounds every intermediate of a half-precision expression (and reduction step)
# to half, compiled code may keep float32 in between; a few chained ops then differ by several
# half ulps (2**-11 relative each), so its tolerance is wider than 1 ulp.
RTOL = {"float16": 1e-2, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-11}

# The tolerance of the narrowest float dtype among the program's inputs (set per program): a
# float64 result computed from float32 data (a float32 matmul promoted by an int64 operand, then
# averaged) carries the float32 rounding of its inputs, which one compiled op may do
# differently from numpy (another summation order in a product) by an ulp.
_input_rtol = RTOL["float64"]


def _numpy_float16_approximate():
    """Whether numpy's float16 array math is approximate on this machine: with AVX-512 its
    float16 loops for tanh, sin, exp, log, ... are several float16 ulps from the rounded exact
    value (np.tanh of a float16 4.0 array is 0.9985; of the scalar, and rounded, 0.9995; 445 of
    1000 values in [0.01, 3] differ), where Dynamir computes in float32 and rounds once."""
    x = np.linspace(0.01, 3, 1000).astype(np.float16)
    return bool((np.tanh(x) != np.tanh(x.astype(np.float64)).astype(np.float16)).any())


_FLOAT16_APPROXIMATE = _numpy_float16_approximate()


def _computed_float(dt):
    """The float dtype numpy's float ufuncs compute an input of dtype `dt` in, where it is
    narrower than float64 and its rounding matters: the float itself; complex64's parts,
    float32 (a complex128 result of complex64 data carries their rounding, difftest
    293400046:28, an ulp of float32 apart); int16 and uint16 arrays' float32 (np.sinh of int16
    data is float32, an ulp from Dynamir's in a float64 product: 3073000006:12); int8, uint8
    and bool arrays' float16 where numpy's float16 math is approximate (a bool computed inside
    the program, `np.sinh(x > 0)`, is not seen here: such mismatches are numpy's error)."""
    dt = str(dt)
    if dt.startswith(("float", "bf")):
        return dt
    if dt in ("complex64", "int16", "uint16"):  # float32 parts, float32 math
        return "float32"
    if _FLOAT16_APPROXIMATE and dt in ("int8", "uint8", "bool"):
        return "float16"
    return "float64"


def _rtol(dt):
    return max(RTOL.get(dt, 1e-5), _input_rtol)


def _close(e, g, dt, ref=None):
    """First differing element of two equal-shape numpy arrays, or None. `ref`, when given, is
    the program's float64 result (its float inputs promoted): where eager itself is that far
    from it, Dynamir may be as far (rounding that the program amplifies, e.g. the cos of the
    square of a float32 matmul whose summation order differs). Complex numbers compare by
    their parts."""
    if dt.startswith("complex"):
        part = {"complex32": "float16", "complex64": "float32"}.get(dt, "float64")
        for take in (np.real, np.imag):
            r = None if ref is None else take(np.asarray(ref))
            if (bad := _close(take(e), take(g), part, r)) is not None:
                return f"{take.__name__} part {bad}"
        return None
    if dt == "bool" or not dt.startswith(("float", "bfloat", "complex")):
        if np.array_equal(e, g):
            return None
        ok = e == g
        if ref is not None and np.shape(ref) == np.shape(e):
            # Integers and bools computed from floats (`(2.0 ** x).long()`, `x > t`) carry the
            # floats' rounding: where eager is off the float64 result, Dynamir may be as far
            # (9130101:797). Where eager equals it, as every purely integer result does, the
            # values must be equal.
            e64, g64, r64 = (np.asarray(a, dtype=np.float64) for a in (e, g, ref))
            with np.errstate(all="ignore"):
                ok |= np.abs(g64 - r64) <= 4 * np.abs(e64 - r64)
            if ok.all():
                return None
        bad = np.argwhere(~ok)
        i = tuple(bad[0]) if len(bad) else ()
        return f"at {list(i)}: expected {e[i]!r}, got {g[i]!r} ({len(bad)} differ)"
    e64 = e.astype(np.float64)
    g64 = g.astype(np.float64)
    en, gn = np.isnan(e64), np.isnan(g64)
    rtol = _rtol(dt)
    fin = np.isfinite(e64)
    # A wide result whose expected values all fit a narrower float type was most likely
    # computed in that type and cast up (x.double() of a float32 matmul): use its tolerance.
    if dt == "float64":
        with np.errstate(all="ignore"):
            if (e64[fin].astype(np.float32).astype(np.float64) == e64[fin]).all():
                rtol = max(rtol, RTOL["float32"])
    scale = max(1.0, float(np.abs(e64[fin]).max())) if fin.any() else 1.0
    with np.errstate(all="ignore"):
        ok = (en & gn) | (e64 == g64) | (fin & np.isfinite(g64) &
                                          (np.abs(e64 - g64) <= rtol * np.abs(e64) + rtol * scale))
        if ref is not None and np.shape(ref) == e64.shape:
            r64 = np.asarray(ref, dtype=np.float64)
            ok |= fin & np.isfinite(g64) & np.isfinite(r64) & (
                np.abs(g64 - r64) <= 4 * np.abs(e64 - r64) + rtol * np.abs(e64) + rtol * scale)
        if _FLOAT16_APPROXIMATE:
            # A float16 computed inside the program (np.sinh(x > 0), float16 of a bool), where
            # numpy's float16 math is approximate, carries numpy's error into a wider result:
            # both values on float16's grid, at most 2 of its steps apart, are not a wrong
            # answer (3060000022:13: numpy's sinh(True) is 1.17578125, the rounded 1.1748046875).
            e16, g16 = e64.astype(np.float16), g64.astype(np.float16)
            ok |= (fin & (e16 == e64) & (g16 == g64) &
                   (np.abs(e64 - g64) <= 2 * np.spacing(np.abs(e16)).astype(np.float64)))
        # The sign of a max or min of +0 and -0 is unspecified (numpy, torch.amax and torch.max
        # each answer by their own reduction order), and 1 / +-0 turns it into +-inf: a
        # difference in sign alone, of zeros or infinities, is not a wrong answer.
        ok |= (e64 == -g64) & ((e64 == 0) | np.isinf(e64))
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    i = tuple(bad[0])
    return f"at {list(i)}: expected {e[i]!r}, got {g[i]!r} ({len(bad)} of {e.size} differ)"


def _typename(o):
    t = type(o)
    return f"{t.__module__}.{t.__qualname__}"


def _program_fields(o):
    """A namedtuple, dataclass or object of a class the program defines, as a dict of its
    fields ('<class>' names the type), else None. Each mode loads the program's module afresh,
    so eager's and Dynamir's results are of two classes of the same name."""
    t = type(o)
    if not t.__module__.startswith("difftest_") or isinstance(o, (type, BaseException)):
        return None
    if isinstance(o, tuple) and hasattr(t, "_fields"):
        return {"<class>": t.__qualname__, **dict(zip(t._fields, o))}
    if isinstance(o, (tuple, list, dict)) or not hasattr(o, "__dict__"):
        return None
    return {"<class>": t.__qualname__, **vars(o)}


def diff(e, g, path="result", ref=None):
    """The first difference between expected e and got g, as 'category: text', or None. `ref`
    is the same program's float64 result, traversed alongside (see _close)."""
    if type(e) is not type(g):
        fe, fg = _program_fields(e), _program_fields(g)
        if fe is not None and fg is not None:
            return diff(fe, fg, path, _program_fields(ref))
        return f"type: {path}: expected {_typename(e)} {_short(e)}, got {_typename(g)} {_short(g)}"
    torch = sys.modules.get("torch")
    if isinstance(e, (tuple, list)):
        if len(e) != len(g):
            return f"structure: {path}: expected length {len(e)}, got {len(g)}"
        refs = ref if isinstance(ref, (tuple, list)) and len(ref) == len(e) else [None] * len(e)
        for j, (a, b, r) in enumerate(zip(e, g, refs)):
            d = diff(a, b, f"{path}[{j}]", r)
            if d:
                return d
        return None
    if isinstance(e, dict):
        if list(e) != list(g):
            return f"structure: {path}: keys {list(e)} vs {list(g)}"
        for k in e:
            d = diff(e[k], g[k], f"{path}[{k!r}]", ref.get(k) if isinstance(ref, dict) else None)
            if d:
                return d
        return None
    if torch is not None and isinstance(e, torch.Tensor):
        if e.dtype != g.dtype:
            return f"dtype: {path}: expected {e.dtype}, got {g.dtype}"
        if tuple(e.shape) != tuple(g.shape):
            return f"shape: {path}: expected {tuple(e.shape)}, got {tuple(g.shape)}"
        # numpy has no complex32 (torch's ComplexHalf: a float16 tensor - 1j): compared as
        # complex64, at float16's tolerance (_close's "complex32").
        def host(t):
            t = t.detach().cpu()
            return (t.to(torch.complex64) if t.dtype == torch.complex32 else t).numpy()
        if isinstance(ref, torch.Tensor):
            ref = host(ref)
        dt = "complex32" if e.dtype == torch.complex32 else _dt(e)
        d = _close(host(e), host(g), dt, ref)
        return f"value: {path}: {d}" if d else None
    if isinstance(e, (np.ndarray, np.generic)):
        if e.dtype != g.dtype:
            return f"dtype: {path}: expected {e.dtype}, got {g.dtype}"
        if np.shape(e) != np.shape(g):
            return f"shape: {path}: expected {np.shape(e)}, got {np.shape(g)}"
        d = _close(np.asarray(e), np.asarray(g), str(e.dtype),
                   ref if isinstance(ref, (np.ndarray, np.generic)) else None)
        return f"value: {path}: {d}" if d else None
    if type(e) is complex and type(g) is complex:
        # A Python complex from .tolist()/.item() of a complex array: each part as a float (a
        # NaN part never equals itself; 3112000010:1 compared eager's nan+nanj with its own).
        r = ref if type(ref) is complex else None
        return (diff(e.real, g.real, f"{path}.real", None if r is None else r.real) or
                diff(e.imag, g.imag, f"{path}.imag", None if r is None else r.imag))
    if isinstance(e, float):
        if e == g or (math.isnan(e) and math.isnan(g)):
            return None
        # A Python float from .item()/float() of an array: its tolerance is that of the
        # narrowest float type that holds both values exactly.
        dt = "float64"
        for t in ("float16", "float32"):
            with np.errstate(all="ignore"):
                if float(getattr(np, t)(e)) == e and float(getattr(np, t)(g)) == g:
                    dt = t
                    break
        tol = _rtol(dt) * (abs(e) + max(1.0, abs(e)))
        if math.isfinite(e) and math.isfinite(g) and abs(e - g) <= tol:
            return None
        if type(ref) is float and math.isfinite(g) and math.isfinite(ref) and \
                abs(g - ref) <= 4 * abs(e - ref) + tol:  # as far as eager from float64 (_close)
            return None
        return f"value: {path}: expected {e!r}, got {g!r}"
    try:
        if e == g:
            return None
    except Exception:
        return None
    return f"value: {path}: expected {_short(e)}, got {_short(g)}"


def _short(o):
    s = repr(o).replace("\n", " ")
    return s if len(s) < 120 else s[:117] + "..."


_NUM = re.compile(r"-?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?|inf|nan)")


def diff_stdout(e, g):
    if e == g:
        return None
    te, tg = _NUM.split(e), _NUM.split(g)
    ne, ng = _NUM.findall(e), _NUM.findall(g)
    # numpy pads printed numbers to a column's widest one (`-4.725301j ]` where the widest
    # has one digit more): whitespace between numbers is not compared.
    if ["".join(t.split()) for t in te] == ["".join(t.split()) for t in tg] and \
            len(ne) == len(ng):
        good = True
        for a, b in zip(ne, ng):
            fa, fb = float(a), float(b)
            if not (fa == fb or (math.isnan(fa) and math.isnan(fb)) or
                    abs(fa - fb) <= 2e-3 * max(1.0, abs(fa)) + 1e-4 * max(1.0, abs(fa))):
                good = False
                break
        if good:
            return None
    return f"stdout: expected {e[-300:]!r}, got {g[-300:]!r}"


# ================================================================================================
# Worker
# ================================================================================================

class Capture:
    """Captures Python-level and fd-level stdout of one call."""

    def __init__(self, fd_file):
        self.fd_file = fd_file

    def __enter__(self):
        self.buf = io.StringIO()
        try:  # fd 1 is a file in a worker; elsewhere only Python-level output is captured
            self.pos = os.lseek(1, 0, os.SEEK_END)
        except OSError:
            self.pos = None
        self.redirect = contextlib.redirect_stdout(self.buf)
        self.redirect.__enter__()
        return self

    def __exit__(self, *exc):
        self.redirect.__exit__(*exc)
        try:
            import ctypes
            ctypes.CDLL(None).fflush(None)
        except Exception:
            pass
        native = b""
        end = os.lseek(1, 0, os.SEEK_END) if self.pos is not None else None
        if end is not None and end > self.pos:
            native = os.pread(1, end - self.pos, self.pos)
        self.text = self.buf.getvalue() + native.decode("utf-8", "replace")
        return False


def load_function(program, path):
    import importlib.util
    name = "difftest_" + re.sub(r"\W", "_", program["id"])
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module.f


def call_once(fn, program, resize=None):
    args = make_inputs(program, resize)
    result, exc = None, None
    with Capture(None) as cap:
        try:
            result = fn(*args)
        except Exception as e:  # noqa: BLE001
            exc = e
    return result, exc, args, cap.text


# An argument's state after an eager exception that eager itself does not repeat (eager_call).
UNDEFINED = object()


def _traced_call(fn, program, resize):
    """Runs fn once more with a line tracer on its own frame: its arguments as the line that
    raised found them (copies taken at each line's start) and as it left them, or None when it
    does not raise this time."""
    args = make_inputs(program, resize)
    code = getattr(fn, "__code__", None)
    before = [None]

    def tracer(frame, event, arg):
        if frame.f_code is not code:
            return None
        if event == "line":
            before[0] = copy.deepcopy(args)
        return tracer

    raised = False
    sys.settrace(tracer)
    try:
        with Capture(None):
            fn(*args)
    except Exception:  # noqa: BLE001
        raised = True
    finally:
        sys.settrace(None)
    return (before[0], args) if raised and before[0] is not None else None


def eager_call(fn, program, resize=None):
    """call_once for eager. Where eager raises, an argument that the statement that raised
    changed is undefined: numpy's ufunc with a cast (`x **= y` of int32 x and a negative int64
    y) raises after it wrote its buffer's garbage into x, which differs with the allocator's
    state (3054000006:23, 3115000019:96). Eager runs once more under a line tracer that copies
    the arguments at each of f's lines; those the raising line changed, or that this run leaves
    other than the first, come back as UNDEFINED, which no result is compared with."""
    first = call_once(fn, program, resize)
    if first[1] is None:
        return first
    args = list(first[2])
    traced = _traced_call(fn, program, resize)
    if traced is None:  # eager does not repeat its own exception: nothing is defined
        return first[0], first[1], [UNDEFINED] * len(args), first[3]
    before, after = traced
    args = [UNDEFINED if diff(b, a) or diff(x, a) else x
            for x, b, a in zip(args, before, after)]
    return first[0], first[1], args, first[3]


def _nudged(value, toward):
    """`value` (an input, nested in lists, tuples and dicts) with every float element moved one
    ulp toward `toward` (+inf or -inf)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return np.nextafter(value, np.asarray(toward, value.dtype))
    if isinstance(value, (list, tuple)):
        return type(value)(_nudged(v, toward) for v in value)
    if isinstance(value, dict):
        return {k: _nudged(v, toward) for k, v in value.items()}
    if _torch is not None and isinstance(value, _torch.Tensor) and value.is_floating_point():
        try:
            return _torch.nextafter(value, _torch.full_like(value, toward))
        except RuntimeError:  # a dtype torch has no nextafter for
            return value
    return value


def ill_conditioned_like(fn, program, resize, got):
    """Whether eager on the inputs moved by one ulp (all up, or all down) gives `got`: a result
    that an ulp of input changes (the sign of a sum that cancels to 2e-16: 3123000004:8) is
    defined no better than that, and another summation order may land on either side."""
    for toward in (np.inf, -np.inf):
        args = [_nudged(a, toward) for a in make_inputs(program, resize)]
        with Capture(None):
            try:
                result = fn(*args)
            except Exception:  # noqa: BLE001
                continue
        if diff(result, got) is None:
            return True
    return False


def float64_result(fn, program, resize=None):
    """The program's result and its arguments after the call, with its float inputs promoted
    to float64 (complex ones to complex128: 3054000005:13, a complex64 power near 1e24 whose
    float32 rounding the sum of its columns amplifies), or (None, None) if it raises. (The
    arguments are the reference of what the program stores into them: 3072000015:1 appends
    the sin of a float16 sinh near 1000, whose ulp changes the sine's sign.)
    torch's default dtype is float64 meanwhile, so float ops of bool and integer tensors
    (torch.sin of a mask) are float64 too: their float32 rounding, mixed into a float64 result,
    is eager's own distance from the reference (4242002:775, 4242040:24 with
    --py-fraction 1)."""
    def promote(a):
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
            return a.astype(np.promote_types(a.dtype, np.float64))
        if hasattr(a, "is_floating_point") and a.is_floating_point():
            return a.double()
        if hasattr(a, "is_complex") and a.is_complex():
            return a.cdouble()
        if type(a) is list:
            return [promote(x) for x in a]
        if type(a) is dict:
            return {k: promote(x) for k, x in a.items()}
        return a

    args = [promote(a) for a in make_inputs(program, resize)]
    torch = sys.modules.get("torch")
    default = torch.get_default_dtype() if torch is not None else None
    with Capture(None):
        try:
            if torch is not None:
                torch.set_default_dtype(torch.float64)
            return fn(*args), args
        except Exception:  # noqa: BLE001
            return None, None
        finally:
            if torch is not None:
                torch.set_default_dtype(default)


def check_program(program, workdir, modes=None):
    """Runs one program eagerly and in every Dynamir mode (its own `modes`, if it names
    them); returns a result dict."""
    import dynamir
    modes = modes or program.get("modes") or MODES
    path = os.path.join(workdir, "difftest_" + re.sub(r"\W", "_", program["id"]) + ".py")
    with open(path, "w") as fh:
        fh.write(program["source"])
    if hasattr(dynamir, "reset"):
        dynamir.reset()
    fn = load_function(program, path)
    global _input_rtol
    # (The corpus's programs describe their inputs otherwise and keep float64's tolerance.)
    specs = program.get("inputs")
    # A float dtype the program converts to (`.astype(np.float32)`, `.half()`) carries its
    # rounding into wider results as an input's does (3073000020:92: np.exp of a float32 1, an
    # ulp from numpy's, in a float64 sum).
    source = program.get("source", "")
    named = [dt for dt, spellings in (("float32", ("float32", ".float()")),
                                      ("float16", ("float16", ".half()")),
                                      ("bfloat16", ("bfloat16",)))
             if any(s in source for s in spellings)]
    _input_rtol = max([RTOL["float64"]] + [RTOL[dt] for dt in named] + [
        RTOL.get(_computed_float(spec["dtype"]), RTOL["float64"])
        for spec in array_specs(specs)])
    eager = {None: eager_call(fn, program)}
    eager_fn, reference = fn, {}
    failures = []
    stats = {}
    for mode, kwargs in modes:
        if hasattr(dynamir, "reset"):
            dynamir.reset()
        fn = load_function(program, path)
        try:
            compiled = dynamir.compile(fn, **kwargs)
        except Exception as e:  # noqa: BLE001
            failures.append({"mode": mode, "call": 0,
                             "diff": f"exception: dynamir.compile raised {_typename(e)}: {e}"})
            continue
        resizes = DYNAMIC_CALLS if kwargs.get("dynamic") else (None,) * CALLS
        for call, resize in enumerate(resizes, start=1):
            if resize not in eager:  # eager on the same new sizes
                eager[resize] = eager_call(eager_fn, program, resize)
            e_res, e_exc, e_args, e_out = eager[resize]
            g_res, g_exc, g_args, g_out = call_once(compiled, program, resize)
            if mode == "default" and call == 1 and hasattr(dynamir, "counters"):
                c = dynamir.counters()  # what the first call did: breaks hit, eager runs
                stats["first_call"] = {k: c.get(k, 0) for k in ("eager_runs",
                                                                "graph_breaks_hit")}
            d = None
            if e_exc is not None or g_exc is not None:
                if e_exc is None:
                    tb = "".join(traceback.format_exception(g_exc))[-1500:]
                    d = f"exception: eager returned, Dynamir raised {_typename(g_exc)}: " \
                        f"{str(g_exc)[:500]}\n{tb}"
                elif g_exc is None:
                    d = f"exception: eager raised {_typename(e_exc)}: {str(e_exc)[:300]}, " \
                        f"Dynamir returned {_short(g_res)}"
                elif type(e_exc) is not type(g_exc):
                    d = f"exception: eager raised {_typename(e_exc)}: {str(e_exc)[:300]}, " \
                        f"Dynamir raised {_typename(g_exc)}: {str(g_exc)[:300]}"
            else:
                d = diff(e_res, g_res)
                if d and d.startswith("value:"):
                    if resize not in reference:
                        reference[resize] = float64_result(eager_fn, program, resize)
                    d = diff(e_res, g_res, ref=reference[resize][0])
                if d and d.startswith("value:") and \
                        ill_conditioned_like(eager_fn, program, resize, g_res):
                    d = None
            if d is None:
                for i, (name, a, b) in enumerate(zip(program["argnames"], e_args, g_args)):
                    if a is UNDEFINED:
                        continue
                    d = diff(a, b, f"argument {name} after the call")
                    if d and d.startswith("value:"):
                        if resize not in reference:
                            reference[resize] = float64_result(eager_fn, program, resize)
                        ref_args = reference[resize][1]
                        d = diff(a, b, f"argument {name} after the call",
                                 ref=ref_args[i] if ref_args is not None else None)
                    if d:
                        d = "args-" + d
                        break
            if d is None:
                d = diff_stdout(e_out, g_out)
            if d:
                failures.append({"mode": mode, "call": call, "diff": d})
                break
        if mode == "default" and hasattr(dynamir, "counters"):
            try:
                c = dynamir.counters()
                stats.update({k: c.get(k, 0) for k in ("frames_traced", "graphs_compiled",
                                                       "eager_runs", "graph_breaks_hit")})
            except Exception:  # noqa: BLE001
                pass
    try:
        os.unlink(path)
    except OSError:
        pass
    return {"id": program["id"], "status": "mismatch" if failures else "ok",
            "failures": failures, "stats": stats,
            "eager_exception": _typename(eager[None][1]) if eager[None][1] is not None else None}


def worker_main(proto_fd):
    proto = os.fdopen(proto_fd, "w", buffering=1)
    workdir = tempfile.mkdtemp(prefix="difftest-work-")
    # fd 1 becomes a file, so native output of compiled code is captured and cannot corrupt
    # the protocol.
    cap = tempfile.TemporaryFile(dir=workdir)
    os.dup2(cap.fileno(), 1)
    sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(1), "wb"), line_buffering=True)
    warnings.simplefilter("ignore")
    if "torch" in sys.argv:
        torch_module()
    import dynamir  # noqa: F401
    proto.write(json.dumps({"ready": True}) + "\n")
    for line in sys.stdin:
        program = json.loads(line)
        start = time.time()
        print(f"=== program {program['id']}", file=sys.stderr, flush=True)
        try:
            res = check_program(program, workdir)
        except BaseException as e:  # noqa: BLE001
            res = {"id": program["id"], "status": "mismatch", "eager_exception": None,
                   "failures": [{"mode": "tester", "call": 0,
                                 "diff": "internal: " + "".join(
                                     traceback.format_exception(e))[-1500:]}]}
        res["seconds"] = round(time.time() - start, 3)
        proto.write(json.dumps(res) + "\n")


# ================================================================================================
# Pool
# ================================================================================================

class Worker:
    def __init__(self, k, cache_dir, log_dir, need_torch):
        self.k = k
        self.cache_dir = cache_dir
        self.log_path = os.path.join(log_dir, f"worker{k}.stderr")
        self.need_torch = need_torch
        self.proc = None
        self.start()

    def start(self):
        r, w = os.pipe()
        env = dict(os.environ)
        env["DYNAMIR_CACHE_DIR"] = self.cache_dir
        env.setdefault("OMP_NUM_THREADS", "1")
        env["PYTHONFAULTHANDLER"] = "1"
        self.log = open(self.log_path, "ab")
        argv = [sys.executable, os.path.abspath(__file__), "--worker", str(w)]
        if self.need_torch:
            argv.append("torch")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stderr=self.log,
                                     stdout=subprocess.DEVNULL, pass_fds=(w,), env=env)
        os.close(w)
        self.rfd = r
        self.buf = b""
        self.program = None
        self.started = None
        self.ready = False

    def readlines(self):
        try:
            chunk = os.read(self.rfd, 1 << 20)
        except OSError:
            chunk = b""
        if not chunk:
            return None
        self.buf += chunk
        lines = []
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            lines.append(json.loads(line))
        return lines

    def send(self, program):
        self.program = program
        self.started = time.time()
        self.log.flush()
        self.log_offset = os.path.getsize(self.log_path)
        self.proc.stdin.write((json.dumps(program) + "\n").encode())
        self.proc.stdin.flush()

    def stderr_tail(self):
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(getattr(self, "log_offset", 0))
                return fh.read().decode("utf-8", "replace")[-2000:]
        except OSError:
            return ""

    def kill(self):
        try:
            self.proc.kill()
        except OSError:
            pass
        self.proc.wait()
        os.close(self.rfd)
        self.log.close()

    def restart(self):
        self.kill()
        self.start()


def run_programs(programs, jobs=2, timeout=60.0, log=None, cache_dir=None):
    """Runs programs (an iterable of program dicts) on `jobs` workers; yields result dicts."""
    programs = iter(programs)
    own_dir = tempfile.mkdtemp(prefix="difftest-")
    cache_dir = cache_dir or os.path.join(own_dir, "cache")
    os.makedirs(cache_dir, exist_ok=True)
    pending = collections.deque()
    need_torch = True
    workers = [Worker(k, cache_dir, own_dir, need_torch) for k in range(jobs)]
    exhausted = False
    try:
        while True:
            for w in workers:
                if w.ready and w.program is None:
                    if not pending and not exhausted:
                        try:
                            pending.append(next(programs))
                        except StopIteration:
                            exhausted = True
                    if pending:
                        w.send(pending.popleft())
            busy = [w for w in workers if w.program is not None or not w.ready]
            if not busy and exhausted and not pending:
                return
            readable, _, _ = select.select([w.rfd for w in busy], [], [], 1.0)
            now = time.time()
            for w in busy:
                if w.rfd in readable:
                    lines = w.readlines()
                    if lines is None:  # the worker died
                        code = w.proc.wait()
                        tail = w.stderr_tail()
                        program = w.program
                        seconds = round(now - (w.started or now), 3)
                        w.restart()
                        if program is None:
                            raise RuntimeError(f"difftest worker failed to start:\n{tail}")
                        how = f"signal {-code} ({signal.Signals(-code).name})" if code < 0 \
                            else f"exit code {code}"
                        yield {"id": program["id"], "status": "crash", "program": program,
                               "failures": [{"mode": "?", "call": 0,
                                             "diff": f"crash: worker died with {how}\n{tail}"}],
                               "seconds": seconds}
                        continue
                    for msg in lines:
                        if msg.get("ready"):
                            w.ready = True
                            continue
                        msg["program"] = w.program
                        w.program = None
                        yield msg
                elif w.program is not None and now - w.started > timeout:
                    program = w.program
                    seconds = round(now - w.started, 3)
                    w.restart()
                    yield {"id": program["id"], "status": "timeout", "program": program,
                           "failures": [{"mode": "?", "call": 0,
                                         "diff": f"timeout: no result after {timeout:.0f} s"}],
                           "seconds": seconds}
    finally:
        for w in workers:
            try:
                w.proc.stdin.close()
            except OSError:
                pass
            w.kill()
        import shutil
        shutil.rmtree(own_dir, ignore_errors=True)


def run_seed(seed, count, jobs=2, lib="both", timeout=60.0, progress=False,
             py_fraction=PY_FRACTION):
    """Generates and runs `count` programs of `seed`; returns the list of results."""
    def programs():
        for i in range(count):
            yield generate(seed, i, lib, py_fraction)
    results = []
    for res in run_programs(programs(), jobs=jobs, timeout=timeout):
        results.append(res)
        if progress and len(results) % 50 == 0:
            bad = sum(r["status"] != "ok" for r in results)
            print(f"  ... {len(results)}/{count} ({bad} failing)", file=sys.stderr, flush=True)
    return results


def coverage(results):
    """What the programs exercised (default mode): how many compiled a graph, hit a graph
    break at run time, ran eagerly, and how many raise in eager."""
    n = max(1, len(results))
    st = [r.get("stats") or {} for r in results]
    compiled = sum(s.get("graphs_compiled", 0) > 0 for s in st)
    breaks = sum(s.get("graph_breaks_hit", 0) > 0 for s in st)
    eager = sum(s.get("eager_runs", 0) > 0 for s in st)
    raising = sum(bool(r.get("eager_exception")) for r in results)
    return (f"coverage: {100 * compiled / n:.0f}% compiled a graph, {100 * breaks / n:.0f}% hit a "
            f"graph break, {100 * eager / n:.0f}% ran (partly) eagerly, {100 * raising / n:.0f}% "
            f"raise in eager")


def summary(results, seeds):
    c = collections.Counter(r["status"] for r in results)
    return (f"difftest: {len(results)} programs, {c['ok']} ok, {c['mismatch']} mismatch, "
            f"{c['crash']} crash, {c['timeout']} timeout (seed {', '.join(map(str, seeds))})")


def classify(res):
    """A one-line failure class (mode-independent), for grouping and for KNOWN_FAILURES."""
    f = res["failures"][0]
    d = f["diff"]
    first = d.split("\n", 1)[0]
    if res["status"] == "crash":
        tail = d.split("\n", 1)[1] if "\n" in d else ""
        m = re.search(r"(LLVM ERROR: [^\n]{0,80}|Assertion [^\n]{0,100}|error: [^\n]{0,80})", tail)
        sig = re.search(r"signal \d+ \((\w+)\)|exit code -?\d+", first)
        what = re.sub(r"-?\d+", "_", m.group(1)) if m else ""
        return f"crash {sig.group(1) if sig and sig.group(1) else first[25:]}" + \
            (f": {what}" if m else "")
    if res["status"] == "timeout":
        return "timeout"
    cat, _, rest = first.partition(": ")
    if cat == "exception":
        m = re.search(r"Dynamir raised ([\w.]+): (.{0,70})", first)
        text = re.sub(r"'[^']*'|\d+", "_", m.group(2)) if m else ""
        e = re.search(r"error: ('[\w.]+' op )?(.{0,60})", d)
        if m and "MLIRError" in m.group(1) and e:
            op = e.group(1) or ""
            text = op + re.sub(r"\d+", "_", e.group(2))
        if first.startswith("exception: eager raised") and "Dynamir returned" in first:
            raised = re.search(r"raised ([\w.]+)", first).group(1)
            return f"exception: eager raises {raised}, Dynamir returns"
        return f"exception: Dynamir raises {m.group(1) if m else '?'}: {text}"
    if cat == "type":
        m = re.search(r"expected ([\w.]+) .*got ([\w.]+)", rest)
        return f"type: {m.group(1)} -> {m.group(2)}" if m else "type"
    if cat in ("dtype", "args-dtype"):
        m = re.search(r"expected (\S+), got (\S+)", rest)
        return f"{cat}: {m.group(1)} -> {m.group(2)}" if m else cat
    return cat


def format_failure(res):
    lines = [f"### {res['id']} [{res['status']}]" +
             (f" (eager raises {res['eager_exception']})" if res.get("eager_exception") else "")]
    lines.append(res["program"]["source"].rstrip())
    lines.append(f"# inputs: {json.dumps(res['program']['inputs'])}")
    for f in res["failures"]:
        lines.append(f"-> mode={f['mode']} call={f['call']}: {f['diff'].rstrip()}")
    return "\n".join(lines) + "\n"


def write_report(results, out, seeds):
    os.makedirs(out, exist_ok=True)
    failing = [r for r in results if r["status"] != "ok"]
    with open(os.path.join(out, "report.json"), "w") as fh:
        json.dump({"summary": summary(results, seeds), "seeds": seeds,
                   "failures": [{"id": r["id"], "status": r["status"],
                                 "source": r["program"]["source"],
                                 "inputs": r["program"]["inputs"],
                                 "eager_exception": r.get("eager_exception"),
                                 "failures": r["failures"]} for r in failing],
                   "seconds": {r["id"]: r.get("seconds") for r in results}}, fh, indent=1)
    with open(os.path.join(out, "report.txt"), "w") as fh:
        fh.write(summary(results, seeds) + "\n\n")
        for r in failing:
            fh.write(format_failure(r) + "\n")


# ================================================================================================
# Minimizer
# ================================================================================================

def _signature(res):
    if res["status"] in ("crash", "timeout"):
        return {(res["status"], "?")}
    return {(f["mode"], f["diff"].split(":", 1)[0]) for f in res["failures"]}


def minimize(pid, lib, timeout=60.0, py_fraction=PY_FRACTION):
    """Deletes statements (a block with its header) while the failure keeps its signature and
    eager keeps its outcome. One worker serves every candidate."""
    seed, index, lib = parse_id(pid, lib)
    program = generate(seed, index, lib, py_fraction)
    state = {"lines": program["source"].split("\n"), "target": None, "eager": None}

    def candidates():
        yield program
        if state["target"] is None:
            return
        changed = True
        while changed:
            changed = False
            j = len(state["lines"]) - 1
            while j >= 0:
                lines = state["lines"]
                line = lines[j] if j < len(lines) else ""
                if not line.startswith("    ") or line.startswith("    return"):
                    j -= 1
                    continue
                indent = len(line) - len(line.lstrip())
                end = j + 1
                if line.rstrip().endswith(":"):
                    while end < len(lines) and lines[end].strip() and \
                            len(lines[end]) - len(lines[end].lstrip()) > indent:
                        end += 1
                cand = lines[:j] + lines[end:]
                try:
                    compile("\n".join(cand), "<min>", "exec")
                except SyntaxError:
                    j -= 1
                    continue
                state["accepted"] = False
                yield dict(program, source="\n".join(cand))
                if state["accepted"]:
                    state["lines"] = cand
                    changed = True
                    print(f"  removed: {line.strip()}", file=sys.stderr)
                j -= 1

    for res in run_programs(candidates(), jobs=1, timeout=timeout):
        if state["target"] is None:
            if res["status"] == "ok":
                print(f"{pid} passes; nothing to minimize", file=sys.stderr)
                return program
            state["target"] = _signature(res)
            state["eager"] = res.get("eager_exception")
            print(f"minimizing {pid}: {sorted(state['target'])}", file=sys.stderr)
            continue
        state["accepted"] = bool(_signature(res) & state["target"]) and \
            res.get("eager_exception") == state["eager"]
    return dict(program, source="\n".join(state["lines"]))


# ================================================================================================
# CLI
# ================================================================================================

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=None)
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--lib", choices=["numpy", "torch", "both"], default="both")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--py-fraction", type=float, default=PY_FRACTION, metavar="P",
                    help=f"fraction of programs with Python constructs (default {PY_FRACTION}); "
                    "ids depend on it")
    ap.add_argument("--show", metavar="ID")
    ap.add_argument("--minimize", metavar="ID")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args, rest = ap.parse_known_args(argv)
    if args.worker is not None:
        worker_main(args.worker)
        return 0
    if args.show:
        seed, index, lib = parse_id(args.show, args.lib)
        p = generate(seed, index, lib, args.py_fraction)
        print(p["source"], end="")
        print(f"# inputs: {json.dumps(p['inputs'])} (input seed {p['input_seed']})")
        return 0
    if args.minimize:
        p = minimize(args.minimize, args.lib, timeout=args.timeout, py_fraction=args.py_fraction)
        print(p["source"], end="")
        print(f"# inputs: {json.dumps(p['inputs'])} (input seed {p['input_seed']})")
        return 0
    results, seeds = [], []
    if args.minutes is not None:
        # One worker pool for the whole run: seed, seed+1, ... (--count programs each).
        deadline = time.time() + args.minutes * 60
        first = args.seed if args.seed is not None else int(time.time()) % 1000000007

        def stream():
            seed = first
            while True:
                seeds.append(seed)
                print(f"difftest: seed {seed}", flush=True)
                for i in range(args.count):
                    if time.time() >= deadline:
                        return
                    yield generate(seed, i, args.lib, args.py_fraction)
                seed += 1
        for res in run_programs(stream(), jobs=args.jobs, timeout=args.timeout):
            results.append(res)
    else:
        seed = args.seed if args.seed is not None else int(time.time()) % 1000000007
        seeds.append(seed)
        results = run_seed(seed, args.count, jobs=args.jobs, lib=args.lib,
                           timeout=args.timeout, progress=True, py_fraction=args.py_fraction)
    for r in results:
        if r["status"] != "ok":
            print(format_failure(r), file=sys.stderr)
    classes = collections.Counter(classify(r) for r in results if r["status"] != "ok")
    for cls, n in classes.most_common():
        print(f"{n:6d}  {cls}")
    print(coverage(results))
    line = summary(results, seeds)
    if args.out:
        write_report(results, args.out, seeds)
        line += f"; report in {os.path.join(args.out, 'report.txt')}"
    print(line)
    return 1 if any(r["status"] != "ok" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
