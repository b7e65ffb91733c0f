"""MLIR surface: contexts and modules to parse, verify, transform and print.

    >>> from dynamir import ir
    >>> m = ir.Module.parse("func.func @f() { return }")
    >>> m.run_pipeline("builtin.module(canonicalize)")
    >>> m.functions
    ['f']
"""

import re

import _dynamir

Context = _dynamir.Context

_ON_MODULE = re.compile(r"^\s*builtin\.module\s*\(")


class Module:
    """An MLIR module. Diagnostics from any method raise dynamir.MLIRError with locations."""

    def __init__(self, native):
        self._native = native

    @classmethod
    def parse(cls, text, context=None, filename="<string>"):
        return cls(_dynamir.Module.parse(text, context, filename))

    def verify(self):
        self._native.verify()

    def run_pipeline(self, pipeline):
        """Runs a pass pipeline given as text, with the same pass names as tensor-opt.

        A pipeline not anchored on the module ("canonicalize,cse", "func.func(cse)") is nested
        in "builtin.module(...)".
        """
        if not _ON_MODULE.match(pipeline):
            pipeline = f"builtin.module({pipeline})"
        self._native.run_pipeline(pipeline)
        return self

    @property
    def functions(self):
        return self._native.functions

    def operations(self, function=None):
        """Op names in program order, nested ops included (only `function`'s when given)."""
        return self._native.operations(function)

    def function_text(self, name):
        """The printed form of one function of the module."""
        return self._native.function_text(name)

    @property
    def context(self):
        return self._native.context

    def to_string(self, debug_info=False, generic=False):
        return self._native.to_string(debug_info, generic)

    def __str__(self):
        return str(self._native)


__all__ = ["Context", "Module"]
