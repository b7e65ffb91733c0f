"""dynamir.compile: torch.compile-shaped entry point, with explain(), counters() and reset().

Compiled graphs are shared libraries in a persistent cache ($DYNAMIR_CACHE_DIR, else
~/.cache/dynamir) keyed by the graph's IR, the pipeline, the CPU and the LLVM version, so a new
process loads them instead of compiling. A compiled function keeps, per traced frame, a list of cache entries (guards + host program +
graphs). A call evaluates each entry's guards in C++ on the live arguments and globals; the
first entry whose guards hold runs its host program, which compiles each graph on its first
call. A miss traces again (a recompile), up to `recompile_limit` entries, after which the
function runs eagerly with one warning. A frame that cannot be traced runs eagerly.

A host program that reaches its graph break hands back the live arrays; the frame state is
recreated from them, the breaking instruction runs for real, and the frame goes on in a
continuation: a generated function that resumes the original bytecode after the break
(dynamir.resume), compiled like any other function and cached by code object, offset and
guards. Graphs are pure, so each side effect happens exactly once, in program order. Where the
state cannot be recreated, the frame runs eagerly from its start, which is equally exact.
"""

import ast
import builtins
import collections
import dataclasses
import functools
import importlib
import inspect
import os
import re
import sys
import time
import warnings
import weakref

import _dynamir

from . import ir
from . import resume
from .tracing import GraphBreak, guards_of, trace

builtins_compile = builtins.compile

__all__ = ["compile", "explain", "counters", "reset", "GraphBreakError", "BackendUnavailable",
           "CompiledFunction", "Explanation"]


class GraphBreakError(RuntimeError):
    """fullgraph=True and the trace broke: names the reason and the line."""


class BackendUnavailable(RuntimeError):
    """The requested backend cannot run on this machine (e.g. no GPU or CUDA driver)."""


_counters = collections.Counter()
_guard_failures = []
_compiled_functions = weakref.WeakSet()


def counters():
    """Process-wide counters: frames traced, graphs loaded (graphs_compiled) and how many of
    those came from the persistent disk cache, cache hits, recompiles, eager runs, graph breaks
    hit at run time, failed run-time checks (an index out of bounds: the frame ran eagerly),
    the guard failures that caused recompiles, and how many large temporaries of compiled
    graphs came from the buffer pool instead of fresh memory."""
    # Graph loads and cache hits happen inside the native entries, which count them; the
    # Python side counts what it decides.
    natives = [e.native for f in list(_compiled_functions) for e in f._entries]
    out = {
        "frames_traced": _counters["frames_traced"],
        "graphs_compiled": sum(n.graphs_compiled for n in natives),
        "graphs_from_disk_cache": sum(n.graphs_from_disk for n in natives),
        "cache_hits": sum(n.cache_hits for n in natives),
        "recompiles": _counters["recompiles"],
        "eager_runs": _counters["eager_runs"],
        "graph_breaks_hit": _counters["graph_breaks_hit"],
        "failed_checks": _counters["failed_checks"],
        "guard_failures": list(_guard_failures),
    }
    out["temporaries_reused"] = _dynamir.temporary_pool()["reused"]
    return out


def reset():
    """Forgets every compiled entry, zeroes the counters and releases pooled temporaries."""
    for f in list(_compiled_functions):
        f._entries.clear()
        f._eager_reason = None
        f._warned = False
    _counters.clear()
    _guard_failures.clear()
    _dynamir.release_temporary_pool()


def _logs():
    return {p.strip() for p in os.environ.get("DYNAMIR_LOGS", "").split(",") if p.strip()}


def _is_module(obj):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(obj, torch.nn.Module)


def _is_known_layer(module):
    return type(module).__module__.startswith("torch.nn.modules.")


class _Resume:
    """Returned by a continuation's frame: go on in `function` with `args` (a trampoline, so
    that a loop that breaks on every iteration does not nest Python calls)."""

    __slots__ = ("function", "args")

    def __init__(self, function, args):
        self.function = function
        self.args = args


_NULL = object()     # the NULL of a call sequence on the value stack
_UNBOUND = object()  # a local not assigned yet


_source_code = {}  # source text (L['x'], G['np'].pi) -> its compiled expression


def _as_array(o):
    return o


def _as_scalar(o):
    # Device arrays (backend="cuda" called with dynamir.cuda.Array) stay on the GPU.
    return o if type(o) is _dynamir.DeviceArray else o[()]


def _as_tensor(o):
    return o if type(o) is _dynamir.DeviceArray else sys.modules["torch"].from_numpy(o)


def _permuted(o, axes):
    """An output the graph laid out in eager code's order, transposed back to its shape: a view
    with eager's strides (x.T * 2 is transposed in numpy and torch alike). Device arrays stay
    row-major."""
    if type(o) is _dynamir.DeviceArray:
        return o
    permute = getattr(o, "permute", None)  # a torch tensor's; numpy's transpose takes the axes
    return permute(axes) if permute is not None else o.transpose(axes)


def _view(base, offset, shape, strides, read_only=False):
    """A view of the caller's array `base` that the frame hands out (x[1:], x.T): eager code's
    shares base's memory, so a store through either reaches the other, which a copy would
    not. `offset` and `strides` count elements from base's first one."""
    numpy = sys.modules["numpy"]
    if type(base) is not numpy.ndarray:  # a torch.Tensor
        return base.as_strided(shape, strides, base.storage_offset() + offset)
    item = base.itemsize
    byte_strides = tuple(s * item for s in strides)
    if base.flags.c_contiguous:  # then a buffer of its own: the view's base is base
        view = numpy.ndarray(shape, base.dtype, buffer=base, offset=offset * item,
                             strides=byte_strides)
    else:
        # The offset is negative where base runs backwards through memory (a view of x[::-1]).
        step, distance = (item, offset) if offset >= 0 else (-item, -offset)
        start = numpy.lib.stride_tricks.as_strided(base, (distance + 1,), (step,))[distance:]
        view = numpy.lib.stride_tricks.as_strided(start, shape, byte_strides)
    if read_only:  # numpy's broadcast_to and diagonal
        view.flags.writeable = False
    return view


_OUTPUT_KINDS = {"a": _as_array, "s": _as_scalar, "t": _as_tensor, "f": float, "i": int,
                 "b": bool}
_VALUE_CHANGED = re.compile(r"^(.*): expected the value (.*), got (.*)$")


class _EnteredBlocks(list):
    """The context managers a resumed frame is inside, entered by the host: left again if the
    frame cannot go on, and by the frame itself once it does."""
    handed_off = False

    def leave(self):
        if not self.handed_off:
            for context in reversed(self):
                context.__exit__(None, None, None)


def _write_back(pairs):
    """Stores each final value the graph computed for an argument into the caller's array or
    tensor itself (the program stored into it): the (object, value) pairs of a write-back."""
    for target, value in pairs:
        if type(target) is not sys.modules["numpy"].ndarray:  # a torch.Tensor
            torch = sys.modules["torch"]
            # The program's store was no autograd operation: it ran inside no_grad, or the
            # frame would have run eagerly (graphs compute no gradients).
            with torch.no_grad():
                target.copy_(torch.from_numpy(value))
        else:
            sys.modules["numpy"].copyto(target, value)




def _replay(effects):
    """The trace's changes to the caller's objects, each object's final state: a list's items,
    a dict's items, an object's attributes (set as the program set them, through setattr, or
    deleted: _NULL), a module's globals."""
    for kind, target, state in effects:
        if kind == "l":
            target[:] = state
        elif kind == "d":
            target.clear()
            target.update(state)
        elif kind == "g":
            target.update(state)
        else:
            for name, value in state.items():
                if value is _NULL:  # deleted by the program (maybe after storing it first)
                    if name in vars(target):
                        delattr(target, name)
                else:
                    setattr(target, name, value)


def graph_break():
    """A graph break where the program calls it (torch._dynamo.graph_break()): the graph before
    it runs, and the rest of the frame goes on in a continuation. It does nothing eagerly."""


def _print(prints):
    """The frame's print calls, in order, each with what it printed as it was at the call:
    before any store is written back or change replayed, so that the caller's objects it
    prints as themselves are as the call found them."""
    for args, options in prints:
        print(*args, **options)


def _with_effects(result, stores, effects, prints=()):
    """The frame's result, once its prints are made, the graph's final values of the arrays the
    program stored into written back (`stores`) and its changes to the caller's objects
    replayed."""
    _print(prints)
    _write_back(stores)
    _replay(effects)
    return result


def _text(*parts):
    """A str formatted from the graph's values as the program formats it: each part a literal
    (how: None), format(conversion(value), spec) (how: (conversion, spec)), template % value
    (how: ('%', template)) or the string of the side a branch took (how: ('?',), value: (taken,
    if taken, if not))."""
    text = []
    for how, value in parts:
        if how is None:
            text.append(value)
        elif how[0] == "%":
            text.append(how[1] % value)
        elif how[0] == "?":
            text.append(value[1] if value[0] else value[2])
        else:
            conversion, spec = how
            if conversion:
                value = {"s": str, "r": repr, "a": ascii}[conversion](value)
            text.append(format(value, spec))
    return "".join(text)


def _instance(cls, fields):
    """An object of a plain class the trace made, with its attributes (set as object's own
    __setattr__ sets them: the program already ran the class's __init__ and __setattr__)."""
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value)
    return obj


def _namedtuple(cls, items):
    return tuple.__new__(cls, items)


def _import_type(path):
    """A type named by the tracer as module:qualname (torch.return_types.max)."""
    module, _, name = path.partition(":")
    value = importlib.import_module(module)
    for part in name.split("."):
        value = getattr(value, part)
    return value


class _Iterator(tuple):
    """A for loop's iterator on the value stack, as the items it has left."""


def _find_let(recipes, id_):
    """The ("let", id_, ...) recipe nested somewhere in `recipes`."""
    for recipe in recipes:
        if recipe[0] == "let" and recipe[1] == id_:
            return recipe
        for part in recipe[1:]:
            if isinstance(part, list):
                found = _find_let(part, id_)
                if found is not None:
                    return found
            elif isinstance(part, tuple) and part and isinstance(part[0], str):
                found = _find_let([part], id_)
                if found is not None:
                    return found
    return None


def _layout(stack):
    return tuple("null" if v is _NULL else "iter" if type(v) is _Iterator else "value"
                 for v in stack)


@dataclasses.dataclass
class _Entry:
    native: object           # _dynamir.Entry
    module: ir.Module        # after dyn-optimize and dyn-split-graphs
    host: str
    graph_breaks: list
    kernels_during_tracing: int
    trace_seconds: float
    pass_seconds: float
    resume: dict = None
    rebuild: object = None
    constants: list = None


class CompiledFunction:
    """The callable dynamir.compile returns (for an nn.Module it is also a callable module)."""

    recompile_limit = 8

    def __init__(self, fn, *, backend="cpu", fullgraph=False, capture_control_flow=False,
                 dynamic=False):
        if backend not in ("cpu", "eager", "cuda"):
            raise ValueError(f"unknown backend {backend!r}: expected 'cpu', 'eager' or 'cuda'")
        if backend == "cuda":
            available, status = _dynamir.cuda_status()
            if not available:
                raise BackendUnavailable(f"backend='cuda' is not available here: {status}")
        self._target = fn
        self._module = fn if _is_module(fn) else None
        self._fn = fn.forward if self._module is not None else fn
        self.backend = backend
        self.fullgraph = fullgraph
        self.capture_control_flow = capture_control_flow
        self.dynamic = dynamic
        self._entries = []
        # Python float and int inputs whose value changed between calls become inputs of the
        # graph (Dynamo's automatic dynamic), unless a trace needed their value.
        self._dynamic_scalars = set()
        self._static_scalars = set()
        self._eager_reason = None
        self._warned = False
        self._last = None
        # Continuations after graph breaks, shared by a function and all its continuations:
        # (offset, stack layout, unbound locals) -> CompiledFunction of the resume function.
        self._continuations = {}
        self._is_continuation = False
        _compiled_functions.add(self)
        functools.update_wrapper(self, self._fn, updated=())

    # -- frames ---------------------------------------------------------------------------
    def _frame(self, args, kwargs):
        """The traced frame's locals and globals, as the guards' sources name them. The first
        call replaces this method on the instance with a function made for the signature."""
        if self._module is not None and _is_known_layer(self._module):
            module = self._module

            def frame(args, kwargs):
                return {"self": module, "args": args}, {}
        else:
            frame = self._make_frame_builder()
        self._frame = frame
        return frame(args, kwargs)

    def _make_frame_builder(self):
        """Binding arguments with inspect costs microseconds per call: plain positional calls
        (the common case) bind by zipping names instead."""
        fn = self._fn
        func = getattr(fn, "__func__", fn)
        code = getattr(func, "__code__", None)
        try:
            signature = inspect.signature(fn)
        except ValueError:
            # A continuation of a frame whose locals are no identifiers (pytest's rewritten
            # asserts name theirs `@py_assert1`), which inspect refuses: its parameters, all
            # positional and called so by the trampoline, come from its code.
            signature = None
        bound_self = {}
        if hasattr(fn, "__self__"):
            bound_self[next(iter(inspect.signature(func).parameters))] = fn.__self__
        names = (tuple(signature.parameters) if signature
                 else code.co_varnames[:code.co_argcount])
        simple = signature is None or all(p.kind is p.POSITIONAL_OR_KEYWORD and
                                          p.default is p.empty
                                          for p in signature.parameters.values())
        globals_ = func.__globals__
        # A closure's free variables are locals of the frame too (the tracer names them
        # L['k']); their cells are read on every call, as a rebinding `nonlocal` changes them.
        cells = tuple(zip(code.co_freevars, func.__closure__)) if code and func.__closure__ else ()

        def bind_defaults(local_vars):
            # Defaults as the function holds them now (f.__defaults__ can be rebound after the
            # signature was taken): the tracer reads and guards them as the frame's locals.
            for parameter in signature.parameters.values():
                name = parameter.name
                if name in local_vars:
                    continue
                if parameter.kind is parameter.VAR_POSITIONAL:
                    local_vars[name] = ()
                elif parameter.kind is parameter.VAR_KEYWORD:
                    local_vars[name] = {}
                elif parameter.kind is parameter.KEYWORD_ONLY:
                    local_vars[name] = (func.__kwdefaults__ or {})[name]
                else:
                    positional = code.co_varnames[:code.co_argcount]
                    defaults = func.__defaults__ or ()
                    local_vars[name] = defaults[positional.index(name) - len(positional) +
                                                len(defaults)]

        # The common case as one dict display: {'x': args[0], ...} (names are identifiers).
        positional = eval("lambda args: {%s}" % ", ".join(  # our own generated text
            f"{name!r}: args[{i}]" for i, name in enumerate(names)))

        def frame(args, kwargs):
            if simple and not kwargs and len(args) == len(names):
                local_vars = positional(args)
            elif signature is None:
                raise TypeError(f"{func.__qualname__}() takes {len(names)} positional arguments")
            else:
                bound = signature.bind(*args, **kwargs)
                local_vars = dict(bound.arguments)
                bind_defaults(local_vars)
            if bound_self:
                local_vars.update(bound_self)
            for name, cell in cells:
                local_vars[name] = cell.cell_contents
            return local_vars, globals_

        return frame

    def _eager(self, args, kwargs):
        _counters["eager_runs"] += 1
        return self._target(*args, **kwargs)

    # -- compile ----------------------------------------------------------------------------
    def _compile_entry(self, args, kwargs):
        start = time.perf_counter()
        while True:
            result = trace(self._target, *args, capture_control_flow=self.capture_control_flow,
                           dynamic=self.dynamic, dynamic_scalars=sorted(self._dynamic_scalars),
                           **kwargs)
            _counters["frames_traced"] += 1
            if not result.specialize:
                break
            # The trace needed these values (a branch, a shape): constants from now on.
            self._dynamic_scalars.difference_update(result.specialize)
            self._static_scalars.update(result.specialize)
        traced = time.perf_counter()
        if result.eager_only:
            self._eager_reason = result.eager_reason
            self._log(f"runs eagerly: {result.eager_reason}")
            return None
        if self.fullgraph and result.graph_breaks:
            b = result.graph_breaks[0]
            raise GraphBreakError(f"graph break ({b.kind}): {b.reason} at {b.filename}:{b.lineno}")
        host = result.module.functions[0]
        # fullgraph=True means one graph: data-dependent branches stay on the device.
        capture = self.capture_control_flow or self.fullgraph
        split = "dyn-split-graphs{capture-control-flow=%d}" % int(capture)
        try:
            result.module.run_pipeline(f"dyn-optimize,{split}")
            passes = time.perf_counter()
            native = _dynamir.Entry(result.module._native, host, backend=self.backend)
        except RuntimeError as error:
            # IR the passes or the runtime reject (a tracer bug) is no reason to fail the
            # call: the function runs eagerly, with the reason.
            if self.fullgraph:
                raise GraphBreakError(f"compilation failed: {error}") from error
            self._give_up(error, stacklevel=4)
            return None
        if self.fullgraph and len(native.graphs) > 1:
            syncs = [line.strip() for line in result.module.function_text(host).splitlines()
                     if "dyn.to_bool" in line or "dyn.item" in line]
            raise GraphBreakError(
                f"fullgraph=True: the program needs {len(native.graphs)} graphs with host "
                f"syncs between them: {'; '.join(syncs) or 'see dynamir.explain'}")
        entry = _Entry(native, result.module, host, result.graph_breaks, result.kernel_count,
                       traced - start, passes - traced, result.resume,
                       constants=result.constants)
        self._entries.append(entry)
        return entry

    def _log(self, message):
        logs = _logs()
        if logs:
            print(f"[dynamir] {getattr(self._fn, '__qualname__', self._fn)}: {message}",
                  file=sys.stderr)

    # -- call -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        # What explain() reports: set again below by whatever entry runs; a call that runs
        # eagerly (the recompile limit, a failed compile) must not leave an earlier entry there.
        self._last = None
        if self._eager_reason is not None:
            return self._eager(args, kwargs)
        local_vars, global_vars = self._frame(args, kwargs)
        failure = None
        for entry in self._entries:
            try:
                # Guards and host program in one native call: the failing guard (a str), the
                # outputs (a list), the state at a graph break (a tuple) or a failed check.
                outputs = entry.native.call(local_vars, global_vars)
            except RuntimeError as error:
                return self._compile_failed(error, args, kwargs)
            kind = type(outputs)
            if kind is str:
                failure = outputs
                continue
            self._last = entry
            if kind is list and entry.rebuild is not None:  # the common case, kept short
                return entry.rebuild(outputs, local_vars, global_vars)
            outputs = self._finish(entry, outputs, args, kwargs, local_vars, global_vars)
            if type(outputs) is _Resume and not self._is_continuation:
                return self._trampoline(outputs)
            return outputs
        if failure is not None:
            _guard_failures.append(failure)
            changed = _VALUE_CHANGED.match(failure)
            if changed and changed.group(1) not in self._static_scalars:
                try:
                    value = ast.literal_eval(changed.group(3))
                except (ValueError, SyntaxError):
                    value = None
                if type(value) in (int, float):
                    self._dynamic_scalars.add(changed.group(1))
            if "recompiles" in _logs():
                print(f"[dynamir recompiles] guard failed: {failure}", file=sys.stderr)
        if len(self._entries) >= self.recompile_limit:
            if not self._warned:
                warnings.warn(f"dynamir: {getattr(self._fn, '__qualname__', '?')} hit the "
                              f"recompile limit ({self.recompile_limit}); running eagerly. "
                              f"Last guard failure: {failure}", RuntimeWarning, stacklevel=2)
                self._warned = True
            return self._eager(args, kwargs)
        if self._entries:
            _counters["recompiles"] += 1
        entry = self._compile_entry(args, kwargs)
        if entry is None:
            return self._eager(args, kwargs)
        try:
            outputs = entry.native.run(local_vars, global_vars)
        except RuntimeError as error:
            return self._compile_failed(error, args, kwargs)
        self._last = entry
        outputs = self._finish(entry, outputs, args, kwargs, local_vars, global_vars)
        if type(outputs) is _Resume and not self._is_continuation:
            return self._trampoline(outputs)
        return outputs

    def _compile_failed(self, failure, args, kwargs):
        """Dynamir could not compile or run a graph: the function runs eagerly from now on,
        with the reason logged once."""
        self._give_up(failure, stacklevel=4)
        return self._eager(args, kwargs)

    def _give_up(self, failure, stacklevel):
        self._eager_reason = f"compilation failed: {failure}"
        warnings.warn(f"dynamir: {getattr(self._fn, '__qualname__', '?')} runs eagerly: "
                      f"{failure}", RuntimeWarning, stacklevel=stacklevel)

    def _finish(self, entry, outputs, args, kwargs, local_vars, global_vars):
        """The result of a host program run: the outputs (a list) rebuilt into the function's
        result, or, at a graph break (a tuple of live arrays), what the frame goes on with."""
        if type(outputs) is tuple:
            return self._after_break(entry, outputs, args, kwargs, local_vars, global_vars)
        if type(outputs) is _dynamir.CheckFailed:
            # Nothing the host program computed was used: the eager run raises, or not, itself.
            _counters["failed_checks"] += 1
            self._log(f"{outputs.reason}; the frame runs eagerly from its start")
            return self._eager(args, kwargs)
        if entry.rebuild is None:
            entry.rebuild = self._make_rebuild(entry.native.output_structure, entry.constants)
        return entry.rebuild(outputs, local_vars, global_vars)

    # -- after a graph break -------------------------------------------------------------------
    def _after_break(self, entry, live, args, kwargs, local_vars, global_vars):
        """The host program reached the break with `live` arrays: run the breaking instruction
        for real and go on in a continuation (a _Resume), or finish eagerly."""
        _counters["graph_breaks_hit"] += 1
        plan = entry.resume
        if plan is None or plan["action"] == "restart":
            why = plan["why"] if plan else "the frame cannot be resumed"
        else:
            try:
                return self._go_on(plan, live, local_vars, global_vars)
            except resume.Unresumable as failure:
                why = str(failure)
        # Graphs are pure: running the frame from its start repeats no side effect.
        self._log(f"graph break at run time; the frame runs eagerly from its start: {why}")
        return self._eager(args, kwargs)

    def _go_on(self, plan, live, local_vars, global_vars):
        # The `with torch.no_grad()` (enable_grad()) blocks the frame is in, entered for real by
        # the host: the frame goes on with their __exit__ on its stack. Until it does, a failure
        # leaves them.
        entered = _EnteredBlocks()
        try:
            return self._go_on_entered(plan, live, local_vars, global_vars, entered)
        except BaseException:
            entered.leave()
            raise

    def _go_on_entered(self, plan, live, local_vars, global_vars, entered):
        objects = {}  # one Python object per traced object, however often the state holds it

        def rebuild(recipe):
            kind = recipe[0]
            if kind == "let":
                value = objects[recipe[1]] = rebuild(recipe[2])
                return value
            if kind == "ref":
                if recipe[1] not in objects:  # defined by a local that is dead here
                    rebuild(_find_let(plan["locals"], recipe[1]))
                return objects[recipe[1]]
            if kind == "live":
                value = live[recipe[1]]
                if type(value) is _dynamir.DeviceArray:  # backend="cuda" with device arrays
                    return value.numpy()[()] if recipe[2] == "s" else value
                if recipe[3]:
                    value = value.copy()
                value = _OUTPUT_KINDS[recipe[2]](value)
                return value if recipe[4] is None else _permuted(value, recipe[4])
            if kind == "source":
                code = _source_code.get(recipe[1])
                if code is None:  # our own generated source text, e.g. L['x'].weight
                    code = _source_code[recipe[1]] = builtins_compile(recipe[1], "<source>",
                                                                      "eval")
                return eval(code, {"__builtins__": {"type": type}, "L": local_vars,
                                   "G": global_vars})
            if kind == "const":
                return recipe[1]
            if kind == "either":  # (test, if true, if false): a while loop's variable
                return rebuild(recipe[2]) if rebuild(recipe[1]) else rebuild(recipe[3])
            if kind == "null":
                return _NULL
            if kind == "unbound":
                return _UNBOUND
            if kind == "tuple":
                return tuple(rebuild(r) for r in recipe[1])
            if kind == "typed":
                return _import_type(recipe[1])(tuple(rebuild(r) for r in recipe[2]))
            if kind == "call":  # a collections object or a set: its class on its contents
                return recipe[1](*(rebuild(r) for r in recipe[2]))
            if kind == "namedtuple":
                return _namedtuple(recipe[1], tuple(rebuild(r) for r in recipe[2]))
            if kind == "object":
                return _instance(recipe[1], dict(zip(recipe[2], (rebuild(r) for r in recipe[3]))))
            if kind == "view":
                return getattr(rebuild(recipe[1]), recipe[2])()
            if kind == "strided":  # a view of the caller's array
                return _view(rebuild(recipe[1]), *recipe[2:])
            if kind == "list":
                return [rebuild(r) for r in recipe[1]]
            if kind == "dict":
                return dict(zip(recipe[1], (rebuild(r) for r in recipe[2])))
            if kind == "method":
                return getattr(rebuild(recipe[1]), recipe[2])
            if kind == "slice":
                return slice(*(rebuild(r) for r in recipe[1]))
            if kind == "iter":
                return _Iterator(rebuild(r) for r in recipe[1])
            if kind == "text":  # a str formatted from the graph's values
                return _text(*((how, rebuild(r)) for how, r in recipe[1]))
            if kind == "grad_mode_exit":  # torch.no_grad or torch.enable_grad
                context = recipe[1]()
                context.__enter__()
                entered.append(context)
                return context.__exit__
            if kind == "missing":
                raise resume.Unresumable(f"the host cannot recreate {recipe[1]}")
            raise resume.Unresumable(f"unknown rebuild recipe {kind!r}")

        function = self._fn
        code, shift = resume.origin(function.__code__)
        action = plan["action"]
        if plan["offset"] < shift:
            raise resume.Unresumable("the break is in the resume prologue")
        if action != "eager" and resume.in_try_block(function, plan["offset"] - shift):
            action = "eager"  # what the breaking instruction raises must reach the handler
        stack = [rebuild(r) for r in plan["stack"]]
        if action == "eager":
            # A call goes on from its PRECALL/KW_NAMES, which set it up.
            offset = plan.get("start", plan["offset"]) - shift
        elif action == "step":
            offset = plan["end"] - shift
            consume = plan["consume"]
            top, stack = stack[len(stack) - consume:], stack[:len(stack) - consume]
            if any(type(v) is _Iterator for v in top):
                raise resume.Unresumable("the breaking instruction takes a loop's iterator")
        elif action == "jump":
            taken = bool(stack.pop())
            offset = plan["targets"][0 if taken else 1] - shift
        else:
            raise resume.Unresumable(f"unknown resume action {action!r}")
        # Only the locals the rest of the frame reads cross the break; the others are passed as
        # None and so neither rebuilt nor guarded.
        live_locals = resume.live_locals(function, offset)
        locals_ = [rebuild(r) if j in live_locals else None
                   for j, r in enumerate(plan["locals"][:len(code.co_varnames)])]
        # The stores so far go into the caller's arrays once nothing can fail any more (a
        # failure runs the frame eagerly from its start, which must find them untouched).
        stores = [(rebuild(("source", source)), live[i]) for source, i in plan.get("writeback", ())]
        effects = [(kind, rebuild(("source", source)),
                    [rebuild(r) for r in values] if kind == "l" else
                    dict(zip(keys, (rebuild(r) for r in values))))
                   for kind, source, keys, values in plan.get("effects", ())]
        prints = [([rebuild(r) for r in args], options)
                  for args, options in plan.get("prints", ())]
        if action == "eager":
            go_on = resume.resume_function(function, offset, _layout(stack),
                                           [j for j, v in enumerate(locals_) if v is _UNBOUND])
            _with_effects(None, stores, effects, prints)
            arguments = self._arguments(locals_, stack)
            entered.handed_off = True  # from here on the frame's own with-blocks leave them
            return go_on(*arguments)
        if action == "step":
            step, produced = resume.step_function(function, plan["start"] - shift,
                                                  plan["end"] - shift, [v is _NULL for v in top])
            # Everything that can fail is made before the step runs its side effect.
            continuation = self._continuation(offset, stack + [None] * produced, locals_)
            _with_effects(None, stores, effects, prints)
            stack += step(*[None if v is _NULL else v for v in top])
        else:
            continuation = self._continuation(offset, stack, locals_)
            _with_effects(None, stores, effects, prints)
        return _Resume(continuation, self._arguments(locals_, stack))

    @staticmethod
    def _arguments(locals_, stack):
        return ([None if v is _UNBOUND else v for v in locals_] +
                [None if v is _NULL else tuple(v) if type(v) is _Iterator else v
                 for v in stack])

    def _continuation(self, offset, stack, locals_):
        """The compiled continuation at `offset` for a stack and locals shaped like these."""
        layout = _layout(stack)
        unbound = tuple(j for j, v in enumerate(locals_) if v is _UNBOUND)
        key = (offset, layout, unbound)
        continuation = self._continuations.get(key)
        if continuation is None:
            function = resume.resume_function(self._fn, offset, layout, unbound)
            continuation = CompiledFunction(function, backend=self.backend,
                                            capture_control_flow=self.capture_control_flow,
                                            dynamic=self.dynamic)
            continuation._continuations = self._continuations
            continuation._is_continuation = True
            continuation.recompile_limit = self.recompile_limit
            self._continuations[key] = continuation
        return continuation

    def _trampoline(self, step):
        """Runs continuations until the frame returns; remembers what ran for explain()."""
        ran = [(self, self._last)]
        while type(step) is _Resume:
            function = step.function
            function._last = None
            step = function(*step.args)
            ran.append((function, function._last))
        self._last = ran
        return step

    @staticmethod
    def _make_rebuild(structure, constants=None):
        """The function that turns the flat outputs into the traced function's result: each
        output as the type eager code returns there (`%N` a numpy array, `%sN` a numpy scalar,
        `%tN` a torch tensor sharing the array's memory, `%fN`, `%iN`, `%bN` a Python float,
        int, bool), the caller's own objects by their
        source (`L['x']`), views of them by `_v(L['x'], offset, shape, strides)`,
        torch.return_types by `_type('module:name')`, other objects the trace hands out as
        they are (`_k[i]`: nan, a dtype, a module)."""
        if structure == "%0":
            return lambda outputs, local_vars, global_vars: outputs[0]
        text = re.sub(r"%([stfib]?)(\d+)", r"_\1(_o[\2])", structure)
        code = builtins_compile(re.sub(r"@(\d+)", r"_o[\1]", text),
                                "<dynamir output>", "eval")  # our own generated literal

        def rebuild(outputs, local_vars, global_vars):
            shared = {}

            def define(n, value):  # an object the result holds more than once
                shared[n] = value
                return value
            return eval(code, {"__builtins__": {"type": type, "set": set}, "_": _as_array,
                               "_s": _as_scalar, "_f": float, "_i": int, "_b": bool,
                               "_t": _as_tensor, "_type": _import_type,
                               "_obj": _instance, "_nt": _namedtuple, "_fx": _with_effects,
                               "_text": _text,
                               "_p": _permuted, "_v": _view, "_del": _NULL},
                        {"_o": outputs, "L": local_vars, "G": global_vars, "_k": constants,
                         "_d": define, "_m": shared})

        return rebuild

    # -- nn.Module look-alike -----------------------------------------------------------------
    def __getattr__(self, name):
        module = self.__dict__.get("_module")
        if module is not None:
            return getattr(module, name)
        raise AttributeError(name)


def compile(fn=None, *, backend="cpu", fullgraph=False, capture_control_flow=False,
            dynamic=False):
    """Compiles a function or nn.Module; usable as @dynamir.compile and @dynamir.compile(...)."""
    options = dict(backend=backend, fullgraph=fullgraph,
                   capture_control_flow=capture_control_flow, dynamic=dynamic)
    if fn is None:
        return lambda f: CompiledFunction(f, **options)
    return CompiledFunction(fn, **options)


@dataclasses.dataclass
class Explanation:
    """What one compiled run did (see dynamir.explain)."""

    result: object
    graph_count: int
    graph_break_count: int
    break_reasons: list
    ops_per_graph: dict
    guards: list
    checks: list  # the run-time checks (dyn.check) the host programs make, by reason
    graphs: dict
    never_compiled: list
    kernels_run_during_tracing: int
    host_syncs: int
    compile_times: dict
    host_program: str

    def __str__(self):
        lines = [f"Graphs: {self.graph_count}   graph breaks: {self.graph_break_count}   "
                 f"kernels run during tracing: {self.kernels_run_during_tracing}   "
                 f"host syncs: {self.host_syncs}"]
        for b in self.break_reasons:
            lines.append(f"  break ({b.kind}) at {b.filename}:{b.lineno}: {b.reason}")
        for name, ops in self.ops_per_graph.items():
            state = "traced, never compiled" if name in self.never_compiled else "compiled"
            lines.append(f"  graph {name} [{state}]: {', '.join(ops)}")
        lines.append(f"Guards ({len(self.guards)}):")
        lines.extend(f"  {g.text}" for g in self.guards)
        if self.checks:
            lines.append(f"Run-time checks ({len(self.checks)}; when one fails the frame runs "
                         "eagerly):")
            lines.extend(f"  {c}" for c in self.checks)
        times = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in self.compile_times.items())
        lines.append(f"Compile times: {times}")
        return "\n".join(lines)

    def to_dot(self):
        """The host program as Graphviz: graphs, host branches, breaks."""
        out = ["digraph dynamir {", "  rankdir=TB;", "  node [fontname=monospace];"]
        for name, ops in self.ops_per_graph.items():
            style = "dashed" if name in self.never_compiled else "solid"
            label = name + "\\n" + "\\n".join(ops)
            out.append(f'  "{name}" [shape=box, style={style}, label="{label}"];')
        previous = None
        branch = 0
        for line in self.host_program.splitlines():
            m = re.search(r"call @(\w+)", line)
            if m and m.group(1) in self.ops_per_graph:
                if previous:
                    out.append(f'  "{previous}" -> "{m.group(1)}";')
                previous = m.group(1)
            elif "dyn.to_bool" in line:
                node = f"branch{branch}"
                branch += 1
                out.append(f'  "{node}" [shape=diamond, label="host sync: if"];')
                if previous:
                    out.append(f'  "{previous}" -> "{node}";')
                previous = node
        for i, b in enumerate(self.break_reasons):
            out.append(f'  "break{i}" [shape=octagon, label="{b.kind}\\nline {b.lineno}"];')
            if previous:
                out.append(f'  "{previous}" -> "break{i}";')
        out.append("}")
        return "\n".join(out)


def explain(f, *args, **kwargs):
    """Runs f once, compiled, and reports graphs, breaks, guards, what never compiled, host
    syncs and compile times. f is a plain function/module (default options) or the result of
    dynamir.compile(...) (its options)."""
    compiled = f if isinstance(f, CompiledFunction) else compile(f)
    before = _host_syncs(compiled)
    return _explanation(compiled, compiled(*args, **kwargs), before)


def _host_syncs(compiled):
    """Host syncs so far of each native entry of a function and its continuations."""
    functions = [compiled, *compiled._continuations.values()]
    return {id(entry.native): entry.native.host_syncs
            for function in functions for entry in function._entries}


def _explanation(compiled, result, before=None):
    """The Explanation of `compiled`'s last run, which returned `result`: the frame's entry and
    those of the continuations it went on in after graph breaks; host syncs counted since
    `before`."""
    before = before or {}
    last = compiled._last
    if last is None:
        reason = compiled._eager_reason or "the frame ran eagerly"
        return Explanation(result, 0, 0, [GraphBreak("eager", reason, "", 0)], {}, [], [], {},
                           [], 0, 0, {}, "")
    ran = last if isinstance(last, list) else [(compiled, last)]
    graph_names, compiled_names, breaks, guards = [], set(), [], []
    ops, graphs, hosts = {}, {}, []
    kernels = syncs = 0
    counted = set()  # a continuation that ran in every loop iteration counts its syncs once
    times = {"trace": 0.0, "passes": 0.0, "codegen": 0.0}
    for function, entry in ran:
        if entry is None:
            # A continuation that could not be compiled ran eagerly.
            reason = function._eager_reason or "the rest of the frame ran eagerly"
            breaks.append(GraphBreak("eager", reason, "", 0))
            continue
        module = entry.module
        names = [name for name, _ in entry.native.graphs]
        graph_names += names
        compiled_names |= {name for name, done in entry.native.graphs if done}
        breaks += entry.graph_breaks
        guards += guards_of(module)
        for g in names:
            ops[g] = [op for op in module.operations(g) if op != "func.return"]
            graphs[g] = module.function_text(g)
        hosts.append(module.function_text(entry.host))
        kernels += entry.kernels_during_tracing
        if id(entry.native) not in counted:
            counted.add(id(entry.native))
            syncs += entry.native.host_syncs - before.get(id(entry.native), 0)
        times["trace"] += entry.trace_seconds
        times["passes"] += entry.pass_seconds
        times["codegen"] += entry.native.compile_seconds
    return Explanation(
        result=result,
        graph_count=len(graph_names),
        graph_break_count=sum(1 for b in breaks if b.kind != "eager"),
        break_reasons=breaks,
        ops_per_graph=ops,
        guards=guards,
        checks=[m.group(1) for host in hosts
                for m in re.finditer(r'dyn\.check %[^,]+, "([^"]*)"', host)],
        graphs=graphs,
        never_compiled=[g for g in graph_names if g not in compiled_names],
        kernels_run_during_tracing=kernels,
        host_syncs=syncs,
        compile_times=times,
        host_program="\n".join(hosts),
    )
