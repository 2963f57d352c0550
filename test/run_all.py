"""Runs every test suite and prints one summary: Catch2 (through ctest) and
pytest. Exit status is non-zero when anything failed or nothing ran."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def junit_counts(path: str) -> tuple[int, int, int]:
    """(passed, failed, skipped) from a JUnit XML file (ctest's or pytest's)."""
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = failed = skipped = 0
    for s in suites:
        total += int(s.get("tests", 0))
        failed += int(s.get("failures", 0)) + int(s.get("errors", 0))
        skipped += int(s.get("skipped", s.get("disabled", 0)))
    return total - failed - skipped, failed, skipped


def build_dir() -> str:
    dirs = [os.path.dirname(p) for p in glob.glob(os.path.join(ROOT, "build", "*", "CTestTestfile.cmake"))]
    if not dirs:
        sys.exit("[flagos] no CMake build with tests under build/: run `make setup` first")
    return max(dirs, key=os.path.getmtime)


def main() -> int:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        ctest_xml = os.path.join(tmp, "ctest.xml")
        subprocess.call(["ctest", "--test-dir", build_dir(), "--output-on-failure",
                         "--output-junit", ctest_xml], cwd=ROOT)
        results["C++ (ctest)"] = junit_counts(ctest_xml) if os.path.exists(ctest_xml) else (0, 1, 0)

        pytest_xml = os.path.join(tmp, "pytest.xml")
        subprocess.call([sys.executable, "-m", "pytest", "-q", "-ra", f"--junitxml={pytest_xml}"]
                        + sys.argv[1:], cwd=ROOT)
        results["Python (pytest)"] = junit_counts(pytest_xml) if os.path.exists(pytest_xml) else (0, 1, 0)

    print("\n== torch_fl test summary ==")
    for name, (p, f, s) in results.items():
        print(f"{name:<18} {p} passed, {f} failed, {s} skipped")
    passed = sum(r[0] for r in results.values())
    failed = sum(r[1] for r in results.values())
    skipped = sum(r[2] for r in results.values())
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
