"""Adds up the JUnit XML reports that the test suites write and prints one closing line."""

import pathlib
import sys
import xml.etree.ElementTree as ET


def main(results_dir: str) -> int:
    passed = failed = skipped = 0
    reports = sorted(pathlib.Path(results_dir).glob("*.xml"))
    for report in reports:
        root = ET.parse(report).getroot()
        suites = [root] if root.tag == "testsuite" else root.iter("testsuite")
        for suite in suites:
            total = int(suite.get("tests", 0))
            bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
            skip = int(suite.get("skipped", 0)) + int(suite.get("disabled", 0))
            passed += total - bad - skip
            failed += bad
            skipped += skip
    names = ", ".join(r.stem for r in reports) or "none"
    print(f"Suites: {names}")
    print(f"Tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
