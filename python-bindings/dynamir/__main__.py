"""python -m dynamir run|explain script.py [args...]

Runs a script with `torch.compile` routed to `dynamir.compile` (same arguments; Dynamir's CPU
backend whatever `backend=` says), so a program written for torch.compile runs on Dynamir
unchanged. `explain` then prints, for every function or module the script compiled, what its
last call traced, compiled, guarded and broke on, and the process-wide counters.
"""

import argparse
import runpy
import sys

from . import compiler


def _torch_compile_shim(model=None, *, fullgraph=False, dynamic=None, backend=None, mode=None,
                        options=None, disable=False):
    if disable:
        return model if model is not None else (lambda m: m)
    make = lambda m: compiler.compile(m, fullgraph=fullgraph, dynamic=bool(dynamic))
    return make if model is None else make(model)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m dynamir", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["run", "explain"])
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)
    compiled = []
    original = compiler.CompiledFunction.__init__

    def tracking_init(self, *a, **k):
        original(self, *a, **k)
        compiled.append(self)

    compiler.CompiledFunction.__init__ = tracking_init
    try:
        import torch
        torch.compile = _torch_compile_shim
    except ImportError:
        pass
    sys.argv = [ns.script] + ns.args
    try:
        runpy.run_path(ns.script, run_name="__main__")
    finally:
        compiler.CompiledFunction.__init__ = original
        if ns.command == "explain":
            print("\n== dynamir explain", file=sys.stderr)
            for f in compiled:
                if f._is_continuation:  # reported with the frame it continues
                    continue
                name = getattr(f._fn, "__qualname__", repr(f._fn))
                print(f"-- {name}", file=sys.stderr)
                if f._last is None:
                    reason = f._eager_reason or "never called, or ran eagerly"
                    print(f"   no compiled run ({reason})", file=sys.stderr)
                    continue
                print(compiler._explanation(f, None), file=sys.stderr)
            print(f"counters: {compiler.counters()}", file=sys.stderr)


if __name__ == "__main__":
    main()
