"""Hand-written corpus CI: every program of tools/difftest/corpus.py (small functions written
the way people write Python + torch/numpy: containers, builtins, closures, classes, strings,
mutation, torch/numpy API, nn.Modules in inference, control flow on tensor values, exceptions)
run eagerly and through Dynamir (default, capture_control_flow=True, backend="eager", and
fullgraph=True for those that compile whole; two calls each) by difftest's crash-isolated
runner. Each program's first call must break the graph exactly as corpus.BREAKS says (0 for
most: a change that adds a break fails, and one that removes a break updates the table with
`corpus.py --expected`). Programs that fail today are listed in KNOWN_FAILURES; the list is
strict, so a fixed bug must be removed from it.

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
KNOWN_FAILURES = {}


def test_corpus(capsys):
    results = corpus.run_corpus(jobs=JOBS)
    assert len(results) == len(corpus.PROGRAMS)
    with capsys.disabled():  # the break counts per theme, in every run's output
        print("\n" + corpus.breaks_summary(results))
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
    breaks = corpus.unexpected_breaks(results)
    if breaks:
        report.append("first calls that break otherwise than corpus.BREAKS says (update it with "
                      "`corpus.py --expected` where the change is an improvement):")
        report += [f"  {name}: expected {want}, observed {seen}" for name, want, seen in breaks]
    assert not unexpected and not fixed and not unknown and not breaks, "\n".join(report)
