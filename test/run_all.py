"""Runs every test suite and prints one summary: Catch2 (through ctest), the
Python package tests (test/python), the torch-level suite (test/torch), and
the torch-level suite again, OpInfo aside, on the strict host plugin (device
memory is PROT_NONE outside plugin calls, so any direct dereference by the
core crashes), the OpInfo comparison with every operator on cpu_fallback on
the strict host plugin (the installed default.toml, which routes nothing),
and the CUDA-shaped plugins' torch-level suites on their simulated runtimes. Extra arguments go to every
pytest run, except `--jobs N` (default 1): run up to N suites at once, each
one's output printed whole when it ends (the suites are independent
processes; a machine with spare cores finishes in the time of the longest),
and `--shards N` (default 1): run each pytest suite as N processes, each a
share of its tests (`--shard K/N`, test/conftest.py), counted together.
Exit status is non-zero when anything failed or nothing ran."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
import time
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
    """The strict host plugin under default.toml: no route is listed, so every
    routable operator takes the global CPU fallback, on device memory no
    code but the plugin can touch."""
    confs = subprocess.run([sys.executable, "-c", "import torch_fl._routing as r; print(r.confs_dir())"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    return dict(strict_host_env(), FLAGOS_BACKEND_CONFIG=os.path.join(confs, "default.toml"))


def pytest_command(xml: str, paths: str | list[str], extra: list[str]) -> list[str]:
    paths = [paths] if isinstance(paths, str) else paths
    return [sys.executable, "-m", "pytest", "-q", "-ra", f"--junitxml={xml}", *paths] + extra


# The torch-level suites each simulated vendor runtime runs (device, copies,
# streams, events, memory, RNG, fork, the model zoo's training steps); one
# vendor runs the whole suite with guard pages (device memory PROT_NONE to
# all but the simulated runtime).
SIM_SUITES = [f"test/torch/test_{name}.py" for name in
              ("device", "tensor_copy", "streams", "events", "memory", "rng", "fork", "model_zoo")]
SIM_GUARDED_VENDOR = "metax"


def simulated_runtime_suites(pytest) -> list[tuple[str, list]]:
    """(name, runs) per simulated vendor runtime; none before they are built."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from sim_runtimes import VENDORS, environment, simrt_dir

    simrt = simrt_dir()
    if simrt is None:
        return []
    plan = [(f"Python torch-level subset (simulated {v})", pytest(f"sim_{v}", SIM_SUITES, environment(simrt, v)))
            for v in VENDORS]
    guarded = environment(simrt, SIM_GUARDED_VENDOR, SIMRT_GUARD="1")
    plan.append((f"Python torch-level (simulated {SIM_GUARDED_VENDOR}, guard pages)",
                 pytest("sim_guarded", ["test/torch", "--ignore=test/torch/test_opinfo.py"], guarded)))
    return plan


def split_options(argv: list[str]) -> tuple[dict[str, int], list[str]]:
    """({"jobs": N, "shards": N}, the arguments left for pytest)."""
    options, rest, i = {"jobs": 1, "shards": 1}, [], 0
    while i < len(argv):
        arg, value = argv[i], None
        for name in options:
            if arg == f"--{name}" and i + 1 < len(argv):
                value, i = argv[i + 1], i + 1
            elif arg.startswith(f"--{name}="):
                value = arg.split("=", 1)[1]
            if value is not None:
                options[name] = max(int(value), 1)
                break
        else:
            rest.append(arg)
        i += 1
    return options, rest


def suites(tmp: str, extra: list[str], shards: int) -> list[tuple[str, list[str], dict[str, str] | None, str]]:
    """(name, command, environment, JUnit file) of every process to run, in
    report order; the shards of one suite share its name."""
    def pytest(tag, path, env=None):
        runs = []
        for k in range(1, shards + 1):
            xml = os.path.join(tmp, f"{tag}_{k}.xml")
            runs.append((pytest_command(xml, path, extra + ([f"--shard={k}/{shards}"] if shards > 1 else [])),
                         env, xml))
        return runs

    ctest_xml = os.path.join(tmp, "ctest.xml")
    plan = [("C++ (ctest)", [(["ctest", "--test-dir", build_dir(), "--output-on-failure",
                               "--output-junit", ctest_xml], None, ctest_xml)]),
            ("Python (pytest)", pytest("python", "test/python")),
            ("Python torch-level", pytest("torch", "test/torch")),
            # OpInfo runs twice, not three times: on the host routes above, and
            # with every op on cpu_fallback in strict mode (which is what the
            # strict host's own routes mostly demote to).
            ("Python torch-level (strict host)",
             pytest("torch_strict", ["test/torch", "--ignore=test/torch/test_opinfo.py"], strict_host_env())),
            ("Python OpInfo (every op on cpu_fallback, strict host)",
             pytest("opinfo_fallback", "test/torch/test_opinfo.py", cpu_fallback_env())),
            *simulated_runtime_suites(pytest)]
    return [(name, cmd, env, xml) for name, runs in plan for cmd, env, xml in runs]


def run_suites(plan, jobs: int, tmp: str) -> dict[str, tuple[int, int, int]]:
    """Runs the plan, `jobs` at a time; (passed, failed, skipped) per suite
    (a process that wrote no JUnit file counts as one failure)."""
    results = {name: (0, 0, 0) for name, *_ in plan}

    def count(name, xml):
        got = junit_counts(xml) if os.path.exists(xml) else (0, 1, 0)
        results[name] = tuple(a + b for a, b in zip(results[name], got))

    if jobs == 1:  # output streams as it comes
        for name, cmd, env, xml in plan:
            subprocess.call(cmd, cwd=ROOT, env=env)
            count(name, xml)
        return results
    pending, running = list(plan), []
    while pending or running:
        while pending and len(running) < jobs:
            name, cmd, env, xml = pending.pop(0)
            log = open(xml + ".log", "w+")  # noqa: SIM115 (closed below)
            print(f"[run_all] started: {name}", flush=True)
            running.append((name, xml, log, subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log,
                                                              stderr=subprocess.STDOUT)))
        time.sleep(0.5)
        for entry in [r for r in running if r[3].poll() is not None]:
            name, xml, log, _ = entry
            running.remove(entry)
            log.seek(0)
            print(f"\n== {name} ==\n{log.read()}", flush=True)
            log.close()
            count(name, xml)
    return results


def main() -> int:
    options, extra = split_options(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        results = run_suites(suites(tmp, extra, options["shards"]), options["jobs"], tmp)

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
