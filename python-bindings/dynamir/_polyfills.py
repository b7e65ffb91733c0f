"""Python versions of builtins and library functions, written for Dynamir's tracer.

When traced code calls `sum`, `sorted`, `map`, `zip`, `itertools.chain`, `functools.reduce`,
`operator.add`, ... with arguments that are not all Python constants (tensors, lambdas,
generators), the tracer inlines the polyfill REGISTRY names for it instead, as TorchDynamo
does with its polyfills: the tensors flow through ordinary Python the tracer models, and what
it cannot model (a comparison of tensor values, an error) breaks the graph at the call, which
then runs the real function. Each polyfill therefore computes exactly what it replaces on every
input it returns for, and raises where the real function would raise or where it cannot follow
(an error then makes the real function run and raise).

PURE lists the functions that may simply run for real when every argument is a constant (they
call nothing of the program's and change nothing); IMMUTABLE the types whose methods may run
for real on constant arguments.

Only bytecode the tracer models is used here: loops, conditionals, calls, list and dict
operations, generators (lazy: a generator runs to its next yield when iterated), no try/except.
"""

import builtins
import copy
import functools
import itertools
import math
import operator
import sys

_MISSING = object()
_NUMBERS = (int, float, bool)


# ---- builtins ------------------------------------------------------------------------------

def sum_(iterable, /, start=0):
    if type(start) is str or type(start) is bytes or type(start) is bytearray:
        raise TypeError("sum() can't sum strings")
    items = list(iterable)
    i = 0
    if type(start) in _NUMBERS:
        # CPython adds leading Python numbers on a fast path (floats compensated since 3.12):
        # the real sum of that prefix is exactly what it computes.
        while i < len(items) and type(items[i]) in _NUMBERS:
            i += 1
        start = builtins.sum(items[:i], start)
    total = start
    while i < len(items):
        total = total + items[i]
        i += 1
    return total


def _extreme(name, args, key, default, better):
    if len(args) == 1:
        items = list(args[0])
    else:
        if default is not _MISSING:
            raise TypeError(f"Cannot specify a default for {name}() with multiple arguments")
        items = list(args)
    if not items:
        if default is _MISSING:
            raise ValueError(f"{name}() iterable argument is empty")
        return default
    best = items[0]
    best_key = best if key is None else key(best)
    for x in items[1:]:
        k = x if key is None else key(x)
        if better(k, best_key):  # strictly: the first of equal items stays, as in CPython
            best = x
            best_key = k
    return best


def max_(*args, key=None, default=_MISSING):
    return _extreme("max", args, key, default, operator.gt)


def min_(*args, key=None, default=_MISSING):
    return _extreme("min", args, key, default, operator.lt)


def sorted_(iterable, /, *, key=None, reverse=False):
    """A stable insertion sort that compares with `<` only, as list.sort does; with reverse,
    equal items keep their order, as CPython's reverse-sort-reverse leaves them."""
    items = list(iterable)
    keys = items if key is None else [key(x) for x in items]
    order = list(range(len(items)))
    for i in range(1, len(order)):
        j = i
        while j > 0:
            a = keys[order[j - 1]]
            b = keys[order[j]]
            if (a < b) if reverse else (b < a):
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
            else:
                break
    return [items[k] for k in order]


def any_(iterable, /):
    for x in iterable:
        if x:
            return True
    return False


def all_(iterable, /):
    for x in iterable:
        if not x:
            return False
    return True


_ATOMS = (int, float, bool, complex, str, bytes, type(None))


def deepcopy_(x, memo=None):
    """copy.deepcopy of numbers and strings (its atoms, returned as they are), and of lists,
    tuples and dicts of them (dataclasses.asdict copies each field so); what else it copies
    keeps objects shared as they were shared (its memo, keyed by id()), which runs for real."""
    if memo is None and type(x) in _ATOMS:
        return x
    if memo is None and type(x) in (list, tuple) and all(type(v) in _ATOMS for v in x):
        return x if type(x) is tuple else list(x)
    if memo is None and type(x) is dict and \
            all(type(k) in _ATOMS and type(v) in _ATOMS for k, v in x.items()):
        return dict(x)
    raise TypeError("deepcopy() of this object runs for real")


def map_(function, iterable, /, *iterables):
    iterators = [iter(iterable)] + [iter(i) for i in iterables]
    while True:
        args = []
        for it in iterators:
            x = next(it, _MISSING)
            if x is _MISSING:
                return
            args.append(x)
        yield function(*args)


def filter_(function, iterable, /):
    for x in iterable:
        if function is None:
            if x:
                yield x
        elif function(x):
            yield x


def zip_(*iterables, strict=False):
    if not iterables:
        return
    iterators = [iter(i) for i in iterables]
    while True:
        items = []
        for k in range(len(iterators)):
            x = next(iterators[k], _MISSING)
            if x is _MISSING:
                if strict:  # every iterator must end together
                    if k > 0:
                        raise ValueError("zip() argument is shorter than argument 1")
                    for other in iterators[1:]:
                        if next(other, _MISSING) is not _MISSING:
                            raise ValueError("zip() argument is longer than argument 1")
                return
            items.append(x)
        yield tuple(items)


def enumerate_(iterable, start=0):
    n = start
    for x in iterable:
        yield n, x
        n += 1


def reversed_(sequence, /):
    if type(sequence) is dict:
        sequence = list(sequence)
    elif (type(sequence) is not list and type(sequence) is not tuple and
          type(sequence) is not range and type(sequence) is not str):
        raise TypeError("reversed() of this type runs for real")
    i = len(sequence) - 1
    while i >= 0:
        if i < len(sequence):  # a list that shrank: CPython's reverse iterator stops
            yield sequence[i]
        else:
            return
        i -= 1


def pow_(base, exp, mod=None):
    if mod is not None:
        raise TypeError("pow() with a modulus runs for real")
    return base ** exp


# ---- functools -----------------------------------------------------------------------------

def reduce_(function, iterable, initial=_MISSING, /):
    it = iter(iterable)
    if initial is _MISSING:
        value = next(it, _MISSING)
        if value is _MISSING:
            raise TypeError("reduce() of empty iterable with no initial value")
    else:
        value = initial
    for x in it:
        value = function(value, x)
    return value


def partial_(func, /, *args, **keywords):
    def call(*more, **more_keywords):
        return func(*args, *more, **{**keywords, **more_keywords})
    return call


# ---- itertools -----------------------------------------------------------------------------

def chain_(*iterables):
    for iterable in iterables:
        for x in iterable:
            yield x


def chain_from_iterable_(iterables, /):
    for iterable in iterables:
        for x in iterable:
            yield x


def product_(*iterables, repeat=1):
    base = [tuple(pool) for pool in iterables]
    pools = []
    for _ in range(repeat):
        pools.extend(base)
    result = [[]]
    for pool in pools:
        result = [x + [y] for x in result for y in pool]
    for prod in result:
        yield tuple(prod)


def combinations_(iterable, r):
    pool = tuple(iterable)
    n = len(pool)
    if r > n:
        return
    indices = list(range(r))
    yield tuple(pool[i] for i in indices)
    while True:
        i = r - 1
        while i >= 0 and indices[i] == i + n - r:
            i -= 1
        if i < 0:
            return
        indices[i] += 1
        for j in range(i + 1, r):
            indices[j] = indices[j - 1] + 1
        yield tuple(pool[i] for i in indices)


def permutations_(iterable, r=None):
    pool = tuple(iterable)
    n = len(pool)
    r = n if r is None else r
    for indices in product_(range(n), repeat=r):
        distinct = True
        for i in range(r):
            if indices[i] in indices[i + 1:]:
                distinct = False
        if distinct:
            yield tuple(pool[i] for i in indices)


def zip_longest_(*iterables, fillvalue=None):
    iterators = [iter(i) for i in iterables]
    if not iterators:
        return
    while True:
        items = []
        done = 0
        for it in iterators:
            x = next(it, _MISSING)
            if x is _MISSING:
                done += 1
                x = fillvalue
            items.append(x)
        if done == len(iterators):
            return
        yield tuple(items)


def accumulate_(iterable, func=None, *, initial=None):
    it = iter(iterable)
    total = initial
    if initial is None:
        total = next(it, _MISSING)
        if total is _MISSING:
            return
    yield total
    for x in it:
        total = total + x if func is None else func(total, x)
        yield total


def islice_(iterable, *args):
    s = slice(*args)
    start = 0 if s.start is None else s.start
    stop = s.stop
    step = 1 if s.step is None else s.step
    if start < 0 or (stop is not None and stop < 0) or step < 1:
        raise ValueError("islice() arguments must be non-negative (and a positive step)")
    it = iter(iterable)
    i = 0
    nxt = start
    while stop is None or i < stop:
        x = next(it, _MISSING)
        if x is _MISSING:
            return
        if i == nxt:
            yield x
            nxt += step
        i += 1


def count_(start=0, step=1):
    n = start
    while True:
        yield n
        n += step


def repeat_(obj, times=None):
    if times is None:
        while True:
            yield obj
    for _ in range(times):
        yield obj


def starmap_(function, iterable, /):
    for args in iterable:
        yield function(*args)


def pairwise_(iterable, /):
    it = iter(iterable)
    a = next(it, _MISSING)
    if a is _MISSING:
        return
    for b in it:
        yield a, b
        a = b


def takewhile_(predicate, iterable, /):
    for x in iterable:
        if not predicate(x):
            return
        yield x


def dropwhile_(predicate, iterable, /):
    it = iter(iterable)
    for x in it:
        if not predicate(x):
            yield x
            break
    for x in it:
        yield x


def filterfalse_(predicate, iterable, /):
    for x in iterable:
        if predicate is None:
            if not x:
                yield x
        elif not predicate(x):
            yield x


def compress_(data, selectors, /):
    for d, s in zip_(data, selectors):
        if s:
            yield d


# ---- operator ------------------------------------------------------------------------------

def itemgetter_(item, /, *items):
    if not items:
        def get(obj):
            return obj[item]
        return get
    keys = (item,) + items

    def get_all(obj):
        return tuple(obj[k] for k in keys)
    return get_all


def attrgetter_(attr, /, *attrs):
    names = [tuple(a.split(".")) for a in (attr,) + attrs]

    def resolve(obj, path):
        for name in path:
            obj = getattr(obj, name)
        return obj

    if not attrs:
        def get(obj):
            return resolve(obj, names[0])
        return get

    def get_all(obj):
        return tuple(resolve(obj, path) for path in names)
    return get_all


def methodcaller_(name, /, *args, **kwargs):
    def call(obj):
        return getattr(obj, name)(*args, **kwargs)
    return call


def _binary(op):
    """The polyfill of operator.<op>: the operator itself, which the tracer models."""
    return {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
        "truediv": lambda a, b: a / b, "floordiv": lambda a, b: a // b,
        "mod": lambda a, b: a % b, "pow": lambda a, b: a ** b, "matmul": lambda a, b: a @ b,
        "and_": lambda a, b: a & b, "or_": lambda a, b: a | b, "xor": lambda a, b: a ^ b,
        "lshift": lambda a, b: a << b, "rshift": lambda a, b: a >> b,
        "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b,
        "le": lambda a, b: a <= b, "gt": lambda a, b: a > b, "ge": lambda a, b: a >= b,
        "is_": lambda a, b: a is b, "is_not": lambda a, b: a is not b,
        "getitem": lambda a, b: a[b], "contains": lambda a, b: b in a,
        "concat": lambda a, b: a + b,
        "neg": lambda a: -a, "pos": lambda a: +a, "invert": lambda a: ~a, "inv": lambda a: ~a,
        "not_": lambda a: not a, "truth": lambda a: bool(a), "abs": lambda a: abs(a),
    }[op]


def _inplace(op):
    def iadd(a, b):
        a += b
        return a

    def isub(a, b):
        a -= b
        return a

    def imul(a, b):
        a *= b
        return a

    def itruediv(a, b):
        a /= b
        return a
    return {"iadd": iadd, "isub": isub, "imul": imul, "itruediv": itruediv}[op]


# ---- tables --------------------------------------------------------------------------------

REGISTRY = {
    builtins.sum: sum_, builtins.max: max_, builtins.min: min_, builtins.sorted: sorted_,
    builtins.any: any_, builtins.all: all_, builtins.map: map_, builtins.filter: filter_,
    builtins.zip: zip_, builtins.enumerate: enumerate_, builtins.reversed: reversed_,
    builtins.pow: pow_, copy.deepcopy: deepcopy_,
    functools.reduce: reduce_, functools.partial: partial_,
    itertools.chain: chain_, itertools.chain.from_iterable: chain_from_iterable_,
    itertools.product: product_, itertools.combinations: combinations_,
    itertools.permutations: permutations_, itertools.zip_longest: zip_longest_,
    itertools.accumulate: accumulate_, itertools.islice: islice_, itertools.count: count_,
    itertools.repeat: repeat_, itertools.starmap: starmap_, itertools.pairwise: pairwise_,
    itertools.takewhile: takewhile_, itertools.dropwhile: dropwhile_,
    itertools.filterfalse: filterfalse_, itertools.compress: compress_,
    operator.itemgetter: itemgetter_, operator.attrgetter: attrgetter_,
    operator.methodcaller: methodcaller_,
}
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_",
              "or_", "xor", "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "is_",
              "is_not", "getitem", "contains", "concat", "neg", "pos", "invert", "inv", "not_",
              "truth", "abs"):
    REGISTRY[getattr(operator, _name)] = _binary(_name)
for _name in ("iadd", "isub", "imul", "itruediv"):
    REGISTRY[getattr(operator, _name)] = _inplace(_name)

PURE = {
    builtins.abs, builtins.all, builtins.any, builtins.ascii, builtins.bin, builtins.bool,
    builtins.chr, builtins.divmod, builtins.enumerate, builtins.float, builtins.format,
    builtins.frozenset, builtins.hash, builtins.hex, builtins.int, builtins.issubclass,
    builtins.len, builtins.list, builtins.max, builtins.min, builtins.oct, builtins.ord,
    builtins.pow, builtins.range, builtins.repr, builtins.reversed, builtins.round,
    builtins.slice, builtins.sorted, builtins.str, builtins.sum, builtins.tuple, builtins.zip,
    builtins.dict, dict.fromkeys,
    itertools.chain, itertools.chain.from_iterable, itertools.product, itertools.combinations,
    itertools.combinations_with_replacement, itertools.permutations, itertools.zip_longest,
    itertools.islice, itertools.pairwise, itertools.compress,
}
PURE.update(f for f in vars(math).values() if callable(f))
PURE.update(getattr(operator, name) for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and_", "or_", "xor", "lshift",
    "rshift", "eq", "ne", "lt", "le", "gt", "ge", "is_", "is_not", "getitem", "contains",
    "concat", "neg", "pos", "invert", "inv", "not_", "truth", "abs", "index"))


def _immutable_types():
    types = [str, bytes, int, float, bool, tuple, frozenset, range, type(None)]
    torch = sys.modules.get("torch")
    if torch is not None:
        types += [torch.Size, torch.dtype, torch.device]
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        types.append(numpy.dtype)
    return tuple(types)


IMMUTABLE = _immutable_types()


def object_init_():
    """object.__init__ through super() (the tracer binds no self): it takes no arguments."""
    return None


# ---- collections.Counter -------------------------------------------------------------------

def counter_most_common_(counter, n=None):
    items = sorted_(counter.items(), key=lambda kv: kv[1], reverse=True)
    return items if n is None else items[:n]


def counter_elements_(counter):
    for key, count in counter.items():
        for _ in range(count):
            yield key


def counter_total_(counter):
    return sum_(counter.values())


# ---- numpy and torch functions the tracer cannot find by name (lib-breadth) ----------------
#
# The tracer recognises numpy, torch, torch.nn.functional and torch.special functions by the
# name their module exposes them under (Library.cpp's table); these are reached through other
# modules or other names (np.linalg.norm, torch.linalg.vector_norm, F.logsigmoid is
# torch._C._nn.log_sigmoid, torch.special.expit is special_expit). Each is written with the
# functions the table does model, computing exactly what numpy or torch computes, and raises
# NotImplementedError for the forms it does not follow (the real function then runs).

_numpy = sys.modules.get("numpy")
_torch = sys.modules.get("torch")


def linalg_norm_(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm of real arrays: vector norms (None, 2, 1, 0, inf, -inf) and the
    matrix norms that are sums and maxima (Frobenius, 1, -1, inf, -inf), as numpy composes
    them; the singular-value norms (2, -2, 'nuc' of matrices) are not followed."""
    np = _numpy
    inf = math.inf
    x = np.asarray(x)
    if x.dtype.kind != "f":
        if x.dtype.kind == "c":
            raise NotImplementedError("norm of a complex array")
        x = x.astype(float)
    ndim = x.ndim
    if axis is None:
        if ord is None or (ord in ("f", "fro") and ndim == 2) or (ord == 2 and ndim == 1):
            flat = x.reshape(-1)
            ret = np.sqrt(flat.dot(flat))
            if keepdims:
                ret = ret.reshape([1] * ndim)
            return ret
        axis = tuple(range(ndim))
    elif not isinstance(axis, tuple):
        axis = (int(axis),)
    if len(axis) == 1:
        if ord == inf:
            return np.abs(x).max(axis=axis, keepdims=keepdims)
        if ord == -inf:
            return np.abs(x).min(axis=axis, keepdims=keepdims)
        if ord == 0:
            return (x != 0).astype(x.dtype).sum(axis=axis, keepdims=keepdims)
        if ord == 1:
            return np.sum(np.abs(x), axis=axis, keepdims=keepdims)
        if ord is None or ord == 2:
            return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))
        raise NotImplementedError("a vector norm of another order")
    if len(axis) != 2:
        raise NotImplementedError("a norm over more than two axes")
    row_axis, col_axis = axis
    if not (-ndim <= row_axis < ndim and -ndim <= col_axis < ndim):
        raise NotImplementedError("an axis out of range")
    row_axis = row_axis % ndim
    col_axis = col_axis % ndim
    if row_axis == col_axis:
        raise NotImplementedError("duplicate axes")
    if ord is None or ord == "fro" or ord == "f":
        ret = np.sqrt(np.sum(x * x, axis=axis))
    elif ord == 1 or ord == -1:
        if col_axis > row_axis:
            col_axis -= 1
        sums = np.sum(np.abs(x), axis=row_axis)
        ret = sums.max(axis=col_axis) if ord == 1 else sums.min(axis=col_axis)
    elif ord == inf or ord == -inf:
        if row_axis > col_axis:
            row_axis -= 1
        sums = np.sum(np.abs(x), axis=col_axis)
        ret = sums.max(axis=row_axis) if ord == inf else sums.min(axis=row_axis)
    else:
        raise NotImplementedError("a singular-value norm")
    if keepdims:
        shape = list(x.shape)
        shape[axis[0]] = 1
        shape[axis[1]] = 1
        ret = ret.reshape(shape)
    return ret


def linalg_vector_norm_(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm: torch.norm of a number p is exactly this function."""
    if isinstance(ord, str):
        raise NotImplementedError("vector_norm of a string order raises")
    return _torch.norm(x, ord, dim, keepdim, dtype=dtype)


def torch_linalg_norm_(x, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm where it is a vector norm or the Frobenius norm."""
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = (dim,)
    if ord is None or (ord == "fro" and (dim is None or len(dim) == 2) and
                       (dim is not None or x.ndim == 2)):
        return _torch.norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise NotImplementedError("a matrix norm")
    if (dim is None and x.ndim == 1) or (dim is not None and len(dim) == 1):
        return _torch.norm(x, ord, dim, keepdim, dtype=dtype)
    raise NotImplementedError("a matrix norm")


def logsigmoid_(input):
    """F.logsigmoid as ATen's kernel computes it: min(x, 0) - log1p(exp(-|x|)), 16-bit floats
    in float32."""
    torch = _torch
    if not input.is_floating_point():
        raise NotImplementedError("logsigmoid of an integer tensor raises")
    x = input
    if x.dtype == torch.float16 or x.dtype == torch.bfloat16:
        x = x.float()
    return (torch.clamp(x, max=0) - torch.log1p(torch.exp(-torch.abs(x)))).to(input.dtype)


def _register_library_polyfills():
    if _numpy is not None:
        REGISTRY[_numpy.linalg.norm] = linalg_norm_
    if _torch is not None:
        REGISTRY[_torch.linalg.vector_norm] = linalg_vector_norm_
        REGISTRY[_torch.linalg.norm] = torch_linalg_norm_
        REGISTRY[_torch.nn.functional.logsigmoid] = logsigmoid_
        special = _torch.special
        REGISTRY[special.expit] = lambda input: _torch.sigmoid(input)
        REGISTRY[special.expm1] = lambda input: _torch.expm1(input)
        REGISTRY[special.exp2] = lambda input: _torch.exp2(input)
        REGISTRY[special.log1p] = lambda input: _torch.log1p(input)


_register_library_polyfills()
