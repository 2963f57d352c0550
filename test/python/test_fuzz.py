"""The libFuzzer targets of test/fuzz (the routing conf parser; the env
registry and the routing overrides), built with clang and run for a bounded
time each, both at once: a crash, a hang (over 10 s on one input), an
exception other than flagos::Error or a diagnostic that is not one
"[flagos] " line fails the test, with the input saved under build/fuzz/.
Skipped, with the reason, where clang or its libFuzzer is missing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "test" / "fuzz"
WORK = ROOT / "build" / "fuzz"  # one level down: never taken for the project's build
SECONDS = 15
TARGETS = {"fuzz_conf": ("conf", ["-dict=" + str(SOURCE / "conf.dict")]), "fuzz_env": ("env", [])}


def _libfuzzer_missing() -> str | None:
    clang = shutil.which("clang++")
    if not clang:
        return "clang++ is not installed (apt-get install clang)"
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "probe.cpp"
        src.write_text('#include <cstdint>\n#include <cstddef>\n'
                       'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }\n')
        probe = subprocess.run([clang, "-fsanitize=fuzzer", str(src), "-o", str(Path(tmp) / "probe")],
                               capture_output=True, text=True)
    if probe.returncode != 0:
        return f"clang++ cannot link libFuzzer: {probe.stderr.strip().splitlines()[-1:]}"
    return None


def test_fuzz_targets_find_nothing():
    """One test, not one per target: a sharded run (test/conftest.py) must not
    build the same tree or fuzz the same corpus from two processes."""
    missing = _libfuzzer_missing()
    if missing:
        print(f"[flagos] fuzzers skipped: {missing}")
        pytest.skip(missing)
    tree = WORK / "tree"
    env = dict(os.environ, CC="clang", CXX="clang++")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    for cmd in (["cmake", "-S", str(SOURCE), "-B", str(tree), *generator],
                ["cmake", "--build", str(tree), "--parallel"]):
        step = subprocess.run(cmd, env=env, capture_output=True, text=True)
        assert step.returncode == 0, f"{' '.join(cmd)} failed:\n{step.stdout[-4000:]}\n{step.stderr[-4000:]}"
    artifacts = WORK / "artifacts"
    artifacts.mkdir(parents=True, exist_ok=True)
    runs = {}
    for target, (name, extra) in TARGETS.items():
        corpus = WORK / f"corpus_{name}"  # grows across runs on one machine; the seeds stay in git
        corpus.mkdir(parents=True, exist_ok=True)
        cmd = [str(tree / target), f"-max_total_time={SECONDS}", "-timeout=10", "-rss_limit_mb=2048",
               "-print_final_stats=1", f"-artifact_prefix={artifacts}/{target}-", *extra,
               str(corpus), str(SOURCE / "corpus" / name)]
        log = open(WORK / f"{target}.log", "w+")  # noqa: SIM115 (closed below)
        runs[target] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT), log)
    problems = []
    for target, (proc, log) in runs.items():
        rc = proc.wait(timeout=SECONDS + 120)
        log.seek(0)
        output = log.read()
        log.close()
        execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", output)
        print(f"[flagos] {target}: {execs.group(1) if execs else '?'} inputs in {SECONDS} s, exit {rc}")
        if rc != 0 or not execs or int(execs.group(1)) == 0:
            problems.append(f"{target} exited {rc} (input saved under {artifacts}):\n{output[-6000:]}")
    assert not problems, "\n\n".join(problems)
