"""Differential CI slice: a fixed seed of random numpy/torch programs, each run eagerly and
through Dynamir (default, capture_control_flow=True, backend="eager"; two calls each), by the
runner in tools/difftest (see docs/testing.md). Programs that fail today are listed in
KNOWN_FAILURES; the list is strict, so a fixed bug must be removed from it."""

import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                                "difftest"))
import difftest  # noqa: E402

SEED = 20261201
COUNT = 500
JOBS = 2

# "seed:index": one-line reason. Filled from a run of the current code; shrink it as bugs
# get fixed (`python tools/difftest/difftest.py --show ID` prints a program, --minimize ID
# reduces it).
KNOWN_FAILURES = {}


def test_differential():
    results = difftest.run_seed(SEED, COUNT, jobs=JOBS)
    assert len(results) == COUNT
    failing = {r["id"]: r for r in results if r["status"] != "ok"}
    unexpected = [r for pid, r in sorted(failing.items()) if pid not in KNOWN_FAILURES]
    fixed = sorted(pid for pid in KNOWN_FAILURES if pid not in failing)
    report = [difftest.summary(results, [SEED])]
    if unexpected:
        report.append(f"{len(unexpected)} programs fail that are not in KNOWN_FAILURES:")
        report += [difftest.format_failure(r) for r in unexpected]
    if fixed:
        report.append("these KNOWN_FAILURES pass now; remove them from the list: " +
                      ", ".join(fixed))
    assert not unexpected and not fixed, "\n".join(report)


def test_comparison_of_python_complex_numbers():
    # 3112000010:1 returned complex NaNs from .tolist(): eager's own nan+nanj must equal
    # itself, and a part that differs is still found and named.
    nan = float("nan")
    assert difftest.diff([complex(nan, nan)], [complex(nan, nan)]) is None
    assert difftest.diff(complex(1.0, nan), complex(1.0, nan)) is None
    assert difftest.diff(complex(1.0, 2.0), complex(1.0, 3.0)) == \
        "value: result.imag: expected 2.0, got 3.0"
    assert difftest.diff(complex(nan, 0.0), complex(0.0, 0.0)).startswith("value: result.real")


def test_garbage_left_by_an_eager_exception_is_not_compared(tmp_path):
    # 3115000019:96: `x **= y` of int32 x and a negative int64 y writes numpy's cast buffer
    # into x, then raises; the garbage depends on the allocator's state, which no rerun of
    # eager reproduces (in the full suite on 3.12 three eager runs left 0 where Dynamir's
    # eager call of the same op left 1730161713). The argument the raising line changed is
    # undefined, whatever the allocator did: x, and not y or d.
    program = difftest.generate(3115000019, 96, "both")
    path = tmp_path / "program.py"
    path.write_text(program["source"])
    fn = difftest.load_function(program, str(path))
    _, exc, args, _ = difftest.eager_call(fn, program, "all")  # the dynamic mode's new sizes
    assert isinstance(exc, ValueError)
    assert args[0] is difftest.UNDEFINED
    assert args[1] is not difftest.UNDEFINED and args[2] is not difftest.UNDEFINED
    result = difftest.check_program(program, str(tmp_path))
    assert result["status"] == "ok", result["failures"]


def test_a_result_an_ulp_of_input_changes_is_not_compared_to_the_bit(tmp_path):
    # 3123000004:8: torch.sign of a float64 sum that cancels to 2.2e-16 in torch's order and to
    # a negative residue in Dynamir's. Eager on the inputs moved one ulp down gives Dynamir's
    # answer, so neither order is wrong. A result no ulp of input explains still mismatches.
    program = difftest.generate(3123000004, 8, "both")
    result = difftest.check_program(program, str(tmp_path))
    assert result["status"] == "ok", result["failures"]
    path = tmp_path / "program.py"
    path.write_text(program["source"])
    fn = difftest.load_function(program, str(path))
    got = fn(*difftest.make_inputs(program, "first"))
    wrong = (got[0] + 2, [got[0] + 2, got[0] + 2])
    assert not difftest.ill_conditioned_like(fn, program, "first", wrong)
