"""Sanitizer builds and runs (`make sanitize`, `make sanitize-thread`).

    python -m tools.sanitize address [--no-build] [--suite NAME ...] [-- PYTEST_ARGS]
    python -m tools.sanitize thread  [--no-build] [--suite NAME ...] [-- PYTEST_ARGS]

`address` builds the core, torch_fl._C, the host plugin and the Catch2 tests
with gcc's AddressSanitizer and UndefinedBehaviorSanitizer (UB is fatal) into
build/sanitize/tree; `thread` builds them with ThreadSanitizer into
build/sanitize-thread/tree (one level down, so that test/run_all.py's search
for build/*/CTestTestfile.cmake never takes them for the project's build).
Each is installed into build/sanitize*/site/torch_fl, next to links to
python/torch_fl's sources, and the suites import it from there
(PYTHONPATH, plus a sitecustomize.py that sets the editable install's import
hook aside), so the shared editable install is never touched. Python and
torch are not instrumented: the sanitizer runtime is preloaded (LD_PRELOAD).

Suites (--suite picks some): address: catch2, torch, torch_strict,
opinfo_fallback (those of test/run_all.py); thread: catch2 (allocator, pinned
cache), torch (streams, events, memory), torch_rest (the rest but OpInfo).

Sanitizer reports go to build/sanitize*/reports/<pid>, subprocesses' too;
each run prints the suites' counts and every report, and fails on a failed
test or any report. ThreadSanitizer reports that torch's own uninstrumented
synchronisation causes are suppressed by tools/sanitize/tsan.supp (one
commented entry per cause)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))

# -O1 -g1: ASan's advice (readable stacks, tolerable speed); line tables only,
# since full debug info over torch's headers triples the build's size.
COMMON_FLAGS = "-O1 -g1 -fno-omit-frame-pointer"
MODES = {
    "address": {
        "dir": "build/sanitize",
        "flags": "-fsanitize=address,undefined -fno-sanitize-recover=undefined",
        "runtime": "libasan.so",
        # Leaks are off for the Python runs (CPython and torch keep their
        # allocations to exit); the Catch2 run keeps them on. A failed
        # allocation returns null as without ASan: the OOM tests expect that.
        "options": {"ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1:log_path={reports}/asan",
                    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1:log_path={reports}/ubsan"},
        "catch2_options": {"ASAN_OPTIONS": "detect_leaks=1:allocator_may_return_null=1:log_path={reports}/asan"},
    },
    "thread": {
        "dir": "build/sanitize-thread",
        "flags": "-fsanitize=thread",
        "runtime": "libtsan.so",
        "options": {"TSAN_OPTIONS": "suppressions=" + os.path.join(HERE, "tsan.supp") +
                                    ":second_deadlock_stack=1:log_path={reports}/tsan"
                                    # fork tests and DataLoader workers start threads in a
                                    # forked child, which TSan refuses unless told.
                                    ":die_after_fork=0",
                    # torch's OpenMP pool synchronises through libgomp, which TSan
                    # cannot see: one intra-op thread keeps torch's own kernels out.
                    "OMP_NUM_THREADS": "1"},
        "catch2_options": {},
    },
}
# The libraries whose frames make a report ours.
OURS = re.compile(r"libtorch_fl_core\.so|_C\.cpython|libflagos_host\.so|flagos_cpp_tests|/core/|/plugins/host/")


def log(message: str) -> None:
    print(f"[sanitize] {message}", flush=True)


def nice(cmd: list[str]) -> list[str]:
    return ["nice", "-n", "10"] + cmd if shutil.which("nice") else cmd


def build(mode: str, build_dir: str) -> None:
    flags = f"{COMMON_FLAGS} {MODES[mode]['flags']}"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = ["cmake", "-S", ROOT, "-B", build_dir, *generator, "-DCMAKE_BUILD_TYPE=Sanitize",
                 f"-DPython_EXECUTABLE={sys.executable}", "-DFLAGOS_BUILD_TESTS=ON", "-DFLAGOS_BUILD_PYTHON=ON",
                 f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}",
                 f"-DCMAKE_EXE_LINKER_FLAGS={flags}", f"-DCMAKE_SHARED_LINKER_FLAGS={flags}",
                 f"-DCMAKE_MODULE_LINKER_FLAGS={flags}"]
    # gcc: its libasan/libtsan are the runtimes preloaded into Python below.
    env = dict(os.environ, CC="gcc", CXX="g++")
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        log(f"configuring {build_dir} ({flags})")
        subprocess.run(configure, cwd=ROOT, env=env, check=True)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 2)
    log(f"building {build_dir} ({jobs} jobs)")
    subprocess.run(nice(["cmake", "--build", build_dir, "--parallel", jobs]), cwd=ROOT, env=env, check=True)


def install(build_dir: str, site: str) -> None:
    """The build installed into `site` with python/torch_fl's sources linked
    beside it: the folder to put first on PYTHONPATH."""
    package = os.path.join(site, "torch_fl")
    subprocess.run(["cmake", "--install", build_dir, "--prefix", site], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    for entry in os.listdir(package):  # links of an earlier run (a source may be gone)
        if os.path.islink(os.path.join(package, entry)):
            os.unlink(os.path.join(package, entry))
    source = os.path.join(ROOT, "python", "torch_fl")
    for entry in os.listdir(source):
        if entry != "__pycache__" and not os.path.exists(os.path.join(package, entry)):
            os.symlink(os.path.join(source, entry), os.path.join(package, entry))
    with open(os.path.join(site, "sitecustomize.py"), "w") as f:
        f.write("# Written by tools/sanitize: the torch_fl in this folder (a sanitizer build) must win\n"
                "# over the editable install, whose import hook runs ahead of sys.path.\n"
                "import sys\n"
                "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "
                "'ScikitBuildRedirectingFinder']\n")


def run_env(mode: str, site: str, reports: str) -> dict[str, str]:
    # The sanitizer runtime first; then libstdc++, which Python does not link:
    # loaded only later, ASan's __cxa_throw interceptor would find no real one.
    preload = [subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True,
                              check=True).stdout.strip() for lib in (MODES[mode]["runtime"], "libstdc++.so")]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([site] + [p for p in [env.get("PYTHONPATH")] if p])
    env["LD_PRELOAD"] = " ".join(preload)
    env["FLAGOS_PLUGIN"] = os.path.join(site, "torch_fl", "plugins", "host", "libflagos_host.so")
    env.pop("FLAGOS_PLUGIN_OPTIONS", None)
    env.pop("FLAGOS_BACKEND_CONFIG", None)
    env.update({k: v.format(reports=reports) for k, v in MODES[mode]["options"].items()})
    return env


def check_import(env: dict[str, str], site: str) -> None:
    """The suites must test this build, not the editable install."""
    out = subprocess.run([sys.executable, "-c", "import torch_fl; print(torch_fl._C.__file__); "
                          "print(torch_fl.plugin_info()['path'])"], cwd=ROOT, env=env, capture_output=True,
                         text=True)
    paths = out.stdout.split()
    if out.returncode != 0 or len(paths) != 2 or not all(os.path.realpath(p).startswith(os.path.realpath(site))
                                                          for p in paths):
        sys.exit(f"[flagos] the sanitizer build is not the torch_fl imported:\n{out.stdout}{out.stderr}")


def junit_counts(path: str) -> tuple[int, int, int]:
    sys.path.insert(0, os.path.join(ROOT, "test"))
    from run_all import junit_counts as counts  # noqa: E402  (test/run_all.py, one parser for both)
    return counts(path)


STRICT = {"FLAGOS_PLUGIN_OPTIONS": "strict=1"}


def suites(mode: str, build_dir: str, site: str, tmp: str,
           extra: list[str]) -> list[tuple[str, list[str], dict[str, str]]]:
    """(name, command, environment on top of the sanitizer run's) of each
    suite of `mode`: the suites of test/run_all.py that `mode` covers."""
    def pytest(tag: str, *paths: str) -> list[str]:
        return [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider",
                f"--junitxml={os.path.join(tmp, tag + '.xml')}", *paths, *extra]

    catch2 = os.path.join(build_dir, "test", "cpp", "flagos_cpp_tests")
    if mode == "address":
        fallback = {"FLAGOS_BACKEND_CONFIG": os.path.join(site, "torch_fl", "confs", "default.toml")}
        return [("catch2", [catch2, "-r", "junit", "-o", os.path.join(tmp, "catch2.xml")], {}),
                ("torch", pytest("torch", "test/torch"), {}),
                ("torch_strict", pytest("torch_strict", "test/torch"), STRICT),
                ("opinfo_fallback", pytest("opinfo_fallback", "test/torch/test_opinfo.py"), fallback)]
    return [("catch2", [catch2, "[allocator],[host_cache]", "-r", "junit", "-o", os.path.join(tmp, "catch2.xml")],
             {}),
            ("torch", pytest("torch", "test/torch/test_streams.py", "test/torch/test_events.py",
                             "test/torch/test_memory.py"), {}),
            # The rest of the suite (OpInfo aside): threads, autograd's device
            # threads, DataLoader's pin-memory thread.
            ("torch_rest", pytest("torch_rest", "test/torch", "--ignore=test/torch/test_streams.py",
                                  "--ignore=test/torch/test_events.py", "--ignore=test/torch/test_memory.py",
                                  "--ignore=test/torch/test_opinfo.py"), {})]


def read_reports(reports: str) -> list[tuple[str, str, bool]]:
    """(file, text, ours) per sanitizer report."""
    found = []
    for path in sorted(glob.glob(os.path.join(reports, "*"))):
        with open(path, errors="replace") as f:
            text = f.read()
        for chunk in re.split(r"(?m)^(?==+\n(?:WARNING|ERROR): )", text):
            if chunk.strip():
                found.append((path, chunk, bool(OURS.search(chunk))))
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in MODES:
        print(__doc__)
        return 2
    mode, rest = argv[0], argv[1:]
    extra = rest[rest.index("--") + 1:] if "--" in rest else []
    rest = rest[:rest.index("--")] if "--" in rest else rest
    only = [rest[i + 1] for i, a in enumerate(rest) if a == "--suite" and i + 1 < len(rest)]
    base = os.path.join(ROOT, MODES[mode]["dir"])
    build_dir, site, reports = (os.path.join(base, d) for d in ("tree", "site", "reports"))
    if "--no-build" not in rest:
        build(mode, build_dir)
    install(build_dir, site)
    shutil.rmtree(reports, ignore_errors=True)
    os.makedirs(reports)
    check_import(run_env(mode, site, reports), site)

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, cmd, extra_env in suites(mode, build_dir, site, tmp, extra):
            if only and name not in only:
                continue
            if name == "catch2":  # an instrumented executable: nothing to preload, no plugin chosen
                env = dict(os.environ)
                for options in (MODES[mode]["options"], MODES[mode]["catch2_options"]):
                    env.update({k: v.format(reports=reports) for k, v in options.items()})
            else:
                env = dict(run_env(mode, site, reports), **extra_env)
            log(f"{name}: {' '.join(cmd)}")
            start = time.monotonic()
            rc = subprocess.call(cmd, cwd=ROOT, env=env)
            xml = os.path.join(tmp, name + ".xml")
            counts = junit_counts(xml) if os.path.exists(xml) else (0, 1, 0)
            results[name] = (*counts, rc, time.monotonic() - start)

    found = read_reports(reports)
    for path, text, ours in found:
        print(f"\n== {os.path.basename(path)} ({'torch_fl' if ours else 'outside torch_fl'}) ==\n{text}")
    print(f"\n== sanitize ({mode}) summary ==")
    for name, (p, f, s, rc, secs) in results.items():
        print(f"{name:<14} {p} passed, {f} failed, {s} skipped (exit {rc}, {secs:.0f} s)")
    ours = sum(1 for *_, o in found if o)
    print(f"sanitizer reports: {len(found)} ({ours} with torch_fl frames) under {reports}")
    failed = any(f or not p for p, f, *_ in results.values())
    return 1 if failed or found or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
