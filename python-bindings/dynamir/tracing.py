"""dynamir.trace: a Python function (or nn.Module) and example arguments to the dyn dialect.

Tracing interprets the function's bytecode with fake tensors. It runs no kernel: the C++
tracer never calls numpy or torch on data, and while it runs, a torch dispatch mode (when torch
is loaded) counts every aten op anyway; `TraceResult.kernel_count` is the total and tests
assert it is 0.
"""

import contextlib
import dataclasses
import os
import sys

import _dynamir

from . import ir


@dataclasses.dataclass(frozen=True)
class GraphBreak:
    kind: str
    reason: str
    filename: str
    lineno: int


@dataclasses.dataclass(frozen=True)
class Guard:
    kind: str
    source: str | None
    text: str


@dataclasses.dataclass
class TraceResult:
    module: ir.Module
    graph_breaks: list
    guards: list
    eager_reason: str
    kernel_count: int
    resume: dict = None  # at a graph break: how the host goes on (see dynamir.resume)
    constants: list = None  # the objects the output structure names as _k[i]
    specialize: list = None  # dynamic scalars the trace needed the values of: trace again

    @property
    def eager_only(self):
        return bool(self.eager_reason)

    def __str__(self):
        return str(self.module)


@contextlib.contextmanager
def _count_torch_kernels(counter):
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    from torch.utils._python_dispatch import TorchDispatchMode

    meta = torch.device("meta")

    class Counter(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            # The tracer asks torch for dtype rules on meta tensors (no data, no kernel):
            # those calls are not computation on real values.
            tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
            if not (all(t.is_meta for t in tensors) if tensors
                    else kwargs.get("device") == meta):
                counter[0] += 1
            return func(*args, **kwargs)

    with Counter():
        yield


def _logs():
    return {p.strip() for p in os.environ.get("DYNAMIR_LOGS", "").split(",") if p.strip()}


def guards_of(module):
    """The guard ops of a module, in order, as Guard records."""
    guards = []
    for line in str(module).splitlines():
        line = line.strip()
        if line.startswith("dyn.guard."):
            kind = line.split()[0][len("dyn.guard."):]
            quoted = line.split('"')
            # A guard on global state (grad_mode) reads no object: its source is None.
            guards.append(Guard(kind, quoted[1] if len(quoted) > 1 else None, line))
    return guards


def trace(fn, *args, capture_control_flow=False, dynamic=False, dynamic_scalars=(), **kwargs):
    """Traces `fn(*args, **kwargs)` into a dyn module without running anything.

    `fn` may be a function, a bound method or an nn.Module (its forward is traced with the
    module as `self`). Returns a TraceResult: the module (str() prints the IR), the guards,
    the graph breaks with reasons and lines, and the eager-only reason if the frame can never
    be traced. `dynamic_scalars` names Python float and int inputs (by source, `L['alpha']`)
    that become graph inputs instead of constants; `specialize` lists those whose values the
    trace needed (the module is then empty: trace again without them).
    """
    target = fn
    counter = [0]
    with _count_torch_kernels(counter):
        module, breaks, eager_reason, kernel_calls, resume_plan, constants, specialize = \
            _dynamir.trace(target, tuple(args), dict(kwargs), dynamic, capture_control_flow,
                           list(dynamic_scalars))
    module = ir.Module(module)
    result = TraceResult(
        module=module,
        graph_breaks=[GraphBreak(*b) for b in breaks],
        guards=guards_of(module),
        eager_reason=eager_reason,
        kernel_count=kernel_calls + counter[0],
        resume=resume_plan,
        constants=constants,
        specialize=specialize,
    )
    logs = _logs()
    if "guards" in logs:
        for g in result.guards:
            print(f"[dynamir guards] {g.text}", file=sys.stderr)
    if "graph" in logs:
        print(f"[dynamir graph]\n{module}", file=sys.stderr)
    if eager_reason and logs:
        print(f"[dynamir] runs eagerly: {eager_reason}", file=sys.stderr)
    return result


__all__ = ["trace", "TraceResult", "GraphBreak", "Guard"]
