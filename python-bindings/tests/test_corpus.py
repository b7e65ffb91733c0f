"""Hand-written corpus CI: every program of tools/difftest/corpus.py (small functions written
the way people write Python + torch/numpy: containers, builtins, closures, classes, strings,
mutation, torch/numpy API, nn.Modules in inference, control flow on tensor values, exceptions)
run eagerly and through Dynamir (default, capture_control_flow=True, backend="eager"; two calls
each) by difftest's crash-isolated runner. Programs that fail today are listed in
KNOWN_FAILURES; the list is strict, so a fixed bug must be removed from it.

Reproduce one program: `python tools/difftest/corpus.py --filter NAME`; a standalone script:
`python tools/difftest/corpus.py --script NAME --mode default`."""

import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "difftest"))
import corpus  # noqa: E402

JOBS = 2

# program name: one-line reason. Filled from a run of the current code; shrink it as bugs get
# fixed.
KNOWN_FAILURES = {
    # aliasing / layout: the tracer's contiguous() returns its input (an alias, same strides)
    "contiguous_of_noncontiguous_arg": "x.contiguous() of a non-contiguous argument returns an "
                                       "alias of x: writes through it mutate the argument",
    "expand_contiguous_mutate": "x.expand(2, 3).contiguous() aliases x: y[0, 0] = 5 writes "
                                "into the argument",
    "detach_clone_contiguous": "x.t().contiguous() comes back with the transposed strides, so "
                               ".is_contiguous() is False",
    "view_on_noncontiguous_raises": "x.t().view(-1) is traced as a reshape and returns instead "
                                    "of raising RuntimeError",
    # builtins
    "enumerate_start": "for i, t in enumerate(xs, start=1): the start= keyword is ignored "
                       "(counts from 0); positional start works",
    # dtype checks: mixed-dtype matmul family is promoted (dyn.cast) instead of raising
    "dtype_mismatch_matmul": "torch.matmul(float32, int64) returns a float32 result instead of "
                             "raising RuntimeError",
    "dot_mixed_dtype_raises": "torch.dot(float32, int64) returns instead of raising "
                              "RuntimeError",
    "bmm_mixed_dtype_raises": "torch.bmm(float32, float64) returns instead of raising "
                              "RuntimeError",
    "half_float_matmul_raises": "float16 @ float32 returns instead of raising RuntimeError",
}


def test_corpus():
    results = corpus.run_corpus(jobs=JOBS)
    assert len(results) == len(corpus.PROGRAMS)
    failing = {r["id"]: r for r in results if r["status"] != "ok"}
    unexpected = [r for name, r in failing.items() if name not in KNOWN_FAILURES]
    fixed = sorted(name for name in KNOWN_FAILURES if name in corpus.PROGRAMS and name not in failing)
    unknown = sorted(name for name in KNOWN_FAILURES if name not in corpus.PROGRAMS)
    report = [corpus.summary(results)]
    if unexpected:
        report.append(f"{len(unexpected)} programs fail that are not in KNOWN_FAILURES:")
        report += [corpus.format_failure(r, source=True) for r in unexpected]
    if fixed:
        report.append("these KNOWN_FAILURES pass now; remove them from the list: " +
                      ", ".join(fixed))
    if unknown:
        report.append("KNOWN_FAILURES names no corpus program: " + ", ".join(unknown))
    assert not unexpected and not fixed and not unknown, "\n".join(report)
