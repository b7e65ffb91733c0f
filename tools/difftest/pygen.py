"""Python constructs for difftest's random programs (imported by difftest.py).

A fraction of the generated programs (difftest's --py-fraction) mix ordinary Python with the
tensor code, the way real code does: lists of tensors accumulated and stacked or summed, dicts
of tensors iterated (sorted keys, items, values, live views), lambdas and closures (late
binding, a nonlocal counter, a factory), generator expressions and lazy generator functions,
zip/enumerate/reversed/itertools/functools/operator, module-level classes (__init__, methods,
properties, classmethod/staticmethod, super(), dunder operators, __call__, __len__, __iter__),
a namedtuple and a dataclass, *args/**kwargs calls through a helper with defaults, sorted() of
numbers with a key, idioms that are easy to get wrong (lambdas made in a loop, a generator over
a list that grows, star unpacking, the walrus, recursion, a default bound at def time, one
object reached through two names), and changes to list and dict arguments and to globals.
Container arguments (a list of arrays `xs`, a dict `d`, a list of numbers `log`) are input
specs of kind "list", "dict" and "py"; the runner compares them after each call.

PyGen works on a difftest Generator: it draws from the generator's rng, reads its environment
(the real values of the program's variables), and returns snippets of function-body source.
The generator runs each snippet on the environment as the body of a function (`run_scoped`),
so closures, nonlocal and comprehensions see the names as they will in `f`. Every Python-level
decision a snippet makes is exact (shapes, ndim, counts, integer keys), never a float compared
near a tie, so eager and compiled runs take the same path.
"""

import copy
import re

# Modules every such program imports (the definitions and snippets below use them).
IMPORTS = ["collections", "dataclasses", "functools", "itertools", "operator", "typing"]

# Module-level definitions a snippet may use; a program includes the ones its body names.
DEFS = {
    "Scaler": '''
class Scaler:
    def __init__(self, w, bias=0.5):
        self.w = w
        self.bias = bias

    def __call__(self, t):
        return t * self.w + self.bias

    @property
    def doubled(self):
        return self.w * 2

    @classmethod
    def unit(cls):
        return cls(1.0, bias=0.0)
''',
    "Shifted": '''
class Shifted(Scaler):
    def __init__(self, w, shift):
        super().__init__(w, bias=0.0)
        self.shift = shift

    def __call__(self, t):
        return super().__call__(t) - self.shift
''',
    "Bag": '''
class Bag:
    def __init__(self):
        self.items = []

    def add(self, t):
        self.items.append(t)
        return self

    def __len__(self):
        return len(self.items)

    def __iter__(self):
        return iter(self.items)

    @property
    def total(self):
        return sum(self.items)

    @staticmethod
    def weight(n):
        return 1.0 / (n + 1)
''',
    "Pair": '''
class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        return Pair(self.a + other.a, self.b + other.b)

    def __mul__(self, k):
        return Pair(self.a * k, self.b * k)
''',
    "Result": '''
Result = collections.namedtuple("Result", ["out", "aux"])
''',
    "Stats": '''
class Stats(typing.NamedTuple):
    total: typing.Any
    count: int = 0
''',
    "Cfg": '''
@dataclasses.dataclass
class Cfg:
    scale: float = 2.0
    shift: int = 1
    tags: list = dataclasses.field(default_factory=list)
''',
    "combine": '''
def combine(a, b=None, *rest, scale=1.0, **extra):
    out = a * scale
    if b is not None:
        out = out + b
    for r in rest:
        out = out - r
    return out + extra.get("bias", 0)
''',
    "Ctx": '''
class Ctx:
    def __init__(self, k):
        self.k, self.exits = k, 0

    def __enter__(self):
        return self

    def __exit__(self, typ, value, tb):
        self.exits += 1
        return False
''',
    "STATE": '''
STATE = {"last": 0}
''',
    "SCALE": '''
SCALE = 1
''',
}
DEPENDS = {"Shifted": ["Scaler"]}

NP_ELEM = ["{t} * 2", "{t} + 1", "{t} - 0.5", "np.abs({t})", "np.sin({t})", "{t} * {t}",
           "np.maximum({t}, 0)", "{t} / 2", "np.tanh({t})"]
T_ELEM = ["{t} * 2", "{t} + 1", "{t} - 0.5", "{t}.abs()", "torch.sin({t})", "{t} * {t}",
          "{t}.clamp(min=0)", "{t} / 2", "torch.tanh({t})"]
KEYS = ["w", "b", "a", "mid", "z", "out"]
NUMS = [3, -1, 2, 0, -4, 5, 1.5, -2.5]
SORT_KEYS = ["lambda q: (abs(q), q)", "lambda q: -q", "abs", "lambda q: (q % 3, q)", "float"]


def _deepcopyable(v):
    try:
        copy.deepcopy(v)
        return True
    except Exception:
        return False


class PyGen:
    def __init__(self, gen, genfail):
        self.g = gen
        self.GenFail = genfail
        self.rng = gen.rng
        self.used_global = False
        self.extra_args = []
        for m in IMPORTS:
            gen.G[m] = __import__(m)
        gen.G["__name__"] = "difftest_gen"

    # -- helpers ---------------------------------------------------------------------------------
    def num(self):
        self.g.counter += 1
        return self.g.counter

    def need(self, name):
        for dep in DEPENDS.get(name, []):
            self.need(dep)
        if name not in self.g.G:
            exec(DEFS[name], self.g.G)

    def pick(self, pred=None):
        names = self.g.arrays(pred)
        if not names:
            raise self.GenFail("no arrays")
        return self.rng.choice(names[-3:] if self.rng.random() < 0.6 else names)

    def peers(self, a):
        """Arrays of a's shape, a first."""
        s = tuple(self.g.env[a].shape)
        return [a] + [n for n in self.g.arrays(lambda v: tuple(v.shape) == s) if n != a]

    def elem(self, t):
        """A shape-preserving elementwise expression of t."""
        return self.rng.choice(T_ELEM if self.g.lib == "torch" else NP_ELEM).format(t=t)

    def lit(self):
        return self.rng.choice(["2", "3", "0.5", "-1", "1.5"])

    def stack(self, lst):
        if self.g.lib == "torch":
            return self.rng.choice([f"torch.stack({lst})", f"torch.stack({lst}, dim=-1)",
                                    f"torch.cat({lst})"])
        return self.rng.choice([f"np.stack({lst})", f"np.stack({lst}, axis=-1)",
                                f"np.concatenate({lst})"])

    def arg(self, name):
        return name if name in self.g.env and name in self.extra_args else None

    # -- inputs ----------------------------------------------------------------------------------
    def add_inputs(self, specs):
        """Container arguments for f: a list of arrays, a dict, a list of numbers. Returns their
        names (appended to specs in order)."""
        rng = self.rng
        first = next((s for s in specs if s["kind"] == "array"), None)
        if first and rng.random() < 0.3:
            item = {"kind": "array", "shape": list(first["shape"]), "dtype": first["dtype"],
                    "special": False}
            specs.append({"kind": "list", "items": [item] * rng.randint(1, 3)})
            self.extra_args.append("xs")
        if first and rng.random() < 0.25:
            w = {"kind": "array", "shape": list(first["shape"][-1:]), "dtype": "float32",
                 "special": False}
            specs.append({"kind": "dict", "items": {"w": w, "b": {"kind": "py", "value": 0.5}}})
            self.extra_args.append("d")
        if rng.random() < 0.2:
            specs.append({"kind": "py", "value": rng.choice([[1, 2.5], [3], []])})
            self.extra_args.append("log")
        return list(self.extra_args)

    # -- snippets --------------------------------------------------------------------------------
    def snippet(self, small=False):
        """Function-body source (one or more lines) for one Python construct."""
        if small:
            return self.small()
        kinds = ["list"] * 3 + ["dict"] * 2 + ["closure"] * 3 + ["gen"] * 2 + ["zip"] * 2 + \
            ["cls"] * 2 + ["nt"] + ["call"] * 2 + ["sorted"] * 2 + ["idiom"] * 3 + ["alias"] * 2 + \
            ["ctl"] * 2
        if not self.g.pure:
            kinds += ["mut"] * 3
        return "\n".join(getattr(self, "p_" + self.rng.choice(kinds))())

    def p_list(self):
        a = self.pick()
        n, v = self.num(), self.g.fresh()
        srcs = self.rng.sample(self.peers(a), min(len(self.peers(a)), self.rng.randint(1, 3)))
        while len(srcs) < 2:
            srcs.append(self.elem(a))
        acc = f"acc{n}"
        r = self.rng.random()
        if r < 0.4:
            lines = [f"{acc} = []", f"for t in ({', '.join(srcs)}):",
                     f"    {acc}.append({self.elem('t')})"]
        elif r < 0.7:
            lines = [f"{acc} = [{self.elem('t')} for t in [{', '.join(srcs)}]]"]
        else:
            lines = [f"{acc} = []", f"for j in range({self.rng.randint(2, 4)}):",
                     f"    {acc}.append({self.elem(a)} * (j + 1))"]
        r = self.rng.random()
        if r < 0.15:
            lines.append(f"{acc}.insert(0, {a})")
        elif r < 0.25:
            lines.append(f"{acc}.append({acc}.pop(0))")
        elif r < 0.35:
            lines.append(f"{acc}.reverse()")
        elif r < 0.45:
            lines.append(f"{acc}.extend({acc}[:1])")
        elif r < 0.5:
            lines.append(f"del {acc}[-1]")
        if not self.g.pure and self.rng.random() < 0.15:
            lines.append(f"print(f'{acc}: {{len({acc})}} items')")
        final = self.rng.choice([self.stack(acc)] * 3 + [
            f"sum({acc})", f"sum({acc}[1:], {acc}[0])", f"functools.reduce(operator.add, {acc})",
            f"functools.reduce(lambda p, q: p * 0.5 + q, {acc})"])
        return lines + [f"{v} = {final}"]

    def p_dict(self):
        keys = self.rng.sample(KEYS, 3)
        n, v = self.num(), self.g.fresh()
        parts = f"parts{n}"
        a = self.pick()
        vals = [self.elem(self.rng.choice(self.peers(a))) for _ in keys]
        lines = [f"{parts} = {{" + ", ".join(f"{k!r}: {s}" for k, s in zip(keys, vals)) + "}"]
        new = next(k for k in KEYS if k not in keys)
        r = self.rng.random()
        if r < 0.2:
            lines.append(f"{parts}[{new!r}] = {self.elem(a)}")
        elif r < 0.3:
            lines.append(f"{parts}.setdefault({keys[0]!r}, {a})")
        elif r < 0.4:
            lines.append(f"{parts}.update({new}={a})")
        elif r < 0.5:
            lines.append(f"del {parts}[{keys[1]!r}]")
        elif r < 0.6:
            lines.append(f"{parts}.pop({keys[1]!r}, None)")
        elif r < 0.7:
            lines += [f"view{n} = {parts}.keys()", f"{parts}[{new!r}] = {a}",
                      f"count{n} = len(view{n})"]
        red = self.rng.choice([".sum()", ".sum()", ".max()" if self.g.env[a].size else ".sum()"])
        r = self.rng.random()
        if r < 0.25:
            lines += [f"{v} = 0", f"for key in sorted({parts}):",
                      f"    {v} = {v} + {parts}[key]{red}"]
        elif r < 0.45:
            lines += [f"{v} = None", f"for key, t in {parts}.items():",
                      f"    {v} = t if {v} is None else {v} + t"]
        elif r < 0.6:
            lines.append(f"{v} = sum(t{red} for t in {parts}.values())")
        elif r < 0.75:
            lines.append(f"{v} = {{k: t * 2 for k, t in {parts}.items()}}[{keys[2]!r}]")
        elif r < 0.85:
            lines.append(f"{v} = {parts}.get('missing', {a}) + {parts}[{keys[2]!r}]")
        else:
            rev = self.rng.choice(["", ", reverse=True", ", key=len"])
            lines.append(f"{v} = {self.stack(f'[{parts}[k] for k in sorted({parts}{rev})]')}")
        if not self.g.pure and self.rng.random() < 0.15:
            lines.append(f"print('keys', list({parts}), sorted({parts}.keys()))")
        return lines

    def p_closure(self):
        a = self.pick()
        b = self.rng.choice(self.peers(a))
        n, v = self.num(), self.g.fresh()
        fn = f"fn{n}"
        r = self.rng.random()
        if r < 0.3:
            lines = [f"{fn} = lambda t, s={self.lit()}: ({self.elem('t')}) * s"]
            use = self.rng.choice([f"{fn}({a}) + {fn}({b}, 2)", f"{fn}({a})",
                                   f"sum(map({fn}, [{a}, {b}]))",
                                   self.stack(f"list(map({fn}, [{a}, {b}]))")])
            return lines + [f"{v} = {use}"]
        if r < 0.55:  # late binding: the closure sees base's current value at each call
            base, v2 = f"base{n}", self.g.fresh()
            return [f"def {fn}(t):", f"    return t + {base}", f"{base} = {self.elem(a)}",
                    f"{v} = {fn}({b})", f"{base} = {base} * 2", f"{v2} = {fn}({b})"]
        if r < 0.8:  # a closure that counts its calls in a nonlocal
            calls = f"calls{n}"
            lines = [f"{calls} = 0", f"def {fn}(t):", f"    nonlocal {calls}", f"    {calls} += 1",
                     f"    return {self.elem('t')} + {calls}"]
            if self.rng.random() < 0.5:
                if not self.g.pure and self.rng.random() < 0.4:  # the count survives a break
                    return lines + [f"{v} = {fn}({a})", f"print('calls', {calls})",
                                    f"{v} = {fn}({v})"]
                return lines + [f"{v} = {fn}({fn}({a}))"]
            return lines + [f"{v} = {a}", f"for _ in range({self.rng.randint(1, 3)}):",
                            f"    {v} = {fn}({v})"]
        w = self.rng.choice([self.lit(), f"{b}.sum()", f"{b}.ndim"])
        return [f"def make{n}(w, b=0.5):", "    def apply(t):", "        return t * w + b",
                "    return apply", f"{fn} = make{n}({w})",
                f"{v} = {fn}({a}) + make{n}(2, b=1)({a})"]

    def p_gen(self):
        a = self.pick()
        ts = ", ".join(self.rng.sample(self.peers(a), min(3, len(self.peers(a)))) +
                       [self.elem(a)])
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.2:
            red = self.rng.choice(["t.sum()", "(t > 0).sum()", "t.sum() * 2"])
            return [f"{v} = sum({red} for t in ({ts}))"]
        if r < 0.35:
            m = f"m{n}"
            return [f"{m} = max(t.ndim + len(t.shape) for t in ({ts}))", f"{v} = {a} * {m}"]
        if r < 0.5:
            pair = f"pair{n}"
            return [f"{pair} = tuple({self.elem('t')} for t in ({ts}))",
                    f"{v} = {pair}[0] + {pair}[-1] * len({pair})"]
        if r < 0.75:  # a lazy generator: each value is made when it is asked for
            gen, it, v2 = f"gen{n}", f"it{n}", self.g.fresh()
            lines = [f"def {gen}(ts):", "    for j, t in enumerate(ts):"]
            if not self.g.pure and self.rng.random() < 0.4:
                lines.append("        print('yield', j)")
            lines += ["        yield t * (j + 1)", f"{it} = {gen}([{ts}])"]
            if not self.g.pure and self.rng.random() < 0.4:
                lines.append("print('made')")
            lines.append(f"{v} = next({it})")
            if not self.g.pure and self.rng.random() < 0.3:  # suspended across a break
                lines.append(f"print('first', {v}.shape)")
            return lines + [f"{v2} = sum({it}, {v})"]
        if r < 0.88:
            flag = f"flag{n}"
            tests = ["t.ndim > 1", "len(t) > 2" if self.g.env[a].ndim else "t.ndim == 0"]
            if not self.g.pure:  # a data-dependent one
                tests.append("bool((t >= 0).all())")
            test = self.rng.choice(tests)
            fn = self.rng.choice(["any", "all"])
            return [f"{flag} = {fn}({test} for t in ({ts}))",
                    f"{v} = {a} + 1 if {flag} else {a} - 1"]
        it = f"it{n}"
        return [f"{it} = iter([{ts}])", f"{v} = next({it})", f"{v} = {v} + next({it}, {a})"]

    def p_zip(self):
        a = self.pick()
        ps = self.peers(a)
        b, c = self.rng.choice(ps), self.rng.choice(ps)
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.3:
            out = f"out{n}"
            return [f"{out} = []",
                    f"for j, (p, q) in enumerate(zip([{a}, {b}], [{c}, {self.elem(a)}])):",
                    f"    {out}.append(p * (j + 1) + q)", f"{v} = {out}[-1] - {out}[0]"]
        if r < 0.45:
            return [f"{v} = sum(p * q for p, q in zip(({a}, {b}), ({c}, {a}), strict=True))"]
        if r < 0.55:
            return [f"{v} = [t for t in reversed([{a}, {self.elem(b)}])][0]"]
        if r < 0.7:
            return [f"{v} = list(itertools.accumulate([{a}, {self.elem(b)}, {c}]))[-1]"]
        if r < 0.8:
            return [f"{v} = sum(p * q for p, q in itertools.combinations([{a}, {b}, {c}], 2))"]
        if r < 0.9:
            fn = f"fn{n}"
            op = self.rng.choice(["operator.add", "operator.mul", "operator.sub"])
            return [f"{fn} = functools.partial({op}, {a})", f"{v} = {fn}({self.elem(b)})"]
        d = f"named{n}"
        return [f"{d} = dict(zip(['p', 'q'], [{a}, {self.elem(b)}]))",
                f"{v} = {d}['q'] - {d}['p']"]

    def p_cls(self):
        a = self.pick()
        b = self.rng.choice(self.peers(a))
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.3:
            self.need("Scaler")
            sc = f"sc{n}"
            w = self.rng.choice([self.lit(), f"{b}.sum()", f"{b}.ndim"])
            lines = [f"{sc} = Scaler({w})" if self.rng.random() < 0.5 else
                     f"{sc} = Scaler({w}, bias={self.lit()})"]
            if self.rng.random() < 0.3:
                lines.append(f"{sc}.bias = {a}.ndim")
            use = self.rng.choice([f"{sc}({a})", f"{sc}({a}) * {sc}.doubled",
                                   f"Scaler.unit()({a}) + {sc}.w"])
            return lines + [f"{v} = {use}"]
        if r < 0.45:
            self.need("Shifted")
            return [f"sh{n} = Shifted({self.lit()}, {b}.sum())", f"{v} = sh{n}({a})"]
        if r < 0.7:
            self.need("Bag")
            bag = f"bag{n}"
            lines = [f"{bag} = Bag()", f"{bag}.add({a}).add({self.elem(b)})"]
            return lines + [self.rng.choice([
                f"{v} = {bag}.total * Bag.weight(len({bag}))",
                f"{v} = {bag}.total if {bag} else {a}",
                f"{v} = sum(t * (j + 1) for j, t in enumerate({bag}))",
                f"{v} = {self.stack(f'list({bag})')}"])]
        if r < 0.85:
            self.need("Pair")
            p = f"pr{n}"
            return [f"{p} = Pair({a}, {b}) + Pair({self.elem(a)}, {self.elem(b)})",
                    f"{v} = ({p} * {self.lit()}).a - {p}.b"]
        self.need("Cfg")
        cfg = f"cfg{n}"
        return [f"{cfg} = Cfg(shift={self.rng.choice(['1', '2', '-3'])})",
                f"{cfg}.tags.append({a}.ndim)",
                f"{v} = {a} * {cfg}.scale + {cfg}.shift * len({cfg}.tags)"]

    def p_nt(self):
        a = self.pick()
        n, v = self.num(), self.g.fresh()
        if self.rng.random() < 0.3:
            self.need("Stats")
            st = f"st{n}"
            return [f"{st} = Stats({a}.sum(), count={a}.ndim)",
                    f"{v} = {a} * {st}.count + {st}.total"]
        self.need("Result")
        res = f"res{n}"
        lines = [f"{res} = Result({a}, {self.elem(a)})"]
        r = self.rng.random()
        if r < 0.3:
            lines.append(f"{res} = {res}._replace(aux={self.rng.choice(self.peers(a))})")
        if r < 0.6:
            return lines + [f"{v} = {res}.out + {res}.aux * len({res})"]
        v2 = self.g.fresh()
        return lines + [f"{v}, {v2} = {res}", f"{v} = {v} - {res}[1]"]

    def p_call(self):
        a = self.pick()
        ps = self.peers(a)
        b, c = self.rng.choice(ps), self.rng.choice(ps)
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.7:
            self.need("combine")
            if r < 0.35:
                pos = self.rng.choice([f"({a},)", f"({a}, {b})", f"({a}, {b}, {c})",
                                       f"[{a}, None]"])
                kw = self.rng.choice(["{}", f"{{'scale': {self.lit()}}}", "{'bias': 1}",
                                      f"{{'scale': 0.5, 'bias': {self.lit()}}}"])
                return [f"args{n} = {pos}", f"kw{n} = {kw}", f"{v} = combine(*args{n}, **kw{n})"]
            return [f"{v} = " + self.rng.choice([
                f"combine({a}, bias={self.lit()})", f"combine({a}, {b}, {c}, scale=0.5)",
                f"combine(*[{a}, {b}])", f"combine({a}, None, **{{'scale': 2}})",
                f"functools.partial(combine, scale={self.lit()})({a}, {b})"])]
        return [f"def mix{n}(*ts, **opts):", "    w = opts.get('w', 1.0)",
                "    return sum(t * w for t in ts) + len(opts)",
                f"{v} = mix{n}({a}, {b}, w={self.lit()})" if self.rng.random() < 0.6 else
                f"{v} = mix{n}(*({a}, {c}))"]

    def p_sorted(self):
        a = self.pick()
        av = self.g.env[a]
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.35:
            nums = self.rng.sample(NUMS, 4)
            ks = f"ks{n}"
            rev = self.rng.choice(["", "", ", reverse=True"])
            return [f"{ks} = sorted({nums}, key={self.rng.choice(SORT_KEYS)}{rev})",
                    f"{v} = {a} * {ks}[0] + {ks}[-1]"]
        if r < 0.55 and av.ndim >= 2:
            perm = f"perm{n}"
            move = f"{a}.permute(*{perm})" if self.g.lib == "torch" else f"{a}.transpose({perm})"
            return [f"{perm} = sorted(range({a}.ndim), key=lambda ax: -{a}.shape[ax])",
                    f"{v} = {move}"]
        ts = ", ".join([a, self.elem(a)] + self.g.arrays()[-2:])
        if r < 0.75:
            key = self.rng.choice(["lambda t: t.ndim", "lambda t: -t.ndim"] + (
                [] if self.g.pure else ["lambda t: int((t > 0).sum())"]))
            return [f"ranked{n} = sorted([{ts}], key={key})", f"{v} = ranked{n}[0]"]
        if r < 0.9:
            fn = self.rng.choice(["max", "min"])
            key = self.rng.choice(["lambda t: t.ndim"] + (
                [] if self.g.pure else ["lambda t: int((t != 0).sum())"]))
            return [f"{v} = {fn}([{ts}], key={key})"]
        ks = f"ks{n}"
        return [f"{ks} = [{a}.ndim, 2, -1, len({a}.shape) * 3]", f"{ks}.sort(reverse=True)",
                f"{ks}.remove(2)", f"{v} = {a} * {ks}[0] - {ks}.index(-1)"]

    def p_idiom(self):
        """Idioms whose Python semantics are easy to get wrong: late binding in a comprehension
        of lambdas, a lazy generator over a list that grows, star unpacking, the walrus,
        isinstance/getattr, recursion, a kwargs dict changed after the call."""
        a = self.pick()
        ps = self.peers(a)
        b = self.rng.choice(ps)
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.15:
            bind = self.rng.choice(["", "j=j"])
            sig = f"t, {bind}" if bind else "t"
            return [f"fns{n} = [lambda {sig}: t * j for j in range(1, {self.rng.randint(2, 4)})]",
                    f"{v} = sum(g({a}) for g in fns{n})"]
        if r < 0.3:
            lst = f"lst{n}"
            return [f"{lst} = [{a}, {self.elem(b)}]", f"lazy{n} = (t * 2 for t in {lst})",
                    f"{lst}.append({self.elem(a)})", f"{v} = sum(lazy{n})"]
        if r < 0.42:
            v2 = self.g.fresh()
            return [f"{v}, *rest{n} = [{a}, {self.elem(b)}, {self.elem(a)}]",
                    f"{v2} = {v} + sum(rest{n}) * len(rest{n})"]
        if r < 0.52:
            lst = f"lst{n}"
            return [f"{lst} = [t for t in ({a}, {b}) if t.ndim > 0]",
                    f"if (cnt{n} := len({lst})) > 1:", f"    {v} = {lst}[0] * cnt{n}",
                    "else:", f"    {v} = {a} + cnt{n}"]
        if r < 0.62:
            cls = "torch.Tensor" if self.g.lib == "torch" else "np.ndarray"
            return [f"items{n} = [{a}, 2, {self.elem(b)}, None]",
                    f"{v} = sum(t for t in items{n} if isinstance(t, {cls}))",
                    f"{v} = {v} * getattr({a}, 'ndim', 0) + len(type({a}).__name__)"]
        if r < 0.72:
            return [f"def depth{n}(t, k):", f"    return t if k == 0 else depth{n}(t * 0.5, k - 1)",
                    f"{v} = depth{n}({a}, {self.rng.randint(1, 3)})"]
        if r < 0.8:
            return [f"{v} = {a}", f"for j, t in enumerate([{b}, {self.elem(a)}], start=1):",
                    f"    {v} = {v} + t * j", f"{v} = {v} / j"]
        if r < 0.9:
            return [f"def scaled{n}(t, **kw):", "    kw['seen'] = True",
                    "    return t * kw.get('w', 1)", f"kw{n} = {{'w': {self.lit()}}}",
                    f"{v} = scaled{n}({a}, **kw{n}) + len(kw{n})"]
        parts = f"parts{n}"
        return [f"{parts} = {{'b': {a}, 'a': {self.elem(b)}}}",
                f"{v} = [t for _, t in sorted({parts}.items(), key=lambda kv: kv[0])][0]"]

    def p_ctl(self):
        """Statements of structure: `match` on a shape, `assert` of a tensor (which fails now and
        then: an AssertionError both ways), a `with` block of a small context manager."""
        a = self.pick()
        n, v = self.num(), self.g.fresh()
        r = self.rng.random()
        if r < 0.4:
            return [f"match {a}.shape:",
                    "    case ():", f"        {v} = {a} + 1",
                    "    case (k,):", f"        {v} = {a} * k",
                    "    case (k, *rest) if k > 2:", f"        {v} = {a} * len(rest) - k",
                    "    case _:", f"        {v} = {a} - 1"]
        if r < 0.7:
            cond = self.rng.choice([f"({a} == {a}).all()", f"not ({a} > 1e30).any()",
                                    f"({a} > -3).all()"])
            return [f"assert {cond}, 'checked'", f"{v} = {a} * 2"]
        self.need("Ctx")
        return [f"with Ctx({self.lit()}) as c{n}:", f"    {v} = {a} * c{n}.k",
                f"{v} = {v} + c{n}.exits"]

    def p_alias(self):
        """One object reached two ways: an array in a list or a dict updated in place (the
        argument changes too), a second name for a list, a default bound at def time."""
        a = self.pick()
        n, v = self.num(), self.g.fresh()
        opts = [[f"acc{n} = []", f"alias{n} = acc{n}", f"alias{n}.append({a})",
                 f"{v} = acc{n}[0] * len(acc{n}) if acc{n} is alias{n} else {a}"],
                [f"def shift{n}(t, base={a}):", "    return t + base", f"{a} = {a} * 2",
                 f"{v} = shift{n}({a})"],
                [f"{v} = {a} * 2 if {a} is {self.rng.choice(self.g.arrays())} else {a} - 1"]]
        if not self.g.pure:  # in-place updates
            opts += [[f"box{n} = [{a}, {self.elem(a)}]", f"box{n}[0] += 1",
                      f"{v} = {a} + box{n}[1]"],
                     [f"box{n} = {{'t': {a}}}", f"box{n}['t'] *= 2", f"{v} = box{n}['t'] - {a}"]]
            if self.arg("xs") is not None and self.g.env["xs"]:
                opts.append(["xs[0] += 1", f"{v} = xs[0] + {a}"])
            if self.arg("d") is not None and "w" in self.g.env["d"]:
                opts += [["d['w'] *= 2", f"{v} = {a} * d['w']"],
                         ["d['w'] = d.pop('w') + 1", f"{v} = {a} + len(d) + ('b' in d)"]]
        return self.rng.choice(opts)

    def p_mut(self):
        """Changes to a list or dict argument, a global dict or a global."""
        a = self.pick()
        opts = []
        if self.arg("log") is not None:
            opts += [[f"log.append(int(({a} > 0).sum()))"], [f"log.extend([{a}.ndim, len(log)])"],
                     ["log.insert(0, -1)"], [f"log.append({a}.ndim)", "log.sort()"]]
            if self.g.env["log"]:
                opts += [["log.pop()"], ["log[0] = log[-1] * 2"]]
        if self.arg("d") is not None:
            dv = self.g.env["d"]
            opts += [[f"d['out'] = {self.elem(a)}"], ["d['n'] = d.get('n', 0) + 1"],
                     [f"d.setdefault('seen', []).append({a}.ndim)"], [f"d.update(last={a}.ndim)"]]
            if "w" in dv:
                opts.append([f"{self.g.fresh()} = {a} * d['w']"])
            if "b" in dv:
                opts.append([f"{self.g.fresh()} = {a} + d.pop('b')"])
        if self.arg("xs") is not None:
            xs = self.g.env["xs"]
            opts += [[f"xs.append({self.elem(a)})"], [f"{self.g.fresh()} = sum(xs)"]]
            if xs:
                opts += [[f"{self.g.fresh()} = {self.stack('xs')}"], ["xs[0] = xs[0] * 2"],
                         ["for j, t in enumerate(xs):", "    xs[j] = t + j"]]
        self.need("STATE")
        opts.append([f"STATE['last'] = {a}.ndim", f"{self.g.fresh()} = {a} * STATE['last']"])
        if not self.used_global:
            opts.append(["global SCALE", f"SCALE = {a}.ndim + 1",
                         f"{self.g.fresh()} = {a} * SCALE"])
        lines = self.rng.choice(opts)
        if lines[0] == "global SCALE":
            self.need("SCALE")
            self.used_global = True
        return lines

    def small(self):
        """One line for the body of an if/for/while: a store into a container."""
        a = self.pick()
        lists = [k for k, v in self.g.env.items() if isinstance(v, list) and k != "log" and
                 (not v or all(hasattr(t, "shape") for t in v))]
        dicts = [k for k, v in self.g.env.items() if type(v) is dict]
        opts = []
        if lists:
            opts.append(f"{self.rng.choice(lists)}.append({self.elem(a)})")
        if dicts:
            opts.append(f"{self.rng.choice(dicts)}[{self.rng.choice(KEYS)!r}] = {a}")
        if self.arg("log") is not None:
            opts.append(f"log.append({a}.ndim)")
        if not opts:
            return self.small_expr(a)
        return self.rng.choice(opts)

    def small_expr(self, a):
        return f"{self.g.fresh()} = " + self.rng.choice([
            f"sum(t * 2 for t in ({a}, {a}))", f"(lambda t: {self.elem('t')})({a})",
            f"max([{a}, {self.elem(a)}], key=lambda t: t.ndim)"])

    # -- the end of f ----------------------------------------------------------------------------
    def ret(self):
        """A return statement that hands back Python structure (a namedtuple, a list or dict the
        program built, an object), or None to let the generator write its own."""
        env = self.g.env
        arrays = self.g.arrays()
        objs = [k for k, v in env.items() if _returnable(v) and not k.startswith("_") and
                not hasattr(v, "shape")]
        if not arrays:
            return None
        a = self.rng.choice(arrays[-3:])
        r = self.rng.random()
        if r < 0.35:
            self.need("Result")
            aux = self.rng.choice(objs + [f"{a}.sum()", f"{a}.shape"]) if objs else f"{a}.sum()"
            return f"return Result({a}, {aux})"
        if objs and r < 0.8:
            picked = self.rng.sample(objs, min(len(objs), self.rng.randint(1, 2)))
            return "return " + ", ".join([a] + picked)
        if r < 0.9:
            return f"return [{a}, *[t.sum() for t in [{', '.join(arrays[-3:])}]]]"
        return f"return {{name: t for name, t in zip(['a', 'b'], [{a}, {arrays[0]}])}}"

    def header(self, body):
        """Imports and the module-level definitions the body uses (with what they use)."""
        text = "\n".join(body)
        names = []

        def add(name):
            for dep in DEPENDS.get(name, []):
                add(dep)
            if name not in names:
                names.append(name)
        for name in DEFS:
            if re.search(r"\b%s\b" % name, text):
                add(name)
        imports = "".join(f"import {m}\n" for m in IMPORTS)
        return imports, "".join(DEFS[name].lstrip("\n") + "\n\n" for name in names)


def _returnable(v, depth=0):
    """Values the tester can compare: numbers, strings, arrays, and lists, tuples, dicts and
    program-defined objects of them (no functions, generators or views)."""
    if depth > 3:
        return False
    if v is None or type(v) in (int, float, bool, str):
        return True
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return True
    if isinstance(v, (list, tuple)):
        return all(_returnable(x, depth + 1) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _returnable(x, depth + 1) for k, x in v.items())
    if type(v).__module__ == "difftest_gen" and not isinstance(v, type):
        return all(_returnable(x, depth + 1) for x in vars(v).values())
    return False
