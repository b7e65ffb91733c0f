"""Dynamir: trace Python functions that use numpy or torch into MLIR, without running kernels.

The native core lives in the `_dynamir` extension; this package is the public face.
"""

from _dynamir import MLIRError, get_num_threads, set_num_threads

from . import cuda, ir
from .compiler import (BackendUnavailable, CompiledFunction, Explanation, GraphBreakError,
                       compile, counters, explain, graph_break, reset)
from .tracing import GraphBreak, Guard, TraceResult, trace

__all__ = ["MLIRError", "cuda", "ir", "trace", "TraceResult", "GraphBreak", "Guard", "compile",
           "explain", "graph_break", "counters", "reset", "CompiledFunction", "Explanation",
           "GraphBreakError", "BackendUnavailable", "get_num_threads", "set_num_threads"]
