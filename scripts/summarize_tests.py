"""Adds up the JUnit XML reports that the test suites write and prints one closing line.

Arguments: the results folders of ctest runs, each `DIR` or `LABEL=DIR` (LABEL prefixes the
names of its suites, e.g. `sanitized=build-asan/test-results`). A folder holds one report per
suite and ctest's own report, ctest.xml (`ctest --output-junit`): a ctest test that failed
without a report of its own that shows the failure (a suite that crashed before writing one,
a plain command such as a docs diff) counts as one failed test, and so does a folder without
any report (its build failed).
"""

import pathlib
import sys
import xml.etree.ElementTree as ET

CTEST_REPORT = "ctest.xml"


def suites_of(report):
    root = ET.parse(report).getroot()
    return [root] if root.tag == "testsuite" else list(root.iter("testsuite"))


def count(report):
    """(passed, failed, skipped) in one report."""
    passed = failed = skipped = 0
    for suite in suites_of(report):
        total = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0)) + int(suite.get("disabled", 0))
        passed += total - bad - skip
        failed += bad
        skipped += skip
    return passed, failed, skipped


def main(args) -> int:
    passed = failed = skipped = 0
    names = []
    for arg in args:
        label, _, folder = arg.rpartition("=")
        prefix = f"{label}:" if label else ""
        folder = pathlib.Path(folder)
        reports = sorted(r for r in folder.glob("*.xml") if r.name != CTEST_REPORT)
        failed_suites = set()
        for report in reports:
            p, f, s = count(report)
            passed, failed, skipped = passed + p, failed + f, skipped + s
            names.append(prefix + report.stem)
            if f:
                failed_suites.add(report.stem)
        ctest = folder / CTEST_REPORT
        if ctest.exists():
            for case in ET.parse(ctest).getroot().iter("testcase"):
                if case.get("status") == "fail" and case.get("name") not in failed_suites:
                    failed += 1
                    names.append(f"{prefix}{case.get('name')} (failed without a report)")
        elif not reports:
            failed += 1
            names.append(f"{prefix}(no reports in {folder})")
    print(f"Suites: {', '.join(names) or 'none'}")
    print(f"Tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
