"""Runs every test suite and prints one summary: Catch2 (through ctest), the
Python package tests (test/python), the torch-level suite (test/torch), and
the torch-level suite again on the strict host plugin (device memory is
PROT_NONE outside plugin calls, so any direct dereference by the core
crashes), and the OpInfo comparison with every operator on cpu_fallback (the
installed default.toml, which routes nothing). Extra arguments go to every
pytest run. Exit status is non-zero
when anything failed or nothing ran."""

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


def strict_host_env() -> dict[str, str]:
    """The environment of the strict run: the host plugin, strict=1 added to
    any options already given."""
    env = dict(os.environ)
    options = [o for o in env.get("FLAGOS_PLUGIN_OPTIONS", "").split(",") if o and not o.startswith("strict=")]
    env["FLAGOS_PLUGIN"] = "host"
    env["FLAGOS_PLUGIN_OPTIONS"] = ",".join(options + ["strict=1"])
    return env


def cpu_fallback_env() -> dict[str, str]:
    """The host plugin under default.toml: no route is listed, so every
    routable operator takes the global CPU fallback."""
    confs = subprocess.run([sys.executable, "-c", "import torch_fl._routing as r; print(r.confs_dir())"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    return dict(os.environ, FLAGOS_PLUGIN="host", FLAGOS_BACKEND_CONFIG=os.path.join(confs, "default.toml"))


def run_pytest(tmp: str, tag: str, path: str, env: dict[str, str] | None = None) -> tuple[int, int, int]:
    xml = os.path.join(tmp, f"{tag}.xml")
    subprocess.call([sys.executable, "-m", "pytest", "-q", "-ra", f"--junitxml={xml}", path]
                    + sys.argv[1:], cwd=ROOT, env=env)
    return junit_counts(xml) if os.path.exists(xml) else (0, 1, 0)


def main() -> int:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        ctest_xml = os.path.join(tmp, "ctest.xml")
        subprocess.call(["ctest", "--test-dir", build_dir(), "--output-on-failure",
                         "--output-junit", ctest_xml], cwd=ROOT)
        results["C++ (ctest)"] = junit_counts(ctest_xml) if os.path.exists(ctest_xml) else (0, 1, 0)
        results["Python (pytest)"] = run_pytest(tmp, "python", "test/python")
        results["Python torch-level"] = run_pytest(tmp, "torch", "test/torch")
        results["Python torch-level (strict host)"] = run_pytest(tmp, "torch_strict", "test/torch",
                                                                 strict_host_env())
        results["Python OpInfo (every op on cpu_fallback)"] = run_pytest(
            tmp, "opinfo_fallback", "test/torch/test_opinfo.py", cpu_fallback_env())

    print("\n== torch_fl test summary ==")
    width = max(len(name) for name in results)
    for name, (p, f, s) in results.items():
        print(f"{name:<{width}}  {p} passed, {f} failed, {s} skipped")
    passed = sum(r[0] for r in results.values())
    failed = sum(r[1] for r in results.values())
    skipped = sum(r[2] for r in results.values())
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
